#include "hw/switch/islip.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <iomanip>
#include <iostream>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "kernel/rng.hpp"

namespace xy::sw {
namespace {

// Each input to at most one output, each output to at most one input, only requested pairs,
// and `matched` equal to the number of pairs.
::testing::AssertionResult valid(const RequestMatrix& r, const std::vector<int>& m, int matched) {
  if (m.size() != static_cast<std::size_t>(r.inputs()))
    return ::testing::AssertionFailure() << "match has " << m.size() << " entries for " << r.inputs() << " inputs";
  std::vector<int> input_of(r.outputs(), -1);
  int pairs = 0;
  for (int i = 0; i < r.inputs(); ++i) {
    const int o = m[i];
    if (o == -1) continue;
    if (o < 0 || o >= r.outputs()) return ::testing::AssertionFailure() << "input " << i << " -> output " << o;
    if (!r.get(i, o)) return ::testing::AssertionFailure() << "input " << i << " -> output " << o << " not requested";
    if (input_of[o] != -1)
      return ::testing::AssertionFailure() << "output " << o << " matched to inputs " << input_of[o] << " and " << i;
    input_of[o] = i;
    ++pairs;
  }
  if (pairs != matched) return ::testing::AssertionFailure() << pairs << " pairs, match() returned " << matched;
  return ::testing::AssertionSuccess();
}

// No unmatched input requests an unmatched output.
::testing::AssertionResult maximal(const RequestMatrix& r, const std::vector<int>& m) {
  std::vector<bool> out_taken(r.outputs(), false);
  for (int o : m) {
    if (o >= 0) out_taken[o] = true;
  }
  for (int i = 0; i < r.inputs(); ++i) {
    if (m[i] >= 0) continue;
    for (int o = 0; o < r.outputs(); ++o) {
      if (r.get(i, o) && !out_taken[o])
        return ::testing::AssertionFailure() << "unmatched input " << i << " requests unmatched output " << o;
    }
  }
  return ::testing::AssertionSuccess();
}

void fill_random(RequestMatrix& r, Rng& rng, double density) {
  r.clear();
  for (int i = 0; i < r.inputs(); ++i) {
    for (int o = 0; o < r.outputs(); ++o) {
      if (rng.chance(density)) r.set(i, o);
    }
  }
}

void fill_all(RequestMatrix& r) {
  r.clear();
  for (int i = 0; i < r.inputs(); ++i) {
    for (int o = 0; o < r.outputs(); ++o) r.set(i, o);
  }
}

// The arbiter's pairs as one output per input (-1: unmatched), the form the checks here read;
// and the pairs must come in increasing input order.
int match(Islip& arbiter, const RequestMatrix& r, std::vector<int>& m) {
  std::vector<Islip::Pair> pairs;
  const int matched = arbiter.match(r, pairs);
  m.assign(static_cast<std::size_t>(r.inputs()), -1);
  for (std::size_t k = 0; k < pairs.size(); ++k) {
    EXPECT_TRUE(k == 0 || pairs[k - 1].input < pairs[k].input) << "pair " << k << " out of input order";
    if (pairs[k].input >= 0 && pairs[k].input < r.inputs()) m[static_cast<std::size_t>(pairs[k].input)] = pairs[k].output;
  }
  return matched;
}

// iSLIP and RRM as the paper states them, port by port and pointer by pointer, no bitmaps: the
// reference the word-parallel arbiter (which visits only requested outputs) is held to.
struct PlainIslip {
  PlainIslip(int ins, int outs, int iters, ArbiterKind k)
      : inputs(ins), outputs(outs), iterations(k == ArbiterKind::kRoundRobin ? 1 : iters), kind(k), grant(outs, 0),
        accept(ins, 0) {}

