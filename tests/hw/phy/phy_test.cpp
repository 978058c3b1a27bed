// The PHY (hw/phy/phy.hpp): its parameters, and the PHY link on a ClockDomain (one simulation per
// process).
#include "hw/phy/phy.hpp"

#include <malloc.h>

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "kernel/clock_domain.hpp"

namespace xy::phy {
namespace {

PhyParams params(std::vector<std::string> sets) {
  Config c;
  for (const auto& s : sets) c.set_from_assignment(s);
  return PhyParams::declare(c, "phy");
}

TEST(PhyParams, CodewordTimingFollowsLanesAndCode) {
  const PhyParams p = params({});
  EXPECT_EQ(p.period(), 376471u);          // 106.25 Gb/s / 40 bits = 2.65625 GHz
  EXPECT_EQ(p.group_cycles(), 34u);        // 5440 bits over 4 lanes x 40 bits
  EXPECT_EQ(params({"phy.lanes=1"}).group_cycles(), 136u);  // 51.2 ns per KP4 codeword on one lane
  EXPECT_EQ(params({"phy.fec=rs272"}).group_cycles(), 17u);
  EXPECT_EQ(params({"phy.fec=rs272", "phy.lanes=8", "phy.interleave=2"}).group_cycles(), 17u);
}

TEST(PhyParams, LightFecLatencyIsAboutHalfOfKp4WithTheDefaults) {
  const PhyParams kp4 = params({}), light = params({"phy.fec=rs272"});
  const double a = static_cast<double>(kp4.group_cycles() + kp4.decoder_cycles());
  const double b = static_cast<double>(light.group_cycles() + light.decoder_cycles());
  EXPECT_NEAR(b / a, 0.5, 0.05);
}

TEST(PhyParams, BadValuesNameTheKey) {
  EXPECT_THROW(params({"phy.lanes=3"}), ConfigError);
  EXPECT_THROW(params({"phy.errors.ber=1"}), ConfigError);
  EXPECT_THROW(params({"phy.fec=rs999"}), ConfigError);
  try {
    params({"phy.fec=rs272", "phy.lanes=8", "phy.interleave=1"});  // the default there is 2
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("phy.interleave = 2"), std::string::npos);
  }
}

TEST(PhyParams, BinomialCodewordErrorRatio) {
  const PhyParams kp4 = params({});
  EXPECT_DOUBLE_EQ(codeword_error_ratio(kp4, 0), 0.0);
  // KP4's design point: pre-FEC BER 2.4e-4 gives a codeword error ratio far below 1e-10.
  EXPECT_LT(codeword_error_ratio(kp4, 2.4e-4), 1e-10);
  EXPECT_GT(codeword_error_ratio(kp4, 2e-3), 0.01);
  EXPECT_GT(codeword_error_ratio(params({"phy.fec=rs272"}), 2.4e-4), codeword_error_ratio(kp4, 2.4e-4));
}

// Exact and fast codecs on the same channel draws: every statistic identical.
TEST(PhyLink, FastAndExactCodecsGiveIdenticalResults) {
  Config config;
  config.set("phy.errors.ber", "8e-4");
  config.set("phy.errors.p_good_to_bad", "1e-5");
  config.set("phy.errors.dfe_propagation", "0.3");
  config.set("phy.fec", "rs272");
  PhyParams exact = PhyParams::declare(config, "phy"), fast = exact;
  exact.fast = false;
  fast.fast = true;
  ClockDomain domain("phy", exact.period());
  Stats stats;
  PacketPool pool;
  PhyLink a("top.exact", exact, domain.clock(), stats, 5, "same", nullptr, nullptr, pool);
  PhyLink b("top.fast", fast, domain.clock(), stats, 5, "same", nullptr, nullptr, pool);
  a.stop_after(~0ull, 20000);
  b.stop_after(~0ull, 20000);
  ClockDomain::set_run_ahead_limit(kMs);
  sc_core::sc_start(to_sc_time(kMs));
  ASSERT_EQ(a.codewords(), 20000u);
  const auto j = stats.to_json();
  int compared = 0;
  for (const auto& [key, value] : j.items()) {
    if (key.rfind("top.exact.", 0) != 0 || key == "top.exact.fec.decoded_codewords") continue;
    const std::string twin = "top.fast." + key.substr(std::string("top.exact.").size());
    EXPECT_EQ(value, j[twin]) << key;
    ++compared;
  }
  EXPECT_GE(compared, 10);
  EXPECT_GT(a.failed_codewords(), 0u);
  EXPECT_EQ(stats.find_counter("top.exact.fec.decoded_codewords")->value(), 20000u);
  EXPECT_LT(stats.find_counter("top.fast.fec.decoded_codewords")->value(), 20000u);  // it skipped clean ones
}

// A fabric has two PHYs per link. The codec's tables depend on the code alone: the encoder's
// 2^m rows of n-k parity symbols, the 2t syndrome and t Chien tables of 2^m entries, the field's
// exp (2(2^m - 1) symbols) and log (2^m ints), 2-byte symbols. Each further PHY of a code must
// grow the heap by less than one copy of them.
TEST(PhyLink, PhysOfACodeShareItsCodecTables) {
  for (const char* fec : {"rs544", "rs272"}) {
    const PhyParams p = params({std::string("phy.fec=") + fec});
    const std::size_t size = 1u << 10, parity = static_cast<std::size_t>(p.n() - p.k()), t = parity / 2;
    const std::size_t tables = 2 * (size * parity + parity * size + t * size + 2 * (size - 1)) + 4 * size;
    Clock clock("phy", p.period());
    Stats stats;
    PacketPool pool;
    std::vector<std::unique_ptr<PhyLink>> links;
    links.push_back(std::make_unique<PhyLink>("top.first", p, clock, stats, 1, "first", nullptr, nullptr, pool));
    constexpr int kMore = 8;
    const std::size_t before = mallinfo2().uordblks;
    for (int i = 0; i < kMore; ++i)
      links.push_back(std::make_unique<PhyLink>("top.l" + std::to_string(i), p, clock, stats, 1, "l" + std::to_string(i),
                                                nullptr, nullptr, pool));
    const std::size_t each = (mallinfo2().uordblks - before) / kMore;
    EXPECT_LT(each, tables) << fec << ": " << each << " B a PHY, the tables are " << tables << " B";
  }
}

}  // namespace
}  // namespace xy::phy
