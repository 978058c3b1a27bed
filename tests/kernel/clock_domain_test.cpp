// ClockDomain: the SystemC shell. One simulation per process (ctest runs each TEST alone).
#include "kernel/clock_domain.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "kernel/channel.hpp"

namespace xy {
namespace {

struct Ticker : Core {
  std::vector<Cycle> ticks;
  Cycle every;
  Ticker(std::string name, Cycle e) : Core(std::move(name)), every(e) { set_busy(e == 1); }
  void eval() override { ticks.push_back(now()); }
  void commit() override {
    if (every > 1) wake_at(now() + every);
  }
};

TEST(ClockDomain, TwoFrequenciesTickAtTheirOwnRates) {
  ClockDomain fast("fast", period_from_mhz(1000)), slow("slow", period_from_mhz(400));
  Ticker a("a", 1), b("b", 1);
  fast.attach(a);
  slow.attach(b);
  a.wake_at(0);
  b.wake_at(0);
  sc_core::sc_start(to_sc_time(kUs));  // edges at t < 1 us
  EXPECT_EQ(a.ticks.size(), 1000u);
  EXPECT_EQ(b.ticks.size(), 400u);  // 2.5 ns period
  EXPECT_EQ(slow.clock().time_of(b.ticks.back()), 399 * period_from_mhz(400));
}

TEST(ClockDomain, IdleCyclesCostNoActivation) {
  ClockDomain d("d", kNs);
  Ticker t("t", 1000);
  d.attach(t);
  t.wake_at(0);
  sc_core::sc_start(to_sc_time(kMs));
  EXPECT_EQ(t.ticks.size(), 1000u);
  EXPECT_EQ(d.clock().steps(), 1000u);  // one step per wake, none for the 999 idle cycles between
  EXPECT_EQ(t.ticks.back(), 999000u);
}

// A consumer in another domain is woken by a channel push from a sleeping state.
TEST(ClockDomain, CrossingWakesASleepingDomainAtTheSynchronisedEdge) {
  ClockDomain src("src", kNs), dst("dst", 3 * kNs);
  Channel<int> ch("cdc", src.clock(), dst.clock(), ChannelSpec{1, 0, 1, 2});
  struct Sender : Core {
    Channel<int>& ch;
    explicit Sender(Channel<int>& c) : Core("sender"), ch(c) {}
    void eval() override { ch.push(42); }
  } s(ch);
  struct Receiver : Core {
    Channel<int>& ch;
    std::vector<std::pair<Time, int>> got;
    explicit Receiver(Channel<int>& c) : Core("receiver"), ch(c) {}
    void eval() override {
      while (ch.can_pop()) got.emplace_back(sim_now(), ch.pop());
    }
  } r(ch);
  src.attach(s);
  dst.attach(r);
  ch.connect(&s, &r);
  s.wake_at(100);  // writes at 100 ns; dst edges at 102 ns (first) and 105 ns (second stage)
  sc_core::sc_start(to_sc_time(kUs));
  ASSERT_EQ(r.got.size(), 1u);
  EXPECT_EQ(r.got[0].first, 105 * kNs);
  EXPECT_EQ(r.got[0].second, 42);
  EXPECT_EQ(dst.clock().steps(), 1u);
}

// Two clocks stepped by one domain see what two domains scheduled by SystemC see: the same ticks,
// and items crossing between them (both ways, every few cycles) popped at the same times.
TEST(ClockDomain, TwoClocksInOneDomainStepAsTwoDomainsDo) {
  struct Pinger : Core {  // sends on `out` every `every` cycles, records what `in` delivers
    Channel<int>* out = nullptr;
    Channel<int>* in = nullptr;
    Cycle every;
    int sent = 0;
    std::vector<std::pair<Time, int>> got;
    Pinger(std::string name, Cycle e) : Core(std::move(name)), every(e) {}
    void eval() override {
      while (in->can_pop()) got.emplace_back(clock().time_of(now()), in->pop());
      if (sent < 200 && now() % every == 0) out->push(sent++);
    }
    void commit() override {
      if (sent < 200) wake_at((now() / every + 1) * every);
    }
  };
  struct Pair {
    Pinger fast{"fast", 3}, slow{"slow", 2};
    Channel<int> up, down;
    Pair(Clock& f, Clock& s)
        : up("up", f, s, ChannelSpec{1, 0, 1, 2}), down("down", s, f, ChannelSpec{1, 0, 1, 3}) {
      f.attach(fast);
      s.attach(slow);
      fast.out = &up;
      slow.in = &up;
      slow.out = &down;
      fast.in = &down;
      up.connect(&fast, &slow);
      down.connect(&slow, &fast);
      fast.wake_at(0);
      slow.wake_at(0);
    }
  };
  const Time fast_period = period_from_mhz(2656.25), slow_period = period_from_mhz(1562.5);
  ClockDomain one("one", {{"fast", fast_period}, {"slow", slow_period}});
  ClockDomain fast("fast", fast_period), slow("slow", slow_period);
  Pair a(one.clock(0), one.clock(1)), b(fast.clock(), slow.clock());
  ClockDomain::set_run_ahead_limit(kUs);
  sc_core::sc_start(to_sc_time(kUs));
  ASSERT_EQ(a.slow.got.size(), 200u);
  ASSERT_EQ(a.fast.got.size(), 200u);
  EXPECT_EQ(a.slow.got, b.slow.got);
  EXPECT_EQ(a.fast.got, b.fast.got);
  EXPECT_EQ(one.clock(0).steps(), fast.clock().steps());
  EXPECT_EQ(one.clock(1).steps(), slow.clock().steps());
  // Item 1 is written at fast cycle 3 (3 x 376.47 ps = 1.129 ns); the slow clock's first edge
  // after it is its edge 2 (1.28 ns), the synchroniser's second stage its edge 3: 1.92 ns.
  EXPECT_EQ(a.slow.got[1].first, 3 * slow_period);
  EXPECT_EQ(slow_period, 640 * kPs);
}

}  // namespace
}  // namespace xy
