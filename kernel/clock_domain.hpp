// ClockDomain: the SystemC shell of a Clock. One SC_METHOD per domain steps the Clock at each
// edge where some core is due and sleeps through the others (one event that any wake-up
// re-arms earlier), so N cores cost at most one kernel activation per busy cycle, not N.
//
// Run-ahead: when no other SystemC process has anything pending before the domain's next due
// edge, the domain steps that edge in the same activation (SystemC time stays behind; cores
// read time as clock().time_of(now()), never sc_time_stamp()). This is exact, not a quantum:
// nothing can reach the domain in between. It is bounded by run_ahead_limit, which the driver
// sets to the end of each sc_start slice; 0 (the default) turns it off.
#pragma once
#include <systemc>

#include "kernel/clock.hpp"

namespace xy {

// Sets SystemC's time resolution to 1 fs (Time's unit). Call before any sc_time is made;
// ClockDomain calls it; calling it again is harmless.
void use_femtosecond_resolution();
sc_core::sc_time to_sc_time(Time t);
Time from_sc_time(const sc_core::sc_time& t);
Time sim_now();  // sc_time_stamp() in fs

class ClockDomain : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(ClockDomain);
  ClockDomain(const sc_core::sc_module_name& name, Time period);
  Clock& clock() { return clock_; }
  const Clock& clock() const { return clock_; }
  template <class T>
  void attach(T& core) {
    clock_.attach(core);
  }

  // Domains may step edges before this time ahead of SystemC time (see above).
  static void set_run_ahead_limit(Time limit) { run_ahead_limit_ = limit; }
  // Stops the domain for good: no edge is stepped from now on, whatever its cores ask. For a
  // testbench whose part on this domain has finished (its figures are final) while others run on.
  void halt();

 private:
  void run();
  void arm(Cycle at);
  Clock clock_;
  sc_core::sc_event edge_;
  Cycle armed_ = ~Cycle{0};
  bool halted_ = false;
  static Time run_ahead_limit_;  // global because SystemC's scheduler, which it bounds, is
};

}  // namespace xy
