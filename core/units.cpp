#include "core/units.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace salus::core {
namespace {

std::optional<std::int64_t> scale_round(double value, double unit) {
  if (!std::isfinite(value) || value < 0) return std::nullopt;
  const double scaled = std::round(value * unit);
  if (scaled >= 9.2e18) return std::nullopt;
  return static_cast<std::int64_t>(scaled);
}

/// "12.5 GiB": its trimmed text, number and unit (as typed and lower-cased).
struct Quantity {
  std::string text;        // trimmed
  std::string number;
  double value = 0;
  std::string unit_typed;  // after the number and any spaces
  std::string unit;        // lower-cased
};

/// Splits a size or duration; false, with `why` set, when the text is empty or does not start
/// with a number.
bool split_quantity(std::string_view text, const char* what, Quantity& q, std::string& why) {
  std::string s(text);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  std::size_t start = 0;
  while (start < s.size() && std::isspace(static_cast<unsigned char>(s[start]))) ++start;
  s = s.substr(start);
  if (s.empty()) {
    why = std::string("empty ") + what;
    return false;
  }
  std::size_t i = 0;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
  q.number = s.substr(0, i);
  std::size_t j = i;
  while (j < s.size() && std::isspace(static_cast<unsigned char>(s[j]))) ++j;
  q.unit_typed = s.substr(j);
  q.unit = lower(q.unit_typed);
  q.text = s;
  if (q.number.empty() || q.number == ".") {
    why = "'" + s + "' does not start with a number";
    return false;
  }
  char* end = nullptr;
  q.value = std::strtod(q.number.c_str(), &end);
  if (end != q.number.c_str() + q.number.size()) {
    why = "'" + q.number + "' is not a number";
    return false;
  }
  return true;
}

}  // namespace

std::optional<TimeNs> ns_from_seconds(double seconds) { return scale_round(seconds, 1e9); }
std::optional<TimeNs> ns_from_ms(double ms) { return scale_round(ms, 1e6); }
std::optional<Bytes> bytes_from_mib(double mib) { return scale_round(mib, static_cast<double>(kMiB)); }

std::optional<Bytes> parse_size(std::string_view text, std::string* error) {
  auto fail = [&](const std::string& why) -> std::optional<Bytes> {
    if (error) *error = why;
    return std::nullopt;
  };
  Quantity q;
  std::string why;
  if (!split_quantity(text, "size", q, why)) return fail(why);
  const std::string& s = q.text;
  const std::string& number = q.number;
  const std::string& unit = q.unit;
  const double value = q.value;
  double mult = 0;
  if (unit.empty()) {
    return fail("'" + s + "' has no unit (write e.g. " + number + "GiB, " + number + "MiB or " + number + "B)");
  }
  if (unit == "b") mult = 1;
  else if (unit == "kib" || unit == "k") mult = static_cast<double>(kKiB);
  else if (unit == "mib" || unit == "m") mult = static_cast<double>(kMiB);
  else if (unit == "gib" || unit == "g") mult = static_cast<double>(kGiB);
  else if (unit == "tib" || unit == "t") mult = static_cast<double>(kGiB) * 1024.0;
  else if (unit == "kb") mult = 1e3;
  else if (unit == "mb") mult = 1e6;
  else if (unit == "gb") mult = 1e9;
  else if (unit == "tb") mult = 1e12;
  else return fail("unknown size unit '" + q.unit_typed + "' (valid: B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)");
  auto bytes = scale_round(value, mult);
  if (!bytes) return fail("size '" + s + "' is out of range");
  return bytes;
}

std::optional<TimeNs> parse_duration(std::string_view text, std::string* error) {
  auto fail = [&](const std::string& why) -> std::optional<TimeNs> {
    if (error) *error = why;
    return std::nullopt;
  };
  Quantity q;
  std::string why;
  if (!split_quantity(text, "duration", q, why)) return fail(why);
  const std::string& s = q.text;
  const std::string& unit = q.unit;
  const double value = q.value;
  double mult = 0;
  if (unit.empty() || unit == "s") mult = 1e9;
  else if (unit == "ms") mult = 1e6;
  else if (unit == "min") mult = 60e9;
  else if (unit == "h") mult = 3600e9;
  else if (unit == "d") mult = 86400e9;
  else return fail("unknown time unit '" + q.unit_typed + "' (valid: ms, s, min, h, d)");
  auto ns = scale_round(value, mult);
  if (!ns) return fail("duration '" + s + "' is out of range");
  return ns;
}

std::string format_size(Bytes b) {
  char buf[64];
  const double v = static_cast<double>(b);
  if (b % kGiB == 0 && b != 0) std::snprintf(buf, sizeof buf, "%lld GiB", static_cast<long long>(b / kGiB));
  else if (b >= kGiB) std::snprintf(buf, sizeof buf, "%.2f GiB", v / static_cast<double>(kGiB));
  else if (b >= kMiB) std::snprintf(buf, sizeof buf, "%.1f MiB", v / static_cast<double>(kMiB));
  else std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(b));
  return buf;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace salus::core
