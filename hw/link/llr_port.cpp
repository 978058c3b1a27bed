#include "hw/link/llr_port.hpp"

#include <algorithm>

#include "hw/link/crc32.hpp"

namespace xy::link {

LlrPort::LlrPort(std::string name, const LlrConfig& llr, Recovery recovery, Cycle control_delay, const LineFaults& faults, Rng rng,
                 SerialLine<LineItem>& out, SerialLine<LineItem>& in, Channel<Packet*>& from_host,
                 Channel<Packet*>& to_host, PacketPool& pool, Stats& stats, LlrEnds ends)
    : Core(std::move(name)), tx_(ends.tx ? std::move(ends.tx) : std::make_unique<LlrTx>(llr)),
      rx_(ends.rx ? std::move(ends.rx) : std::make_unique<LlrRx>(llr)), recovery_(recovery),
      control_delay_(control_delay), faults_(faults), rng_(rng), out_(out), in_(in), from_host_(from_host),
      to_host_(to_host), pool_(pool),
      frames_sent_(stats.counter(this->name() + ".frames_sent", "frames", "data frames put on the line, replays included")),
      frames_replayed_(stats.counter(this->name() + ".llr.replayed_frames", "frames", "frames sent again by LLR")),
      frames_corrupted_(stats.counter(this->name() + ".line.corrupted_frames", "frames", "frames the channel corrupted")),
      frames_dark_(stats.counter(this->name() + ".line.dark_items", "items", "items lost to a dark line (link flap)")),
      controls_sent_(stats.counter(this->name() + ".llr.control_sets", "sets", "control ordered sets sent")),
      controls_lost_(stats.counter(this->name() + ".line.lost_control_sets", "sets", "control ordered sets lost")),
      bad_fcs_(stats.counter(this->name() + ".rx.bad_fcs", "frames", "frames received with a bad FCS")),
      out_of_order_(stats.counter(this->name() + ".rx.out_of_order", "frames", "frames after a gap, dropped")),
      duplicates_(stats.counter(this->name() + ".rx.duplicates", "frames", "replayed frames already delivered")),
      delivered_(stats.counter(this->name() + ".rx.delivered", "frames", "frames handed to the host")),
      payload_delivered_(stats.counter(this->name() + ".rx.delivered_bytes", "bytes", "frame bytes handed to the host")) {
  if (recovery_ == Recovery::kNone) tx_->on_control({LlrControl::kAck, 0}, 0);  // straight to ADVANCE
}

bool LlrPort::fault_frame() {
  if (burst_left_) {
    --burst_left_;
    return true;
  }
  if (faults_.burst_start > 0 && rng_.chance(faults_.burst_start)) {
    burst_left_ = faults_.burst_frames - 1;
    return true;
  }
  return faults_.frame_error > 0 && rng_.chance(faults_.frame_error);
}

void LlrPort::send_frame(Packet* frame, std::uint32_t seq, bool replay) {
  LineItem item;
  item.frame = frame;
  item.seq = seq;
  item.fcs = crc32(frame->payload.data(), frame->payload.size());
  if (fault_frame()) {
    item.flipped_bit = static_cast<std::int32_t>(rng_.below(std::uint64_t{frame->bytes} * 8));
    frames_corrupted_.add();
    if (!replay) corrupted_sends_.emplace_back(seq, now());
  }
  item.lost = now() >= faults_.dark_from && now() < faults_.dark_until;
  if (item.lost) frames_dark_.add();
  if (replay) {
    frames_replayed_.add();
    while (!corrupted_sends_.empty() && corrupted_sends_.front().first == seq) {
      recovery_sum_ += now() - corrupted_sends_.front().second;
      ++recoveries_;
      corrupted_sends_.pop_front();
    }
  }
  frames_sent_.add();
  if (pcap_ && !item.lost) {
    scratch_.assign(frame->payload.begin(), frame->payload.end());
    if (item.flipped_bit >= 0) scratch_[item.flipped_bit / 8] ^= static_cast<std::uint8_t>(1u << (item.flipped_bit % 8));
    for (int i = 0; i < 4; ++i) scratch_.push_back(static_cast<std::uint8_t>(item.fcs >> (8 * i)));
    pcap_->write(clock().time_of(now()), scratch_.data(), scratch_.size());
  }
  const std::uint64_t line_bytes = frame->bytes + kFrameOverheadBytes;
  if (!sent_a_frame_) {
    sent_a_frame_ = true;
    first_frame_start_ = std::max<std::uint64_t>(out_.position(), now() * out_.bytes_per_cycle());
    control_bytes_ = 0;
  }
  last_arrival_ = out_.send(item, line_bytes);
  last_frame_end_ = out_.position();
  frame_bytes_ += frame->bytes;
  frame_line_bytes_ += line_bytes;
  control_bytes_at_last_frame_ = control_bytes_;
}

void LlrPort::handle(const LlrControl& c) {
  if (c.kind == LlrControl::kInit) rx_->on_control(c, now());
  else tx_->on_control(c, now());
}

void LlrPort::receive() {
  while (in_.can_receive()) {
    const LineItem item = in_.receive();
    if (item.lost) continue;
    if (!item.frame) {
      if (control_delay_) delayed_.emplace_back(now() + control_delay_, item.control);
      else handle(item.control);
      continue;
    }
    // The real check: CRC-32 over the bytes as received.
    const std::uint8_t* bytes = item.frame->payload.data();
    if (item.flipped_bit >= 0) {
      scratch_.assign(item.frame->payload.begin(), item.frame->payload.end());
      scratch_[item.flipped_bit / 8] ^= static_cast<std::uint8_t>(1u << (item.flipped_bit % 8));
      bytes = scratch_.data();
    }
    const bool fcs_ok = crc32(bytes, item.frame->bytes) == item.fcs;
    if (!fcs_ok) bad_fcs_.add();
    const auto verdict = recovery_ != Recovery::kNone ? rx_->on_frame(item.seq, fcs_ok, now())
                         : fcs_ok                     ? LlrReceiver::Verdict::kDeliver
                                                      : LlrReceiver::Verdict::kBadFcs;
    switch (verdict) {
      case LlrReceiver::Verdict::kDeliver: {
        Packet* copy = pool_.acquire();
        *copy = *item.frame;
        deliver_.push_back(copy);
        break;
      }
      case LlrReceiver::Verdict::kDuplicate: duplicates_.add(); break;
      case LlrReceiver::Verdict::kOutOfOrder: out_of_order_.add(); break;
      case LlrReceiver::Verdict::kBadFcs: break;
    }
  }
}

void LlrPort::transmit() {
  while (out_.has_room()) {
    const bool recovering = recovery_ != Recovery::kNone;
    std::optional<LlrControl> control = recovering ? rx_->poll(now()) : std::nullopt;
    if (!control && recovering) control = tx_->poll_control();
    if (control) {
      LineItem item;
      item.control = *control;
      item.lost = (faults_.control_loss > 0 && rng_.chance(faults_.control_loss)) ||
                  (now() >= faults_.dark_from && now() < faults_.dark_until);
      if (item.lost) controls_lost_.add();
      controls_sent_.add();
      control_bytes_ += LlrControl::kWireBytes;
      last_arrival_ = out_.send(item, LlrControl::kWireBytes);
      continue;
    }
    if (auto replay = tx_->next_replay(now())) {
      send_frame(replay->first, replay->second, true);
      continue;
    }
    if (from_host_.can_pop() && tx_->can_accept(from_host_.peek()->bytes)) {
      Packet* frame = from_host_.pop();
      frame->injected = clock().time_of(now());
      const std::uint32_t seq = tx_->accept(frame, now());
      send_frame(frame, seq, false);
      if (recovery_ == Recovery::kNone) tx_->on_control({LlrControl::kAck, seq + 1}, now());  // nothing to keep
      continue;
    }
    break;
  }
}

void LlrPort::eval() {
  while (!retired_.empty() && retired_.front().first < now()) {
    pool_.release(retired_.front().second);
    retired_.pop_front();
  }
  receive();
  while (!delayed_.empty() && delayed_.front().first <= now()) {
    handle(delayed_.front().second);
    delayed_.pop_front();
  }
  if (recovery_ != Recovery::kNone) tx_->tick(now());
  transmit();
  for (Packet* p : tx_->released()) retired_.emplace_back(last_arrival_, p);
  tx_->released().clear();
  if (!deliver_.empty() && to_host_.can_push()) {
    Packet* copy = deliver_.front();
    deliver_.pop_front();
    delivered_.add();
    payload_delivered_.add(copy->bytes);
    to_host_.push(copy);
  }
}

void LlrPort::commit() {
  Cycle next = std::min(tx_->next_timer(), rx_->next_timer());
  if (!retired_.empty()) next = std::min(next, retired_.front().first + 1);
  if (!delayed_.empty()) next = std::min(next, delayed_.front().first);
  if (next != ~Cycle{0}) wake_at(std::max(next, now() + 1));
  const bool more_to_send = tx_->state() == LlrTxState::kReplay || from_host_.ready_by(now() + 1);
  set_busy(!deliver_.empty() || more_to_send);
}

std::uint64_t LlrPort::mean_recovery_cycles() const { return recoveries_ ? recovery_sum_ / recoveries_ : 0; }

}  // namespace xy::link

namespace xy::link {
LlrPort::Window LlrPort::busy_window() const {
  return {last_frame_end_ - first_frame_start_, frame_bytes_, frame_line_bytes_, control_bytes_at_last_frame_};
}
}  // namespace xy::link
