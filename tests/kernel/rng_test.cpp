// Random streams (kernel/rng.hpp): per block and seed, fill(), below() and geometric().
#include "kernel/rng.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace xy {
namespace {

// fill() is next()'s stream, eight bytes a draw in the host's byte order, the last draw cut
// short, and leaves the stream where next() would have.
TEST(Rng, FillGivesTheBytesOfNextAndContinuesTheStream) {
  for (std::size_t size = 0; size < 100; ++size) {
    Rng filled(size, "fill"), drawn(size, "fill");
    std::vector<std::uint8_t> got(size), want(size);
    filled.fill(got.data(), size);
    for (std::size_t i = 0; i < size; i += 8) {
      const std::uint64_t r = drawn.next();
      for (std::size_t k = 0; k < 8 && i + k < size; ++k) want[i + k] = reinterpret_cast<const std::uint8_t*>(&r)[k];
    }
    EXPECT_EQ(got, want) << "size " << size;
    EXPECT_EQ(filled.next(), drawn.next()) << "size " << size;
  }
}

TEST(Rng, SameSeedAndNameGiveTheSameStream) {
  Rng a(7, "top.gen"), b(7, "top.gen"), c(7, "top.sink"), d(8, "top.gen");
  bool differs_by_name = false, differs_by_seed = false;
  for (int i = 0; i < 100; ++i) {
    const auto x = a.next();
    EXPECT_EQ(x, b.next());
    differs_by_name |= x != c.next();
    differs_by_seed |= x != d.next();
  }
  EXPECT_TRUE(differs_by_name);
  EXPECT_TRUE(differs_by_seed);
}

TEST(Rng, BelowIsUniform) {
  Rng r(1, "u");
  int counts[6] = {};
  const int n = 600000;
  for (int i = 0; i < n; ++i) ++counts[r.below(6)];
  double chi2 = 0;
  for (int c : counts) chi2 += (c - n / 6.0) * (c - n / 6.0) / (n / 6.0);
  EXPECT_LT(chi2, 20.5);  // 5 degrees of freedom, p = 0.001
}

TEST(Rng, GeometricHasMeanOneOverP) {
  Rng r(3, "g");
  double sum = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) sum += static_cast<double>(r.geometric(0.01));
  EXPECT_NEAR(sum / n, 100.0, 1.5);  // sd of the mean = sqrt(0.99)/0.01/sqrt(n) = 0.22
  EXPECT_EQ(r.geometric(1.0), 1u);
}

}  // namespace
}  // namespace xy
