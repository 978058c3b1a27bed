#include "hw/link/cbfc.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/test_util.hpp"

#include <algorithm>
#include <deque>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "kernel/config.hpp"
#include "kernel/rng.hpp"

namespace xy::link {
namespace {

using xy::testing::config_error_of;

using ::testing::HasSubstr;
using ::testing::Not;

CbfcConfig config(int vcs, std::uint32_t buffer, std::uint32_t bits = 20) {
  CbfcConfig c;
  c.vcs = vcs;
  c.counter_bits = bits;
  c.buffer_credits.assign(vcs, buffer);
  return c;
}

std::string logic_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::logic_error& e) {
    return e.what();
  }
  return "";
}

// Items on a wire with a fixed latency in steps, in order.
template <typename T>
class DelayLine {
 public:
  explicit DelayLine(Cycle latency) : latency_(latency) {}
  void push(Cycle now, T item) { items_.emplace_back(now + latency_, std::move(item)); }
  std::optional<T> pop(Cycle now) {
    if (items_.empty() || items_.front().first > now) return std::nullopt;
    T item = std::move(items_.front().second);
    items_.pop_front();
    return item;
  }
  bool empty() const { return items_.empty(); }

 private:
  Cycle latency_;
  std::deque<std::pair<Cycle, T>> items_;
};

TEST(Cbfc, CreditsForRoundsUpWithOverhead) {
  CbfcConfig c = config(1, 100);
  EXPECT_EQ(c.credits_for(1), 1u);
  EXPECT_EQ(c.credits_for(128), 1u);
  EXPECT_EQ(c.credits_for(129), 2u);
  EXPECT_EQ(c.credits_for(9000), 71u);  // 70.3 credits
  c.overhead_bytes = 64;
  EXPECT_EQ(c.credits_for(64), 1u);
  EXPECT_EQ(c.credits_for(65), 2u);
  EXPECT_EQ(c.credits_for(9024), 71u);
  EXPECT_EQ(c.credits_for(9025), 72u);
  c.overhead_bytes = -16;
  EXPECT_EQ(c.credits_for(10), 1u);  // never less than one credit
  EXPECT_EQ(c.credits_for(144), 1u);
  EXPECT_EQ(c.credits_for(145), 2u);
  c.credit_bytes = 256;
  c.overhead_bytes = 0;
  EXPECT_EQ(c.credits_for(9000), 36u);

  Rng rng(1, "cbfc.credits_for");
  for (int i = 0; i < 100000; ++i) {
    c.credit_bytes = static_cast<std::uint32_t>(rng.between(1, 1024));
    c.overhead_bytes = static_cast<std::int32_t>(rng.between(0, 143)) - 16;
    const auto bytes = static_cast<std::uint32_t>(rng.between(17, 20000));
    const std::int64_t charged = std::int64_t{bytes} + c.overhead_bytes;
    const std::int64_t n = c.credits_for(bytes);
    ASSERT_GE(n * c.credit_bytes, charged);
    ASSERT_LT((n - 1) * c.credit_bytes, charged);
  }
}

