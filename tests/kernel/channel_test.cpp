// Channels and the async FIFO (kernel/channel.hpp): latency, credits, back-pressure, clock
// crossings, stepped by hand without SystemC.
#include "kernel/channel.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

#include "kernel/clock.hpp"
#include "kernel/rng.hpp"
#include "tests/kernel/run_until.hpp"

namespace xy {
namespace {

using testing::run_until;

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
  // Every credit comes back: seen by the producer a cycle after the last pop (a producer that
  // waits for none is not woken for it, so step the clock there).
  p.wake_at(clock.now() + 1);
  clock.step();
  EXPECT_EQ(ch.credits_available(), 4u);
}

TEST(Channel, AProducerIsWokenOnlyForACreditItFoundMissing) {
  // 1 credit, credit latency 3: pushes at 0 and, when the first pop's credit is back, at 4. The
  // second pop (5) returns a credit at 8 that nobody waits for: no step is taken for it.
  Clock clock("clk", kNs);
  Pipe pipe(clock, clock, ChannelSpec{1, 1, 3, 2}, 2, 0);
  auto& [ch, p, c] = pipe;
  run_until({&clock}, kUs);
  ASSERT_EQ(c.got.size(), 2u);
  EXPECT_EQ(p.push_cycles, (std::vector<Cycle>{0, 4}));
  EXPECT_EQ(clock.now(), 5u);
}

// A consumer that takes one item a cycle, each at max(ready, the cycle after the last), late:
// never woken nor evaluated, only asked by the channel when the producer finds no credit.
struct LateConsumer : Core, LateTaker {
  Channel<std::uint64_t>& ch;
  Cycle next_free = 0;
  std::vector<std::pair<Cycle, std::uint64_t>> got;
  int evals = 0;
  explicit LateConsumer(Channel<std::uint64_t>& c) : Core("late"), ch(c) {}
  void eval() override { ++evals; }
  void take_in(Cycle upto) override {
    while (ch.ready_by(upto) && std::max(ch.front_ready(), next_free) <= upto) {
      const Cycle at = std::max(ch.front_ready(), next_free);
      got.emplace_back(at, ch.pop_at(at));
      next_free = at + 1;
    }
  }
  Cycle next_take() const override { return ch.in_flight() ? std::max(ch.front_ready(), next_free) : ~Cycle{0}; }
};

TEST(Channel, ALateTakerIsNeverWokenAndTakesWhenTheProducerFindsNoCredit) {
  // The same producer against one consumer popping each item on time, and one taking it late:
  // the same pushes (the credits come back alike) and the same cycles of taking.
  Clock on_time_clock("on_time", kNs), late_clock("late", kNs);
  Pipe on_time(on_time_clock, on_time_clock, ChannelSpec{2, 2, 1, 2}, 50, 0);
  Channel<std::uint64_t> ch("ch", late_clock, ChannelSpec{2, 2, 1, 2});
  Producer p(ch, 50);
  LateConsumer c(ch);
  late_clock.attach(p);
  late_clock.attach(c);
  ch.connect(&p, &c);
  ch.take_late(&c);
  p.wake_at(0);
  run_until({&on_time_clock, &late_clock}, kUs);
  c.take_in(kUs / kNs);  // what it would have taken by the end
  EXPECT_EQ(p.push_cycles, on_time.p.push_cycles);
  EXPECT_EQ(c.got, on_time.c.got);
  ASSERT_EQ(c.got.size(), 50u);
  EXPECT_EQ(c.evals, 0);
  EXPECT_THROW(Channel<int>("x", late_clock, ChannelSpec{1}).take_late(&c), std::logic_error);  // needs credits
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

TEST(Channel, WakesACoreWaitingForRoomOnceAtItsFirstEdgeAfterTheNextPop) {
  // A waiter on the 1 ns clock asks at its cycle 1; the 1.55 ns side pops at its cycles 10
  // (15.5 ns) and 20. The waiter's first edge after 15.5 ns is its cycle 16; the second pop finds
  // nobody waiting.
  Clock src("src", 1000 * kPs), dst("dst", 1550 * kPs);
  Channel<std::uint64_t> ch("ch", src, dst, ChannelSpec{1, 0, 1, 2});
  struct Waiter : Core {
    Channel<std::uint64_t>& ch;
    std::vector<Cycle> ticks;
    explicit Waiter(Channel<std::uint64_t>& c) : Core("waiter"), ch(c) {}
    void eval() override {
      if (ticks.empty()) ch.wake_on_pop(*this);
      ticks.push_back(now());
    }
  } waiter(ch);
  struct Taker : Core {
    Channel<std::uint64_t>& ch;
    std::vector<Cycle> pops;
    explicit Taker(Channel<std::uint64_t>& c) : Core("taker"), ch(c) {}
    void eval() override {
      if (ch.can_pop()) {
        ch.pop();
        pops.push_back(now());
      }
    }
  } taker(ch);
  Producer p(ch, 3);
  src.attach(p);
  src.attach(waiter);
  dst.attach(taker);
  ch.connect(&p, nullptr);
  p.wake_at(0);
  waiter.wake_at(1);
  taker.wake_at(10);
  taker.wake_at(20);
  run_until({&src, &dst}, kUs);
  EXPECT_EQ(taker.pops, (std::vector<Cycle>{10, 20}));
  EXPECT_EQ(waiter.ticks, (std::vector<Cycle>{1, 16}));
  Channel<std::uint64_t> credited("credited", src, dst, ChannelSpec{1, 4, 1, 2});
  EXPECT_THROW(credited.wake_on_pop(waiter), std::logic_error);
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
