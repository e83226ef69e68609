#pragma once
/// Time and memory units used everywhere in the core: int64 nanoseconds and int64 bytes.
/// Conversions from and to human units happen only at the edges (input parsing, output).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace salus::core {

/// A point in time or a duration, in nanoseconds.
using TimeNs = std::int64_t;
/// An amount of memory, in bytes.
using Bytes = std::int64_t;

/// 128-bit intermediate for products of times and rates that can exceed int64 (GCC/Clang).
__extension__ typedef __int128 Int128;

inline constexpr TimeNs kNsPerMs = 1'000'000;
inline constexpr TimeNs kNsPerS = 1'000'000'000;
inline constexpr TimeNs kNever = INT64_MAX;
inline constexpr Bytes kKiB = 1024;
inline constexpr Bytes kMiB = 1024 * kKiB;
inline constexpr Bytes kGiB = 1024 * kMiB;

/// The alignment of every persistent block and lane, and of every buffer inside them: 256 bytes.
/// CUDA and cuDNN fault on (or slow down with) misaligned data, and cudaMalloc hands out 256-byte
/// aligned memory, so the scheduling loop rounds every P and E up and the capacity down to whole
/// units of it (SchedulerOptions::alignment), in the simulator and the real backend alike, and the
/// backend's pool, arenas and devices allocate in the same units.
inline constexpr Bytes kAlignment = 256;

/// Rounds a non-negative quantity in seconds (or milliseconds, MiB) to the nearest integer unit.
/// Returns nullopt when the value is negative, not finite or does not fit in int64.
std::optional<TimeNs> ns_from_seconds(double seconds);
std::optional<TimeNs> ns_from_ms(double ms);
std::optional<Bytes> bytes_from_mib(double mib);

/// Seconds as a double, for output only.
inline double to_seconds(TimeNs t) { return static_cast<double>(t) / 1e9; }
inline double to_mib(Bytes b) { return static_cast<double>(b) / static_cast<double>(kMiB); }

/// Parses a memory size such as "16GiB", "512MiB", "16GB", "1.5 GiB" or "1048576B". A unit is
/// required: binary (KiB, MiB, GiB, TiB, or K, M, G, T), decimal (KB, MB, GB, TB) or B for
/// bytes, case-insensitive. A bare number is refused (a bare "16" once meant 16 bytes).
/// Returns nullopt on anything else; `error` (if given) then says what is wrong.
std::optional<Bytes> parse_size(std::string_view text, std::string* error = nullptr);

/// Parses a duration: a non-negative number with an optional unit (ms, s, min, h, d; none means
/// seconds), e.g. "90", "1.5h", "30min". Returns nullopt on anything else, `error` saying why.
std::optional<TimeNs> parse_duration(std::string_view text, std::string* error = nullptr);

/// Formats bytes for humans, e.g. "16 GiB", "110.9 MiB".
std::string format_size(Bytes b);
/// `s` in lower case (ASCII letters only): case-blind matching of units and names.
std::string lower(std::string_view s);

}  // namespace salus::core
