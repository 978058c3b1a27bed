// The composed Lingyun system: one frame's stage times against arithmetic written here, and the
// seed's FEC + LLR claim's bookkeeping (every replay traced to a damaged frame, nothing lost).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>

#include "tests/tb/run_quiet.hpp"

namespace xy {
namespace {

constexpr double kLaneGbps = 106.25;
constexpr int kLanes = 8;
constexpr double kPhyCycleNs = 40 / kLaneGbps;  // 40 bits a lane a cycle

double stage(const nlohmann::json& fabric, const std::string& name) {
  return fabric["breakdown"][name + "_ns"].get<double>();
}

// A load's request crosses two hops (GPU 0 -> switch -> GPU 1): each stage sums both.
TEST(LingyunPort, EveryStageOfARequestMatchesTheArithmeticOfItsHop) {
  const RunResult r = testing::run_quiet("olink-latency", {"olink.loads=3"});
  ASSERT_EQ(r.failure, "");
  for (const char* fabric : {"olink-rs544", "olink-rs272"}) {
    const auto& f = r.results["summary"][fabric];
    const bool kp4 = std::string(fabric) == "olink-rs544";
    SCOPED_TRACE(fabric);
    // A codeword group at 800G: four RS(544,514) words (802.3df: two 400G flows of two), 21760
    // bits, or two interleaved RS(272,258) words, 5440 bits: the RX gathers it at 8 x 106.25
    // Gb/s. (Within 1e-4 ns: clock periods are whole femtoseconds.)
    const double group_bits = kp4 ? 4 * 5440 : 2 * 2720;
    EXPECT_NEAR(stage(f, "request.fec_accumulate"), 2 * group_bits / (kLanes * kLaneGbps), 1e-4);
    // PMA TX 10 ns + 2 m of cable at 5 ns/m + PMA RX 10 ns + 1 ns of lane skew, rounded up to a cycle.
    EXPECT_NEAR(stage(f, "request.pma_cable"), 2 * 31.0, 2 * kPhyCycleNs);
    EXPECT_GE(stage(f, "request.pma_cable"), 2 * 31.0);
    EXPECT_NEAR(stage(f, "request.fec_decode"), 2 * (kp4 ? 50.0 : 25.0), 2 * kPhyCycleNs);
    EXPECT_NEAR(stage(f, "request.fec_encode"), 2 * (kp4 ? 5.0 : 3.0), 2 * kPhyCycleNs);
    // The MAC and PCS pipelines of each hop, FEC apart (issue 23, defect 4): AMD PG211's 50G
    // MAC+PCS, 10 cycles TX and 23 RX at 390.625 MHz, whole cycles of the PHY clock.
    EXPECT_NEAR(stage(f, "request.mac_pcs_tx"), 2 * 10 / 0.390625, 2 * kPhyCycleNs);
    EXPECT_NEAR(stage(f, "request.mac_pcs_rx"), 2 * 23 / 0.390625, 2 * kPhyCycleNs);
    EXPECT_GE(stage(f, "response.mac_pcs_rx"), 2 * 58.8);
    // The frame waits for the codeword group that carries its last block: at most one group
    // (68 or 17 cycles) plus its own blocks; a frame always waits for some of its bits.
    EXPECT_GT(stage(f, "request.serialize"), 0);
    EXPECT_LE(stage(f, "request.serialize"), 2 * ((kp4 ? 68 : 17) + 4) * kPhyCycleNs);
    // Measured figures carry their provenance.
    EXPECT_EQ(f["provenance"]["request.serialize_ns"], "measured");
    EXPECT_EQ(f["provenance"]["request.pma_cable_ns"], "configured");
    // The load less every stage is what is left, not a measurement (issue 23, defect 8).
    EXPECT_EQ(f["provenance"]["endpoint_other_ns"], "residual");
  }
}

// 5 ns per metre: 100 m cables on both hops of a request.
TEST(LingyunPort, LongerCablesAddFiveNanosecondsAMetreToEveryHop) {
  const RunResult r = testing::run_quiet("olink-latency", {"olink.loads=3", "topology.cable_m=100"});
  ASSERT_EQ(r.failure, "");
  const auto& f = r.results["summary"]["olink-rs544"];
  EXPECT_NEAR(stage(f, "request.pma_cable"), 2 * (10 + 100 * 5.0 + 10 + 1), 2 * kPhyCycleNs);
  EXPECT_NEAR(stage(f, "response.pma_cable"), 2 * (10 + 100 * 5.0 + 10 + 1), 2 * kPhyCycleNs);
}

// A topology file may give a link its own FEC: GPU 0's link the light code, GPU 1's KP4. The
// request crosses one of each: 25 + 50 ns of decoder pipelines, for both OLink fabrics alike.
TEST(LingyunPort, ALinkOfATopologyFileTakesItsOwnFec) {
  const std::string file = ::testing::TempDir() + "mixed_fec.yaml";
  std::ofstream(file) << "switches:\n  sw0: {ports: 2}\nendpoints: 2\nlinks:\n"
                         "  - {a: e0, b: sw0, fec: rs272}\n  - {a: e1, b: sw0, fec: rs544}\n";
  const RunResult r = testing::run_quiet("olink-latency", {"olink.loads=2", "topology=" + file});
  ASSERT_EQ(r.failure, "");
  for (const char* fabric : {"olink-rs544", "olink-rs272"})
    EXPECT_NEAR(stage(r.results["summary"][fabric], "request.fec_decode"), 25.0 + 50.0, 2 * kPhyCycleNs) << fabric;
}

TEST(LingyunPort, OlinkLatencyRunsOnALeafSpineWithThreeSwitchesOnThePath) {
  const RunResult r = testing::run_quiet("olink-latency", {"olink.loads=2", "topology=leaf-spine"});
  ASSERT_EQ(r.failure, "");
  const auto& f = r.results["summary"]["olink-rs544"];
  // Four hops each way now: four codeword groups of four words gathered per direction.
  EXPECT_NEAR(stage(f, "request.fec_accumulate"), 4 * 4 * 5440 / (kLanes * kLaneGbps), 1e-3);
}

TEST(LingyunFecLlr, AtBer1e5EveryBadFrameIsOneThePhyDamagedAndLlrLosesNothing) {
  const RunResult r = testing::run_quiet("lingyun-fec-llr", {"port.errors.ber=1e-5", "traffic.us=10"});
  ASSERT_EQ(r.failure, "");
  const auto& s = r.results["summary"];
  for (const char* d : {"rs272_llr", "none_llr"}) {
    SCOPED_TRACE(d);
    EXPECT_EQ(s[d]["frames_lost_after_recovery"].get<std::uint64_t>(), 0u);
    EXPECT_EQ(s[d]["frames_delivered"], s[d]["frames_sent"]);
  }
  for (const char* d : {"rs544", "rs272_llr", "none_llr"})
    EXPECT_EQ(s[d]["frames_bad_fcs"], s[d]["frames_marked_bad_by_phy"]) << d;
  // Without FEC a 5140-bit codeword survives 1e-5 with probability (1 - 1e-5)^5140: about 5 %
  // fail, so frames are damaged and replayed.
  EXPECT_GT(s["none_llr"]["llr_replays"].get<std::uint64_t>(), 0u);
  EXPECT_GT(s["none_llr"]["frames_bad_fcs"].get<std::uint64_t>(), 0u);
  const double ber = s["none_llr"]["pre_fec_ber_measured"].get<double>();
  EXPECT_NEAR(ber, 1e-5, 2e-6);
}

// Every delivered frame of lingyun-fec-llr crosses four hops (host, leaf, spine, leaf, host): its
// stages, mean over the frames, against the arithmetic of those hops.
TEST(LingyunFecLlr, EveryFrameCrossesFourComposedHops) {
  const RunResult r = testing::run_quiet("lingyun-fec-llr", {"traffic.us=10"});
  ASSERT_EQ(r.failure, "");
  const auto& s = r.results["summary"];
  for (const char* d : {"rs544", "rs272_llr", "none_llr"}) {
    SCOPED_TRACE(d);
    const auto& path = s[d]["path"];
    // Four codeword groups gathered at 8 x 106.25 Gb/s: KP4's of four words (802.3df), 21760 bits;
    // RS(272)'s of two, 5440 bits; none's 5140 bits padded to whole 320-bit cycles, 17 cycles, the
    // same as 5440.
    const double group_bits = std::string(d) == "rs544" ? 4 * 5440 : 5440;
    EXPECT_NEAR(path["fec_accumulate_ns"].get<double>(), 4 * group_bits / (kLanes * kLaneGbps), 1e-3);
    // PMA 10 + 10 ns, 1 ns of skew, and 5 ns/m: two 2 m host cables and two 10 m spine cables.
    const double pma_cable = 4 * 21.0 + 5.0 * (2 + 2 + 10 + 10);
    EXPECT_NEAR(path["pma_cable_ns"].get<double>(), pma_cable, 4 * kPhyCycleNs);
    EXPECT_GT(path["serialize_ns"].get<double>(), 0);
    EXPECT_GT(path["switch_ns"].get<double>(), 0);
  }
  EXPECT_NEAR(s["rs544"]["path"]["fec_decode_ns"].get<double>(), 4 * 50.0, 4 * kPhyCycleNs);
  EXPECT_NEAR(s["rs272_llr"]["path"]["fec_decode_ns"].get<double>(), 4 * 25.0, 4 * kPhyCycleNs);
}

// KP4 without LLR at BER 1e-3: a few codewords beyond its 15 correctable symbols lose frames on
// their hop; the hosts' Go-Back-N resends them (and what followed them), and every frame arrives.
TEST(LingyunFecLlr, EndToEndRecoveryResendsWhatKp4LostOnItsHops) {
  const RunResult r = testing::run_quiet("lingyun-fec-llr", {"port.errors.ber=1e-3", "fec_llr.design=rs544"});
  ASSERT_EQ(r.failure, "");
  const auto& d = r.results["summary"]["rs544"];
  EXPECT_GT(d["frames_lost_on_links"].get<std::uint64_t>(), 0u);
  EXPECT_GE(d["e2e_resent"].get<std::uint64_t>(), d["frames_lost_on_links"].get<std::uint64_t>());
  EXPECT_EQ(d["frames_delivered"], d["frames_sent"]);
  EXPECT_EQ(d["frames_lost_after_recovery"].get<std::uint64_t>(), 0u);
}

// The hosts' Go-Back-N never gives up: a link dark for 600 us (every link of the path flaps,
// LLR flushes what it held) outlasts 1000 retransmit timeouts of 0.5 us (500 us), after which the
// transport used to drop its frames uncounted; once the link is back every frame arrives.
TEST(LingyunFecLlr, EndToEndRecoveryOutlastsAFlapOfAThousandTimeouts) {
  const RunResult r = testing::run_quiet(
      "lingyun-fec-llr", {"fec_llr.design=rs272_llr", "port.errors.ber=0", "e2e.rto_us=0.5", "port.link_down_at_us=8",
                          "port.link_down_us=600", "traffic.us=10"});
  ASSERT_EQ(r.failure, "");
  const auto& d = r.results["summary"]["rs272_llr"];
  EXPECT_GT(d["frames_lost_on_links"].get<std::uint64_t>(), 0u);  // LLR flushed during the flap
  EXPECT_EQ(d["frames_delivered"], d["frames_sent"]);
}

// Claim C3 on composed ports. R's port runs at its line (800 Gb/s less the part of each beat a
// frame leaves empty: over 90 %) whatever the flow control. A victim on its own VC gets what it
// offers (half a line, over 90 % of 400 Gb/s); on the incast's VC it waits in the same queue of
// leaf0's uplink as A, so it gets what A gets (within 15 %), far less than it offers.
TEST(LingyunIncast, AVictimOnItsOwnVcGetsItsLoadOnTheIncastsVcItGetsWhatTheIncastSenderBesideItGets) {
  const RunResult r = testing::run_quiet("lingyun-incast", {});
  ASSERT_EQ(r.failure, "");
  const auto& s = r.results["summary"];
  for (const char* fc : {"cbfc", "pfc", "none"})
    for (const char* vc : {"own_vc", "shared_vc"}) {
      const auto& row = s[std::string(fc) + "_" + vc];
      SCOPED_TRACE(std::string(fc) + " " + vc);
      EXPECT_LE(row["incast_gbps"].get<double>(), 800.0);
      EXPECT_GE(row["incast_gbps"].get<double>(), 0.9 * 800);
    }
  for (const char* fc : {"cbfc", "pfc"}) {
    SCOPED_TRACE(fc);
    const auto& own = s[std::string(fc) + "_own_vc"];
    const auto& shared = s[std::string(fc) + "_shared_vc"];
    EXPECT_GE(own["victim_gbps"].get<double>(), 0.9 * 400);
    EXPECT_NEAR(shared["victim_gbps"].get<double>(), shared["incast_from_a_gbps"].get<double>(),
                0.15 * shared["incast_from_a_gbps"].get<double>());
    EXPECT_LT(shared["victim_gbps"].get<double>(), 0.6 * 400);
  }
}

// Uniform traffic at half load on a non-blocking fabric of composed ports: what is offered is
// accepted (the fabric's bisection carries every host's half line) and nothing is lost.
class SwitchUniformOnTopology : public ::testing::TestWithParam<const char*> {};

TEST_P(SwitchUniformOnTopology, AcceptsHalfLoadAndLosesNothing) {
  const RunResult r =
      testing::run_quiet("switch-uniform", {std::string("topology=") + GetParam(), "uniform.load=0.5"});
  ASSERT_EQ(r.failure, "");
  const auto& point = r.results["summary"]["curve"][0];
  EXPECT_NEAR(point["accepted_load"].get<double>(), 0.5, 0.025);
  EXPECT_EQ(point["drops"].get<std::uint64_t>(), 0u);
  EXPECT_NE(r.results["summary"]["topology"].get<std::string>().find(GetParam()), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Presets, SwitchUniformOnTopology, ::testing::Values("single", "leaf-spine", "dual-plane"),
                         [](const auto& info) {
                           std::string n = info.param;
                           n.erase(std::remove(n.begin(), n.end(), '-'), n.end());
                           return n;
                         });

// A CC_Update every 0.3 us on saturated links always has frames it counted still on their way:
// it must not overtake them (the receiver would count their credits twice). Conservation: a
// receiver never counts more credits in than its sender consumed (the scenario checks it).
TEST(LingyunFecLlr, CreditResyncsOnBusyLinksCountNoFrameTwice) {
  const RunResult r = testing::run_quiet(
      "lingyun-fec-llr", {"cbfc.resync_us=0.3", "traffic.load=1", "cbfc.buffer_credits=640", "traffic.us=10"});
  EXPECT_EQ(r.failure, "");
  EXPECT_GT(r.results["stats"]["top.rs544.e0.port0.fc.cbfc.cc_updates"]["value"].get<std::uint64_t>(), 20u);
}

// Without FEC at a pre-FEC BER of 1e-4 about 40 % of the codewords fail: LLR gives frames up,
// the credits they took come back only with a CC_Update, and the design stops moving. That is
// its outcome, reported with what holds it, while the FEC designs beside it deliver every frame.
TEST(LingyunFecLlr, NoFecAtOneInTenThousandStallsAndIsReportedSo) {
  const RunResult r = testing::run_quiet("lingyun-fec-llr", {"port.errors.ber=1e-4", "traffic.us=50"});
  ASSERT_EQ(r.failure, "");
  const auto& s = r.results["summary"];
  EXPECT_EQ(s["none_llr"]["outcome"], "stalled");
  EXPECT_NE(s["none_llr"]["stall"].get<std::string>().find("credits held at"), std::string::npos);
  EXPECT_LT(s["none_llr"]["frames_delivered"].get<std::uint64_t>(), s["none_llr"]["frames_sent"].get<std::uint64_t>());
  for (const char* d : {"rs544", "rs272_llr"}) {
    EXPECT_EQ(s[d]["outcome"], "delivered") << d;
    EXPECT_EQ(s[d]["frames_delivered"], s[d]["frames_sent"]) << d;
  }
}

// Claim C3's deadlock. Each ring link carries two hosts' traffic, 2 x 0.8 of its line: the
// five ring links' buffers fill, each waiting on the next, and the fabric names that cycle, every
// ring port once; on alternate VCs the waits end at a neighbour on the other VC and every frame
// arrives. At 0.3 (0.6 of each ring link) nothing waits for long and all arrive.
TEST(LingyunDeadlock, OneVcOnARingDeadlocksWithItsCycleNamedAlternateVcsDoNot) {
  const RunResult r = testing::run_quiet("lingyun-deadlock", {});
  ASSERT_EQ(r.failure, "");  // a deadlock is an outcome; losing a frame would fail the run
  const auto& s = r.results["summary"];
  for (const char* fc : {"cbfc", "pfc"}) {
    SCOPED_TRACE(fc);
    const auto& one = s[std::string(fc) + "_one_vc"];
    EXPECT_EQ(one["outcome"], "deadlock");
    EXPECT_GT(one["frames_held"].get<std::uint64_t>(), 0u);
    const std::string cycle = one["cycle"];
    for (int i = 0; i < 5; ++i)  // s_i's port toward s_(i+1): port 1 on s0 (its first ring link), else port 2
      EXPECT_NE(cycle.find(fmt::format("top.{}_one_vc.s{}.port{} VC 0", fc, i, i == 0 ? 1 : 2)), std::string::npos) << cycle;
    EXPECT_EQ(s[std::string(fc) + "_alternate_vcs"]["outcome"], "delivered");
  }
}

TEST(LingyunDeadlock, ARingBelowItsLinksRateDeliversEverything) {
  const RunResult r = testing::run_quiet("lingyun-deadlock", {"deadlock.load=0.3"});
  ASSERT_EQ(r.failure, "");
  for (const auto& [name, row] : r.results["summary"].items())
    if (row.is_object()) EXPECT_EQ(row["outcome"], "delivered") << name;
}

}  // namespace
}  // namespace xy
