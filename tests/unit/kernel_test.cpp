// Clocks, channels and the async FIFO, stepped by hand without SystemC.
#include <gtest/gtest.h>

#include <vector>

#include "xingyun/channel.hpp"
#include "xingyun/clock.hpp"
#include "xingyun/rng.hpp"

namespace xy {
namespace {

// Records the cycles it was ticked at; optionally wakes itself again.
class Probe : public Core {
 public:
  explicit Probe(std::string name, Cycle every = 0) : Core(std::move(name)), every_(every) {}
  void eval() override { ticks.push_back(now()); }
  void commit() override {
    if (every_) wake_at(now() + every_);
  }
  std::vector<Cycle> ticks;

 private:
  Cycle every_;
};

// Steps several clocks in time order, like the SystemC shells do (ties: any order).
void run_until(std::vector<Clock*> clocks, Time end) {
  for (;;) {
    Clock* next = nullptr;
    for (Clock* c : clocks)
      if (c->has_work() && c->time_of(c->next_due()) <= end &&
          (!next || c->time_of(c->next_due()) < next->time_of(next->next_due())))
        next = c;
    if (!next) return;
    next->step();
  }
}

TEST(Clock, TicksOnlyTheCyclesACoreIsWokenFor) {
  Clock clock("clk", kNs);
  Probe p("p");
  clock.attach(p);
  p.wake_at(3);
  p.wake_at(3);  // twice for one cycle: ticked once
  p.wake_at(10);
  p.wake_at(1000);  // beyond the near wheel
  run_until({&clock}, kUs * 10);
  EXPECT_EQ(p.ticks, (std::vector<Cycle>{3, 10, 1000}));
  EXPECT_EQ(clock.steps(), 3u);  // idle cycles were skipped, not stepped
}

TEST(Clock, BusyCoreIsTickedEveryCycleUntilItStops) {
  struct Counter : Core {
    Counter() : Core("c") { set_busy(true); }
    int left = 5;
    void eval() override { --left; }
    void commit() override { set_busy(left > 0); }
  } c;
  Clock clock("clk", kNs);
  clock.attach(c);
  c.wake_at(0);
  run_until({&clock}, kUs);
  EXPECT_EQ(c.left, 0);
  EXPECT_EQ(clock.steps(), 5u);
  EXPECT_FALSE(clock.has_work());
}

TEST(Clock, PeriodicCoresAtTenPercentActivityCostOneStepPerWake) {
  Clock clock("clk", kNs);
  std::vector<std::unique_ptr<Probe>> cores;
  for (int i = 0; i < 64; ++i) {
    cores.push_back(std::make_unique<Probe>("p" + std::to_string(i), 10));
    clock.attach(*cores.back());
    cores.back()->wake_at(i % 10);
  }
  run_until({&clock}, 999 * kNs);  // cycles 0..999
  EXPECT_EQ(clock.core_ticks(), 64u * 100u);
  EXPECT_EQ(clock.steps(), 1000u);
  for (auto& c : cores) EXPECT_EQ(c->ticks.size(), 100u);
}

TEST(Clock, WakeInThePastIsAnError) {
  Clock clock("clk", kNs);
  Probe p("p");
  clock.attach(p);
  p.wake_at(5);
  clock.step();
  EXPECT_THROW(p.wake_at(5), std::logic_error);
  EXPECT_THROW(p.wake_at(2), std::logic_error);
}

TEST(Clock, EdgesOfTwoFrequenciesInterleaveByTime) {
  Clock fast("fast", 1000 * kPs), slow("slow", 2500 * kPs);
  Probe a("a", 1), b("b", 1);
  fast.attach(a);
  slow.attach(b);
  a.wake_at(0);
  b.wake_at(0);
  run_until({&fast, &slow}, 10 * kNs);
  EXPECT_EQ(a.ticks.size(), 11u);  // 0, 1, ..., 10 ns
  EXPECT_EQ(b.ticks.size(), 5u);   // 0, 2.5, 5, 7.5, 10 ns
  EXPECT_EQ(slow.time_of(b.ticks.back()), 10 * kNs);
}

// A producer pushing 0, 1, 2... whenever it can, and a consumer that pops (maybe stalling).
struct Producer : Core {
  Channel<std::uint64_t>& ch;
  std::uint64_t next = 0, limit;
  std::vector<Cycle> push_cycles;
  Producer(Channel<std::uint64_t>& c, std::uint64_t n) : Core("producer"), ch(c), limit(n) { set_busy(true); }
  void eval() override {
    if (next < limit && ch.can_push()) {
      push_cycles.push_back(now());
      ch.push(next++);
    }
  }
  void commit() override { set_busy(next < limit); }
};
struct Consumer : Core {
  Channel<std::uint64_t>& ch;
  Rng rng;
  double stall;
  std::vector<std::pair<Cycle, std::uint64_t>> got;
  Consumer(Channel<std::uint64_t>& c, double s) : Core("consumer"), ch(c), rng(7, "consumer"), stall(s) {}
  void eval() override {
    if (ch.can_pop() && !rng.chance(stall)) got.emplace_back(now(), ch.pop());
  }
  void commit() override { set_busy(ch.ready_by(now() + 1)); }
};

// A producer and a consumer wired through one channel, from clock `src` to clock `dst`.
struct Pipe {
  Channel<std::uint64_t> ch;
  Producer p;
  Consumer c;
  Pipe(Clock& src, Clock& dst, ChannelSpec spec, std::uint64_t items, double stall, Cycle start = 0)
      : ch("ch", src, dst, spec), p(ch, items), c(ch, stall) {
    src.attach(p);
    dst.attach(c);
    ch.connect(&p, &c);
    p.wake_at(start);
  }
};

TEST(Channel, DeliversEachItemExactlyLatencyCyclesLater) {
  Clock clock("clk", kNs);
  Pipe pipe(clock, clock, ChannelSpec{5, 0, 1, 2}, 100, 0);
  auto& [ch, p, c] = pipe;
  run_until({&clock}, kUs);
  ASSERT_EQ(c.got.size(), 100u);
  for (std::size_t i = 0; i < 100; ++i) {
    EXPECT_EQ(c.got[i].second, i);
    EXPECT_EQ(c.got[i].first, p.push_cycles[i] + 5);
  }
  EXPECT_EQ(p.push_cycles.back(), 99u);  // one item per cycle, back to back
}

TEST(Channel, CreditsLimitItemsInFlightToTheBuffer) {
  // 3 credits over latency 4 + credit latency 1: at most 3 items per 5-cycle round trip.
  Clock clock("clk", kNs);
  Pipe pipe(clock, clock, ChannelSpec{4, 3, 1, 2}, 300, 0);
  const Consumer& c = pipe.c;
  run_until({&clock}, 10 * kUs);
  ASSERT_EQ(c.got.size(), 300u);
  const Cycle span = c.got.back().first - c.got.front().first;
  EXPECT_EQ(span, 99u * 5u + 2u);  // 100 bursts of 3 items, one round trip (5 cycles) apart
}

TEST(Channel, FullCreditsGiveFullRateAndStallsLoseNothing) {
  Clock clock("clk", kNs);
  Pipe pipe(clock, clock, ChannelSpec{3, 4, 1, 2}, 5000, 0.3);  // back-pressure 30 % of cycles
  auto& [ch, p, c] = pipe;
  run_until({&clock}, kMs);
  ASSERT_EQ(c.got.size(), 5000u);
  for (std::size_t i = 0; i < c.got.size(); ++i) ASSERT_EQ(c.got[i].second, i);
  EXPECT_EQ(ch.credits_available(), 4u);  // every credit came back
}

TEST(Channel, PushWithoutCreditThrows) {
  Clock clock("clk", kNs);
  Channel<std::uint64_t> ch("ch", clock, ChannelSpec{1, 1, 1, 2});
  struct Twice : Core {
    Channel<std::uint64_t>& ch;
    explicit Twice(Channel<std::uint64_t>& c) : Core("twice"), ch(c) {}
    void eval() override {
      ch.push(1);
      EXPECT_FALSE(ch.can_push());
      EXPECT_THROW(ch.push(2), std::logic_error);
    }
  } t(ch);
  clock.attach(t);
  t.wake_at(0);
  clock.step();
}

TEST(AsyncFifo, CrossesClocksThroughTheSynchroniserInOrder) {
  Clock src("src", 1000 * kPs), dst("dst", 1550 * kPs);
  Pipe pipe(src, dst, ChannelSpec{1, 8, 1, 2}, 2000, 0.1);
  const auto& [ch, p, c] = pipe;
  run_until({&src, &dst}, kMs);
  ASSERT_EQ(c.got.size(), 2000u);
  for (std::size_t i = 0; i < c.got.size(); ++i) {
    ASSERT_EQ(c.got[i].second, i);
    // Visible no earlier than the second destination edge after the write.
    const Time written = src.time_of(p.push_cycles[i]);
    EXPECT_GE(c.got[i].first, dst.first_edge_after(written) + 1);
  }
  // The slower side sets the rate: at most one item per destination cycle.
  EXPECT_GE(c.got.back().first - c.got.front().first, 1999u);
}

TEST(AsyncFifo, ZeroLoadLatencyIsTheSynchroniserDepth) {
  Clock src("src", 1000 * kPs), dst("dst", 3000 * kPs);
  Pipe pipe(src, dst, ChannelSpec{1, 0, 1, 3}, 1, 0, 4);  // written at 4 ns; dst edges 6, 9, 12 ns
  const Consumer& c = pipe.c;
  run_until({&src, &dst}, kUs);
  ASSERT_EQ(c.got.size(), 1u);
  EXPECT_EQ(dst.time_of(c.got[0].first), 12 * kNs);
}

}  // namespace
}  // namespace xy