TEST(Cbfc, ValidationNamesTheField) {
  EXPECT_EQ(config_error_of([] { CbfcConfig{}.validate(); }), "");
  EXPECT_EQ(config_error_of([] { config(32, 1000).validate(); }), "");
  const std::pair<std::function<void(CbfcConfig&)>, std::string> cases[] = {
      {[](CbfcConfig& c) { c.vcs = 0; }, "cbfc.vcs = 0: must be in [1, 32]"},
      {[](CbfcConfig& c) { c.vcs = 33; }, "cbfc.vcs = 33"},
      {[](CbfcConfig& c) { c.buffer_credits.pop_back(); },
       "cbfc.buffer_credits has 3 entries: must have one per VC (4)"},
      {[](CbfcConfig& c) { c.buffer_credits[2] = 0; }, "cbfc.buffer_credits[2] = 0"},
      {[](CbfcConfig& c) { c.counter_bits = 7; }, "cbfc.counter_bits = 7: must be in [8, 32]"},
      {[](CbfcConfig& c) { c.counter_bits = 33; }, "cbfc.counter_bits = 33"},
      {[](CbfcConfig& c) { c.counter_bits = 12; c.buffer_credits[1] = 2048; },
       "cbfc.buffer_credits[1] = 2048: must be below half the 12-bit counter range (2048)"},
      {[](CbfcConfig& c) { c.update_spacing_bytes = 256 * 1024 + 1; },
       "cbfc.update_spacing_bytes = 262145: must be in [800, 262144] bytes"},
      {[](CbfcConfig& c) { c.update_spacing_bytes = 799; }, "cbfc.update_spacing_bytes = 799"},
      {[](CbfcConfig& c) { c.credit_bytes = 0; }, "cbfc.credit_bytes = 0"},
      {[](CbfcConfig& c) { c.overhead_bytes = -17; }, "cbfc.overhead_bytes = -17: must be in [-16, 127]"},
      {[](CbfcConfig& c) { c.overhead_bytes = 128; }, "cbfc.overhead_bytes = 128"},
      {[](CbfcConfig& c) { c.update_timer_cycles = 0; }, "cbfc.update_timer_cycles = 0"},
      {[](CbfcConfig& c) { c.refresh_cycles = 0; }, "cbfc.refresh_cycles = 0"},
      {[](CbfcConfig& c) { c.resync_period_cycles = 0; }, "cbfc.resync_period_cycles = 0"},
      {[](CbfcConfig& c) { c.cf_update_bytes = 0; }, "cbfc.cf_update_bytes = 0"},
  };
  for (const auto& [mutate, message] : cases) {
    CbfcConfig c = config(4, 1000);
    mutate(c);
    EXPECT_THAT(config_error_of([&] { c.validate(); }), HasSubstr(message));
  }
  CbfcConfig bad = config(2, 0);
  EXPECT_THAT(config_error_of([&] { bad.validate("port3.cbfc"); }), HasSubstr("port3.cbfc.buffer_credits[0] = 0"));
  EXPECT_THAT(config_error_of([&] { CbfcSender s(bad); }), HasSubstr("buffer_credits[0]"));
  EXPECT_THAT(config_error_of([&] { CbfcReceiver r(bad); }), HasSubstr("buffer_credits[0]"));
  CbfcConfig widest = config(1, 0x7FFFFFFF, 32);  // just below half of 2^32
  EXPECT_EQ(config_error_of([&] { widest.validate(); }), "");
}

TEST(Cbfc, SenderStopsAtTheLimitAndCountersWrap) {
  CbfcSender s(config(2, 10, 8));
  for (int round = 0; round < 1000; ++round) {  // 9 credits a round: the 8-bit counters wrap 35 times
    ASSERT_TRUE(s.can_send(1, 384));  // 3 credits
    s.on_send(1, 384);
    s.on_send(1, 384);
    s.on_send(1, 384);
    ASSERT_EQ(s.in_use(1), 9u);
    ASSERT_EQ(s.credits_available(1), 1u);
    ASSERT_TRUE(s.can_send(1, 128));
    ASSERT_FALSE(s.can_send(1, 129));
    ASSERT_THAT(logic_error_of([&] { s.on_send(1, 384); }), HasSubstr("needs 3 credits, 1 available"));
    ASSERT_TRUE(s.on_cf_update(1, (s.freed(1) + 9) & 0xFF));
    ASSERT_EQ(s.in_use(1), 0u);
    ASSERT_EQ(s.credits_available(1), 10u);
  }
  EXPECT_EQ(s.consumed(1), 9000u % 256);
  EXPECT_EQ(s.credits_available(0), 10u);  // VCs are independent
  EXPECT_THROW(s.can_send(2, 64), std::out_of_range);
}

TEST(Cbfc, ReceiverReportsOverflowAndThrowsOnOverdrain) {
  CbfcReceiver r(config(2, 10));
  EXPECT_EQ(r.on_receive(0, 1280), 0u);  // 10 credits: full
  EXPECT_EQ(r.occupancy(0), 10u);
  EXPECT_EQ(r.on_receive(0, 1), 1u);     // one credit beyond the buffer, counted all the same
  EXPECT_EQ(r.occupancy(0), 11u);
  EXPECT_THAT(cbfc_overflow("top.b", r, 0, 1, 1, 42),
              HasSubstr("CBFC overflow at top.b VC 0, cycle 42: a 1 B frame (1 credits) found 10 of 10 credits"));
  r.on_drain(0, 1);
  EXPECT_EQ(r.on_receive(1, 64), 0u);
  r.on_drain(0, 1280);
  EXPECT_EQ(r.occupancy(0), 0u);
  EXPECT_EQ(r.freed(0), 11u);
  EXPECT_THAT(logic_error_of([&] { r.on_drain(0, 64); }), HasSubstr("drain of 1 credits with 0 buffered"));
}

