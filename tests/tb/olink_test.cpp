// The OLink scenarios run whole: olink-latency (every fabric's stage breakdown), olink-alltoall
// (shares of a line and of a shared uplink against first principles) and olink-fast (the fast
// fabric within 5 % of the cycle-level one). One simulation per process.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "tests/tb/run_quiet.hpp"

namespace xy::olink {
namespace {

TEST(OlinkLatency, BreakdownAddsUpToTheMeasuredLatencyForEveryFabric) {
  const RunResult r = testing::run_quiet("olink-latency", {"olink.loads=5"});
  ASSERT_EQ(r.failure, "");  // the scenario asserts every load against the sum of its stages
  const auto& s = r.results["summary"];
  for (const char* f : {"olink-rs544", "olink-rs272", "nvlink-class", "pcie-switch"}) {
    double sum = 0;
    for (const auto& [stage, ns] : s[f]["breakdown"].items()) sum += ns.get<double>();
    EXPECT_NEAR(sum, s[f]["load_latency_ns"].get<double>(), 1.0) << f;
  }
  EXPECT_LT(s["olink-rs272"]["load_latency_ns"].get<double>(), s["olink-rs544"]["load_latency_ns"].get<double>());
  EXPECT_LT(s["nvlink-class"]["load_latency_ns"].get<double>(), s["olink-rs272"]["load_latency_ns"].get<double>());
  // The comparators' presets, stage by stage (ns; PCIe at 1 GHz, every stage whole cycles). One
  // way on PCIe: NIC 300, link 60, switch 150, uplink to the root complex and back 60 + 150 + 60,
  // switch again 150, link 60, NIC 300 = 1290; the load: two of them, HBM 200 + 1 cycle for 64
  // bytes, the entry edge and the response's tail (122 bytes: 2 beats of 64) 1 each.
  EXPECT_DOUBLE_EQ(s["pcie-switch"]["one_way_ns"].get<double>(), 300 + 60 + 150 + 270 + 150 + 60 + 300);
  EXPECT_DOUBLE_EQ(s["pcie-switch"]["load_latency_ns"].get<double>(), 2 * 1290 + 201 + 1 + 1);
  EXPECT_DOUBLE_EQ(s["pcie-switch"]["breakdown"]["uplink_request_ns"].get<double>(), 270);
  EXPECT_DOUBLE_EQ(s["nvlink-class"]["breakdown"]["uplink_request_ns"].get<double>(), 0);
  // NVLink-class with the GPU side OLink has (controller 100 ns each way, HBM 200) on OLink's 2 m
  // cables (5 ns beyond the 1 m its 30 ns link holds): 2 x (100 + 2 x 35 + 40 + 100) + 200 = 820
  // ns, give or take rounding to its 7031.25 MHz clock (0.14 ns a cycle, a dozen stages).
  EXPECT_NEAR(s["nvlink-class"]["load_latency_ns"].get<double>(), 820, 2);
  EXPECT_NEAR(s["nvlink-class"]["breakdown"]["memory_ns"].get<double>(),
              s["olink-rs544"]["breakdown"]["memory_ns"].get<double>(), 1);
}

// The NVLink-class comparator crosses what OLink's fabric crosses: on a leaf-spine, GPU 0 and 1 on
// different leaves, 3 switches of 40 ns and links of 30 ns + 5 ns a metre beyond 1 m: two 2 m
// GPU links and two 10 m spine links, 2 x 35 + 2 x 75 = 220 ns each way.
TEST(OlinkLatency, NvlinkClassFollowsALeafSpine) {
  const RunResult r = testing::run_quiet("olink-latency", {"olink.loads=2", "topology=leaf-spine"});
  ASSERT_EQ(r.failure, "");
  const auto& b = r.results["summary"]["nvlink-class"]["breakdown"];
  EXPECT_NEAR(b["switch_request_ns"].get<double>(), 3 * 40, 0.5);
  EXPECT_NEAR(b["links_request_ns"].get<double>(), 2 * 35 + 2 * 75, 0.5);
}

// ... and its cables: 100 m from each GPU to the switch, 30 + 5 x 99 ns a link.
TEST(OlinkLatency, NvlinkClassFollowsTheCables) {
  const RunResult r = testing::run_quiet("olink-latency", {"olink.loads=2", "topology.cable_m=100"});
  ASSERT_EQ(r.failure, "");
  const auto& s = r.results["summary"];
  EXPECT_NEAR(s["nvlink-class"]["breakdown"]["links_request_ns"].get<double>(), 2 * (30 + 5 * 99), 0.5);
  // The ratio's sensitivity is the breakdown's arithmetic: OLink's decoder taken out of its load.
  const auto& c1 = s["claim_c1"];
  const auto& dec = c1["sensitivity"]["port.rs544.decoder_ns"];
  EXPECT_NEAR(dec["ratio_at_zero"].get<double>(),
              (s["olink-rs544"]["load_latency_ns"].get<double>() - dec["olink_ns"].get<double>()) /
                  s["nvlink-class"]["load_latency_ns"].get<double>(),
              1e-9);
}

// One switch stage far larger than the others still splits each fabric's switch time exactly:
// arbiter and crossbar rounded to 0, and rounding and enqueue's least cycle took the rest past the
// total, parse wrapping below zero ("wake of top.nvlink-class.sw.out1 at cycle 1705 is not in the
// future").
TEST(OlinkLatency, AStageSplitDominatedByOneStageStillAddsUp) {
  // (The composed fabrics take the 1e6-cycle egress stage as it is: 0.64 ms a hop.)
  const RunResult r = testing::run_quiet("olink-latency",
                                         {"olink.loads=1", "switch.lat.egress=1000000", "sim.watchdog_us=10000"});
  ASSERT_EQ(r.failure, "");  // each load against the sum of its stages
}

// Stopped before the first load is back (the first starts after 1000 cycles, 0.1 us even at
// 10 GHz): the run fails its check, and the summary has no latency (it took back() of the empty
// results: a segfault).
TEST(OlinkLatency, ARunStoppedBeforeTheFirstLoadIsBackHasNoLatency) {
  const RunResult r = testing::run_quiet("olink-latency", {"sim.max_time_us=0.05"});
  EXPECT_NE(r.failure.find("not finished"), std::string::npos) << r.failure;
  for (const char* f : {"olink-rs544", "olink-rs272", "nvlink-class", "pcie-switch"})
    EXPECT_TRUE(r.results["summary"][f]["load_latency_ns"].is_null()) << f;
  EXPECT_NE(r.report.find("load, measured"), std::string::npos) << r.report;
}

}  // namespace
}  // namespace xy::olink

