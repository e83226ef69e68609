#pragma once
/// Shape checks and descriptions shared by both devices' Ops (plain C++; the .cu files include it).
#include <string>

#include "gpu_backend/ops.h"

namespace salus::gpu {

std::string describe(const ConvShape& cs);
std::string describe(const PoolShape& ps);
/// Throw std::logic_error ("conv shape is valid" / "pool shape is valid") on a shape no layer can
/// have: a caller's bug, never the user's.
void check_conv(const ConvShape& cs);
void check_pool(const PoolShape& ps);

}  // namespace salus::gpu
