#include "hw/link/pfc.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/test_util.hpp"

#include <algorithm>
#include <deque>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>

#include "kernel/config.hpp"
#include "kernel/rng.hpp"

namespace xy::link {
namespace {

using xy::testing::config_error_of;

using ::testing::HasSubstr;

TEST(Pfc, ValidationNamesTheField) {
  EXPECT_EQ(config_error_of([] { PfcConfig{}.validate(); }), "");
  const std::pair<std::function<void(PfcConfig&)>, std::string> cases[] = {
      {[](PfcConfig& c) { c.priorities = 0; }, "pfc.priorities = 0: must be in [1, 8]"},
      {[](PfcConfig& c) { c.priorities = 9; }, "pfc.priorities = 9"},
      {[](PfcConfig& c) { c.line_gbps = 0; }, "pfc.line_gbps = 0"},
      {[](PfcConfig& c) { c.buffer_bytes = 0; }, "pfc.buffer_bytes = 0"},
      {[](PfcConfig& c) { c.headroom_bytes = c.buffer_bytes; }, "pfc.headroom_bytes = 131072: must be < buffer_bytes"},
      {[](PfcConfig& c) { c.xoff_bytes = 98305; },
       "pfc.xoff_bytes = 98305: must be in [1, buffer_bytes - headroom_bytes = 98304]"},
      {[](PfcConfig& c) { c.xon_bytes = c.xoff_bytes; }, "pfc.xon_bytes = 98304: must be < xoff_bytes = 98304"},
      {[](PfcConfig& c) { c.pause_quanta = 1; }, "pfc.pause_quanta = 1"},
      {[](PfcConfig& c) { c.refresh_quanta = 0xFFFF; }, "pfc.refresh_quanta = 65535: must be in [1, pause_quanta - 1"},
      {[](PfcConfig& c) { c.refresh_quanta = 0; }, "pfc.refresh_quanta = 0"},
  };
  for (const auto& [mutate, message] : cases) {
    PfcConfig c;
    mutate(c);
    EXPECT_THAT(config_error_of([&] { c.validate(); }), HasSubstr(message));
  }
  PfcConfig bad;
  bad.xon_bytes = bad.xoff_bytes + 1;
  EXPECT_THAT(config_error_of([&] { bad.validate("port2.pfc"); }), HasSubstr("port2.pfc.xon_bytes"));
  EXPECT_THAT(config_error_of([&] { PfcReceiver r(bad, kNs); }), HasSubstr("xon_bytes"));
  EXPECT_THAT(config_error_of([&] { PfcSender s(bad, kNs); }), HasSubstr("xon_bytes"));
}

TEST(Pfc, PauseQuantaConvertToCyclesRoundedUp) {
  EXPECT_EQ(pause_cycles(1000, 100, kNs), 5120u);     // 1000 x 5.12 ns
  EXPECT_EQ(pause_cycles(0xFFFF, 100, kNs), 335540u);  // 335539.2 ns
  EXPECT_EQ(pause_cycles(1, 800, kNs), 1u);            // 0.64 ns
  EXPECT_EQ(pause_cycles(0, 800, kNs), 0u);
  // 128 ns; the period is rounded to whole femtoseconds, so 170 cycles fall 30 fs short.
  EXPECT_EQ(pause_cycles(100, 400, period_from_mhz(1328.125)), 171u);
  Rng rng(3, "pfc.quanta");
  const double rates[] = {10, 25, 100, 200, 400, 800, 1600};
  for (int i = 0; i < 100000; ++i) {
    const auto q = static_cast<std::uint32_t>(rng.below(65536));
    const double gbps = rates[rng.below(7)];
    const Time period = rng.between(300 * kPs, 5 * kNs);
    const Cycle n = pause_cycles(q, gbps, period);
    const double fs = q * 512.0 * 1e6 / gbps;
    ASSERT_GE(static_cast<double>(n * period) + 0.5, fs);
    ASSERT_LT(static_cast<double>(n * period), fs + period + 0.5);
  }
}

TEST(Pfc, SenderHonoursPauseForExactlyTheQuanta) {
  PfcConfig c;
  c.line_gbps = 100;
  PfcSender s(c, kNs);
  PauseFrame f;
  f.enable_vector = 1u << 3;
  f.quanta[3] = 1000;
  f.quanta[4] = 500;  // not enabled: ignored
  s.on_pause(f, 500);
  EXPECT_TRUE(s.paused(3, 500));
  EXPECT_TRUE(s.paused(3, 500 + 5119));
  EXPECT_FALSE(s.paused(3, 500 + 5120));  // 1000 quanta x 512 bits at 100 Gb/s = 5120 cycles of 1 ns
  EXPECT_FALSE(s.paused(4, 501));
  EXPECT_FALSE(s.paused(2, 501));

  s.on_pause(f, 3000);  // a refresh extends the pause from its arrival
  EXPECT_EQ(s.paused_until(3), 8120u);
  PauseFrame xon;
  xon.enable_vector = 1u << 3;
  s.on_pause(xon, 4000);  // quanta 0: resume at once
  EXPECT_FALSE(s.paused(3, 4000));

  Rng rng(5, "pfc.sender");
  PfcConfig fast;
  fast.line_gbps = 400;
  const Time period = period_from_mhz(1328.125);
  PfcSender t(fast, period);
  for (int i = 0; i < 10000; ++i) {
    PauseFrame p;
    const int prio = static_cast<int>(rng.below(8));
    p.enable_vector = static_cast<std::uint8_t>(1u << prio);
    p.quanta[prio] = static_cast<std::uint16_t>(rng.between(1, 0xFFFF));
    const Cycle at = rng.below(1'000'000'000);
    t.on_pause(p, at);
    const Cycle n = pause_cycles(p.quanta[prio], 400, period);
    ASSERT_TRUE(t.paused(prio, at + n - 1));
    ASSERT_FALSE(t.paused(prio, at + n));
  }
}

TEST(Pfc, ReceiverSendsXoffAtThresholdRefreshesAndXonBelowXon) {
  PfcConfig c;
  c.buffer_bytes = 100000;
  c.headroom_bytes = 30000;
  c.xoff_bytes = 70000;
  c.xon_bytes = 50000;
  PfcReceiver r(c, kNs);
  r.on_receive(2, 69999);
  EXPECT_FALSE(r.poll(5));
  EXPECT_EQ(r.next_timer(), ~Cycle{0});
  r.on_receive(2, 1);
  EXPECT_EQ(r.next_timer(), 0u);
  auto f = r.poll(10);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->enable_vector, 1u << 2);
  EXPECT_EQ(f->quanta[2], 0xFFFF);
  EXPECT_EQ(PauseFrame::wire_bytes, 64u);
  EXPECT_TRUE(r.pausing(2));

  // Re-sent every refresh_quanta (0x8000 x 5.12 ns = 167772.16, rounded down), before the pause ends.
  const Cycle refresh = 167772;
  EXPECT_LT(refresh, pause_cycles(c.pause_quanta, c.line_gbps, kNs));
  EXPECT_EQ(r.next_timer(), 10 + refresh);
  r.on_drain(2, 20000);  // at xon exactly: still paused
  EXPECT_FALSE(r.poll(10 + refresh - 1));
  f = r.poll(10 + refresh);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->enable_vector, 1u << 2);
  EXPECT_EQ(f->quanta[2], 0xFFFF);

