// Core and Clock: the plain-C++ half of the simulation kernel (no SystemC here).
//
// A Core is a block's behaviour, stepped in two phases each cycle it is active: eval() reads
// the current state and inputs and computes the next state; commit() makes it current (the
// _reg/_next of RTL). A Clock ticks only the cores that are due: a core is due because it
// asked (wake_at), because a channel delivers to it, or because it is busy (set_busy: tick me
// every cycle until I say otherwise). Idle cycles cost nothing; the SystemC shell
// (ClockDomain) jumps over them.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <queue>
#include <string>
#include <vector>

#include "xingyun/units.hpp"

namespace xy {

class Clock;

class Core {
 public:
  explicit Core(std::string name) : name_(std::move(name)) {}
  virtual ~Core() = default;
  Core(const Core&) = delete;
  Core& operator=(const Core&) = delete;

  virtual void eval() = 0;
  virtual void commit() {}

  // While busy, the core is ticked every cycle without being woken. A flag, not a virtual
  // query, because the clock reads it for every active core every cycle.
  void set_busy(bool busy) { busy_ = busy; }
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
  bool busy_ = false;
  Cycle last_tick_ = ~Cycle{0};
  Cycle last_wake_ = ~Cycle{0};
};

class Clock {
 public:
  Clock(std::string name, Time period);
  Clock(const Clock&) = delete;
  Clock& operator=(const Clock&) = delete;

  const std::string& name() const { return name_; }
  Time period() const { return period_; }
  Cycle now() const { return now_; }
  Time time_of(Cycle c) const { return c * period_; }
  // First edge of this clock strictly after time t (an edge at t itself would race).
  Cycle first_edge_after(Time t) const { return t / period_ + 1; }

  void attach(Core& core);
  // Ticks `core` at cycle `at`; `at` must be in the future once the clock has started.
  void wake(Core& core, Cycle at) {
    if (at <= now_ && (started_ || at < now_)) wake_in_past(core, at);
    if (core.last_wake_ == at) return;  // already due then
    core.last_wake_ = at;
    if (at - now_ < kWheel) {
      const std::size_t slot = at % kWheel;
      wheel_[slot].push_back(&core);
      occupied_[slot / 64] |= std::uint64_t{1} << (slot % 64);
      ++near_count_;
    } else {
      far_.push({at, far_seq_++, &core});
    }
    if (!stepping_ && on_wake_) on_wake_(at);  // after a step the shell re-arms anyway
  }

  bool has_work() const { return near_count_ || !far_.empty() || !active_.empty(); }
  Cycle next_due() const;  // valid when has_work()
  // Advances to cycle `due` (== next_due()) and ticks every due core: all evals, then all commits.
  void step(Cycle due);
  void step() { step(next_due()); }

  // Called for a wake requested outside step(), e.g. by another clock's core (the shell
  // re-arms its edge if the wake is earlier than the one it waits for).
  void on_wake(std::function<void(Cycle)> f) { on_wake_ = std::move(f); }
  // Called after every step's commit phase with the step's time (waves sample here).
  void after_step(std::function<void(Time)> f) { after_step_.push_back(std::move(f)); }

  std::uint64_t steps() const { return steps_; }
  std::uint64_t core_ticks() const { return core_ticks_; }

 private:
  static constexpr Cycle kWheel = 256;  // near wake-ups go to a bucket per cycle
  struct Far {
    Cycle at;
    std::uint64_t seq;
    Core* core;
    bool operator>(const Far& o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };
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
  std::vector<Core*> cores_;
  std::function<void(Cycle)> on_wake_;
  std::vector<std::function<void(Time)>> after_step_;
  std::uint64_t steps_ = 0, core_ticks_ = 0;
};

inline Cycle Core::now() const { return clock_->now(); }
inline void Core::wake_at(Cycle at) { clock_->wake(*this, at); }
inline void Core::wake_next() { clock_->wake(*this, clock_->now() + 1); }

}  // namespace xy
