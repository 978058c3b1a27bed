// A Lingyun port and the link between two of them: every frame crosses the MAC (real CRC-32 FCS)
// and LLR of the sending port, the PCS, FEC encoder, SerDes lanes with their error channel, FEC
// decoder (hw/phy/phy.hpp) and the MAC and LLR of the receiving port; link flow control (CBFC per
// VC, PFC, or none) gates the sender and its messages cross the same PHY as the data.
//
// Cycle contract. Three clock domains meet at a port: the core that feeds it (a switch core,
// an endpoint), the PHY datapath (lane_gbps / 40) where the MAC, LLR and PHY run, and the core at
// the far end; frames and flow-control messages cross between them through async FIFOs
// (xy::Channel, two synchroniser stages). The MAC and LLR of each side are a link::Mac
// (hw/link/mac.hpp) over the PHY as its line: store-and-forward, one item a PHY cycle, every
// item real bytes with a real FCS (hw/link/wire.hpp); a frame an uncorrectable or miscorrected
// codeword carried fails its FCS. The flow control of each side is a link::PortFc
// (hw/link/port_fc.hpp) on that side's core clock: the egress gate of the core feeding the port
// (credits or pause, and room in the FIFO to the MAC) and the ingress monitor of the core the
// port feeds. Exact: wire bytes of every frame and message, FCS, LLR and CBFC/PFC state
// machines, codeword timing. Abstracted: the LLR header (hw/link/wire.hpp), the PCS (one idle
// block between frames), and all switches of a fabric share one core clock.
#pragma once
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hw/link/cbfc.hpp"
#include "hw/link/llr.hpp"
#include "hw/link/mac.hpp"
#include "hw/link/pfc.hpp"
#include "hw/link/port_fc.hpp"
#include "hw/otn/line.hpp"
#include "hw/otn/otu4.hpp"
#include "hw/phy/phy.hpp"
#include "hw/switch/switch.hpp"
#include "kernel/channel.hpp"
#include "kernel/clock.hpp"
#include "kernel/config.hpp"
#include "kernel/packet.hpp"
#include "kernel/stats.hpp"
#include "sys/lingyun/stages.hpp"

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
  // A long-haul OTN line in place of the PHY (a topology's cross-site link): its channels the
  // wavelengths, its km the cable's (PortLink sets them).
  std::optional<otn::LineParams> otn;
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
  // Why a link of `cable_m` cannot be built with these ports (LLR replay buffer, CBFC credits or
  // PFC headroom short of the loop, or a replay buffer beyond what the LLR twins keep), or "".
  std::string reach_problem(double cable_m) const;
  // These parameters for one link: its cable, and its LLR replay buffer and CBFC buffers sized
  // by the rule (line rate x loop time, and a largest frame or two).
  PortParams for_link(double cable_m) const;
  // Refuses (ConfigError naming port.max_frame_bytes) traffic whose largest frame, `bytes` with
  // its headers and FCS, is larger than the ports carry; `what` says which frame that is.
  void check_frame(std::uint32_t bytes, const std::string& what) const;
};

// A link between side 0 and side 1: two PHY directions, a MAC and a PortFc at each end. Each
// side's core pushes frames into tx(side) (after asking fc(side)) and pops them from rx(side).
class PortLink {
 public:
  // `side_names`: the two ports, e.g. top.leaf0.port3 and top.e0.port0.
  PortLink(const std::string (&side_names)[2], const PortParams& params, double cable_m, Clock& phy_clock,
           Clock& core0, Clock& core1, Stats& stats, std::uint64_t seed, PacketPool& pool);
  ~PortLink();
  // The memory a link of these ports over `cable_m` takes, estimated before it is built: its
  // blocks and counters, its PHYs' codeword groups, and the frames each side keeps in flight
  // (LLR's replay buffer among them) at `load`, a fraction of the line rate.
  static double memory_bytes(const PortParams& params, double cable_m, double load);
  // The cores at each end: who pushes into tx(side) (woken when room or credits return) and
  // who pops rx(side).
  void attach(int side, Core* feeder, Core* taker);

  Channel<Packet*>& tx(int side);
  Channel<Packet*>& rx(int side);
  link::PortFc& fc(int side);
  const link::PortFc& fc(int side) const;
  link::Mac& mac(int side);
  const link::Mac& mac(int side) const;
  // The line of the direction from this side: a PHY, or on a cross-site link an OTN line.
  bool otn() const { return p_.otn.has_value(); }
  phy::PhyLink& phy(int from_side);  // not on an OTN link
  const phy::PhyLink& phy(int from_side) const;
  const otn::Line& otn_line(int from_side) const;  // on an OTN link only
  // Either line's FEC codewords: received, sent (one OTU4 frame is 64 a wavelength), uncorrectable.
  std::uint64_t codewords(int from_side) const;
  std::uint64_t codewords_sent(int from_side) const;
  std::uint64_t uncorrectable(int from_side) const;
  // A frame's least time from MAC to MAC but its serialisation: the PHY's pipelines, cable and
  // codeword group, or the OTN line's fibre and a frame period or two of mapping.
  Time fixed_latency() const;
  const std::string& name() const { return name_; }
  const std::string& side_name(int side) const { return side_names_[side]; }
  const PortParams& params() const { return p_; }
  // Offers each side's MAC (with its LLR ends, the twins' RTL ports too), flow control and
  // transmit PHY to the waves, under their names (top.leaf0.port3.mac.llr_tx.state, ...).
  void probe(Waves& waves) const;

 private:
  std::string name_, side_names_[2];
  PortParams p_;
  struct Side;
  std::unique_ptr<Side> sides_[2];
  std::unique_ptr<Channel<Packet*>> to_phy_[2], from_phy_[2];
  std::unique_ptr<phy::PhyLink> phy_[2];
  std::unique_ptr<otn::Line> otn_[2];
};

}  // namespace xy::lingyun
