// Runs a built-in scenario in this process, quietly (one per test process: SystemC elaborates once).
#pragma once
#include <string>
#include <vector>

#include "tb/run/run.hpp"

namespace xy::testing {

inline RunResult run_quiet(const std::string& scenario, std::vector<std::string> sets, WavesOptions waves = {}) {
  RunOptions o;
  o.scenario = scenario;
  o.sets = std::move(sets);
  o.quiet = true;
  o.waves = std::move(waves);
  return run_scenario(o);
}

}  // namespace xy::testing
