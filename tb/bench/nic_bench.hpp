// `xysim bench nic`: the Tianyi NIC's engine on composed Lingyun ports, timed on nic-incast (its
// five designs, each a leaf-spine of its own, in one child process): simulated time and
// switch-core cycles per wall second, and the bytes the NICs delivered per wall second.
#pragma once

namespace xy {

struct NicBenchOptions {
  int senders = 16;
  int message_kib = 1024;
};

int nic_bench(const char* self, const NicBenchOptions& options);

}  // namespace xy
