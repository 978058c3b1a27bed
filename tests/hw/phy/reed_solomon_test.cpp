#include "hw/phy/reed_solomon.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernel/rng.hpp"

namespace xy::phy {
namespace {

using Word = std::vector<std::uint16_t>;

// ---------------------------------------------------------------------------------------------
// Reference arithmetic with no tables: carry-less multiply, then reduce by the field polynomial.

std::uint16_t slow_mul(std::uint32_t a, std::uint32_t b, int m, std::uint32_t poly) {
  std::uint32_t product = 0;
  for (int i = 0; i < m; ++i) {
    if (b & (1u << i)) product ^= a << i;
  }
  for (int bit = 2 * m - 2; bit >= m; --bit) {
    if (product & (1u << bit)) product ^= poly << (bit - m);
  }
  return static_cast<std::uint16_t>(product);
}

std::uint16_t slow_pow(std::uint16_t a, long long e, const RsCode& c) {
  std::uint16_t r = 1;
  for (long long i = 0; i < e; ++i) r = slow_mul(r, a, c.m, c.field_poly);
  return r;
}

// g(x) highest degree first, from the definition; alpha = x = 2. Needs first_root >= 0.
Word slow_generator(const RsCode& c) {
  Word g{1};
  for (int i = 0; i < c.n - c.k; ++i) {
    const std::uint16_t root = slow_pow(2, c.first_root + i, c);
    g.push_back(0);
    for (std::size_t j = g.size() - 1; j > 0; --j) g[j] ^= slow_mul(g[j - 1], root, c.m, c.field_poly);
  }
  return g;
}

// Long division of m(x) x^(n-k) by g(x), written out the textbook way.
Word slow_parity(const RsCode& c, const Word& generator, const Word& message) {
  const int parity = c.n - c.k;
  Word dividend(message.begin(), message.begin() + c.k);
  dividend.resize(c.n, 0);
  for (int i = 0; i < c.k; ++i) {
    const std::uint16_t coef = dividend[i];
    if (coef == 0) continue;
    for (int j = 0; j <= parity; ++j) dividend[i + j] ^= slow_mul(coef, generator[j], c.m, c.field_poly);
  }
  return Word(dividend.begin() + c.k, dividend.end());
}

void random_message(Rng& rng, const ReedSolomon& rs, Word& word) {
  for (int i = 0; i < rs.k(); ++i) word[i] = static_cast<std::uint16_t>(rng.below(rs.field().size()));
}

// Adds `weight` errors at distinct random positions, each a random nonzero value.
void add_errors(Rng& rng, const ReedSolomon& rs, int weight, Word& word) {
  std::vector<int> positions;
  while (static_cast<int>(positions.size()) < weight) {
    const int p = static_cast<int>(rng.below(rs.n()));
    if (std::find(positions.begin(), positions.end(), p) == positions.end()) positions.push_back(p);
  }
  for (int p : positions) word[p] ^= static_cast<std::uint16_t>(1 + rng.below(rs.field().size() - 1));
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// ---------------------------------------------------------------------------------------------
// GaloisField

TEST(GaloisField, TablesAgreeWithCarrylessMultiplication) {
  for (const RsCode& c : {rs255(), rs544()}) {
    const GaloisField gf(c.m, c.field_poly);
    for (std::uint32_t a = 0; a < gf.size(); ++a) {
      for (std::uint32_t b = 0; b < gf.size(); ++b) {
        ASSERT_EQ(gf.mul(a, b), slow_mul(a, b, c.m, c.field_poly)) << c.name << " " << a << " * " << b;
      }
    }
  }
}

TEST(GaloisField, FieldAxioms) {
  const GaloisField gf(10, 0x409);
  Rng rng(1, "gf.axioms");
  for (int trial = 0; trial < 100000; ++trial) {
    const auto a = static_cast<std::uint16_t>(rng.below(1024));
    const auto b = static_cast<std::uint16_t>(rng.below(1024));
    const auto c = static_cast<std::uint16_t>(rng.below(1024));
    ASSERT_EQ(gf.mul(a, b), gf.mul(b, a));
    ASSERT_EQ(gf.mul(gf.mul(a, b), c), gf.mul(a, gf.mul(b, c)));
    ASSERT_EQ(gf.mul(a, b ^ c), gf.mul(a, b) ^ gf.mul(a, c));
    ASSERT_EQ(gf.mul(a, 1), a);
    ASSERT_EQ(gf.mul(a, 0), 0);
  }
}

TEST(GaloisField, InverseAndDivision) {
  for (const RsCode& c : {rs255(), rs544()}) {
    const GaloisField gf(c.m, c.field_poly);
    for (std::uint32_t a = 1; a < gf.size(); ++a) {
      const auto x = static_cast<std::uint16_t>(a);
      ASSERT_EQ(gf.mul(x, gf.inv(x)), 1) << c.name << " a = " << a;
      ASSERT_EQ(gf.div(x, x), 1);
      ASSERT_EQ(gf.div(gf.mul(x, 0x5B), 0x5B), x);
      ASSERT_EQ(gf.div(0, x), 0);
      ASSERT_EQ(gf.exp(gf.log(x)), x);
    }
  }
}

TEST(GaloisField, AlphaGeneratesEveryNonzeroElement) {
  for (const RsCode& c : {rs255(), rs544()}) {
    const GaloisField gf(c.m, c.field_poly);
    std::set<std::uint16_t> seen;
    for (std::uint32_t i = 0; i + 1 < gf.size(); ++i) seen.insert(gf.exp(static_cast<int>(i)));
    EXPECT_EQ(seen.size(), gf.size() - 1) << c.name;
    EXPECT_EQ(seen.count(0), 0u);
  }
}

TEST(GaloisField, PowAlphaTakesAnyExponent) {
  const GaloisField gf(10, 0x409);
  EXPECT_EQ(gf.pow_alpha(0), 1);
  EXPECT_EQ(gf.pow_alpha(1), 2);
  EXPECT_EQ(gf.pow_alpha(10), 0x009);  // x^10 = x^3 + 1
  EXPECT_EQ(gf.pow_alpha(1023), 1);
  EXPECT_EQ(gf.pow_alpha(1023LL * 1000000007LL + 5), gf.exp(5));
  EXPECT_EQ(gf.pow_alpha(-1), gf.inv(2));
  EXPECT_EQ(gf.pow_alpha(-1023LL * 77 - 3), gf.exp(1020));
  for (int e = -3000; e < 3000; e += 7) ASSERT_EQ(gf.mul(gf.pow_alpha(e), gf.pow_alpha(-e)), 1) << e;
}

TEST(GaloisField, RejectsPolynomialsThatAreNotPrimitive) {
  // x^10 + x^3 + x^2 + 1 has the root 1, so it is reducible.
  try {
    GaloisField(10, 0x40D);
    FAIL() << "0x40d accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("0x40d"), std::string::npos) << e.what();
  }
  // AES's x^8 + x^4 + x^3 + x + 1 is irreducible, but x has order 51, not 255.
  EXPECT_THROW(GaloisField(8, 0x11B), std::invalid_argument);
  // x^4 + x^3 + x^2 + x + 1 is irreducible with x of order 5.
  EXPECT_THROW(GaloisField(4, 0x1F), std::invalid_argument);
  // Wrong degree for m, and x^10 alone (x divides it).
  EXPECT_THROW(GaloisField(8, 0x409), std::invalid_argument);
  EXPECT_THROW(GaloisField(10, 0x400), std::invalid_argument);
  EXPECT_NO_THROW(GaloisField(4, 0x13));
  EXPECT_NO_THROW(GaloisField(16, 0x1100B));
}

// ---------------------------------------------------------------------------------------------
// ReedSolomon: parameters and published vectors

TEST(ReedSolomon, PresetParameters) {
  const RsCode a = rs544(), b = rs272(), c = rs255();
  EXPECT_EQ(a.m, 10);
  EXPECT_EQ(a.field_poly, 0x409u);
  EXPECT_EQ(a.n, 544);
  EXPECT_EQ(a.k, 514);
  EXPECT_EQ(a.first_root, 0);
  EXPECT_EQ(a.t(), 15);
  EXPECT_EQ(b.field_poly, 0x409u);
  EXPECT_EQ(b.n, 272);
  EXPECT_EQ(b.k, 258);
  EXPECT_EQ(b.t(), 7);
  EXPECT_EQ(c.m, 8);
  EXPECT_EQ(c.field_poly, 0x11Du);
  EXPECT_EQ(c.n, 255);
  EXPECT_EQ(c.k, 239);
  EXPECT_EQ(c.t(), 8);
}

TEST(ReedSolomon, RejectsBadParameters) {
  EXPECT_THROW(ReedSolomon({"long", 8, 0x11D, 256, 200, 0}), std::invalid_argument);
  EXPECT_THROW(ReedSolomon({"k=n", 8, 0x11D, 100, 100, 0}), std::invalid_argument);
  EXPECT_THROW(ReedSolomon({"k=0", 8, 0x11D, 100, 0, 0}), std::invalid_argument);
  EXPECT_THROW(ReedSolomon({"field", 8, 0x11B, 100, 90, 0}), std::invalid_argument);
  EXPECT_NO_THROW(ReedSolomon({"odd", 8, 0x11D, 100, 85, 0}));
}

// BBC R&D White Paper WHP 031 (C.K.P. Clarke, 2002), worked RS(15,11) example over GF(16),
// x^4 + x + 1, roots alpha^0..alpha^3: message 1..11 gives parity 3, 3, 12, 12.
TEST(ReedSolomon, Whp031WorkedExample) {
  const ReedSolomon rs({"whp031", 4, 0x13, 15, 11, 0});
  Word w(15);
  for (int i = 0; i < 11; ++i) w[i] = static_cast<std::uint16_t>(i + 1);
  rs.encode(w.data());
  EXPECT_EQ(Word(w.begin() + 11, w.end()), (Word{3, 3, 12, 12}));
}

// RS(255,239) over x^8 + x^4 + x^3 + x^2 + 1 with roots alpha^0..alpha^15 (the G.709 Annex A /
// G.975 / DVB code); vector from aicodix/code tests/rs_encoder_test.cc: message 1..239.
TEST(ReedSolomon, Rs255IndependentImplementationVector) {
  const ReedSolomon rs(rs255());
  Word w(255);
  for (int i = 0; i < 239; ++i) w[i] = static_cast<std::uint16_t>(i + 1);
  rs.encode(w.data());
  const Word parity{1, 126, 147, 48, 155, 224, 3, 157, 29, 226, 40, 114, 61, 30, 244, 75};
  EXPECT_EQ(Word(w.begin() + 239, w.end()), parity);
}

// IEEE 802.3bj contributions on RS(528,514), the Clause 91 code that RS(272,257+1) shortens
// (same field, same generator): anslow_01a_0712 (513 zero symbols then 0x100; parity starts
// 1019, 521, 222 and ends 0x30C) and gustlin_01_0312 (message 1023 down to 510; parity starts
// 451, 952, 674 and ends 191; g0, g1, g2 = 0x1b0, 0x122, 0x3b1). Only these symbols of the two
// vectors were available.
TEST(ReedSolomon, Ieee8023bjContributionVectors) {
  const ReedSolomon rs({"rs528", 10, 0x409, 528, 514, 0});
  Word w(528, 0);
  w[513] = 0x100;
  rs.encode(w.data());
  EXPECT_EQ(w[514], 1019);
  EXPECT_EQ(w[515], 521);
  EXPECT_EQ(w[516], 222);
  EXPECT_EQ(w[527], 0x30C);

  for (int i = 0; i < 514; ++i) w[i] = static_cast<std::uint16_t>(1023 - i);
  rs.encode(w.data());
  EXPECT_EQ(w[514], 451);
  EXPECT_EQ(w[515], 952);
  EXPECT_EQ(w[516], 674);
  EXPECT_EQ(w[527], 191);

  // The unit message at k-1 encodes x^(n-k), whose parity is g(x) - x^(n-k): g0 comes last.
  std::fill(w.begin(), w.end(), 0);
  w[513] = 1;
  rs.encode(w.data());
  EXPECT_EQ(w[527], 0x1b0);
  EXPECT_EQ(w[526], 0x122);
  EXPECT_EQ(w[525], 0x3b1);
}

// ---------------------------------------------------------------------------------------------
// ReedSolomon: encoder

TEST(ReedSolomon, EncoderAgreesWithLongDivision) {
  const RsCode odd{"odd", 8, 0x11D, 100, 85, 3};
  for (const RsCode& c : {rs544(), rs272(), rs255(), odd}) {
    const ReedSolomon rs(c);
    const Word generator = slow_generator(c);
    Rng rng(2, "rs.encode." + c.name);
    Word w(c.n);
    for (int trial = 0; trial < 300; ++trial) {
      random_message(rng, rs, w);
      rs.encode(w.data());
      ASSERT_EQ(Word(w.begin() + c.k, w.end()), slow_parity(c, generator, w)) << c.name << " trial " << trial;
      ASSERT_TRUE(rs.is_codeword(w.data()));
      const DecodeResult r = rs.decode(w.data());
      ASSERT_TRUE(r.ok);
      ASSERT_EQ(r.corrected, 0);
    }
  }
}

TEST(ReedSolomon, ZeroWordAndSingleSymbolChangesAreSeen) {
  const ReedSolomon rs(rs272());
  Word w(272, 0);
  rs.encode(w.data());
  EXPECT_TRUE(std::all_of(w.begin(), w.end(), [](std::uint16_t v) { return v == 0; }));
  for (int p = 0; p < 272; ++p) {
    w[p] = 1;
    ASSERT_FALSE(rs.is_codeword(w.data())) << p;
    w[p] = 0;
  }
}

// ---------------------------------------------------------------------------------------------
// ReedSolomon: correction up to t

void expect_corrects_up_to_t(const RsCode& code, int trials) {
  const ReedSolomon rs(code);
  Rng rng(3, "rs.correct." + code.name);
  Word sent(code.n), received(code.n);
  std::vector<int> by_weight(code.t() + 1, 0);
  const auto start = std::chrono::steady_clock::now();
  for (int trial = 0; trial < trials; ++trial) {
    random_message(rng, rs, sent);
    rs.encode(sent.data());
    const int weight = 1 + static_cast<int>(rng.below(code.t()));
    received = sent;
    add_errors(rng, rs, weight, received);
    const DecodeResult r = rs.decode(received.data());
    ASSERT_TRUE(r.ok) << code.name << " trial " << trial << " weight " << weight;
    ASSERT_EQ(r.corrected, weight) << code.name << " trial " << trial;
    ASSERT_EQ(received, sent) << code.name << " trial " << trial;
    ++by_weight[weight];
  }
  const double s = seconds_since(start);
  for (int w = 1; w <= code.t(); ++w) EXPECT_GT(by_weight[w], 0) << "weight " << w << " never drawn";
  std::cout << "[ rs ] " << code.name << ": " << trials << " patterns of weight 1.." << code.t()
            << " all corrected in " << s << " s\n";
  ::testing::Test::RecordProperty(code.name + "_corrected", trials);
}

TEST(ReedSolomon, Rs544CorrectsEveryPatternUpToT) { expect_corrects_up_to_t(rs544(), 100000); }
TEST(ReedSolomon, Rs272CorrectsEveryPatternUpToT) { expect_corrects_up_to_t(rs272(), 100000); }
TEST(ReedSolomon, Rs255CorrectsEveryPatternUpToT) { expect_corrects_up_to_t(rs255(), 100000); }

// A nonzero first root and an odd number of parity symbols (t = 7 from n-k = 15).
TEST(ReedSolomon, FirstRootAndOddParityAreHandled) {
  expect_corrects_up_to_t({"fcr3_odd", 8, 0x11D, 100, 85, 3}, 20000);
  expect_corrects_up_to_t({"fcr120", 8, 0x187, 255, 223, 120}, 20000);
  expect_corrects_up_to_t({"fcr_neg", 10, 0x409, 300, 280, -5}, 20000);
}

// An error at a power of x the shortened code does not use (272..1022) has syndromes that the
// parity symbols alone can reproduce. Together with up to t-1 real errors it is a pattern of
// weight <= t of the full-length code, so it is the only explanation within distance t; one of
// its locator roots lies outside the word, so the decoder must give up rather than "correct".
TEST(ReedSolomon, LocatorRootOutsideTheShortenedWordIsUncorrectable) {
  const RsCode c = rs272();
  const ReedSolomon rs(c);
  const Word generator = slow_generator(c);
  const int parity = c.n - c.k;
  Rng rng(4, "rs.outside");
  Word sent(c.n), received(c.n);
  for (int trial = 0; trial < 2000; ++trial) {
    random_message(rng, rs, sent);
    rs.encode(sent.data());
    // x^e mod g(x), lowest degree first, by repeated multiplication by x.
    const int e = c.n + static_cast<int>(rng.below(1023 - c.n));
    Word rem(parity, 0);
    rem[0] = 1;
    for (int step = 0; step < e; ++step) {
      const std::uint16_t top = rem[parity - 1];
      for (int j = parity - 1; j > 0; --j) rem[j] = rem[j - 1] ^ slow_mul(top, generator[parity - j], c.m, c.field_poly);
      rem[0] = slow_mul(top, generator[parity], c.m, c.field_poly);
    }
    const auto value = static_cast<std::uint16_t>(1 + rng.below(1023));
    received = sent;
    add_errors(rng, rs, static_cast<int>(rng.below(c.t())), received);  // 0..t-1 real errors
    for (int p = 0; p < parity; ++p) received[c.n - 1 - p] ^= slow_mul(value, rem[p], c.m, c.field_poly);
    const Word before = received;
    const DecodeResult r = rs.decode(received.data());
    ASSERT_FALSE(r.ok) << "trial " << trial << " e = " << e;
    ASSERT_EQ(received, before);
  }
}

// ---------------------------------------------------------------------------------------------
// ReedSolomon: beyond t

// Fraction of all words that lie within distance t of some codeword: sum_{i<=t} C(n,i)(q-1)^i /
// q^(n-k). A word with more than t errors lands in a wrong decoding sphere about this often
// (McEliece & Swanson: below 1/t! for full-length codes; shortening makes it smaller still).
double sphere_fraction(const RsCode& c) {
  const double q = std::ldexp(1.0, c.m);
  double sum = 0;
  for (int i = 0; i <= c.t(); ++i) {
    const double log_term = std::lgamma(c.n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(c.n - i + 1.0) +
                            i * std::log(q - 1) - (c.n - c.k) * std::log(q);
    sum += std::exp(log_term);
  }
  return sum;
}

void expect_never_accepts_a_non_codeword(const RsCode& code, int trials_per_weight) {
  const ReedSolomon rs(code);
  Rng rng(5, "rs.beyond." + code.name);
  Word sent(code.n), received(code.n), before(code.n);
  const double expected = sphere_fraction(code);
  const auto start = std::chrono::steady_clock::now();
  int total_wrong = 0;
  for (int weight = code.t() + 1; weight <= 2 * code.t(); ++weight) {
    int wrong = 0;
    for (int trial = 0; trial < trials_per_weight; ++trial) {
      random_message(rng, rs, sent);
      rs.encode(sent.data());
      received = sent;
      add_errors(rng, rs, weight, received);
      before = received;
      const DecodeResult r = rs.decode(received.data());
      if (r.ok) {
        ASSERT_TRUE(rs.is_codeword(received.data())) << code.name << " weight " << weight << " trial " << trial;
        ASSERT_NE(received, sent);
        ASSERT_GE(r.corrected, 1);
        ASSERT_LE(r.corrected, code.t());
        ++wrong;
      } else {
        ASSERT_EQ(received, before) << code.name << " weight " << weight << " trial " << trial;
      }
    }
    const double rate = static_cast<double>(wrong) / trials_per_weight;
    std::cout << "[ rs ] " << code.name << " weight " << weight << ": miscorrected " << wrong << " of "
              << trials_per_weight << " (" << rate << ")\n";
    ::testing::Test::RecordProperty(code.name + "_w" + std::to_string(weight) + "_miscorrected", wrong);
    total_wrong += wrong;
  }
  const int trials = trials_per_weight * code.t();
  // Ten times the sphere estimate, plus three events of room for Poisson noise at small counts.
  const double bound = 10 * expected * trials + 3;
  std::cout << "[ rs ] " << code.name << " weights " << code.t() + 1 << ".." << 2 * code.t() << ": miscorrected "
            << total_wrong << " of " << trials << ", sphere estimate " << expected << " per word, bound " << bound
            << ", " << seconds_since(start) << " s\n";
  ::testing::Test::RecordProperty(code.name + "_miscorrection_rate",
                                  std::to_string(static_cast<double>(total_wrong) / trials));
  EXPECT_LE(total_wrong, bound) << code.name;
}

TEST(ReedSolomon, Rs544NeverAcceptsANonCodewordBeyondT) { expect_never_accepts_a_non_codeword(rs544(), 2000); }
TEST(ReedSolomon, Rs272NeverAcceptsANonCodewordBeyondT) { expect_never_accepts_a_non_codeword(rs272(), 4000); }
TEST(ReedSolomon, Rs255NeverAcceptsANonCodewordBeyondT) { expect_never_accepts_a_non_codeword(rs255(), 25000); }

// A small code miscorrects often, which exercises the accept path beyond t: RS(15,11) has a
// sphere fraction of about 0.36.
TEST(ReedSolomon, SmallCodeMiscorrectionsAreValidCodewords) {
  expect_never_accepts_a_non_codeword({"rs15", 4, 0x13, 15, 11, 0}, 20000);
}

}  // namespace
}  // namespace xy::phy
