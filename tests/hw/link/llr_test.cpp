// LLR cores without a kernel: two LlrTx/LlrRx pairs joined by hand-driven delay lines.
#include "hw/link/llr.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <deque>
#include <ostream>
#include <vector>

#include "kernel/config.hpp"
#include "kernel/rng.hpp"

namespace xy::link {
void PrintTo(LlrTxState s, std::ostream* os) { *os << to_string(s); }  // failures name the state

namespace {

LlrConfig small_config() {
  LlrConfig c;
  c.seq_bits = 8;
  c.window = 100;
  c.replay_buffer_bytes = 1 << 20;
  c.replay_timer_cycles = 400;
  c.ack_every = 4;
  c.ack_timer_cycles = 20;
  c.nack_timer_cycles = 300;
  return c;
}

TEST(Llr, ReplayTimerFiresExactlyAtItsCycleNeverEarly) {
  LlrConfig c = small_config();
  LlrTx tx(c);
  tx.on_control({LlrControl::kAck, 0}, 0);  // INIT answered: ADVANCE
  ASSERT_EQ(tx.state(), LlrTxState::kAdvance);
  Packet p;
  tx.accept(&p, 100, 1000);
  EXPECT_EQ(tx.next_timer(), 1000u + c.replay_timer_cycles);
  for (Cycle t = 1000; t < 1000 + c.replay_timer_cycles; ++t) {
    tx.tick(t);
    ASSERT_EQ(tx.state(), LlrTxState::kAdvance) << "replayed early at cycle " << t;
  }
  tx.tick(1000 + c.replay_timer_cycles);
  EXPECT_EQ(tx.state(), LlrTxState::kReplay);
  EXPECT_EQ(tx.timer_replays(), 1u);
  auto again = tx.next_replay(1400);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->first, &p);
  EXPECT_EQ(again->second, 0u);
}

TEST(Llr, ReplayLimitThenFlushAndInit) {
  LlrConfig c = small_config();
  c.replay_limit = 2;
  LlrTx tx(c);
  tx.on_control({LlrControl::kAck, 0}, 0);
  Packet p;
  tx.accept(&p, 64, 0);
  Cycle t = 0;
  for (int i = 0; i < 2; ++i) {
    t += c.replay_timer_cycles;
    tx.tick(t);
    EXPECT_EQ(tx.state(), LlrTxState::kReplay);
    while (tx.next_replay(t)) {
    }
  }
  t += c.replay_timer_cycles;
  tx.tick(t);  // third time without progress: FLUSH
  EXPECT_EQ(tx.state(), LlrTxState::kFlush);
  EXPECT_EQ(tx.flushed_frames(), 1u);
  EXPECT_EQ(tx.released().size(), 1u);
  const auto init = tx.poll_control();
  ASSERT_TRUE(init);
  EXPECT_EQ(init->kind, LlrControl::kInit);
  EXPECT_EQ(init->seq, 1u);  // numbering goes on
  EXPECT_EQ(tx.state(), LlrTxState::kInit);
  tx.on_control({LlrControl::kAck, 1}, t + 1);
  EXPECT_EQ(tx.state(), LlrTxState::kAdvance);
}

// A receiver that keeps NACKing the same frame, sooner than the replay timer would fire: each
// NACK's replay counts, and the (replay_limit + 1)-th FLUSHes (before the fix the NACKs reset
// the timer and never counted, and the TX replayed forever).
TEST(Llr, NacksWithoutProgressCountTowardTheReplayLimitThenFlush) {
  LlrConfig c = small_config();
  c.replay_limit = 3;
  ASSERT_LT(c.nack_timer_cycles, c.replay_timer_cycles);
  LlrTx tx(c);
  tx.on_control({LlrControl::kAck, 0}, 0);
  std::vector<Packet> frames(5);
  for (std::size_t i = 0; i < frames.size(); ++i) tx.accept(&frames[i], 64, i);
  Cycle t = 10;
  for (int replay = 1; replay <= c.replay_limit; ++replay) {
    tx.on_control({LlrControl::kNack, 0}, t);  // frame 0 lost again: nothing acknowledged
    ASSERT_EQ(tx.state(), LlrTxState::kReplay) << "NACK " << replay;
    while (tx.next_replay(t)) {
    }
    for (const Cycle next = t + c.nack_timer_cycles; t < next; ++t) tx.tick(t);  // the timer never fires
  }
  EXPECT_EQ(tx.replays(), static_cast<std::uint64_t>(c.replay_limit));
  EXPECT_EQ(tx.timer_replays(), 0u);
  EXPECT_EQ(tx.flushed_frames(), 0u);
  tx.released().clear();
  tx.on_control({LlrControl::kNack, 0}, t);  // one replay without progress too many
  EXPECT_EQ(tx.state(), LlrTxState::kFlush);
  EXPECT_EQ(tx.replays(), static_cast<std::uint64_t>(c.replay_limit));  // FLUSH instead of replay
  EXPECT_EQ(tx.flushed_frames(), frames.size());
  EXPECT_EQ(tx.released().size(), frames.size());
  EXPECT_EQ(tx.kept(), 0u);
  const auto init = tx.poll_control();
  ASSERT_TRUE(init);
  EXPECT_EQ(init->seq, 5u);  // numbering goes on
}

// NACK and timer replays count together, and progress (a NACK that acknowledges a frame)
// starts the count again.
TEST(Llr, NackAndTimerReplaysCountTogetherUntilProgress) {
  LlrConfig c = small_config();
  c.replay_limit = 3;
  LlrTx tx(c);
  tx.on_control({LlrControl::kAck, 0}, 0);
  std::vector<Packet> frames(3);
  for (std::size_t i = 0; i < frames.size(); ++i) tx.accept(&frames[i], 64, 0);
  Cycle t = c.replay_timer_cycles;
  tx.tick(t);  // 1: the timer
  ASSERT_EQ(tx.timer_replays(), 1u);
  tx.on_control({LlrControl::kNack, 1}, ++t);  // frame 0 acknowledged: progress, then 1
  tx.on_control({LlrControl::kNack, 1}, ++t);  // 2
  t += c.replay_timer_cycles;
  tx.tick(t);  // 3: the timer
  tx.on_control({LlrControl::kNack, 1}, ++t);  // 4 without progress: FLUSH
  EXPECT_EQ(tx.state(), LlrTxState::kFlush);
  EXPECT_EQ(tx.replays(), 4u);  // 1 before the progress, 3 after
  EXPECT_EQ(tx.timer_replays(), 2u);
  EXPECT_EQ(tx.flushed_frames(), 2u);  // frames 1 and 2
}

TEST(Llr, RxNacksOnceForAGapAndDeliversInOrder) {
  LlrRx rx(small_config());
  EXPECT_EQ(rx.on_frame(0, true, 0), LlrRx::Verdict::kDeliver);
  EXPECT_EQ(rx.on_frame(2, true, 1), LlrRx::Verdict::kOutOfOrder);  // 1 is missing
  auto nack = rx.poll(1);
  ASSERT_TRUE(nack);
  EXPECT_EQ(nack->kind, LlrControl::kNack);
  EXPECT_EQ(nack->seq, 1u);
  EXPECT_EQ(rx.state(), LlrRxState::kNackSent);
  EXPECT_EQ(rx.on_frame(3, true, 2), LlrRx::Verdict::kOutOfOrder);
  EXPECT_FALSE(rx.poll(2));  // one NACK per loss
  EXPECT_EQ(rx.on_frame(2, true, 3), LlrRx::Verdict::kOutOfOrder);  // the replay restarted past 1: lost again
  ASSERT_TRUE(rx.poll(3));
  EXPECT_EQ(rx.on_frame(1, true, 4), LlrRx::Verdict::kDeliver);
  EXPECT_EQ(rx.state(), LlrRxState::kSendAcks);
  EXPECT_EQ(rx.on_frame(0, true, 5), LlrRx::Verdict::kDuplicate);
  EXPECT_EQ(rx.on_frame(7, false, 6), LlrRx::Verdict::kBadFcs);
}

TEST(Llr, WindowBeyondHalfTheSequenceSpaceIsRejected) {
  LlrConfig c = small_config();
  c.window = 129;  // 8-bit sequence numbers: at most 128
  try {
    c.validate("llr");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("llr.window = 129"), std::string::npos);
  }
}

