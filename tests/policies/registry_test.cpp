// The policy registry: names, creation by name, the exact error for an unknown name, and each
// policy's lane modes.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "core/errors.h"
#include "policies/registry.h"

using salus::core::LaneMode;
using salus::policies::make_policy;

TEST_CASE("the registry lists the policies in order") {
  CHECK(salus::policies::policy_names() == std::vector<std::string>{"fifo", "srtf", "pack", "fair", "las", "priority"});
  CHECK(salus::policies::policy_names_joined() == "fifo, srtf, pack, fair, las, priority");
}

TEST_CASE("make_policy creates each policy by its name") {
  for (const std::string& name : salus::policies::policy_names()) {
    const auto p = make_policy(name);
    REQUIRE(p != nullptr);
    CHECK(p->name() == name);
    CHECK_FALSE(p->description().empty());
  }
}

TEST_CASE("an unknown policy is the user's mistake, named with the valid names") {
  CHECK_THROWS_WITH_AS(make_policy("lifo"), "unknown policy 'lifo' (valid: fifo, srtf, pack, fair, las, priority); did you mean 'fifo'?",
                       salus::core::InputError);
  CHECK_THROWS_WITH_AS(make_policy(""), "unknown policy '' (valid: fifo, srtf, pack, fair, las, priority)", salus::core::InputError);
  CHECK_THROWS_WITH_AS(make_policy("fifo "), "unknown policy 'fifo ' (valid: fifo, srtf, pack, fair, las, priority); did you mean 'fifo'?",
                       salus::core::InputError);
}

TEST_CASE("lane modes: default and supported per policy") {
  struct Row {
    const char* name;
    LaneMode default_mode;
    bool exclusive, single, automatic;
  };
  const Row rows[] = {
      {"fifo", LaneMode::kExclusive, true, false, false},
      {"srtf", LaneMode::kSingle, true, true, true},  // exclusive: non-preemptive (gpus_needed)
      {"pack", LaneMode::kAuto, false, true, true},
      {"fair", LaneMode::kSingle, false, true, true},
  };
  for (const Row& r : rows) {
    INFO(r.name);
    const auto p = make_policy(r.name);
    CHECK(p->default_lane_mode() == r.default_mode);
    CHECK(p->supports(p->default_lane_mode()));
    CHECK(p->supports(LaneMode::kExclusive) == r.exclusive);
    CHECK(p->supports(LaneMode::kSingle) == r.single);
    CHECK(p->supports(LaneMode::kAuto) == r.automatic);
  }
  CHECK(std::string(salus::core::to_string(LaneMode::kExclusive)) == "exclusive");
  CHECK(std::string(salus::core::to_string(LaneMode::kSingle)) == "single");
  CHECK(std::string(salus::core::to_string(LaneMode::kAuto)) == "auto");
}
