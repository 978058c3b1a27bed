// `xysim bench link`: one 800G link (link-llr) at full load both ways; simulated cycles/s,
// frames/s and peak memory.
#pragma once
#include <cstdint>

namespace xy {
int link_bench(std::uint64_t frames, double frame_error);
}