// Two directions of frames over lines that corrupt and lose, driven cycle by cycle.
struct Harness {
  struct Msg {
    bool data;
    std::uint32_t seq;
    bool ok;
    LlrControl ctl;
    Packet* frame;
  };
  LlrConfig c;
  LlrTx tx;
  LlrRx rx;
  std::deque<std::pair<Cycle, Msg>> forward, backward;
  Rng rng{11, "llr.harness"};
  std::vector<Packet> frames;
  std::vector<std::uint64_t> delivered;
  Cycle latency = 30;
  explicit Harness(LlrConfig config, std::size_t n) : c(config), tx(config), rx(config), frames(n) {
    for (std::size_t i = 0; i < n; ++i) {
      frames[i].id = i;
      frames[i].bytes = 64;
    }
  }
  // Runs until every frame is delivered (or `limit` cycles); `bad(t)` says whether a frame sent at t is hit.
  // With `dark`, control ordered sets are lost whenever bad(t) too.
  template <class Bad>
  Cycle run(Bad bad, double control_loss, Cycle limit, bool dark = false) {
    std::size_t next = 0;
    Cycle t = 0;
    for (; t < limit && delivered.size() < frames.size(); ++t) {
      while (!forward.empty() && forward.front().first <= t) {
        const Msg m = forward.front().second;
        forward.pop_front();
        if (!m.data) {
          rx.on_control(m.ctl, t);
        } else if (rx.on_frame(m.seq, m.ok, t) == LlrRx::Verdict::kDeliver) {
          delivered.push_back(m.frame->id);
        }
      }
      while (!backward.empty() && backward.front().first <= t) {
        tx.on_control(backward.front().second.ctl, t);
        backward.pop_front();
      }
      tx.released().clear();
      tx.tick(t);
      if (auto ctl = rx.poll(t); ctl && !rng.chance(control_loss) && !(dark && bad(t)))
        backward.push_back({t + latency, {false, 0, true, *ctl, nullptr}});
      if (auto init = tx.poll_control()) {
        if (!(dark && bad(t))) forward.push_back({t + latency, {false, 0, true, *init, nullptr}});
      } else if (auto r = tx.next_replay(t)) {
        forward.push_back({t + latency, {true, r->second, !bad(t), {}, r->first}});
      } else if (next < frames.size() && tx.can_accept(64)) {
        const std::uint32_t seq = tx.accept(&frames[next], 64, t);
        forward.push_back({t + latency, {true, seq, !bad(t), {}, &frames[next]}});
        ++next;
      }
    }
    return t;
  }
  void expect_all_delivered_once_in_order() const {
    ASSERT_EQ(delivered.size(), frames.size());
    for (std::size_t i = 0; i < delivered.size(); ++i) ASSERT_EQ(delivered[i], i) << "at " << i;
  }
};

