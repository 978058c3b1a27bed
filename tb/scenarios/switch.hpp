#pragma once
#include "tb/lib/scenario.hpp"

namespace xy {
// Port-to-port latency of the Lingyun switch at zero load, cut-through and store-and-forward.
Scenario switch_latency_scenario();
// All ports, uniform random traffic at offered loads 1/N ... 1: throughput and latency per load.
Scenario switch_uniform_scenario();
// 32 elephant flows over 8 equal-cost links: ECMP hash vs spraying (claims C6, C12).
Scenario switch_ecmp_scenario();
// AllReduce with the switch's reduce engine vs a ring (claim C5).
Scenario switch_allreduce_scenario();
// Incast across three switches with a victim flow: CBFC vs PFC (claim C3).
Scenario switch_incast_scenario();
}  // namespace xy
