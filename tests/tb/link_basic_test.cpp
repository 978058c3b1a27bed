// The link-basic testbench, one simulation per process (ctest runs each TEST on its own).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/tb/run_quiet.hpp"
#include "kernel/config.hpp"

namespace xy {
namespace {

RunResult run(std::vector<std::string> sets, WavesOptions waves = {}) {
  return testing::run_quiet("link-basic", std::move(sets), std::move(waves));
}

TEST(LinkBasic, ZeroLoadHeadLatencyEqualsTheConfiguredLatencyForEveryPacket) {
  const RunResult r = run({"link.latency_cycles=13", "traffic.load=0.01", "traffic.packets=2000"});
  ASSERT_EQ(r.failure, "");
  const auto& s = r.results["summary"];
  EXPECT_EQ(s["head_latency"]["count"], 2000u);
  EXPECT_EQ(s["head_latency"]["min_cycles"], 13.0);
  EXPECT_EQ(s["head_latency"]["max_cycles"], 13.0);
  // The tail follows the head by one cycle per further beat: 64..1500 bytes = 2..47 beats of 32 B.
  EXPECT_EQ(s["packet_latency"]["min_cycles"], 13.0 + 1);
  EXPECT_EQ(s["packet_latency"]["max_cycles"], 13.0 + 46);
}

TEST(LinkBasic, FullLoadThroughputEqualsTheLineRate) {
  const RunResult r = run({"traffic.load=1", "traffic.min_bytes=256", "traffic.max_bytes=256", "link.width_bytes=32",
                           "link.clock_mhz=1250"});
  ASSERT_EQ(r.failure, "");
  const auto& s = r.results["summary"];
  EXPECT_DOUBLE_EQ(s["line_rate_Gbps"].get<double>(), 320.0);
  EXPECT_DOUBLE_EQ(s["goodput_Gbps"].get<double>(), 320.0);
  EXPECT_DOUBLE_EQ(s["beat_utilisation"].get<double>(), 1.0);
  EXPECT_EQ(s["head_latency"]["max_cycles"], 8.0);  // enough credits: never a stall
}

TEST(LinkBasic, BackPressureLosesReordersAndCorruptsNothing) {
  const RunResult r = run({"traffic.load=1", "sink.stall_probability=0.4", "traffic.payload=true",
                           "link.credits=4", "traffic.packets=5000"});
  ASSERT_EQ(r.failure, "");
  const auto& s = r.results["summary"];
  EXPECT_EQ(s["packets_received"], 5000u);
  EXPECT_EQ(s["packets_lost"], 0u);
  EXPECT_EQ(s["packets_duplicated"], 0u);
  EXPECT_EQ(s["packets_reordered"], 0u);
  EXPECT_EQ(s["packets_corrupted"], 0u);
  EXPECT_LT(s["beat_utilisation"].get<double>(), 0.61);  // the sink takes at most 60 % of cycles
  EXPECT_GT(r.results["stats"]["top.link.sink.stall_cycles"]["value"].get<std::uint64_t>(), 0u);
}

TEST(LinkBasic, TooFewCreditsCapThroughputAtCreditsPerRoundTrip) {
  // 4 credits, latency 8 + credit latency 1: 4 beats per 9-cycle round trip.
  const RunResult r = run({"traffic.load=1", "link.credits=4", "traffic.min_bytes=128", "traffic.max_bytes=128"});
  ASSERT_EQ(r.failure, "");
  EXPECT_NEAR(r.results["summary"]["beat_utilisation"].get<double>(), 4.0 / 9.0, 0.001);
}

TEST(LinkBasic, VcdWavesAreWrittenWithAGtkwaveSaveFile) {
  const std::string path = "/tmp/xy_link_basic_test.vcd";
  WavesOptions w;
  w.path = path;
  w.scope = "top.link.sink";
  const RunResult r = run({"traffic.packets=200"}, w);
  ASSERT_EQ(r.failure, "");
  std::stringstream vcd, gtkw;
  vcd << std::ifstream(path).rdbuf();
  gtkw << std::ifstream("/tmp/xy_link_basic_test.gtkw").rdbuf();
  EXPECT_NE(vcd.str().find("$var wire 32"), std::string::npos);
  EXPECT_NE(vcd.str().find(" packets "), std::string::npos);
  EXPECT_EQ(vcd.str().find(" credits "), std::string::npos);  // outside the scope
  EXPECT_NE(gtkw.str().find("top.link.sink.packets"), std::string::npos);
  EXPECT_NE(gtkw.str().find("[dumpfile]"), std::string::npos);
}

TEST(LinkBasic, FstWavesAreWritten) {
  const std::string path = "/tmp/xy_link_basic_test.fst";
  std::filesystem::remove(path);
  WavesOptions w;
  w.path = path;
  const RunResult r = run({"traffic.packets=200"}, w);
  ASSERT_EQ(r.failure, "");
  ASSERT_TRUE(std::filesystem::exists(path));
  EXPECT_GT(std::filesystem::file_size(path), 100u);
  EXPECT_TRUE(std::filesystem::exists("/tmp/xy_link_basic_test.gtkw"));
}

TEST(LinkBasic, WarmupResetsTheStatsButNotTheScoreboard) {
  // 256-byte packets back to back: one packet per 8 cycles (8 ns); 10 us of warm-up ~ 1250 packets.
  const RunResult r = run({"traffic.load=1", "traffic.min_bytes=256", "traffic.max_bytes=256", "traffic.packets=4000",
                           "sim.warmup_us=10"});
  ASSERT_EQ(r.failure, "");
  const auto counted = r.results["stats"]["top.link.sink.packets"]["value"].get<std::uint64_t>();
  EXPECT_EQ(r.results["summary"]["packets_received"], 4000u);  // the scoreboard saw every packet
  EXPECT_NEAR(static_cast<double>(counted), 4000.0 - 1250.0, 2.0);
}

TEST(LinkBasic, UnknownParameterIsRejectedBeforeTheRun) {
  EXPECT_THROW(run({"link.latency=3"}), ConfigError);
}

}  // namespace
}  // namespace xy
