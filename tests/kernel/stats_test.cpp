// Stats (kernel/stats.hpp): exact latency histograms, the registry, its JSON and its warm-up reset.
#include "kernel/stats.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

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
    // Up to 20,000 samples, half of them in the tail: the sparse values are folded several times.
    const std::uint64_t n = rng.between(1, 20000), range = std::uint64_t{1} << rng.below(28);
    std::vector<Cycle> samples;
    std::map<Cycle, std::uint64_t> counts;
    for (std::uint64_t i = 0; i < n; ++i) {
      // A body near the floor and, now and then, a tail far out.
      const Cycle c = rng.chance(0.5) ? 8 + rng.below(std::min<std::uint64_t>(range, 50)) : rng.below(range);
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

}  // namespace
}  // namespace xy
