// LLR fault campaign: link-llr under a table of fault mixes, one simulation per test. Each row
// names the promise it holds LLR to, derived from the fault and the defaults (replay timer 5 us,
// NACK timer 2 us, replay limit 3, so the 4th replay without ACK progress FLUSHes):
//   delivered exactly once: nothing flushed, nothing lost; every frame handed over once, in order;
//   flushed and counted: something flushed, and every frame is delivered once, in order, or
//     flushed by its sender (both, when the ACK of a delivered frame was lost: so exactly one of
//     the two only when every control set arrives);
//   all flushed: a lane dead from the first frame delivers nothing and flushes every frame.
// Every run must end passed (the scenario's own check: no duplicate, reorder or corruption, and
// per direction no loss beyond what was flushed), never by the watchdog.
#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "tests/tb/run_quiet.hpp"

namespace xy {
namespace {

constexpr std::uint64_t kFrames = 3000;  // each way

enum class Promise { kDeliveredExactlyOnce, kFlushedAndCounted, kAllFlushed };

struct FaultMix {
  const char* name;
  double frame_error, burst_start;
  std::uint32_t burst_frames;
  double control_loss, flap_at_us, flap_us;
  Promise promise;
  bool rtl_too;  // a key row: run with the RTL twins as well
  const char* why;

