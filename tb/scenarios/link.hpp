#pragma once
#include "tb/scenario.hpp"

namespace xy {
// Two link partners with LLR over lossy lines, traffic both ways.
Scenario link_llr_scenario();
}  // namespace xy