  // One output per input, -1 if unmatched.
  std::vector<int> match(const RequestMatrix& r) {
    std::vector<int> output_of(inputs, -1), input_of(outputs, -1);
    for (int iteration = 0; iteration < iterations; ++iteration) {
      std::vector<int> granted(outputs, -1);  // the input each unmatched output grants
      for (int o = 0; o < outputs; ++o) {
        if (input_of[o] >= 0) continue;
        for (int k = 0; k < inputs; ++k) {
          const int i = (grant[o] + k) % inputs;
          if (output_of[i] >= 0 || !r.get(i, o)) continue;
          granted[o] = i;
          if (kind == ArbiterKind::kRoundRobin) grant[o] = (i + 1) % inputs;
          break;
        }
      }
      bool matched = false;
      for (int i = 0; i < inputs; ++i) {
        if (output_of[i] >= 0) continue;
        for (int k = 0; k < outputs; ++k) {
          const int o = (accept[i] + k) % outputs;
          if (granted[o] != i) continue;
          output_of[i] = o;
          input_of[o] = i;
          matched = true;
          if (iteration == 0) {
            accept[i] = (o + 1) % outputs;
            if (kind == ArbiterKind::kIslip) grant[o] = (i + 1) % inputs;
          }
          break;
        }
      }
      if (!matched) break;
    }
    return output_of;
  }

