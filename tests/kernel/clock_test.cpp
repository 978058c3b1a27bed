// Clocks, channels and the async FIFO, stepped by hand without SystemC.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "kernel/channel.hpp"
#include "kernel/clock.hpp"
#include "kernel/rng.hpp"

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

// Randomised cores for the order test: what a core does on a tick depends only on its own
// random stream, so two schedulers that tick the cores in the same order see the same choices.
using TickLog = std::vector<std::tuple<Cycle, int, char>>;  // cycle, core, 'e'val or 'c'ommit
struct Choice {
  bool busy = false;
  std::vector<std::pair<int, Cycle>> wakes;  // core, cycles ahead (some beyond the near wheel)
};
Choice choose(Rng& rng, int cores, double busy) {
  Choice c;
  c.busy = rng.chance(busy);
  for (auto n = rng.below(3); n; --n)
    c.wakes.emplace_back(static_cast<int>(rng.below(cores)), rng.chance(0.1) ? rng.between(250, 300) : rng.between(1, 20));
  return c;
}

// The tick order, written plainly: the cores busy after the previous cycle in their order, then
// this cycle's wake-ups in the order they were asked for (those asked 256 cycles or more ahead
// after the others), each core once; every eval before any commit.
struct ReferenceScheduler {
  int cores;
  double busy_chance;
  std::vector<Rng> rngs;
  std::vector<Choice> choices;
  std::vector<bool> busy;
  std::vector<Cycle> last_wake;
  std::map<Cycle, std::vector<int>> near, far;
  std::vector<int> busy_list;
  Cycle now = 0;
  TickLog log;
  ReferenceScheduler(int n, double busy_p)
      : cores(n), busy_chance(busy_p), choices(n), busy(n), last_wake(n, ~Cycle{0}) {
    for (int i = 0; i < n; ++i) rngs.emplace_back(i, "order");
  }
  void wake(int core, Cycle at) {
    if (last_wake[core] == at) return;
    last_wake[core] = at;
    (at - now < 256 ? near : far)[at].push_back(core);
  }
  void run(Cycle until) {
    for (;;) {
      Cycle next = busy_list.empty() ? ~Cycle{0} : now + 1;
      if (!near.empty()) next = std::min(next, near.begin()->first);
      if (!far.empty()) next = std::min(next, far.begin()->first);
      if (next > until) return;
      now = next;
      std::vector<int> due = busy_list, listed;
      for (auto* m : {&near, &far})
        if (m->count(now)) {
          due.insert(due.end(), (*m)[now].begin(), (*m)[now].end());
          m->erase(now);
        }
      for (int core : due)
        if (std::find(listed.begin(), listed.end(), core) == listed.end()) listed.push_back(core);
      for (int core : listed) {
        log.emplace_back(now, core, 'e');
        choices[core] = choose(rngs[core], cores, busy_chance);
        if (!choices[core].wakes.empty()) wake(choices[core].wakes[0].first, now + choices[core].wakes[0].second);
      }
      busy_list.clear();
      for (int core : listed) {
        log.emplace_back(now, core, 'c');
        for (std::size_t w = 1; w < choices[core].wakes.size(); ++w)
          wake(choices[core].wakes[w].first, now + choices[core].wakes[w].second);
        if (choices[core].busy) busy_list.push_back(core);
      }
    }
  }
};

// The same behaviour as Clock cores; Kind only makes distinct types for the clock to batch.
template <int Kind>
struct RandomCore : Core {
  int id, cores;
  double busy_chance;
  Rng rng;
  Choice choice;
  TickLog& log;
  std::vector<Core*>& all;
  RandomCore(int i, int n, double busy_p, TickLog& l, std::vector<Core*>& a)
      : Core("r" + std::to_string(i)), id(i), cores(n), busy_chance(busy_p), rng(i, "order"), log(l), all(a) {}
  void eval() override {
    log.emplace_back(now(), id, 'e');
    choice = choose(rng, cores, busy_chance);
    if (!choice.wakes.empty()) all[choice.wakes[0].first]->wake_at(now() + choice.wakes[0].second);
  }
  void commit() override {
    log.emplace_back(now(), id, 'c');
    for (std::size_t w = 1; w < choice.wakes.size(); ++w) all[choice.wakes[w].first]->wake_at(now() + choice.wakes[w].second);
    set_busy(choice.busy);
  }
};

// `cores` random cores, busy after a tick with probability `busy`, in runs of three of a kind
// (of `kinds` kinds; the third through Core&), stepped by step() or by run(): the ticks are the
// reference's. Returns the number of ticks.
std::size_t expect_ticks_of_the_reference(int cores, int kinds, double busy, bool by_run) {
  constexpr Cycle kUntil = 3000;
  Clock clock("clk", kNs);
  TickLog log;
  std::vector<Core*> all;
  std::vector<std::unique_ptr<Core>> owned;
  for (int i = 0; i < cores; ++i) {
    switch (i / 3 % kinds) {
      case 0: {
        auto c = std::make_unique<RandomCore<0>>(i, cores, busy, log, all);
        clock.attach(*c);
        owned.push_back(std::move(c));
        break;
      }
      case 1: {
        auto c = std::make_unique<RandomCore<1>>(i, cores, busy, log, all);
        clock.attach(*c);
        owned.push_back(std::move(c));
        break;
      }
      default:
        owned.push_back(std::make_unique<RandomCore<2>>(i, cores, busy, log, all));
        clock.attach(*owned.back());
    }
    all.push_back(owned.back().get());
  }
  ReferenceScheduler reference(cores, busy);
  for (int i = 0; i < cores; ++i) {
    all[i]->wake_at(i % 7);
    reference.wake(i, i % 7);
  }
  if (by_run)
    clock.run(kUntil);
  else
    while (clock.has_work() && clock.next_due() <= kUntil) clock.step();
  reference.run(kUntil);
  EXPECT_EQ(log, reference.log);
  return log.size();
}

TEST(Clock, CoresOfSeveralKindsTickInTheOrderOfTheDueList) {
  // Enough ticks that busy cores are also woken, and some far ahead.
  EXPECT_GT(expect_ticks_of_the_reference(30, 3, 0.3, false), 20000u);
}

// run() ticks busy cores of one kind in a loop of their own until a wake-up is due or one stops
// being busy; with few cores and long busy stretches those loops are most of the run.
TEST(Clock, RunTicksWhatStepByStepTicks) {
  for (int cores : {1, 2, 5, 30})
    for (int kinds : {1, 3})
      for (double busy : {0.3, 0.95}) {
        SCOPED_TRACE(testing::Message() << cores << " cores, " << kinds << " kinds, busy " << busy);
        const std::size_t ticks = expect_ticks_of_the_reference(cores, kinds, busy, true);
        if (busy > 0.9) {  // long busy stretches (at 0.3 a lone core soon stops)
          EXPECT_GT(ticks, 1000u);
        }
      }
}

TEST(Clock, CoreAttachedThroughItsBaseRunsItsOwnEvalAndCommit) {
  struct Base : Core {
    int base_ticks = 0;
    Base() : Core("base") {}
    void eval() override { ++base_ticks; }
  };
  struct Derived : Base {
    int evals = 0, commits = 0;
    void eval() override { ++evals; }
    void commit() override { ++commits; }
  } derived;
  Clock clock("clk", kNs);
  Base& base = derived;
  clock.attach(base);
  derived.wake_at(0);
  derived.wake_at(1);
  run_until({&clock}, kUs);
  EXPECT_EQ(derived.evals, 2);
  EXPECT_EQ(derived.commits, 2);
  EXPECT_EQ(derived.base_ticks, 0);
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
