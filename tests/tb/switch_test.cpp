// The Lingyun switch's scenarios, one simulation per process.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/tb/run_quiet.hpp"
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

// Stopped before every size has crossed: the report shows n/a for those (it read a missing key of
// the summary).
TEST(SwitchLatency, ARunStoppedEarlyReportsOnlyTheSizesMeasured) {
  const RunResult r = testing::run_quiet("switch-latency", {"sim.max_time_us=2"});
  EXPECT_NE(r.failure.find("not finished"), std::string::npos) << r.failure;
  EXPECT_FALSE(r.results["summary"].contains(nlohmann::json::json_pointer("/store_and_forward/9216")));
  EXPECT_NE(r.report.find(" n/a\n"), std::string::npos) << r.report;
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
    if (offered <= 0.95 + 1e-9) {
      EXPECT_GE(accepted, 0.95 * offered) << "offered " << offered;
    }
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
  EXPECT_GE(s["ecmp-crc32"]["flows_on_worst_link"].get<int>(), 5);  // 5 of 32 on one link
  EXPECT_GT(s["ecmp-toeplitz"]["flows_on_worst_link"].get<int>(), 4);
  // The uniform-hash reference, against figures worked out by hand: 32 flows on 8 links put 5 or
  // more on some link unless all are 4 (32! / (4!^8 8^32) = 3.0172e-5 of the assignments).
  const auto& u = s["ecmp-crc32"]["uniform_hash"];
  EXPECT_NEAR(u["p_worst_at_least"].get<double>(), 1 - 3.0171870e-5, 1e-11);
  EXPECT_EQ(u["worst_median"].get<int>(), 7);
  EXPECT_EQ(u["worst_p95"].get<int>(), 9);
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
  EXPECT_EQ(s["halving_doubling"]["endpoint_bytes_sent"].get<std::uint64_t>(), 8u * 262144u * 14u / 8u);
  EXPECT_LT(s["in_network"]["max_abs_error_vs_exact"].get<double>(), 1e-5);
  EXPECT_LT(s["halving_doubling"]["max_abs_error_vs_exact"].get<double>(), 1e-5);
}

// The ALUs' throughput bounds the in-network AllReduce: 8 x 65,536 fp32 contributions, one pass
// each, on `alus` ALUs of `lanes` elements a cycle of 0.64 ns.
double alu_bound_us(double endpoints, double elements, double alus, double lanes) {
  return endpoints * elements / (alus * lanes) * 0.64e-3;
}

TEST(SwitchAllreduce, OneLaneAlusAreSlowerThanTheRing) {
  const RunResult r = testing::run_quiet("switch-allreduce", {"reduce.lanes=1", "reduce.alus=8"});
  ASSERT_EQ(r.failure, "");
  const auto& s = r.results["summary"];
  EXPECT_GE(s["in_network"]["time_us"].get<double>(), alu_bound_us(8, 65536, 8, 1));  // 41.9 us
  EXPECT_LT(s["speedup"].get<double>(), 1.0);
}

TEST(SwitchAllreduce, GroupsShareTheEnginesAlus) {
  const RunResult r = testing::run_quiet("switch-allreduce", {"allreduce.groups=2", "reduce.alus=4"});
  ASSERT_EQ(r.failure, "");  // each group's endpoints hold one result, checked in every variant
  const auto& s = r.results["summary"];
  EXPECT_GE(s["in_network"]["time_us"].get<double>(), alu_bound_us(8, 65536, 4, 16));  // 5.24 us
  EXPECT_LT(s["in_network"]["max_abs_error_vs_exact"].get<double>(), 1e-5);
}

