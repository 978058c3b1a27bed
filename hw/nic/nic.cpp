#include "hw/nic/nic.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace xy::nic {

NicParams NicParams::declare(Config& c, double line_bps, Uses uses) {
  NicParams p;
  QpConfig& q = p.qp;
  q.mtu = static_cast<std::uint32_t>(c.integer("nic.mtu", 4096, "B", 256, 4096,
                                               "path MTU: payload bytes a packet (256, 512, 1024, 2048 or 4096)"));
  q.timeout_exp = static_cast<int>(c.integer("nic.timeout_exp", 5, "exponent", 0, 31,
                                             "retransmit timeout 4.096 us x 2^timeout_exp (IB's Local ACK Timeout)"));
  q.retry_count = static_cast<int>(c.integer("nic.retry_count", 7, "timeouts", 0, 7,
                                             "timeouts without progress before the QP fails (retry exceeded)"));
  q.ack_req_every = static_cast<std::uint32_t>(
      c.integer("nic.ack_req_every", 16, "packets", 1, 1 << 20, "the A bit on every n-th packet and each message's last"));
  if (uses.reads)
    q.max_reads = static_cast<std::uint32_t>(
        c.integer("nic.max_reads", 16, "requests", 1, 1 << 16, "READ requests outstanding per QP (initiator depth)"));
  q.reorder_window = static_cast<std::uint32_t>(c.integer(
      "nic.reorder.window", 0, "packets", 0, 1 << 16,
      "packets the receiver keeps past a hole (0: none; a packet out of order is dropped and NAKed)"));
  if (q.reorder_window)
    q.reorder_timeout = from_us(c.real("nic.reorder.timeout_us", to_us(q.reorder_timeout), "us", 1e-3, 1e6,
                                       "a hole this old is taken for a loss and NAKed"));
  q.selective_repeat = c.choice("nic.retransmit", "gbn", {"gbn", "selective"},
                                "after a NAK or timeout: Go-Back-N, or the named packet alone") == "selective";
  q.validate("nic");
  p.icrc_rtl = c.implementation("nic.icrc.impl", {"model", "rtl"},
                                "received ICRCs checked by the C++ model or its RTL twin (rtl/nic/xy_icrc.v)") == "rtl";
  p.pcie = c.choice("nic.host", "ideal", {"ideal", "pcie"},
                    "the host side: ideal (work requests and payload at no cost) or a PCIe link (doorbells, WQE "
                    "fetch, DMA)") == "pcie";
  {  // listed whatever nic.host is, as each FEC's keys are whatever port.fec is
    PcieConfig& h = p.pcie_config;
    h.lanes = static_cast<int>(c.integer("nic.pcie.lanes", h.lanes, "lanes", 1, 16, "PCIe link width: 1, 2, 4, 8 or 16"));
    h.gts = c.real("nic.pcie.gts", h.gts, "GT/s", 8, 64, "a lane's rate: 8 Gen3, 16 Gen4, 32 Gen5, 64 Gen6 (128b/130b)");
    h.max_payload = static_cast<std::uint32_t>(
        c.integer("nic.pcie.max_payload", h.max_payload, "B", 128, 4096, "MPS: payload bytes a TLP (a power of two)"));
    h.latency = from_ns(c.real("nic.pcie.latency_ns", to_ns(h.latency), "ns", 0, 1e6,
                               "one way, NIC to the host's memory controller"));
    h.memory_latency = from_ns(c.real("nic.pcie.memory_ns", to_ns(h.memory_latency), "ns", 0, 1e6,
                                      "a host memory read, request to first data"));
    h.validate("nic.pcie");
    p.rx_buffer_bytes = static_cast<std::uint32_t>(1024 * c.integer(
        "nic.rx_buffer_kib", p.rx_buffer_bytes / 1024, "KiB", 16, 1 << 20,
        "the NIC's receive buffer on a port without link flow control, full when the host is slower than the line "
        "(with PFC or CBFC the port's buffer holds the sender back)"));
  }
  if (uses.planes) {
    NicParams::Failover& f = p.failover;
    f.link_down = from_us(c.real("nic.failover.link_down_us", to_us(f.link_down), "us", 0, 1e6,
                                 "a port whose PCS has had no lock this long is down: its QPs move to another plane"));
    f.path_timeout = from_us(c.real("nic.failover.path_timeout_us", to_us(f.path_timeout), "us", 0, 1e6,
                                    "a QP with nothing acknowledged this long moves to another plane (0: when its "
                                    "retransmit timer fires)"));
    f.switch_over = from_us(c.real("nic.failover.switch_over_us", to_us(f.switch_over), "us", 0, 1e6,
                                   "a QP moving to another plane sends nothing this long"));
  }
  if (!uses.switched) {
    p.dcqcn = false;
    return p;
  }
  const std::string entropy =
      c.choice("nic.entropy", "qp", {"qp", "packet", "iglb"},
               "UDP source port (what ECMP hashes): one per QP, a new one every data packet (spraying), or IGLB's "
               "choice among nic.iglb.paths by the switches' INT records");
  p.spray = entropy == "packet";
  p.iglb = entropy == "iglb";
  if (uses.iglb) {
    NicParams::Iglb& g = p.iglb_config;
    g.paths = static_cast<int>(
        c.integer("nic.iglb.paths", g.paths, "ports", 2, 64, "IGLB: UDP source ports (paths) a QP chooses among"));
    g.flowlet_gap = from_us(c.real("nic.iglb.flowlet_us", 0, "us", 0, 1e6,
                                   "IGLB: choose again after a pause this long (0: every packet)"));
    g.age = from_us(c.real("nic.iglb.age_us", to_us(g.age), "us", 1e-3, 1e6,
                           "IGLB: a path measured this long ago counts as idle"));
  }
  const std::string cc = c.choice("nic.cc", "dcqcn", {"dcqcn", "encc", "none"},
                                  "congestion control: DCQCN (ECN marks), ENCC (HPCC from in-band telemetry), or none "
                                  "(line rate)");
  p.dcqcn = cc == "dcqcn";
  p.encc = cc == "encc";
  if (uses.encc) {
    EnccConfig e = EnccConfig::hpcc(line_bps, from_us(c.real("nic.encc.base_rtt_us", 5, "us", 1e-3, 1e6,
                                                             "ENCC's T: the fabric's longest zero-load round trip")));
    e.eta = c.real("nic.encc.eta", e.eta, "fraction", 1e-3, 1, "ENCC's target utilisation");
    e.max_stage = static_cast<int>(c.integer("nic.encc.max_stage", e.max_stage, "steps", 0, 1000,
                                             "ENCC's additive steps before a multiplicative one"));
    e.rai_bps = 1e6 * c.real("nic.encc.rai_mbps", e.rai_bps / 1e6, "Mb/s", 1e-3, line_bps / 1e6,
                             "ENCC's additive increase R_AI (W_AI / T)");
    e.min_rate_bps = 1e6 * c.real("nic.encc.min_rate_mbps", e.min_rate_bps / 1e6, "Mb/s", 1e-3, line_bps / 1e6,
                                  "ENCC's rate floor");
    e.fast_react = c.flag("nic.encc.fast_react", e.fast_react,
                          "ENCC reacts on every ACK (committing once a round trip), or once a round trip only");
    e.validate("nic.encc");
    p.encc_config = e;
  }
  if (p.encc && !uses.encc) throw ConfigError("nic.cc = 'encc': not run here; allowed: dcqcn, none");
  p.telemetry = p.encc || p.iglb;
  DcqcnConfig d = profile(c.choice("nic.dcqcn.profile", "paper", {"paper", "mlx"},
                                   "DCQCN's constants: the SIGCOMM'15 paper's, or the HPCC authors' ns-3 Mellanox variant"),
                          line_bps);
  d.g = c.real("nic.dcqcn.g", d.g, "fraction", 1e-9, 1, "alpha gain");
  d.alpha_period = from_us(c.real("nic.dcqcn.alpha_period_us", to_us(d.alpha_period), "us", 1e-3, 1e6, "alpha timer K"));
  d.increase_period =
      from_us(c.real("nic.dcqcn.increase_period_us", to_us(d.increase_period), "us", 1e-3, 1e6, "rate-increase timer T"));
  d.byte_counter = static_cast<std::uint64_t>(
      c.integer("nic.dcqcn.byte_counter", static_cast<std::int64_t>(d.byte_counter), "B", 0, std::int64_t{1} << 40,
                "bytes sent per increase event B (0: off)"));
  d.fast_recovery_steps = static_cast<int>(
      c.integer("nic.dcqcn.fast_recovery_steps", d.fast_recovery_steps, "events", 0, 1000, "fast recovery F"));
  d.rai_bps = 1e6 * c.real("nic.dcqcn.rai_mbps", d.rai_bps / 1e6, "Mb/s", 1e-3, 1e7, "additive increase R_AI");
  d.rhai_bps = 1e6 * c.real("nic.dcqcn.rhai_mbps", d.rhai_bps / 1e6, "Mb/s", 1e-3, 1e7, "hyper increase R_HAI");
  d.min_rate_bps = 1e6 * c.real("nic.dcqcn.min_rate_mbps", d.min_rate_bps / 1e6, "Mb/s", 1e-3, 1e7, "rate floor");
  d.clamp_target = c.flag("nic.dcqcn.clamp_target", d.clamp_target, "R_T = R_C on every decrease");
  d.rate_on_first_cnp = c.real("nic.dcqcn.rate_on_first_cnp", d.rate_on_first_cnp, "x", 1e-6, 1,
                               "R_C and R_T multiplied by it on the flow's first CNP");
  d.rate_decrease_interval = from_us(c.real("nic.dcqcn.rate_decrease_interval_us", to_us(d.rate_decrease_interval), "us",
                                            0, 1e6, "0: decrease on each CNP (paper); > 0: the mlx periodic check"));
  d.cnp_interval = from_us(
      c.real("nic.dcqcn.cnp_interval_us", to_us(d.cnp_interval), "us", 0, 1e6, "least time between CNPs of a flow"));
  // The two rules across keys, said with the keys' names (validate() would name the fields).
  if (d.min_rate_bps > line_bps * d.rate_on_first_cnp)
    throw ConfigError(fmt::format("nic.dcqcn.min_rate_mbps = {:g}: allowed up to {:g} (the line rate x "
                                  "nic.dcqcn.rate_on_first_cnp)",
                                  d.min_rate_bps / 1e6, line_bps * d.rate_on_first_cnp / 1e6));
  if (d.mlx_variant() && d.byte_counter)
    throw ConfigError(fmt::format("nic.dcqcn.byte_counter = {}: allowed 0 when nic.dcqcn.rate_decrease_interval_us > 0 "
                                  "(the mlx variant has no byte counter)",
                                  d.byte_counter));
  d.validate("nic.dcqcn");
  p.dcqcn_config = d;
  return p;
}

