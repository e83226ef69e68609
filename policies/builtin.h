#pragma once
/// Factories of the built-in policies. Use registry.h to pick one by name.
#include <memory>

#include "core/policy.h"

namespace salus::policies {

/// No sharing: one job at a time on the whole GPU, in arrival order, to completion.
std::unique_ptr<core::Policy> make_fifo();
/// Preemptive shortest-remaining-(solo)-time-first within a lane.
std::unique_ptr<core::Policy> make_srtf();
/// Lanes per Algorithm 1 running concurrently; within a lane, the earliest admitted job runs.
std::unique_ptr<core::Policy> make_pack();
/// Equal service within a lane: the job with the least service since the last job joined runs.
std::unique_ptr<core::Policy> make_fair();
/// Preemptive least attained service (iterations done x iter_ms) within a lane.
std::unique_ptr<core::Policy> make_las();
/// Strict priorities from the trace's priority column, higher first, arrival order within a level.
std::unique_ptr<core::Policy> make_priority();

}  // namespace salus::policies
