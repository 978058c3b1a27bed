// A Lingyun port and the link between two of them: every frame crosses the MAC (real CRC-32 FCS)
// and LLR of the sending port, the PCS, FEC encoder, SerDes lanes with their error channel, FEC
// decoder (hw/phy/phy.hpp) and the MAC and LLR of the receiving port; link flow control (CBFC per
// VC, PFC, or none) gates the sender and its messages cross the same PHY as the data.
//
// Cycle contract. Three clock domains meet at a port: the core that feeds it (a switch core,
// an endpoint), the PHY datapath (lane_gbps / 40) where MAC, LLR and PHY run, and the core at
// the far end; frames and flow-control messages cross between them through async FIFOs
// (xy::Channel, two synchroniser stages). Each PHY cycle the MAC TX hands the PHY at most one
// item: first a due LLR control set (NACK, ACK, INIT), then a flow-control message (a CBFC
// CC_Update only once every frame it counted is ahead of it for good: taken and, with LLR,
// acknowledged or flushed), then a frame being replayed, then a new frame (when LLR and the PHY
// have room). The MAC RX takes what the
// PHY delivers, checks the FCS (a frame an uncorrectable codeword carried, or a miscorrected one,
// fails it), passes control messages on and data frames through LLR, and hands data frames to
// its core in order, one per cycle: store-and-forward at the MAC (a frame is delivered after its
// last codeword is decoded and its FCS checked). Without LLR a frame with a bad FCS is lost
// (counted); the layer above must recover it.
// The flow control of one side (PortFc) runs on that side's core clock: it is the egress gate
// of the core feeding the port (credits or pause, and room in the FIFO to the MAC) and the
// ingress monitor of the core the port feeds. Exact: wire bytes of every frame and message, FCS,
// LLR and CBFC/PFC state machines, codeword timing. Abstracted: see wire.hpp (LLR header), the
// PCS (one idle block between frames), and all switches of a fabric share one core clock.
#pragma once
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sys/lingyun/wire.hpp"
#include "hw/link/cbfc.hpp"
#include "hw/link/llr.hpp"
#include "hw/link/overflow.hpp"
#include "hw/link/pfc.hpp"
#include "hw/phy/phy.hpp"
#include "hw/switch/switch.hpp"
#include "kernel/channel.hpp"
#include "kernel/clock.hpp"
#include "kernel/config.hpp"
#include "kernel/packet.hpp"
#include "kernel/stats.hpp"

namespace xy::lingyun {

// What every port of a system is made of (one declaration: port.*, llr.*, cbfc.*, pfc.*).
struct PortParams {
  phy::PhyParams phy;
  bool llr = true;
  link::LlrParams llr_params;  // llr_params.config: this link's once for_link() has sized its replay buffer
  // llr.impl=rtl: every port with LLR runs the Verilated twins (rtl/link/llr_twins.hpp) in place
  // of link::LlrTx and LlrRx; cbfc.impl=rtl: every CBFC port's sending end is the twin of
  // link::CbfcSender. Implementation choices: results must not change.
  bool llr_rtl() const { return llr_params.rtl; }
  link::FcMode fc = link::FcMode::kCbfc;
  link::CbfcParams cbfc;  // cbfc.config: this link's once for_link() has sized its buffers
  link::PfcConfig pfc;
  std::uint32_t max_frame_bytes = 9216;
  std::uint32_t fifo_frames = 4;  // async FIFO between a core and its MAC, each way

  // `vcs`: the traffic classes the cores use (CBFC gives each its buffer).
  static PortParams declare(Config& c, int vcs);
  // MAC data rate: lanes x lane rate less the FEC and transcoding overhead (100 Gb/s a lane).
  double line_gbps() const { return phy.lanes * phy.lane_gbps * 514 / 544 * 256 / 257; }
  // Zero-load time of a frame of `bytes` from MAC to MAC over `cable_m`, and the loop an ACK or
  // a credit takes; the LLR replay buffer that covers it (line rate x loop + 2 largest frames).
  Time one_way(double cable_m, std::uint32_t bytes) const;
  Time loop(double cable_m) const;
  std::uint64_t replay_buffer_bytes(double cable_m) const;
  // Why a link of `cable_m` cannot be built with these ports (LLR replay buffer or CBFC credits
  // short of the loop, or a replay buffer beyond what the LLR twins keep), or "".
  std::string reach_problem(double cable_m) const;
  // These parameters for one link: its cable, and its LLR replay buffer and CBFC buffers sized
  // by the rule (line rate x loop time, and a largest frame or two).
  PortParams for_link(double cable_m) const;
};

// The flow control of one side of a link, on that side's core clock: the sending end of the
// outgoing direction and the receiving end of the incoming one.
class PortFc : public Core, public sw::EgressGate, public sw::IngressMonitor {
 public:
  // `core`: the clock this PortFc runs on (the CBFC sender's twin keeps its time). `to_mac`:
  // frames to this side's MAC (the gate keeps it from overflowing); messages leave on
  // `messages_out` and arrive on `messages_in`.
  PortFc(std::string name, const PortParams& params, const Clock& core, Stats& stats, const Channel<Packet*>& to_mac,
         Channel<FcMessage>& messages_out, Channel<FcMessage>& messages_in);
  void set_upstream(Core* feeder) { upstream_ = feeder; }  // woken when credits come or a pause ends

  bool can_send(const Packet& p) const override;
  void on_send(const Packet& p) override;
  void on_arrive(const Packet& p) override;
  void on_admit(std::uint32_t bytes, std::uint8_t vc) override {}
  void on_depart(std::uint32_t bytes, std::uint8_t vc) override;
  void eval() override;
  void commit() override;

