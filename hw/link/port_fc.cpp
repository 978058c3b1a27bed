#include "hw/link/port_fc.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace xy::link {

PortFc::PortFc(std::string name, FcMode mode, const CbfcConfig& cbfc, const PfcConfig& pfc, const Clock& clock,
               Stats& stats, Channel<FcMessage>& out, Channel<FcMessage>& in, PortFcOptions options,
               std::unique_ptr<CreditSender> credits)
    : Core(std::move(name)), mode_(mode), options_(options),
      cbfc_tx_(credits ? std::move(credits) : std::make_unique<CbfcSender>(cbfc)), out_(out), in_(in),
      blocked_since_(static_cast<std::size_t>(std::max({1, cbfc.vcs, pfc.priorities})), kNotBlocked),
      held_vc_(blocked_since_.size(), 0), refused_bytes_(blocked_since_.size(), 0),
      drained_untaken_(static_cast<std::size_t>(std::max(1, cbfc.vcs)), 0), cbfc_rx_(cbfc_tx_->config()),
      pfc_tx_(pfc, clock.period()), pfc_rx_(pfc, clock.period()) {
  if (options_.receives) {
    xoffs_ = &stats.counter(this->name() + ".pfc.xoff", "frames", "pause frames with a non-zero pause time sent upstream");
    cf_updates_ = &stats.counter(this->name() + ".cbfc.cf_updates", "updates", "CF_Updates sent upstream");
  }
  if (options_.sends) {
    cc_updates_ = &stats.counter(this->name() + ".cbfc.cc_updates", "updates", "CC_Updates sent downstream");
    held_ = &stats.counter(this->name() + ".held_cycles", "cycles",
                           "cycles the core feeding this port had a frame that flow control held back");
  }
}

bool PortFc::can_send(const Packet& p) const {
  bool fc_ok = true;
  if (mode_ == FcMode::kCbfc) fc_ok = cbfc_tx_->can_send(p.vc, p.bytes);
  if (mode_ == FcMode::kPfc) fc_ok = !pfc_tx_.paused(p.vc, now());
  // Held from the first refusal until the feeder asks again and may go (it is woken when credits
  // come or a pause ends).
  Cycle& since = blocked_since_.at(p.vc);
  if (!fc_ok) refused_bytes_[p.vc] = p.bytes;
  if (!fc_ok && since == kNotBlocked) since = now();
  if (fc_ok && since != kNotBlocked) {
    held_vc_[p.vc] += hold_clip(now()) - hold_clip(since);
    held_->add(now() - since);
    since = kNotBlocked;
  }
  if (!options_.to_mac) return fc_ok;
  // Room in the FIFO to the MAC; a switch egress may have a frame or two scheduled beyond it
  // (its egress and tx_mac lead), which the FIFO holds: a soft limit, never a loss.
  const bool room = options_.to_mac->in_flight() < options_.fifo_frames;
  if (fc_ok && !room && !fifo_full_) {
    fifo_full_ = true;  // commit() wakes the feeder once the MAC has taken a frame
    const_cast<PortFc*>(this)->wake_next();
  }
  return fc_ok && room;
}

void PortFc::on_send(const Packet& p) {
  if (mode_ == FcMode::kCbfc) cbfc_tx_->on_send(p.vc, p.bytes);
  ++frames_sent_;
}

// The cores around the port call these in their own eval or commit; each takes effect at this
// port's next cycle (apply_registered), whatever order the cores of their cycle run in.
void PortFc::on_arrive(const Packet& p) {
  registered_.push({now(), Registered::kArrive, p.vc, p.bytes});
  // A PFC threshold may be due, or a CC_Update waiting for this frame. A CBFC arrival moves no
  // timer of the receiver, so it waits for the next cycle the port has anyhow (calls_wait).
  if (!calls_wait()) wake_next();
}

void PortFc::on_admit(std::uint32_t bytes, std::uint8_t vc) {
  if (mode_ == FcMode::kCbfc && options_.release == CreditRelease::kAdmission) register_drain(bytes, vc);
}

void PortFc::on_depart(std::uint32_t bytes, std::uint8_t vc) {
  if (mode_ == FcMode::kCbfc && options_.release == CreditRelease::kDeparture) return register_drain(bytes, vc);
  if (mode_ == FcMode::kPfc) registered_.push({now(), Registered::kDrain, vc, bytes});
  wake_next();
}

// A CBFC drain wakes the port only for the cycle it makes a CF_Update due: at once when it
// reaches the spacing, the VC's update timer when it starts one. Otherwise the port's next
// cycle, a timer's or a message's, takes it in before any CF_Update it could change.
void PortFc::register_drain(std::uint32_t bytes, std::uint8_t vc) {
  const std::uint32_t credits = cbfc_rx_.config().credits_for(bytes);
  std::uint32_t& untaken = drained_untaken_.at(vc);  // before it is registered: a bad VC throws here
  const Cycle due = cbfc_rx_.due_after_drain(vc, untaken, credits);
  untaken += credits;
  registered_.push({now(), Registered::kDrain, vc, bytes});
  if (!calls_wait()) wake_next();
  else if (due != ~Cycle{0}) wake_at(std::max(due, now() + 1));
}

