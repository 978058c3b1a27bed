#include "kernel/clock_domain.hpp"

#include <algorithm>

namespace xy {

void use_femtosecond_resolution() {
  static bool done = false;
  if (done) return;
  sc_core::sc_set_time_resolution(1, sc_core::SC_FS);
  done = true;
}

sc_core::sc_time to_sc_time(Time t) { return sc_core::sc_time::from_value(t); }
Time from_sc_time(const sc_core::sc_time& t) { return t.value(); }
Time sim_now() { return sc_core::sc_time_stamp().value(); }

ClockDomain::ClockDomain(const sc_core::sc_module_name& name, Time period)
    : ClockDomain(name, std::vector<ClockSpec>{{"", period}}) {}

ClockDomain::ClockDomain(const sc_core::sc_module_name& name, const std::vector<ClockSpec>& clocks)
    : sc_core::sc_module(name) {
  use_femtosecond_resolution();  // before any sc_time exists
  for (const ClockSpec& c : clocks) add_clock(c.name, c.period);
  SC_METHOD(run);
  sensitive << edge_;
  dont_initialize();
}

void ClockDomain::add_clock(const std::string& name, Time period) {
  const std::string domain = this->name();
  clocks_.push_back(std::make_unique<Clock>(name.empty() ? domain : domain + "." + name, period));
  Clock* c = clocks_.back().get();
  c->on_wake([this, c](Cycle at) { arm(c->time_of(at)); });
}

// Schedules the edge at time `at`; an earlier request replaces a later pending one. Never while
// run() steps (its clocks call no on_wake then): it re-arms for what is left when it returns.
void ClockDomain::arm(Time at) {
  if (halted_ || at >= armed_) return;
  if (armed_ != kNever) edge_.cancel();
  armed_ = at;
  edge_.notify(to_sc_time(at - sim_now()));
}

void ClockDomain::halt() {
  halted_ = true;
  if (armed_ != kNever) edge_.cancel();
  armed_ = kNever;
  for (auto& c : clocks_) c->forget_wakeups();
}

Time ClockDomain::run_ahead_limit_ = 0;

void ClockDomain::run() {
  armed_ = kNever;
  if (halted_) return;
  const Time now = sim_now();
  // Step the edges that are now (a wake may land on this very edge before we run), then run
  // ahead through later ones while no other process has anything pending before them: nothing
  // can reach this domain's cores in between. Each step may schedule activity elsewhere (a wake
  // of another domain), so the horizon is asked again after every step.
  tell_clocks_running(true);
  for (;;) {
    Clock* next = nullptr;
    Cycle due = 0;
    Time t = kNever;
    for (auto& c : clocks_) {
      if (!c->has_work()) continue;
      const Cycle d = c->next_due();
      if (const Time ct = c->time_of(d); ct < t || (Clock::kReverseEval && ct == t)) {  // ties: first or last
        next = c.get();
        due = d;
        t = ct;
      }
    }
    if (!next || (t > now && (t >= run_ahead_limit_ ||
                              t >= now + from_sc_time(sc_core::sc_time_to_pending_activity())))) {
      tell_clocks_running(false);
      if (const Time at = std::min(t, settle_late(now)); at != kNever) arm(at);
      return;
    }
    next->step(due);
  }
}

// What the loop above would have stepped for a late taker's wake-up at time x, had it asked for
// one: an edge at or before now; one before the last edge stepped (the latest of the clocks'
// last), or at its time when its clock comes first among equal times; one before the run-ahead
// limit and SystemC's next activity.
Time ClockDomain::settle_late(Time now) {
  if (std::none_of(clocks_.begin(), clocks_.end(), [](const auto& c) { return c->has_late(); })) return kNever;
  Time last = 0;
  std::size_t last_clock = 0;  // among equal times, the one stepped last
  for (std::size_t i = 0; i < clocks_.size(); ++i) {
    const Time t = clocks_[i]->time_of(clocks_[i]->now());
    if (t > last || (t == last && !Clock::kReverseEval)) {
      last = t;
      last_clock = i;
    }
  }
  const Time ahead = std::max(std::min(run_ahead_limit_, now + from_sc_time(sc_core::sc_time_to_pending_activity())), now + 1);
  Time next = kNever;
  for (std::size_t i = 0; i < clocks_.size(); ++i) {
    const bool first = Clock::kReverseEval ? i >= last_clock : i <= last_clock;
    next = std::min(next, clocks_[i]->settle_late(std::max(ahead, last + (first ? 1 : 0))));
  }
  return next;
}

void ClockDomain::tell_clocks_running(bool running) {
  for (auto& c : clocks_) c->set_shell_running(running);
}

}  // namespace xy
