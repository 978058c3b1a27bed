// DCQCN (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM'15) as plain
// C++ cores driven by events and time: the reaction point (RP, the sender's rate limiter of one
// flow) and the notification point (NP, the receiver's CNP generator of one flow). The NIC
// around them paces the flow at rate(), carries CNPs, and owns the clock; the switch's ECN
// marking is elsewhere.
//
// Paper variant (rate_decrease_interval = 0), as the paper and every code base implement it:
//  - CNP: R_T = R_C (when clamping), R_C = max(min_rate, R_C(1 - α/2)), α = (1 - g)α + g; the
//    timer count T, the byte-counter count BC and the byte count reset, and the alpha timer (K)
//    and the increase timer (T) restart.
//  - Alpha timer: every K without a CNP, α = (1 - g)α.
//  - Increase events: each expiry of the increase timer counts T, each byte_counter bytes sent
//    count BC, and then: max(T, BC) <= F: fast recovery R_C = (R_T + R_C)/2; min(T, BC) > F:
//    hyper increase R_T += (min(T, BC) - F) R_HAI; else additive increase R_T += R_AI; both then
//    R_C = (R_T + R_C)/2; R_T and R_C capped at the line rate. With the counts taken after their
//    increment this is QCN's rule, and F is the number of fast-recovery steps (htsim's dcqcn.cpp
//    reads it so). byte_counter = 0 turns the byte counter off: BC stays 0, so hyper increase is
//    never reached and the flow stays in additive increase after its F fast-recovery steps.
//  - Without clamping, R_T = R_C only when an increase event ran since the previous decrease.
// mlx variant (rate_decrease_interval > 0): the HPCC authors' ns-3 "Mellanox version"
// (alibaba-edu/High-Precision-Congestion-Control, rdma-hw.cc). Where it differs from the above:
//  - A CNP only sets two flags. The first CNP of the flow sets α = 1, R_T = R_C =
//    rate_on_first_cnp R_C, and starts two free-running timers: the alpha update every K from
//    the CNP, and the decrease check every rate_decrease_interval from 1 ns after it (the ns-3
//    code's offset, so that a check never ties an alpha update). Neither ever restarts.
//  - Alpha update: α = (1 - g)α + g if a CNP arrived since the last update, else (1 - g)α.
//  - Decrease check: if a CNP arrived since the last check, one decrease, however many CNPs:
//    R_T = R_C if clamping or an increase event ran since the last decrease (so by default the
//    target is not clamped on back-to-back decreases), R_C = max(min_rate, R_C(1 - α/2)), the
//    stage counter resets and the increase timer restarts.
//  - Increase timer only, no byte counter: with the stage s (events since the last decrease,
//    before this one), s < F: fast recovery; s == F: additive; s > F: hyper increase by one
//    R_HAI (not i R_HAI).
// Ties: timers due at the same time run alpha, then increase, then the decrease check (ns-3 runs
// the increase timer first, as it was scheduled earlier); timers due at or before a CNP's or a
// send's time run before it.
//
// Recovered flows sleep: once R_C and R_T are both back at the line rate (and no CNP waits for
// a decrease check), the increase events and decrease checks would change nothing, so they are
// not run, not counted, and next_event() reports none; α keeps decaying at its own deadlines,
// brought up to date by any later call with a time, and the mlx timers keep their phase. Before
// the first CNP the flow runs at line rate and no timer runs. R_C moves to R_T outright when the
// average can no longer move it (the gap is below double resolution), so recovery ends.
//
// Exact: the rate arithmetic and the order and times of every event. Abstracted: the pacing
// itself, the CNP's wire format and its path, per-packet byte accounting (the NIC says what it
// sent), and the NP's CNP coalescing: a marked packet inside the CNP interval gets no CNP (no
// CNP is deferred to the interval's end, as htsim's sink does).
#pragma once
#include <cstdint>
#include <string>

#include "kernel/units.hpp"

namespace xy::nic {

// Every constant of DCQCN. The defaults are the paper profile at 100 Gb/s.
struct DcqcnConfig {
  double line_bps = 100e9;                    // the flow's maximum rate, and R_C before a CNP
  double g = 1.0 / 256;                       // α gain
  Time alpha_period = 55 * kUs;               // K
  Time increase_period = 55 * kUs;            // T, the rate-increase timer
  std::uint64_t byte_counter = 10'000'000;    // B, bytes; 0 = off
  int fast_recovery_steps = 5;                // F
  double rai_bps = 40e6;                      // R_AI
  double rhai_bps = 200e6;                    // R_HAI
  double min_rate_bps = 100e6;                // floor of every decrease
  bool clamp_target = true;                   // R_T = R_C on every decrease
  double rate_on_first_cnp = 1.0;             // R_C and R_T multiplied by it on the first CNP
  Time rate_decrease_interval = 0;            // 0: decrease on each CNP; > 0: the mlx variant
  Time cnp_interval = 50 * kUs;               // NP: least time between CNPs of a flow; 0: every mark