// GPUs that start up to 5 us apart: the early ones' chunks hold the 4 slots until the late ones
// contribute, so the others wait; nothing ends before the last start plus its vector's line time.
TEST(SwitchAllreduce, SkewedStartsHoldSlots) {
  const RunResult r = testing::run_quiet("switch-allreduce", {"allreduce.skew_ns=5000", "reduce.slots=4"});
  ASSERT_EQ(r.failure, "");
  const auto& s = r.results["summary"];
  EXPECT_GT(s["in_network"]["slot_wait_cycles"].get<double>(), 0);
  const double line_us = 262144 / 100e3;  // 800 Gb/s = 100 bytes a ns
  for (const char* v : {"in_network", "ring", "halving_doubling"})
    EXPECT_GE(s[v]["time_us"].get<double>(), s["last_start_us"].get<double>() + line_us) << v;
}

TEST(SwitchAllreduce, HalvingDoublingNeedsAPowerOfTwo) {
  const RunResult r = testing::run_quiet("switch-allreduce", {"allreduce.endpoints=6", "allreduce.bytes=245760"});
  ASSERT_EQ(r.failure, "");
  EXPECT_TRUE(r.results["summary"]["halving_doubling"].is_null());
  EXPECT_GT(r.results["summary"]["ring"]["time_us"].get<double>(), 0);
}

TEST(SwitchAllreduce, SixtyFourEndpointsWithFp64Accumulation) {
  const RunResult r = testing::run_quiet("switch-allreduce", {"allreduce.endpoints=64", "allreduce.bytes=262144",
                                                              "reduce.accumulate=64"});
  ASSERT_EQ(r.failure, "");
  EXPECT_GT(r.results["summary"]["speedup"].get<double>(), 1.0);
}

}  // namespace
}  // namespace xy

