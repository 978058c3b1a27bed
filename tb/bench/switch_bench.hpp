// `xysim bench switch`: one switch (switch-uniform, bare core, hosts on every port) over a grid
// of port counts and offered loads, each run in a child process: simulated cycles/s, packets/s,
// wall time, peak memory, and how the cost of a cycle grows with the ports.
#pragma once
#include <cstdint>
#include <vector>

namespace xy {

struct SwitchBenchOptions {
  std::uint64_t cycles = 200000;  // cycles of traffic per run
  std::vector<int> ports{16, 32, 64, 128};
  std::vector<double> loads{0.1, 0.5, 0.9};
  int repeats = 1;  // runs per point; the median is reported
};

int switch_bench(const char* self, const SwitchBenchOptions& options);

}  // namespace xy