std::array<std::uint8_t, 6> mac_of(std::uint32_t endpoint) {
  return {0x02, 0x00, static_cast<std::uint8_t>(endpoint >> 24), static_cast<std::uint8_t>(endpoint >> 16),
          static_cast<std::uint8_t>(endpoint >> 8), static_cast<std::uint8_t>(endpoint)};
}

std::uint32_t ip_of(std::uint32_t endpoint) { return 0x0a000000u | (endpoint & 0xffffff); }

std::uint16_t flow_entropy(std::uint32_t dest_qp, std::uint32_t path) {
  return static_cast<std::uint16_t>(0xc000 | ((dest_qp * 0x9e37u + path * 0x2f1du) & 0x3fff));
}

Nic::Nic(std::string name, std::uint32_t endpoint, const NicParams& params, std::uint32_t bytes_per_cycle,
         std::vector<link::PortAttachment> ports, PacketPool& pool, Memory& memory, Stats& stats,
         std::unique_ptr<IcrcChecker> icrc)
    : Core(std::move(name)), endpoint_(endpoint), params_(params), width_(bytes_per_cycle), pool_(pool),
      memory_(memory), icrc_(std::move(icrc)), rng_(endpoint, this->name() + ".iglb"),
      sent_(stats.counter(this->name() + ".frames_sent", "frames", "RoCEv2 frames put on the line")),
      received_(stats.counter(this->name() + ".frames_received", "frames", "RoCEv2 frames taken from the line")),
      bad_icrc_(stats.counter(this->name() + ".bad_icrc", "frames", "frames dropped: their ICRC did not hold")),
      cnps_sent_(stats.counter(this->name() + ".cnps_sent", "frames", "CNPs sent (notification point)")),
      cnps_received_(stats.counter(this->name() + ".cnps_received", "frames", "CNPs taken (reaction point)")),
      ce_received_(stats.counter(this->name() + ".ce_received", "frames", "data packets that arrived CE-marked")),
      rx_dropped_(stats.counter(this->name() + ".rx_dropped", "frames",
                                "frames dropped: the receive buffer was full (a port without link flow control)")) {
  if (ports.empty()) throw std::logic_error(this->name() + ": no port");
  for (auto& a : ports) ports_.push_back({std::move(a)});
  if (planes() > 1) failovers_ = &stats.counter(this->name() + ".failovers", "QPs", "QPs moved to another plane");
  if (params_.dcqcn && params_.encc) throw std::logic_error(this->name() + ": DCQCN and ENCC at once");
  if ((params_.encc || params_.iglb) && !params_.telemetry)
    throw std::logic_error(this->name() + ": ENCC and IGLB read INT trailers, which are off");
  // ENCC and IGLB hear of every packet's path: HPCC's receiver answers every packet.
  if (params_.encc || params_.iglb) params_.qp.ack_req_every = 1;
  params_.qp.validate("nic.qp");
  if (params_.dcqcn) params_.dcqcn_config.validate("nic.dcqcn");
  if (params_.encc) params_.encc_config.validate("nic.encc");
  if (params_.pcie) pcie_ = std::make_unique<PcieLink>(params_.pcie_config);
  for (const Port& p : ports_) p.at.bind(*this);
}