TEST(Cbfc, CfUpdatesFollowSpacingTimerAndRefresh) {
  CbfcConfig c = config(3, 1000);
  c.update_spacing_bytes = 6400;  // 50 credits
  c.update_timer_cycles = 100;
  c.refresh_cycles = 1000;
  CbfcReceiver r(c);
  EXPECT_EQ(r.next_timer(), 1000u);  // nothing unreported: the first refresh
  r.on_receive(1, 1280);
  r.on_drain(1, 1280);  // 10 credits: below the spacing, waits for the timer
  EXPECT_EQ(r.unreported(1), 10u);
  EXPECT_EQ(r.next_timer(), 100u);
  EXPECT_FALSE(r.poll(99));
  auto u = r.poll(100);
  ASSERT_TRUE(u);
  EXPECT_EQ(u->kind, CreditUpdate::kCf);
  EXPECT_EQ(u->vc, 1);
  EXPECT_EQ(u->freed, 10u);
  EXPECT_EQ(u->wire_bytes, 8u);
  EXPECT_EQ(r.unreported(1), 0u);

  // At the spacing an update is due at once, the VC with most unreported first.
  r.on_receive(0, 55 * 128);
  r.on_drain(0, 55 * 128);
  r.on_receive(2, 60 * 128);
  r.on_drain(2, 60 * 128);
  EXPECT_EQ(r.next_timer(), 0u);
  u = r.poll(150);
  ASSERT_TRUE(u);
  EXPECT_EQ(u->vc, 2);
  EXPECT_EQ(u->freed, 60u);
  u = r.poll(150);
  ASSERT_TRUE(u);
  EXPECT_EQ(u->vc, 0);
  EXPECT_FALSE(r.poll(151));

  // Unchanged counters are re-sent every refresh period, oldest first.
  EXPECT_EQ(r.next_timer(), 1100u);
  EXPECT_FALSE(r.poll(1099));
  u = r.poll(1100);
  ASSERT_TRUE(u);
  EXPECT_EQ(u->vc, 1);
  EXPECT_EQ(u->freed, 10u);
  EXPECT_EQ(r.poll(1150)->vc, 0);
  EXPECT_EQ(r.poll(1150)->vc, 2);
  EXPECT_FALSE(r.poll(1150));
}

