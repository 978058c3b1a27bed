// Scenarios of the composed Lingyun ASIC (tb/scenarios/lingyun.cpp).
#pragma once
#include "sys/lingyun/topology.hpp"
#include "tb/lib/scenario.hpp"

namespace xy {
Scenario lingyun_fec_llr_scenario();
Scenario lingyun_incast_scenario();
// Their fabrics, from topology.cable_m and topology.spine_cable_m (which these declare): the
// scenarios build them, and the exporters rebuild them from a run's config.
lingyun::Topology lingyun_fec_llr_topology(Config& c);
lingyun::Topology lingyun_incast_topology(Config& c);
}
