#pragma once
#include "tb/lib/scenario.hpp"

namespace xy {
// One channel, a traffic generator and a sink with a scoreboard (see link_basic.cpp).
Scenario link_basic_scenario();
}