QueuePair& Nic::create_qp(std::uint32_t qpn, std::uint32_t remote, std::uint32_t remote_qpn, std::uint32_t first_psn,
                          std::uint32_t remote_first_psn, std::uint32_t cq) {
  if (cq != kNoCq && cq >= cqs_.size()) throw std::logic_error(fmt::format("{}: no CQ {}", name(), cq));
  if (qpn > kPsnMask) throw std::logic_error(fmt::format("{}: QP number {} beyond 24 bits", name(), qpn));
  if (flows_.count(qpn)) throw std::logic_error(fmt::format("{}: QP {} exists", name(), qpn));
  auto f = std::make_unique<Flow>();
  f->remote = remote;
  f->qp = std::make_unique<QueuePair>(qpn, remote_qpn, params_.qp, memory_, first_psn, remote_first_psn);
  if (pcie_ || cq != kNoCq)
    f->qp->on_complete = [this, qpn, cq](Completion& c) {
      if (pcie_) c.at = pcie_->write(kCqeBytes, c.at);
      if (cq == kNoCq) return;
      Cq& q = cqs_[cq];
      if (q.entries.size() == q.depth)
        throw std::logic_error(fmt::format("{}: CQ {} overrun: {} completions not polled", name(), cq, q.depth));
      q.entries.emplace(c.at, WorkCompletion{qpn, c});
    };
  if (params_.dcqcn) {
    f->rp = std::make_unique<DcqcnReactionPoint>(params_.dcqcn_config);
    f->np = std::make_unique<DcqcnNotificationPoint>(params_.dcqcn_config);
  }
  if (params_.encc) f->encc = std::make_unique<EnccController>(params_.encc_config);
  if (params_.iglb) {
    f->paths.resize(static_cast<std::size_t>(params_.iglb_config.paths));
    f->path_of.assign(Flow::kPathsRemembered, 0);
  }
  flows_[qpn] = std::move(f);
  qpns_.push_back(qpn);
  return *flows_[qpn]->qp;
}