namespace xy {
namespace {

// First principles for the all-to-all of 256-byte Stores. A Store's frame is 14 + 40 + 256 + 4
// (FCS) = 314 bytes, its acknowledgement 58. On a GPU's line each also takes 20 bytes of preamble
// and gap: 334 + 78 = 412 bytes carry 256 of data, and each GPU's line carries both its Stores and
// the acknowledgements of those it receives, so a GPU moves at most 256/412 of its line. A switch
// port sends whole 64-byte beats, no gap: 5 + 1 beats, 384 bytes per 256. On the PCIe fabric
// every frame crosses the one uplink (64 GB/s each way, 512 Gb/s), so N GPUs share 64 x 256/384
// GB/s of data: each gets at most that over N.
constexpr double kStoreOnLine = 256.0 / 412, kStoreOnUplink = 256.0 / 384;

// 8 GPUs, 1 MiB each; `gpus` 4: the same with half as many sharing the uplink.
void expect_alltoall_shares(int gpus) {
  const RunResult r = testing::run_quiet("olink-alltoall", {"alltoall.bytes_per_gpu=1048576",
                                                            fmt::format("alltoall.gpus={}", gpus)});
  ASSERT_EQ(r.failure, "");  // every store acknowledged OK, buffer accounting exact
  const auto& s = r.results["summary"];
  const double pcie = s["pcie-switch"]["bandwidth_per_gpu_GBps"].get<double>();
  const double olink = s["olink-rs544"]["bandwidth_per_gpu_GBps"].get<double>();
  const double nvlink = s["nvlink-class"]["bandwidth_per_gpu_GBps"].get<double>();
  EXPECT_DOUBLE_EQ(s["pcie-switch"]["gpu_link_GBps"].get<double>(), 64);
  EXPECT_DOUBLE_EQ(s["pcie-switch"]["shared_uplink_GBps"].get<double>(), 64);
  EXPECT_TRUE(s["nvlink-class"]["shared_uplink_GBps"].is_null());
  EXPECT_NEAR(s["nvlink-class"]["gpu_link_GBps"].get<double>(), 450, 0.01);  // 3600 Gb/s each way (a cycle in whole fs)
  // PCIe: the uplink's share, less the ramp and the tail (8 MiB or 4 MiB through the uplink,
  // about 200 or 100 us, against a 2.8 us round trip): within 5 %. The tail is long: the switch
  // holds a few writes a port and the GPUs the rest (credits), so the acknowledgements of the
  // last Stores wait behind a GPU's own Stores (at 256 KiB each, 4 GPUs get 93 % of the share).
  const double share = 64 * kStoreOnUplink / gpus;
  EXPECT_LE(pcie, share);
  EXPECT_GT(pcie, 0.95 * share);
  EXPECT_LE(nvlink, 450 * kStoreOnLine);
  EXPECT_LE(olink, 400 * kStoreOnLine);
  EXPECT_GT(nvlink, olink);
  // Each OLink GPU alone moves more than the PCIe switch's whole uplink carries, and C11's 10x
  // holds at 8 GPUs (at 4 each gets twice the uplink's share).
  EXPECT_GT(olink, 64 * kStoreOnUplink);
  if (gpus == 8) EXPECT_GT(olink, 10 * pcie);
}

TEST(OlinkAlltoall, EightGpusBehindAPcieSwitchShareItsUplink) { expect_alltoall_shares(8); }
TEST(OlinkAlltoall, FourGpusBehindAPcieSwitchShareItsUplink) { expect_alltoall_shares(4); }

}  // namespace
}  // namespace xy

