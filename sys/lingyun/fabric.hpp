// A fabric of Lingyun ASICs built from a topology: a switch core per switch node, a composed
// PortLink per cable, routes from the graph (ECMP on a flow hash, or per-packet spraying), and
// endpoint ports left for the testbench's endpoints (generic hosts, OLink GPUs) to attach to.
//
// Cycle contract: that of its parts (hw/switch/switch.hpp, port.hpp). All switch cores share one
// clock, all ports one PHY clock; endpoints bring their own. Names follow the hierarchy:
// top.<switch>.port<p> and top.<endpoint>.port<k>, each with .mac, .fc, .phy (its transmit
// direction) below.
#pragma once
#include <array>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hw/link/attachment.hpp"
#include "sys/lingyun/port.hpp"
#include "sys/lingyun/topology.hpp"
#include "hw/switch/switch.hpp"
#include "kernel/waves.hpp"

namespace xy::lingyun {

// Fixes the switch.* keys a fabric of composed ports sets itself, naming `scenario` as the owner:
// switch.ports (the topology gives each switch its ports) and switch.lat.rx_mac and tx_mac (the
// composed ports model the PHY and MAC).
void fix_switch_keys_of_composed_ports(Config& c, const std::string& scenario);

// One link's ports: the common ones (port.*) with what the topology sets for that link.
PortParams link_ports(const PortParams& common, const Topology::Link& link);

class Fabric {
 public:
  Fabric(const std::string& prefix, const Topology& topology, const sw::SwitchParams& switch_params,
         const PortParams& port_params, Clock& core, Clock& phy, Clock& endpoint_clock, Stats& stats, std::uint64_t seed,
         PacketPool& pool, bool spray);
  ~Fabric();
  // The memory a fabric of `t` with these ports takes, estimated before it is built (held
  // against the machine's by tb/lib/memory.hpp): every link (PortLink::memory_bytes, its frames
  // in flight at `load`, a fraction of the line rate), every switch's queues, and the routes.
  static double memory_bytes(const Topology& t, const PortParams& port_params, double load);

  int endpoints() const { return static_cast<int>(endpoint_ports_.size()); }
  int ports_of(int e) const { return static_cast<int>(endpoint_ports_[e].size()); }
  // Endpoint e's port k, for the endpoint that binds to it.
  link::PortAttachment port(int e, int k);

  const Topology& topology() const { return t_; }
  const Routes& routes() const { return routes_; }
  // The port by which switch node `sw` sends a packet from endpoint src to dst whose UDP source
  // port is `entropy`, as its route decides (ECMP: the flow's hash over the shortest paths' ports).
  int route(int sw, std::uint32_t src, std::uint32_t dst, std::uint16_t entropy) const;
  const std::vector<std::unique_ptr<PortLink>>& links() const { return links_; }
  const std::vector<std::unique_ptr<sw::Switch>>& switches() const { return switches_; }
  // Offers every port's and switch's state to the waves, each block's under its own name
  // (top.leaf0.port3.mac.llr_tx.state, .phy.uncorrectable, .fc.cbfc_tx.vc0.credits,
  // top.leaf0.buffer_cells ...), and samples them on the fabric's clocks.
  void probe(Waves& waves, Clock& core, Clock& phy) const;
  // Hands every port's MAC the capture `writer_for` gives for its name (top.leaf0.port3; null:
  // none), which then writes each data frame the port sends.
  void capture(const std::function<link::PcapWriter*(const std::string& port)>& writer_for);
  // One line: switches, endpoints, links, ports, bisection bandwidth, longest path.
  std::string summary() const;
  // The fabric as built, for results.json's `fabrics` (docs/results.md): its stats prefix, its
  // topology's name, the nodes (an endpoint with its links, in port order), and each link's
  // ends, cable, where it was declared, the FEC, LLR and flow control its ports run, and the stats
  // names of its two ports.
  const nlohmann::json& description() const { return description_; }
  // "" unless a flow-control buffer overflowed or a CBFC receiver counted credits its sender never
  // consumed (the first one found).
  std::string overflow() const;
  // When traffic stops moving: the links LLR cannot bring up or keep up (TX in INIT or FLUSH),
  // with their codeword failure ratio; else a port whose feeder flow control holds back, and
  // where its credits are (frames the far end never received, with what the hop lost and the
  // CC_Updates that would return them; freed but not reported; in the far buffer); "" when
  // neither.
  std::string stall() const;
  // A cycle of held senders, each waiting for the next: a sender held on VC v (no credits, or
  // paused) whose packets, in the switch it feeds, wait for an output held on v, and so on back
  // to itself. "" when there is none. A cycle never drains by itself: a deadlock, named by its
  // ports ("top.s0.port1 VC 0 -> top.s1.port1 VC 0 -> ... -> top.s0.port1 VC 0").
  std::string deadlock() const;
  // At `now` (simulated): the first link that can never carry traffic, or "". Asked after every
  // slice; it keeps what each port had delivered when last asked.
  //  - LLR cannot bring it up: a TX still in its first INIT (never answered) over
  //    llr.replay_limit + 1 replay timers after its PHYs locked (a flap's dark time and relock not
  //    counted), while at least half of the codewords either way fail. A healthy link answers the
  //    first INIT (the replay timer is above the loop), and LLR gives up on a frame after as many
  //    unanswered tries.
  //  - Else any link, with or without LLR: no frame came through a direction over its last
  //    kDeadWindowCodewords codewords, at least half of them uncorrectable (a configured flap's
  //    dark time and relock not counted). 802.3's RS-FEC declares a line of such a symbol error
  //    ratio failed over a window of this many codewords (hi_ser).
  std::string link_fault(Time now);
  // Whether a configured flap keeps a link dark (or relocking) at `now`.
  bool flapping(Time now) const;
  // Whether every link's PHYs have locked at `now` (port.cdr_lock_us), outside a configured
  // flap. (LLR's INIT exchange follows, with the first frames.)
  bool up(Time now) const;
  static constexpr std::uint64_t kDeadWindowCodewords = 8192;
  // The frames lost on the links, per port (LLR's flushes, bad FCS without LLR), with the link
  // flap configured, if any; "" when none was lost.
  std::string losses() const;
  std::uint64_t drops() const;  // packets the switches dropped, all reasons
  void recycle_drops(PacketPool& pool);
  // Frames lost on hops without LLR (bad FCS) and frames LLR flushed, over every port.
  std::uint64_t frames_lost_on_links() const;

 private:
  struct End {
    PortLink* link;
    int side;
  };
  Topology t_;
  Routes routes_;
  std::string prefix_;
  double port_gbps_;
  std::vector<std::unique_ptr<PortLink>> links_;
  std::vector<std::unique_ptr<sw::Switch>> switches_;
  std::vector<std::vector<End>> endpoint_ports_;
  nlohmann::json description_;
  static std::string cannot_initialise(const PortLink& l, Time now);
  std::string credits_held() const;  // the held port stall() names once every link is up
  // Per link and direction: the receiver's frames delivered and the line's codewords and
  // uncorrectable codewords, when link_fault() last saw a frame delivered.
  struct LastDelivery {
    std::uint64_t delivered = 0, codewords = 0, uncorrectable = 0;
  };
  std::vector<std::array<LastDelivery, 2>> last_delivery_;
};

}  // namespace xy::lingyun