Nic::Flow& Nic::flow(std::uint32_t qpn) const {
  const auto f = flows_.find(qpn);
  if (f == flows_.end()) throw std::logic_error(fmt::format("{}: no QP {}", name(), qpn));
  return *f->second;
}

QueuePair& Nic::qp(std::uint32_t qpn) { return *flow(qpn).qp; }
const QueuePair& Nic::qp(std::uint32_t qpn) const { return *flow(qpn).qp; }

std::uint32_t Nic::create_cq(std::uint32_t depth) {
  if (depth == 0) throw std::logic_error(fmt::format("{}: a CQ of depth 0", name()));
  cqs_.push_back({depth, {}});
  return static_cast<std::uint32_t>(cqs_.size() - 1);
}

std::vector<Nic::WorkCompletion> Nic::poll_cq(std::uint32_t cq, std::size_t max) {
  if (cq >= cqs_.size()) throw std::logic_error(fmt::format("{}: no CQ {}", name(), cq));
  auto& entries = cqs_[cq].entries;
  const Time t = clock().time_of(now());
  std::vector<WorkCompletion> out;
  for (auto e = entries.begin(); e != entries.end() && e->first <= t && out.size() < max; e = entries.erase(e))
    out.push_back(e->second);
  return out;
}

void Nic::use_plane(std::uint32_t qpn, int plane) {
  if (plane < 0 || plane >= planes()) throw std::logic_error(fmt::format("{}: no plane {}", name(), plane));
  flow(qpn).plane = plane;
}

const DcqcnReactionPoint* Nic::rate_limiter(std::uint32_t qpn) const { return flow(qpn).rp.get(); }

const EnccController* Nic::encc(std::uint32_t qpn) const { return flow(qpn).encc.get(); }

void Nic::post_send(std::uint32_t qpn, const WorkRequest& wr) {
  if (pcie_) {  // the host writes the WQE and rings the doorbell; the NIC reads the WQE
    const Time at = pcie_->read(kWqeBytes, pcie_->doorbell(clock().time_of(now())));
    posted_.push_back({at, qpn, wr});
    wake_at(std::max(now() + 1, cycles_for(at, clock().period())));
    return;
  }
  qp(qpn).post_send(wr);
  wake_at(std::max(now() + 1, ports_[static_cast<std::size_t>(flow(qpn).plane)].line_free));
}

void Nic::post_recv(std::uint32_t qpn, std::uint64_t id, std::uint64_t addr, std::uint32_t length) {
  qp(qpn).post_recv(id, addr, length);
}

bool Nic::idle() const {
  if (!cnps_.empty() || !posted_.empty() || !rx_buffer_.empty()) return false;
  for (const Port& p : ports_)
    if (p.held) return false;
  for (const auto& [qpn, f] : flows_)
    if (!f->qp->idle()) return false;
  return true;
}

