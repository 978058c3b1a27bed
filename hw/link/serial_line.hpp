// SerialLine: one direction of a point-to-point link at byte granularity.
//
// Cycle contract: items are sent back to back, `bytes_per_cycle` bytes per cycle, several small
// items (control ordered sets) may share a cycle; an item whose last byte leaves in cycle e
// arrives at the far end at e + latency. An item may start in cycle `now` while the line has
// room left in it. Nothing is lost here; faults are the sender's decision (it marks items).
#pragma once
#include <cstdint>

#include "kernel/clock.hpp"
#include "kernel/ring.hpp"

namespace xy::link {

template <class T>
class SerialLine {
 public:
  SerialLine(Clock& clock, std::uint32_t bytes_per_cycle, Cycle latency)
      : clock_(clock), width_(bytes_per_cycle), latency_(latency) {}
  void connect(Core* receiver) { receiver_ = receiver; }

  bool has_room() const { return position_ < (clock_.now() + 1) * width_; }
  // Sends `item` of `bytes` line bytes (with preamble, FCS and gap); returns its arrival cycle.
  Cycle send(T item, std::uint64_t bytes) {
    position_ = std::max<std::uint64_t>(position_, clock_.now() * width_) + bytes;
    const Cycle arrival = (position_ - 1) / width_ + latency_;
    items_.push({arrival, std::move(item)});
    bytes_sent_ += bytes;
    if (receiver_) receiver_->wake_at(arrival);
    return arrival;
  }
  bool can_receive() const { return !items_.empty() && items_.front().arrival <= clock_.now(); }
  T receive() { return items_.pop().item; }
  bool empty() const { return items_.empty(); }
  bool arriving_by(Cycle c) const { return !items_.empty() && items_.front().arrival <= c; }

  std::uint64_t bytes_sent() const { return bytes_sent_; }
  std::uint64_t position() const { return position_; }  // line byte where the last item ended
  std::uint32_t bytes_per_cycle() const { return width_; }
  Cycle latency() const { return latency_; }

 private:
  struct Slot {
    Cycle arrival;
    T item;
  };
  Clock& clock_;
  std::uint64_t width_;
  Cycle latency_;
  Core* receiver_ = nullptr;
  std::uint64_t position_ = 0;  // bytes sent since cycle 0, as a line position
  std::uint64_t bytes_sent_ = 0;
  Ring<Slot> items_;
};

}  // namespace xy::link
