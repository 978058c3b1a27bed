// Co-simulation: the reduce ALU lane groups against sw::ReduceTable (32-bit accumulator, arrival
// order) — int32 (rtl/switch/xy_reduce_int32.v, wrapping) and fp32 and bf16
// (rtl/switch/xy_reduce_float.v, round to nearest even). Groups of 2–8 members contribute one
// beat of 16 elements each, with idle cycles carrying random data between; every reduced vector
// is compared, bit for bit (NaNs by class: which NaN an addition returns is the implementation's).
#include <verilated.h>  // before SystemC's headers (see delay_line_test.cpp)

#include "Vxy_fp32_add.h"
#include "Vxy_reduce_bf16.h"
#include "Vxy_reduce_fp32.h"
#include "Vxy_reduce_fp32_truncating.h"
#include "Vxy_reduce_int32.h"
#include "Vxy_reduce_int32_narrow.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hw/switch/reduce.hpp"
#include "rtl/twin.hpp"
#include "kernel/rng.hpp"

namespace xy {
namespace {

constexpr int kLanes = 16;

struct Result {
  std::uint64_t cycles = 0, chunks = 0, mismatches = 0;
  std::map<std::string, std::uint64_t> seen;  // lanes whose sum was of an interesting kind
};

std::uint32_t load32(const std::uint8_t* p) {
  std::uint32_t v;
  std::memcpy(&v, p, 4);  // little-endian host, as the elements
  return v;
}

// An fp32 element that makes sums interesting: most on one scale (they round and cancel), some
// nearly the negative of the lane's first member, subnormal, huge (sums overflow), or any bits.
std::uint32_t random_fp32(Rng& rng, std::uint32_t first) {
  const std::uint32_t sign = rng.chance(0.5) ? 0x80000000u : 0;
  const auto man = static_cast<std::uint32_t>(rng.below(1u << 23));
  const auto exp = [&](int lo, int hi) { return static_cast<std::uint32_t>(rng.between(lo, hi)) << 23; };
  const double k = rng.uniform();
  if (k < 0.45) return sign | exp(124, 130) | man;
  if (k < 0.60) return first ^ 0x80000000u ^ static_cast<std::uint32_t>(rng.below(4) << 16);
  if (k < 0.75) return sign | exp(0, 3) | man;
  if (k < 0.85) return sign | exp(250, 254) | man;
  return static_cast<std::uint32_t>(rng.next());
}

// A float element's bits in fp32's layout (bf16 is fp32's upper half).
std::uint32_t fp32_layout(sw::ElemType type, const std::uint8_t* p) {
  return type == sw::ElemType::kFp32 ? load32(p) : static_cast<std::uint32_t>(p[0] | p[1] << 8) << 16;
}
bool is_nan(std::uint32_t bits) { return (bits >> 23 & 0xFF) == 0xFF && (bits & 0x7FFFFF) != 0; }

// The kind of one lane's result, counted so that a run that agrees but misses them fails.
void classify(sw::ElemType type, const std::uint8_t* lane, std::int64_t exact_int, Result& r) {
  if (type == sw::ElemType::kInt32) {
    if (exact_int != static_cast<std::int32_t>(load32(lane))) ++r.seen["wrapped"];
    return;
  }
  const std::uint32_t bits = fp32_layout(type, lane);
  const std::uint32_t exp = bits >> 23 & 0xFF, man = bits & 0x7FFFFF;
  if (exp == 0xFF) ++r.seen[man ? "nan" : "infinity"];
  else if (exp == 0) ++r.seen[man ? "subnormal" : "zero"];
}

bool same_lane(sw::ElemType type, const std::uint8_t* model, const std::uint8_t* rtl) {
  if (std::memcmp(model, rtl, sw::elem_bytes(type)) == 0) return true;
  return type != sw::ElemType::kInt32 && is_nan(fp32_layout(type, model)) && is_nan(fp32_layout(type, rtl));
}

template <class Rtl>
Result run(sw::ElemType type, std::uint64_t min_cycles, std::uint64_t seed) {
  sw::ReduceConfig config;
  config.type = type;
  config.vector_bytes = sw::elem_bytes(type) * kLanes;
  config.lanes = kLanes;
  sw::ReduceTable table(config);
  for (std::uint32_t g = 2; g <= 8; ++g) {
    std::vector<std::uint32_t> members(g);
    std::iota(members.begin(), members.end(), 0);
    table.add_group(g, members);
  }
  VerilatedContext context;
  Rtl rtl(&context, "dut");
  cosim::reset(rtl);
  Rng rng(seed, "cosim.reduce");
  Result r;
  const std::uint32_t ebytes = sw::elem_bytes(type);
  std::vector<std::uint8_t> beat(config.vector_bytes), out(config.vector_bytes);
  std::vector<std::uint32_t> first(kLanes);
  for (std::uint64_t chunk = 0; r.cycles < min_cycles; ++chunk) {
    const auto group = static_cast<std::uint32_t>(rng.between(2, 8));
    const sw::ReduceTable::Completed* done = nullptr;
    std::vector<std::int64_t> exact(kLanes, 0);
    for (std::uint32_t m = 0; m < group;) {
      const bool idle = rng.chance(0.1);
      if (type == sw::ElemType::kInt32) {
        rng.fill(beat.data(), beat.size());
      } else {
        for (int l = 0; l < kLanes; ++l) {
          const std::uint32_t v = random_fp32(rng, first[l]);
          if (m == 0 && !idle) first[l] = v;
          std::memcpy(&beat[ebytes * l], reinterpret_cast<const std::uint8_t*>(&v) + 4 - ebytes, ebytes);
        }
      }
      for (std::size_t w = 0; w < beat.size() / 4; ++w) rtl.in_data[w] = load32(&beat[4 * w]);
      rtl.in_valid = !idle;
      rtl.in_first = m == 0;
      cosim::clock_edge(rtl);
      ++r.cycles;
      if (idle) continue;
      if (type == sw::ElemType::kInt32)
        for (int l = 0; l < kLanes; ++l) exact[l] += static_cast<std::int32_t>(load32(&beat[4 * l]));
      done = table.contribute(group, chunk, m, beat.data(), static_cast<std::uint32_t>(beat.size()));
      ++m;
    }
    ++r.chunks;
    for (std::size_t w = 0; w < out.size() / 4; ++w) std::memcpy(&out[4 * w], &rtl.out[w], 4);
    bool same = done != nullptr;
    for (int l = 0; same && l < kLanes; ++l) {
      same = same_lane(type, &done->data[ebytes * l], &out[ebytes * l]);
      classify(type, &done->data[ebytes * l], exact[l], r);
    }
    if (!same) ++r.mismatches;
  }
  rtl.final();
  return r;
}

const std::uint64_t kCycles = std::getenv("XY_LONG") ? 10'000'000 : 200'000;

// The lanes' adder alone against the host's `float + float`: random bits, near-cancelling pairs,
// close exponents, tiny and subnormal operands — bit for bit, NaNs by class.
TEST(ReduceLanesCosim, Fp32AdderMatchesTheHostOnEveryPair) {
  const std::uint64_t pairs = std::getenv("XY_LONG") ? 20'000'000 : 1'000'000;
  VerilatedContext context;
  Vxy_fp32_add adder(&context, "adder");
  Rng rng(6, "cosim.fp32_add");
  std::uint64_t mismatches = 0, nans = 0;
  for (std::uint64_t i = 0; i < pairs; ++i) {
    auto a = static_cast<std::uint32_t>(rng.next()), b = static_cast<std::uint32_t>(rng.next());
    switch (i % 4) {
      case 1: b = (a ^ 0x80000000u) ^ static_cast<std::uint32_t>(rng.below(256)); break;
      case 2: b = ((a & 0x7F800000u) + (static_cast<std::uint32_t>(rng.between(0, 4)) << 23) - (2u << 23)) |
                  (b & 0x807FFFFFu); break;
      case 3: a &= 0x80FFFFFFu, b &= 0x80FFFFFFu; break;
    }
    adder.a = a;
    adder.b = b;
    adder.eval();
    const std::uint32_t host = sw::float_bits(sw::float_of(a) + sw::float_of(b));
    if (is_nan(host)) ++nans;
    if (adder.sum != host && !(is_nan(host) && is_nan(adder.sum))) ++mismatches;
  }
  adder.final();
  EXPECT_EQ(mismatches, 0u);
  EXPECT_GT(nans, pairs / 1000);  // NaN operands and infinity minus infinity were reached
}

TEST(ReduceLanesCosim, Int32MatchesTheReduceTableOnEverySumIncludingWraps) {
  const Result r = run<Vxy_reduce_int32>(sw::ElemType::kInt32, kCycles, 1);
  EXPECT_EQ(r.mismatches, 0u);
  EXPECT_GT(r.chunks, 30'000u);
  EXPECT_GT(r.seen.at("wrapped"), r.chunks);  // overflowing sums are common, so wrapping is exercised
}

// Every kind of float result must be reached, or agreement proves little.
void expect_float_cases(const Result& r) {
  EXPECT_EQ(r.mismatches, 0u);
  EXPECT_GT(r.chunks, 30'000u);
  ::testing::Test::RecordProperty("vectors", std::to_string(r.chunks));
  for (const char* kind : {"zero", "subnormal", "infinity", "nan"}) {
    const std::uint64_t n = r.seen.count(kind) ? r.seen.at(kind) : 0;
    EXPECT_GT(n, 100u) << kind;
    ::testing::Test::RecordProperty(kind, std::to_string(n));
  }
}

TEST(ReduceLanesCosim, Fp32MatchesBitForBitWithSubnormalsInfinitiesAndCancellation) {
  expect_float_cases(run<Vxy_reduce_fp32>(sw::ElemType::kFp32, kCycles, 3));
}

TEST(ReduceLanesCosim, Bf16MatchesBitForBitWithSubnormalsInfinitiesAndCancellation) {
  expect_float_cases(run<Vxy_reduce_bf16>(sw::ElemType::kBf16, kCycles, 4));
}

// A twin with 16-bit lanes (the top half dropped) is caught on nearly every sum.
TEST(ReduceLanesCosim, CatchesAnInt32TwinThatDropsTheUpperBits) {
  const Result r = run<Vxy_reduce_int32_narrow>(sw::ElemType::kInt32, 20'000, 2);
  ASSERT_GT(r.chunks, 1000u);
  EXPECT_GT(r.mismatches, r.chunks * 9 / 10);
}

// A twin whose adders round toward zero instead of to nearest even is caught.
TEST(ReduceLanesCosim, CatchesAFloatTwinThatTruncates) {
  const Result r = run<Vxy_reduce_fp32_truncating>(sw::ElemType::kFp32, 20'000, 5);
  ASSERT_GT(r.chunks, 1000u);
  EXPECT_GT(r.mismatches, r.chunks * 9 / 10);
  RecordProperty("vectors", std::to_string(r.chunks));
  RecordProperty("mismatches", std::to_string(r.mismatches));
}

}  // namespace
}  // namespace xy
