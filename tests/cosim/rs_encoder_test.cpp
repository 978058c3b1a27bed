// Co-simulation: the RS encoder twin (rtl/phy/xy_rs_encoder.v) against phy::ReedSolomon on random
// messages, one symbol a cycle with idle gaps (idle cycles carry random symbols the RTL must
// ignore); every codeword's parity is compared, and the RTL's codewords must pass is_codeword().
#include <verilated.h>  // before SystemC's headers (see delay_line_test.cpp)

#include "Vxy_rs_encoder_rs272.h"
#include "Vxy_rs_encoder_rs544.h"
#include "Vxy_rs_encoder_wrong_root.h"

#include <cstdint>
#include <algorithm>
#include <cstdlib>
#include <vector>

#include <gtest/gtest.h>

#include "hw/phy/reed_solomon.hpp"
#include "rtl/twin.hpp"
#include "kernel/rng.hpp"

namespace xy {
namespace {

struct Result {
  std::uint64_t cycles = 0, codewords = 0, mismatches = 0, not_codewords = 0, idle = 0;
};

template <class Rtl>
Result run(const phy::RsCode& code, std::uint64_t min_cycles, std::uint64_t seed) {
  const phy::ReedSolomon rs(code);
  const int parity = code.n - code.k;
  VerilatedContext context;
  Rtl rtl(&context, "dut");
  cosim::reset(rtl, 1);
  Rng rng(seed, "cosim.rs");
  Result r;
  std::vector<std::uint16_t> word(code.n);
  while (r.cycles < min_cycles) {
    for (int i = 0; i < code.k; ++i) word[i] = static_cast<std::uint16_t>(rng.below(1024));
    for (int i = 0; i < code.k;) {
      const bool idle = rng.chance(0.1);
      rtl.in_valid = !idle;
      rtl.in_first = i == 0;
      rtl.in_symbol = idle ? static_cast<std::uint16_t>(rng.below(1024)) : word[i];
      cosim::clock_edge(rtl);
      ++r.cycles;
      if (idle) ++r.idle;
      else ++i;
    }
    std::vector<std::uint16_t> twin(word.begin(), word.end());
    for (int j = 0; j < parity; ++j)  // parity bits 10*(P-1-j) .. +9 are codeword[k+j]
      twin[code.k + j] = static_cast<std::uint16_t>(cosim::bits_of(rtl.parity, 10 * (parity - 1 - j), 10));
    rs.encode(word.data());
    ++r.codewords;
    if (!std::equal(word.begin(), word.end(), twin.begin())) ++r.mismatches;
    if (!rs.is_codeword(twin.data())) ++r.not_codewords;
  }
  rtl.final();
  return r;
}

std::uint64_t cycles() { return std::getenv("XY_LONG") ? 10'000'000 : 200'000; }

TEST(RsEncoderCosim, Rs272TwinMatchesTheCodecOnEveryCodeword) {
  const Result r = run<Vxy_rs_encoder_rs272>(phy::rs272(), cycles(), 1);
  EXPECT_EQ(r.mismatches, 0u);
  EXPECT_EQ(r.not_codewords, 0u);
  EXPECT_GT(r.codewords, 600u);
  EXPECT_GT(r.idle, r.cycles / 20);
}

TEST(RsEncoderCosim, Rs544TwinMatchesTheCodecOnEveryCodeword) {
  const Result r = run<Vxy_rs_encoder_rs544>(phy::rs544(), cycles(), 2);
  EXPECT_EQ(r.mismatches, 0u);
  EXPECT_EQ(r.not_codewords, 0u);
  EXPECT_GT(r.codewords, 300u);
}

// A twin whose generator starts at alpha^1 instead of alpha^0 makes other codewords: caught on
// every one.
TEST(RsEncoderCosim, CatchesATwinWithTheWrongGenerator) {
  const Result r = run<Vxy_rs_encoder_wrong_root>(phy::rs272(), 20'000, 3);
  ASSERT_GT(r.codewords, 50u);
  EXPECT_EQ(r.mismatches, r.codewords);
  EXPECT_EQ(r.not_codewords, r.codewords);
}

}  // namespace
}  // namespace xy
