// Nic: the Tianyi NIC's RDMA engine on one port, or one on each plane of a multi-plane fabric, on
// the clock of the switch core it attaches to. It owns RC queue pairs (queue_pair.hpp), puts their
// packets on the line as RoCEv2 bytes (roce.hpp), takes what arrives, and runs DCQCN per QP
// (dcqcn.hpp) when it is on.
//
// Cycle contract (W = the port's bytes per cycle):
// - The line carries one frame at a time: a frame of B bytes (FCS included) holds it for
//   ceil(B / W) cycles, and the next frame may start when it is free and the port's gate
//   allows (room in the port's FIFO, CBFC credits or no PFC pause on the frame's VC).
// - What goes next, each time the line is free: a CNP owed, then replies (ACK, NAK, READ
//   responses) by QP in round robin, then requests by QP in round robin. Data (requests and
//   READ responses) goes only when its QP's rate limiter allows (DCQCN: a packet of B bytes at
//   rate R holds its QP for 8B/R): a READ's responder is its data's sender, whom CNPs slow.
// - A frame that arrives is taken the cycle it is ready (store-and-forward: after its last byte),
//   its ICRC checked (a bad one is dropped and counted), the switch's ECN mark applied to its IP
//   header, and handed to its QP, or to the rate limiter if it is a CNP; a CE-marked data packet
//   is shown to the notification point, which may owe a CNP.
// - Timers (retransmit, DCQCN) run at their deadlines, rounded up to the next cycle.
// - The host side (nic.host=pcie, hw/nic/pcie.hpp): a posted work request rings a doorbell and
//   is in the engine once its 64-byte WQE has been read, and its payload read from host memory
//   at once, as one DMA read (a READ's data when its first response is next); a packet goes
//   once its bytes have arrived (a retransmission finds them kept: not read again);
//   received payload is written to host memory (posted writes, which take the upstream
//   direction's time) and each completion is in its queue once its 64-byte CQE has been written.
//   A received frame stays in the NIC's receive buffer until its payload's write has left for
//   the host: a host slower than the line fills it, and then the port's flow control holds the
//   sender back (PFC pauses, CBFC credits withheld), or with none the NIC drops what does not
//   fit in nic.rx_buffer_kib. Abstracted: a received packet is placed at once (its write books
//   the link, not the memory); receive WQEs are in the engine at once. nic.host=ideal: none of
//   it, the host at no cost and the buffer drained at once.
// - ENCC (nic.cc=encc, encc.hpp) and IGLB: every frame ends in the 42-byte INT trailer
//   (hw/switch/telemetry.hpp), data frames asking the switches to stamp it; every request
//   packet asks for an ACK, which carries back the trailer of the newest data packet its QP
//   received (an empty one when no new data came since the last; under IGLB, unless the ACK
//   names that packet's PSN, so that the records are of the path its sender chose for it).
//   ENCC's controller sets the QP's pacing rate and a window: a request goes only while the
//   QP's unacknowledged packets times the MTU are below window_bytes(). READ responses are
//   paced, but no ACK answers them: their controller never hears.
// - Planes (a port each; ARN, taken to be failover in the NIC): each port is a line of its own as
//   above. A QP's requests go on its plane, its replies on the plane its newest request came in
//   by, a CNP on the plane of the packet that asked for it. A port whose PCS has had no lock for
//   failover.link_down is down: the held frame is dropped and its QPs move; so does a QP whose
//   packets have gone unacknowledged for failover.path_timeout since its last ACK progress or
//   move, retransmissions notwithstanding (a path that died beyond the port); with no path
//   timer (0), a QP moves when its retransmit timer fires instead of retrying on the same
//   plane. A QP moves to the next plane that is up, sends nothing for failover.switch_over, then
//   sends again everything unacknowledged there (Go-Back-N). A port that locks again is up, but
//   no QP moves back. With no plane up, the QP's own retransmit timer decides (retry exceeded).
#pragma once
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <queue>
#include <string>
#include <unordered_map>
#include <vector>

#include "hw/link/attachment.hpp"
#include "hw/nic/dcqcn.hpp"
#include "hw/nic/encc.hpp"
#include "hw/nic/pcie.hpp"
#include "hw/nic/queue_pair.hpp"
#include "kernel/clock.hpp"
#include "kernel/config.hpp"
#include "kernel/packet.hpp"
#include "kernel/rng.hpp"
#include "kernel/stats.hpp"