// CI runs 20,000 frames per case; XY_LONG=1 runs the long variant of 1,000,000.
std::size_t frames_to_run() { return std::getenv("XY_LONG") ? 1000000 : 20000; }

class LlrLoss : public ::testing::TestWithParam<double> {};

TEST_P(LlrLoss, EveryFrameDeliveredOnceInOrderAcrossSequenceWraps) {
  Harness h(small_config(), frames_to_run());  // 8-bit numbers: 78 wraps in CI
  Rng loss(3, "loss");
  const double p = GetParam();
  h.run([&](Cycle) { return loss.chance(p); }, p, 1'000'000'000);
  h.expect_all_delivered_once_in_order();
  EXPECT_EQ(h.tx.flushed_frames(), 0u);
}
INSTANTIATE_TEST_SUITE_P(Llr, LlrLoss, ::testing::Values(1e-6, 1e-4, 1e-2, 0.05));

TEST(Llr, BurstsOfOneHundredLostFramesAreRecovered) {
  Harness h(small_config(), frames_to_run());
  Rng burst(4, "burst");
  Cycle burst_until = 0;
  h.run(
      [&](Cycle t) {
        if (t < burst_until) return true;
        if (burst.chance(1e-3)) burst_until = t + 100;  // one frame per cycle: 100 frames
        return t < burst_until;
      },
      0, 1'000'000'000);
  h.expect_all_delivered_once_in_order();
}

// A lane that corrupts every frame while control sets get through: the RX re-NACKs every
// nack_timer (< replay_timer); every window of frames must end in a FLUSH, none delivered, and
// the TX keeps taking new frames (never a stuck port).
TEST(Llr, ADeadLaneFlushesEveryFrameAndNeverSticks) {
  const LlrConfig c = small_config();
  ASSERT_LT(c.nack_timer_cycles, c.replay_timer_cycles);
  Harness h(c, 1000);
  const Cycle end = h.run([](Cycle) { return true; }, 0, 200'000);
  EXPECT_EQ(end, 200'000u);  // nothing delivered, so the harness ran to its limit
  EXPECT_TRUE(h.delivered.empty());
  EXPECT_EQ(h.tx.flushed_frames(), h.frames.size());
  EXPECT_EQ(h.tx.kept(), 0u);
  EXPECT_EQ(h.tx.state(), LlrTxState::kAdvance);
  EXPECT_EQ(h.tx.timer_replays(), 0u);  // the NACKs came first every time
}

TEST(Llr, LinkFlapsLoseEverythingForAWhileAndLoseNoFrame) {
  Harness h(small_config(), frames_to_run());
  // Dark for 300 cycles every 5000: data and control both lost (the replay timer recovers).
  auto dark = [](Cycle t) { return t % 5000 < 300; };
  h.run(dark, 0, 1'000'000'000, true);
  h.expect_all_delivered_once_in_order();
}

}  // namespace
}  // namespace xy::link
