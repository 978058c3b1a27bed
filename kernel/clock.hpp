// Core and Clock: the plain-C++ half of the simulation kernel (no SystemC here).
//
// A Core is a block's behaviour, stepped in two phases each cycle it is active: eval() reads
// the current state and inputs and computes the next state; commit() makes it current (the
// _reg/_next of RTL). A Clock ticks only the cores that are due: a core is due because it
// asked (wake_at), because a channel delivers to it, or because it is busy (set_busy: tick me
// every cycle until I say otherwise). Idle cycles cost nothing; the SystemC shell
// (ClockDomain) jumps over them.
//
// A busy core costs about what it would in a plain loop over all cores: a core stands at most
// once in the due list (duplicates are dropped as wake-ups join it, not in the tick loop);
// consecutive due cores of one concrete type are ticked by one loop that calls that type's
// eval/commit directly (inlined where visible) instead of a virtual call each; and the list is
// compacted only in steps where a core may have left it (it was woken while idle, or some core
// stopped being busy). The order of ticks is the order of the due list either way.
//
// Results must not depend on that order. With XY_REVERSE_EVAL=1 in the environment every step
// evaluates its due cores last to first (commits keep their order): `tests/golden/check --reversed`
// runs the golden set so and names the runs whose results move.
#pragma once
#include <array>
#include <cstdlib>
#include <cstdint>
#include <functional>
#include <queue>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include "kernel/units.hpp"

namespace xy {

class Clock;
class Core;

// How a clock ticks cores of one concrete type: eval and commit are each one loop over a run of
// consecutive due cores of that kind; tick is both phases over a clock's whole due list when that
// list is one run of this kind (the step then makes a single call).
struct CoreKind {
  void (*eval)(Core* const* first, Core* const* last);
  void (*commit)(Core* const* first, Core* const* last);
  void (*tick)(Clock& clock);
  // Steps cycle after cycle while the due list is this kind's busy cores alone (see Clock::run).
  void (*run_busy)(Clock& clock, Cycle last);
};

class Core {
 public:
  explicit Core(std::string name) : name_(std::move(name)) {}
  virtual ~Core() = default;
  Core(const Core&) = delete;
  Core& operator=(const Core&) = delete;

  virtual void eval() = 0;
  virtual void commit() {}

  // While busy, the core is ticked every cycle without being woken. Whether it stays due is
  // read after the step's last commit. A flag, not a virtual query: turning it off tells the
  // clock that its due list needs compacting, which otherwise it skips.
  void set_busy(bool busy);
  bool busy() const { return busy_; }

  const std::string& name() const { return name_; }
  Clock& clock() const { return *clock_; }
  Cycle now() const;
  void wake_at(Cycle at);
  void wake_next();

 private:
  friend class Clock;
  std::string name_;
  Clock* clock_ = nullptr;
  const CoreKind* kind_ = nullptr;
  bool busy_ = false;
  bool listed_ = false;          // in the clock's due list (busy, or due this step)
  Cycle last_wake_ = ~Cycle{0};  // the last cycle a wake-up was queued for
  // The wheel's buckets this core is queued in (a bucket holds one cycle's wake-ups): a core
  // re-arming its next cycle on every tick, woken in between for others, is queued once.
  std::array<std::uint64_t, 4> queued_{};
  // The last far wake-up queued. A core re-arming a far timer on every tick (a CBFC update timer)
  // would otherwise push the same entry again each time, and its duplicates are never first.
  Cycle last_far_wake_ = ~Cycle{0};
};

class Clock {
 public:
  friend class Core;
  Clock(std::string name, Time period);
  Clock(const Clock&) = delete;
  Clock& operator=(const Clock&) = delete;

  const std::string& name() const { return name_; }
  Time period() const { return period_; }
  Cycle now() const { return now_; }
  Time time_of(Cycle c) const { return c * period_; }
  // First edge of this clock strictly after time t (an edge at t itself would race).
  Cycle first_edge_after(Time t) const { return t / period_ + 1; }