namespace xy::nic {

struct NicParams {
  QpConfig qp;
  bool dcqcn = true;  // rate limiters and CNPs; off: every QP at line rate
  DcqcnConfig dcqcn_config;
  bool encc = false;  // nic.cc=encc: INT trailers and an ENCC controller per QP (not with dcqcn)
  EnccConfig encc_config;
  std::uint8_t vc = 0;  // the priority (VC) of every frame
  bool spray = false;   // nic.entropy=packet: every data packet its own UDP source port
  // nic.entropy=iglb: each QP's data over `paths` UDP source ports, the least loaded of two
  // drawn at random for each packet, or each flowlet: a path's load is its busiest hop's
  // utilisation between the INT records of its two newest acknowledged packets, as ENCC
  // measures it (with its T).
  bool iglb = false;
  struct Iglb {
    int paths = 8;
    Time flowlet_gap = 0;  // 0: choose per packet; else a new choice after a pause this long
    Time age = 20 * kUs;   // a path's record older than this counts as an idle path
  } iglb_config;
  // INT trailers on every frame (hw/switch/telemetry.hpp): what ENCC and IGLB read; a
  // scenario may set it for a design that only carries them (the same bytes on the wire).
  bool telemetry = false;
  bool icrc_rtl = false;  // nic.icrc.impl=rtl: received ICRCs checked by the RTL twin (rtl/nic)
  bool pcie = false;      // nic.host=pcie: the host side through pcie_config; else at once
  PcieConfig pcie_config;
  std::uint32_t rx_buffer_bytes = 256 * 1024;  // the receive buffer on a port without link flow control
  struct Failover {  // NICs with a port on each plane
    Time link_down = 1 * kUs;      // a port whose PCS has had no lock this long is down
    Time path_timeout = 16 * kUs;  // a QP unacknowledged this long moves; 0: on its retransmit timeout
    Time switch_over = 1 * kUs;    // a QP moving sends nothing this long
  } failover;
  // What a scenario has the NICs do, which decides the keys that can matter.
  struct Uses {
    bool reads = false;    // READs are issued: nic.max_reads
    bool switched = true;  // switches between the NICs mark ECN and hash the entropy: nic.cc, nic.dcqcn.*, nic.entropy
    bool iglb = true;      // nic.entropy is the user's (or a design's): nic.iglb.*
    bool planes = false;   // NICs with a port on each plane: nic.failover.*
    bool encc = true;      // ENCC may run (nic.cc is the user's): nic.encc.*
  };
  // The nic.* parameters, each declared once: the QP's, the reorder window's, and where
  // switched, nic.cc, nic.entropy and DCQCN's constants, whose defaults are those of
  // nic.dcqcn.profile at the port's line rate.
  static NicParams declare(Config& c, double line_bps, Uses uses);
  // The longest frame a QP sends: an MTU of payload behind every header, FCS included.
  std::uint32_t largest_frame_bytes() const {
    return qp.mtu + kRoceOverheadBytes + kRethBytes + 4 + (telemetry ? sw::kTelemetryBytes : 0);
  }
};

// What the host side moves for each work request and completion: a send WQE and a CQE of 64
// bytes (ConnectX's basic sizes).
inline constexpr std::uint32_t kWqeBytes = 64, kCqeBytes = 64;

// Who is behind an endpoint id: its MAC and IPv4 address, from the id (02:00:<id> and 10.<id>).
std::array<std::uint8_t, 6> mac_of(std::uint32_t endpoint);
// The CNP a switch sends the sender of a RoCEv2 packet (IPCN, sw::Switch::set_ipcn): to its
// source endpoint, from its destination's addresses, naming its destination QP, which is the
// sender's QP too where QPs are created with one number at both ends (the systems that use it).
// Nothing for a frame that is not RoCEv2, an ACK or a CNP.
Packet* cnp_for_sender(Packet& data, PacketPool& pool);
std::uint32_t ip_of(std::uint32_t endpoint);
// A QP's UDP source port (its flow's entropy), from the QP number it sends to, as ConnectX
// derives it; `path` > 0: IGLB's other ports of the QP.
std::uint16_t flow_entropy(std::uint32_t dest_qp, std::uint32_t path = 0);

class Nic : public Core {
 public:
  // `ports`: one per plane. `icrc`: who checks received ICRCs (null: the model).
  Nic(std::string name, std::uint32_t endpoint, const NicParams& params, std::uint32_t bytes_per_cycle,
      std::vector<link::PortAttachment> ports, PacketPool& pool, Memory& memory, Stats& stats,
      std::unique_ptr<IcrcChecker> icrc = nullptr);