// A port takes its drains in late and is woken only for the cycle due_after_drain names. That
// must be where the receiver's own timer goes once the drain is counted (first principles: the
// VC's term of the earliest update falls to 0 at the spacing, or from its refresh to its update
// timer when the VC had nothing unreported), and the same whether the drains before it are
// counted already or still pending.
TEST(Cbfc, ADrainMovesTheTimerOnlyToTheCycleItNamesDrainsNotYetCountedIncluded) {
  CbfcConfig c = config(3, 1000);
  c.update_spacing_bytes = 6400;  // 50 credits
  c.update_timer_cycles = 100;
  c.refresh_cycles = 1000;
  {  // by hand: nothing reported yet, so the VC's last update counts from cycle 0
    CbfcReceiver r(c);
    r.on_receive(1, 60 * 128);
    EXPECT_EQ(r.due_after_drain(1, 0, 10), 100u);          // the first unreported: its update timer
    EXPECT_EQ(r.due_after_drain(1, 10, 10), ~Cycle{0});    // a timer runs already
    EXPECT_EQ(r.due_after_drain(1, 10, 40), 0u);           // 10 + 40 reaches the 50-credit spacing
    EXPECT_EQ(r.due_after_drain(0, 0, 49), 100u);          // 49 on another VC: its own timer
  }
  CbfcReceiver counted(c), late(c);  // `counted` takes each drain in at once
  std::vector<std::pair<int, std::uint32_t>> untaken;
  std::vector<std::uint32_t> pending(3, 0);
  const auto take_in = [&] {
    for (const auto& [vc, bytes] : untaken) late.on_drain(vc, bytes);
    untaken.clear();
    std::fill(pending.begin(), pending.end(), 0);
  };
  Rng pick(7, "cbfc.due_after_drain");
  int at_once = 0, timer_started = 0, unmoved = 0;
  for (Cycle now = 0; now < 20000; now += pick.below(6)) {
    const int vc = static_cast<int>(pick.below(3));
    const auto bytes = static_cast<std::uint32_t>(pick.between(64, 1500));
    const std::uint32_t credits = c.credits_for(bytes);
    counted.on_receive(vc, bytes);
    late.on_receive(vc, bytes);
    const Cycle before = counted.next_timer();
    const Cycle due = counted.due_after_drain(vc, 0, credits);
    ASSERT_EQ(late.due_after_drain(vc, pending[vc], credits), due) << "cycle " << now;
    counted.on_drain(vc, bytes);
    ASSERT_EQ(counted.next_timer(), std::min(before, due)) << "cycle " << now;
    at_once += due == 0;
    timer_started += due != 0 && due != ~Cycle{0};
    unmoved += due == ~Cycle{0};
    untaken.emplace_back(vc, bytes);
    pending[vc] += credits;
    if (pick.chance(0.25)) take_in();
    if (counted.next_timer() <= now) {  // a port's cycle: the calls first, then its updates
      take_in();
      while (auto u = counted.poll(now)) {
        const auto v = late.poll(now);
        ASSERT_TRUE(v);
        EXPECT_EQ(v->vc, u->vc);
        EXPECT_EQ(v->freed, u->freed);
      }
      EXPECT_FALSE(late.poll(now));
    }
  }
  EXPECT_GT(at_once, 100);
  EXPECT_GT(timer_started, 100);
  EXPECT_GT(unmoved, 100);
}

TEST(Cbfc, CcUpdatesCarryEveryConsumedCounterEachPeriod) {
  CbfcConfig c = config(3, 100);
  c.resync_period_cycles = 5000;
  CbfcSender s(c);
  s.on_send(0, 1000);  // 8 credits
  s.on_send(2, 64);
  EXPECT_EQ(s.next_timer(), 5000u);
  EXPECT_FALSE(s.poll(4999));
  auto u = s.poll(5000);
  ASSERT_TRUE(u);
  EXPECT_EQ(u->kind, CreditUpdate::kCc);
  EXPECT_EQ(u->vc, -1);
  EXPECT_EQ(u->counters, (std::vector<std::uint32_t>{8, 0, 1}));
  EXPECT_EQ(u->wire_bytes, 64u);
  EXPECT_FALSE(s.poll(9999));
  EXPECT_TRUE(s.poll(10000));
}

TEST(Cbfc, CreditsOfLostFramesReturnOnlyThroughCcUpdate) {
  CbfcConfig c = config(1, 100);
  c.update_timer_cycles = 10;
  c.refresh_cycles = 100;
  c.resync_period_cycles = 1000;
  CbfcSender s(c);
  CbfcReceiver r(c);
  for (int i = 0; i < 3; ++i) s.on_send(0, 1000);  // 8 credits each; the second is lost on the wire
  r.on_receive(0, 1000);
  r.on_receive(0, 1000);
  r.on_drain(0, 1000);
  r.on_drain(0, 1000);
  for (Cycle t = 0; t < 999; ++t) {  // CF_Updates and their refreshes: the lost frame's credits stay used
    if (auto u = r.poll(t)) {
      EXPECT_TRUE(s.on_cf_update(u->vc, u->freed));
    }
  }
  EXPECT_EQ(s.in_use(0), 8u);
  EXPECT_EQ(s.credits_available(0), 92u);
  auto cc = s.poll(1000);
  ASSERT_TRUE(cc);
  EXPECT_TRUE(r.on_cc_update(0, cc->counters[0]));
  EXPECT_EQ(r.consumed(0), 24u);
  EXPECT_EQ(r.freed(0), 24u);
  EXPECT_EQ(r.occupancy(0), 0u);
  auto u = r.poll(1000);
  ASSERT_TRUE(u);
  EXPECT_TRUE(s.on_cf_update(u->vc, u->freed));
  EXPECT_EQ(s.in_use(0), 0u);
  EXPECT_EQ(s.credits_available(0), 100u);
  // The same CC_Update again changes nothing; an older one is refused.
  EXPECT_TRUE(r.on_cc_update(0, 24));
  EXPECT_EQ(r.freed(0), 24u);
  EXPECT_FALSE(r.on_cc_update(0, 16));
  EXPECT_EQ(r.consumed(0), 24u);
  EXPECT_EQ(r.freed(0), 24u);
}

