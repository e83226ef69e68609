#pragma once
/// Factories of the built-in policies. Use registry.h to pick one by name.
#include <memory>
#include <string_view>

#include "core/policy.h"

namespace salus::policies {

/// One line each, for --help (the registry table) and Policy::description().
inline constexpr std::string_view kFifoDescription =
    "no sharing: one job at a time on the whole GPU, in arrival order, run to completion";
inline constexpr std::string_view kSrtfDescription =
    "preemptive shortest-remaining-time-first: at every boundary the admitted job with the least "
    "remaining solo time (remaining iterations x iter_ms, plus the first iteration's extra until it "
    "has run) runs; admission in the same order";
inline constexpr std::string_view kPackDescription =
    "pack jobs into lanes per Algorithm 1, lanes run concurrently; in a lane the earliest admitted "
    "unfinished job runs";
inline constexpr std::string_view kFairDescription =
    "time sharing that equalises service: at each boundary the job with the least service since "
    "the last job joined its lane runs";

inline constexpr std::string_view kLasDescription =
    "preemptive least attained service: at every boundary the admitted job with the least service so far "
    "(iterations done x iter_ms) runs";

inline constexpr std::string_view kPriorityDescription =
    "strict priorities from the trace's priority column: higher first, arrival order within a level, "
    "preemptive at iteration boundaries; admission in the same order";

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