  // The verbs a testbench drives the NIC with.
  // A completion queue of `depth` entries; its number. A completion that finds it full is the
  // testbench's mistake (it polls too seldom): a logic_error naming the CQ, as a CQ overrun.
  std::uint32_t create_cq(std::uint32_t depth);
  // A QP numbered `qpn` here, connected to `remote_qpn` at `remote`; PSNs from `first_psn`
  // this way and `remote_first_psn` the other. Its completions go to CQ `cq` (kNoCq: kept in
  // the QP's completions() only).
  static constexpr std::uint32_t kNoCq = ~0u;
  QueuePair& create_qp(std::uint32_t qpn, std::uint32_t remote, std::uint32_t remote_qpn, std::uint32_t first_psn = 0,
                       std::uint32_t remote_first_psn = 0, std::uint32_t cq = kNoCq);
  void post_send(std::uint32_t qpn, const WorkRequest& wr);
  void post_recv(std::uint32_t qpn, std::uint64_t id, std::uint64_t addr, std::uint32_t length);
  // Up to `max` completions of CQ `cq` that are in it by now (their CQE written), oldest first.
  struct WorkCompletion {
    std::uint32_t qpn;
    Completion completion;
  };
  std::vector<WorkCompletion> poll_cq(std::uint32_t cq, std::size_t max);
  void use_plane(std::uint32_t qpn, int plane);  // where the QP's requests go (from the start: 0)
  QueuePair& qp(std::uint32_t qpn);
  const QueuePair& qp(std::uint32_t qpn) const;
  const DcqcnReactionPoint* rate_limiter(std::uint32_t qpn) const;
  const EnccController* encc(std::uint32_t qpn) const;

  void eval() override;
  void commit() override;

  // A QP's moves to another plane: how the loss was found and when (the failover), when its
  // first packet went on the new plane, and when everything it had sent before was acknowledged.
  enum class FoundBy : std::uint8_t { kLinkDown, kPathTimeout, kRetransmitTimeout };
  static constexpr Time kPending = ~Time{0};
  struct Failover {
    FoundBy by;
    int from, to;
    Time found, resumed = kPending, drained = kPending;
    std::uint32_t sent_end;  // one past the highest PSN sent when found
  };
  const std::vector<Failover>& failovers(std::uint32_t qpn) const { return flow(qpn).failovers; }
  int plane_of(std::uint32_t qpn) const { return flow(qpn).plane; }
  int planes() const { return static_cast<int>(ports_.size()); }
  bool port_up(int plane) const { return ports_[static_cast<std::size_t>(plane)].up; }

  std::uint32_t endpoint() const { return endpoint_; }
  const PcieLink* host() const { return pcie_.get(); }  // nic.host=pcie, else none
  bool idle() const;  // every QP idle, no CNP owed, nothing on the line or in the receive buffer
  std::uint64_t rx_buffer_peak_bytes() const { return rx_peak_; }
  std::uint64_t rx_dropped() const { return rx_dropped_.value(); }  // the receive buffer full
  std::uint64_t cnps_received() const { return cnps_received_.value(); }  // from NICs, and switches (IPCN)