// Calls that wait, unwoken, for the port's next cycle: CBFC's, once the port's first cycle has
// armed its timers; not while a CC_Update may wait for arrivals, nor with waves on (they show
// the counters as each cycle leaves them).
bool PortFc::calls_wait() const {
  return mode_ == FcMode::kCbfc && timers_armed_ && !options_.cc_may_overtake_frames && !probed_;
}

// A call taken into a CBFC receiver; an arrival beyond its buffer recorded in `log`.
void PortFc::take(CbfcReceiver& rx, OverflowLog& log, const Registered& r) const {
  if (r.kind == Registered::kDrain) return rx.on_drain(r.vc, r.bytes);
  if (const std::uint32_t beyond = rx.on_receive(r.vc, r.bytes)) record_overflow(rx, log, r, beyond);
}

void PortFc::record_overflow(const CbfcReceiver& rx, OverflowLog& log, const Registered& r,
                             std::uint32_t beyond) const {
  log.record(beyond, "credits", [&] { return cbfc_overflow(name(), rx, r.vc, r.bytes, beyond, r.at); });
}

void PortFc::apply_registered() {
  for (; !registered_.empty() && registered_.front().at < now(); registered_.pop()) {
    const Registered& r = registered_.front();
    if (r.kind == Registered::kArrive) ++frames_arrived_;
    if (mode_ == FcMode::kCbfc) {
      if (r.kind == Registered::kDrain) drained_untaken_[r.vc] -= cbfc_rx_.config().credits_for(r.bytes);
      take(cbfc_rx_, overflow_, r);
    } else if (r.kind == Registered::kDrain) {
      pfc_rx_.on_drain(r.vc, r.bytes);  // drains are registered with CBFC or PFC only
    } else if (mode_ == FcMode::kPfc) {
      if (const std::uint32_t beyond = pfc_rx_.on_receive(r.vc, r.bytes))
        overflow_.record(beyond, "B", [&] { return pfc_overflow(name(), pfc_rx_, r.vc, r.bytes, beyond, r.at); });
    }
  }
  // A CC_Update takes effect after every arrival of its cycle: the frames ahead of it on the
  // line reached the core (which reports them to on_arrive) no later than it reached us.
  while (cc_due()) {
    const CreditUpdate& cc = *arrived_cc_.front().message.credit;
    for (std::size_t vc = 0; vc < cc.counters.size() && vc < static_cast<std::size_t>(cbfc_rx_.config().vcs); ++vc)
      cbfc_rx_.on_cc_update(static_cast<int>(vc), cc.counters[vc]);
    arrived_cc_.pop();
  }
}

CbfcReceiver PortFc::with_calls(OverflowLog& log) const {
  CbfcReceiver rx = cbfc_rx_;
  for (std::size_t i = 0; i < registered_.size(); ++i) take(rx, log, registered_[i]);
  return rx;
}

CbfcReceiver PortFc::cbfc_receiver_with_calls() const {
  OverflowLog ignored;
  return with_calls(ignored);
}

std::string PortFc::overflow() const {
  OverflowLog log = overflow_;
  if (mode_ == FcMode::kCbfc) with_calls(log);
  return log.report();
}

std::uint64_t PortFc::held_cycles(int vc) const {
  if (vc < 0 || vc >= vcs()) return 0;
  return held_vc_[vc] + (blocked_since_[vc] == kNotBlocked ? 0 : hold_clip(now()) - hold_clip(blocked_since_[vc]));
}

std::string PortFc::counted_beyond(const PortFc& far) const {
  if (mode_ != FcMode::kCbfc) return "";
  const CbfcReceiver rx = cbfc_receiver_with_calls();
  const std::uint32_t mask = rx.config().counter_mask();
  for (int vc = 0; vc < rx.config().vcs; ++vc) {
    // Sent minus counted is what is on its way or lost: never negative (it would wrap).
    const std::uint32_t ahead = (far.cbfc_tx_->consumed(vc) - rx.consumed(vc)) & mask;
    if (ahead > rx.config().buffer_credits[vc])
      return fmt::format("{} VC {}: counted {} credits in, its sender consumed {}: frames counted twice", name(), vc,
                         rx.consumed(vc), far.cbfc_tx_->consumed(vc));
  }
  return "";
}

void PortFc::probe(Waves& waves) {
  probed_ = waves.enabled();
  if (mode_ == FcMode::kCbfc) {
    if (options_.sends) cbfc_tx_->probe(waves, name() + ".cbfc_tx");
    if (options_.receives) cbfc_rx_.probe(waves, name() + ".cbfc_rx");
  } else if (mode_ == FcMode::kPfc) {
    for (int prio = 0; prio < vcs(); ++prio) {
      if (options_.sends)
        waves.probe(fmt::format("{}.pfc_tx.prio{}.paused", name(), prio), 1,
                    [this, prio] { return pfc_tx_.paused(prio, now()); });
      if (options_.receives)
        waves.probe(fmt::format("{}.pfc_rx.prio{}.occupancy", name(), prio), 32,
                    [this, prio] { return pfc_rx_.occupancy(prio); });
    }
  }
}

