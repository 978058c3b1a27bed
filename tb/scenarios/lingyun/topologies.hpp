// The fabrics of the composed Lingyun scenarios (fec_llr.cpp, incast.cpp).
#pragma once
#include "kernel/config.hpp"
#include "sys/lingyun/topology.hpp"

namespace xy {
// Their fabrics, from topology.cable_m and topology.spine_cable_m (which these declare): the
// scenarios build them, and the exporters rebuild them from a run's config.
lingyun::Topology lingyun_fec_llr_topology(Config& c);
lingyun::Topology lingyun_incast_topology(Config& c);
}
