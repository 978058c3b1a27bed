#include "hw/nic/dcqcn.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "kernel/config.hpp"

namespace xy::nic {
namespace {

// The first deadline after `now` of a timer due at `at` every `period`; `skipped` counts the
// deadlines it passes over.
Time roll(Time at, Time period, Time now, std::uint64_t* skipped = nullptr) {
  if (at > now) return at;
  const std::uint64_t n = (now - at) / period + 1;
  if (skipped) *skipped += n;
  return at + n * period;
}

}  // namespace

DcqcnConfig DcqcnConfig::paper(double line_bps) {
  DcqcnConfig c;
  c.line_bps = line_bps;
  c.g = 1.0 / 256;                  // paper; htsim dcqcn.cpp:23; ns3-rdma config DCTCP_GAIN 0.00390625
  c.alpha_period = 55 * kUs;        // K: paper; htsim dcqcn.cpp:20; ns3-rdma ALPHA_RESUME_INTERVAL 55
  c.increase_period = 55 * kUs;     // T: paper; htsim's one 55 us period (ns3-rdma config: RP_TIMER 60)
  c.byte_counter = 10'000'000;      // B = 10 MB: paper; htsim dcqcn.cpp:24 (ns3-rdma config: 300000)
  c.fast_recovery_steps = 5;        // F: paper; htsim dcqcn.cpp:26; ns3-rdma FAST_RECOVERY_TIMES 5
  c.rai_bps = 40e6;                 // paper; ns3-rdma config RATE_AI 40Mb/s
  c.rhai_bps = 200e6;               // ns3-rdma config RATE_HAI 200Mb/s (the DCQCN authors' simulator)
  c.min_rate_bps = 100e6;           // ns3-rdma qbb-net-device.cc MinRate default; its config keeps it
  c.clamp_target = true;            // paper: R_T = R_C on every CNP; ns3-rdma CLAMP_TARGET_RATE 1
  c.rate_on_first_cnp = 1.0;        // the paper has no first-CNP step
  c.rate_decrease_interval = 0;     // paper: decrease on each CNP
  c.cnp_interval = 50 * kUs;        // N: paper; htsim dcqcn.cpp:19; ns3-rdma CNP_INTERVAL 50
  return c;
}

DcqcnConfig DcqcnConfig::mlx(double line_bps) {
  // HPCC ns-3 (alibaba-edu/High-Precision-Congestion-Control) rdma-hw.cc CC_MODE 1, with the
  // values simulation/run.py writes for `--cc dcqcn` where it sets them.
  const double per_25g = line_bps / 25e9;
  DcqcnConfig c;
  c.line_bps = line_bps;
  c.g = 1.0 / 256;                     // run.py g=0.00390625 (EwmaGain default 1/16)
  c.alpha_period = 1 * kUs;            // run.py t_alpha=1 (AlphaResumInterval default 55)
  c.increase_period = 300 * kUs;       // run.py t_inc=300, RP_TIMER (RPTimer default 1500)
  c.byte_counter = 0;                  // rdma-hw.cc's mlx code has no byte counter
  c.fast_recovery_steps = 1;           // run.py template FAST_RECOVERY_TIMES 1 (default 5)
  c.rai_bps = 5e6 * per_25g;           // run.py ai = 5*bw/25 Mb/s (Python 2 floors it; not here)
  c.rhai_bps = 50e6 * per_25g;         // run.py hai = 50*bw/25 Mb/s
  c.min_rate_bps = 1000e6;             // run.py template MIN_RATE 1000Mb/s
  c.clamp_target = false;              // run.py template CLAMP_TARGET_RATE 0
  c.rate_on_first_cnp = 1.0;           // RateOnFirstCnp default; third.cc never sets it
  c.rate_decrease_interval = 4 * kUs;  // run.py t_dec=4 (RateDecreaseInterval default 4)
  c.cnp_interval = 0;                  // ReceiveUdp flags the ACK of every marked packet (ACK per packet)
  return c;
}

void DcqcnConfig::validate(const std::string& prefix) const {
  const std::string& p = prefix;
  if (!(line_bps > 0) || !std::isfinite(line_bps))
    throw ConfigError(fmt::format("{}.line_bps = {:g}: allowed > 0", p, line_bps));
  if (!(g > 0 && g <= 1)) throw ConfigError(fmt::format("{}.g = {:g}: allowed (0, 1]", p, g));
  if (alpha_period == 0) throw ConfigError(fmt::format("{}.alpha_period = 0: allowed > 0", p));
  if (increase_period == 0) throw ConfigError(fmt::format("{}.increase_period = 0: allowed > 0", p));
  if (fast_recovery_steps < 0)
    throw ConfigError(fmt::format("{}.fast_recovery_steps = {}: allowed >= 0", p, fast_recovery_steps));
  if (!(rai_bps > 0) || !std::isfinite(rai_bps))
    throw ConfigError(fmt::format("{}.rai_bps = {:g}: allowed > 0", p, rai_bps));
  if (!(rhai_bps > 0) || !std::isfinite(rhai_bps))
    throw ConfigError(fmt::format("{}.rhai_bps = {:g}: allowed > 0", p, rhai_bps));
  if (!(rate_on_first_cnp > 0 && rate_on_first_cnp <= 1))
    throw ConfigError(fmt::format("{}.rate_on_first_cnp = {:g}: allowed (0, 1]", p, rate_on_first_cnp));
  // The first CNP's rate must not fall below the floor every later decrease keeps.
  const double top = line_bps * rate_on_first_cnp;
  if (!(min_rate_bps > 0 && min_rate_bps <= top))
    throw ConfigError(fmt::format("{}.min_rate_bps = {:g}: allowed (0, {:g}] (line_bps x rate_on_first_cnp)", p,
                                  min_rate_bps, top));
  if (mlx_variant() && byte_counter != 0)
    throw ConfigError(fmt::format("{}.byte_counter = {}: allowed 0 when rate_decrease_interval > 0 "
                                  "(the mlx variant has no byte counter)",
                                  p, byte_counter));
}

DcqcnConfig profile(const std::string& name, double line_bps) {
  if (name == "paper") return DcqcnConfig::paper(line_bps);
  if (name == "mlx") return DcqcnConfig::mlx(line_bps);
  throw ConfigError(fmt::format("nic.dcqcn.profile = {}: allowed paper, mlx", name));
}

// --- Reaction point ---------------------------------------------------------------------------

DcqcnReactionPoint::DcqcnReactionPoint(const DcqcnConfig& config) : cfg_(config) {
  cfg_.validate();
  rc_ = rt_ = cfg_.line_bps;
}

void DcqcnReactionPoint::observe(Time now) {
  if (now < now_)
    throw std::logic_error(fmt::format("DCQCN: time went backwards, {} after {}", format_time(now), format_time(now_)));
  now_ = now;
}

void DcqcnReactionPoint::on_cnp(Time now) {
  advance(now);
  ++stats_.cnps;
  const bool first = !started_;
  if (first) {
    started_ = true;
    rc_ = rt_ = cfg_.rate_on_first_cnp * rc_;
  }
  asleep_ = false;
  if (cfg_.mlx_variant()) {
    alpha_cnp_ = decrease_cnp_ = true;
    if (first) {
      alpha_ = 1;
      alpha_cnp_ = false;  // the first CNP sets α; it does not also raise it
      alpha_at_ = now + cfg_.alpha_period;
      check_at_ = now + cfg_.rate_decrease_interval + 1 * kNs;  // rdma-hw.cc's 1 ns: after the alpha update
    }
    return;
  }
  decrease();
  alpha_ = (1 - cfg_.g) * alpha_ + cfg_.g;  // after the cut, which used the old α
  t_count_ = bc_count_ = bytes_ = 0;
  alpha_at_ = now + cfg_.alpha_period;
  increase_at_ = now + cfg_.increase_period;
  maybe_sleep();
}

void DcqcnReactionPoint::decrease() {
  const bool increased = cfg_.mlx_variant() ? stage_ != 0 : (t_count_ != 0 || bc_count_ != 0);
  if (cfg_.clamp_target || increased) rt_ = rc_;
  rc_ = std::max(cfg_.min_rate_bps, rc_ * (1 - alpha_ / 2));
  ++stats_.decreases;
}

void DcqcnReactionPoint::on_sent(std::uint64_t bytes, Time now) {
  advance(now);
  if (!started_ || asleep_ || cfg_.byte_counter == 0) return;
  bytes_ += bytes;
  while (bytes_ >= cfg_.byte_counter && !asleep_) {
    bytes_ -= cfg_.byte_counter;
    ++bc_count_;
    increase_paper();  // may put the flow to sleep, which drops the rest of the count
  }
}

void DcqcnReactionPoint::raise(double rt) {
  rt_ = std::min(rt, cfg_.line_bps);
  const double avg = (rt_ + rc_) / 2;
  // Once the gap is below double resolution the average stops moving R_C: close it.
  rc_ = std::min(avg == rc_ ? rt_ : avg, cfg_.line_bps);
}

void DcqcnReactionPoint::increase_paper() {
  const std::uint64_t f = static_cast<std::uint64_t>(cfg_.fast_recovery_steps);
  const std::uint64_t hi = std::max(t_count_, bc_count_), lo = std::min(t_count_, bc_count_);
  if (hi <= f) {
    ++stats_.fast_recovery;
    raise(rt_);
  } else if (lo > f) {
    ++stats_.hyper;
    raise(rt_ + static_cast<double>(lo - f) * cfg_.rhai_bps);
  } else {
    ++stats_.additive;
    raise(rt_ + cfg_.rai_bps);
  }
  maybe_sleep();
}

void DcqcnReactionPoint::increase_mlx() {
  const std::uint64_t f = static_cast<std::uint64_t>(cfg_.fast_recovery_steps);
  if (stage_ < f) {
    ++stats_.fast_recovery;
    raise(rt_);
  } else if (stage_ == f) {
    ++stats_.additive;
    raise(rt_ + cfg_.rai_bps);
  } else {
    ++stats_.hyper;
    raise(rt_ + cfg_.rhai_bps);
  }
  ++stage_;
  maybe_sleep();
}

void DcqcnReactionPoint::maybe_sleep() {
  if (rc_ == cfg_.line_bps && rt_ == cfg_.line_bps && !decrease_cnp_ && !alpha_cnp_) {
    asleep_ = true;
    if (!cfg_.mlx_variant()) {
      increase_at_ = kNever;  // a CNP restarts it
      bytes_ = 0;
    }
  }
}

void DcqcnReactionPoint::sleep_until(Time now) {
  // α decays at each deadline, as the awake timer would do it; once it is 0 nothing changes.
  while (alpha_at_ <= now) {
    if (alpha_ == 0) {
      alpha_at_ = roll(alpha_at_, cfg_.alpha_period, now);
      break;
    }
    alpha_ *= 1 - cfg_.g;
    alpha_at_ += cfg_.alpha_period;
  }
  if (cfg_.mlx_variant()) {
    // Checks without a CNP do nothing; increase events at line rate only advance the stage.
    check_at_ = roll(check_at_, cfg_.rate_decrease_interval, now);
    if (increase_at_ != kNever) increase_at_ = roll(increase_at_, cfg_.increase_period, now, &stage_);
  }
}

void DcqcnReactionPoint::advance(Time now) {
  observe(now);
  if (!started_) return;
  while (!asleep_) {
    const Time at = std::min({alpha_at_, increase_at_, check_at_});
    if (at > now) return;
    if (alpha_at_ == at) {
      alpha_at_ += cfg_.alpha_period;
      if (cfg_.mlx_variant()) {
        alpha_ = alpha_cnp_ ? (1 - cfg_.g) * alpha_ + cfg_.g : (1 - cfg_.g) * alpha_;
        alpha_cnp_ = false;
        maybe_sleep();
      } else {
        alpha_ = (1 - cfg_.g) * alpha_;
      }
    } else if (increase_at_ == at) {
      increase_at_ += cfg_.increase_period;
      if (cfg_.mlx_variant()) {
        increase_mlx();
      } else {
        ++t_count_;
        increase_paper();
      }
    } else {
      check_at_ += cfg_.rate_decrease_interval;
      if (decrease_cnp_) {
        decrease();
        stage_ = 0;
        decrease_cnp_ = false;
        increase_at_ = at + cfg_.increase_period;  // cancelled and restarted, as rdma-hw.cc
        maybe_sleep();
      }
    }
  }
  sleep_until(now);
}

Time DcqcnReactionPoint::next_event() const {
  if (!started_ || asleep_) return kNever;
  return std::min({alpha_at_, increase_at_, check_at_});
}

// --- Notification point -----------------------------------------------------------------------

DcqcnNotificationPoint::DcqcnNotificationPoint(const DcqcnConfig& config) : interval_(config.cnp_interval) {
  config.validate();
}

bool DcqcnNotificationPoint::on_data(bool ce_marked, Time now) {
  if (!ce_marked) return false;
  ++marked_;
  if (sent_ && now < last_ + interval_) return false;
  sent_ = true;
  last_ = now;
  ++cnps_;
  return true;
}

}  // namespace xy::nic