Time Nic::receive(Packet& p, std::size_t port, Time now) {
  std::vector<std::uint8_t>& bytes = p.bytes_now();
  if (p.ecn_ce) mark_ce(bytes);  // the switch's mark, made in the header it rewrites
  // With telemetry every frame ends in an INT trailer, after the RoCEv2 packet.
  const std::size_t size =
      bytes.size() - (params_.telemetry && bytes.size() > sw::kTelemetryBytes ? sw::kTelemetryBytes : 0);
  const auto parsed = parse(bytes.data(), size, nullptr, !icrc_);
  if (!parsed || !(icrc_ ? parsed->icrc_on_wire == icrc_->icrc(bytes.data(), size) : parsed->icrc_ok)) {
    bad_icrc_.add();
    return now;
  }
  received_.add();
  const RoceHeader& h = parsed->header;
  Flow& f = flow(h.dest_qp);
  if (h.opcode == opcode::kCnp) {
    cnps_received_.add();
    if (f.rp) f.rp->on_cnp(now);
    return now;
  }
  Time leaves = now;
  if (pcie_ && parsed->payload_size) leaves = pcie_->write(parsed->payload_size, now) - pcie_->config().latency;
  if (params_.telemetry) {
    if ((h.opcode & 0x1f) != opcode::kAcknowledge) {  // data: its trailer goes back in the next ACK
      std::copy(bytes.begin() + static_cast<long>(size), bytes.end(), f.echo.begin());
      f.echo_fresh = true;
      f.echo_psn = h.psn;
    } else if (h.aeth) {  // an ACK acknowledges its PSN, a NAK what comes before its PSN
      const sw::TelemetryRecords records = sw::read_telemetry(bytes.data(), bytes.size());
      if (f.encc) f.encc->on_ack(records, h.aeth->nak() ? h.psn : psn_add(h.psn, 1), f.qp->send_psn());
      if (params_.iglb && records.hops > 0 && records.hops <= sw::kTelemetryMaxHops)
        measure_path(f.paths[f.path_of[h.psn % f.path_of.size()]], records, now);
    }
  }
  if (h.ecn == Ecn::kCe) {
    ce_received_.add();
    const std::uint8_t op = h.opcode & 0x1f;
    const bool data = op != opcode::kAcknowledge;
    if (data && f.np && f.np->on_data(true, now)) cnps_.push_back({f.remote, f.qp->remote_qpn(), port});
  }
  // Replies follow the requests: the plane the newest came in by, while its port is up.
  if ((h.opcode & 0x1f) <= opcode::kReadRequest && ports_[port].up) f.reply_plane = static_cast<int>(port);
  f.qp->receive(h, bytes.data() + parsed->payload_offset, static_cast<std::uint32_t>(parsed->payload_size), now);
  if (!f.failovers.empty() && f.failovers.back().drained == kPending &&
      psn_diff(f.qp->unacknowledged_psn(), f.failovers.back().sent_end) >= 0)
    f.failovers.back().drained = now;
  return leaves;
}

void Nic::drain(Time now) {
  for (; !rx_buffer_.empty() && rx_buffer_.top().leaves <= now; rx_buffer_.pop()) {
    rx_bytes_ -= rx_buffer_.top().bytes;
    ports_[rx_buffer_.top().port].at.drained(rx_buffer_.top().bytes, rx_buffer_.top().vc);
  }
}

Packet* cnp_for_sender(Packet& data, PacketPool& pool) {
  const std::vector<std::uint8_t>& bytes = data.bytes_now();
  const auto parsed = parse(bytes.data(), bytes.size(), nullptr, false);
  if (!parsed || parsed->header.opcode == opcode::kCnp || (parsed->header.opcode & 0x1f) == opcode::kAcknowledge)
    return nullptr;
  const RoceHeader& d = parsed->header;
  RoceHeader h = cnp_header(d.dest_qp);
  h.src_mac = d.dst_mac;
  h.dst_mac = d.src_mac;
  h.src_ip = d.dst_ip;
  h.dst_ip = d.src_ip;
  h.src_port = d.src_port;
  const std::array<std::uint8_t, kCnpPadBytes> pad{};
  Packet* p = pool.acquire();
  encode(h, pad.data(), pad.size(), p->payload);
  p->src = data.dst;
  p->dst = data.src;
  p->vc = data.vc;
  p->entropy = data.entropy;
  p->phantom = false;
  p->bytes = static_cast<std::uint32_t>(p->payload.size()) + 4;  // and the FCS, which the MAC adds
  return p;
}

