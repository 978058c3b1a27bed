// nic-balance (claim C8): elephant flows between two leaves whose paths are not alike. The
// last endpoint of the first leaf sends a background flow whose QP number is chosen so that the
// first leaf hashes it onto spine 0: that uplink carries it at line rate while the elephants
// (endpoint i of the first leaf to endpoint i of the second, a permutation) share the leaf's
// uplinks, one per spine. Three designs side by side, the same fabric, the same congestion
// control (DCQCN) and the same bytes on the wire (every frame carries the INT trailer):
//  - ecmp:  one UDP source port per QP, hashed by the switches (collisions stay);
//  - spray: a new source port every data packet, into a reorder window;
//  - iglb:  every data packet over the less congested of two of its QP's nic.iglb.paths source
//           ports drawn at random, congestion being the deepest queue the INT records of that
//           port's packets saw (echoed in ACKs), into a reorder window.
// The background flow keeps its one port in every design. Measured: the data frames each uplink
// of the first leaf carried (max over mean), the elephants' completion times, goodput,
// reordering; every byte checked at its address, each message delivered once, in order.
#include <algorithm>
#include <deque>
#include <memory>

#include <fmt/format.h>

#include "tb/lib/nic_rig.hpp"
#include "tb/lib/scenario.hpp"

namespace xy {
namespace {

struct Design {
  const char* name;
  bool spray, iglb;
};
const Design kDesigns[] = {{"ecmp", false, false}, {"spray", true, false}, {"iglb", false, true}};

class NicBalance : public NicTestbench {
 public:
  explicit NicBalance(RunContext& ctx) {
    Config& c = ctx.config;
    flows_ = static_cast<int>(c.integer("balance.flows", 7, "flows", 1, 511, "elephants, one from each sender"));
    message_ = static_cast<std::uint64_t>(c.integer("balance.message_kib", 8192, "KiB", 1, 16384,
                                                    "each elephant's WRITE, and the background flow's")) *
               1024;
    c.default_to("topology.endpoints", std::to_string(2 * (flows_ + 1)),
                 "nic-balance (the senders, the background's, and their partners)");
    c.default_to("topology.spines", std::to_string(flows_ + 1), "nic-balance (a path per sender)");
    topology_ = *lingyun::Topology::declare(c, 2 * (flows_ + 1), false, "leaf-spine");
    const int endpoints = static_cast<int>(topology_.endpoints().size());
    const int first_leaf = leaf_of(0);
    if (std::none_of(topology_.links.begin(), topology_.links.end(), [&](const lingyun::Topology::Link& l) {
          const int other = l.a == first_leaf ? l.b : l.b == first_leaf ? l.a : -1;
          return other >= 0 && topology_.nodes[other].name == "spine0";
        }))
      throw ConfigError(fmt::format("topology = {}: nic-balance loads spine0, which e0's switch must link to "
                                    "(leaf-spine, or a file with a switch named spine0)",
                                    topology_.name));
    if (endpoints < 2 * (flows_ + 1))
      throw ConfigError(fmt::format("balance.flows = {}: needs {} endpoints (each sender's partner apart, and the "
                                    "background's), the topology has {}",
                                    flows_, 2 * (flows_ + 1), endpoints));
    c.default_to("nic.reorder.window", "256", "nic-balance (spray and iglb)");
    c.fix("nic.entropy", "nic-balance, which runs every design");
    c.default_to("switch.ecn.on", "true", "nic-balance (DCQCN reacts to the marks)");
    c.fix("switch.when_full", "nic-balance: its ports' flow control holds back before a buffer fills, and without it "
                              "the switches drop");
    c.fix("switch.dwrr_quantum_bytes", "nic-balance, whose traffic is all on one VC");
    const sw::SwitchParams sp = sw::SwitchParams::declare(c, "switch");
    cell_bytes_ = sp.cell_bytes;
    const lingyun::PortParams pp = lingyun::PortParams::declare(c, sp.vcs);
    lingyun::fix_switch_keys_of_composed_ports(c, "nic-balance");
    nic::NicParams np = nic::NicParams::declare(c, pp.line_gbps() * 1e9, {});
    np.telemetry = true;
    check_frames_fit(np, pp, true);
    if (np.qp.reorder_window == 0)
      throw ConfigError("nic.reorder.window = 0: nic-balance sprays (spray, iglb) into a reorder window; allowed > 0");
    line_gbps_ = pp.line_gbps();
    links_up_ = pp.phy.cdr_lock_cycles * pp.phy.period();
    const int background = flows_, far = endpoints / 2;  // the first leaf's last sender; the second leaf's first endpoint
    for (const Design& d : kDesigns) {
      std::vector<nic::NicParams> per_endpoint(static_cast<std::size_t>(endpoints), np);
      for (int e = 0; e < endpoints; ++e) {
        per_endpoint[e].spray = d.spray && e != background;
        per_endpoint[e].iglb = d.iglb && e != background;
      }
      Run& r = runs_.emplace_back();
      r.design = d.name;
      r.rig = std::make_unique<NicRig>(fmt::format("top.{}", d.name), fmt::format("nic_balance_{}", d.name), topology_,
                                       sp, pp, per_endpoint, ctx.stats, pool_, ctx);
      follow(d.name, *r.rig);
      for (int s = 0; s < flows_; ++s) add_flow(r, s, far + s, next_qpn(r));
      add_flow(r, background, far + background, pinned_qpn(r, background, far + background));
    }
  }