  // Attaches a core; when `T` is its dynamic type the clock calls T's eval/commit directly.
  template <class T>
  void attach(T& core) {
    static_assert(std::is_base_of_v<Core, T>, "attach a Core");
    if constexpr (std::is_abstract_v<T>)
      attach(core, &kKind<Core>);
    else
      attach(core, typeid(core) == typeid(T) ? &kKind<T> : &kKind<Core>);
  }
  // Ticks `core` at cycle `at`; `at` must be in the future once the clock has started.
  void wake(Core& core, Cycle at) {
    if (at <= now_ && (started_ || at < now_)) wake_in_past(core, at);
    if (core.last_wake_ == at) return;  // already due then
    core.last_wake_ = at;
    if (at - now_ < kWheel) {
      const std::size_t slot = at % kWheel;
      std::uint64_t& queued = core.queued_[slot / 64];
      if (queued >> (slot % 64) & 1) return;
      queued |= std::uint64_t{1} << (slot % 64);
      wheel_[slot].push_back(&core);
      occupied_[slot / 64] |= std::uint64_t{1} << (slot % 64);
      ++near_count_;
    } else if (core.last_far_wake_ != at) {
      core.last_far_wake_ = at;
      far_.push({at, far_seq_++, &core});
    }
    if (!stepping_ && on_wake_) on_wake_(at);  // after a step the shell re-arms anyway
  }

  bool has_work() const { return !active_.empty() || near_count_ || !far_.empty(); }
  // Forgets every wake-up and busy core, and the memory they held: for a clock that never steps
  // again (ClockDomain::halt).
  void forget_wakeups();
  // Valid when has_work(). Busy cores are due every cycle; the wake-ups are searched otherwise.
  Cycle next_due() const { return active_.empty() ? first_wake() : now_ + 1; }
  // Advances to cycle `due` (== next_due()) and ticks every due core: all evals, then all commits.
  // Inline, its rare parts out of line: a step of a few busy cores of one kind and no wake-up
  // due (a pipeline ticked every cycle) costs little more than their eval and commit.
  void step(Cycle due) {
    now_ = due;
    started_ = true;
    // active_ still holds the cores that stayed busy after the previous step (due now); add this
    // cycle's bucket and the far wake-ups due now.
    if (wake_due(due)) list_woken(due % kWheel);
    // Wake-ups during the step go to the wheel, never to active_.
    stepping_ = true;
    tick_(*this);
    core_ticks_ += active_.size();
    if (may_leave_) drop_idle();
    stepping_ = false;
    ++steps_;
    if (!after_step_.empty()) call_after_step();
  }
  void step() { step(next_due()); }
  // Steps every cycle with work up to cycle `last`: the same ticks as step() after step(), but a
  // stretch in which only busy cores of one kind are due, with no hook after the steps, runs in
  // one loop for that kind (a pipeline run on its own, e.g. against its RTL twin).
  void run(Cycle last = ~Cycle{0}) {
    while (has_work()) {
      const Cycle due = next_due();
      if (due > last) return;
      if (!active_.empty() && runs_.size() == 1 && after_step_.empty() && !wake_due(due))
        runs_.front().kind->run_busy(*this, last);
      else
        step(due);
    }
  }

  // Called for a wake requested outside step(), e.g. by another clock's core (the shell
  // re-arms its edge if the wake is earlier than the one it waits for).
  void on_wake(std::function<void(Cycle)> f) { on_wake_ = std::move(f); }
  // Called after every step's commit phase with the step's time (waves sample here).
  void after_step(std::function<void(Time)> f) { after_step_.push_back(std::move(f)); }

  std::uint64_t steps() const { return steps_; }
  std::uint64_t core_ticks() const { return core_ticks_; }