  std::string overflow() const { return overflow_.report(); }  // "" unless the buffer overflowed
  // CBFC conservation against the far end's sender: credits this receiver counted in that the
  // sender never consumed (a frame counted twice), in words naming the VC; or "".
  std::string counted_beyond(const PortFc& far_sender) const;
  // Back-pressure: cycles this side's feeder had a frame of `vc` that flow control held back
  // (credits short, or paused); pauses with a non-zero time this side sent upstream.
  std::uint64_t held_cycles(int vc) const;
  std::uint64_t xoffs() const { return xoffs_.value(); }
  const link::CreditSender& cbfc_sender() const { return *cbfc_tx_; }  // the model or its twin

 private:
  link::FcMode mode_;
  std::size_t fifo_frames_;
  std::unique_ptr<link::CreditSender> cbfc_tx_;  // link::CbfcSender, or rtl::CbfcSenderTwin
  link::CbfcReceiver cbfc_rx_;
  link::PfcSender pfc_tx_;
  link::PfcReceiver pfc_rx_;
  const Channel<Packet*>& to_mac_;
  Channel<FcMessage>& out_;
  Channel<FcMessage>& in_;
  Core* upstream_ = nullptr;
  std::deque<FcMessage> outbox_;
  std::uint64_t frames_sent_ = 0;                  // frames on_send saw, for CC_Updates
  std::optional<link::CreditUpdate> arrived_cc_;   // applied in commit()
  mutable bool fifo_full_ = false;  // the feeder was refused for want of room in the FIFO
  static constexpr Cycle kNotBlocked = ~Cycle{0};
  mutable std::vector<Cycle> blocked_since_;   // per VC: refused since, or kNotBlocked
  mutable std::vector<std::uint64_t> held_vc_;
  link::OverflowLog overflow_;
  Counter &xoffs_, &cf_updates_, &cc_updates_;
  Counter& held_;  // all VCs; counted from can_send, a const query: the hold's bookkeeping is all it changes
};

// One side's MAC and LLR, on the PHY clock `phy_clock` (the LLR transmitter's twin keeps its
// time). A port without LLR keeps the C++ LLR transmitter, which only lets frames through.
class PortMac : public Core {
 public:
  PortMac(std::string name, const PortParams& params, const Clock& phy_clock, Channel<Packet*>& from_core,
          Channel<Packet*>& to_core, Channel<FcMessage>& fc_from_core, Channel<FcMessage>& fc_to_core,
          Channel<Packet*>& to_phy, Channel<Packet*>& from_phy, PacketPool& pool, Stats& stats);
  void eval() override;
  void commit() override;

  const link::LlrTransmitter& llr_tx() const { return *tx_; }  // the models or their twins
  const link::LlrReceiver& llr_rx() const { return *rx_; }
  std::uint64_t frames_lost() const { return lost_.value(); }  // bad FCS without LLR

 private:
  void receive();
  bool transmit();  // true if it handed the PHY an item
  Packet* control_frame();  // a frame of the message encoded in scratch_
  Packet* copy_of(const Packet* kept);
  bool cc_may_go() const;

  const PortParams& p_;
  std::unique_ptr<link::LlrTransmitter> tx_;
  std::unique_ptr<link::LlrReceiver> rx_;
  Channel<Packet*>& from_core_;
  Channel<Packet*>& to_core_;
  Channel<FcMessage>& fc_from_core_;
  Channel<FcMessage>& fc_to_core_;
  Channel<Packet*>& to_phy_;
  Channel<Packet*>& from_phy_;
  PacketPool& pool_;
  std::deque<Packet*> deliver_;       // data frames for the core and CC_Updates for its PortFc, in order
  std::optional<FcMessage> held_cc_;  // a CC_Update waiting for the frames it counted
  std::uint64_t accepted_ = 0;        // data frames taken from the core
  std::deque<FcMessage> fc_inbox_;    // received messages for the core
  std::vector<std::uint8_t> scratch_;
  Counter &sent_, &replayed_, &controls_, &bad_data_, &bad_control_, &lost_, &delivered_;
};

// A link between side 0 and side 1: two PHY directions, a MAC and a PortFc at each end. Each
// side's core pushes frames into tx(side) (after asking fc(side)) and pops them from rx(side).
class PortLink {
 public:
  // `side_names`: the two ports, e.g. top.leaf0.port3 and top.e0.port0.
  PortLink(const std::string (&side_names)[2], const PortParams& params, double cable_m, Clock& phy_clock,
           Clock& core0, Clock& core1, Stats& stats, std::uint64_t seed, PacketPool& pool);
  ~PortLink();
  // The cores at each end: who pushes into tx(side) (woken when room or credits return) and
  // who pops rx(side).
  void attach(int side, Core* feeder, Core* taker);

  Channel<Packet*>& tx(int side);
  Channel<Packet*>& rx(int side);
  PortFc& fc(int side);
  const PortFc& fc(int side) const;
  PortMac& mac(int side);
  const PortMac& mac(int side) const;
  phy::PhyLink& phy(int from_side);  // the direction from this side
  const phy::PhyLink& phy(int from_side) const;
  const std::string& name() const { return name_; }
  const std::string& side_name(int side) const { return side_names_[side]; }
  const PortParams& params() const { return p_; }

 private:
  std::string name_, side_names_[2];
  PortParams p_;
  struct Side;
  std::unique_ptr<Side> sides_[2];
  std::unique_ptr<Channel<Packet*>> to_phy_[2], from_phy_[2];
  std::unique_ptr<phy::PhyLink> phy_[2];
};

}  // namespace xy::lingyun
