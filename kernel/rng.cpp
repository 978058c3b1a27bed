#include "kernel/rng.hpp"

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

std::uint64_t Rng::geometric(double p) {
  if (p >= 1) return 1;
  if (p <= 0) return ~std::uint64_t{0};
  const double u = 1.0 - uniform();  // in (0, 1]
  const double k = std::floor(std::log(u) / std::log1p(-p)) + 1;
  return k >= 1.8e19 ? ~std::uint64_t{0} : static_cast<std::uint64_t>(k);
}

}  // namespace xy
