#include "gpu_backend/shapes.h"

#include "core/errors.h"

namespace salus::gpu {

std::string describe(const ConvShape& cs) {
  return "n=" + std::to_string(cs.n) + " c=" + std::to_string(cs.c) + " h=" + std::to_string(cs.h) +
         " w=" + std::to_string(cs.w) + " k=" + std::to_string(cs.k) + " r=" + std::to_string(cs.r) +
         " s=" + std::to_string(cs.s) + " pad=" + std::to_string(cs.pad_h) + "," + std::to_string(cs.pad_w) +
         " stride=" + std::to_string(cs.stride_h) + "," + std::to_string(cs.stride_w);
}

std::string describe(const PoolShape& ps) {
  return std::string(ps.mode == PoolMode::kMax ? "max" : "average") + " n=" + std::to_string(ps.n) +
         " c=" + std::to_string(ps.c) + " h=" + std::to_string(ps.h) + " w=" + std::to_string(ps.w) +
         " window=" + std::to_string(ps.window_h) + "x" + std::to_string(ps.window_w) +
         " stride=" + std::to_string(ps.stride_h) + "," + std::to_string(ps.stride_w) +
         " pad=" + std::to_string(ps.pad_h) + "," + std::to_string(ps.pad_w);
}

void check_conv(const ConvShape& cs) {
  const bool ok = cs.n > 0 && cs.c > 0 && cs.h > 0 && cs.w > 0 && cs.k > 0 && cs.r > 0 && cs.s > 0 &&
                  cs.pad_h >= 0 && cs.pad_w >= 0 && cs.stride_h > 0 && cs.stride_w > 0 &&
                  cs.h + 2 * cs.pad_h >= cs.r && cs.w + 2 * cs.pad_w >= cs.s;
  SALUS_INVARIANT(ok, "conv shape is valid", describe(cs));
}

void check_pool(const PoolShape& ps) {
  const bool ok = ps.n > 0 && ps.c > 0 && ps.h > 0 && ps.w > 0 && ps.window_h > 0 && ps.window_w > 0 &&
                  ps.stride_h > 0 && ps.stride_w > 0 && ps.pad_h >= 0 && ps.pad_w >= 0 &&
                  ps.h + 2 * ps.pad_h >= ps.window_h && ps.w + 2 * ps.pad_w >= ps.window_w;
  SALUS_INVARIANT(ok, "pool shape is valid", describe(ps));
}

}  // namespace salus::gpu
