#include "hw/switch/port_fc.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace xy::sw {

PortFlowControl::PortFlowControl(std::string name, link::FcMode mode, const link::CbfcConfig& cbfc,
                                 const link::PfcConfig& pfc, Time period, Cycle latency, Stats& stats,
                                 CreditRelease release)
    : Core(std::move(name)), mode_(mode), release_(release), cbfc_tx_(cbfc), cbfc_rx_(cbfc), pfc_tx_(pfc, period), pfc_rx_(pfc, period),
      latency_(latency),
      xoffs_(stats.counter(this->name() + ".pfc.xoff", "frames", "pause frames with a non-zero pause time")),
      cf_updates_(stats.counter(this->name() + ".cbfc.cf_updates", "updates", "CF_Updates sent upstream")),
      cc_updates_(stats.counter(this->name() + ".cbfc.cc_updates", "updates", "CC_Updates sent downstream")) {
  const auto vcs = static_cast<std::size_t>(std::max({1, cbfc.vcs, pfc.priorities}));
  held_since_.assign(vcs, ~Cycle{0});
  held_closed_.assign(vcs, 0);
}

bool PortFlowControl::can_send(const Packet& p) const {
  bool ok = true;
  if (mode_ == link::FcMode::kCbfc) ok = cbfc_tx_.can_send(p.vc, p.bytes);
  if (mode_ == link::FcMode::kPfc) ok = !pfc_tx_.paused(p.vc, now());
  if (!ok && p.vc < held_since_.size() && held_since_[p.vc] == ~Cycle{0}) held_since_[p.vc] = now();
  return ok;
}

void PortFlowControl::on_send(const Packet& p) {
  if (mode_ == link::FcMode::kCbfc) cbfc_tx_.on_send(p.vc, p.bytes);
  ++frames_sent_;
  if (p.vc < held_since_.size() && held_since_[p.vc] != ~Cycle{0}) {
    held_closed_[p.vc] += now() - held_since_[p.vc];
    held_since_[p.vc] = ~Cycle{0};
  }
}

std::uint64_t PortFlowControl::held_cycles(int vc) const {
  if (vc < 0 || vc >= static_cast<int>(held_since_.size())) return 0;
  const Cycle since = held_since_[vc];
  return held_closed_[vc] + (since == ~Cycle{0} ? 0 : now() - since);
}

void PortFlowControl::on_arrive(const Packet& p) {
  ++frames_arrived_;
  if (mode_ == link::FcMode::kCbfc) {
    if (const std::uint32_t beyond = cbfc_rx_.on_receive(p.vc, p.bytes))
      overflow_.record(beyond, "credits",
                       [&] { return link::cbfc_overflow(name(), cbfc_rx_, p.vc, p.bytes, beyond, now()); });
  }
  if (mode_ == link::FcMode::kPfc) {
    if (const std::uint32_t beyond = pfc_rx_.on_receive(p.vc, p.bytes))
      overflow_.record(beyond, "B",
                       [&] { return link::pfc_overflow(name(), pfc_rx_, p.vc, p.bytes, beyond, now()); });
  }
  wake_next();  // a threshold or an update may be due
}

void PortFlowControl::on_admit(std::uint32_t bytes, std::uint8_t vc) {
  if (mode_ == link::FcMode::kCbfc && release_ == CreditRelease::kAdmission) {
    cbfc_rx_.on_drain(vc, bytes);
    wake_next();
  }
}

void PortFlowControl::on_depart(std::uint32_t bytes, std::uint8_t vc) {
  if (mode_ == link::FcMode::kCbfc && release_ == CreditRelease::kDeparture) cbfc_rx_.on_drain(vc, bytes);
  if (mode_ == link::FcMode::kPfc) pfc_rx_.on_drain(vc, bytes);
  wake_next();
}

void PortFlowControl::eval() {
  while (!in_flight_.empty() && in_flight_.front().at <= now()) {
    const link::FcMessage m = std::move(in_flight_.front().message);
    in_flight_.pop_front();
    if (m.credit) cbfc_tx_.on_cf_update(m.credit->vc, m.credit->counters[0]);
    if (m.pause) pfc_tx_.on_pause(*m.pause, now());
    if (upstream_) upstream_->wake_next();
  }
  // A CC_Update behind frames still on their way waits for them (on_arrive wakes us).
  while (!cc_in_flight_.empty() && cc_in_flight_.front().at <= now() &&
         frames_arrived_ >= cc_in_flight_.front().message.after_frames) {
    const link::CreditUpdate& cc = *cc_in_flight_.front().message.credit;
    for (std::size_t vc = 0; vc < cc.counters.size(); ++vc) cbfc_rx_.on_cc_update(static_cast<int>(vc), cc.counters[vc]);
    cc_in_flight_.pop_front();
  }
  if (mode_ == link::FcMode::kCbfc) {
    while (auto cf = cbfc_rx_.poll(now())) {
      cf_updates_.add();
      in_flight_.push_back({now() + latency_, {std::move(cf), std::nullopt}});
    }
    if (auto cc = cbfc_tx_.poll(now())) {
      cc_updates_.add();
      cc_in_flight_.push_back({now() + latency_, {std::move(cc), std::nullopt, frames_sent_}});
    }
  } else if (mode_ == link::FcMode::kPfc) {
    while (auto pause = pfc_rx_.poll(now())) {
      if (pause->quanta[0] || pause->enable_vector > 1) xoffs_.add();
      in_flight_.push_back({now() + latency_, {std::nullopt, pause}});
    }
  }
}

void PortFlowControl::commit() {
  Cycle next = ~Cycle{0};
  if (!in_flight_.empty()) next = in_flight_.front().at;
  if (!cc_in_flight_.empty() && frames_arrived_ >= cc_in_flight_.front().message.after_frames)
    next = std::min(next, cc_in_flight_.front().at);
  if (mode_ == link::FcMode::kCbfc) next = std::min({next, cbfc_rx_.next_timer(), cbfc_tx_.next_timer()});
  if (mode_ == link::FcMode::kPfc) {
    next = std::min(next, pfc_rx_.next_timer());
    // The upstream learns of a pause running out by being woken then.
    for (int prio = 0; prio < pfc_rx_.config().priorities; ++prio)
      if (pfc_tx_.paused(prio, now()) && upstream_) upstream_->wake_at(pfc_tx_.paused_until(prio));
  }
  if (next != ~Cycle{0}) wake_at(std::max(next, now() + 1));
}

}  // namespace xy::sw
