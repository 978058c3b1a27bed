#pragma once
#include "tb/lib/scenario.hpp"

namespace xy {
// Frames through one PHY direction with a noisy channel, checked against the error log.
Scenario phy_loopback_scenario();
// Codeword error ratio vs pre-FEC BER for each FEC mode, against the binomial formula.
Scenario phy_fec_curve_scenario();
}  // namespace xy
