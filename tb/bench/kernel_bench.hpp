// `xysim bench kernel`: N blocks ticked by one ClockDomain against the same blocks as one
// SC_METHOD + sc_signal each on an sc_clock, ticked all by one SC_METHOD, and ticked by a plain
// C++ loop, at 100 % and 10 % activity. SystemC elaborates once per process, so each
// configuration runs in a child process (`bench kernel-one`).
#pragma once
#include <cstdint>
#include <string>

namespace xy {

struct KernelBenchOptions {
  // bench kernel
  int repeats = 3;
  double scale = 1.0;
  // bench kernel-one
  std::string style;  // domain | method | method-gated | tick-all | plain
  int blocks = 64;
  int activity_percent = 100;
  std::uint64_t cycles = 100000;
};

int kernel_bench(const char* self, const KernelBenchOptions& options);
int kernel_bench_one(const KernelBenchOptions& options);

}  // namespace xy
