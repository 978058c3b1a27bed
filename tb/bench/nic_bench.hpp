// `xysim bench nic`: the Tianyi NIC's engine on composed Lingyun ports, timed on nic-incast (its
// five designs, each a leaf-spine of its own, in one child process): simulated time and
// switch-core cycles per wall second, and the bytes the NICs delivered per wall second. Given
// uet-htsim's htsim_roce, the same incast (PFC, on the fabric xysim exports for it) timed there
// too, and the ratio.
#pragma once
#include <string>

namespace xy {

struct NicBenchOptions {
  int senders = 16;
  int message_kib = 1024;
  std::string htsim;  // htsim_roce's path, or none
};

int nic_bench(const char* self, const NicBenchOptions& options);

}  // namespace xy