namespace xy {
namespace {

// Within 5 % of the cycle-level fabric on latency and bandwidth; the run itself checks that the
// fast fabric's times are the same with and without data.
void expect_fast_agrees(const std::vector<std::string>& settings) {
  std::vector<std::string> all = {"fast.loads=5"};
  all.insert(all.end(), settings.begin(), settings.end());
  const RunResult r = testing::run_quiet("olink-fast", all);
  ASSERT_EQ(r.failure, "");  // every load and write answered OK in all three models
  const auto& s = r.results["summary"];
  EXPECT_LT(std::abs(s["latency_error"].get<double>()), 0.05);
  EXPECT_LT(std::abs(s["bandwidth_error"].get<double>()), 0.05);
  EXPECT_GT(s["cycle"]["bandwidth_per_gpu_GBps"].get<double>(), 0);
}

TEST(OlinkFast, AgreesWithTheCycleLevelFabricOnBulkWrites) { expect_fast_agrees({}); }
TEST(OlinkFast, AgreesWithTheCycleLevelFabricOnStores) {
  expect_fast_agrees({"fast.bytes=256", "fast.bytes_per_gpu=4194304"});
}
// One 70,000-byte write alone (17 segments, the last 368 bytes): its short last frame waits at
// the owner's memory for the one before it, in both models (the fast one was 0.5 % early). On
// the PCIe preset without its shared uplink: through it the two GPUs' writes would meet, and
// the fast fabric serves one whole before the other (docs/olink.md), 13 % apart.
TEST(OlinkFast, ABulkWriteWithAShortLastSegmentTakesTheCycleLevelTime) {
  const RunResult r = testing::run_quiet("olink-fast", {"fast.loads=1", "fast.fabric=pcie-switch", "fast.gpus=2",
                                                        "fast.bytes=70000", "fast.bytes_per_gpu=70000",
                                                        "olink.pcie-switch.uplink_ns=0"});
  ASSERT_EQ(r.failure, "");
  EXPECT_LT(std::abs(r.results["summary"]["bandwidth_error"].get<double>()), 0.001);
}

// The PCIe fabric's shared uplink in both models: 4 GPUs, 4 MiB each in 64 KiB writes. A 4 KiB
// segment's frame is 14 + 40 + 4096 + 4 = 4154 bytes, 65 beats of 64 on the uplink, its
// acknowledgement 1: 4224 bytes per 4096 of data, so each GPU gets 64 x 4096/4224 / 4 GB/s.
// (With 1 MiB each, 16 writes, the fast model is 1.1 % high: it serves each write whole at the
// uplink, the switch interleaves them.)
TEST(OlinkFast, AgreesOnThePcieSwitchsSharedUplink) {
  const RunResult r = testing::run_quiet("olink-fast", {"fast.loads=1", "fast.fabric=pcie-switch", "fast.gpus=4",
                                                        "fast.bytes_per_gpu=4194304"});
  ASSERT_EQ(r.failure, "");
  const auto& s = r.results["summary"];
  const double share = 64.0 * 4096 / 4224 / 4;
  EXPECT_LE(s["cycle"]["bandwidth_per_gpu_GBps"].get<double>(), share);
  EXPECT_GT(s["cycle"]["bandwidth_per_gpu_GBps"].get<double>(), 0.99 * share);
  EXPECT_LT(std::abs(s["bandwidth_error"].get<double>()), 0.005);
  EXPECT_EQ(s["latency_error"].get<double>(), 0);
}

// All 4,096 Stores posted at once: the responses a NIC owes must not wait behind its own
// requests (11 % apart when they shared one FIFO).
TEST(OlinkFast, AgreesWhenEveryStoreIsPostedAtOnce) {
  expect_fast_agrees({"fast.bytes=256", "fast.bytes_per_gpu=1048576"});
}

}  // namespace
}  // namespace xy

