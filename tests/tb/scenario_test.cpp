// xy::register_scenario: a program's own scenario runs like a built-in one; a name taken, or
// none, is refused.
#include <gtest/gtest.h>

#include <stdexcept>

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

}  // namespace
}  // namespace xy