  void check() const override {
    NicTestbench::check();
    for (const Run& r : runs_)
      for (const DeliveryOrder& d : r.deliveries)
        if (d.out_of_order_bytes())
          throw CheckFailure(fmt::format("{}: {} bytes delivered to the application out of order", r.design,
                                         d.out_of_order_bytes()));
  }

  nlohmann::json summary() const override {
    nlohmann::json s;
    s["topology"] = runs_.front().rig->fabric->summary();
    s["flows"] = flows_;
    s["flow_bytes"] = message_;
    s["provenance"] = {{"flows", "configured"}, {"flow_bytes", "configured"}};
    for (const Run& r : runs_) {
      std::vector<double> fct;
      std::uint64_t retx = 0, naks = 0;
      std::uint32_t occupancy_p99 = 0;
      double background_us = 0;
      for (const Flow& f : r.flows) {
        const double at = to_us(sender(r, f).completions().front().at - links_up_);
        if (f.src == flows_) background_us = at;
        else fct.push_back(at);
        retx += sender(r, f).stats().retransmitted_bytes;
        const nic::QueuePair& rx = r.rig->nics[f.dst]->qp(f.qpn);
        naks += rx.stats().naks_sent;
        occupancy_p99 = std::max(occupancy_p99, rx.reorder_occupancy(0.99));
      }
      std::sort(fct.begin(), fct.end());
      const std::vector<std::uint64_t> load = r.rig->uplink_frames(topology_, 0);
      double total = 0, worst = 0;
      for (std::uint64_t l : load) {
        total += static_cast<double>(l);
        worst = std::max(worst, static_cast<double>(l));
      }
      s[r.design] = {
          {"uplink_frames", load},
          {"max_over_mean_link_load", total > 0 ? worst / (total / static_cast<double>(load.size())) : 0.0},
          {"fct_p50_us", percentile(fct, 0.5)},
          {"fct_p99_us", percentile(fct, 0.99)},
          {"fct_max_us", fct.back()},
          {"goodput_ratio", static_cast<double>(message_) * flows_ * 8 / (fct.back() * 1e3) / (line_gbps_ * flows_)},
          {"background_done_us", background_us},
          {"reorder_occupancy_p99", occupancy_p99},
          {"naks", naks},
          {"retx_bytes", retx},
          {"drops", r.rig->drops()},
          {"peak_buffer_bytes", peak_buffer_bytes(r)},
      };
    }
    return s;
  }

  std::string report() const override {
    const nlohmann::json s = summary();
    std::string out = fmt::format("  {}\n  {} elephants of {} KiB, and a background flow pinned to spine 0, at {:.0f} Gb/s\n",
                                  s["topology"].get<std::string>(), flows_, message_ / 1024, line_gbps_);
    out += fmt::format("  {:<7} {:>9} {:>10} {:>10} {:>10} {:>8} {:>10} {:>7} {:>6}\n", "design", "max/mean", "FCT p50",
                       "FCT p99", "FCT max", "goodput", "background", "ROB p99", "NAKs");
    for (const Design& d : kDesigns) {
      const auto& row = s[d.name];
      out += fmt::format("  {:<7} {:>9.3f} {:>7.1f} us {:>7.1f} us {:>7.1f} us {:>8.3f} {:>7.1f} us {:>7} {:>6}\n", d.name,
                         row["max_over_mean_link_load"].get<double>(), row["fct_p50_us"].get<double>(),
                         row["fct_p99_us"].get<double>(), row["fct_max_us"].get<double>(),
                         row["goodput_ratio"].get<double>(), row["background_done_us"].get<double>(),
                         row["reorder_occupancy_p99"].get<std::uint32_t>(), row["naks"].get<std::uint64_t>());
    }
    return out;
  }