namespace xy {
namespace {

// switch-incast (claim C3). Expectations from arithmetic on the scenario's set-up, not from another
// run: every link 800 Gb/s, 1024-byte packets (16 beats of 64 B, so a busy link carries exactly
// 800 Gb/s), K senders on S2 plus A on S1 into the congested S2 -> S3 port, the victim V beside A
// on S1 -> S2, 50 us measured (78,125 cycles of 0.64 ns) after 20 us.
constexpr double kLine = 800;               // Gb/s
constexpr double kWindowNs = 50'000;
constexpr double kWindowCycles = 78'125;    // 50 us / 0.64 ns
constexpr double kAllowance = 512.0 * 128;  // CBFC bytes per link and VC (cbfc.buffer_credits)
constexpr double kPfcAllowance = 196608;    // PFC bytes per ingress port (pfc.buffer_bytes; overflow is checked)
constexpr double kWire = 40 * 64;           // bytes on a link's wire (40 cycles at 64 B per cycle)
double gbps(double bytes) { return bytes * 8 / kWindowNs; }
// A sink counts what arrives in the window, the flow control what the sender was held in it: they
// differ by what was in flight between the two at the window's ends. On a lossless path with
// credits freed on departure (or PFC, which counts a packet until it leaves) that is at most one
// allowance and one wire per link the flow crosses.
double in_flight_slack(int links, double allowance = kAllowance) { return gbps(links * (allowance + kWire)); }

double held(const nlohmann::json& variant, const std::string& link, int vc = 0) {
  return variant["held_cycles"][link][vc].get<double>();
}
// A host sends back to back whenever its link's flow control lets it, so what it sends in the window
// is the line rate times the share of the window in which it was not held.
double sent_if_held(const nlohmann::json& variant, const std::string& link, int vc = 0) {
  return kLine * (1 - held(variant, link, vc) / kWindowCycles);
}

// The default scenario, and the same with 2 senders on S2.
void expect_cbfc_victim_shares_the_fate_of_the_incast_flow_beside_it(int k, std::vector<std::string> sets) {
  const RunResult r = testing::run_quiet("switch-incast", std::move(sets));
  ASSERT_EQ(r.failure, "");  // lossless variants: no credit or headroom overflow, no drop
  const auto& s = r.results["summary"];
  ASSERT_EQ(s["window_cycles"].get<double>(), kWindowCycles);
  for (const char* fc : {"cbfc", "cbfc-admit", "pfc", "none"}) {
    // K+1 line-rate senders into one port: the congested link is full, never more.
    EXPECT_LE(s[fc]["incast_Gbps"].get<double>(), kLine + gbps(1024)) << fc;
    EXPECT_GE(s[fc]["incast_Gbps"].get<double>(), kLine - in_flight_slack(1)) << fc;
  }
  const auto& cbfc = s["cbfc"];
  const double victim = cbfc["victim_Gbps"].get<double>(), a = cbfc["incast_from_a_Gbps"].get<double>();
  // Counted at W and R against the hold counters of the victim's and A's own links (V crosses
  // 2 links before W, A 3 before R).
  EXPECT_NEAR(victim, sent_if_held(cbfc, "v_to_s1"), in_flight_slack(2));
  EXPECT_NEAR(a, sent_if_held(cbfc, "a_to_s1"), in_flight_slack(3));
  // The congested port carries what its K+1 senders were let send.
  double let_through = sent_if_held(cbfc, "a_to_s1");
  for (int j = 1; j <= k; ++j) let_through += sent_if_held(cbfc, "host" + std::to_string(j) + "_to_s2");
  EXPECT_NEAR(cbfc["incast_Gbps"].get<double>(), let_through, in_flight_slack(k + 3));
  // A is one of K+1 backlogged inputs of the congested port, served in turn: at most 1/(K+1) of it.
  EXPECT_LE(a, kLine / (k + 1) + in_flight_slack(3));
  // V and A share one VC, so one FIFO at S1's egress, and each may have one allowance of credits
  // in S1 (freed on departure): with both hosts held most of the window both allowances are full,
  // and with equal occupancy and equal sojourn Little's law gives equal rates. So the victim gets
  // A's share of the congested port, not the half of S1 -> S2 (400 Gb/s) it gets without flow control.
  EXPECT_GT(held(cbfc, "v_to_s1"), kWindowCycles / 2);
  EXPECT_GT(held(cbfc, "a_to_s1"), kWindowCycles / 2);
  EXPECT_NEAR(victim, a, in_flight_slack(3));
  EXPECT_LE(victim, kLine / (k + 1) + 2 * in_flight_slack(3));
  // So credits withheld by S2 reach S1's hosts: 2 hops upstream of the congested port. S3 is not
  // congested (R's link is as fast as S2 -> S3) and its credit loop, 40 + 346 + 16 + 500 (CF
  // timer) + 40 cycles, is shorter than one allowance at line rate (1024 cycles): it holds nobody.
  EXPECT_EQ(held(cbfc, "s2_to_s3"), 0);
  EXPECT_EQ(cbfc["backpressure_hops"].get<int>(), 2);
  EXPECT_EQ(cbfc["switches_that_held_upstream"].get<int>(), 2);

  // PFC: the same fate; pauses counted by port occupancy (at most the port's buffer per link).
  const auto& pfc = s["pfc"];
  EXPECT_GT(pfc["xoff_frames"]["into_s1"].get<std::uint64_t>(), 0u);
  EXPECT_NEAR(pfc["victim_Gbps"].get<double>(), sent_if_held(pfc, "v_to_s1"), in_flight_slack(2, kPfcAllowance));
  EXPECT_NEAR(pfc["victim_Gbps"].get<double>(), pfc["incast_from_a_Gbps"].get<double>(), in_flight_slack(3, kPfcAllowance));
  EXPECT_EQ(pfc["backpressure_hops"].get<int>(), 2);

  // Credits freed on admission: into S2 arrive at most (K+1) x 800 Gb/s for 70 us, under 35 MB,
  // below the 64 MiB buffer, so S2 admits at once, its credits come back within 40 + 170 + 100 + 40
  // cycles (< 1024) and nobody is held; the victim gets half of S1 -> S2, as without flow control.
  const auto& admit = s["cbfc-admit"];
  EXPECT_EQ(admit["backpressure_hops"].get<int>(), 0);
  EXPECT_EQ(admit["switches_that_held_upstream"].get<int>(), 0);
  // Two line-rate inputs (A, V) to S1's uplink, served in turn; what sits behind S1's crossbar in
  // the pipelines (two switches and links at 400 Gb/s, about 25 KB) is within 8 Gb/s.
  EXPECT_NEAR(admit["victim_Gbps"].get<double>(), kLine / 2, 8.0);
  EXPECT_NEAR(s["none"]["victim_Gbps"].get<double>(), kLine / 2, 8.0);
  EXPECT_EQ(s["none"]["drops"]["s2"].get<std::uint64_t>(), 0u);  // same 35 MB < 64 MiB
}

TEST(SwitchIncast, DefaultCbfcVictimOnTheIncastsVcGetsOnlyTheCongestedFlowsShare) {
  expect_cbfc_victim_shares_the_fate_of_the_incast_flow_beside_it(4, {});
}

TEST(SwitchIncast, WithTwoSendersOnS2TheVictimsShareIsAThird) {
  expect_cbfc_victim_shares_the_fate_of_the_incast_flow_beside_it(2, {"incast.senders=2"});
}

// The victim on a VC of its own: credits of its VC are freed as its packets leave S2 for W, which
// is not congested, so A's held credits no longer stop it. A, on strict priority VC 0 at S1's
// egress, takes at most its share of the congested port, 1/(K+1), of S1 -> S2 (without speedup,
// the default, S2's crossbar serves the port's K+1 backlogged inputs in turn); the victim keeps
// the rest. (Here A is starved in S2 and the victim gets all 800 Gb/s: see docs/switch.md.)
TEST(SwitchIncast, OnItsOwnVcTheVictimLosesAtMostTheCongestedFlowsShare) {
  const RunResult r = testing::run_quiet("switch-incast", {"incast.victim_vc=own"});
  ASSERT_EQ(r.failure, "");
  const auto& s = r.results["summary"];
  for (const char* fc : {"cbfc", "pfc"}) {
    const auto& v = s[fc];
    const double victim = v["victim_Gbps"].get<double>(), a = v["incast_from_a_Gbps"].get<double>();
    const double allowance = std::string(fc) == "pfc" ? kPfcAllowance : kAllowance;
    EXPECT_GE(victim, kLine - kLine / 5 - in_flight_slack(3, allowance)) << fc;
    EXPECT_LE(victim + a, kLine + in_flight_slack(3, allowance)) << fc;  // both cross S1 -> S2
    EXPECT_NEAR(victim, sent_if_held(v, "v_to_s1", 1), in_flight_slack(2, allowance)) << fc;
    EXPECT_LT(held(v, "v_to_s1", 1), held(v, "a_to_s1", 0)) << fc;
  }
}

// 1 MiB per switch: into S2 arrive 2.8 Tb/s more than leaves it, which fills 1 MiB in 3 us.
TEST(SwitchIncast, WithASmallBufferTheLosslessVariantsHoldTheirSendersAndNoFlowControlDrops) {
  const RunResult r = testing::run_quiet("switch-incast", {"switch.buffer_mib=1"});
  ASSERT_EQ(r.failure, "");  // lossless variants: no overflow, no drop
  const auto& s = r.results["summary"];
  // About 24 MB more than 1 MiB arrives over the run: without flow control S2 must drop.
  EXPECT_GT(s["none"]["drops"]["s2"].get<std::uint64_t>(), 0u);
  // With credits freed on admission, a full buffer stops admissions and so the credits: S2's
  // hosts and S1 are held now.
  EXPECT_GE(s["cbfc-admit"]["backpressure_hops"].get<int>(), 1);
  for (int j = 1; j <= 4; ++j) EXPECT_GT(held(s["cbfc-admit"], "host" + std::to_string(j) + "_to_s2"), 0) << j;
  for (const char* fc : {"cbfc", "cbfc-admit", "pfc"})
    EXPECT_NEAR(s[fc]["incast_Gbps"].get<double>(), kLine, in_flight_slack(1)) << fc;
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
    EXPECT_GE(r.results["stats"][std::string(link) + ".tx.cbfc.cc_updates"]["value"].get<std::uint64_t>(), 1u) << link;
}

}  // namespace
}  // namespace xy