  r.on_drain(2, 1);  // below xon: XON
  f = r.poll(200000);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->enable_vector, 1u << 2);
  EXPECT_EQ(f->quanta[2], 0);
  EXPECT_FALSE(r.pausing(2));
  EXPECT_FALSE(r.poll(200001));
  EXPECT_EQ(r.next_timer(), ~Cycle{0});

  // Priorities changing together share one frame.
  r.on_receive(0, 70000);
  r.on_receive(7, 80000);
  f = r.poll(300000);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->enable_vector, (1u << 0) | (1u << 7));
  r.on_drain(0, 30000);
  f = r.poll(300001);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->enable_vector, 1u << 0);
  EXPECT_EQ(f->quanta[0], 0);

  EXPECT_THROW(r.on_drain(1, 1), std::logic_error);
  // 80000 + 20001 in a 100000-byte buffer: one byte beyond it, counted so that the drain balances.
  EXPECT_EQ(r.on_receive(7, 20001), 1u);
  EXPECT_EQ(r.occupancy(7), 100001u);
  EXPECT_THAT(pfc_overflow("top.b", r, 7, 20001, 1, 9),
              HasSubstr("PFC overflow at top.b priority 7, cycle 9: a 20001 B frame found 80000 of 100000 B buffered, "
                        "1 B beyond the buffer: the 30000 B headroom"));
  r.on_drain(7, 100001);
  EXPECT_EQ(r.occupancy(7), 0u);
}

// An incast burst into one ingress port: the sender streams frames at line rate on one priority
// while the egress drains that ingress at an eighth of it. A 100 Gb/s line carries 16 bytes per
// cycle at 781.25 MHz; the receiver counts bytes as they arrive; its MAC sends maximum-size
// frames back to the sender, so a PFC frame waits for the one in progress. Returns the largest
// occupancy seen and the bytes that overflowed the buffer.
struct IncastResult {
  std::uint32_t max_occupancy = 0, overflow_bytes = 0;
  int xoffs = 0, xons = 0;
};

