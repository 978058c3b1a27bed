#include "hw/link/mac.hpp"

#include "hw/link/crc32.hpp"
#include "hw/link/wire.hpp"

namespace xy::link {
namespace {

// Another LLR control is due next cycle behind the one just sent (an INIT behind an ACK, an ACK
// behind a NACK): the models say; a twin is asked next cycle.
bool control_behind(const LlrTx& tx, const LlrRx& rx, Cycle next) { return tx.init_pending() || rx.control_due(next); }
bool control_behind(const LlrTransmitter&, const LlrReceiver&, Cycle) { return true; }
// The LLR TX's timers are due: the model says; a twin is ticked every evaluation.
bool tick_due(const LlrTx& tx, Cycle now) { return now >= tx.next_timer(); }
bool tick_due(const LlrTransmitter&, Cycle) { return true; }

}  // namespace

Mac::Mac(std::string name, const MacConfig& config, LlrEnds ends, Channel<Packet*>& from_core, Channel<Packet*>& to_core,
         Channel<FcMessage>* fc_from_core, Channel<FcMessage>* fc_to_core, Channel<Packet*>& to_line,
         Channel<Packet*>& from_line, PacketPool& pool, Stats& stats)
    : Core(std::move(name)), from_core_(from_core),
      to_core_(to_core), fc_from_core_(fc_from_core), fc_to_core_(fc_to_core), to_line_(to_line), from_line_(from_line),
      pool_(pool), llr_(config.llr), tx_model_(config.llr_config), rx_model_(config.llr_config),
      twins_(std::move(ends)),
      sent_(stats.counter(this->name() + ".frames_sent", "frames", "data frames handed to the PHY, replays included")),
      replayed_(stats.counter(this->name() + ".llr.replayed_frames", "frames", "frames sent again by LLR")),
      controls_(stats.counter(this->name() + ".control_frames", "frames", "LLR and flow-control messages sent")),
      bad_data_(stats.counter(this->name() + ".rx.bad_fcs_data", "frames", "data frames received with a bad FCS")),
      bad_control_(stats.counter(this->name() + ".rx.bad_fcs_control", "frames", "control frames received with a bad FCS")),
      lost_(stats.counter(this->name() + ".rx.lost", "frames", "data frames with a bad FCS and no LLR: lost on this hop")),
      delivered_(stats.counter(this->name() + ".rx.delivered", "frames", "data frames handed to the core")),
      config_(config) {
  tx_ = twins_.tx ? twins_.tx.get() : &tx_model_;
  rx_ = twins_.rx ? twins_.rx.get() : &rx_model_;
  // Straight to ADVANCE: without LLR nothing is kept; connected ends need no INIT, and the one
  // the TX has ready is dropped (sent anyway, it would reset the partner's RX mid-stream).
  if (!llr_ || config_.connected) {
    tx_->on_control({LlrControl::kAck, 0}, 0);
    if (config_.connected) tx_->poll_control();
  }
}

template <class Message>
Packet* Mac::control_frame(const Message& m) {
  Packet* c = pool_.acquire();
  c->control = true;
  c->phantom = false;
  seal_control(*c, m);
  c->bytes = static_cast<std::uint32_t>(c->size_now());
  controls_.add();
  return c;
}

inline void Mac::to_line(Packet* w) {
  if (pcap_) [[unlikely]] capture(*w);
  sent_.add();
  to_line_.push(w);
}

void Mac::capture(Packet& w) {
  const std::vector<std::uint8_t>& wire = w.bytes_now();
  captured_.assign(wire.begin() + kDataHeaderBytes, wire.end() - kFcsBytes);
  append_fcs(captured_);
  pcap_->write(clock().time_of(now()), captured_.data(), captured_.size());
}

template <class Tx, class Rx>
bool Mac::transmit(Tx& tx, Rx& rx) {
  llr_full_ = false;
  waiting_for_line_ = !to_line_.can_push();  // out of credits: the line wakes this MAC when one is back
  if (waiting_for_line_) return false;
  std::optional<LlrControl> control;
  if (llr_) control = rx.poll(now());
  if (!control && llr_) control = tx.poll_control();
  if (control) {
    to_line_.push(control_frame(*control));
    llr_control_sent_ = true;  // another may be due behind it (an INIT behind an ACK)
    return true;
  }
  while (fc_from_core_ && fc_from_core_->can_pop()) {
    if (const FcMessage& m = fc_from_core_->peek(); !m.credit || m.credit->kind != CreditUpdate::kCc) {
      to_line_.push(control_frame(fc_from_core_->pop()));
      return true;
    }
    held_cc_ = fc_from_core_->pop();  // a later one supersedes it (counters absolute)
    cc_waiting_ = true;
  }
  // A CC_Update once every frame it counted is ahead of it for good: sent, and with LLR
  // acknowledged (a replay would come after it) or flushed (lost: what the update repairs).
  if (cc_waiting_ && cc_may_go(tx.kept())) {
    to_line_.push(control_frame(held_cc_));
    cc_waiting_ = false;
    return true;
  }
  if (auto replay = llr_ ? tx.next_replay(now()) : std::nullopt) {
    replayed_.add();
    to_line(pool_.lend(replay->first));  // the copy kept lends it its bytes, if it has them
    return true;
  }
  if (!from_core_.can_pop()) return false;
  llr_full_ = !tx.can_accept(from_core_.peek()->bytes);  // an ACK wakes it
  if (!llr_full_) {
    Packet* frame = from_core_.pop();
    frame->advance(stages_.tx, clock().time_of(now()));
    ++accepted_;
    // LLR keeps a copy until ACKed, set aside: the frame goes on to the line, and the copy is read
    // again only for a replay.
    Packet* kept = llr_ ? pool_.take_aside() : nullptr;
    seal_data(*frame, kept ? tx.accept(kept, frame->bytes, now()) : 0, scratch_);  // as the line carries it
    if (kept) pool_.set_aside(kept, frame);
    to_line(frame);
    return true;
  }
  return false;
}

bool Mac::cc_may_go(std::size_t kept) const { return accepted_ - kept >= held_cc_.after_frames; }

template <class Tx, class Rx>
inline void Mac::receive(Tx& tx, Rx& rx) {
  while (from_line_.can_pop()) {
    Packet* w = from_line_.pop();
    if (intact_owed_data(*w)) {  // most frames: good, read from the fields they were sealed with
      w->intact = false;
      take_data(rx, w, w->owed_seq);
      continue;
    }
    const Received r = parse(*w);
    w->intact = false;  // its bytes change from here on (unwrapped, then sealed anew)
    const bool ok = r.fcs_ok && !w->bad;  // a frame an uncorrectable codeword carried arrives damaged
    if (!ok) {
      // Unreadable; counted by what it was (the model's truth, which the MAC could not know).
      (w->control ? bad_control_ : bad_data_).add();
      if (!w->control && llr_) rx.on_frame(0, false, now());
      else if (!w->control) lost_.add();
      pool_.release(w);
      continue;
    }
    if (r.kind == WireKind::kCc && fc_to_core_) {  // behind the frames that came before it
      deliver_.push(w);
      continue;
    }
    if (r.kind != WireKind::kData) {
      if (r.llr) {
        if (r.llr->kind == LlrControl::kInit) rx.on_control(*r.llr, now());
        else tx.on_control(*r.llr, now());
      }
      if (r.fc && fc_to_core_) fc_inbox_.push(*r.fc);
      pool_.release(w);
      continue;
    }
    take_data(rx, w, r.seq);
  }
}

template <class Rx>
inline void Mac::take_data(Rx& rx, Packet* w, std::uint32_t seq) {
  if (!llr_ || rx.on_frame(seq, true, now()) == LlrReceiver::Verdict::kDeliver) {
    unwrap_data(*w);
    deliver_.push(w);
  } else {
    pool_.release(w);
  }
}

void Mac::eval() {
  if (twins_.tx || twins_.rx) [[unlikely]] return eval_twins();
  step(tx_model_, rx_model_);
}

void Mac::eval_twins() { step(*tx_, *rx_); }

template <class Tx, class Rx>
inline void Mac::step(Tx& tx, Rx& rx) {
  llr_control_sent_ = false;
  receive(tx, rx);
  if (llr_ && tick_due(tx, now())) tx.tick(now());
  transmit(tx, rx);
  if (std::vector<Packet*>& released = tx.released(); !released.empty()) {  // ACKs come every few frames
    for (Packet* k : released) pool_.release_aside(k);
    released.clear();
  }
  if (!deliver_.empty() && deliver_.front()->control && fc_to_core_->can_push()) {
    fc_to_core_->push(*parse(deliver_.front()->payload).fc);  // a CC_Update, behind the frames it counted
    pool_.release(deliver_.front());
    deliver_.pop();
  } else if (!deliver_.empty() && !deliver_.front()->control && to_core_.can_push()) {
    Packet* f = deliver_.front();
    deliver_.pop();
    delivered_.add();
    f->advance(stages_.to_core, clock().time_of(now()));
    to_core_.push(f);
  }
  if (!fc_inbox_.empty() && fc_to_core_->can_push()) {
    fc_to_core_->push(fc_inbox_.pop());
  }
  schedule(tx, rx);
}

// What eval decides it leaves in this Mac (its LLR ends, its FIFOs): the cores around reach it
// only through channels, whose items wake it when they are ready. So it schedules itself here,
// while its lines are in the cache, and has nothing to commit.
template <class Tx, class Rx>
inline void Mac::schedule(Tx& tx, Rx& rx) {
  const Cycle next = llr_ ? std::min(tx.next_timer(), rx.next_timer()) : ~Cycle{0};
  // One timer wake-up pending at a time: an earlier one re-arms for a later deadline when it
  // comes, rather than a wake-up queued for every deadline the timers pass through.
  if (const Cycle at = std::max(next, now() + 1); next != ~Cycle{0} && (timer_wake_ <= now() || at < timer_wake_)) {
    wake_at(at);
    timer_wake_ = at;
  }
  const bool more = !waiting_for_line_ && (tx.state() == LlrTxState::kReplay ||
                                           (from_core_.ready_by(now() + 1) && !llr_full_) ||
                                           (fc_from_core_ && fc_from_core_->ready_by(now() + 1)) ||
                                           (cc_waiting_ && cc_may_go(tx.kept())));
  set_busy((llr_control_sent_ && control_behind(tx, rx, now() + 1)) || !deliver_.empty() || !fc_inbox_.empty() || more);
}

void Mac::probe(Waves& waves) const {
  if (llr_) {
    tx_->probe(waves, name() + ".llr_tx");
    rx_->probe(waves, name() + ".llr_rx");
  }
  waves.probe(name() + ".delivered", 32, [this] { return delivered(); });
}

bool Mac::idle() const {
  return tx_->kept() == 0 && deliver_.empty() && fc_inbox_.empty() && !cc_waiting_ && !from_core_.in_flight() &&
         !from_line_.in_flight();
}

}  // namespace xy::link
