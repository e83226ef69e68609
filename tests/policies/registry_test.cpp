// The policy registry: names, creation by name, the exact error for an unknown name, and each
// policy's lane modes.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <thread>
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

TEST_CASE("a ScopedPolicy is made by its name while it lives, on its thread only") {
  int made = 0;
  {
    salus::policies::ScopedPolicy scoped("mine", [&made] {
      ++made;
      return make_policy("pack");  // any policy object will do
    });
    CHECK(make_policy("mine")->name() == "pack");
    CHECK(make_policy("fifo")->name() == "fifo");  // the table is still there
    CHECK(made == 1);
    CHECK(salus::policies::policy_names().size() == 6);  // and unchanged
    CHECK_THROWS_AS(salus::policies::ScopedPolicy("mine", [] { return make_policy("fifo"); }), std::invalid_argument);
    CHECK_THROWS_AS(salus::policies::ScopedPolicy("srtf", [] { return make_policy("fifo"); }), std::invalid_argument);
    bool unknown_elsewhere = false;
    std::thread([&] {
      try {
        make_policy("mine");
      } catch (const salus::core::InputError&) {
        unknown_elsewhere = true;
      }
    }).join();
    CHECK(unknown_elsewhere);
  }
  CHECK_THROWS_AS(make_policy("mine"), salus::core::InputError);
  CHECK(made == 1);
}