namespace xy {
namespace {

TEST(OlinkAlltoall, OnTheFastFabricGpusPostingAtOnceGetEqualShares) {
  // Every GPU posts all its 64 KiB writes at t = 0; they take turns, so none is favoured by
  // SystemC's process order.
  const RunResult r = testing::run_quiet("olink-alltoall", {"alltoall.model=fast", "alltoall.bytes=65536",
                                                            "alltoall.bytes_per_gpu=4194304"});
  ASSERT_EQ(r.failure, "");
  for (const auto& [fabric, x] : r.results["summary"].items()) {
    EXPECT_GT(x["slowest_gpu_GBps"].get<double>(), 0.99 * x["bandwidth_per_gpu_GBps"].get<double>()) << fabric;
    EXPECT_LT(x["bandwidth_per_gpu_GBps"].get<double>(), x["gpu_link_GBps"].get<double>()) << fabric;
  }
}

// OLink's all-to-all on composed ports: each GPU's four 800G ports (one per plane) are its
// 3.2 Tb/s, 400 GB/s of payload each way, and its NIC sprays over them, so the planes' switches
// take the same frames, within a frame per port of each other.
TEST(OlinkAlltoall, ComposedGpusSprayOverTheirFourPlanes) {
  const RunResult r = testing::run_quiet("olink-alltoall", {"alltoall.bytes_per_gpu=262144"});
  ASSERT_EQ(r.failure, "");
  EXPECT_DOUBLE_EQ(r.results["summary"]["olink-rs544"]["gpu_link_GBps"].get<double>(), 400);
  std::vector<double> per_plane;
  for (int k = 0; k < 4; ++k) {
    double frames = 0;
    for (int g = 0; g < 8; ++g)  // the frames each plane's switch ports took in from the GPUs
      frames += r.results["stats"][fmt::format("top.olink-rs544.plane{}.port{}.mac.rx.delivered", k, g)]["value"]
                    .get<double>();
    per_plane.push_back(frames);
  }
  for (double f : per_plane) EXPECT_NEAR(f, per_plane[0], 8) << "frames per plane";
  EXPECT_GT(per_plane[0], 8 * 1024 / 4 - 8);  // 8 GPUs x 1024 Stores (and as many acknowledgements)
}

TEST(OlinkAlltoall, RandomDestinationsCollideSoGpusGetUnequalShares) {
  // Round robin gives every GPU the same share (slowest = mean, in olink-alltoall's own runs);
  // seeded random destinations pile up at some outputs.
  const RunResult r = testing::run_quiet("olink-alltoall", {"alltoall.bytes_per_gpu=262144", "alltoall.pattern=random"});
  ASSERT_EQ(r.failure, "");  // every store acknowledged OK
  for (const char* f : {"olink-rs544", "nvlink-class"}) {
    const auto& x = r.results["summary"][f];
    EXPECT_LT(x["slowest_gpu_GBps"].get<double>(), 0.998 * x["bandwidth_per_gpu_GBps"].get<double>()) << f;
  }
}

// A GPU with a port on each of two planes sprays its Stores over both: 64 KiB as 16 Stores of
// 4 KiB, four messages and the bring-up's one: 40 frames on each plane, each way (the
// acknowledgements come back the same way). One 100 GB/s line alone takes 655 ns to serialise
// the message, and its last frame's two hops add at least 2 x 191 ns more (MAC/PCS pipelines
// 25.6 + 58.8 ns, PMA and 2 m of cable 31 ns, a group of four KP4 words 25.6 ns, the decoder
// 50 ns): only two lines side by side end it before 655 + 382 ns.
TEST(OlinkMessage, ANicOnTwoPlanesSpraysItsFramesOverBoth) {
  const RunResult r = testing::run_quiet("olink-message", {"topology=dual-plane"});
  ASSERT_EQ(r.failure, "");
  const auto& st = r.results["stats"];
  for (const char* plane : {"plane0", "plane1"})
    for (const char* port : {"port0", "port1"})
      EXPECT_EQ(st[fmt::format("top.olink-rs544.{}.{}.mac.rx.delivered", plane, port)]["value"].get<std::uint64_t>(), 40u)
          << plane << " " << port;
  EXPECT_EQ(r.results["summary"]["line_GBps"].get<double>(), 200.0);
  EXPECT_LT(r.results["summary"]["transfer_ns"].get<double>(), 65536 / 100.0 + 2 * (25.6 + 58.8 + 31 + 25.6 + 50));
}

}  // namespace
}  // namespace xy
