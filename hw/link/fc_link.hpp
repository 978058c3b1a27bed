// A flow-controlled link, one direction of data: a sender port and a receiver port joined by a
// forward line (frames, and CBFC's CC_Updates in order with them) and a reverse line (CBFC's
// CF_Updates or PFC pause frames).
//
// Cycle contract. The sender keeps a queue per VC (priority) and each cycle, while the line has
// room, sends the head frame of the next VC in round-robin order that may send: with CBFC if its
// credits cover the frame, with PFC if it is not paused, always without flow control. The
// receiver buffers what arrives (CBFC/PFC occupancy checked on every frame: an overflow is a
// failed run) and drains it to the host at `drain_bytes_per_cycle` (a slow consumer), VCs in
// round robin. Credit updates and pause frames leave as soon as the cores' timers say so.
// Faults: a data frame or an update may be lost on the line.
#pragma once
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hw/link/cbfc.hpp"
#include "hw/link/flow_control.hpp"
#include "hw/link/overflow.hpp"
#include "hw/link/pcap.hpp"
#include "hw/link/pfc.hpp"
#include "hw/link/serial_line.hpp"
#include "kernel/channel.hpp"
#include "kernel/packet.hpp"
#include "kernel/rng.hpp"
#include "kernel/stats.hpp"

namespace xy::link {

// What the line carries: a data frame or a flow-control message.
struct FcItem : FcMessage {
  Packet* frame = nullptr;
  bool lost = false;
};

struct FcFaults {
  double frame_loss = 0;   // a data frame vanishes on the line
  double update_loss = 0;  // a CF_Update, CC_Update or pause frame vanishes
};

class FcSender : public Core {
 public:
  // `credits`: the CBFC sending end to use (an RTL twin, say); null for the C++ model.
  FcSender(std::string name, FcMode fc, const CbfcConfig& cbfc, const PfcConfig& pfc, Time period,
           const FcFaults& faults, Rng rng, SerialLine<FcItem>& out, SerialLine<FcItem>& in,
           Channel<Packet*>& from_host, Stats& stats, std::unique_ptr<CreditSender> credits = nullptr);
  void eval() override;
  void commit() override;
  const CreditSender& cbfc() const { return *cbfc_; }
  bool idle() const;
  // The VCs whose head frame flow control holds back, and why (credits short, paused), or "".
  std::string held_back() const;
  void capture_to(PcapWriter* writer) { pcap_ = writer; }  // every data frame sent, with its FCS

 private:
  FcMode fc_;
  PcapWriter* pcap_ = nullptr;
  std::vector<std::uint8_t> scratch_;
  std::unique_ptr<CreditSender> cbfc_;
  PfcSender pfc_;
  FcFaults faults_;
  Rng rng_;
  SerialLine<FcItem>& out_;
  SerialLine<FcItem>& in_;
  Channel<Packet*>& from_host_;
  std::vector<std::deque<Packet*>> queues_;
  int next_vc_ = 0;
  bool held_by_flow_control_ = false;  // frames wait only for credits or a pause to end
  Counter &frames_sent_, &frames_lost_, &stall_cycles_, &cc_updates_, &updates_lost_, &stale_updates_;
};

class FcReceiver : public Core {
 public:
  FcReceiver(std::string name, FcMode fc, const CbfcConfig& cbfc, const PfcConfig& pfc, Time period,
             double drain_bytes_per_cycle, const FcFaults& faults, Rng rng, SerialLine<FcItem>& in,
             SerialLine<FcItem>& out, Channel<Packet*>& to_host, PacketPool& pool, Stats& stats);
  void eval() override;
  void commit() override;
  const CbfcReceiver& cbfc() const { return cbfc_; }
  std::uint64_t peak_occupancy_bytes(int vc) const { return peak_[vc]; }
  std::string overflow() const { return overflow_.report(); }  // "" unless a buffer overflowed
  std::uint64_t frames_lost() const { return frames_lost_total_; }  // whole run (stats restart at warm-up)
  bool idle() const;

 private:
  FcMode fc_;
  CbfcReceiver cbfc_;
  PfcReceiver pfc_;
  double drain_per_cycle_, tokens_ = 0;
  FcFaults faults_;
  Rng rng_;
  SerialLine<FcItem>& in_;
  SerialLine<FcItem>& out_;
  Channel<Packet*>& to_host_;
  PacketPool& pool_;
  std::vector<std::deque<Packet*>> queues_;
  std::vector<std::uint64_t> occupancy_, peak_;
  int next_vc_ = 0;
  OverflowLog overflow_;
  std::uint64_t frames_lost_total_ = 0;
  Counter &frames_received_, &frames_lost_, &cf_updates_, &pauses_, &updates_lost_;
};

}  // namespace xy::link