 private:
  struct Flow {
    int src, dst;
    std::uint32_t qpn;
  };
  struct Run {
    std::string design;
    std::unique_ptr<NicRig> rig;
    std::vector<Flow> flows;
    std::deque<DeliveryOrder> deliveries;  // each flow's (stable: they hold `this`)
    std::uint32_t last_qpn = 0xff;
  };

  static std::uint32_t next_qpn(Run& r) { return ++r.last_qpn; }
  // The first QP number after the others whose UDP source port the first leaf hashes onto its
  // link to spine 0.
  std::uint32_t pinned_qpn(Run& r, int src, int dst) const {
    const lingyun::Fabric& fabric = *r.rig->fabric;
    const int leaf = leaf_of(src);
    for (std::uint32_t qpn = r.last_qpn + 1; qpn < r.last_qpn + 0x10000; ++qpn) {
      const int port = fabric.route(leaf, static_cast<std::uint32_t>(src), static_cast<std::uint32_t>(dst),
                                    nic::flow_entropy(qpn));
      const auto& l = topology_.links[static_cast<std::size_t>(link_at(fabric, leaf, port))];
      if (topology_.nodes[l.a == leaf ? l.b : l.a].name == "spine0") return qpn;
    }
    throw ConfigError(fmt::format("topology = {}: no QP number makes e{}'s switch send e{}'s flow to spine0 (its "
                                  "route to e{} does not cross it)",
                                  topology_.name, src, src, dst));
  }
  // One WRITE of message_ bytes from src's 0 to dst's 0 on QP `qpn`, and its delivery checked.
  void add_flow(Run& r, int src, int dst, std::uint32_t qpn) {
    r.flows.push_back({src, dst, qpn});
    r.last_qpn = std::max(r.last_qpn, qpn);
    r.rig->nics[src]->create_qp(qpn, static_cast<std::uint32_t>(dst), qpn);
    nic::QueuePair& rx = r.rig->nics[dst]->create_qp(qpn, static_cast<std::uint32_t>(src), qpn);
    r.rig->memories[dst]->expect(0, message_, static_cast<std::uint32_t>(src), 0);
    r.deliveries.emplace_back(rx, *r.rig->memories[dst], 0);
    r.rig->nics[src]->post_send(qpn, {0, nic::Verb::kWrite, 0, 0, 0, static_cast<std::uint32_t>(message_)});
    await(r.design, r.rig->nics[src]->qp(qpn), 1, fmt::format("the WRITE of e{}", src));
  }
  static const nic::QueuePair& sender(const Run& r, const Flow& f) { return r.rig->nics[f.src]->qp(f.qpn); }
  std::uint64_t peak_buffer_bytes(const Run& r) const {
    std::uint64_t cells = 0;
    for (const auto& sw : r.rig->fabric->switches()) cells = std::max(cells, sw->peak_buffer_cells());
    return cells * cell_bytes_;
  }
  int leaf_of(int endpoint) const {
    const int e = topology_.endpoints()[static_cast<std::size_t>(endpoint)];
    for (const auto& l : topology_.links)
      if (l.a == e || l.b == e) return l.a == e ? l.b : l.a;
    return -1;
  }
  // The link that is port `port` of switch node `sw` in `fabric`.
  int link_at(const lingyun::Fabric& fabric, int sw, int port) const {
    const auto& ports = fabric.routes().port_of;
    for (std::size_t i = 0; i < topology_.links.size(); ++i)
      for (int side = 0; side < 2; ++side)
        if ((side == 0 ? topology_.links[i].a : topology_.links[i].b) == sw && ports[i][side] == port)
          return static_cast<int>(i);
    throw std::logic_error(fmt::format("nic-balance: switch node {} has no port {}", sw, port));
  }

  PacketPool pool_;
  lingyun::Topology topology_;
  std::deque<Run> runs_;
  int flows_ = 0;
  std::uint64_t message_ = 0;
  double line_gbps_ = 0;
  Time links_up_ = 0;
  std::uint64_t cell_bytes_ = 0;
};

}  // namespace

XY_TESTBENCH(NicBalance, 715, "nic-balance",
             "claim C8: elephants over a leaf-spine with one spine loaded, ECMP vs spraying vs IGLB")

}  // namespace xy