TEST(Cbfc, StaleAndReorderedUpdatesNeverReduceTheLimit) {
  const std::uint32_t buffer = 100;
  CbfcSender s(config(1, buffer, 8));  // 8-bit counters: the rounds below wrap them many times
  CbfcReceiver r(config(1, buffer, 8));
  Rng rng(7, "cbfc.stale");
  std::uint64_t total = 0;
  for (int round = 0; round < 300; ++round) {
    std::vector<std::uint32_t> frames;
    for (auto bytes = static_cast<std::uint32_t>(rng.between(64, 1500)); s.can_send(0, bytes);
         bytes = static_cast<std::uint32_t>(rng.between(64, 1500))) {
      s.on_send(0, bytes);
      r.on_receive(0, bytes);
      frames.push_back(bytes);
      total += s.config().credits_for(bytes);
    }
    std::vector<std::uint32_t> snapshots;
    for (std::uint32_t bytes : frames) {
      r.on_drain(0, bytes);
      snapshots.push_back(r.freed(0));
    }
    for (std::size_t i = snapshots.size(); i > 1; --i) std::swap(snapshots[i - 1], snapshots[rng.below(i)]);
    std::uint32_t available = s.credits_available(0);
    for (std::uint32_t counter : snapshots) {
      const std::uint32_t before = s.freed(0);
      const bool applied = s.on_cf_update(0, counter);
      ASSERT_GE(s.credits_available(0), available) << "round " << round;
      available = s.credits_available(0);
      // Refused exactly when the counter is behind what the sender already knows.
      const bool behind = ((before - counter) & 0xFF) != 0 && ((counter - before) & 0xFF) > buffer;
      ASSERT_EQ(applied, !behind);
    }
    ASSERT_EQ(s.credits_available(0), buffer);
    // A counter ahead of anything consumed would free credits never used: refused.
    ASSERT_FALSE(s.on_cf_update(0, (s.freed(0) + 1) & 0xFF));
  }
  EXPECT_GE(total, 50u * 256);  // wrapped at least 50 times
}

// A sender and a receiver joined by two delay lines: data and CC_Updates one way, CF_Updates the
// other. Data frames are lost on the wire, CF and CC updates dropped; every step checks the
// invariants, and at the end every frame is accounted for and every credit is back.
struct Link {
  struct Forward {
    bool cc = false;
    int vc = 0;
    std::uint32_t bytes = 0;
    std::uint64_t seq = 0;
    bool lost = false;
    std::vector<std::uint32_t> counters;
  };
  struct Buffered {
    std::uint32_t bytes;
    std::uint64_t seq;
  };

  Link(const CbfcConfig& c, Cycle latency, std::uint64_t seed)
      : sender(c), receiver(c), forward(latency), reverse(latency), rng(seed, "cbfc.link"),
        queues(c.vcs), next_bytes(c.vcs), next_seq(c.vcs, 0), last_seq(c.vcs, 0), total_consumed(c.vcs, 0) {
    for (auto& b : next_bytes) b = draw_size();
  }

  std::uint32_t draw_size() { return static_cast<std::uint32_t>(rng.between(64, 9000)); }

