#include "hw/nic/encc.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "hw/nic/roce.hpp"
#include "kernel/config.hpp"

namespace xy::nic {

EnccConfig EnccConfig::hpcc(double line_bps, Time base_rtt) {
  EnccConfig c;
  c.line_bps = line_bps;
  c.base_rtt = base_rtt;
  c.rai_bps = 10e6 * line_bps / 25e9;
  return c;
}

void EnccConfig::validate(const std::string& p) const {
  if (!(line_bps > 0) || !std::isfinite(line_bps))
    throw ConfigError(fmt::format("{}.line_bps = {:g}: allowed > 0", p, line_bps));
  if (base_rtt == 0) throw ConfigError(fmt::format("{}.base_rtt = 0: allowed > 0", p));
  if (!(eta > 0 && eta <= 1)) throw ConfigError(fmt::format("{}.eta = {:g}: allowed (0, 1]", p, eta));
  if (max_stage < 0) throw ConfigError(fmt::format("{}.max_stage = {}: allowed >= 0", p, max_stage));
  if (!(rai_bps > 0 && rai_bps <= line_bps))
    throw ConfigError(fmt::format("{}.rai_bps = {:g}: allowed (0, {:g}] (the line rate)", p, rai_bps, line_bps));
  if (!(min_rate_bps > 0 && min_rate_bps <= line_bps))
    throw ConfigError(
        fmt::format("{}.min_rate_bps = {:g}: allowed (0, {:g}] (the line rate)", p, min_rate_bps, line_bps));
}

double hop_utilisation(const sw::TelemetryHop& now, const sw::TelemetryHop& before, double base_rtt_ns) {
  const double dt = now.ns_since(before);
  const double B = now.line_gbps();  // bits a ns
  const double tx_rate = static_cast<double>(now.bytes_since(before)) * 8 / dt;
  const double queue = static_cast<double>(std::min(now.queue_bytes(), before.queue_bytes()));
  return tx_rate / B + queue * 8 / (B * base_rtt_ns);
}

EnccController::EnccController(const EnccConfig& config)
    : cfg_(config), rate_(config.line_bps), committed_(config.line_bps), lowest_(config.line_bps) {
  cfg_.validate("encc");
}

double EnccController::window_bytes() const {
  return std::max(1.0, cfg_.window_bytes_at_line() * rate_ / cfg_.line_bps);
}

void EnccController::on_ack(const sw::TelemetryRecords& t, std::uint32_t acked_psn, std::uint32_t next_psn) {
  if (t.hops == 0 || t.hops > sw::kTelemetryMaxHops) {
    ++stats_.skipped;
    return;
  }
  const bool commit = !started_ || psn_diff(acked_psn, last_update_psn_) > 0;
  if (!started_ || t.hops != hops_) {  // the first records, or a path of another length: a new baseline
    started_ = true;
    hops_ = t.hops;
    std::copy_n(t.hop.begin(), hops_, last_.begin());
    last_update_psn_ = next_psn;
    return;
  }
  if (!commit && !cfg_.fast_react) return;
  ++stats_.acks;
  const double T = to_ns(cfg_.base_rtt);
  double U = 0, tau = 0;
  bool measured = false;
  for (int i = 0; i < hops_; ++i) {
    const sw::TelemetryHop& now = t.hop[i];
    const sw::TelemetryHop& before = last_[i];
    const double dt = now.ns_since(before);
    if (dt == 0) continue;  // the same record again: nothing to measure
    measured = true;
    const double u = hop_utilisation(now, before, T);
    if (u > U) {
      U = u;
      tau = dt;
    }
    last_[i] = now;
  }
  if (!measured) {
    if (commit) last_update_psn_ = next_psn;
    return;
  }
  tau = std::min(tau, T);  // 0 when no hop carried any load: the estimate stays (as in HPCC)
  u_ = (u_ * (T - tau) + U * tau) / T;
  double rate;
  int stage;
  if (u_ >= cfg_.eta || stage_ >= cfg_.max_stage) {
    rate = committed_ / (u_ / cfg_.eta) + cfg_.rai_bps;
    stage = 0;
  } else {
    rate = committed_ + cfg_.rai_bps;
    stage = stage_ + 1;
  }
  rate_ = std::clamp(rate, cfg_.min_rate_bps, cfg_.line_bps);
  lowest_ = std::min(lowest_, rate_);
  if (commit) {
    ++stats_.commits;
    committed_ = rate_;
    stage_ = stage;
    last_update_psn_ = next_psn;
  }
}

}  // namespace xy::nic