Packet* Nic::frame(Flow* f, std::uint32_t dst, const RoceHeader& header, const Outgoing* o, Time now) {
  RoceHeader h = header;
  h.dst_mac = mac_of(dst);
  h.src_mac = mac_of(endpoint_);
  h.src_ip = ip_of(endpoint_);
  h.dst_ip = ip_of(dst);
  h.ecn = Ecn::kEct0;  // DCQCN's packets are ECN-capable
  h.src_port = entropy(f, h, now);
  payload_.assign(o ? o->payload_bytes : kCnpPadBytes, 0);
  if (o && o->payload_bytes) memory_.read(o->payload_addr, payload_.data(), payload_.size());
  Packet* p = pool_.acquire();
  encode(h, payload_.data(), payload_.size(), p->payload);
  p->src = endpoint_;
  p->dst = dst;
  p->vc = params_.vc;
  p->entropy = h.src_port;
  p->phantom = false;
  p->bytes = static_cast<std::uint32_t>(p->payload.size()) + 4;  // and the FCS, which the MAC adds
  p->created = now;
  return p;
}

void Nic::send(std::size_t port, Packet* p) {
  Port& out = ports_[port];
  if (!out.at.can_send(*p)) {
    out.held = p;
    return;
  }
  out.at.send(p);
  sent_.add();
  out.line_free = now() + (p->bytes + width_ - 1) / width_;
}

void Nic::transmit(std::size_t port, Time now) {
  Port& out = ports_[port];
  if (this->now() < out.line_free || !out.up) return;
  if (out.held) {
    Packet* p = std::exchange(out.held, nullptr);
    send(port, p);
    return;
  }
  const auto cnp = std::find_if(cnps_.begin(), cnps_.end(), [port](const Cnp& c) { return c.port == port; });
  if (cnp != cnps_.end()) {
    const Cnp c = *cnp;
    cnps_.erase(cnp);
    cnps_sent_.add();
    Packet* p = frame(nullptr, c.remote, cnp_header(c.remote_qpn), nullptr, now);
    if (params_.telemetry) {  // an empty one
      sw::append_telemetry(p->payload);
      p->bytes = static_cast<std::uint32_t>(p->payload.size()) + 4;
    }
    send(port, p);
    return;
  }
  const int plane = static_cast<int>(port);
  const std::size_t n = qpns_.size();
  for (std::size_t k = 0; k < n; ++k) {  // replies, round robin; READ responses as their rate allows
    Flow& f = flow(qpns_[(next_reply_ + k) % n]);
    if (f.reply_plane != plane || !f.qp->has_response()) continue;
    const bool data = f.qp->response_is_data();
    if (data && (now < f.may_send_at || !payload_here(f, now))) continue;
    next_reply_ = (next_reply_ + k + 1) % n;
    const Outgoing o = *f.qp->next(now, false);
    Packet* p = frame(&f, f.remote, o.header, &o, now);
    add_telemetry(f, *p, o.header);
    if (data) pace(f, *p, now);
    send(port, p);
    return;
  }
  for (std::size_t k = 0; k < n; ++k) {  // requests, round robin among those their rate allows
    Flow& f = flow(qpns_[(next_request_ + k) % n]);
    if (f.plane != plane || now < std::max(f.may_send_at, f.moved_until) || f.qp->has_response() ||
        !f.qp->has_request() || !window_open(f) || !payload_here(f, now))
      continue;
    next_request_ = (next_request_ + k + 1) % n;
    const Outgoing o = *f.qp->next(now, true);
    Packet* p = frame(&f, f.remote, o.header, &o, now);
    add_telemetry(f, *p, o.header);
    pace(f, *p, now);
    if (!f.failovers.empty() && f.failovers.back().resumed == kPending) f.failovers.back().resumed = now;
    send(port, p);
    return;
  }
}

int Nic::plane_up_besides(int plane) const {
  for (int k = 1; k < planes(); ++k)
    if (ports_[static_cast<std::size_t>((plane + k) % planes())].up) return (plane + k) % planes();
  return -1;
}

void Nic::watch_planes(Time now) {
  for (std::size_t k = 0; k < ports_.size(); ++k) {
    Port& p = ports_[k];
    if (p.at.locked(now)) {
      p.locked_once = true;
      p.up = true;
      p.dark_since = kPending;
    } else if (p.locked_once && p.up) {
      if (p.dark_since == kPending) p.dark_since = now;
      if (now >= p.dark_since + params_.failover.link_down) port_down(k, now);
    }
  }
  if (!params_.failover.path_timeout) return;
  for (std::uint32_t qpn : qpns_) {
    Flow& f = flow(qpn);
    if (f.qp->outstanding() && !f.qp->failed() && now >= path_deadline(f)) fail_over(f, FoundBy::kPathTimeout, now);
  }
}

