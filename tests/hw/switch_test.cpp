// The Lingyun switch's scenarios, one simulation per process.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/hw/run_quiet.hpp"
#include "tests/test_util.hpp"

namespace xy {
namespace {

TEST(SwitchLatency, ZeroLoadLatencyIsTheSumOfTheStagesExactly) {
  const RunResult r = testing::run_quiet("switch-latency", {});
  ASSERT_EQ(r.failure, "");  // the scenario asserts every sample against the stage sum
  const auto& s = r.results["summary"];
  const auto sum = s["stage_sum_cycles"].get<Cycle>();
  for (const char* bytes : {"64", "1500", "9216"})
    EXPECT_EQ(s["cut_through"][bytes]["port_to_port_cycles"].get<Cycle>(), sum) << bytes;
  // Store-and-forward waits for the whole packet: 9216 B at 64 B per cycle is 144 beats.
  EXPECT_EQ(s["store_and_forward"]["9216"]["port_to_port_cycles"].get<Cycle>(), sum + 143);
  EXPECT_NEAR(s["cut_through"]["64"]["port_to_port_ns"].get<double>(), 221.44, 0.01);  // beside 250 ns anchors
}

TEST(SwitchLatency, StagesComeFromTheConfiguration) {
  const RunResult r = testing::run_quiet("switch-latency", {"switch.lat.parse=1", "switch.lat.crossbar=50"});
  ASSERT_EQ(r.failure, "");
  EXPECT_EQ(r.results["summary"]["stage_sum_cycles"].get<Cycle>(), 346u - 19u + 30u);
}

// Stopped before every size has crossed: the report shows "-" for those (it read a missing key of
// the summary).
TEST(SwitchLatency, ARunStoppedEarlyReportsOnlyTheSizesMeasured) {
  const RunResult r = testing::run_quiet("switch-latency", {"sim.max_time_us=2"});
  EXPECT_NE(r.failure.find("not finished"), std::string::npos) << r.failure;
  EXPECT_FALSE(r.results["summary"].contains(nlohmann::json::json_pointer("/store_and_forward/9216")));
  EXPECT_NE(r.report.find(" -\n"), std::string::npos) << r.report;
}

// Arbiter and crossbar both 0 would hand a packet to the egress in the cycle it crosses, which
// the egress core cannot take: refused as bad input.
TEST(SwitchLatency, ZeroCyclesFromCrossbarToEgressIsRefused) {
  EXPECT_THROW(testing::run_quiet("switch-latency", {"switch.lat.arbiter=0", "switch.lat.crossbar=0"}), ConfigError);
}

TEST(SwitchUniform, AcceptsWhatIsOfferedUpTo95PercentWithISlipAndLosesNothing) {
  xy::testing::TempDir dir;
  RunOptions o;
  o.scenario = "switch-uniform";
  o.sets = {"uniform.points=20", "uniform.warmup_cycles=2000", "uniform.measure_cycles=8000"};
  o.quiet = true;
  o.out_dir = dir.file("out");
  const RunResult r = run_scenario(o);
  ASSERT_EQ(r.failure, "");  // in order per source, buffer accounting exact
  for (const auto& row : r.results["summary"]["curve"]) {
    const double offered = row["offered_load"].get<double>(), accepted = row["accepted_load"].get<double>();
    if (offered <= 0.95 + 1e-9) EXPECT_GE(accepted, 0.95 * offered) << "offered " << offered;
    EXPECT_EQ(row["drops"].get<std::uint64_t>(), 0u);
  }
  std::ifstream csv(dir.file("out") + "/switch_uniform.csv");
  std::string header;
  std::getline(csv, header);
  EXPECT_EQ(header, "offered_load,accepted_load,latency_p50_ns,latency_p99_ns,latency_max_ns,drops");
  int rows = 0;
  for (std::string line; std::getline(csv, line);) ++rows;
  EXPECT_EQ(rows, 20);
}

}  // namespace
}  // namespace xy

namespace xy {
namespace {

TEST(SwitchEcmp, HashingCollidesFlowsOnALinkWhileSprayingSpreadsThem) {
  const RunResult r = testing::run_quiet("switch-ecmp", {"ecmp.packets=500"});
  ASSERT_EQ(r.failure, "");  // every packet of every flow exactly once, no drops
  const auto& s = r.results["summary"];
  EXPECT_GE(s["ecmp-crc32"]["flows_on_worst_link"].get<int>(), 5);  // claim C12: 5 of 32 on one link
  EXPECT_GT(s["ecmp-toeplitz"]["flows_on_worst_link"].get<int>(), 4);
  EXPECT_LE(s["spray"]["max_over_mean_link_load"].get<double>(), 1.1);
  EXPECT_LT(s["spray"]["completion_max_us"].get<double>(), s["ecmp-crc32"]["completion_max_us"].get<double>());
}

}  // namespace
}  // namespace xy