  // SIGCOMM'15 as corroborated by htsim and the DCQCN authors' ns-3 (see dcqcn.cpp).
  static DcqcnConfig paper(double line_bps);
  // The HPCC authors' ns-3 Mellanox variant with run.py's `--cc dcqcn` values (see dcqcn.cpp).
  static DcqcnConfig mlx(double line_bps);
  bool mlx_variant() const { return rate_decrease_interval > 0; }
  // Throws ConfigError naming `prefix`.field, the value and what is allowed.
  void validate(const std::string& prefix = "nic.dcqcn") const;
};

// "paper" or "mlx" at `line_bps`; else ConfigError "nic.dcqcn.profile = X: allowed paper, mlx".
DcqcnConfig profile(const std::string& name, double line_bps);

struct DcqcnStats {
  std::uint64_t cnps = 0;       // CNPs received
  std::uint64_t decreases = 0;  // rate cuts (mlx: at most one per decrease check)
  std::uint64_t fast_recovery = 0, additive = 0, hyper = 0;  // increase events by kind
  std::uint64_t increases() const { return fast_recovery + additive + hyper; }
};

// The sender's rate limiter of one flow. Times never go backwards (std::logic_error).
class DcqcnReactionPoint {
 public:
  explicit DcqcnReactionPoint(const DcqcnConfig& config);  // validates

  void on_cnp(Time now);
  // `bytes` of this flow went on the wire at `now`: feeds the byte counter (paper variant).
  void on_sent(std::uint64_t bytes, Time now);
  // Runs every timer event due at or before `now`, in time order, each at its own deadline.
  void advance(Time now);
  // The earliest pending timer event, or ~0 when none (before the first CNP, or recovered).
  Time next_event() const;

  double rate() const { return rc_; }    // R_C, bits/s
  double target() const { return rt_; }  // R_T, bits/s
  double alpha() const { return alpha_; }
  bool recovered() const { return asleep_; }  // back at line rate after a CNP, timers asleep
  const DcqcnStats& stats() const { return stats_; }
  const DcqcnConfig& config() const { return cfg_; }

 private:
  static constexpr Time kNever = ~Time{0};
  void observe(Time now);  // refuses time going backwards
  void decrease();
  void increase_paper();
  void increase_mlx();
  void raise(double rt);   // R_T = min(rt, line), then R_C halves its gap to R_T
  void maybe_sleep();
  void sleep_until(Time now);  // asleep: α decays, the mlx timers keep their phase

  DcqcnConfig cfg_;
  double rc_, rt_;
  double alpha_ = 1.0;
  bool started_ = false;  // a CNP arrived
  bool asleep_ = false;
  Time now_ = 0;
  Time alpha_at_ = kNever, increase_at_ = kNever, check_at_ = kNever;
  // Paper: the counts of timer expiries and byte-counter cycles since the last decrease, and
  // the bytes towards the next cycle.
  std::uint64_t t_count_ = 0, bc_count_ = 0, bytes_ = 0;
  // mlx: the stage (increase events since the last decrease) and the CNP-arrived flags.
  std::uint64_t stage_ = 0;
  bool alpha_cnp_ = false, decrease_cnp_ = false;
  DcqcnStats stats_;
};

// The receiver's CNP generator of one flow: a CNP for a CE-marked packet unless one went within
// the last cnp_interval (0: for every marked packet).
class DcqcnNotificationPoint {
 public:
  explicit DcqcnNotificationPoint(const DcqcnConfig& config);  // validates
  // A data packet of the flow arrived at `now`; true when a CNP must be sent now.
  bool on_data(bool ce_marked, Time now);
  std::uint64_t cnps() const { return cnps_; }
  std::uint64_t marked() const { return marked_; }  // CE-marked packets seen

 private:
  Time interval_;
  bool sent_ = false;
  Time last_ = 0;
  std::uint64_t cnps_ = 0, marked_ = 0;
};

}  // namespace xy::nic
