// PHY scenarios and the PHY link, one simulation per process.
#include <gtest/gtest.h>

#include "hw/phy/phy.hpp"
#include "tests/hw/run_quiet.hpp"
#include "xingyun/clock_domain.hpp"

namespace xy {
namespace {

RunResult run(const std::string& scenario, std::vector<std::string> sets) {
  return testing::run_quiet(scenario, std::move(sets));
}

void expect_fec_latency_as_configured(const std::string& fec) {
  const RunResult r = run("phy-loopback", {"phy.fec=" + fec, "traffic.frames=500"});
  ASSERT_EQ(r.failure, "");
  const auto& s = r.results["summary"];
  EXPECT_EQ(s["fec_latency_cycles"], s["configured_fec_latency_cycles"]);
  EXPECT_EQ(s["fec_latency_cycles"].get<Cycle>(),
            s["accumulation_cycles"].get<Cycle>() + s["decoder_cycles"].get<Cycle>());
  EXPECT_EQ(s["frames_received"], 500u);
  EXPECT_EQ(s["frames_marked_bad"], 0u);
}

TEST(PhyLoopback, Rs544LatencyIsTheConfiguredPipeline) { expect_fec_latency_as_configured("rs544"); }
TEST(PhyLoopback, Rs272LatencyIsTheConfiguredPipeline) { expect_fec_latency_as_configured("rs272"); }
TEST(PhyLoopback, NoFecLatencyIsTheConfiguredPipeline) { expect_fec_latency_as_configured("none"); }

TEST(PhyLoopback, FramesOfUncorrectableCodewordsAreMarkedBadAsTheErrorLogSays) {
  // At a pre-FEC BER of 1.5e-3 about 1 % of RS(544,514) codewords have more than 15 bad symbols.
  const RunResult r = run("phy-loopback", {"phy.errors.ber=1.5e-3", "traffic.frames=5000", "traffic.load=0.9"});
  ASSERT_EQ(r.failure, "");  // the scenario's own check: failed codewords == beyond t in the log
  const auto& s = r.results["summary"];
  const auto& cw = s["codewords"];
  EXPECT_GT(cw["uncorrectable_codewords"].get<std::uint64_t>(), 10u);
  EXPECT_EQ(cw["uncorrectable_codewords"].get<std::uint64_t>() + cw["miscorrected_codewords"].get<std::uint64_t>(),
            cw["beyond_t_codewords"].get<std::uint64_t>());
  EXPECT_GT(s["frames_marked_bad"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(s["frames_received"], 5000u);  // marked bad, never lost
  EXPECT_NEAR(cw["pre_fec_ber"].get<double>(), 1.5e-3, 1.5e-4);
}

TEST(PhyLoopback, BurstsAndDfePropagationAreRecoveredOrFlaggedNeverSilent) {
  const RunResult r = run("phy-loopback", {"phy.errors.ber=1e-5", "phy.errors.p_good_to_bad=1e-6",
                                           "phy.errors.ber_bad=0.02", "phy.errors.dfe_propagation=0.5",
                                           "phy.interleave=2", "traffic.frames=5000"});
  ASSERT_EQ(r.failure, "");
  EXPECT_GT(r.results["summary"]["codewords"]["corrected_codewords"].get<std::uint64_t>(), 0u);
}

TEST(PhyLoopback, ALinkFlapLosesTheCodewordsOfTheDarkTimeAndMarksTheirFramesBad) {
  // Down 2 us at 20 us, then 1 us of CDR relock: about 3 us / 12.8 ns = 234 codewords lost.
  const RunResult r = run("phy-loopback", {"phy.link_down_at_us=20", "phy.link_down_us=2", "traffic.frames=3000",
                                           "traffic.load=0.8"});
  ASSERT_EQ(r.failure, "");
  const auto lost = r.results["stats"]["top.phy.lost_codewords"]["value"].get<std::uint64_t>();
  EXPECT_NEAR(static_cast<double>(lost), 3000.0 / 12.8, 2.0);
  EXPECT_EQ(r.results["summary"]["codewords"]["uncorrectable_codewords"].get<std::uint64_t>(), lost);
  EXPECT_GT(r.results["summary"]["frames_marked_bad"].get<std::uint64_t>(), 100u);
  EXPECT_EQ(r.results["summary"]["frames_received"], 3000u);
}

// Exact and fast codecs on the same channel draws: every statistic identical.
TEST(PhyLink, FastAndExactCodecsGiveIdenticalResults) {
  Config config;
  config.set("phy.errors.ber", "8e-4");
  config.set("phy.errors.p_good_to_bad", "1e-5");
  config.set("phy.errors.dfe_propagation", "0.3");
  config.set("phy.fec", "rs272");
  phy::PhyParams exact = phy::PhyParams::declare(config, "phy"), fast = exact;
  exact.fast = false;
  fast.fast = true;
  ClockDomain domain("phy", exact.period());
  Stats stats;
  PacketPool pool;
  phy::PhyLink a("top.exact", exact, domain.clock(), stats, 5, "same", nullptr, nullptr, pool);
  phy::PhyLink b("top.fast", fast, domain.clock(), stats, 5, "same", nullptr, nullptr, pool);
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

TEST(PhyFecCurve, AtLeastFourPointsPerModeAgreeWithTheBinomialFormula) {
  const RunResult r = run("phy-fec-curve", {});
  ASSERT_EQ(r.failure, "");
  for (const char* mode : {"rs544", "rs272", "none"}) {
    const auto& m = r.results["summary"][mode];
    EXPECT_GE(m["points_agreeing_with_100_failures"].get<int>(), 4) << mode;
    EXPECT_GT(m["fec_latency_ns"].get<double>(), 0) << mode;
  }
  // The light code corrects less: at the same target error ratio it needs a cleaner channel.
  EXPECT_LT(r.results["summary"]["rs272"]["curve"][0]["pre_fec_ber"].get<double>(),
            r.results["summary"]["rs544"]["curve"][0]["pre_fec_ber"].get<double>());
}

}  // namespace
}  // namespace xy
