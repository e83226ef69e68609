// Sizes and durations from the command line, and the "did you mean" of names and options.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/registry.h"
#include "core/units.h"

namespace core = salus::core;

TEST_CASE("units: a size needs a unit, a duration defaults to seconds") {
  CHECK(core::parse_size("16GiB") == 16 * core::kGiB);
  CHECK(core::parse_size("512 MiB") == 512 * core::kMiB);
  CHECK(core::parse_size("16GB") == 16'000'000'000);
  CHECK(core::parse_size("1048576B") == core::kMiB);
  std::string why;
  CHECK_FALSE(core::parse_size("16", &why));
  CHECK(why == "'16' has no unit (write e.g. 16GiB, 16MiB or 16B)");
  CHECK_FALSE(core::parse_size("16XB", &why));
  CHECK(why == "unknown size unit 'XB' (valid: B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)");

  CHECK(core::parse_duration("90") == 90 * core::kNsPerS);
  CHECK(core::parse_duration("1.5h") == 5400 * core::kNsPerS);
  CHECK(core::parse_duration("30min") == 1800 * core::kNsPerS);
  CHECK(core::parse_duration("2d") == 2 * 86400 * core::kNsPerS);
  CHECK(core::parse_duration("250ms") == 250 * core::kNsPerMs);
  CHECK_FALSE(core::parse_duration("-1", &why));
  CHECK(why == "'-1' does not start with a number");
  CHECK_FALSE(core::parse_duration("1w", &why));
  CHECK(why == "unknown time unit 'w' (valid: ms, s, min, h, d)");
}

TEST_CASE("registry: edit distance and the nearest name") {
  CHECK(core::edit_distance("", "") == 0);
  CHECK(core::edit_distance("fifo", "lifo") == 1);
  CHECK(core::edit_distance("kitten", "sitting") == 3);
  CHECK(core::edit_distance("pack", "") == 4);
  const std::vector<std::string> names = {"fifo", "srtf", "pack", "fair"};
  CHECK(core::nearest_name("fairr", names) == "fair");
  CHECK(core::nearest_name("srf", names) == "srtf");
  CHECK(core::nearest_name("xyz", names).empty());   // too far from every name
  CHECK(core::nearest_name("fo", names).empty());    // 2 edits of a 4-letter name is not a misspelling
  CHECK(core::nearest_name("pakc", names).empty());  // a transposition is 2 edits: too many for 4 letters
  CHECK(core::nearest_name("fifx", names) == "fifo");
  CHECK(core::did_you_mean("pac", names) == "; did you mean 'pack'?");
  CHECK(core::did_you_mean("zzzz", names).empty());
  CHECK(core::nearest_name("--polcy", std::vector<std::string>{"--policy", "--profiles"}) == "--policy");
}

TEST_CASE("split_list: every item between separators, trimmed, empty ones kept") {
  using salus::core::split_list;
  CHECK(split_list("").empty());
  CHECK(split_list("fifo") == std::vector<std::string>{"fifo"});
  CHECK(split_list(" fifo , srtf,pack ") == std::vector<std::string>{"fifo", "srtf", "pack"});
  CHECK(split_list("a,,b,") == std::vector<std::string>{"a", "", "b", ""});
  CHECK(split_list(",") == std::vector<std::string>{"", ""});
  CHECK(split_list("x\t;y\r", ';') == std::vector<std::string>{"x", "y"});
}
