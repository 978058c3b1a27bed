// An endpoint's end of a port: the channels that carry its frames each way and, on a
// flow-controlled port, the gate its frames pass and the monitor of its receive buffer. An
// endpoint (a generic host, an OLink NIC, a transport between them and the port) does
// everything at its port through this, so every endpoint does it the same way: asks before it
// sends, and on taking a frame reports it to the monitor (and again when its buffer has drained
// it, at once or later) and ends the frame's stages (its journey through the fabric ends here).
//
// Whoever builds the port hands these out (lingyun::Fabric::port), with how to connect an
// endpoint's core to what wakes it: arrivals, returning room and returning credits. The endpoint
// binds its core once.
#pragma once
#include <functional>
#include <string>

#include "hw/link/flow_control.hpp"
#include "kernel/channel.hpp"
#include "kernel/packet.hpp"
#include "kernel/units.hpp"

namespace xy::link {

class PortAttachment {
 public:
  PortAttachment(Channel<Packet*>& to_port, Channel<Packet*>& from_port, EgressGate* gate, IngressMonitor* monitor,
                 std::function<void(Core&)> bind)
      : to_(&to_port), from_(&from_port), gate_(gate), monitor_(monitor), bind_(std::move(bind)) {}

  void bind(Core& endpoint) const { bind_(endpoint); }

  // The port's line as the endpoint's PCS sees it (a port that says nothing: always locked).
  struct Line {
    static constexpr Time kNoChange = ~Time{0};
    std::function<bool(Time)> locked;      // at t: light and CDR lock, or dark / relocking
    std::function<Time(Time)> next_change;  // the first time after t that may change; kNoChange
  };
  void watch_line(Line line) { line_ = std::move(line); }
  bool locked(Time t) const { return !line_.locked || line_.locked(t); }
  Time next_line_change(Time t) const { return line_.next_change ? line_.next_change(t) : Line::kNoChange; }

  // May a frame of p's bytes and VC go now: room in the channel, and the gate's leave.
  bool can_send(const Packet& p) const { return to_->can_push() && (!gate_ || gate_->can_send(p)); }
  void send(Packet* p) {
    if (gate_) gate_->on_send(*p);
    to_->push(p);
  }
  bool can_receive() const { return from_->can_pop(); }
  // The channels' names: the port's own, as its builder named them.
  const std::string& to_port_name() const { return to_->name(); }
  const std::string& from_port_name() const { return from_->name(); }
  bool ready_by(Cycle c) const { return from_->ready_by(c); }  // a frame arrives by cycle c
  // The next frame, taken at `now` into a buffer that drains at once.
  Packet* receive(Time now) {
    Packet* p = receive_into_buffer(now);
    drained(p->bytes, p->vc);
    return p;
  }
  // The next frame, taken at `now` into the endpoint's buffer, where it stays (holding back the
  // port as flow control says) until the endpoint reports it drained.
  Packet* receive_into_buffer(Time now) {
    Packet* p = from_->pop();
    if (monitor_) monitor_->on_arrive(*p);
    p->advance(kNoStage, now);
    return p;
  }
  void drained(std::uint32_t bytes, std::uint8_t vc) {
    if (monitor_) monitor_->on_depart(bytes, vc);
  }
  // Whether the port holds back what the endpoint's buffer cannot take (PFC or CBFC); without,
  // a full buffer drops.
  bool lossless() const { return monitor_ && monitor_->holds_back(); }

 private:
  Channel<Packet*>* to_;
  Channel<Packet*>* from_;
  EgressGate* gate_;
  IngressMonitor* monitor_;
  std::function<void(Core&)> bind_;
  Line line_;
};

}  // namespace xy::link
