// Channel error model of a PAM4 SerDes lane: decides which bits of the transmitted stream flip.
//
// The stream is a sequence of bits in transmission order, two bits per PAM4 symbol, Gray-coded
// onto levels 0,1,2,3 = 00,01,11,10. A slicer error moves a symbol to a neighbouring level, so
// it flips exactly one of its two bits. Which one depends on the boundary crossed: over
// scrambled (uniformly random) levels each of the three boundaries is crossed equally often, so
// the LSB (0|1, 2|3) flips with probability 2/3 and the MSB (1|2) with 1/3, and the model draws
// it so — independent of the data, so that a run that never materialises some
// bits (the codec's fast mode) sees exactly the same flips as one that does.
//
// Error events, all skip-sampled (the number of clean symbols to the next event is drawn from a
// geometric distribution, so a clean channel costs nothing per symbol):
//  - random: symbol errors at rate ser = 2 * ber (one bit error per symbol error);
//  - bursts (Gilbert–Elliott): a two-state chain, good/bad, with per-symbol transition
//    probabilities and its own ber in the bad state; off when p_good_to_bad = 0;
//  - DFE error propagation: a symbol error is followed by an error on the next symbol with
//    probability `dfe_propagation` (a), so runs have mean length 1 / (1 - a).
// Every flip is reported with its absolute stream position, so checkers know the truth.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernel/rng.hpp"

namespace xy::phy {

struct ErrorModelSpec {
  double ber = 0;              // bit error ratio in the good state, [0, 0.5)
  double p_good_to_bad = 0;    // per symbol; 0 = no bursts
  double p_bad_to_good = 0.1;  // per symbol in the bad state, (0, 1]
  double ber_bad = 0.01;       // bit error ratio in the bad state, [0, 0.5)
  double dfe_propagation = 0;  // [0, 1)
};

class BitErrorModel {
 public:
  BitErrorModel(ErrorModelSpec spec, Rng rng);  // throws std::invalid_argument on a bad spec

  // Appends to `flips` the absolute positions of the bits that flip among the next `bits` bits
  // of the stream (`bits` even), in increasing order, and advances the stream position.
  void draw(std::uint64_t bits, std::vector<std::uint64_t>& flips) {
    // Inline when no event (an error or a change of state) falls in these bits, as on most calls
    // at a low BER: then the position alone moves, as it would in draw_events.
    if (bits % 2 == 0 && std::min(next_error_, state_end_) >= pos_ / 2 + bits / 2) pos_ += bits;
    else draw_events(bits, flips);
  }
  std::uint64_t position() const { return pos_; }  // bits drawn so far
  // Bits from the position before the next event: a draw of up to this many flips nothing and
  // only moves the position, as skip() does.
  std::uint64_t quiet_bits() const {
    const std::uint64_t event = std::min(next_error_, state_end_);
    return event > ~std::uint64_t{0} / 4 ? ~std::uint64_t{0} / 2 : 2 * event - pos_;
  }
  void skip(std::uint64_t bits) { pos_ += bits; }  // at most quiet_bits()
  std::uint64_t flips_drawn() const { return flips_; }

 private:
  void draw_events(std::uint64_t bits, std::vector<std::uint64_t>& flips);
  void enter_next_state();
  void schedule_after_error(std::uint64_t symbol);
  double ser() const { return bad_ ? ser_bad_ : ser_good_; }

  ErrorModelSpec spec_;
  Rng rng_;
  double ser_good_, ser_bad_;     // symbol error ratios, 2 * ber
  std::uint64_t next_error_ = 0;  // symbol index of the next symbol error
  std::uint64_t state_end_ = 0;   // first symbol index past the current channel state
  bool bad_ = false;              // Gilbert–Elliott state
  bool chained_ = false;          // next_error_ is a DFE propagation: certain, never redrawn
  std::uint64_t pos_ = 0, flips_ = 0;
};

// Flips in `data` (bit i = bit i % 8 of byte i / 8) the positions of `flips` that fall in
// [base, base + bits); returns how many it flipped.
std::uint64_t apply_flips(std::uint8_t* data, std::uint64_t base, std::uint64_t bits,
                          const std::vector<std::uint64_t>& flips);

}  // namespace xy::phy