  int inputs, outputs, iterations;
  ArbiterKind kind;
  std::vector<int> grant, accept;  // g[o] and a[i]
};

std::string kind_name(ArbiterKind k) { return k == ArbiterKind::kIslip ? "iSLIP" : "RRM"; }

TEST(Islip, RequestMatrixSetGetClearAcrossWords) {
  RequestMatrix r(3, 130);  // three words per row, the last one partial
  EXPECT_EQ(r.inputs(), 3);
  EXPECT_EQ(r.outputs(), 130);
  EXPECT_EQ(r.words_per_row(), 3);
  r.set(0, 0);
  r.set(1, 63);
  r.set(1, 64);
  r.set(2, 129);
  for (int i = 0; i < 3; ++i) {
    for (int o = 0; o < 130; ++o) {
      const bool expected = (i == 0 && o == 0) || (i == 1 && (o == 63 || o == 64)) || (i == 2 && o == 129);
      EXPECT_EQ(r.get(i, o), expected) << i << " " << o;
    }
  }
  EXPECT_EQ(r.row(1)[0], std::uint64_t{1} << 63);
  EXPECT_EQ(r.row(1)[1], 1u);
  EXPECT_EQ(r.row(2)[2], 2u);
  EXPECT_EQ(r.words_per_column(), 1);
  EXPECT_EQ(r.column(0)[0], 1u);
  EXPECT_EQ(r.column(63)[0], 2u);
  EXPECT_EQ(r.column(64)[0], 2u);
  EXPECT_EQ(r.column(129)[0], 4u);
  EXPECT_EQ(r.column(1)[0], 0u);
  r.reset(1, 63);
  EXPECT_FALSE(r.get(1, 63));
  EXPECT_EQ(r.column(63)[0], 0u);
  EXPECT_TRUE(r.get(1, 64));
  r.clear();
  for (int i = 0; i < 3; ++i) {
    for (int w = 0; w < 3; ++w) EXPECT_EQ(r.row(i)[w], 0u);
  }
  for (int o = 0; o < 130; ++o) EXPECT_EQ(r.column(o)[0], 0u);
  EXPECT_THROW(RequestMatrix(0, 4), std::invalid_argument);
  EXPECT_THROW(Islip(4, 4, 0), std::invalid_argument);
  Islip arbiter(4, 4, 1);
  std::vector<Islip::Pair> pairs;
  EXPECT_THROW(arbiter.match(RequestMatrix(4, 5), pairs), std::invalid_argument);
  EXPECT_EQ(Islip(4, 4, 3, ArbiterKind::kRoundRobin).iterations(), 1);  // RRM is one iteration
}

// The outputs the matrix lists as requested are those with a request in their column, through
// any sequence of set, reset and clear.
TEST(Islip, RequestMatrixKnowsWhichOutputsAreRequested) {
  Rng rng(16, "islip.requested");
  for (const auto& [ins, outs] : std::vector<std::pair<int, int>>{{1, 1}, {3, 130}, {64, 64}, {130, 3}, {128, 128}}) {
    RequestMatrix r(ins, outs);
    for (int step = 0; step < 20000; ++step) {
      const int i = static_cast<int>(rng.below(ins)), o = static_cast<int>(rng.below(outs));
      if (step % 5000 == 4999) r.clear();
      else if (rng.chance(0.5)) r.set(i, o);
      else r.reset(i, o);
      if (step % 97 != 0 && step % 5000 != 4999) continue;
      bool any = false;
      for (int out = 0; out < outs; ++out) {
        bool column = false;
        for (int in = 0; in < ins; ++in) column = column || r.get(in, out);
        any = any || column;
        ASSERT_EQ(((r.requested_outputs()[out / 64] >> (out % 64)) & 1) != 0, column)
            << ins << "x" << outs << " output " << out << " step " << step;
      }
      ASSERT_EQ(r.empty(), !any);
    }
  }
}

// The arbiter against PlainIslip on random request matrices that change a little every cycle
// (like VOQs: the same arbiters, pointers carried from cycle to cycle) and sometimes entirely:
// the same pairs and the same pointers, every cycle.
TEST(Islip, MatchesThePlainStatementOfTheAlgorithm) {
  Rng rng(17, "islip.plain");
  const std::vector<std::pair<int, int>> sizes = {{1, 1},   {2, 2},   {3, 3},   {16, 16},  {64, 64},
                                                  {65, 65}, {128, 128}, {5, 70}, {70, 5}, {130, 129}};
  for (const auto& [ins, outs] : sizes) {
    for (ArbiterKind kind : {ArbiterKind::kIslip, ArbiterKind::kRoundRobin}) {
      for (int iterations : {1, 2, 4}) {
        Islip arbiter(ins, outs, iterations, kind);
        PlainIslip plain(ins, outs, iterations, kind);
        if (rng.chance(0.5)) {  // from random pointers as well as from reset
          for (int o = 0; o < outs; ++o) plain.grant[o] = arbiter.grant_pointers()[o] = static_cast<int>(rng.below(ins));
          for (int i = 0; i < ins; ++i) plain.accept[i] = arbiter.accept_pointers()[i] = static_cast<int>(rng.below(outs));
        }
        RequestMatrix r(ins, outs);
        std::vector<int> m;
        const double density = std::vector<double>{0.02, 0.1, 0.5, 0.9}[rng.below(4)];
        for (int c = 0; c < 200; ++c) {
          if (c % 50 == 0) {
            fill_random(r, rng, density);
          } else {  // a few VOQs change, as heads come and go
            for (int k = 0; k < 1 + (ins + outs) / 8; ++k) {
              const int i = static_cast<int>(rng.below(ins)), o = static_cast<int>(rng.below(outs));
              if (rng.chance(density)) r.set(i, o);
              else r.reset(i, o);
            }
          }
          const int matched = match(arbiter, r, m);
          const std::vector<int> expected = plain.match(r);
          ASSERT_EQ(m, expected) << ins << "x" << outs << " " << kind_name(kind) << " i=" << iterations << " cycle " << c;
          ASSERT_EQ(matched, static_cast<int>(std::count_if(m.begin(), m.end(), [](int o) { return o >= 0; })));
          ASSERT_EQ(arbiter.grant_pointers(), plain.grant) << "cycle " << c;
          ASSERT_EQ(arbiter.accept_pointers(), plain.accept) << "cycle " << c;
        }
      }
    }
  }
}

TEST(Islip, MatchIsAlwaysValid) {
  Rng rng(11, "islip.valid");
  const std::vector<std::pair<int, int>> sizes = {{1, 1},   {3, 3},     {16, 16}, {64, 64},
                                                  {65, 65}, {256, 256}, {5, 70},  {70, 5}};
  for (const auto& [ins, outs] : sizes) {
    for (ArbiterKind kind : {ArbiterKind::kIslip, ArbiterKind::kRoundRobin}) {
      for (int iterations : {1, 2, 4}) {
        Islip arbiter(ins, outs, iterations, kind);
        RequestMatrix r(ins, outs);
        std::vector<int> m;
        const int cycles = ins * outs > 10000 ? 50 : 300;
        for (int c = 0; c < cycles; ++c) {
          fill_random(r, rng, c % 3 == 0 ? 0.05 : c % 3 == 1 ? 0.5 : 1.0);
          const int matched = match(arbiter, r, m);
          ASSERT_TRUE(valid(r, m, matched)) << ins << "x" << outs << " " << kind_name(kind) << " i=" << iterations
                                             << " cycle " << c;
          for (int g : arbiter.grant_pointers()) ASSERT_TRUE(g >= 0 && g < ins);
          for (int a : arbiter.accept_pointers()) ASSERT_TRUE(a >= 0 && a < outs);
        }
      }
    }
  }
}

TEST(Islip, AsManyIterationsAsPortsGiveAMaximalMatch) {
  Rng rng(12, "islip.maximal");
  int one_iteration_not_maximal = 0;
  for (const auto& [ins, outs] : std::vector<std::pair<int, int>>{{8, 8}, {16, 16}, {64, 64}, {12, 70}, {70, 12}}) {
    const int ports = std::min(ins, outs);  // each productive iteration adds a match
    Islip full(ins, outs, ports);
    Islip one(ins, outs, 1);
    RequestMatrix r(ins, outs);
    std::vector<int> m;
    for (int c = 0; c < 500; ++c) {
      fill_random(r, rng, c % 2 == 0 ? 0.1 : 0.5);
      const int matched = match(full, r, m);
      ASSERT_TRUE(valid(r, m, matched));
      ASSERT_TRUE(maximal(r, m)) << ins << "x" << outs << " cycle " << c;
      match(one, r, m);
      if (!maximal(r, m)) ++one_iteration_not_maximal;
    }
  }
  // The check has teeth: a single iteration often leaves a matchable pair unmatched.
  EXPECT_GT(one_iteration_not_maximal, 100);
}

// Under full load from reset (every pointer 0), one-iteration iSLIP matches only input 0 to
// output 0 in cycle 0. Each cycle the outputs whose grants were accepted slip one input further,
// so cycle c matches c + 1 pairs; from cycle N - 1 every output grants a different input, every
// grant is accepted and every pointer moves on by one: a perfect match every cycle from then on.
TEST(Islip, OneIterationReachesFullThroughputUnderFullLoad) {
  for (int n : {2, 3, 16, 64, 256}) {
    Islip arbiter(n, n, 1);
    RequestMatrix r(n, n);
    fill_all(r);
    std::vector<int> m;
    std::vector<int> matched_per_cycle;
    for (int c = 0; c < 4 * n + 100; ++c) matched_per_cycle.push_back(match(arbiter, r, m));
    const auto first_full =
        std::find(matched_per_cycle.begin(), matched_per_cycle.end(), n) - matched_per_cycle.begin();
    std::cout << "  iSLIP 1 iteration, " << n << "x" << n << " full load from reset: first perfect match in cycle "
              << first_full << " (matches in cycles 0..3:";
    for (int c = 0; c < std::min(4, n); ++c) std::cout << " " << matched_per_cycle[c];
    std::cout << ")\n";
    for (int c = 0; c < static_cast<int>(matched_per_cycle.size()); ++c)
      ASSERT_EQ(matched_per_cycle[c], std::min(c + 1, n)) << n << "x" << n << " cycle " << c;
    // Desynchronised: every output's grant pointer differs.
    const std::set<int> distinct(arbiter.grant_pointers().begin(), arbiter.grant_pointers().end());
    EXPECT_EQ(static_cast<int>(distinct.size()), n);
  }
}

// RRM moves an output's grant pointer past every input it grants, accepted or not. Under full
// load every output grants the input at its pointer and then moves on by one, so the pointers
// advance in lock step forever: the number of matches per cycle is the number of distinct grant
// pointers there were at the start. From reset that is 1 (throughput 1/N); from random pointers
// it is about 1 - (1 - 1/N)^N on average: 64 % for N = 16, tending to 1 - 1/e = 63 %. iSLIP from
// the same random pointers reaches 100 %.
TEST(Islip, RoundRobinMatchingStaysSynchronisedUnderFullLoad) {
  constexpr int n = 16;
  constexpr int cycles = 10000;
  RequestMatrix r(n, n);
  fill_all(r);
  std::vector<int> m;
  Rng rng(13, "islip.rrm");
  for (bool random_start : {false, true}) {
    std::vector<int> start(n, 0);
    if (random_start) {
      for (int& g : start) g = static_cast<int>(rng.below(n));
    }
    const int distinct = static_cast<int>(std::set<int>(start.begin(), start.end()).size());
    double fraction[2];
    for (ArbiterKind kind : {ArbiterKind::kRoundRobin, ArbiterKind::kIslip}) {
      Islip arbiter(n, n, 1, kind);
      arbiter.grant_pointers() = start;
      long long pairs = 0;
      for (int c = 0; c < cycles; ++c) {
        const int matched = match(arbiter, r, m);
        if (c >= n) pairs += matched;  // after a warm-up of n cycles
        if (kind == ArbiterKind::kRoundRobin) {
          ASSERT_EQ(matched, distinct) << "cycle " << c;
        }
      }
      fraction[kind == ArbiterKind::kIslip] = static_cast<double>(pairs) / (static_cast<double>(cycles - n) * n);
    }
    std::cout << "  16x16 full load, grant pointers from " << (random_start ? "random values" : "reset") << " ("
              << distinct << " distinct): RRM " << std::fixed << std::setprecision(4) << fraction[0]
              << ", iSLIP(1) " << fraction[1] << std::defaultfloat << "\n";
    EXPECT_LT(fraction[0], 0.9);
    EXPECT_DOUBLE_EQ(fraction[0], static_cast<double>(distinct) / n);
    EXPECT_DOUBLE_EQ(fraction[1], 1.0);
  }
}

// Under full load every pair requests continuously. Once the pointers have desynchronised (by
// cycle N, as above) each pair is served exactly once in every N cycles: waits are exactly N.
// During the warm-up from reset the general bound below (outputs * requesters = N^2) holds.
TEST(Islip, FullLoadServesEveryPairOnceEveryNCycles) {
  constexpr int n = 16;
  constexpr int cycles = 2000;
  RequestMatrix r(n, n);
  fill_all(r);
  for (int iterations : {1, 2, 4}) {
    Islip arbiter(n, n, iterations);
    std::vector<int> m;
    std::vector<int> last(n * n, -1);  // cycle of the last service; -1 = reset
    int worst_warmup = 0, shortest_after = cycles, longest_after = 0;
    for (int c = 0; c < cycles; ++c) {
      match(arbiter, r, m);
      for (int i = 0; i < n; ++i) {
        if (m[i] < 0) continue;
        const int wait = c - last[i * n + m[i]];
        if (last[i * n + m[i]] >= n) {
          shortest_after = std::min(shortest_after, wait);
          longest_after = std::max(longest_after, wait);
        } else {
          worst_warmup = std::max(worst_warmup, wait);
        }
        last[i * n + m[i]] = c;
      }
    }
    for (int p = 0; p < n * n; ++p) longest_after = std::max(longest_after, cycles - last[p]);
    std::cout << "  16x16 full load, iSLIP(" << iterations << "): longest wait of a pair " << worst_warmup
              << " cycles from reset, then " << shortest_after << ".." << longest_after << "\n";
    EXPECT_EQ(shortest_after, n) << iterations << " iterations";
    EXPECT_EQ(longest_after, n) << iterations << " iterations";
    EXPECT_LE(worst_warmup, n * n) << iterations << " iterations";
  }
}

// The iSLIP guarantee with persistent requests: while the r inputs requesting an output keep
// requesting it, each is served within outputs * r cycles, whatever the other outputs' requests
// do. Half the outputs here have fixed random requesters; the other half see fresh random
// requests every cycle.
TEST(Islip, PersistentRequestsAreServedWithinTheBound) {
  constexpr int n = 16;
  constexpr int cycles = 20000;
  Rng rng(14, "islip.fair");
  for (int iterations : {1, 2, 4}) {
    std::vector<std::vector<bool>> persistent(n, std::vector<bool>(n / 2));
    std::vector<int> requesters(n / 2, 0);
    for (int i = 0; i < n; ++i) {
      for (int o = 0; o < n / 2; ++o) {
        persistent[i][o] = rng.chance(0.5) || i == o;  // every persistent output has a requester
        requesters[o] += persistent[i][o];
      }
    }
    Islip arbiter(n, n, iterations);
    for (int& g : arbiter.grant_pointers()) g = static_cast<int>(rng.below(n));
    for (int& a : arbiter.accept_pointers()) a = static_cast<int>(rng.below(n));
    RequestMatrix r(n, n);
    std::vector<int> m;
    std::vector<int> last(n * n, -1);
    std::vector<int> worst(n / 2, 0);
    for (int c = 0; c < cycles; ++c) {
      r.clear();
      for (int i = 0; i < n; ++i) {
        for (int o = 0; o < n; ++o) {
          if (o < n / 2 ? persistent[i][o] : rng.chance(0.5)) r.set(i, o);
        }
      }
      ASSERT_TRUE(valid(r, m, match(arbiter, r, m)));
      for (int i = 0; i < n; ++i) {
        const int o = m[i];
        if (o < 0 || o >= n / 2) continue;
        worst[o] = std::max(worst[o], c - last[i * n + o]);
        last[i * n + o] = c;
      }
    }
    int worst_ratio_num = 0, worst_ratio_den = 1;
    for (int o = 0; o < n / 2; ++o) {
      for (int i = 0; i < n; ++i) {
        if (persistent[i][o]) worst[o] = std::max(worst[o], cycles - last[i * n + o]);
      }
      EXPECT_LE(worst[o], n * requesters[o]) << "output " << o << ", " << iterations << " iterations";
      if (worst[o] * worst_ratio_den > worst_ratio_num * n * requesters[o]) {
        worst_ratio_num = worst[o];
        worst_ratio_den = n * requesters[o];
      }
    }
    std::cout << "  16x16 persistent requests among random ones, iSLIP(" << iterations
              << "): closest to the bound, a wait of " << worst_ratio_num << " against " << worst_ratio_den
              << " cycles\n";
  }
}

// Three inputs, three outputs, two iterations, every pointer 0 at reset. Requests (the same
// every cycle): input 0 -> {0, 1, 2}, input 1 -> {0, 1}, input 2 -> {1}. Worked by hand from the
// paper's three steps.
TEST(Islip, ThreeByThreeByHand) {
  RequestMatrix r(3, 3);
  for (int o : {0, 1, 2}) r.set(0, o);
  r.set(1, 0);
  r.set(1, 1);
  r.set(2, 1);
  Islip arbiter(3, 3, 2);
  std::vector<int> m;

  // Cycle 1, iteration 1. Grant: output 0 (requests from 0, 1; g=0) grants 0; output 1 (0, 1, 2;
  // g=0) grants 0; output 2 (0; g=0) grants 0. Accept: input 0 holds grants from 0, 1, 2 and
  // a=0, so accepts 0. Pointers: g0 = 1, a0 = 1; outputs 1 and 2 were refused and keep g = 0.
  // Iteration 2, among inputs {1, 2} and outputs {1, 2}: output 1 (requests 1, 2; g=0) grants
  // 1, which accepts; output 2 has no request. No pointer moves in iteration 2.
  EXPECT_EQ(match(arbiter, r, m), 2);
  EXPECT_EQ(m, (std::vector<int>{0, 1, -1}));
  EXPECT_EQ(arbiter.grant_pointers(), (std::vector<int>{1, 0, 0}));
  EXPECT_EQ(arbiter.accept_pointers(), (std::vector<int>{1, 0, 0}));

  // Cycle 2, iteration 1. Grant: output 0 (0, 1; g=1) grants 1; output 1 (0, 1, 2; g=0) grants
  // 0; output 2 (0; g=0) grants 0. Accept: input 0 holds 1, 2 and a=1: accepts 1; input 1 holds
  // 0, a=0: accepts 0. Pointers: g1 = 1, a0 = 2, g0 = 2, a1 = 1; g2 stays 0. Iteration 2:
  // input 2 and output 2 are left, and input 2 does not request output 2.
  EXPECT_EQ(match(arbiter, r, m), 2);
  EXPECT_EQ(m, (std::vector<int>{1, 0, -1}));
  EXPECT_EQ(arbiter.grant_pointers(), (std::vector<int>{2, 1, 0}));
  EXPECT_EQ(arbiter.accept_pointers(), (std::vector<int>{2, 1, 0}));

  // Cycle 3, iteration 1. Grant: output 0 (0, 1; g=2) wraps to 0; output 1 (0, 1, 2; g=1)
  // grants 1; output 2 (0; g=0) grants 0. Accept: input 0 holds 0, 2 and a=2: accepts 2; input
  // 1 holds 1, a=1: accepts 1. Pointers: g2 = 1, a0 = 0 (wrapped), g1 = 2, a1 = 2; g0 stays 2.
  // Iteration 2: input 2 and output 0 are left; no request.
  EXPECT_EQ(match(arbiter, r, m), 2);
  EXPECT_EQ(m, (std::vector<int>{2, 1, -1}));
  EXPECT_EQ(arbiter.grant_pointers(), (std::vector<int>{2, 2, 1}));
  EXPECT_EQ(arbiter.accept_pointers(), (std::vector<int>{0, 2, 0}));

  // Cycle 4, iteration 1. Grant: output 0 (0, 1; g=2) wraps to 0; output 1 (0, 1, 2; g=2)
  // grants 2; output 2 (0; g=1) wraps to 0. Accept: input 0 holds 0, 2 and a=0: accepts 0;
  // input 2 holds 1: accepts 1. Pointers: g0 = 1, a0 = 1, g1 = 0 (wrapped), a2 = 2; g2 stays 1
  // and a1 stays 2 (input 1 had no grant). Input 2 is served for the first time. Iteration 2:
  // input 1 and output 2 are left; no request.
  EXPECT_EQ(match(arbiter, r, m), 2);
  EXPECT_EQ(m, (std::vector<int>{0, -1, 1}));
  EXPECT_EQ(arbiter.grant_pointers(), (std::vector<int>{1, 0, 1}));
  EXPECT_EQ(arbiter.accept_pointers(), (std::vector<int>{1, 2, 2}));

  // RRM, cycle 1 with the same requests: the same grants and the same single match (0, 0), but
  // every output moves its pointer past the input it granted, refused or not.
  Islip rrm(3, 3, 1, ArbiterKind::kRoundRobin);
  EXPECT_EQ(match(rrm, r, m), 1);
  EXPECT_EQ(m, (std::vector<int>{0, -1, -1}));
  EXPECT_EQ(rrm.grant_pointers(), (std::vector<int>{1, 1, 1}));
  EXPECT_EQ(rrm.accept_pointers(), (std::vector<int>{1, 0, 0}));
}

// Not asserted: throughput under uniform Bernoulli arrivals for the docs. Every cycle each input
// receives a cell with probability `load`, for an output drawn uniformly; VOQs (one per input and
// output, unlimited) are counters; each matched pair moves one cell. Throughput is cells out per
// output per cycle; the mean wait is by Little's law, backlog / arrival rate. RRM cannot carry
// this load: its VOQs grow without bound until every one is non-empty, which is full load, where
// it matches exactly as many pairs per cycle as it has distinct grant pointers (printed).
TEST(Islip, PrintsThroughputUnderBernoulliArrivals) {
  constexpr double load = 0.8;
  constexpr int warmup = 10000, measured = 100000;
  std::cout << "  uniform Bernoulli(" << load << ") arrivals, unlimited VOQs, " << measured << " cycles after "
            << warmup << " of warm-up\n"
            << "  ports  arbiter     throughput  mean backlog/port  mean wait (cycles)\n";
  for (int n : {16, 64}) {
    struct Row {
      ArbiterKind kind;
      int iterations;
    };
    for (const Row& row : {Row{ArbiterKind::kIslip, 1}, Row{ArbiterKind::kIslip, 2}, Row{ArbiterKind::kIslip, 4},
                           Row{ArbiterKind::kRoundRobin, 1}}) {
      Rng rng(15, "islip.bernoulli." + std::to_string(n));  // same arrivals for every arbiter
      Islip arbiter(n, n, row.iterations, row.kind);
      RequestMatrix r(n, n);  // kept equal to "VOQ non-empty"
      std::vector<long long> voq(static_cast<std::size_t>(n) * n, 0);
      std::vector<int> m;
      long long departed = 0, arrived = 0, backlog_sum = 0, backlog = 0;
      for (int c = 0; c < warmup + measured; ++c) {
        const bool measuring = c >= warmup;
        for (int i = 0; i < n; ++i) {
          if (!rng.chance(load)) continue;
          const int o = static_cast<int>(rng.below(n));
          if (voq[static_cast<std::size_t>(i) * n + o]++ == 0) r.set(i, o);
          ++backlog;
          arrived += measuring;
        }
        ASSERT_TRUE(valid(r, m, match(arbiter, r, m)));  // so only non-empty VOQs are served
        for (int i = 0; i < n; ++i) {
          if (m[i] < 0) continue;
          if (--voq[static_cast<std::size_t>(i) * n + m[i]] == 0) r.reset(i, m[i]);
          --backlog;
          departed += measuring;
        }
        if (measuring) backlog_sum += backlog;
      }
      const double throughput = static_cast<double>(departed) / (static_cast<double>(measured) * n);
      const double mean_backlog = static_cast<double>(backlog_sum) / measured;
      const double wait = mean_backlog / (static_cast<double>(arrived) / measured);
      std::cout << "  " << std::setw(5) << n << "  " << std::left << std::setw(10)
                << (kind_name(row.kind) + "(" + std::to_string(row.iterations) + ")") << std::right << std::fixed
                << std::setprecision(4) << std::setw(12) << throughput << std::setprecision(2) << std::setw(19)
                << mean_backlog / n << std::setw(20) << wait << std::defaultfloat;
      if (row.kind == ArbiterKind::kRoundRobin) {
        const std::set<int> distinct(arbiter.grant_pointers().begin(), arbiter.grant_pointers().end());
        std::cout << "  (" << distinct.size() << " distinct grant pointers at the end)";
      }
      std::cout << "\n";
    }
  }
}

}  // namespace
}  // namespace xy::sw