  // One step; returns false (after recording a failure) when an invariant breaks.
  bool step(Cycle now, bool traffic, double drain_p, double lose_p, double drop_cf_p, double drop_cc_p) {
    const CbfcConfig& c = sender.config();
    while (auto f = forward.pop(now)) {
      if (f->cc) {
        for (int vc = 0; vc < c.vcs; ++vc) receiver.on_cc_update(vc, f->counters[vc]);
      } else if (f->lost) {
        ++lost;
      } else {
        if (receiver.on_receive(f->vc, f->bytes) != 0) {
          ADD_FAILURE() << "VC " << f->vc << " frame " << f->seq << " overflowed the receiver's buffer";
          return false;
        }
        if (f->seq < last_seq[f->vc]) {
          ADD_FAILURE() << "VC " << f->vc << " frame " << f->seq << " out of order";
          return false;
        }
        last_seq[f->vc] = f->seq;
        queues[f->vc].push_back({f->bytes, f->seq});
      }
    }
    while (auto u = reverse.pop(now)) sender.on_cf_update(u->vc, u->freed);
    if (rng.chance(drain_p)) {
      const int start = static_cast<int>(rng.below(c.vcs));
      for (int i = 0; i < c.vcs; ++i) {
        auto& q = queues[(start + i) % c.vcs];
        if (q.empty()) continue;
        receiver.on_drain((start + i) % c.vcs, q.front().bytes);
        q.pop_front();
        ++delivered;
        break;
      }
    }
    const bool cf_due = now >= receiver.next_timer();
    const auto cf = receiver.poll(now);
    if (cf.has_value() != cf_due) {
      ADD_FAILURE() << "receiver next_timer " << receiver.next_timer() << " disagrees with poll at " << now;
      return false;
    }
    if (cf && rng.chance(drop_cf_p)) {
      ++dropped_cf;
    } else if (cf) {
      reverse.push(now, *cf);
    }
    const bool cc_due = now >= sender.next_timer();
    const auto cc = sender.poll(now);
    if (cc.has_value() != cc_due) {
      ADD_FAILURE() << "sender next_timer disagrees with poll at " << now;
      return false;
    }
    if (cc && rng.chance(drop_cc_p)) {
      ++dropped_cc;
    } else if (cc) {
      forward.push(now, {true, -1, 0, 0, false, cc->counters});
    }
    if (traffic) {
      const int start = static_cast<int>(rng.below(c.vcs));
      for (int i = 0; i < c.vcs; ++i) {
        const int vc = (start + i) % c.vcs;
        if (!sender.can_send(vc, next_bytes[vc])) continue;
        sender.on_send(vc, next_bytes[vc]);
        total_consumed[vc] += c.credits_for(next_bytes[vc]);
        forward.push(now, {false, vc, next_bytes[vc], ++next_seq[vc], rng.chance(lose_p), {}});
        next_bytes[vc] = draw_size();
        ++sent;
        break;
      }
    }
    for (int vc = 0; vc < c.vcs; ++vc) {
      const std::uint32_t limit = c.buffer_credits[vc];
      // in_use wraps to a huge number if it ever went below zero.
      if (sender.in_use(vc) > limit || receiver.occupancy(vc) > limit ||
          receiver.occupancy(vc) > sender.in_use(vc)) {
        ADD_FAILURE() << "step " << now << " VC " << vc << ": sender in use " << sender.in_use(vc)
                      << ", receiver occupancy " << receiver.occupancy(vc) << ", buffer " << limit;
        return false;
      }
    }
    return true;
  }

  CbfcSender sender;
  CbfcReceiver receiver;
  DelayLine<Forward> forward;
  DelayLine<CreditUpdate> reverse;
  Rng rng;
  std::vector<std::deque<Buffered>> queues;
  std::vector<std::uint32_t> next_bytes;
  std::vector<std::uint64_t> next_seq, last_seq, total_consumed;
  std::uint64_t sent = 0, delivered = 0, lost = 0, dropped_cf = 0, dropped_cc = 0;
};

