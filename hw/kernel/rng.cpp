#include "xingyun/rng.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace xy {
namespace {

std::uint64_t splitmix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

// One step of xoshiro256** (Blackman & Vigna) on the state `s`.
inline std::uint64_t xoshiro256ss(std::uint64_t* s) {
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

}  // namespace

std::uint64_t hash_name(std::string_view name) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : name) h = (h ^ c) * 0x100000001b3ULL;
  return h;
}

Rng::Rng(std::uint64_t raw_seed) {
  for (auto& s : s_) s = splitmix64(raw_seed);
}

Rng::Rng(std::uint64_t seed, std::string_view stream_name) : Rng(seed ^ rotl(hash_name(stream_name), 17)) {}

std::uint64_t Rng::next() { return xoshiro256ss(s_); }

std::uint64_t Rng::below(std::uint64_t n) {  // Lemire's multiply-and-reject
  unsigned __int128 m = static_cast<unsigned __int128>(next()) * n;
  std::uint64_t low = static_cast<std::uint64_t>(m);
  if (low < n) {
    const std::uint64_t threshold = -n % n;
    while (low < threshold) {
      m = static_cast<unsigned __int128>(next()) * n;
      low = static_cast<std::uint64_t>(m);
    }
  }
  return static_cast<std::uint64_t>(m >> 64);
}

std::uint64_t Rng::between(std::uint64_t lo, std::uint64_t hi) {
  return hi - lo == ~std::uint64_t{0} ? next() : lo + below(hi - lo + 1);
}

void Rng::fill(std::uint8_t* data, std::size_t size) {
  // The state in locals, where it stays in registers, and whole words stored with a fixed-size
  // copy; the last draw gives its first bytes to a partial word.
  std::uint64_t s[4] = {s_[0], s_[1], s_[2], s_[3]};
  const std::size_t whole = size / 8 * 8;
  for (std::size_t i = 0; i < whole; i += 8) {
    const std::uint64_t r = xoshiro256ss(s);
    std::memcpy(data + i, &r, 8);
  }
  if (size > whole) {
    const std::uint64_t r = xoshiro256ss(s);
    std::memcpy(data + whole, &r, size - whole);
  }
  std::copy(s, s + 4, s_);
}

double Rng::uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

std::uint64_t Rng::geometric(double p) {
  if (p >= 1) return 1;
  if (p <= 0) return ~std::uint64_t{0};
  const double u = 1.0 - uniform();  // in (0, 1]
  const double k = std::floor(std::log(u) / std::log1p(-p)) + 1;
  return k >= 1.8e19 ? ~std::uint64_t{0} : static_cast<std::uint64_t>(k);
}

}  // namespace xy
