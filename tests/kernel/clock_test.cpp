// Clocks (kernel/clock.hpp): cores ticked only when due, busy cores, kinds, stepped by hand without
// SystemC.
#include "kernel/clock.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "kernel/rng.hpp"
#include "tests/kernel/run_until.hpp"

namespace xy {
namespace {

using testing::run_until;

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

// The tick order, written plainly: every core due (busy after the previous cycle, or woken for
// this one) once, by kind (kinds in the order first attached: here their numbers) and then by
// attaching; every eval before any commit.
struct ReferenceScheduler {
  int cores, kinds;
  double busy_chance;
  std::vector<Rng> rngs;
  std::vector<Choice> choices;
  std::vector<bool> busy;
  std::vector<Cycle> last_wake;
  std::map<Cycle, std::vector<int>> woken;
  std::vector<int> busy_list;
  Cycle now = 0;
  TickLog log;
  ReferenceScheduler(int n, int k, double busy_p)
      : cores(n), kinds(k), busy_chance(busy_p), choices(n), busy(n), last_wake(n, ~Cycle{0}) {
    for (int i = 0; i < n; ++i) rngs.emplace_back(i, "order");
  }
  void wake(int core, Cycle at) {
    if (last_wake[core] == at) return;
    last_wake[core] = at;
    woken[at].push_back(core);
  }
  void run(Cycle until) {
    for (;;) {
      Cycle next = busy_list.empty() ? ~Cycle{0} : now + 1;
      if (!woken.empty()) next = std::min(next, woken.begin()->first);
      if (next > until) return;
      now = next;
      std::vector<int> due = busy_list, listed;
      if (woken.count(now)) {
        due.insert(due.end(), woken[now].begin(), woken[now].end());
        woken.erase(now);
      }
      for (int core : due)
        if (std::find(listed.begin(), listed.end(), core) == listed.end()) listed.push_back(core);
      std::sort(listed.begin(), listed.end(),
                [&](int a, int b) { return std::pair(a / 3 % kinds, a) < std::pair(b / 3 % kinds, b); });
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
  ReferenceScheduler reference(cores, kinds, busy);
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

TEST(Clock, DueCoresTickByKindThenInTheOrderAttached) {
  // Enough ticks that busy cores are also woken, and some far ahead.
  EXPECT_GT(expect_ticks_of_the_reference(30, 3, 0.3, false), 20000u);
}

// run() ticks busy cores of one kind in a loop of their own until a wake-up is due or one stops
// being busy; with few cores and long busy stretches those loops are most of the run.
TEST(Clock, RunTicksWhatStepByStepTicks) {
  for (int cores : {1, 2, 5, 30})
    for (int kinds : {1, 3})
      for (double busy : {0.3, 0.95}) {
        SCOPED_TRACE(::testing::Message() << cores << " cores, " << kinds << " kinds, busy " << busy);
        const std::size_t ticks = expect_ticks_of_the_reference(cores, kinds, busy, true);
        if (busy > 0.9) {  // long busy stretches (at 0.3 a lone core soon stops)
          EXPECT_GT(ticks, 1000u);
        }
      }
}

// A core attached once the clock runs changes the order of ticks (its kind was attached first);
// the wake-ups queued for the others keep their cycles, near and far.
TEST(Clock, WakeUpsQueuedBeforeALateAttachKeepTheirCycles) {
  struct Other : Probe {
    using Probe::Probe;
  };
  Clock clock("clk", kNs);
  Probe first("first");
  std::vector<std::unique_ptr<Other>> others;
  clock.attach(first);
  for (int i = 0; i < 70; ++i) {  // more than a word of the due list
    others.push_back(std::make_unique<Other>("o" + std::to_string(i)));
    clock.attach(*others.back());
  }
  first.wake_at(1);
  clock.step();
  for (int i = 0; i < 70; ++i) others[i]->wake_at(static_cast<Cycle>(2 + i % 5 + (i % 2 ? 0 : 3000)));
  Probe late("late");  // a Probe: ranked with `first`, ahead of every Other
  clock.attach(late);
  late.wake_at(4);
  while (clock.has_work()) clock.step();
  EXPECT_EQ(late.ticks, std::vector<Cycle>{4});
  for (int i = 0; i < 70; ++i)
    EXPECT_EQ(others[i]->ticks, std::vector<Cycle>{static_cast<Cycle>(2 + i % 5 + (i % 2 ? 0 : 3000))}) << i;
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

}  // namespace
}  // namespace xy
