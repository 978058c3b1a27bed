// Co-simulation: the int32 reduce lane group (rtl/switch/xy_reduce_int32.v) against
// sw::ReduceTable (int32, 32-bit wrapping accumulator): groups of 2–8 members contribute one beat
// of 16 random int32 elements each (large values, so sums wrap), with idle cycles carrying
// random data between; every reduced vector is compared.
#include <verilated.h>  // before SystemC's headers (see delay_line_test.cpp)

#include "Vxy_reduce_int32.h"
#include "Vxy_reduce_int32_narrow.h"

#include <cstdint>
#include <cstdlib>
#include <numeric>
#include <vector>

#include <gtest/gtest.h>

#include "hw/switch/reduce.hpp"
#include "rtl/twin.hpp"
#include "xingyun/rng.hpp"

namespace xy {
namespace {

constexpr int kLanes = 16;

struct Result {
  std::uint64_t cycles = 0, chunks = 0, mismatches = 0, wrapped = 0;
};

template <class Rtl>
Result run(std::uint64_t min_cycles, std::uint64_t seed) {
  sw::ReduceConfig config;
  config.type = sw::ElemType::kInt32;
  config.vector_bytes = 4 * kLanes;
  config.lanes = kLanes;
  sw::ReduceTable table(config);
  for (std::uint32_t g = 2; g <= 8; ++g) {
    std::vector<std::uint32_t> members(g);
    std::iota(members.begin(), members.end(), 0);
    table.add_group(g, members);
  }
  VerilatedContext context;
  Rtl rtl(&context, "dut");
  cosim::reset(rtl);
  Rng rng(seed, "cosim.reduce");
  Result r;
  std::vector<std::uint8_t> beat(4 * kLanes);
  for (std::uint64_t chunk = 0; r.cycles < min_cycles; ++chunk) {
    const auto group = static_cast<std::uint32_t>(rng.between(2, 8));
    std::optional<sw::ReduceTable::Completed> done;
    std::vector<std::int64_t> exact(kLanes, 0);
    for (std::uint32_t m = 0; m < group;) {
      const bool idle = rng.chance(0.1);
      rng.fill(beat.data(), beat.size());
      for (int l = 0; l < kLanes; ++l) {
        std::uint32_t v = 0;
        for (int b = 0; b < 4; ++b) v |= static_cast<std::uint32_t>(beat[4 * l + b]) << (8 * b);
        rtl.in_data[l] = v;
        if (!idle) exact[l] += static_cast<std::int32_t>(v);
      }
      rtl.in_valid = !idle;
      rtl.in_first = m == 0;
      cosim::clock_edge(rtl);
      ++r.cycles;
      if (idle) continue;
      done = table.contribute(group, chunk, m, beat.data(), static_cast<std::uint32_t>(beat.size()));
      ++m;
    }
    ++r.chunks;
    bool same = done.has_value();
    for (int l = 0; same && l < kLanes; ++l) {
      std::uint32_t model = 0;
      for (int b = 0; b < 4; ++b) model |= static_cast<std::uint32_t>(done->data[4 * l + b]) << (8 * b);
      same = model == cosim::bits_of(rtl.acc, 32 * l, 32);
      if (exact[l] != static_cast<std::int32_t>(model)) ++r.wrapped;
    }
    if (!same) ++r.mismatches;
  }
  rtl.final();
  return r;
}

TEST(ReduceInt32Cosim, LaneGroupMatchesTheReduceTableOnEverySumIncludingWraps) {
  const Result r = run<Vxy_reduce_int32>(std::getenv("XY_LONG") ? 10'000'000 : 200'000, 1);
  EXPECT_EQ(r.mismatches, 0u);
  EXPECT_GT(r.chunks, 30'000u);
  EXPECT_GT(r.wrapped, r.chunks);  // overflowing sums are common, so wrapping is exercised
}

// A twin with 16-bit lanes (the top half dropped) is caught on nearly every sum.
TEST(ReduceInt32Cosim, CatchesATwinThatDropsTheUpperBits) {
  const Result r = run<Vxy_reduce_int32_narrow>(20'000, 2);
  ASSERT_GT(r.chunks, 1000u);
  EXPECT_GT(r.mismatches, r.chunks * 9 / 10);
}

}  // namespace
}  // namespace xy
