#include "hw/phy/bit_errors.hpp"

#include <algorithm>
#include <sstream>
#include <stdexcept>
#include <string>

namespace xy::phy {
namespace {

// Symbol index that is never reached: Rng::geometric(0) returns it, sums saturate to it.
constexpr std::uint64_t kNever = ~std::uint64_t{0};

std::uint64_t plus(std::uint64_t a, std::uint64_t b) { return b >= kNever - a ? kNever : a + b; }

// Written as !(in range) so that NaN fails too.
void require(bool in_range, const char* field, double value, const char* range) {
  if (in_range) return;
  std::ostringstream os;
  os.precision(12);
  os << "bit error model: " << field << " = " << value << " is outside " << range;
  throw std::invalid_argument(os.str());
}

ErrorModelSpec validated(const ErrorModelSpec& s) {
  require(s.ber >= 0 && s.ber < 0.5, "ber", s.ber, "[0, 0.5)");
  require(s.ber_bad >= 0 && s.ber_bad < 0.5, "ber_bad", s.ber_bad, "[0, 0.5)");
  require(s.p_good_to_bad >= 0 && s.p_good_to_bad <= 1, "p_good_to_bad", s.p_good_to_bad, "[0, 1]");
  require(s.p_bad_to_good > 0 && s.p_bad_to_good <= 1, "p_bad_to_good", s.p_bad_to_good, "(0, 1]");
  require(s.dfe_propagation >= 0 && s.dfe_propagation < 1, "dfe_propagation", s.dfe_propagation,
          "[0, 1)");
  return s;
}

}  // namespace

BitErrorModel::BitErrorModel(ErrorModelSpec spec, Rng rng)
    : spec_(validated(spec)), rng_(rng), ser_good_(2 * spec.ber), ser_bad_(2 * spec.ber_bad) {
  // The lane comes out of training in the good state.
  next_error_ = rng_.geometric(ser_good_) - 1;
  state_end_ = spec_.p_good_to_bad > 0 ? rng_.geometric(spec_.p_good_to_bad) : kNever;
}

void BitErrorModel::draw_events(std::uint64_t bits, std::vector<std::uint64_t>& flips) {
  if (bits % 2 != 0)
    throw std::invalid_argument("bit error model: draw(" + std::to_string(bits) +
                                ") must cover whole PAM4 symbols (an even number of bits)");
  const std::uint64_t end = pos_ / 2 + bits / 2;  // first symbol past this call
  // Events are taken strictly in symbol order and nothing is drawn for an event at or past
  // `end`, so how the stream is cut into calls cannot change the flips.
  for (;;) {
    if (state_end_ <= next_error_) {
      if (state_end_ >= end) break;
      enter_next_state();
    } else {
      if (next_error_ >= end) break;
      const std::uint64_t symbol = next_error_;
      // Gray levels 00,01,11,10 under noise: each level crosses to each neighbour equally
      // often, so the three boundaries are crossed equally often, and two of them (0|1, 2|3)
      // flip the LSB: P(LSB) = 2/3, P(MSB) = 1/3 over uniform levels. (An error is twice as
      // likely from an inner level, which has two neighbours.) Drawn, not read from the data,
      // so that unmaterialised bits see the same flips.
      flips.push_back(2 * symbol + (rng_.below(3) == 0 ? 1 : 0));
      ++flips_;
      schedule_after_error(symbol);
    }
  }
  pos_ += bits;
}

void BitErrorModel::enter_next_state() {
  const std::uint64_t start = state_end_;
  bad_ = !bad_;
  state_end_ = plus(start, rng_.geometric(bad_ ? spec_.p_bad_to_good : spec_.p_good_to_bad));
  // A random error drawn at the old rate that falls in the new state is void; by memorylessness
  // a fresh draw from the boundary at the new rate is exact. A DFE error is certain and stays.
  if (!chained_) next_error_ = plus(start, rng_.geometric(ser()) - 1);
}

void BitErrorModel::schedule_after_error(std::uint64_t symbol) {
  chained_ = spec_.dfe_propagation > 0 && rng_.chance(spec_.dfe_propagation);
  next_error_ = chained_ ? symbol + 1 : plus(symbol + 1, rng_.geometric(ser()) - 1);
}

std::uint64_t apply_flips(std::uint8_t* data, std::uint64_t base, std::uint64_t bits,
                          const std::vector<std::uint64_t>& flips) {
  std::uint64_t n = 0;
  for (auto it = std::lower_bound(flips.begin(), flips.end(), base);
       it != flips.end() && *it - base < bits; ++it, ++n) {
    const std::uint64_t i = *it - base;
    data[i / 8] ^= static_cast<std::uint8_t>(1u << (i % 8));
  }
  return n;
}

}  // namespace xy::phy
