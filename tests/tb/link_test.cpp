// link-llr: two ports with LLR over lossy lines, one simulation per process.
#include <gtest/gtest.h>

#include "tests/tb/run_quiet.hpp"
#include "kernel/config.hpp"

namespace xy {
namespace {

RunResult run(std::vector<std::string> sets) { return testing::run_quiet("link-llr", std::move(sets)); }
RunResult run_cbfc(std::vector<std::string> sets) { return testing::run_quiet("link-cbfc", std::move(sets)); }

TEST(LinkLlr, ZeroErrorGoodputIsTheLineRateLessTheAccountedOverheads) {
  const RunResult r = run({"traffic.min_bytes=1000", "traffic.max_bytes=1000", "traffic.frames=50000"});
  ASSERT_EQ(r.failure, "");
  const auto& s = r.results["summary"];
  const auto& o = s["overhead"];
  // Line bytes = frames x (1000, FCS included, + 4 LLR header + 8 preamble + 12 gap) + control sets x 8.
  EXPECT_EQ(o["line_bytes"].get<std::uint64_t>(),
            o["frames_sent"].get<std::uint64_t>() * 1024 + o["control_sets"].get<std::uint64_t>() * 8);
  EXPECT_EQ(o["frame_bytes_delivered"].get<std::uint64_t>(), 2u * 50000u * 1000u);
  // Measured over the run (start-up handshake and the last frame's flight included: < 0.5 %).
  EXPECT_NEAR(s["goodput_Gbps"].get<double>(), o["goodput_at_full_line_Gbps"].get<double>(),
              0.005 * o["goodput_at_full_line_Gbps"].get<double>());
  EXPECT_EQ(s["replays"], 0u);
  // And exactly, over the time port a's line carried frames: every byte accounted for.
  const auto& w = s["line_a_to_b"];
  EXPECT_EQ(w["busy_line_bytes"].get<std::uint64_t>(),
            w["frame_line_bytes"].get<std::uint64_t>() + w["control_bytes"].get<std::uint64_t>());
  EXPECT_DOUBLE_EQ(w["measured_goodput_Gbps"].get<double>(), w["accounted_goodput_Gbps"].get<double>());
}

// A replay whose first frame is corrupted again is one more replay without progress; with
// llr.replay_limit = 3 the fourth is a FLUSH, so a loss event ends in one with chance p^3: at
// 5e-2 that is 1.25e-4 per lost frame, about 1.5 FLUSHes over the ~12,000 replays of 60,000
// frames each way; at 1e-2, 0.01. A FLUSHed frame is the named outcome: the layer above owns it.
void expect_go_back_n(const std::string& loss, bool flushes_likely) {
  const RunResult r = run({"link.frame_error=" + loss, "traffic.frames=60000"});
  ASSERT_EQ(r.failure, "");  // every frame delivered once, in order, unchanged, or flushed
  const auto& s = r.results["summary"];
  const double measured = s["goodput_ratio"].get<double>(), analytic = s["gbn_efficiency"].get<double>();
  EXPECT_NEAR(measured, analytic, 0.05 * analytic) << "loss " << loss;
  EXPECT_GT(s["replays"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(s["frames_lost"], s["flushed_frames"]);
  if (!flushes_likely) {
    EXPECT_EQ(s["frames_lost"], 0u);
  }
}

TEST(LinkLlr, GoodputFollowsGoBackNAtOnePerMille) { expect_go_back_n("1e-3", false); }
TEST(LinkLlr, GoodputFollowsGoBackNAtOnePercent) { expect_go_back_n("1e-2", false); }
TEST(LinkLlr, GoodputFollowsGoBackNAtFivePercent) { expect_go_back_n("5e-2", true); }

// 8-bit sequence numbers: 20000 frames wrap them 78 times.
TEST(LinkLlr, BurstsOfOneHundredCorruptedFramesAcrossWrapsLoseNothing) {
  const RunResult r = run({"llr.seq_bits=8", "link.burst_start=2e-4", "link.burst_frames=100", "traffic.frames=20000"});
  ASSERT_EQ(r.failure, "");
  EXPECT_GT(r.results["summary"]["replays"].get<std::uint64_t>(), 0u);
}

TEST(LinkLlr, ALinkFlapAndLostControlSetsLoseNothing) {
  const RunResult r = run({"llr.seq_bits=8", "link.flap_at_us=20", "link.flap_us=3", "link.control_loss=0.01",
                           "link.frame_error=1e-3", "traffic.frames=20000"});
  ASSERT_EQ(r.failure, "");
  const auto& st = r.results["stats"];
  EXPECT_GT(st["top.a.line.dark_items"]["value"].get<std::uint64_t>(), 0u);
  EXPECT_GT(st["top.a.line.lost_control_frames"]["value"].get<std::uint64_t>(), 0u);
}

TEST(LinkLlr, WithoutRecoveryCorruptedFramesAreLost) {
  const RunResult off = run({"link.recovery=none", "link.frame_error=1e-3", "traffic.frames=20000"});
  ASSERT_EQ(off.failure, "");
  EXPECT_GT(off.results["summary"]["frames_lost"].get<std::uint64_t>(), 0u);  // the layer above must recover them
}

TEST(LinkLlr, EndToEndRecoveryLosesNothingButItsTailIsFarLonger) {
  const RunResult e2e = run({"link.recovery=e2e", "link.frame_error=1e-2", "traffic.frames=30000"});
  ASSERT_EQ(e2e.failure, "");
  EXPECT_EQ(e2e.results["summary"]["frames_lost"], 0u);
  // Per hop, a replay costs ~1.4 loop times of this link (~0.5 us); end to end, one 8 us round trip.
  EXPECT_GT(e2e.results["summary"]["latency_p99_ns"].get<double>(), 5000.0);
}

TEST(LinkLlr, LlrOnA300KmLinkIsRefused) {
  try {
    run({"link.cable_m=300000"});
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("LLR is for short reach"), std::string::npos) << e.what();
  }
}

TEST(LinkCbfc, ASlowReceiverStallsTheSenderAndItsBufferNeverOverflows) {
  const RunResult r = run_cbfc({"traffic.frames=10000", "cbfc.buffer_credits=512"});
  ASSERT_EQ(r.failure, "");  // the receiver checks its buffer on every frame
  const auto& s = r.results["summary"];
  EXPECT_EQ(s["frames_received"], 10000u);
  EXPECT_GT(s["stall_cycles"].get<std::uint64_t>(), 0u);
  for (const auto& peak : s["peak_buffer_bytes"]) EXPECT_LE(peak.get<std::uint64_t>(), 512u * 128u);
  EXPECT_NEAR(s["goodput_Gbps"].get<double>(), 400.0, 4.0);  // the receiver's drain rate
  EXPECT_TRUE(s["credits_restored"].get<bool>());
}

TEST(LinkCbfc, LostFramesAndLostUpdatesAreResynchronisedAcrossCounterWraps) {
  // 12-bit counters wrap every 4096 credits; 10000 frames of ~6 credits wrap them ~15 times.
  const RunResult r = run_cbfc({"traffic.frames=10000", "cbfc.counter_bits=12", "cbfc.buffer_credits=1000",
                                "link.frame_loss=1e-3", "link.update_loss=0.3", "cbfc.resync_us=20"});
  ASSERT_EQ(r.failure, "");
  const auto& s = r.results["summary"];
  EXPECT_GT(s["frames_lost"].get<std::uint64_t>(), 0u);
  EXPECT_GT(s["updates_lost"].get<std::uint64_t>(), 0u);
  EXPECT_TRUE(s["credits_restored"].get<bool>());  // CC_Updates gave back what the losses took
}

TEST(LinkCbfc, AWarmUpRestartsTheStatsButNotTheCountOfLostFrames) {
  // The check counts every frame of the run, lost or received, whatever the warm-up reset.
  const RunResult r = run_cbfc({"traffic.frames=3000", "link.frame_loss=0.01", "sim.warmup_us=5"});
  EXPECT_EQ(r.failure, "");
}

TEST(LinkCbfc, PfcPausesTheSenderWithinItsHeadroom) {
  const RunResult r = run_cbfc({"fc.mode=pfc", "traffic.frames=10000"});
  ASSERT_EQ(r.failure, "");
  const auto& s = r.results["summary"];
  EXPECT_GT(s["pause_frames"].get<std::uint64_t>(), 0u);
  for (const auto& peak : s["peak_buffer_bytes"]) EXPECT_LE(peak.get<std::uint64_t>(), 131072u);
}

TEST(LinkCbfc, WithoutFlowControlTheReceiverBufferGrowsWithoutBound) {
  const RunResult r = run_cbfc({"fc.mode=none", "traffic.frames=10000"});
  ASSERT_EQ(r.failure, "");
  EXPECT_GT(r.results["summary"]["peak_buffer_bytes"][0].get<std::uint64_t>(), 500000u);
}

}  // namespace
}  // namespace xy
