// Per-block random streams. Each block draws from its own xoshiro256** stream whose seed is
// derived from the run's --seed and the block's hierarchical name, so adding a block never
// changes another block's numbers. Distributions are written here (not <random>'s) so results
// are identical across standard libraries.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace xy {

class Rng {
 public:
  Rng(std::uint64_t seed, std::string_view stream_name);
  explicit Rng(std::uint64_t raw_seed = 0);

  // Inline: models draw on every tick, and a call would cost as much as the draw.
  std::uint64_t next() { return xoshiro256ss(s_); }  // 64 random bits
  std::uint64_t below(std::uint64_t n);        // uniform in [0, n), n > 0, unbiased
  std::uint64_t between(std::uint64_t lo, std::uint64_t hi);  // uniform in [lo, hi]
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // uniform in [0, 1), 53 bits
  bool chance(double p) { return uniform() < p; }
  void fill(std::uint8_t* data, std::size_t size);  // random bytes, eight per draw
  // Trials until the next success of probability p (>= 1); skip-sampling of rare events.
  std::uint64_t geometric(double p);

 private:
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  // One step of xoshiro256** (Blackman & Vigna) on the state `s`.
  static std::uint64_t xoshiro256ss(std::uint64_t* s) {
    const std::uint64_t result = rotl(s[1] * 5, 7) * 9;
    const std::uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
  }
  std::uint64_t s_[4];
};

std::uint64_t hash_name(std::string_view name);  // FNV-1a 64

}  // namespace xy
