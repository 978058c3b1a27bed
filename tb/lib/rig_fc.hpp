// The flow control of a rig's link into a switch port: a link::PortFc at each end, as on a
// composed port, with their messages on a control path of fixed latency beside the data (no
// MAC or PHY: it takes no data bandwidth, and a CC_Update on it may overtake frames it counted,
// so the receiving end waits for them).
#pragma once
#include <memory>
#include <string>

#include "hw/link/port_fc.hpp"
#include "kernel/channel.hpp"

namespace xy {

class RigFcLink {
 public:
  // `name`: the link; its ends are `name`.tx and `name`.rx. `latency`: of the control path, in
  // cycles of `clock`, each way.
  RigFcLink(const std::string& name, link::FcMode mode, const link::CbfcConfig& cbfc, const link::PfcConfig& pfc,
            Clock& clock, Cycle latency, Stats& stats, link::CreditRelease release = link::CreditRelease::kDeparture)
      : down_(name + ".cc", clock, ChannelSpec{latency}), up_(name + ".cf", clock, ChannelSpec{latency}),
        tx_(name + ".tx", mode, cbfc, pfc, clock, stats, down_, up_, end(release, true)),
        rx_(name + ".rx", mode, cbfc, pfc, clock, stats, up_, down_, end(release, false)) {
    clock.attach(tx_);
    clock.attach(rx_);
    down_.connect(&tx_, &rx_);
    up_.connect(&rx_, &tx_);
  }
  // The core feeding the link, which the sending end wakes when credit returns or a pause ends.
  void wake_feeder(Core* feeder) { tx_.set_upstream(feeder); }
  link::PortFc& sender() { return tx_; }  // the sending end, which the feeding core asks
  const link::PortFc& sender() const { return tx_; }
  link::PortFc& receiver() { return rx_; }  // the ingress monitor of the switch port it feeds
  const link::PortFc& receiver() const { return rx_; }
  // "" unless the receiving end's buffer overflowed.
  std::string overflow() const { return rx_.overflow(); }

 private:
  static link::PortFcOptions end(link::CreditRelease release, bool sending) {
    link::PortFcOptions o;
    o.release = release;
    o.cc_may_overtake_frames = true;
    o.sends = sending;
    o.receives = !sending;
    return o;
  }
  Channel<link::FcMessage> down_, up_;
  link::PortFc tx_, rx_;
};

}  // namespace xy