std::string PortFc::held_back(int vc, std::uint32_t bytes) const {
  if (mode_ == FcMode::kCbfc && !cbfc_tx_->can_send(vc, bytes))
    return fmt::format("{} VC {}: a {} B frame needs {} credits, {} of {} available ({} in use)", name(), vc, bytes,
                       cbfc_tx_->config().credits_for(bytes), cbfc_tx_->credits_available(vc),
                       cbfc_tx_->config().buffer_credits[vc], cbfc_tx_->in_use(vc));
  if (mode_ == FcMode::kPfc && pfc_tx_.paused(vc, now()))
    return fmt::format("{} priority {}: paused until cycle {}", name(), vc, pfc_tx_.paused_until(vc));
  return "";
}

std::string PortFc::holding(int vc) const {
  if (vc < 0 || vc >= vcs() || blocked_since_[vc] == kNotBlocked) return "";
  return held_back(vc, refused_bytes_[vc]);
}

bool PortFc::cc_due() const {
  return !arrived_cc_.empty() && arrived_cc_.front().at < now() &&
         (!options_.cc_may_overtake_frames || frames_arrived_ >= arrived_cc_.front().message.after_frames);
}

// Eval reads the state of the cycle before: what the cores around called in it, the messages the
// line delivered in it. Messages that arrive now are taken in at commit, so that the feeder asking
// can_send() in this cycle's eval sees none of them, whichever of the two runs first.
void PortFc::eval() {
  apply_registered();
  if (mode_ == FcMode::kCbfc && options_.receives)
    while (auto cf = cbfc_rx_.poll(now())) {
      cf_updates_->add();
      outbox_.push({std::move(cf), std::nullopt});
    }
  if (mode_ == FcMode::kPfc && options_.receives)
    while (auto pause = pfc_rx_.poll(now())) {
      if (pause->quanta[0] || pause->enable_vector > 1) xoffs_->add();
      for (std::size_t p = 0; p < xoffs_by_priority_.size(); ++p)
        xoffs_by_priority_[p] += (pause->enable_vector >> p & 1) && pause->quanta[p];
      ++pause_frames_;
      outbox_.push({std::nullopt, pause});
    }
  while (in_.can_pop()) arrived_.push_back(in_.pop());
}

// Commit takes in this cycle's messages, and the CC_Update the sending half is due, after every
// frame the feeder sent in this cycle's eval.
void PortFc::commit() {
  bool heard = false, cc_came = false;
  if (fifo_full_) {  // the feeder was refused in an eval
    if (options_.to_mac->in_flight() < options_.fifo_frames) {
      fifo_full_ = false;
      heard = true;
    } else {
      options_.to_mac->wake_on_pop(*this);  // the MAC's next take may make room
    }
  }
  for (FcMessage& m : arrived_) {
    if (m.credit && m.credit->kind == CreditUpdate::kCf) cbfc_tx_->on_cf_update(m.credit->vc, m.credit->freed);
    if (m.credit && m.credit->kind == CreditUpdate::kCc) {
      arrived_cc_.push({now(), std::move(m)});
      cc_came = true;
      ++cc_arrived_;
    }
    if (m.pause) pfc_tx_.on_pause(*m.pause, now());
    heard = true;
  }
  arrived_.clear();
  if (heard && upstream_) upstream_->wake_next();  // a credit, a pause or room for it
  if (mode_ == FcMode::kCbfc && options_.sends)
    if (auto cc = cbfc_tx_->poll(now())) {
      cc_updates_->add();
      outbox_.push({std::move(cc), std::nullopt, frames_sent_});
    }
  if (!outbox_.empty() && out_.can_push()) {
    out_.push(outbox_.pop());
  }
  Cycle next = ~Cycle{0};
  if (mode_ == FcMode::kCbfc) {
    if (options_.receives) next = cbfc_rx_.next_timer();
    if (options_.sends) next = std::min(next, cbfc_tx_->next_timer());
  }
  if (mode_ == FcMode::kPfc) {
    if (options_.receives) next = pfc_rx_.next_timer();
    // The feeder learns of a pause running out by being woken then.
    for (int prio = 0; prio < pfc_rx_.config().priorities; ++prio)
      if (pfc_tx_.paused(prio, now()) && upstream_) upstream_->wake_at(pfc_tx_.paused_until(prio));
  }
  if (next != ~Cycle{0}) wake_at(std::max(next, now() + 1));
  timers_armed_ = true;
  // Calls are taken in, and a CC_Update that came now applied, at the next cycle; one waiting for
  // frames it counted is applied when their arrivals (calls) come.
  if (!registered_.empty() || cc_came) wake_next();
  set_busy(!outbox_.empty());
}

}  // namespace xy::link