Time Nic::path_deadline(const Flow& f) const {
  const Time since = std::max(f.qp->last_acknowledged(), f.failovers.empty() ? 0 : f.failovers.back().found);
  return since + params_.failover.path_timeout;
}

void Nic::port_down(std::size_t port, Time now) {
  Port& p = ports_[port];
  p.up = false;
  if (p.held) pool_.release(std::exchange(p.held, nullptr));  // sent again, if it matters, on another plane
  const int plane = static_cast<int>(port), other = plane_up_besides(plane);
  for (Cnp& c : cnps_)
    if (c.port == port && other >= 0) c.port = static_cast<std::size_t>(other);
  for (std::uint32_t qpn : qpns_) {
    Flow& f = flow(qpn);
    if (f.reply_plane == plane && other >= 0) f.reply_plane = other;
    if (f.plane == plane) fail_over(f, FoundBy::kLinkDown, now);
  }
}

void Nic::fail_over(Flow& f, FoundBy by, Time now) {
  const int to = plane_up_besides(f.plane);
  if (to < 0) return;  // nowhere to go: the QP's retransmit timer decides
  f.failovers.push_back({by, f.plane, to, now, kPending, kPending, f.qp->sent_end_psn()});
  failovers_->add();
  f.plane = to;
  if (!ports_[static_cast<std::size_t>(f.reply_plane)].up) f.reply_plane = to;
  f.moved_until = now + params_.failover.switch_over;
  f.qp->path_changed(now);
}

bool Nic::payload_here(Flow& f, Time now) {
  if (!pcie_) return true;
  std::optional<PayloadRef> next = f.qp->next_payload();
  if (!next || !next->bytes) return true;
  if (next->message_at == PayloadRef::kNotRead) {  // a READ's data, its first response next
    next->message_at = pcie_->read(next->message_bytes, now);
    f.qp->read_response_data_at(next->message_at);
  }
  // The completions come in order: the packet's last byte is here that much before the message's.
  const std::uint64_t upto = next->addr + next->bytes - next->message_addr;
  f.data_at = next->message_at - (pcie_->completion_time(next->message_bytes) - pcie_->completion_time(upto));
  return f.data_at <= now;
}

void Nic::pace(Flow& f, const Packet& p, Time now) {
  if (f.rp) {
    f.rp->on_sent(p.bytes, now);
    f.may_send_at = now + static_cast<Time>(p.bytes * 8.0 * 1e15 / f.rp->rate());
  } else if (f.encc) {
    f.may_send_at = now + static_cast<Time>(p.bytes * 8.0 * 1e15 / f.encc->rate());
  }
}

bool Nic::window_open(const Flow& f) const {
  return !f.encc || double(f.qp->unacknowledged_packets()) * params_.qp.mtu < f.encc->window_bytes();
}

std::uint16_t Nic::entropy(Flow* f, const RoceHeader& h, Time now) {
  if (h.opcode == opcode::kCnp) return 0;  // as captured
  // The flow's; spraying, a data packet's from its PSN too, so that each takes a path of its
  // own; IGLB, its chosen path's. ACKs stay on the flow's.
  const bool data = (h.opcode & 0x1f) != opcode::kAcknowledge;
  if (data && params_.spray) {
    const std::uint32_t e = ((h.dest_qp * 0x9e37u) ^ h.psn) * 0x85ebca6bu >> 8;
    return static_cast<std::uint16_t>(0xc000 | (e & 0x3fff));
  }
  if (data && params_.iglb && f) {
    f->path = choose_path(*f, now);
    f->path_of[h.psn % f->path_of.size()] = static_cast<std::uint8_t>(f->path);
    return flow_entropy(h.dest_qp, static_cast<std::uint32_t>(f->path));
  }
  return flow_entropy(h.dest_qp);
}

void Nic::measure_path(Flow::Path& p, const sw::TelemetryRecords& records, Time now) {
  if (p.last.hops == records.hops) {
    double busiest = -1;
    for (int i = 0; i < records.hops; ++i)
      if (records.hop[i].ns_since(p.last.hop[i]) > 0)
        busiest = std::max(busiest, hop_utilisation(records.hop[i], p.last.hop[i], to_ns(params_.encc_config.base_rtt)));
    if (busiest >= 0) {
      p.utilisation = busiest;
      p.at = now;
    }
  }
  p.last = records;
}

std::size_t Nic::choose_path(Flow& f, Time now) {
  const NicParams::Iglb& g = params_.iglb_config;
  const bool within_flowlet = g.flowlet_gap && f.sent_data && now - f.last_data_at < g.flowlet_gap;
  f.last_data_at = now;
  f.sent_data = true;
  if (within_flowlet) return f.path;
  // The less loaded of two drawn at random (DRILL's power of two choices), a path idle once its
  // measure is old.
  const auto congestion = [&](std::size_t k) {
    const Flow::Path& p = f.paths[k];
    return now - p.at > g.age ? 0.0 : p.utilisation;
  };
  const std::size_t a = rng_.below(f.paths.size()), b = rng_.below(f.paths.size());
  return congestion(b) < congestion(a) ? b : a;
}

