// `xysim bench switch`: a 64-port switch under uniform traffic at 50 % and 100 % load, each in a
// child process: simulated cycles/s, packets/s and peak memory.
#pragma once
#include <cstdint>

namespace xy {
int switch_bench(const char* self, std::uint64_t cycles);
}
