#pragma once
#include "tb/scenario.hpp"

namespace xy {
// One GPU loads from another through one switch: latency and its breakdown per config (claim C1).
Scenario olink_latency_scenario();
}  // namespace xy