 private:
  static constexpr Cycle kWheel = 256;  // near wake-ups go to a bucket per cycle (Core::queued_'s bits)
  struct Far {
    Cycle at;
    std::uint64_t seq;
    Core* core;
    bool operator>(const Far& o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };
  static inline const bool kReverseEval = [] {
    const char* v = std::getenv("XY_REVERSE_EVAL");
    return v && *v && *v != '0';
  }();
  template <class T>
  static void eval_run(Core* const* p, Core* const* last) {
    if (kReverseEval) {
      while (last != p) (*--last)->eval();
      return;
    }
    for (; p != last; ++p) {
      if constexpr (std::is_same_v<T, Core>)
        (*p)->eval();  // a core of unknown type: the virtual call
      else
        static_cast<T*>(*p)->T::eval();
    }
  }
  template <class T>
  static void commit_run(Core* const* p, Core* const* last) {
    for (; p != last; ++p) {
      if constexpr (std::is_same_v<T, Core>)
        (*p)->commit();
      else
        static_cast<T*>(*p)->T::commit();
    }
  }
  template <class T>
  static void tick_one_run(Clock& clock) {
    Core* const* const first = clock.active_.data();
    Core* const* const last = first + clock.active_.size();
    eval_run<T>(first, last);
    commit_run<T>(first, last);
  }
  // Busy cores of kind T alone, cycle after cycle through `last`, until a wake-up is due or one
  // of them stops being busy: step()'s work for that case, with nothing looked up again.
  template <class T>
  static void run_busy(Clock& clock, Cycle last) {
    clock.started_ = clock.stepping_ = true;
    const std::size_t n = clock.active_.size();
    Cycle due = clock.now_ + 1;
    do {
      clock.now_ = due;
      Core* const* const first = clock.active_.data();
      eval_run<T>(first, first + n);
      commit_run<T>(first, first + n);
      clock.core_ticks_ += n;
      ++clock.steps_;
      if (clock.may_leave_) {
        clock.drop_idle();
        break;
      }
    } while (++due <= last && !clock.wake_due(due));
    clock.stepping_ = false;
  }
  // Is a wake-up queued for cycle `due` (its wheel slot, or the far heap's first)?
  bool wake_due(Cycle due) const {
    const std::size_t slot = due % kWheel;
    return (occupied_[slot / 64] >> (slot % 64) & 1) || (!far_.empty() && far_.top().at == due);
  }
  template <class T>
  static inline const CoreKind kKind{&eval_run<T>, &commit_run<T>, &tick_one_run<T>, &run_busy<T>};

  // A stretch of the due list whose cores are of one kind.
  struct Run {
    const CoreKind* kind;
    std::size_t size;
  };
  void attach(Core& core, const CoreKind* kind);
  Cycle first_wake() const;
  void list_woken(std::size_t slot);
  void list_due(std::vector<Core*>& woken);
  static void tick_runs(Clock& clock);
  // After runs_ changed: how the next steps tick the due list.
  void runs_changed() { tick_ = runs_.size() == 1 ? runs_.front().kind->tick : &tick_runs; }
  void call_after_step();
  void drop_idle();
  int first_bucket_from(Cycle from) const;  // cycle offset of first non-empty bucket or -1
  [[noreturn]] void wake_in_past(const Core& core, Cycle at) const;

  std::string name_;
  Time period_;
  Cycle now_ = 0;
  bool started_ = false, stepping_ = false;
  std::array<std::vector<Core*>, kWheel> wheel_;
  std::array<std::uint64_t, kWheel / 64> occupied_{};
  std::size_t near_count_ = 0;
  std::priority_queue<Far, std::vector<Far>, std::greater<Far>> far_;
  std::uint64_t far_seq_ = 0;
  std::vector<Core*> active_;  // during a step: the due cores; between steps: the busy ones
  std::vector<Run> runs_;      // active_ cut into runs of one kind
  void (*tick_)(Clock&) = &tick_runs;  // ticks active_: its one run's kind, or run by run
  bool may_leave_ = false;     // some listed core may no longer be busy: compact the list
  std::vector<Core*> cores_;
  std::function<void(Cycle)> on_wake_;
  std::vector<std::function<void(Time)>> after_step_;
  std::uint64_t steps_ = 0, core_ticks_ = 0;
};

inline void Core::set_busy(bool busy) {
  if (busy_ && !busy && listed_) clock_->may_leave_ = true;
  busy_ = busy;
}
inline Cycle Core::now() const { return clock_->now(); }
inline void Core::wake_at(Cycle at) { clock_->wake(*this, at); }
inline void Core::wake_next() { clock_->wake(*this, clock_->now() + 1); }

}  // namespace xy
