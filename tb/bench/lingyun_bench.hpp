// `xysim bench lingyun`: what composing every port costs in simulation speed. Three rigs, each in
// its own child process (`bench lingyun-one`; SystemC elaborates once per process):
//   bare       today's switch core alone: 64 ports, a host on each (tb/scenarios/switch_rig.hpp),
//              CBFC host links as in switch-uniform, 50 % load;
//   composed   the 64-port Lingyun ASIC with every port composed, PHY (fast codec, pre-FEC BER
//              1e-12) -> MAC/FCS -> LLR -> CBFC, a host on each (tb/scenarios/fabric_rig.hpp),
//              50 % load;
//   leaf-spine 64 endpoints on 8 leaves and 8 spines, every port composed, 20 % load.
// Uniform traffic of 64-1500 B frames. Each rig warms up (untimed: link-up, buffers filling), then
// the measured window is timed: switch-core cycles simulated per wall second, frames delivered
// per wall second, peak memory. Prints composed / bare and the leaf-spine's endpoint-cycles/s.
#pragma once
#include <string>

namespace xy {

struct LingyunBenchOptions {
  double us = 100;         // simulated time measured per run (a round takes about 5 to 10 s)
  double warmup_us = 5;    // simulated time before it, not timed (the PHYs lock their CDR in 1 us)
  std::string rig;         // bench lingyun-one: bare | composed | leaf-spine
  int repeats = 3;         // rounds of the three rigs; medians reported
};

int lingyun_bench(const char* self, const LingyunBenchOptions& options);
int lingyun_bench_one(const LingyunBenchOptions& options);

}  // namespace xy