TEST(Cbfc, RandomTrafficOverLossyUpdatesKeepsEveryInvariant) {
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    CbfcConfig c = config(4, 0, 12);  // 12-bit counters wrap every 4096 credits
    c.overhead_bytes = 8;
    c.update_spacing_bytes = 800;
    c.update_timer_cycles = 40;
    c.refresh_cycles = 300;
    c.resync_period_cycles = 2000;
    Rng pick(seed, "cbfc.property.config");
    for (auto& b : c.buffer_credits) b = static_cast<std::uint32_t>(pick.between(150, 2047));
    const double drain_p = 0.3 + 0.6 * pick.uniform();
    Link link(c, 15, seed);
    Cycle now = 0;
    for (; now < 40000; ++now) ASSERT_TRUE(link.step(now, true, drain_p, 0.01, 0.3, 0.3));
    for (const Cycle end = now + 20000; now < end; ++now) ASSERT_TRUE(link.step(now, false, drain_p, 0, 0.3, 0.3));
    EXPECT_EQ(link.delivered + link.lost, link.sent);
    EXPECT_GT(link.lost, 0u);
    EXPECT_GT(link.dropped_cf, 100u);
    EXPECT_GT(link.dropped_cc, 2u);
    for (int vc = 0; vc < c.vcs; ++vc) {
      EXPECT_GE(link.total_consumed[vc], 3u * 4096) << "VC " << vc << " wrapped fewer than 3 times";
      EXPECT_EQ(link.sender.credits_available(vc), c.buffer_credits[vc]) << "VC " << vc;
      EXPECT_EQ(link.receiver.occupancy(vc), 0u);
      EXPECT_EQ(link.receiver.consumed(vc), link.sender.consumed(vc));
    }
  }
}

TEST(Cbfc, MillionDroppedCfUpdatesThenQuietPeriodRestoresEveryCredit) {
  CbfcConfig c = config(8, 0);
  for (int vc = 0; vc < c.vcs; ++vc) c.buffer_credits[vc] = 300 + 100 * vc;
  c.update_timer_cycles = 4;
  c.refresh_cycles = 8;  // every VC re-sent every 8 steps: about one CF_Update a step
  c.resync_period_cycles = 500;
  Link link(c, 20, 11);
  Cycle now = 0;
  while (link.dropped_cf < 1000000) {
    ASSERT_TRUE(link.step(now, true, 0.5, 0.05, 1.0, 0.3));
    ++now;
  }
  for (int vc = 0; vc < c.vcs; ++vc) EXPECT_GT(link.sender.in_use(vc), 0u) << "VC " << vc;
  for (const Cycle end = now + 5000; now < end; ++now) ASSERT_TRUE(link.step(now, false, 0.5, 0, 0, 0));
  EXPECT_GT(link.lost, 0u);
  EXPECT_EQ(link.delivered + link.lost, link.sent);
  for (int vc = 0; vc < c.vcs; ++vc) {
    EXPECT_EQ(link.sender.credits_available(vc), c.buffer_credits[vc]) << "VC " << vc;
    EXPECT_EQ(link.sender.in_use(vc), 0u);
  }
}

TEST(Cbfc, BufferSizingFlagsUnderProvisionedVcs) {
  CbfcConfig c = config(4, 1024);
  // 1 us at 800 Gb/s = 100000 B = 782 credits, + 71 for a 9000-byte frame + 50 of CF spacing.
  EXPECT_EQ(required_buffer_credits(c, 800, kUs, 9000), 782u + 71 + 50);
  EXPECT_EQ(check_buffer(c, 800, kUs, 9000), "");
  c.buffer_credits = {1024, 512, 1024, 902};
  const std::string short_reach = check_buffer(c, 800, kUs, 9000);
  EXPECT_THAT(short_reach, HasSubstr("VC 1 has 512, VC 3 has 902 credits"));
  EXPECT_THAT(short_reach, HasSubstr("needs 903 credits of 128 B (115.6 KB)"));
  EXPECT_THAT(short_reach, Not(HasSubstr("VC 0")));
  EXPECT_THAT(short_reach, Not(HasSubstr("short reach")));

  // 300 km of fibre, 5 us/km each way: 3 ms round trip.
  c.buffer_credits.assign(4, 4096);
  const std::string metro = check_buffer(c, 100, 3 * kMs, 9000);
  EXPECT_THAT(metro, HasSubstr("3.000 ms round trip at 100 Gb/s"));
  EXPECT_THAT(metro, HasSubstr("VC 0 has 4096"));
  EXPECT_THAT(metro, HasSubstr("needs 293090 credits of 128 B (37.5 MB)"));
  EXPECT_THAT(check_buffer(c, 800, 3 * kMs, 9000),
              HasSubstr("more than 20-bit counters can track (524287 credits): CBFC is per hop and short reach"));
}

}  // namespace
}  // namespace xy::link