  std::vector<std::string> sets(const std::string& impl) const {
    std::vector<std::string> s = {fmt::format("traffic.frames={}", kFrames), "llr.impl=" + impl};
    if (frame_error > 0) s.push_back(fmt::format("link.frame_error={}", frame_error));
    if (burst_start > 0)
      s.insert(s.end(), {fmt::format("link.burst_start={}", burst_start), fmt::format("link.burst_frames={}", burst_frames)});
    if (control_loss > 0) s.push_back(fmt::format("link.control_loss={}", control_loss));
    if (flap_us > 0)
      s.insert(s.end(), {fmt::format("link.flap_at_us={}", flap_at_us), fmt::format("link.flap_us={}", flap_us)});
    return s;
  }
  // No ACK or NACK is ever lost, so a sender learns of every delivery before it could flush it.
  bool controls_always_arrive() const { return control_loss == 0 && flap_us == 0; }
};

constexpr std::uint32_t kNeverEnds = 1u << 20;  // burst frames: more than the run sends
constexpr Promise kOnce = Promise::kDeliveredExactlyOnce, kFlushed = Promise::kFlushedAndCounted,
                  kAll = Promise::kAllFlushed;

// clang-format off
const FaultMix kMixes[] = {
  // name                         frame  burst  burst       control flap  flap  promise   rtl    why
  //                              error  start  frames      loss    at us us
  {"NoFaults",                    0,     0,     0,          0,      0,    0,    kOnce,    false, "nothing to recover"},
  {"FrameErrors1e3",              1e-3,  0,     0,          0,      0,    0,    kOnce,    false,
   "a FLUSH needs one frame corrupted 4 times running: 1e-12 per frame"},
  {"FrameErrors5e2",              5e-2,  0,     0,          0,      0,    0,    kOnce,    false,
   "4 times running: 6e-6 per frame, 0.04 over the run's 6000 frames"},
  {"BurstsOf100",                 0,     2e-4,  100,        0,      0,    0,    kOnce,    false,
   "100 frames (0.8 us) outlast at most 2 replays"},
  {"BurstsOf2000",                0,     2e-4,  2000,       0,      0,    0,    kFlushed, false,
   "2000 frames (16 us) outlast 4 re-NACKs 2 us apart"},
  {"DeadLane",                    0,     0.5,   kNeverEnds, 0,      0,    0,    kFlushed, true,
   "issue 12: the lane dies at one of the first frames and never recovers"},
  {"DeadLaneFromTheFirstFrame",   1,     0,     0,          0,      0,    0,    kAll,     true,
   "every frame corrupted, every replay too"},
  {"ControlLoss30",               0,     0,     0,          0.3,    0,    0,    kOnce,    false,
   "cumulative ACKs: a later one repairs a lost one"},
  {"ShortFlap",                   0,     0,     0,          0,      5,    3,    kOnce,    true,
   "3 us dark: the first replay after it gets through"},
  {"LongFlap",                    0,     0,     0,          0,      5,    30,   kFlushed, true,
   "30 us dark: 4 replay timers of 5 us expire without an ACK"},
  {"FrameErrorsAndControlLoss",   1e-3,  0,     0,          0.3,    0,    0,    kOnce,    false,
   "a lost NACK is sent again after 2 us, or the replay timer replays"},
  {"EveryFaultBriefly",           1e-3,  2e-4,  100,        0.3,    5,    3,    kOnce,    false,
   "errors, bursts of 100, lost control sets and a 3 us flap: each repaired within the limit"},
  {"DeadLaneAndControlLoss",      0,     0.5,   kNeverEnds, 0.3,    0,    0,    kFlushed, false,
   "lost NACKs only slow the FLUSHes down"},
  {"LongFlapAndFrameErrors",      5e-2,  0,     0,          0,      5,    30,   kFlushed, false,
   "the flap flushes; the errors around it are replayed"},
};
// clang-format on

// A row run with one implementation of the LLR ends.
struct CampaignRun {
  FaultMix mix;
  const char* impl;
};
// The row's name: ctest names each test after it (gtest_discover_tests puts the printed value
// in place of the index).
void PrintTo(const CampaignRun& r, std::ostream* os) { *os << r.mix.name; }

std::vector<CampaignRun> runs(const char* impl, bool key_rows_only) {
  std::vector<CampaignRun> out;
  for (const FaultMix& m : kMixes)
    if (m.rtl_too || !key_rows_only) out.push_back({m, impl});
  return out;
}

class LlrFaultCampaign : public ::testing::TestWithParam<CampaignRun> {};

TEST_P(LlrFaultCampaign, KeepsItsPromise) {
  const auto& [mix, impl] = GetParam();
  RecordProperty("why", mix.why);
  const RunResult r = testing::run_quiet("link-llr", mix.sets(impl));
  ASSERT_EQ(r.failure, "") << mix.why;  // passed: no watchdog, no duplicate or reorder, no unflushed loss
  const auto& s = r.results["summary"];
  const auto& stats = r.results["stats"];
  std::uint64_t flushed_total = 0;
  for (const auto& [from, to] : {std::pair{"top.a", "top.b"}, {"top.b", "top.a"}}) {
    SCOPED_TRACE(fmt::format("{} -> {}", from, to));
    const auto delivered = stats[fmt::format("{}.mac.rx.delivered", to)]["value"].get<std::uint64_t>();
    const auto flushed = s["ports"][from]["flushed_frames"].get<std::uint64_t>();
    flushed_total += flushed;
    EXPECT_LE(delivered, kFrames);
    switch (mix.promise) {
      case Promise::kDeliveredExactlyOnce:
        EXPECT_EQ(delivered, kFrames);
        EXPECT_EQ(flushed, 0u);
        break;
      case Promise::kFlushedAndCounted:
        if (mix.controls_always_arrive()) EXPECT_EQ(delivered + flushed, kFrames);
        else EXPECT_GE(delivered + flushed, kFrames);
        break;
      case Promise::kAllFlushed:
        EXPECT_EQ(delivered, 0u);
        EXPECT_EQ(flushed, kFrames);
        break;
    }
  }
  EXPECT_EQ(s["flushed_frames"].get<std::uint64_t>(), flushed_total);
  if (mix.promise == Promise::kDeliveredExactlyOnce) EXPECT_EQ(s["frames_lost"], 0u);
  else EXPECT_GT(flushed_total, 0u);
  RecordProperty("replays", std::to_string(s["replays"].get<std::uint64_t>()));
  RecordProperty("flushed", std::to_string(flushed_total));
}

INSTANTIATE_TEST_SUITE_P(Model, LlrFaultCampaign, ::testing::ValuesIn(runs("model", false)));

// The key rows again with the RTL twins in both ports.
INSTANTIATE_TEST_SUITE_P(Rtl, LlrFaultCampaign, ::testing::ValuesIn(runs("rtl", true)));

}  // namespace
}  // namespace xy
