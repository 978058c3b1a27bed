#include "hw/link/serial_line.hpp"

#include <algorithm>

#include "hw/link/crc32.hpp"
#include "hw/link/wire.hpp"

namespace xy::link {

SerialLine::SerialLine(std::string name, std::uint32_t bytes_per_cycle, Cycle latency, Cycle control_delay,
                       const LineFaults& faults, Rng rng, Channel<Packet*>& in, Channel<Packet*>& out,
                       PacketPool& pool, Stats& stats)
    : Core(std::move(name)), width_(bytes_per_cycle), latency_(latency), control_delay_(control_delay),
      faults_(faults), rng_(rng), in_(in), out_(out), pool_(pool),
      corrupted_(stats.counter(this->name() + ".corrupted_frames", "frames", "data frames the line corrupted")),
      lost_frames_(stats.counter(this->name() + ".lost_frames", "frames", "data frames the line lost")),
      lost_controls_(stats.counter(this->name() + ".lost_control_frames", "frames",
                                   "control frames (LLR, CBFC, PFC) the line lost")),
      dark_(stats.counter(this->name() + ".dark_items", "items", "items lost to a dark line (link flap)")) {}

bool SerialLine::corrupt() {
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

// The Ethernet frame a data wire frame carries: its bytes after the LLR header, and an FCS over
// them as sent; the flipped bit, if any, flipped after.
void SerialLine::capture(const Packet& w, std::int64_t flipped_bit) {
  scratch_.assign(w.payload.begin() + kDataHeaderBytes, w.payload.end() - kFcsBytes);
  append_fcs(scratch_);
  if (flipped_bit >= 0) {
    const std::int64_t bit = flipped_bit - 8 * std::int64_t{kDataHeaderBytes};
    scratch_[bit / 8] ^= static_cast<std::uint8_t>(1u << (bit % 8));
  }
  pcap_->write(clock().time_of(now()), scratch_.data(), scratch_.size());
}

void SerialLine::send(Packet* w) {
  const std::uint64_t size = w->bytes_now().size();  // it reads and flips them
  const auto kind = static_cast<WireKind>(w->payload.at(0));
  const bool data = kind == WireKind::kData;
  const bool dark = now() >= faults_.dark_from && now() < faults_.dark_until;
  std::int64_t flipped = -1;
  bool lost = false;
  if (data) {
    const std::uint32_t seq = w->payload[1] | (w->payload[2] << 8) | (w->payload[3] << 16);
    const bool first_sending = seq == next_new_seq_;
    if (first_sending) next_new_seq_ = (seq + 1) & 0xFFFFFF;
    while (!first_sending && !corrupted_sends_.empty() && corrupted_sends_.front().first == seq) {
      recovery_sum_ += now() - corrupted_sends_.front().second;
      ++recoveries_;
      corrupted_sends_.pop_front();
    }
    if (corrupt()) {  // one bit of the Ethernet frame's bytes, not of the header or the FCS
      flipped = 8 * std::int64_t{kDataHeaderBytes} +
                static_cast<std::int64_t>(rng_.below((size - kDataHeaderBytes - kFcsBytes) * 8));
      corrupted_.add();
      if (first_sending) corrupted_sends_.emplace_back(seq, now());
    }
    lost = faults_.frame_loss > 0 && rng_.chance(faults_.frame_loss);
    if (pcap_ && !dark) capture(*w, flipped);
    if (flipped >= 0) w->payload[flipped / 8] ^= static_cast<std::uint8_t>(1u << (flipped % 8));
  } else {
    lost = faults_.control_loss > 0 && rng_.chance(faults_.control_loss);
  }
  const std::uint64_t cost = kind == WireKind::kLlr ? size : size + kPreambleGapBytes;
  const std::uint64_t start = std::max<std::uint64_t>(position_, now() * width_);
  position_ = start + cost;
  bytes_sent_ += cost;
  const Cycle arrival = (position_ - 1) / width_ + latency_;
  if (data) {
    if (!sent_a_frame_) {
      sent_a_frame_ = true;
      first_frame_start_ = start;
      control_bytes_ = 0;
    }
    last_frame_end_ = position_;
    frame_bytes_ += size - kDataHeaderBytes;
    frame_line_bytes_ += cost;
    control_bytes_at_last_frame_ = control_bytes_;
  } else {
    control_bytes_ += cost;
  }
  if (dark || lost) {
    if (dark) dark_.add();
    if (data) ++frames_lost_;
    if (!dark) (data ? lost_frames_ : lost_controls_).add();
    pool_.release(w);
    return;
  }
  if (!data && control_delay_) delayed_.push_back({arrival + control_delay_, w});
  else flying_.push_back({arrival, w});
}

void SerialLine::eval() {
  // One arrival a cycle into `out`, the earliest first.
  std::deque<Flying>* next = nullptr;
  for (auto* q : {&flying_, &delayed_})
    if (!q->empty() && q->front().arrival <= now() && (!next || q->front().arrival < next->front().arrival)) next = q;
  if (next && out_.can_push()) {
    out_.push(next->front().item);
    next->pop_front();
  }
  while (in_.can_pop() && position_ < (now() + 1) * width_) send(in_.pop());
}

void SerialLine::commit() {
  Cycle wake = ~Cycle{0};
  for (const auto* q : {&flying_, &delayed_})
    if (!q->empty()) wake = std::min(wake, q->front().arrival);
  if (in_.ready_by(now() + 1)) wake = std::min<Cycle>(wake, position_ / width_);  // when the line has room
  if (wake != ~Cycle{0}) wake_at(std::max(wake, now() + 1));
}

SerialLine::Window SerialLine::busy_window() const {
  return {last_frame_end_ - first_frame_start_, frame_bytes_, frame_line_bytes_, control_bytes_at_last_frame_};
}

}  // namespace xy::link
