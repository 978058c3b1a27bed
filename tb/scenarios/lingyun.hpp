// Scenarios of the composed Lingyun ASIC (tb/scenarios/lingyun.cpp).
#pragma once
#include "tb/scenario.hpp"

namespace xy {
Scenario lingyun_fec_llr_scenario();
Scenario lingyun_incast_scenario();
}
