#pragma once
#include "tb/lib/scenario.hpp"

namespace xy {
// Two link partners with LLR over lossy lines, traffic both ways.
Scenario link_llr_scenario();
// A fast sender and a slow receiver with CBFC (or PFC, or no flow control).
Scenario link_cbfc_scenario();
}  // namespace xy