IncastResult run_incast(const PfcConfig& c, Cycle one_way, Cycle cycles, std::uint64_t seed) {
  constexpr std::uint32_t kBeat = 16, kMaxFrame = 9000;
  constexpr int kPrio = 3;
  const Time period = period_from_mhz(781.25);
  PfcReceiver receiver(c, period);
  PfcSender sender(c, period);
  Rng rng(seed, "pfc.incast");
  std::deque<std::pair<Cycle, std::uint32_t>> forward;  // arrival cycle, bytes of one beat
  std::deque<std::pair<Cycle, PauseFrame>> reverse;     // arrival cycle, frame
  std::deque<PauseFrame> mac_queue;                     // PFC frames waiting for the reverse MAC
  Cycle mac_busy_until = rng.below(kMaxFrame / kBeat);  // random phase of the reverse traffic
  std::uint32_t tx_left = 0;
  IncastResult result;
  for (Cycle now = 0; now < cycles; ++now) {
    while (!reverse.empty() && reverse.front().first <= now) {
      sender.on_pause(reverse.front().second, now);
      reverse.pop_front();
    }
    while (!forward.empty() && forward.front().first <= now) {
      result.overflow_bytes += receiver.on_receive(kPrio, forward.front().second);
      forward.pop_front();
    }
    receiver.on_drain(kPrio, std::min<std::uint32_t>(receiver.occupancy(kPrio), 2));
    result.max_occupancy = std::max(result.max_occupancy, receiver.occupancy(kPrio));
    if (auto f = receiver.poll(now)) {
      (f->quanta[kPrio] ? result.xoffs : result.xons) += 1;
      mac_queue.push_back(*f);
    }
    if (now >= mac_busy_until) {
      if (!mac_queue.empty()) {
        mac_busy_until = now + PauseFrame::wire_bytes / kBeat;
        reverse.emplace_back(mac_busy_until + one_way, mac_queue.front());
        mac_queue.pop_front();
      } else {
        mac_busy_until = now + (kMaxFrame + kBeat - 1) / kBeat;
      }
    }
    if (tx_left == 0 && !sender.paused(kPrio, now))
      tx_left = rng.chance(0.5) ? kMaxFrame : static_cast<std::uint32_t>(rng.between(64, kMaxFrame));
    if (tx_left > 0) {
      const std::uint32_t beat = std::min(tx_left, kBeat);
      forward.emplace_back(now + one_way, beat);
      tx_left -= beat;
    }
  }
  return result;
}

PfcConfig incast_config(std::uint32_t headroom) {
  PfcConfig c;
  c.xoff_bytes = 60000;
  c.xon_bytes = 40000;
  c.headroom_bytes = headroom;
  c.buffer_bytes = c.xoff_bytes + headroom;
  c.pause_quanta = 4000;    // 20.48 us
  c.refresh_quanta = 2000;  // so refreshes happen while the queue drains
  return c;
}

TEST(Pfc, HeadroomForTheRoundTripAbsorbsAnIncastBurst) {
  const Time period = period_from_mhz(781.25);
  for (Cycle one_way : {Cycle{100}, Cycle{2000}}) {  // 128 ns and 2.56 us of wire each way
    // Round trip: the wire both ways and a cycle to decide at each end.
    const std::uint64_t headroom = required_headroom_bytes(100, (2 * one_way + 2) * period, 9000);
    EXPECT_EQ(headroom, 16 * (2 * one_way + 2) + 2 * 9000 + 64);
    const PfcConfig c = incast_config(static_cast<std::uint32_t>(headroom));
    for (std::uint64_t seed = 1; seed <= 4; ++seed) {
      SCOPED_TRACE("one way " + std::to_string(one_way) + " cycles, seed " + std::to_string(seed));
      IncastResult r;
      r = run_incast(c, one_way, 300000, seed);
      ASSERT_EQ(r.overflow_bytes, 0u);
      EXPECT_GE(r.xoffs, 5);
      EXPECT_GE(r.xons, 3);
      EXPECT_GT(r.max_occupancy, c.xoff_bytes + headroom / 2) << "the headroom was barely used";
      EXPECT_LE(r.max_occupancy, c.buffer_bytes);
    }
  }
}

TEST(Pfc, TooLittleHeadroomOverflows) {
  const Time period = period_from_mhz(781.25);
  const std::uint64_t needed = required_headroom_bytes(100, 4002 * period, 9000);
  for (std::uint64_t divisor : {2, 4}) {
    SCOPED_TRACE("headroom / " + std::to_string(divisor));
    EXPECT_GT(run_incast(incast_config(static_cast<std::uint32_t>(needed / divisor)), 2000, 300000, divisor).overflow_bytes,
              0u);
  }
}

}  // namespace
}  // namespace xy::link
