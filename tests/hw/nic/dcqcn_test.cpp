// DCQCN (hw/nic/dcqcn.hpp): the reaction point's rate arithmetic and event timing, the
// notification point's CNP spacing, the profiles and their validation. Every expected value is
// worked out here from the algorithm's equations (closed forms, or the recurrence written out),
// never by running the model a second time.
#include "hw/nic/dcqcn.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "kernel/config.hpp"

namespace xy::nic {
namespace {

constexpr double kLine = 100e9;
constexpr Time kNever = ~Time{0};

// Rates and α agree to a relative 1e-12 (the model multiplies step by step, a test may use pow).
void expect_close(double actual, double expected, const char* what) {
  EXPECT_NEAR(actual, expected, std::abs(expected) * 1e-12 + 1e-300) << what;
}

std::string config_error(const DcqcnConfig& c, const std::string& prefix = "nic.dcqcn") {
  try {
    c.validate(prefix);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

// The paper profile with the increase timer and the byte counter out of the way.
DcqcnConfig paper_without_increases() {
  DcqcnConfig c = DcqcnConfig::paper(kLine);
  c.increase_period = 1000 * kMs;
  c.byte_counter = 0;
  return c;
}

TEST(DcqcnPaper, OneCnpHalvesLineRateAndAlphaStaysOne) {
  const DcqcnConfig c = DcqcnConfig::paper(kLine);
  DcqcnReactionPoint rp(c);
  EXPECT_EQ(rp.rate(), kLine);
  EXPECT_EQ(rp.next_event(), kNever) << "no timer runs before the first CNP";
  rp.advance(1 * kMs);
  EXPECT_EQ(rp.rate(), kLine);

  // α = 1: R_C(1 - 1/2), then α = (1 - g) + g = 1.
  rp.on_cnp(1 * kMs);
  EXPECT_DOUBLE_EQ(rp.rate(), kLine / 2);
  EXPECT_DOUBLE_EQ(rp.target(), kLine);
  EXPECT_DOUBLE_EQ(rp.alpha(), (1 - c.g) * 1 + c.g);
  EXPECT_DOUBLE_EQ(rp.alpha(), 1.0);

  // A second CNP right after: half again, the target clamped to the rate it cut.
  rp.on_cnp(1 * kMs + 1 * kUs);
  EXPECT_DOUBLE_EQ(rp.rate(), kLine / 4);
  EXPECT_DOUBLE_EQ(rp.target(), kLine / 2);
  EXPECT_EQ(rp.stats().cnps, 2u);
  EXPECT_EQ(rp.stats().decreases, 2u);
  EXPECT_EQ(rp.stats().increases(), 0u);
}

TEST(DcqcnPaper, AlphaDecaysOncePerPeriodWithoutCnps) {
  const DcqcnConfig c = paper_without_increases();
  DcqcnReactionPoint rp(c);
  rp.on_cnp(0);
  const double k = static_cast<double>(c.alpha_period);
  for (int periods : {1, 2, 7, 10}) {
    rp.advance(static_cast<Time>(periods * k) - 1);
    expect_close(rp.alpha(), std::pow(1 - c.g, periods - 1), "just before a deadline");
    rp.advance(static_cast<Time>(periods * k));
    expect_close(rp.alpha(), std::pow(1 - c.g, periods), "at the deadline");
  }
  // The next cut uses the decayed α, and then α rises by g.
  const double a10 = std::pow(1 - c.g, 10);
  rp.on_cnp(10 * c.alpha_period + 5 * kNs);
  expect_close(rp.rate(), kLine / 2 * (1 - a10 / 2), "cut with α = (1-g)^10");
  expect_close(rp.alpha(), (1 - c.g) * a10 + c.g, "α after the CNP");
  // The CNP restarted the alpha timer: the next decay is K after it, not on the old phase.
  const Time cnp = 10 * c.alpha_period + 5 * kNs;
  rp.advance(cnp + c.alpha_period - 1);
  expect_close(rp.alpha(), (1 - c.g) * a10 + c.g, "no decay before K after the CNP");
  rp.advance(cnp + c.alpha_period);
  expect_close(rp.alpha(), (1 - c.g) * ((1 - c.g) * a10 + c.g), "one decay K after the CNP");
}

TEST(DcqcnPaper, FastRecoveryThenAdditiveSteps) {
  DcqcnConfig c = DcqcnConfig::paper(kLine);
  c.byte_counter = 0;  // timer only: hyper increase never comes
  DcqcnReactionPoint rp(c);
  rp.on_cnp(0);
  rp.on_cnp(0);  // R_T = L/2, R_C = L/4
  const double rt0 = kLine / 2, rc0 = kLine / 4;
  ASSERT_DOUBLE_EQ(rp.target(), rt0);
  ASSERT_DOUBLE_EQ(rp.rate(), rc0);
  const Time t = c.increase_period;
  EXPECT_EQ(rp.next_event(), t);

  // F fast-recovery events: the gap to R_T halves each time.
  for (int k = 1; k <= c.fast_recovery_steps; ++k) {
    rp.advance(k * t - 1);
    EXPECT_EQ(rp.stats().increases(), static_cast<std::uint64_t>(k - 1));
    rp.advance(k * t);
    EXPECT_DOUBLE_EQ(rp.target(), rt0);
    EXPECT_DOUBLE_EQ(rp.rate(), rt0 - (rt0 - rc0) / std::pow(2.0, k)) << "fast recovery step " << k;
  }
  EXPECT_EQ(rp.stats().fast_recovery, static_cast<std::uint64_t>(c.fast_recovery_steps));

  // Then additive increase: R_T += R_AI, R_C = (R_T + R_C)/2.
  double rt = rt0, rc = rt0 - (rt0 - rc0) / std::pow(2.0, c.fast_recovery_steps);
  for (int j = 1; j <= 20; ++j) {
    rt += c.rai_bps;
    rc = (rt + rc) / 2;
    rp.advance((c.fast_recovery_steps + j) * t);
    EXPECT_DOUBLE_EQ(rp.target(), rt0 + j * c.rai_bps) << "additive step " << j;
    EXPECT_DOUBLE_EQ(rp.rate(), rc) << "additive step " << j;
  }
  EXPECT_EQ(rp.stats().additive, 20u);
  EXPECT_EQ(rp.stats().hyper, 0u);
}

TEST(DcqcnPaper, HyperIncreaseOnceBothCountsPassF) {
  DcqcnConfig c = DcqcnConfig::paper(kLine);
  c.byte_counter = 1'000'000;
  c.alpha_period = 1000 * kMs;
  const Time t = c.increase_period;
  const std::uint64_t f = static_cast<std::uint64_t>(c.fast_recovery_steps);
  DcqcnReactionPoint rp(c);
  rp.on_cnp(0);
  rp.on_cnp(0);
  double rt = kLine / 2, rc = kLine / 4;

  // F + 1 byte-counter cycles before the first timer expiry: BC = 1..F fast recovery (T = 0),
  // BC = F + 1 additive (max > F, min = T = 0).
  for (std::uint64_t bc = 1; bc <= f + 1; ++bc) {
    rp.on_sent(c.byte_counter, bc * kUs);
    if (bc > f) rt += c.rai_bps;
    rc = (rt + rc) / 2;
    EXPECT_DOUBLE_EQ(rp.target(), rt) << "BC = " << bc;
    EXPECT_DOUBLE_EQ(rp.rate(), rc) << "BC = " << bc;
  }
  EXPECT_EQ(rp.stats().fast_recovery, f);
  EXPECT_EQ(rp.stats().additive, 1u);

  // Timer expiries T = 1..F: additive (BC = F + 1 > F, T <= F); T = F + 1: hyper by
  // (min(T, BC) - F) R_HAI = 1 R_HAI.
  for (std::uint64_t n = 1; n <= f + 1; ++n) {
    rp.advance(n * t);
    rt += n <= f ? c.rai_bps : 1 * c.rhai_bps;
    rc = (rt + rc) / 2;
    EXPECT_DOUBLE_EQ(rp.target(), rt) << "T = " << n;
    EXPECT_DOUBLE_EQ(rp.rate(), rc) << "T = " << n;
  }
  EXPECT_EQ(rp.stats().hyper, 1u);

  // BC = F + 2 (T = F + 1): min = F + 1, 1 R_HAI. T = F + 2 (BC = F + 2): min = F + 2, 2 R_HAI.
  rp.on_sent(c.byte_counter, (f + 1) * t + 1 * kUs);
  rt += 1 * c.rhai_bps;
  rc = (rt + rc) / 2;
  EXPECT_DOUBLE_EQ(rp.target(), rt);
  EXPECT_DOUBLE_EQ(rp.rate(), rc);
  rp.advance((f + 2) * t);
  rt += 2 * c.rhai_bps;
  rc = (rt + rc) / 2;
  EXPECT_DOUBLE_EQ(rp.target(), rt);
  EXPECT_DOUBLE_EQ(rp.rate(), rc);
  EXPECT_EQ(rp.stats().hyper, 3u);
}

TEST(DcqcnPaper, ByteCounterEventsWithTimersFarAway) {
  DcqcnConfig c = DcqcnConfig::paper(kLine);
  c.increase_period = 1000 * kMs;
  DcqcnReactionPoint rp(c);
  rp.on_sent(3 * c.byte_counter, 1 * kUs);
  EXPECT_EQ(rp.stats().increases(), 0u) << "no byte counter before the first CNP";
  rp.on_cnp(2 * kUs);  // R_C = L/2, R_T = L; the byte count starts from 0
  const double gap = kLine / 2;

  rp.on_sent(c.byte_counter * 4 / 10, 3 * kUs);
  EXPECT_EQ(rp.stats().increases(), 0u);
  EXPECT_DOUBLE_EQ(rp.rate(), kLine / 2);
  rp.on_sent(c.byte_counter * 6 / 10, 4 * kUs);  // one full cycle
  EXPECT_DOUBLE_EQ(rp.rate(), kLine - gap / 2);
  rp.on_sent(c.byte_counter * 25 / 10, 5 * kUs);  // two cycles, half of one left over
  EXPECT_DOUBLE_EQ(rp.rate(), kLine - gap / 8);
  EXPECT_EQ(rp.stats().fast_recovery, 3u);
  rp.on_sent(c.byte_counter / 2, 6 * kUs);
  EXPECT_DOUBLE_EQ(rp.rate(), kLine - gap / 16);
  EXPECT_EQ(rp.stats().fast_recovery, 4u);
  EXPECT_EQ(rp.next_event(), std::min(2 * kUs + c.alpha_period, 2 * kUs + c.increase_period));

  // A CNP resets the byte count: a part cycle before it does not count after it.
  rp.on_sent(c.byte_counter / 2, 7 * kUs);
  rp.on_cnp(8 * kUs);
  const std::uint64_t before = rp.stats().increases();
  rp.on_sent(c.byte_counter / 2, 9 * kUs);
  EXPECT_EQ(rp.stats().increases(), before);
}

TEST(DcqcnPaper, MinRateFloorsEveryCut) {
  DcqcnConfig c = paper_without_increases();
  c.min_rate_bps = 30e9;
  DcqcnReactionPoint rp(c);
  rp.on_cnp(0);
  EXPECT_DOUBLE_EQ(rp.rate(), 50e9);  // max(30, 100/2)
  rp.on_cnp(1 * kUs);
  EXPECT_DOUBLE_EQ(rp.rate(), 30e9);  // max(30, 50/2)
  EXPECT_DOUBLE_EQ(rp.target(), 50e9);
  rp.on_cnp(2 * kUs);
  EXPECT_DOUBLE_EQ(rp.rate(), 30e9);  // max(30, 30/2)
  EXPECT_DOUBLE_EQ(rp.target(), 30e9);
}

TEST(DcqcnPaper, WithoutClampTargetFollowsRateOnlyAfterAnIncrease) {
  DcqcnConfig c = DcqcnConfig::paper(kLine);
  c.clamp_target = false;
  c.byte_counter = 0;
  DcqcnReactionPoint rp(c);
  rp.on_cnp(0);
  rp.on_cnp(1 * kUs);  // no increase between: R_T stays at the line rate
  EXPECT_DOUBLE_EQ(rp.target(), kLine);
  EXPECT_DOUBLE_EQ(rp.rate(), kLine / 4);
  rp.advance(1 * kUs + c.increase_period);  // one fast-recovery event, one α decay (K = T)
  const double rc = (kLine + kLine / 4) / 2;
  EXPECT_DOUBLE_EQ(rp.rate(), rc);
  rp.on_cnp(1 * kUs + c.increase_period + 1 * kNs);  // an increase ran: R_T = R_C
  EXPECT_DOUBLE_EQ(rp.target(), rc);
  EXPECT_DOUBLE_EQ(rp.rate(), rc * (1 - (1 - c.g) / 2));
}

TEST(DcqcnPaper, JumpRunsEachTimerAtItsOwnDeadline) {
  const DcqcnConfig c = DcqcnConfig::paper(kLine);  // K = T = 55 us
  ASSERT_EQ(c.alpha_period, c.increase_period);
  DcqcnReactionPoint rp(c);
  rp.on_cnp(0);
  const Time t = c.increase_period;
  rp.advance(3 * t + 7 * kNs);  // one call over three deadlines of each timer
  EXPECT_DOUBLE_EQ(rp.rate(), kLine - (kLine / 2) / 8);
  expect_close(rp.alpha(), std::pow(1 - c.g, 3), "three decays");
  EXPECT_EQ(rp.next_event(), 4 * t) << "the next deadline keeps the timers' phase";
  EXPECT_EQ(rp.stats().fast_recovery, 3u);

  // A send after a jump: the timer expiries before it run first (T = 1, 2 fast recovery), then
  // its byte-counter cycle (BC = 1, fast recovery).
  DcqcnReactionPoint rp2(c);
  rp2.on_cnp(0);
  rp2.on_sent(c.byte_counter, 2 * t + 1);
  EXPECT_DOUBLE_EQ(rp2.rate(), kLine - (kLine / 2) / 8);
  EXPECT_EQ(rp2.next_event(), 3 * t);

  // A CNP after a jump cuts with α decayed at each deadline before it, and restarts both timers.
  DcqcnReactionPoint rp3(c);
  rp3.on_cnp(0);
  const Time cnp = 2 * t + 3 * kUs;
  rp3.on_cnp(cnp);
  const double rc_before = kLine - (kLine / 2) / 4;  // two fast-recovery events
  const double a2 = std::pow(1 - c.g, 2);
  expect_close(rp3.rate(), rc_before * (1 - a2 / 2), "cut at the CNP");
  expect_close(rp3.target(), rc_before, "clamped");
  EXPECT_EQ(rp3.next_event(), cnp + t);
}

TEST(DcqcnPaper, RecoveredFlowSleepsWhileAlphaDecays) {
  const DcqcnConfig c = DcqcnConfig::paper(kLine);
  DcqcnReactionPoint rp(c);
  rp.on_cnp(0);
  // R_T stays at the line rate (capped); R_C halves its gap each event, ~50 events to close it.
  rp.advance(10 * kMs);
  EXPECT_TRUE(rp.recovered());
  EXPECT_EQ(rp.rate(), kLine);
  EXPECT_EQ(rp.target(), kLine);
  EXPECT_EQ(rp.next_event(), kNever);
  const std::uint64_t events = rp.stats().increases();
  EXPECT_GT(events, 40u);
  EXPECT_LT(events, 100u);
  rp.on_sent(100 * c.byte_counter, 11 * kMs);
  EXPECT_EQ(rp.stats().increases(), events) << "nothing runs while recovered";

  // α still decayed at every K after the CNP: n = floor(t / K) periods.
  const Time at = 20 * kMs + 3 * kNs;
  const auto n = static_cast<int>(at / c.alpha_period);
  rp.on_cnp(at);
  const double a = std::pow(1 - c.g, n);
  expect_close(rp.rate(), kLine * (1 - a / 2), "cut with the decayed α");
  expect_close(rp.alpha(), (1 - c.g) * a + c.g, "α after the CNP");
  EXPECT_FALSE(rp.recovered());
  EXPECT_EQ(rp.next_event(), at + c.alpha_period);
}

TEST(DcqcnPaper, RecoveryEndsAtAnyLineRate) {
  // R_C halves its gap to R_T; in doubles the average of L and the double just below L rounds
  // back down when L's last mantissa bit is odd, so the model has to close the last step itself.
  for (double line : {100e9, std::nextafter(100e9, 200e9), 1e11 / 3, 400e9 + 1}) {
    DcqcnReactionPoint rp(DcqcnConfig::paper(line));
    rp.on_cnp(0);
    rp.advance(100 * kMs);
    EXPECT_TRUE(rp.recovered()) << line;
    EXPECT_EQ(rp.rate(), line);
    EXPECT_EQ(rp.next_event(), kNever);
  }
}

TEST(DcqcnMlx, SeveralCnpsInOneIntervalGiveOneDecrease) {
  const DcqcnConfig c = DcqcnConfig::mlx(kLine);
  const double g = c.g;
  DcqcnReactionPoint rp(c);
  rp.on_cnp(0);  // first: α = 1, no rate change yet (rate on first CNP 1.0)
  EXPECT_DOUBLE_EQ(rp.rate(), kLine);
  EXPECT_DOUBLE_EQ(rp.alpha(), 1.0);
  rp.on_cnp(1500 * kNs);
  rp.on_cnp(2500 * kNs);
  rp.on_cnp(3500 * kNs);
  EXPECT_DOUBLE_EQ(rp.rate(), kLine) << "a CNP only sets the flags";
  // Alpha updates every 1 us from the first CNP: at 1 us no CNP since (the first clears its
  // flag), at 2, 3, 4 us a CNP arrived in the slot.
  double a = (1 - g) * 1.0;
  for (int i = 0; i < 3; ++i) a = (1 - g) * a + g;
  rp.advance(4 * kUs);
  expect_close(rp.alpha(), a, "α at 4 us");
  EXPECT_DOUBLE_EQ(rp.rate(), kLine) << "the check runs 1 ns after the alpha update";
  rp.advance(4 * kUs + 1 * kNs);
  expect_close(rp.rate(), kLine * (1 - a / 2), "one decrease");
  EXPECT_DOUBLE_EQ(rp.target(), kLine) << "stage 0: not clamped";
  EXPECT_EQ(rp.stats().cnps, 4u);
  EXPECT_EQ(rp.stats().decreases, 1u);
  rp.advance(8 * kUs + 1 * kNs);
  EXPECT_EQ(rp.stats().decreases, 1u) << "no CNP since the last check";
  expect_close(rp.rate(), kLine * (1 - a / 2), "unchanged");
}

TEST(DcqcnMlx, TargetNotClampedOnBackToBackDecreases) {
  for (bool clamp : {false, true}) {
    DcqcnConfig c = DcqcnConfig::mlx(kLine);
    c.clamp_target = clamp;
    const double g = c.g;
    DcqcnReactionPoint rp(c);
    rp.on_cnp(0);
    rp.advance(4 * kUs + 1 * kNs);  // α decayed at 1..4 us
    const double a4 = std::pow(1 - g, 4);
    const double rc1 = kLine * (1 - a4 / 2);
    expect_close(rp.rate(), rc1, "first decrease");
    // CNP at 5 us (the 5 us update ran first), flagged at 6 us, then decays at 7, 8 us.
    rp.on_cnp(5 * kUs);
    rp.advance(8 * kUs + 1 * kNs);
    const double a8 = (1 - g) * (1 - g) * ((1 - g) * std::pow(1 - g, 5) + g);
    expect_close(rp.alpha(), a8, "α at the second check");
    expect_close(rp.rate(), rc1 * (1 - a8 / 2), "second decrease");
    if (clamp)
      expect_close(rp.target(), rc1, "clamped to the rate before the cut");
    else
      EXPECT_DOUBLE_EQ(rp.target(), kLine) << "no increase between the decreases: not clamped";
    EXPECT_EQ(rp.stats().decreases, 2u);
  }
}

TEST(DcqcnMlx, IncreaseStagesFastRecoveryAdditiveHyper) {
  DcqcnConfig c = DcqcnConfig::mlx(kLine);
  c.clamp_target = true;  // so that R_T drops below the line rate and the increases show
  const double g = c.g;
  ASSERT_EQ(c.fast_recovery_steps, 1);
  ASSERT_DOUBLE_EQ(c.rai_bps, 20e6);    // 5 Mb/s x 100/25
  ASSERT_DOUBLE_EQ(c.rhai_bps, 200e6);  // 50 Mb/s x 100/25
  DcqcnReactionPoint rp(c);
  rp.on_cnp(0);
  rp.on_cnp(5 * kUs);
  const Time check = 8 * kUs + 1 * kNs;
  rp.advance(check);
  const double rc1 = kLine * (1 - std::pow(1 - g, 4) / 2);
  const double a8 = (1 - g) * (1 - g) * ((1 - g) * std::pow(1 - g, 5) + g);
  double rt = rc1, rc = rc1 * (1 - a8 / 2);
  expect_close(rp.target(), rt, "R_T after the second decrease");
  expect_close(rp.rate(), rc, "R_C after the second decrease");
  EXPECT_EQ(rp.next_event(), 9 * kUs) << "the next alpha update";

  // Stage 0 < F: fast recovery; stage 1 == F: additive; stages 2, 3: one R_HAI each.
  const double add[] = {0, c.rai_bps, c.rhai_bps, c.rhai_bps};
  for (int s = 0; s < 4; ++s) {
    const Time at = check + (s + 1) * c.increase_period;
    rp.advance(at - 1);
    EXPECT_EQ(rp.stats().increases(), static_cast<std::uint64_t>(s));
    rp.advance(at);
    rt += add[s];
    rc = (rt + rc) / 2;
    expect_close(rp.target(), rt, "R_T");
    expect_close(rp.rate(), rc, "R_C");
  }
  EXPECT_EQ(rp.stats().fast_recovery, 1u);
  EXPECT_EQ(rp.stats().additive, 1u);
  EXPECT_EQ(rp.stats().hyper, 2u);
}

TEST(DcqcnMlx, IncreaseTimerRunsBeforeTheDecreaseCheckItTies) {
  // The increase timer restarts at a check, 300 us = 75 checks later: the two fall due together.
  // rdma-hw.cc scheduled the timer first, so it runs first: a fast-recovery step, then the cut,
  // which clamps as the stage is no longer 0.
  const DcqcnConfig c = DcqcnConfig::mlx(kLine);
  const double g = c.g;
  DcqcnReactionPoint rp(c);
  rp.on_cnp(0);
  const Time check1 = 4 * kUs + 1 * kNs;
  const Time tie = check1 + c.increase_period;  // 304 us + 1 ns
  rp.on_cnp(tie - 1 * kUs);                    // flagged for the alpha update at 304 us
  rp.advance(tie);
  const double rc1 = kLine * (1 - std::pow(1 - g, 4) / 2);
  const double rc_fr = (kLine + rc1) / 2;
  const double a = (1 - g) * std::pow(1 - g, 303) + g;
  EXPECT_EQ(rp.stats().fast_recovery, 1u);
  EXPECT_EQ(rp.stats().decreases, 2u);
  expect_close(rp.target(), rc_fr, "clamped to the rate after the fast-recovery step");
  expect_close(rp.rate(), rc_fr * (1 - a / 2), "then cut");
}

TEST(DcqcnMlx, NoByteCounterAndRateOnFirstCnp) {
  DcqcnConfig c = DcqcnConfig::mlx(kLine);
  EXPECT_EQ(c.byte_counter, 0u);
  c.rate_on_first_cnp = 0.5;
  DcqcnReactionPoint rp(c);
  rp.on_cnp(0);
  EXPECT_DOUBLE_EQ(rp.rate(), kLine / 2) << "the first CNP sets R_C at once";
  EXPECT_DOUBLE_EQ(rp.target(), kLine / 2);
  rp.advance(4 * kUs + 1 * kNs);
  expect_close(rp.rate(), kLine / 2 * (1 - std::pow(1 - c.g, 4) / 2), "then the first check cuts");
  const double rc = rp.rate();
  rp.on_sent(1'000'000'000'000ull, 5 * kUs);  // a terabyte: no byte counter to fire
  EXPECT_EQ(rp.rate(), rc);
  EXPECT_EQ(rp.stats().increases(), 0u);

  c.byte_counter = 1'000'000;
  EXPECT_EQ(config_error(c),
            "nic.dcqcn.byte_counter = 1000000: allowed 0 when rate_decrease_interval > 0 (the mlx variant has no "
            "byte counter)");
}

TEST(DcqcnMlx, RecoveredFlowSleepsAndKeepsTheCheckPhase) {
  const DcqcnConfig c = DcqcnConfig::mlx(kLine);
  const double g = c.g;
  DcqcnReactionPoint rp(c);
  rp.on_cnp(0);
  rp.advance(40 * kMs);  // one decrease, then ~50 increase events 300 us apart
  EXPECT_TRUE(rp.recovered());
  EXPECT_EQ(rp.rate(), kLine);
  EXPECT_EQ(rp.next_event(), kNever);

  // A CNP at 50 ms + 10 ns: alpha updates stay on whole microseconds, the decrease checks on
  // 4 us + 1 ns multiples, so the cut comes at 50.004 ms + 1 ns with α flagged at 50.001 ms.
  rp.on_cnp(50 * kMs + 10 * kNs);
  EXPECT_FALSE(rp.recovered());
  EXPECT_EQ(rp.next_event(), 50 * kMs + 1 * kUs);
  rp.advance(50 * kMs + 4 * kUs);
  EXPECT_EQ(rp.rate(), kLine);
  rp.advance(50 * kMs + 4 * kUs + 1 * kNs);
  const double a = std::pow(1 - g, 3) * ((1 - g) * std::pow(1 - g, 50000) + g);
  expect_close(rp.alpha(), a, "α: 50000 decays, one flagged update, three decays");
  expect_close(rp.rate(), kLine * (1 - a / 2), "the cut at the check's own phase");
  EXPECT_EQ(rp.stats().decreases, 2u);
}

TEST(DcqcnReactionPoint, TimeGoingBackwardsIsRefused) {
  DcqcnReactionPoint rp(DcqcnConfig::paper(kLine));
  rp.advance(10 * kUs);
  EXPECT_THROW(rp.on_cnp(9 * kUs), std::logic_error);
  EXPECT_THROW(rp.on_sent(1, 9 * kUs), std::logic_error);
  EXPECT_NO_THROW(rp.on_cnp(10 * kUs));
}

TEST(DcqcnNotificationPoint, OneCnpPerIntervalPerFlow) {
  const DcqcnConfig c = DcqcnConfig::paper(kLine);
  ASSERT_EQ(c.cnp_interval, 50 * kUs);
  DcqcnNotificationPoint np(c);
  EXPECT_FALSE(np.on_data(false, 0));
  EXPECT_TRUE(np.on_data(true, 1 * kUs));
  EXPECT_FALSE(np.on_data(true, 2 * kUs));
  EXPECT_FALSE(np.on_data(true, 51 * kUs - 1));
  EXPECT_FALSE(np.on_data(false, 60 * kUs)) << "an unmarked packet never asks for a CNP";
  EXPECT_TRUE(np.on_data(true, 61 * kUs)) << "the interval counts from the last CNP";
  EXPECT_FALSE(np.on_data(true, 110 * kUs));
  EXPECT_TRUE(np.on_data(true, 111 * kUs));
  EXPECT_EQ(np.cnps(), 3u);
  EXPECT_EQ(np.marked(), 6u);

  DcqcnNotificationPoint every(DcqcnConfig::mlx(kLine));  // interval 0
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(every.on_data(true, 100 * kUs));
  EXPECT_FALSE(every.on_data(false, 100 * kUs));
  EXPECT_EQ(every.cnps(), 5u);
}

TEST(DcqcnConfig, ProfilesCarryTheirSourcesValues) {
  const DcqcnConfig p = profile("paper", 100e9);
  EXPECT_EQ(p.line_bps, 100e9);
  EXPECT_EQ(p.g, 1.0 / 256);
  EXPECT_EQ(p.alpha_period, 55 * kUs);
  EXPECT_EQ(p.increase_period, 55 * kUs);
  EXPECT_EQ(p.byte_counter, 10'000'000u);
  EXPECT_EQ(p.fast_recovery_steps, 5);
  EXPECT_EQ(p.rai_bps, 40e6);
  EXPECT_EQ(p.rhai_bps, 200e6);
  EXPECT_TRUE(p.clamp_target);
  EXPECT_EQ(p.rate_on_first_cnp, 1.0);
  EXPECT_EQ(p.rate_decrease_interval, 0u);
  EXPECT_EQ(p.cnp_interval, 50 * kUs);
  EXPECT_FALSE(p.mlx_variant());

  const DcqcnConfig m = profile("mlx", 50e9);  // run.py's default --bw 50: AI 10, HAI 100 Mb/s
  EXPECT_EQ(m.g, 1.0 / 256);
  EXPECT_EQ(m.alpha_period, 1 * kUs);
  EXPECT_EQ(m.rate_decrease_interval, 4 * kUs);
  EXPECT_EQ(m.increase_period, 300 * kUs);
  EXPECT_EQ(m.byte_counter, 0u);
  EXPECT_EQ(m.fast_recovery_steps, 1);
  EXPECT_FALSE(m.clamp_target);
  EXPECT_EQ(m.rate_on_first_cnp, 1.0);
  EXPECT_EQ(m.min_rate_bps, 1000e6);
  EXPECT_DOUBLE_EQ(m.rai_bps, 10e6);
  EXPECT_DOUBLE_EQ(m.rhai_bps, 100e6);
  EXPECT_EQ(m.cnp_interval, 0u);
  EXPECT_TRUE(m.mlx_variant());

  for (double line : {25e9, 100e9, 400e9, 800e9}) {
    EXPECT_NO_THROW(profile("paper", line).validate());
    EXPECT_NO_THROW(profile("mlx", line).validate());
  }
  try {
    profile("hpcc", 100e9);
    ADD_FAILURE() << "an unknown profile was accepted";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "nic.dcqcn.profile = hpcc: allowed paper, mlx");
  }
}

TEST(DcqcnConfig, ValidateNamesKeyValueAndWhatIsAllowed) {
  const DcqcnConfig ok = DcqcnConfig::paper(kLine);
  EXPECT_EQ(config_error(ok), "(no error)");
  auto with = [&](auto change) {
    DcqcnConfig c = ok;
    change(c);
    return config_error(c);
  };
  EXPECT_EQ(with([](DcqcnConfig& c) { c.rai_bps = -1; }), "nic.dcqcn.rai_bps = -1: allowed > 0");
  EXPECT_EQ(with([](DcqcnConfig& c) { c.rhai_bps = 0; }), "nic.dcqcn.rhai_bps = 0: allowed > 0");
  EXPECT_EQ(with([](DcqcnConfig& c) { c.line_bps = 0; }), "nic.dcqcn.line_bps = 0: allowed > 0");
  EXPECT_EQ(with([](DcqcnConfig& c) { c.g = 0; }), "nic.dcqcn.g = 0: allowed (0, 1]");
  EXPECT_EQ(with([](DcqcnConfig& c) { c.g = 1.5; }), "nic.dcqcn.g = 1.5: allowed (0, 1]");
  EXPECT_EQ(with([](DcqcnConfig& c) { c.alpha_period = 0; }), "nic.dcqcn.alpha_period = 0: allowed > 0");
  EXPECT_EQ(with([](DcqcnConfig& c) { c.increase_period = 0; }), "nic.dcqcn.increase_period = 0: allowed > 0");
  EXPECT_EQ(with([](DcqcnConfig& c) { c.fast_recovery_steps = -1; }),
            "nic.dcqcn.fast_recovery_steps = -1: allowed >= 0");
  EXPECT_EQ(with([](DcqcnConfig& c) { c.rate_on_first_cnp = 0; }),
            "nic.dcqcn.rate_on_first_cnp = 0: allowed (0, 1]");
  EXPECT_EQ(with([](DcqcnConfig& c) { c.min_rate_bps = 0; }),
            "nic.dcqcn.min_rate_bps = 0: allowed (0, 1e+11] (line_bps x rate_on_first_cnp)");
  EXPECT_EQ(with([](DcqcnConfig& c) {
              c.rate_on_first_cnp = 0.5;
              c.min_rate_bps = 60e9;
            }),
            "nic.dcqcn.min_rate_bps = 6e+10: allowed (0, 5e+10] (line_bps x rate_on_first_cnp)");
  DcqcnConfig bad = ok;
  bad.g = 2;
  EXPECT_EQ(config_error(bad, "port3.dcqcn"), "port3.dcqcn.g = 2: allowed (0, 1]");
  EXPECT_THROW(DcqcnReactionPoint{bad}, ConfigError);
  EXPECT_THROW(DcqcnNotificationPoint{bad}, ConfigError);
}

}  // namespace
}  // namespace xy::nic