namespace xy {
namespace {

TEST(SwitchAllreduce, InNetworkReduceIsFasterAndEveryEndpointHoldsTheSameBits) {
  const RunResult r = testing::run_quiet("switch-allreduce", {});
  ASSERT_EQ(r.failure, "");  // every endpoint's result equal to endpoint 0's, in both variants
  const auto& s = r.results["summary"];
  EXPECT_LT(s["in_network"]["time_us"].get<double>(), s["ring"]["time_us"].get<double>());
  // Each endpoint sends its vector once in-network, 2(N-1)/N of it in a ring.
  EXPECT_EQ(s["in_network"]["endpoint_bytes_sent"].get<std::uint64_t>(), 8u * 262144u);
  EXPECT_EQ(s["ring"]["endpoint_bytes_sent"].get<std::uint64_t>(), 8u * 262144u * 14u / 8u);
  EXPECT_LT(s["in_network"]["max_abs_error_vs_exact"].get<double>(), 1e-5);
}

TEST(SwitchAllreduce, SixtyFourEndpointsWithFp64Accumulation) {
  const RunResult r = testing::run_quiet("switch-allreduce", {"allreduce.endpoints=64", "allreduce.bytes=262144",
                                                              "reduce.accumulate=64", "reduce.order=member"});
  ASSERT_EQ(r.failure, "");
  EXPECT_GT(r.results["summary"]["speedup"].get<double>(), 1.0);
}

}  // namespace
}  // namespace xy

namespace xy {
namespace {

TEST(SwitchIncast, WithABigBufferCbfcKeepsTheCongestionAtItsHopWhilePfcPausesSpread) {
  const RunResult r = testing::run_quiet("switch-incast", {"incast.measure_us=20", "incast.warmup_us=10"});
  ASSERT_EQ(r.failure, "");
  const auto& s = r.results["summary"];
  // Credits freed on admission: S2's shared buffer absorbs the incast, S1 is never held back.
  EXPECT_EQ(s["cbfc-admit"]["egress_blocked_cycles"]["s1"].get<std::uint64_t>(), 0u);
  EXPECT_NEAR(s["cbfc-admit"]["victim_Gbps"].get<double>(), 400.0, 8.0);
  // PFC pauses by port occupancy, whatever the shared buffer holds: they reach S1 and its hosts.
  EXPECT_GT(s["pfc"]["xoff_frames"]["into_s1"].get<std::uint64_t>(), 0u);
  EXPECT_LT(s["pfc"]["victim_Gbps"].get<double>(), 300.0);
}

TEST(SwitchIncast, PfcPausesSpreadUpstreamWhileCbfcSendsNoPauseAndNeitherDrops) {
  const RunResult r = testing::run_quiet("switch-incast", {"incast.measure_us=20", "incast.warmup_us=10",
                                                           "switch.buffer_mib=1"});
  ASSERT_EQ(r.failure, "");  // lossless variants: no overflow, no drop
  const auto& s = r.results["summary"];
  EXPECT_GT(s["pfc"]["xoff_frames"]["into_s1"].get<std::uint64_t>(), 0u);  // two hops back from the congestion
  EXPECT_GT(s["pfc"]["xoff_frames"]["into_s2"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(s["cbfc"]["switches_that_paused_upstream"].get<int>(), 0);
  EXPECT_GT(s["none"]["drops"]["s2"].get<std::uint64_t>(), 0u);  // a small buffer without flow control loses
  EXPECT_NEAR(s["cbfc"]["incast_Gbps"].get<double>(), 800.0, 8.0);  // the congested link stays full
  EXPECT_LT(s["pfc"]["victim_Gbps"].get<double>(), 400.0);           // the victim shares the paused link
}

// The CC_Update timer is 256,000 cycles (164 us): a 300 us window (350 us run) has one per link,
// sent while frames counted in it are still on their way (a switch egress counts a frame when it
// schedules it, 140 cycles before its first byte is on the wire). Had it overtaken them, their
// credits would be freed twice, and a full buffer overflows (it did: cbfc-admit into S2, cycle
// 351,178, "the sender sent without credits").
TEST(SwitchIncast, ACreditResyncWhileFramesAreOnTheirWayFreesNothingTwice) {
  const RunResult r = testing::run_quiet("switch-incast", {"incast.measure_us=300"});
  EXPECT_EQ(r.failure, "");  // no credit overflow anywhere
  for (const char* link : {"top.cbfc.s2.in0", "top.cbfc-admit.s2.in0", "top.cbfc-admit.s3.in0"})
    EXPECT_GE(r.results["stats"][std::string(link) + ".cbfc.cc_updates"]["value"].get<std::uint64_t>(), 1u) << link;
}

}  // namespace
}  // namespace xy
