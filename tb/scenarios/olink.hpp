#pragma once
#include "tb/lib/scenario.hpp"

namespace xy {
// One GPU loads from another through one switch: latency and its breakdown per config (claim C1).
Scenario olink_latency_scenario();
// GPUs on one switch run an MoE all-to-all: bandwidth per GPU per config (claim C11).
Scenario olink_alltoall_scenario();
// One message of N bytes from GPU to GPU through composed ports: its network and GPU-to-GPU time.
Scenario olink_message_scenario();
// The fast (approximately timed) fabric calibrated against the cycle-level one, and its speed.
Scenario olink_fast_scenario();
}  // namespace xy
