// Co-simulation: the OTU4 scrambler twin (rtl/otn/xy_otn_scrambler.v) against otn::scramble on
// frames of random bytes, a byte a cycle with idle cycles between (carrying random bytes the RTL
// must ignore); every byte out is compared with the model's frame.
#include <verilated.h>  // before SystemC's headers (see delay_line_test.cpp)

#include "Vxy_otn_scrambler.h"
#include "Vxy_otn_scrambler_tap_skipped.h"

#include <cstdint>
#include <cstdlib>

#include <gtest/gtest.h>

#include "hw/otn/otu4.hpp"
#include "kernel/rng.hpp"
#include "rtl/twin.hpp"

namespace xy {
namespace {

struct Result {
  std::uint64_t bytes = 0, mismatches = 0, idle = 0;
};

template <class Rtl>
Result run(int frames, std::uint64_t seed) {
  VerilatedContext context;
  Rtl rtl(&context, "dut");
  cosim::reset(rtl, 1);
  Rng rng(seed, "cosim.otn_scrambler");
  Result r;
  otn::Frame in, want;
  for (int f = 0; f < frames; ++f) {
    for (auto& b : in) b = static_cast<std::uint8_t>(rng.below(256));
    want = in;
    otn::scramble(want);
    for (std::size_t i = 0; i < in.size();) {
      const bool idle = rng.chance(0.1);
      rtl.in_valid = !idle;
      rtl.in_first = !idle && i == 0;
      rtl.in_data = idle ? static_cast<std::uint8_t>(rng.below(256)) : in[i];
      cosim::clock_edge(rtl);
      if (idle) {
        ++r.idle;
        continue;
      }
      ++r.bytes;
      if (!rtl.out_valid || rtl.out_data != want[i]) ++r.mismatches;
      ++i;
    }
  }
  rtl.final();
  return r;
}

int frames() { return std::getenv("XY_LONG") ? 1000 : 12; }

TEST(OtnScramblerCosim, TwinMatchesTheModelOnEveryByte) {
  const Result r = run<Vxy_otn_scrambler>(frames(), 1);
  EXPECT_EQ(r.mismatches, 0u);
  EXPECT_EQ(r.bytes, static_cast<std::uint64_t>(frames()) * otn::kFrameBytes);
  EXPECT_GT(r.idle, r.bytes / 20);
}

// Without x^12 the keystream parts from G.709's in its third byte: caught.
TEST(OtnScramblerCosim, ATwinWithoutOneTapIsCaught) {
  const Result r = run<Vxy_otn_scrambler_tap_skipped>(2, 2);
  EXPECT_GT(r.mismatches, r.bytes / 4);
}

}  // namespace
}  // namespace xy
