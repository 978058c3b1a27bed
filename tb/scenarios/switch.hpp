#pragma once
#include "tb/scenario.hpp"

namespace xy {
// Port-to-port latency of the Lingyun switch at zero load, cut-through and store-and-forward.
Scenario switch_latency_scenario();
// All ports, uniform random traffic at offered loads 1/N ... 1: throughput and latency per load.
Scenario switch_uniform_scenario();
}  // namespace xy