 private:
  struct Flow {
    std::uint32_t remote;  // endpoint
    int plane = 0, reply_plane = 0;  // where requests go; replies
    Time moved_until = 0;            // a failover's switch-over
    std::vector<Failover> failovers;
    std::unique_ptr<QueuePair> qp;
    std::unique_ptr<DcqcnReactionPoint> rp;
    std::unique_ptr<DcqcnNotificationPoint> np;
    std::unique_ptr<EnccController> encc;
    std::array<std::uint8_t, sw::kTelemetryBytes> echo{};  // the newest data packet's INT trailer
    bool echo_fresh = false;                                // not yet carried back by an ACK
    std::uint32_t echo_psn = 0;                             // that packet's PSN
    struct Path {  // IGLB: a path's utilisation from its newest two records, and when
      double utilisation = 0;
      Time at = 0;
      sw::TelemetryRecords last;
    };
    std::vector<Path> paths;
    // IGLB: the path of each PSN in flight, by PSN modulo kPathsRemembered (more packets in
    // flight than that would mix them up: 16 MiB at an MTU of 4096).
    static constexpr std::size_t kPathsRemembered = 4096;
    std::vector<std::uint8_t> path_of;
    std::size_t path = 0;               // IGLB: the path of the newest data packet
    Time last_data_at = 0;
    bool sent_data = false;
    Time may_send_at = 0;  // the rate limiter's next slot
    Time data_at = 0;      // when the payload of its next data packet arrives (nic.host=pcie)
  };
  struct Posted {  // a work request whose WQE is being read
    Time at;
    std::uint32_t qpn;
    WorkRequest wr;
  };
  Flow& flow(std::uint32_t qpn) const;
  // Takes p's bytes; returns when they have left the receive buffer (now, or when the write of
  // its payload to the host has left).
  Time receive(Packet& p, std::size_t port, Time now);
  void drain(Time now);  // the receive buffer: what has left by now
  void transmit(std::size_t port, Time now);
  void watch_planes(Time now);  // ports that lost their lock, QPs whose path died: failovers
  void port_down(std::size_t port, Time now);
  void fail_over(Flow& f, FoundBy by, Time now);
  int plane_up_besides(int plane) const;  // the next plane up after `plane`; -1: none
  // When f's plane counts as dead: failover.path_timeout after its last ACK progress or failover.
  Time path_deadline(const Flow& f) const;
  // A frame of flow f (none for a CNP) to `dst` of header `h` with its payload from memory (o),
  // or a CNP's (none).
  Packet* frame(Flow* f, std::uint32_t dst, const RoceHeader& h, const Outgoing* o, Time now);
  void send(std::size_t port, Packet* p);  // on the line, or held for the port's gate
  // Whether the payload of f's next data packet is at the NIC (nic.host=pcie); a READ's data is
  // read from host memory when its first response is next.
  bool payload_here(Flow& f, Time now);
  void pace(Flow& f, const Packet& p, Time now);  // data sent: the rate limiter's next slot
  bool window_open(const Flow& f) const;  // ENCC's window lets a request go
  void add_telemetry(Flow& f, Packet& p, const RoceHeader& h);  // the frame's INT trailer, empty or echoed
  std::uint16_t entropy(Flow* f, const RoceHeader& h, Time now);  // the UDP source port: its path
  std::size_t choose_path(Flow& f, Time now);                     // IGLB
  void measure_path(Flow::Path& p, const sw::TelemetryRecords& records, Time now);  // IGLB

  std::uint32_t endpoint_;
  NicParams params_;
  std::uint32_t width_;
  struct Port {
    link::PortAttachment at;
    Packet* held = nullptr;  // built, waiting for the port's gate
    Cycle line_free = 0;
    bool up = true, locked_once = false;
    Time dark_since = kPending;  // when its PCS lost lock, if it has
  };
  std::vector<Port> ports_;
  PacketPool& pool_;
  Memory& memory_;
  std::unique_ptr<IcrcChecker> icrc_;
  Rng rng_;  // IGLB's draws
  std::unique_ptr<PcieLink> pcie_;  // nic.host=pcie
  std::deque<Posted> posted_;
  struct Cq {
    std::uint32_t depth;
    std::multimap<Time, WorkCompletion> entries;  // by when each is in the queue
  };
  std::vector<Cq> cqs_;
  std::vector<std::uint32_t> qpns_;             // in creation order: the round robin's
  std::unordered_map<std::uint32_t, std::unique_ptr<Flow>> flows_;  // by qpn
  std::size_t next_reply_ = 0, next_request_ = 0;
  struct Cnp {  // owed
    std::uint32_t remote, remote_qpn;
    std::size_t port;
  };
  std::deque<Cnp> cnps_;
  struct Buffered {  // a received frame in the receive buffer, until `leaves`
    Time leaves;
    std::uint32_t bytes;
    std::uint8_t vc;
    std::size_t port;
    bool operator>(const Buffered& o) const { return leaves > o.leaves; }
  };
  std::priority_queue<Buffered, std::vector<Buffered>, std::greater<>> rx_buffer_;
  std::uint64_t rx_bytes_ = 0, rx_peak_ = 0;
  std::vector<std::uint8_t> payload_;
  Counter &sent_, &received_, &bad_icrc_, &cnps_sent_, &cnps_received_, &ce_received_, &rx_dropped_;
  Counter* failovers_ = nullptr;  // with planes
};

}  // namespace xy::nic
