// xy::register_scenario: a program's own scenario runs like a built-in one; a name taken, or
// none, is refused.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "tb/lib/scenario.hpp"
#include "tests/tb/run_quiet.hpp"

namespace xy {
namespace {

TEST(ScenarioRegistry, ARegisteredScenarioIsListedLastAndRuns) {
  const std::size_t built_in = scenarios().size();
  register_scenario({"my-link", "link-basic under a name of its own", find_scenario("link-basic")->build});
  ASSERT_EQ(scenarios().size(), built_in + 1);
  EXPECT_EQ(scenarios().back().name, "my-link");
  const RunResult r = testing::run_quiet("my-link", {"traffic.packets=50"});
  ASSERT_EQ(r.failure, "");
  EXPECT_EQ(r.results["scenario"], "my-link");
  EXPECT_EQ(r.results["summary"]["packets_received"], 50u);
}

TEST(ScenarioRegistry, ATakenNameOrNoNameIsRefused) {
  const auto build = find_scenario("link-basic")->build;
  try {
    register_scenario({"link-basic", "again", build});
    FAIL() << "a built-in name was taken again";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'link-basic' is already a scenario"), std::string::npos) << e.what();
  }
  EXPECT_THROW(register_scenario({"", "no name", build}), std::invalid_argument);
  EXPECT_THROW(register_scenario({"no-build", "no build function", nullptr}), std::invalid_argument);
  EXPECT_EQ(find_scenario("no-build"), nullptr);
}

// XY_SCENARIO's order key places a scenario among the built-in ones (here between link-basic, 100,
// and phy-loopback, 200; equal keys by name), whatever the order of registration, and before
// every scenario added by register_scenario.
TEST(ScenarioRegistry, AnOrderKeyPlacesAScenarioAmongTheBuiltInOnes) {
  ASSERT_EQ(scenarios()[0].name, "link-basic");
  ASSERT_EQ(scenarios()[1].name, "phy-loopback");
  register_scenario({"my-link", "added by a call", find_scenario("link-basic")->build});
  const RegisterScenario b{150, +[] { return Scenario{"keyed-b", "order 150", find_scenario("link-basic")->build}; }};
  const RegisterScenario a{150, +[] { return Scenario{"keyed-a", "order 150 too", find_scenario("link-basic")->build}; }};
  const RegisterScenario c{120, +[] { return Scenario{"keyed-c", "order 120", find_scenario("link-basic")->build}; }};
  std::vector<std::string> names;
  for (const auto& s : scenarios()) names.push_back(s.name);
  ASSERT_GE(names.size(), 6u);
  EXPECT_EQ(std::vector<std::string>(names.begin(), names.begin() + 5),
            (std::vector<std::string>{"link-basic", "keyed-c", "keyed-a", "keyed-b", "phy-loopback"}));
  EXPECT_EQ(names.back(), "my-link");
  EXPECT_THROW((RegisterScenario{-1, +[] { return Scenario{"keyed-d", "no order", find_scenario("link-basic")->build}; }}),
               std::invalid_argument);
}

}  // namespace
}  // namespace xy
