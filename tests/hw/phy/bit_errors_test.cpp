#include "hw/phy/bit_errors.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace xy::phy {
namespace {

using ::testing::HasSubstr;

BitErrorModel model(const ErrorModelSpec& spec, std::uint64_t seed = 1, const char* name = "lane0") {
  return BitErrorModel(spec, Rng(seed, name));
}

// Draws `bits` in codeword-sized pieces of `chunk` bits, as the PHY does, and counts the flips.
std::uint64_t count_flips(BitErrorModel& m, std::uint64_t bits, std::uint64_t chunk = 100'000'000) {
  std::vector<std::uint64_t> flips;
  for (std::uint64_t done = 0; done < bits; done += chunk) {
    flips.clear();
    m.draw(std::min(chunk, bits - done), flips);
  }
  return m.flips_drawn();
}

// Without bursts or DFE every symbol errs independently with ser = 2 ber, one flipped bit per
// symbol error: the flip count over `bits` is Binomial(bits / 2, ser).
void expect_ber(double ber, std::uint64_t bits) {
  BitErrorModel m = model({ber});
  const double n = bits / 2.0, ser = 2 * ber;
  const double mean = n * ser, sigma = std::sqrt(n * ser * (1 - ser));
  const auto flips = static_cast<double>(count_flips(m, bits));
  EXPECT_NEAR(flips, mean, 5 * sigma) << "measured BER " << flips / bits << " vs " << ber;
  EXPECT_EQ(m.position(), bits);
}

TEST(BitErrorModel, BerMatchesSpecAt1e3) {
  expect_ber(1e-3, 1'000'000'000);  // mean 1e6 flips, sigma 999: band +-0.5 %
}

TEST(BitErrorModel, BerMatchesSpecAt1e6) {
  expect_ber(1e-6, 100'000'000'000);  // mean 1e5 flips, sigma 316: band +-1.6 %
}

TEST(BitErrorModel, CleanChannelFlipsNothingAndCostsNothing) {
  BitErrorModel m = model({});
  std::vector<std::uint64_t> flips;
  // 2^62 bits per call: finishes only because a clean channel is O(1) per call.
  m.draw(std::uint64_t{1} << 62, flips);
  m.draw(std::uint64_t{1} << 62, flips);
  EXPECT_TRUE(flips.empty());
  EXPECT_EQ(m.flips_drawn(), 0u);
  EXPECT_EQ(m.position(), std::uint64_t{1} << 63);
}

// Every mechanism on at once, so that state changes and DFE chains straddle chunk boundaries.
const ErrorModelSpec kEverything{1e-3, 1e-4, 1e-2, 0.05, 0.6};

TEST(BitErrorModel, ChunkedDrawsEqualOneDraw) {
  const std::uint64_t total = 20'000'000;
  BitErrorModel whole = model(kEverything), pieces = model(kEverything);
  std::vector<std::uint64_t> expected, got;
  whole.draw(total, expected);
  Rng sizes(9, "chunk sizes");
  while (pieces.position() < total) {
    const std::uint64_t chunk = std::min<std::uint64_t>(2 * sizes.below(3000), total - pieces.position());
    pieces.draw(chunk, got);  // includes empty and one-symbol draws
  }
  ASSERT_GT(expected.size(), 10'000u);
  EXPECT_EQ(got, expected);
  EXPECT_EQ(pieces.flips_drawn(), whole.flips_drawn());
  EXPECT_TRUE(std::is_sorted(expected.begin(), expected.end()));
  EXPECT_EQ(std::adjacent_find(expected.begin(), expected.end()), expected.end());
}

TEST(BitErrorModel, SeedAndNameDetermineTheFlips) {
  auto flips_of = [](std::uint64_t seed, const char* name) {
    BitErrorModel m = model(kEverything, seed, name);
    std::vector<std::uint64_t> flips;
    m.draw(1'000'000, flips);
    return flips;
  };
  const auto base = flips_of(7, "lane0");
  ASSERT_GT(base.size(), 500u);
  EXPECT_EQ(flips_of(7, "lane0"), base);
  EXPECT_NE(flips_of(7, "lane1"), base);
  EXPECT_NE(flips_of(8, "lane0"), base);
}

TEST(BitErrorModel, LsbFlipsAsOftenAsTheBoundariesThatFlipIt) {
  // First principles: Gray-coded levels 0..3 = 00,01,11,10, uniform, and noise that carries a
  // level across each of its boundaries with the same probability (outer levels have one,
  // inner ones two). Count, over every (level, neighbour) crossing, the bit that changes.
  const int gray[4] = {0b00, 0b01, 0b11, 0b10};
  int crossings = 0, lsb_crossings = 0;
  for (int level = 0; level < 4; ++level)
    for (int next : {level - 1, level + 1}) {
      if (next < 0 || next > 3) continue;
      ++crossings;
      lsb_crossings += (gray[level] ^ gray[next]) == 0b01;
    }
  const double p = static_cast<double>(lsb_crossings) / crossings;  // 4 of 6
  BitErrorModel m = model({1e-3});
  std::vector<std::uint64_t> flips;
  m.draw(1'000'000'000, flips);
  std::uint64_t lsb = 0;
  for (std::uint64_t f : flips) lsb += f % 2 == 0;
  // Each flip is the LSB with probability p independently: sigma of the fraction =
  // sqrt(p(1-p)/n), 4.7e-4 for n = 1e6.
  const double n = flips.size(), fraction = lsb / n;
  EXPECT_NEAR(fraction, p, 5 * std::sqrt(p * (1 - p) / n)) << "LSB:MSB = " << lsb << ":" << flips.size() - lsb;
}

TEST(BitErrorModel, DfePropagationMakesRunsOfMeanOneOverOneMinusA) {
  const double ber = 1e-5, a = 0.5, ser = 2 * ber;
  const std::uint64_t bits = 10'000'000'000;
  BitErrorModel m = model({ber, 0, 0.1, 0.01, a});
  std::vector<std::uint64_t> flips;
  std::uint64_t runs = 0, errors = 0, last = ~std::uint64_t{0} - 1;
  for (std::uint64_t done = 0; done < bits; done += 100'000'000) {
    flips.clear();
    m.draw(100'000'000, flips);
    for (std::uint64_t f : flips) {
      const std::uint64_t symbol = f / 2;
      runs += symbol != last + 1;
      last = symbol;
      ++errors;
    }
  }
  // A run continues with c = a + (1 - a) ser (DFE, or a random error on the next symbol), so
  // its length is geometric: mean 1 / (1 - c), variance c / (1 - c)^2; about 1e5 runs.
  const double c = a + (1 - a) * ser;
  const double mean_run = static_cast<double>(errors) / runs;
  EXPECT_NEAR(mean_run, 1 / (1 - c), 5 * std::sqrt(c / ((1 - c) * (1 - c)) / runs));
  // Stationary symbol error ratio q = q c + (1 - q) ser, so q = ser / (1 - a + a ser), which is
  // ser / (1 - a) to 1e-5. Runs start as a Poisson process of rate ~ser (1 - q), so the error
  // count is compound Poisson: variance = runs * E[L^2] = runs * (1 + c) / (1 - c)^2.
  const double q = ser / (1 - a + a * ser), symbols = bits / 2.0;
  const double sigma = std::sqrt(symbols * ser * (1 - q) * (1 + c) / ((1 - c) * (1 - c)));
  EXPECT_NEAR(static_cast<double>(errors), symbols * q, 5 * sigma)
      << "measured BER " << errors / static_cast<double>(bits) << " vs " << ber / (1 - a);
}

// Long-run variance, per symbol, of the symbol error count of a Gilbert–Elliott channel, by
// the renewal–reward central limit theorem: a cycle is a good sojourn followed by a bad one,
// each of geometric length L (mean 1/p, variance (1-p)/p^2) with Binomial(L, ser) errors.
double ge_variance_per_symbol(double p_gb, double ser_g, double p_bg, double ser_b, double rate) {
  auto sojourn = [rate](double p, double s) {  // Var(errors - rate * L) over one sojourn
    return s * (1 - s) / p + (s - rate) * (s - rate) * (1 - p) / (p * p);
  };
  return (sojourn(p_gb, ser_g) + sojourn(p_bg, ser_b)) / (1 / p_gb + 1 / p_bg);
}

const ErrorModelSpec kBursty{1e-6, 1e-5, 1e-3, 1e-2, 0};

TEST(BitErrorModel, GilbertElliottSpendsTheStationaryFractionInTheBadState) {
  const ErrorModelSpec& s = kBursty;
  const double pi = s.p_good_to_bad / (s.p_good_to_bad + s.p_bad_to_good);  // 0.0099
  const double expected_ber = (1 - pi) * s.ber + pi * s.ber_bad;           // 1.0e-4
  const std::uint64_t bits = 10'000'000'000;
  BitErrorModel m = model(s);
  const auto flips = static_cast<double>(count_flips(m, bits, 5440));
  // About 5e4 bad sojourns of mean 1000 symbols: sigma is 0.6 % of the ~1e6 flips.
  const double symbols = bits / 2.0;
  const double sigma = std::sqrt(
      symbols * ge_variance_per_symbol(s.p_good_to_bad, 2 * s.ber, s.p_bad_to_good, 2 * s.ber_bad,
                                       2 * expected_ber));
  EXPECT_NEAR(flips, expected_ber * bits, 5 * sigma);
  const double measured_pi = (flips / bits - s.ber) / (s.ber_bad - s.ber);
  EXPECT_NEAR(measured_pi, pi, 5 * sigma / bits / (s.ber_bad - s.ber));
}

// Index of dispersion (variance / mean) of the flip count per 5440-bit codeword.
double dispersion_per_codeword(const ErrorModelSpec& spec, int codewords) {
  BitErrorModel m = model(spec);
  std::vector<std::uint64_t> flips;
  double sum = 0, sum2 = 0;
  for (int i = 0; i < codewords; ++i) {
    flips.clear();
    m.draw(5440, flips);
    sum += flips.size();
    sum2 += static_cast<double>(flips.size()) * flips.size();
  }
  const double mean = sum / codewords;
  return (sum2 / codewords - mean * mean) / mean;
}

TEST(BitErrorModel, GilbertElliottErrorsAreClustered) {
  const int codewords = 200'000;
  // Independent errors: binomial counts, dispersion 1 - ser ~ 1; the sample dispersion of
  // n = 2e5 blocks has sigma ~ sqrt(2 / n) = 0.003 (for a mean near 0.5 a bit more, < 0.01).
  const double plain = dispersion_per_codeword({1e-4}, codewords);
  EXPECT_NEAR(plain, 1.0, 0.05);
  // Same mean BER in bursts: a codeword that meets a bad sojourn carries ~20 errors per 1000
  // symbols of it, so counts are far more spread than Poisson (about 26x here).
  const double bursty = dispersion_per_codeword(kBursty, codewords);
  EXPECT_GT(bursty, 10.0) << "plain " << plain;
}

TEST(BitErrorModel, ApplyFlipsTouchesOnlyTheWindow) {
  const std::vector<std::uint64_t> flips{3, 999, 1000, 1007, 1050, 1099, 1100, 5000};
  std::uint8_t data[16] = {};
  EXPECT_EQ(apply_flips(data, 1000, 100, flips), 4u);
  std::uint8_t expected[16] = {};
  expected[0] = 0x81;         // 1000 and 1007: bits 0 and 7 of byte 0
  expected[50 / 8] = 1 << 2;  // 1050
  expected[99 / 8] = 1 << 3;  // 1099, the last bit of the window
  EXPECT_TRUE(std::equal(data, data + 16, expected));
  EXPECT_EQ(apply_flips(data, 1000, 100, flips), 4u);  // flipping twice restores
  EXPECT_TRUE(std::all_of(data, data + 16, [](std::uint8_t b) { return b == 0; }));
  EXPECT_EQ(apply_flips(data, 1101, 3000, flips), 0u);
  EXPECT_EQ(apply_flips(data, 0, 0, flips), 0u);
}

TEST(BitErrorModel, ApplyFlipsAgreesWithDrawnPositions) {
  BitErrorModel m = model(kEverything);
  std::vector<std::uint64_t> flips;
  m.draw(200'000, flips);
  std::vector<std::uint8_t> data(25'000 / 8 + 1);
  const std::uint64_t base = 50'000, bits = 25'000;
  const std::uint64_t n = apply_flips(data.data(), base, bits, flips);
  std::uint64_t in_window = 0, set_bits = 0;
  for (std::uint64_t f : flips) {
    if (f < base || f >= base + bits) continue;
    ++in_window;
    EXPECT_TRUE(data[(f - base) / 8] >> ((f - base) % 8) & 1) << f;
  }
  for (std::uint8_t b : data) set_bits += __builtin_popcount(b);
  EXPECT_GT(in_window, 10u);
  EXPECT_EQ(n, in_window);
  EXPECT_EQ(set_bits, in_window);
}

std::string error_of(const ErrorModelSpec& spec) {
  try {
    model(spec);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(BitErrorModel, BadSpecsNameFieldValueAndRange) {
  auto with = [](auto set) {
    ErrorModelSpec s;
    set(s);
    return error_of(s);
  };
  const std::string ber_neg = with([](auto& s) { s.ber = -1e-3; });
  EXPECT_THAT(ber_neg, HasSubstr("ber = -0.001"));
  EXPECT_THAT(ber_neg, HasSubstr("[0, 0.5)"));
  EXPECT_THAT(with([](auto& s) { s.ber = 0.5; }), HasSubstr("ber = 0.5 "));
  EXPECT_THAT(with([](auto& s) { s.ber = std::nan(""); }), HasSubstr("ber = nan"));
  EXPECT_THAT(with([](auto& s) { s.ber_bad = 0.7; }), HasSubstr("ber_bad = 0.7 is outside [0, 0.5)"));
  EXPECT_THAT(with([](auto& s) { s.p_good_to_bad = 1.5; }),
              HasSubstr("p_good_to_bad = 1.5 is outside [0, 1]"));
  EXPECT_THAT(with([](auto& s) { s.p_bad_to_good = 0; }),
              HasSubstr("p_bad_to_good = 0 is outside (0, 1]"));
  EXPECT_THAT(with([](auto& s) { s.dfe_propagation = 1; }),
              HasSubstr("dfe_propagation = 1 is outside [0, 1)"));
  // The closed ends are valid.
  EXPECT_EQ(with([](auto& s) {
              s.ber = 0.49;
              s.p_good_to_bad = 1;
              s.p_bad_to_good = 1;
            }),
            "");
}

TEST(BitErrorModel, OddDrawIsRejected) {
  BitErrorModel m = model({1e-3});
  std::vector<std::uint64_t> flips;
  EXPECT_THROW(m.draw(5439, flips), std::invalid_argument);
  EXPECT_EQ(m.position(), 0u);
}

}  // namespace
}  // namespace xy::phy
