// PortFc (hw/link/port_fc.hpp): what it says while it holds its feeder back, and the CC_Updates
// its two halves count, on two ends joined by control channels and stepped by hand.
#include "hw/link/port_fc.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "kernel/channel.hpp"
#include "kernel/clock.hpp"
#include "kernel/stats.hpp"
#include "tests/kernel/run_until.hpp"

namespace xy::link {
namespace {

constexpr Time kPeriod = 1000000;  // 1 ns

// A sending end and a receiving end of one VC of CBFC, 100 credits of 128 B, a CC_Update every
// 100 cycles, messages a cycle on the way each way.
struct Ends {
  Ends()
      : clock("clk", kPeriod), down("down", clock, ChannelSpec{1}), up("up", clock, ChannelSpec{1}),
        tx("tx", FcMode::kCbfc, cbfc(), PfcConfig{}, clock, stats, down, up, half(true)),
        rx("rx", FcMode::kCbfc, cbfc(), PfcConfig{}, clock, stats, up, down, half(false)) {
    clock.attach(tx);
    clock.attach(rx);
    down.connect(&tx, &rx);
    up.connect(&rx, &tx);
  }
  static CbfcConfig cbfc() {
    CbfcConfig c;
    c.vcs = 1;
    c.buffer_credits = {100};
    c.resync_period_cycles = 100;
    return c;
  }
  static PortFcOptions half(bool sends) {
    PortFcOptions o;
    o.sends = sends;
    o.receives = !sends;
    return o;
  }
  static Packet frame(std::uint32_t bytes) {
    Packet p;
    p.vc = 0;
    p.bytes = bytes;
    return p;
  }
  Clock clock;
  Stats stats;
  Channel<FcMessage> down, up;
  PortFc tx, rx;
};

// 8 frames of 1500 B take ceil(1500 / 128) = 12 credits each, 96 of the 100: a ninth finds 4.
TEST(PortFc, WhileItHoldsItsFeederItSaysWhyForTheFrameItRefusedLast) {
  Ends e;
  EXPECT_EQ(e.tx.holding(0), "");  // nothing refused yet
  for (int i = 0; i < 8; ++i) {
    ASSERT_TRUE(e.tx.can_send(Ends::frame(1500))) << i;
    e.tx.on_send(Ends::frame(1500));
  }
  EXPECT_EQ(e.tx.holding(0), "");
  EXPECT_FALSE(e.tx.can_send(Ends::frame(1500)));
  EXPECT_EQ(e.tx.holding(0), "tx VC 0: a 1500 B frame needs 12 credits, 4 of 100 available (96 in use)");
  // A frame of 600 B needs ceil(600 / 128) = 5: refused too, and now the one named.
  EXPECT_FALSE(e.tx.can_send(Ends::frame(600)));
  EXPECT_EQ(e.tx.holding(0), "tx VC 0: a 600 B frame needs 5 credits, 4 of 100 available (96 in use)");
  // One of 64 B (a credit) may go: the hold is over, nothing to say.
  EXPECT_TRUE(e.tx.can_send(Ends::frame(64)));
  EXPECT_EQ(e.tx.holding(0), "");
  EXPECT_EQ(e.tx.holding(1), "");  // nor for a VC never refused
}

// A CC_Update every 100 cycles: at cycles 100, 200 and 300 by 350, each at the far end a cycle
// later.
TEST(PortFc, CountsTheCcUpdatesItSentAndTheOnesThatArrived) {
  Ends e;
  e.tx.wake_at(0);
  e.rx.wake_at(0);
  testing::run_until({&e.clock}, 350 * kPeriod);
  EXPECT_EQ(e.tx.cc_updates_sent(), 3u);
  EXPECT_EQ(e.rx.cc_updates_arrived(), 3u);
  EXPECT_EQ(e.rx.cc_updates_sent(), 0u);  // a receiving half sends none
  EXPECT_EQ(e.tx.cc_updates_arrived(), 0u);
}

// Nine frames of 1500 B, 12 credits each, into a buffer of 100: the ninth lands 8 credits
// beyond it. Reported whether or not the port has taken the arrivals in yet, and once.
TEST(PortFc, ReportsAnOverflowAmongArrivalsNotYetTakenIn) {
  Ends e;
  e.rx.wake_at(0);
  testing::run_until({&e.clock}, 5 * kPeriod);
  for (int i = 0; i < 9; ++i) e.rx.on_arrive(Ends::frame(1500));
  const std::string expected = "; 1 frames overflowed in all, the worst by 8 credits";
  EXPECT_THAT(e.rx.overflow(), ::testing::EndsWith(expected));
  e.rx.wake_at(e.clock.now() + 1);
  testing::run_until({&e.clock}, e.clock.time_of(e.clock.now() + 2));
  EXPECT_THAT(e.rx.overflow(), ::testing::EndsWith(expected));
}

// A PFC receiving end counts its XOFFs by the priority they pause: priority 3 fills to
// xoff_bytes (24 frames of 4096 B = 98304 B) twice, draining below xon_bytes between (an XON,
// not counted); priority 5 never reaches it.
TEST(PortFc, CountsTheXoffsItSendsByPriority) {
  Clock clock("clk", kPeriod);
  Stats stats;
  Channel<FcMessage> out("out", clock, ChannelSpec{1}), in("in", clock, ChannelSpec{1});
  PortFcOptions o;
  o.sends = false;
  PortFc rx("rx", FcMode::kPfc, CbfcConfig{}, PfcConfig{}, clock, stats, out, in, o);
  clock.attach(rx);
  Packet frame;
  frame.bytes = 4096;
  auto fill = [&](std::uint8_t prio, int frames) {
    frame.vc = prio;
    for (int i = 0; i < frames; ++i) rx.on_arrive(frame);
    rx.wake_at(clock.now() + 1);
    testing::run_until({&clock}, clock.time_of(clock.now() + 10));
    while (out.can_pop()) out.pop();
  };
  fill(3, 24);
  fill(5, 23);
  EXPECT_EQ(rx.xoffs(3), 1u);
  for (int i = 0; i < 6; ++i) rx.on_depart(4096, 3);  // 73728 B < xon_bytes: an XON
  fill(3, 0);
  fill(3, 6);
  EXPECT_EQ(rx.xoffs(3), 2u);
  EXPECT_EQ(rx.xoffs(5), 0u);
  EXPECT_EQ(rx.xoffs(0), 0u);
}

}  // namespace
}  // namespace xy::link
