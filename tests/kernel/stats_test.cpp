#include "kernel/stats.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "kernel/packet.hpp"
#include "kernel/rng.hpp"
#include "kernel/units.hpp"

namespace xy {
namespace {

TEST(LatencyHistogram, QuantilesAreExactCycleCounts) {
  LatencyHistogram h(kNs);
  for (Cycle c = 1; c <= 1000; ++c) h.record(c);
  EXPECT_EQ(h.count(), 1000u);
  EXPECT_EQ(h.quantile(0.5), 500u);
  EXPECT_EQ(h.quantile(0.99), 990u);
  EXPECT_EQ(h.quantile(0.999), 999u);
  EXPECT_EQ(h.quantile(1.0), 1000u);
  EXPECT_EQ(h.min(), 1u);
  EXPECT_EQ(h.max(), 1000u);
  EXPECT_DOUBLE_EQ(h.mean(), 500.5);
}

TEST(LatencyHistogram, ReportsCyclesAndNanoseconds) {
  LatencyHistogram h(2 * kNs);  // 500 MHz
  h.record(10);
  h.record(30);
  const auto j = h.to_json();
  EXPECT_EQ(j["p50_cycles"], 10.0);
  EXPECT_EQ(j["p50_ns"], 20.0);
  EXPECT_EQ(j["max_ns"], 60.0);
  EXPECT_EQ(j["count"], 2u);
}

// results.json's stats say what each one is, and a histogram the clock its cycles count.
TEST(Stats, JsonCarriesDescriptionAndClock) {
  Stats s;
  s.counter("top.a.packets", "packets", "packets received").add(2);
  s.histogram("top.a.latency", 2 * kNs, "injection to arrival").record(10);
  const auto j = s.to_json();
  EXPECT_EQ(j["top.a.packets"]["description"], "packets received");
  EXPECT_EQ(j["top.a.latency"]["description"], "injection to arrival");
  EXPECT_EQ(j["top.a.latency"]["clock_period_ns"], 2.0);
  EXPECT_EQ(j["top.a.latency"]["p50_ns"], j["top.a.latency"]["p50_cycles"].get<double>() * 2.0);
}

// No sample, no latency: every figure null (0 would read as a measured zero), the count 0.
TEST(LatencyHistogram, EmptyHasNullFigures) {
  LatencyHistogram h(2 * kNs);
  const auto j = h.to_json();
  EXPECT_EQ(j["count"], 0u);
  for (const char* figure : {"min", "mean", "p50", "p99", "p999", "max"})
    for (const char* unit : {"_cycles", "_ns"}) EXPECT_TRUE(j[std::string(figure) + unit].is_null()) << figure << unit;
}

TEST(LatencyHistogram, TailOfASkewedDistribution) {
  LatencyHistogram h(kNs);
  for (int i = 0; i < 9990; ++i) h.record(8);
  for (int i = 0; i < 10; ++i) h.record(5000);
  EXPECT_EQ(h.quantile(0.99), 8u);
  EXPECT_EQ(h.quantile(0.999), 8u);
  EXPECT_EQ(h.quantile(0.9995), 5000u);
}

TEST(LatencyHistogram, BinsAreTheNonEmptyValuesWithTheirCounts) {
  LatencyHistogram h(kNs);
  for (Cycle c : {7, 3, 7, 400, 3, 7}) h.record(c);  // 400: far from the others, no bins between
  const std::vector<std::pair<Cycle, std::uint64_t>> want{{3, 2}, {7, 3}, {400, 1}};
  EXPECT_EQ(h.bins(), want);
  h.reset();
  EXPECT_TRUE(h.bins().empty());
}

// Against the definition on the sorted samples: the q-quantile is the ceil(q * n)-th smallest
// (the first for q = 0), over narrow and wide ranges, with warm-up resets between.
TEST(LatencyHistogram, QuantilesEqualTheSortedSamplesOnRandomData) {
  Rng rng(3, "histogram_test");
  LatencyHistogram h(kNs);
  for (int trial = 0; trial < 60; ++trial) {
    h.reset();
    const std::uint64_t n = rng.between(1, 3000), range = std::uint64_t{1} << rng.below(28);
    std::vector<Cycle> samples;
    std::map<Cycle, std::uint64_t> counts;
    for (std::uint64_t i = 0; i < n; ++i) {
      // A body near the floor and, now and then, a tail far out.
      const Cycle c = rng.chance(0.9) ? 8 + rng.below(std::min<std::uint64_t>(range, 50)) : rng.below(range);
      h.record(c);
      samples.push_back(c);
      ++counts[c];
    }
    std::sort(samples.begin(), samples.end());
    for (double q : {0.0, 0.5, 0.9, 0.99, 0.999, 1.0, rng.uniform(), rng.uniform()}) {
      const auto rank = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(n))));
      ASSERT_EQ(h.quantile(q), samples[rank - 1]) << "trial " << trial << " q " << q;
    }
    EXPECT_EQ(h.bins(), (std::vector<std::pair<Cycle, std::uint64_t>>(counts.begin(), counts.end())));
    EXPECT_EQ(h.min(), samples.front());
    EXPECT_EQ(h.max(), samples.back());
  }
}

TEST(Stats, RegistryResetsAtTheEndOfWarmup) {
  Stats s;
  Counter& c = s.counter("top.a.packets", "packets", "d");
  LatencyHistogram& h = s.histogram("top.a.latency", kNs, "d");
  c.add(5);
  h.record(3);
  s.reset();
  EXPECT_EQ(c.value(), 0u);
  EXPECT_EQ(h.count(), 0u);
  c.add(2);
  EXPECT_EQ(s.to_json()["top.a.packets"]["value"], 2u);
  EXPECT_THROW(s.counter("top.a.packets", "", ""), std::logic_error);
}

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

TEST(Units, ParsesAndFormatsTimes) {
  EXPECT_EQ(parse_time("10us"), 10 * kUs);
  EXPECT_EQ(parse_time("1.5ns"), 1500 * kPs);
  EXPECT_EQ(parse_time("0"), 0u);
  EXPECT_THROW(parse_time("10 parsecs"), std::invalid_argument);
  EXPECT_THROW(parse_time("-1us"), std::invalid_argument);
  EXPECT_THROW(parse_time("infus"), std::invalid_argument);  // stod reads "inf"
  EXPECT_THROW(parse_time("1e308us"), std::invalid_argument);
  EXPECT_THROW(parse_time("9224s"), std::invalid_argument);  // 2^63 fs is 9223.4 s
  EXPECT_EQ(parse_time("9223s"), 9223 * 1000 * kMs);
  EXPECT_EQ(period_from_mhz(1000), kNs);
  EXPECT_EQ(period_from_mhz(1328.125), 752941u);  // 752.941 ps
  EXPECT_EQ(beats(65, 32), 3u);
  EXPECT_DOUBLE_EQ(gbps(32, kNs), 256.0);
}

TEST(PacketPool, RecyclesPacketsWithoutNewAllocations) {
  PacketPool pool;
  std::vector<Packet*> held;
  for (int round = 0; round < 100; ++round) {
    for (int i = 0; i < 10; ++i) held.push_back(pool.acquire());
    for (Packet* p : held) pool.release(p);
    held.clear();
  }
  EXPECT_EQ(pool.allocated(), 10u);
  EXPECT_EQ(pool.in_use(), 0u);
}

}  // namespace
}  // namespace xy
