// Flow control on one link into a switch port: the upstream side (a switch egress or a host)
// asks it before sending, the downstream switch's ingress reports arrivals and departures, and
// the control messages between them (CBFC CF_Updates and CC_Updates, PFC pause frames) take
// the link's latency. One object per link, driven as a core on the link's clock.
//
// Cycle contract: a control message produced in cycle t takes effect at the other end in cycle
// t + latency; a pause holds from then for its quanta (converted to cycles, rounded up). The
// upstream core is woken when a credit update or an XON arrives or a pause runs out.
// A CC_Update travels in order with the data frames of the link: it takes effect no earlier than
// the arrival of the last frame it counts (a switch egress counts a frame when it schedules it,
// well before its first byte is on the wire; the link here loses no frames).
// Abstracted: control messages do not take data bandwidth on the reverse link.
//
// Back-pressure as the upstream sender feels it, per VC (the same measure for CBFC and PFC):
// a hold starts at the first can_send() this link refuses for a VC (CBFC: fewer credits
// available than the frame costs; PFC: its priority paused) and ends at the on_send() of that
// VC's next frame. held_cycles() adds up those holds; it is exact as long as the upstream asks
// again whenever it could send (a switch egress asks every cycle its line is free, a host
// whenever this link wakes it). With no flow control nothing is ever refused.
#pragma once
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "hw/link/cbfc.hpp"
#include "hw/link/flow_control.hpp"
#include "hw/link/overflow.hpp"
#include "hw/link/pfc.hpp"
#include "hw/switch/switch.hpp"
#include "kernel/stats.hpp"

namespace xy::sw {

// When a CBFC receiver frees a packet's credits: once the switch has taken it into its shared
// buffer (credits guard a landing area), or once it has left the switch (credits guard its
// whole stay). PFC always counts a packet from arrival to departure, as port buffer usage.
enum class CreditRelease { kAdmission, kDeparture };

class PortFlowControl : public Core, public EgressGate, public IngressMonitor {
 public:
  PortFlowControl(std::string name, link::FcMode mode, const link::CbfcConfig& cbfc, const link::PfcConfig& pfc, Time period,
                  Cycle latency, Stats& stats, CreditRelease release = CreditRelease::kDeparture);
  void set_upstream(Core* core) { upstream_ = core; }

  bool can_send(const Packet& p) const override;
  void on_send(const Packet& p) override;
  void on_arrive(const Packet& p) override;
  void on_admit(std::uint32_t bytes, std::uint8_t vc) override;
  void on_depart(std::uint32_t bytes, std::uint8_t vc) override;

  void eval() override;
  void commit() override;
  std::uint64_t xoffs() const { return xoffs_.value(); }
  // Cycles the upstream had a frame of `vc` held by this link's flow control, up to now (a hold
  // still open counts up to now).
  std::uint64_t held_cycles(int vc) const;
  int vcs() const { return static_cast<int>(held_since_.size()); }
  std::string overflow() const { return overflow_.report(); }  // "" unless the buffer overflowed

 private:
  struct InFlight {
    Cycle at;  // when it reaches the other end
    link::FcMessage message;
  };
  link::FcMode mode_;
  CreditRelease release_;
  link::CbfcSender cbfc_tx_;
  link::CbfcReceiver cbfc_rx_;
  link::PfcSender pfc_tx_;
  link::PfcReceiver pfc_rx_;
  Cycle latency_;
  Core* upstream_ = nullptr;
  std::deque<InFlight> in_flight_;     // CF_Updates and pauses, upstream
  std::deque<InFlight> cc_in_flight_;  // CC_Updates, downstream behind the frames they count
  std::uint64_t frames_sent_ = 0, frames_arrived_ = 0;
  link::OverflowLog overflow_;
  // Per VC: where the open hold began (~0: none), cycles of closed holds. Changed by can_send(),
  // a query, because a refusal is the event that starts a hold.
  mutable std::vector<Cycle> held_since_;
  std::vector<std::uint64_t> held_closed_;
  Counter &xoffs_, &cf_updates_, &cc_updates_;
};

}  // namespace xy::sw