void Nic::add_telemetry(Flow& f, Packet& p, const RoceHeader& h) {
  if (!params_.telemetry) return;
  if ((h.opcode & 0x1f) != opcode::kAcknowledge) {
    sw::append_telemetry(p.payload);
    p.telemetry = true;
  } else if (f.echo_fresh && (!params_.iglb || f.echo_psn == h.psn)) {
    p.payload.insert(p.payload.end(), f.echo.begin(), f.echo.end());
    f.echo_fresh = false;
  } else {
    sw::append_telemetry(p.payload);
  }
  p.bytes = static_cast<std::uint32_t>(p.payload.size()) + 4;
}

void Nic::eval() {
  const Time t = clock().time_of(now());
  for (; !posted_.empty() && posted_.front().at <= t; posted_.pop_front()) {  // WQEs read: their payload next
    const WorkRequest& wr = posted_.front().wr;
    const bool payload = wr.verb != Verb::kRead && wr.length;
    qp(posted_.front().qpn).post_send(wr, payload ? pcie_->read(wr.length, t) : 0);
  }
  drain(t);
  for (std::size_t k = 0; k < ports_.size(); ++k) {
    link::PortAttachment& in = ports_[k].at;
    while (in.can_receive()) {
      Packet* p = in.receive_into_buffer(t);
      if (!in.lossless() && rx_bytes_ + p->bytes > params_.rx_buffer_bytes) {
        rx_dropped_.add();
        in.drained(p->bytes, p->vc);
      } else {
        rx_bytes_ += p->bytes;
        rx_peak_ = std::max(rx_peak_, rx_bytes_);
        rx_buffer_.push({receive(*p, k, t), p->bytes, p->vc, k});
        drain(t);
      }
      pool_.release(p);
    }
  }
  for (std::uint32_t qpn : qpns_) {
    Flow& f = flow(qpn);
    // Without a path timer, a retransmit timeout is the verdict on the path: a move, not a retry.
    if (planes() > 1 && !params_.failover.path_timeout && f.qp->retransmit_deadline() <= t)
      fail_over(f, FoundBy::kRetransmitTimeout, t);
    if (f.qp->next_timer() <= t) f.qp->tick(t);
    if (f.rp && f.rp->next_event() <= t) f.rp->advance(t);
  }
  if (planes() > 1) watch_planes(t);
  for (std::size_t k = 0; k < ports_.size(); ++k) transmit(k, t);
}

void Nic::commit() {
  // The next cycle something may go, and the timers' next deadline.
  Time next = ~Time{0};
  const Time t = clock().time_of(now());
  const auto line = [&](int plane) {
    return clock().time_of(std::max(ports_[static_cast<std::size_t>(plane)].line_free, now() + 1));
  };
  for (std::size_t k = 0; k < ports_.size(); ++k)
    if (ports_[k].held) next = std::min(next, line(static_cast<int>(k)));
  for (const Cnp& c : cnps_) next = std::min(next, line(static_cast<int>(c.port)));
  if (!posted_.empty()) next = std::min(next, posted_.front().at);
  if (!rx_buffer_.empty()) next = std::min(next, rx_buffer_.top().leaves);
  for (std::uint32_t qpn : qpns_) {
    const Flow& f = flow(qpn);
    if (f.qp->has_response()) {
      const Time reply = line(f.reply_plane);
      next = std::min(next, f.qp->response_is_data() ? std::max({reply, f.may_send_at, f.data_at}) : reply);
    } else if (f.qp->has_request() && window_open(f)) {  // a closed one opens on an ACK
      // Its payload here, at its rate, its move done.
      next = std::min(next, std::max({line(f.plane), f.may_send_at, f.data_at, f.moved_until}));
    }
    next = std::min(next, f.qp->next_timer());
    if (f.rp) next = std::min(next, f.rp->next_event());
    if (planes() > 1 && params_.failover.path_timeout && f.qp->outstanding() && !f.qp->failed())
      next = std::min(next, path_deadline(f));
  }
  bool ready = false;
  for (const Port& p : ports_) {
    ready = ready || p.at.ready_by(now() + 1);
    if (planes() == 1) continue;
    next = std::min(next, p.at.next_line_change(t));
    if (p.up && p.dark_since != kPending) next = std::min(next, p.dark_since + params_.failover.link_down);
  }
  if (next != ~Time{0}) wake_at(std::max(now() + 1, cycles_for(std::max(next, t), clock().period())));
  set_busy(ready);
}

}  // namespace xy::nic
