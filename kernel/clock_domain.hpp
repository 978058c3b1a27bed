// ClockDomain: the SystemC shell of one or more Clocks. One SC_METHOD per domain steps its clocks
// at each edge where some core is due, in time order, and sleeps through the others (one event
// that any wake-up re-arms earlier), so N cores cost at most one kernel activation per busy edge,
// not N. Clocks whose cores talk every few cycles (a composed port's PHY and core clocks) belong in
// one domain: stepping them in turn costs a comparison, where two domains hand over to SystemC's
// scheduler at almost every edge.
//
// Edges of two clocks at the same time are stepped in the order the clocks were given (last to
// first with XY_REVERSE_EVAL=1, as Clock reverses its evaluations): nothing one clock writes at
// time t is visible to another before its first edge after t (Channel), so the order never
// changes a result, and `tests/golden/check --reversed` checks it.
//
// Run-ahead: when no other SystemC process has anything pending before the domain's next due
// edge, the domain steps that edge in the same activation (SystemC time stays behind; cores
// read time as clock().time_of(now()), never sc_time_stamp()). This is exact, not a quantum:
// nothing can reach the domain in between. It is bounded by run_ahead_limit, which the driver
// sets to the end of each sc_start slice; 0 (the default) turns it off.
#pragma once
#include <memory>
#include <string>
#include <vector>

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
  struct ClockSpec {
    std::string name;  // the clock's, after the domain's: "<domain>.<name>"
    Time period;
  };
  SC_HAS_PROCESS(ClockDomain);
  // One clock, named as the domain.
  ClockDomain(const sc_core::sc_module_name& name, Time period);
  // Several clocks, clock(0) first.
  ClockDomain(const sc_core::sc_module_name& name, const std::vector<ClockSpec>& clocks);
  Clock& clock(std::size_t i = 0) { return *clocks_[i]; }
  const Clock& clock(std::size_t i = 0) const { return *clocks_[i]; }
  // Attaches to clock 0; a core of another clock attaches to clock(i) itself.
  template <class T>
  void attach(T& core) {
    clock().attach(core);
  }

  // Domains may step edges before this time ahead of SystemC time (see above).
  static void set_run_ahead_limit(Time limit) { run_ahead_limit_ = limit; }
  // Stops the domain for good: no edge is stepped from now on, whatever its cores ask. For a
  // testbench whose part on this domain has finished (its figures are final) while others run on.
  void halt();

 private:
  static constexpr Time kNever = ~Time{0};
  void add_clock(const std::string& name, Time period);
  void run();
  void arm(Time at);
  void tell_clocks_running(bool running);  // in run(), which looks at every clock after each step
  // Has its clocks' late takers take in (Clock::settle_late); returns the time of the next take.
  Time settle_late(Time now);
  std::vector<std::unique_ptr<Clock>> clocks_;
  sc_core::sc_event edge_;
  Time armed_ = kNever;
  bool halted_ = false;
  static Time run_ahead_limit_;  // global because SystemC's scheduler, which it bounds, is
};

}  // namespace xy
