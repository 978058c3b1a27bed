// The PHY scenarios run whole: phy-loopback and phy-fec-curve, one simulation per process.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/tb/run_quiet.hpp"

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

// The codeword error ratio on this channel, written out here rather than taken from the model
// (phy::codeword_error_ratio): random errors at bit error ratio `ber` hit PAM4 symbols, each of
// which errs with probability 2 ber and then flips one of its two bits (Gray code: a slip to the
// neighbouring level), so that the bit error ratio is ber. A 10-bit RS symbol spans 5 PAM4
// symbols, so it is wrong with q = 1 - (1 - 2 ber)^5; a codeword of n symbols fails when more than
// t are wrong: P = 1 - sum_{j=0..t} C(n, j) q^j (1 - q)^(n - j).
// (Independent bit errors, q = 1 - (1 - ber)^10, would give ratios under 1 % lower here: a
// model that drew bits, not PAM4 symbols, would still pass; one with a wrong n or t would not.)
double expected_cer(int n, int t, double ber) {
  const double q = 1 - std::pow(1 - 2 * ber, 5);
  double ok = 0;
  for (int j = 0; j <= t; ++j)
    ok += std::exp(std::lgamma(n + 1.0) - std::lgamma(j + 1.0) - std::lgamma(n - j + 1.0) + j * std::log(q) +
                   (n - j) * std::log1p(-q));
  return 1 - ok;
}

TEST(PhyFecCurve, AtLeastFourPointsPerModeAgreeWithTheBinomialFormula) {
  const RunResult r = run("phy-fec-curve", {});
  ASSERT_EQ(r.failure, "");
  for (const char* mode : {"rs544", "rs272", "none"}) {
    const auto& m = r.results["summary"][mode];
    EXPECT_GE(m["points_agreeing_with_100_failures"].get<int>(), 4) << mode;
    EXPECT_GT(m["fec_latency_ns"].get<double>(), 0) << mode;
  }
  // Every measured point against the ratio computed above from the code's n and t: KP4 RS(544,514)
  // corrects 15 symbols, RS(272,257) (one pad symbol: 258 message symbols) 7, no FEC fails on any
  // error among the 514 symbols' 5140 bits. The failed count of a point is binomial(N, P): its
  // standard deviation is sqrt(N P (1 - P)); within 4.5 of them a correct model fails this check
  // with probability under 7e-6 per point (normal tail; about 150 failures per point make the
  // normal approximation good), 1e-4 for the 15 points together.
  const struct {
    const char* mode;
    int n, t;
  } codes[] = {{"rs544", 544, 15}, {"rs272", 272, 7}, {"none", 514, 0}};
  for (const auto& code : codes) {
    for (const auto& pt : r.results["summary"][code.mode]["curve"]) {
      const double ber = pt["pre_fec_ber"].get<double>();
      const double n = pt["codewords"].get<double>(), failed = pt["failed_codewords"].get<double>();
      const double p = expected_cer(code.n, code.t, ber);
      EXPECT_NEAR(failed, n * p, 4.5 * std::sqrt(n * p * (1 - p))) << code.mode << " at BER " << ber;
    }
  }
  // The light code corrects less, from the measurements alone: the failure ratio only grows with
  // the BER, so an RS(272) point at a lower BER than an RS(544) point that still fails more often
  // (beyond both points' 95 % intervals) shows RS(272) is worse at that RS(544) point's BER.
  const auto& rs544 = r.results["summary"]["rs544"]["curve"];
  const auto& rs272 = r.results["summary"]["rs272"]["curve"];
  int orderings = 0;
  for (const auto& strong : rs544)
    for (const auto& light : rs272)
      if (light["pre_fec_ber"].get<double>() <= strong["pre_fec_ber"].get<double>() &&
          light["ci95_low"].get<double>() > strong["ci95_high"].get<double>())
        ++orderings;
  EXPECT_GE(orderings, 1);
}

}  // namespace
}  // namespace xy
