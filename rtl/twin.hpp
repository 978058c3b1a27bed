// Small helpers around a Verilated (--cc) twin with `clk` and `rst` inputs, for the lockstep tests
// and the twins that scenarios drop in.
#pragma once
#include <cstdint>

namespace xy::cosim {

// One rising edge: the inputs set before it are sampled.
template <class Rtl>
void clock_edge(Rtl& rtl) {
  rtl.clk = 0;
  rtl.eval();
  rtl.clk = 1;
  rtl.eval();
}

// `edges` edges with rst high, then rst low.
template <class Rtl>
void reset(Rtl& rtl, int edges = 2) {
  rtl.rst = 1;
  for (int i = 0; i < edges; ++i) clock_edge(rtl);
  rtl.rst = 0;
}

// `width` bits from bit `lsb` of a wide Verilated output (an array of 32-bit words).
template <class Wide>
std::uint32_t bits_of(const Wide& wide, int lsb, int width) {
  std::uint32_t v = 0;
  for (int b = 0; b < width; ++b) v |= ((wide[(lsb + b) / 32] >> ((lsb + b) % 32)) & 1u) << b;
  return v;
}

}  // namespace xy::cosim
