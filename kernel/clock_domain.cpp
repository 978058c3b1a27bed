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
  Stepped last;
  for (;;) {
    std::size_t next = clocks_.size();
    Cycle due = 0;
    Time t = kNever;
    for (std::size_t i = 0; i < clocks_.size(); ++i) {
      const Clock& c = *clocks_[i];
      if (!c.has_work()) continue;
      const Cycle d = c.next_due();
      if (const Time ct = c.time_of(d); ct < t || (Clock::kReverseEval && ct == t)) {  // ties: first or last
        next = i;
        due = d;
        t = ct;
      }
    }
    if (next == clocks_.size() ||
        (t > now && (t >= run_ahead_limit_ || t >= now + from_sc_time(sc_core::sc_time_to_pending_activity())))) {
      tell_clocks_running(false);
      if (const Time at = std::min(t, settle_late(now, last)); at != kNever) arm(at);
      return;
    }
    clocks_[next]->step(due);
    last = {true, t, next};
  }
}

// What the loop above would have stepped for a late taker's wake-up at time x, had it asked for
// one: an edge at or before now; one before the last edge stepped, or at its time when its clock
// comes first among equal times; one before the run-ahead limit and SystemC's next activity.
Time ClockDomain::settle_late(Time now, const Stepped& last) {
  if (std::none_of(clocks_.begin(), clocks_.end(), [](const auto& c) { return c->has_late(); })) return kNever;
  const Time ahead = std::max(std::min(run_ahead_limit_, now + from_sc_time(sc_core::sc_time_to_pending_activity())), now + 1);
  Time next = kNever;
  for (std::size_t i = 0; i < clocks_.size(); ++i) {
    Time before = ahead;
    if (last.any) before = std::max(before, last.time + ((Clock::kReverseEval ? i >= last.clock : i <= last.clock) ? 1 : 0));
    next = std::min(next, clocks_[i]->settle_late(before));
  }
  return next;
}

void ClockDomain::tell_clocks_running(bool running) {
  for (auto& c : clocks_) c->set_shell_running(running);
}

}  // namespace xy
