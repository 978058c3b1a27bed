#include "kernel/clock_domain.hpp"

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

namespace {
Time checked_period(Time period) {
  use_femtosecond_resolution();  // before the Clock or any sc_time exists
  return period;
}
}  // namespace

ClockDomain::ClockDomain(const sc_core::sc_module_name& name, Time period)
    : sc_core::sc_module(name), clock_(this->name(), checked_period(period)) {
  clock_.on_wake([this](Cycle at) { arm(at); });
  SC_METHOD(run);
  sensitive << edge_;
  dont_initialize();
}

// Schedules the edge of cycle `at`; an earlier request replaces a later pending one.
void ClockDomain::arm(Cycle at) {
  if (halted_ || at >= armed_) return;
  if (armed_ != ~Cycle{0}) edge_.cancel();
  armed_ = at;
  edge_.notify(to_sc_time(clock_.time_of(at) - sim_now()));
}

void ClockDomain::halt() {
  halted_ = true;
  if (armed_ != ~Cycle{0}) edge_.cancel();
  armed_ = ~Cycle{0};
  clock_.forget_wakeups();
}

Time ClockDomain::run_ahead_limit_ = 0;

void ClockDomain::run() {
  armed_ = ~Cycle{0};
  if (halted_) return;
  const Time now = sim_now();
  // Step the cycles whose edge is now (a wake may land on this very edge before we run), then
  // run ahead through later cycles while no other process has anything pending before them:
  // nothing can reach this domain's cores in between. Each step may schedule activity
  // elsewhere (a wake of another domain), so the horizon is asked again after every step.
  while (clock_.has_work()) {
    const Cycle due = clock_.next_due();
    const Time t = clock_.time_of(due);
    if (t > now && (t >= run_ahead_limit_ ||
                    t >= now + from_sc_time(sc_core::sc_time_to_pending_activity())))
      return arm(due);
    clock_.step(due);
  }
}

}  // namespace xy
