// nic-failover (claim C9): RDMA over two planes when one fails. Every endpoint's NIC has a port on
// each plane of a dual-plane fabric of composed Lingyun ASICs; each sender e(2i) WRITEs to its
// partner e(2i+1) over failover.qps QPs, QP j on plane j mod 2. Mid-transfer, plane 0 fails where
// one pair meets it, or all of it, in five designs side by side:
//  - none:         no failure, the reference;
//  - cut_sender:   e0's link to plane 0 goes dark for good: e0's PCS loses lock, its port is down
//                  after nic.failover.link_down_us, and its QPs there move;
//  - cut_receiver: e1's link to plane 0 goes dark for good: e0's link is fine, so e0 finds out
//                  when its QP's packets go unacknowledged for nic.failover.path_timeout_us;
//  - flap_sender:  e0's link to plane 0 dark for failover.flap_us, then its CDR relocks;
//  - plane_down:   plane 0 fails (its switch): every endpoint's link to it goes dark for good.
// Measured, per QP that moved: when the loss was found (detection), when its first packet went on
// the other plane (switch-over), when everything it had sent before was acknowledged (drain);
// restore = from the failure to drained. Also: packets sent again, frames lost in the fabric,
// completion times against the reference, and every byte checked at its address: the scoreboard
// fails the run for a byte lost, wrong or written twice.
#include <algorithm>
#include <deque>
#include <memory>

#include <fmt/format.h>

#include "tb/lib/nic_rig.hpp"
#include "tb/lib/scenario.hpp"

namespace xy {
namespace {

enum class Failure { kNone, kCut, kFlap };
constexpr int kEveryEndpoint = -1;
struct Design {
  const char* name;
  Failure failure;
  int endpoint;  // whose link to plane 0 fails (kEveryEndpoint: plane 0's switches fail)
};
const Design kDesigns[] = {{"none", Failure::kNone, 0},
                           {"cut_sender", Failure::kCut, 0},
                           {"cut_receiver", Failure::kCut, 1},
                           {"flap_sender", Failure::kFlap, 0},
                           {"plane_down", Failure::kCut, kEveryEndpoint}};

class NicFailover : public NicTestbench {
 public:
  explicit NicFailover(RunContext& ctx) {
    Config& c = ctx.config;
    pairs_ = static_cast<int>(c.integer("failover.pairs", 2, "pairs", 1, 256, "senders, each WRITEing to a partner"));
    qps_ = static_cast<int>(c.integer("failover.qps", 2, "QPs", 1, 64, "QPs from each sender, QP j on plane j mod 2"));
    message_ = static_cast<std::uint64_t>(c.integer("failover.message_kib", 4096, "KiB", 1, 1 << 20,
                                                    "each QP's one WRITE")) *
               1024;
    fail_at_ = from_us(c.real("failover.at_us", 10, "us", 0, 1e6, "when plane 0 fails (from time 0)"));
    const Time flap =
        from_us(c.real("failover.flap_us", 50, "us", 1e-3, 1e6, "flap_sender: how long the link is dark"));
    c.default_to("topology.endpoints", std::to_string(2 * pairs_), "nic-failover (the senders and their partners)");
    topology_ = *lingyun::Topology::declare(c, 2 * pairs_, false, "dual-plane");
    const std::vector<int> ends = topology_.endpoints();
    if (static_cast<int>(ends.size()) < 2 * pairs_)
      throw ConfigError(fmt::format("failover.pairs = {}: needs {} endpoints, the topology has {}", pairs_, 2 * pairs_,
                                    ends.size()));
    for (int e = 0; e < 2 * pairs_; ++e)
      if (links_of(e).size() < 2)
        throw ConfigError(fmt::format("topology = {}: endpoint {} has {} link(s); nic-failover needs two planes, a port "
                                      "on each (allowed: dual-plane, or a file giving every endpoint two links)",
                                      topology_.name, topology_.nodes[ends[e]].name, links_of(e).size()));
    // Each plane is one switch, and no two flows meet at its outputs: no queue to mark, schedule
    // or share out, one path to hash onto (the NICs' congestion control and entropy stay off).
    for (const char* key : {"switch.when_full", "switch.dwrr_quantum_bytes", "switch.cell_bytes", "switch.arbiter",
                             "switch.iterations", "switch.speedup", "switch.dt_alpha"})
      c.fix(key, "nic-failover, whose flows never meet at a switch output");
    c.fix("nic.reorder.window", "nic-failover: one path a plane, nothing overtakes");
    const sw::SwitchParams sp = sw::SwitchParams::declare(c, "switch");
    const lingyun::PortParams pp = lingyun::PortParams::declare(c, sp.vcs);
    lingyun::fix_switch_keys_of_composed_ports(c, "nic-failover");
    nic::NicParams::Uses uses;
    uses.switched = false;
    uses.planes = true;
    const nic::NicParams np = nic::NicParams::declare(c, pp.line_gbps() * 1e9, uses);
    check_frames_fit(np, pp, false);
    links_up_ = pp.phy.cdr_lock_cycles * pp.phy.period();
    if (fail_at_ < links_up_)
      throw ConfigError(fmt::format("failover.at_us = {:g}: allowed from {:g} on (the links lock at "
                                    "port.phy.cdr_lock_us)",
                                    to_us(fail_at_), to_us(links_up_)));
    for (const Design& d : kDesigns) {
      lingyun::Topology t = topology_;
      for (int e = 0; e < static_cast<int>(ends.size()) && d.failure != Failure::kNone; ++e) {
        if (d.endpoint != kEveryEndpoint && d.endpoint != e) continue;
        lingyun::Topology::Link& l = t.links[static_cast<std::size_t>(links_of(e).front())];
        l.dark_from = fail_at_;
        l.dark_until = d.failure == Failure::kCut ? lingyun::Topology::Link::kForever : fail_at_ + flap;
      }
      Run& r = runs_.emplace_back();
      r.design = d;
      r.rig = std::make_unique<NicRig>(fmt::format("top.{}", d.name), fmt::format("nic_failover_{}", d.name), t, sp, pp,
                                       std::vector<nic::NicParams>(ends.size(), np), ctx.stats, pool_, ctx);
      follow(d.name, *r.rig);
      for (int i = 0; i < pairs_; ++i)
        for (int j = 0; j < qps_; ++j) write(r, 2 * i, 2 * i + 1, j);
    }
  }

  nlohmann::json summary() const override {
    nlohmann::json s;
    s["topology"] = runs_.front().rig->fabric->summary();
    s["pairs"] = pairs_;
    s["qps_per_pair"] = qps_;
    s["message_bytes"] = message_;
    s["fail_at_us"] = to_us(fail_at_);
    s["provenance"] = {{"detection_us", "measured: the failure to the NIC's verdict (its timeout configured)"},
                       {"switch_over_us", "measured: the verdict to the QP's first packet on the other plane"},
                       {"drain_us", "measured: that packet to everything sent before the verdict acknowledged"},
                       {"restore_us", "measured: the failure to drained"}};
    for (const Run& r : runs_) {
      std::vector<double> fct;
      std::uint64_t retx = 0, moved = 0;
      double detection = 0, switch_over = 0, drain = 0, restore = 0;
      std::string found_by;
      for (const Flow& f : r.flows) {
        const nic::QueuePair& qp = sender(r, f);
        fct.push_back(to_us(qp.completions().front().at - links_up_));
        retx += qp.stats().retransmitted_packets;
        for (const nic::Nic::Failover& m : r.rig->nics[f.src]->failovers(f.qpn)) {
          ++moved;
          // The QP's worst restore, with its parts (pending: it completed before the event).
          const double rs = m.drained == nic::Nic::kPending ? 0 : to_us(m.drained - fail_at_);
          if (rs < restore) continue;
          restore = rs;
          detection = to_us(m.found - fail_at_);
          switch_over = m.resumed == nic::Nic::kPending ? 0 : to_us(m.resumed - m.found);
          drain = m.drained == nic::Nic::kPending || m.resumed == nic::Nic::kPending ? 0 : to_us(m.drained - m.resumed);
          found_by = m.by == nic::Nic::FoundBy::kLinkDown      ? "link down (PCS lost lock)"
                     : m.by == nic::Nic::FoundBy::kPathTimeout ? "path timeout (no ACK)"
                                                               : "retransmit timeout";
        }
      }
      std::sort(fct.begin(), fct.end());
      std::uint64_t lost_bytes = 0;
      for (const auto& m : r.rig->memories) lost_bytes += m->expected() - m->covered();
      s[r.design.name] = {
          {"qps_moved", moved},
          {"found_by", found_by},
          {"detection_us", detection},
          {"switch_over_us", switch_over},
          {"drain_us", drain},
          {"restore_us", restore},
          {"retransmitted_packets", retx},
          {"frames_lost_in_fabric", r.rig->fabric->frames_lost_on_links() + r.rig->drops()},
          {"bytes_lost_at_application", lost_bytes},
          {"fct_p50_us", percentile(fct, 0.5)},
          {"fct_max_us", fct.back()},
      };
    }
    double worst = 0;
    std::uint64_t lost = 0;
    for (const Design& d : kDesigns) {
      worst = std::max(worst, s[d.name]["restore_us"].get<double>());
      lost += s[d.name]["bytes_lost_at_application"].get<std::uint64_t>();
    }
    s["claim_c9"] = {{"worst_restore_us", worst}, {"bytes_lost_at_application", lost}, {"under_1ms", worst < 1000}};
    return s;
  }
  std::string report() const override {
    const nlohmann::json s = summary();
    std::string out = fmt::format("  {}\n  {} pairs x {} QPs, one WRITE of {} KiB each; plane 0 fails at {:.1f} us\n",
                                  s["topology"].get<std::string>(), pairs_, qps_, message_ / 1024, to_us(fail_at_));
    out += fmt::format("  {:<13} {:>5} {:>9} {:>8} {:>8} {:>8} {:>9} {:>6} {:>9} {:>9}  {}\n", "design", "moved",
                       "detect", "switch", "drain", "restore", "resent", "lost", "FCT p50", "FCT max", "found by");
    for (const Design& d : kDesigns) {
      const auto& row = s[d.name];
      out += fmt::format("  {:<13} {:>5} {:>6.2f} us {:>5.2f} us {:>5.2f} us {:>5.2f} us {:>9} {:>6} {:>6.1f} us "
                         "{:>6.1f} us  {}\n",
                         d.name, row["qps_moved"].get<std::uint64_t>(), row["detection_us"].get<double>(),
                         row["switch_over_us"].get<double>(), row["drain_us"].get<double>(),
                         row["restore_us"].get<double>(), row["retransmitted_packets"].get<std::uint64_t>(),
                         row["frames_lost_in_fabric"].get<std::uint64_t>(), row["fct_p50_us"].get<double>(),
                         row["fct_max_us"].get<double>(), row["found_by"].get<std::string>());
    }
    out += fmt::format("  C9: worst restore {:.2f} us: {} 1 ms (REPS re-routes in < 100 us)\n",
                       s["claim_c9"]["worst_restore_us"].get<double>(),
                       s["claim_c9"]["under_1ms"].get<bool>() ? "under" : "NOT under");
    return out;
  }

 private:
  struct Flow {
    int src, dst;
    std::uint32_t qpn;
  };
  struct Run {
    Design design;
    std::unique_ptr<NicRig> rig;
    std::vector<Flow> flows;
  };
  // The links of endpoint e, in port order (port k on plane k).
  std::vector<int> links_of(int e) const {
    const int node = topology_.endpoints()[static_cast<std::size_t>(e)];
    std::vector<int> links;
    for (std::size_t i = 0; i < topology_.links.size(); ++i)
      if (topology_.links[i].a == node || topology_.links[i].b == node) links.push_back(static_cast<int>(i));
    return links;
  }
  // QP j of the pair: one WRITE of message_ bytes from src's 0 to dst's j * message_, on plane j mod 2.
  void write(Run& r, int src, int dst, int j) {
    const auto qpn = static_cast<std::uint32_t>(0x100 + r.flows.size());
    r.flows.push_back({src, dst, qpn});
    nic::Nic& s = *r.rig->nics[static_cast<std::size_t>(src)];
    nic::Nic& d = *r.rig->nics[static_cast<std::size_t>(dst)];
    s.create_qp(qpn, static_cast<std::uint32_t>(dst), qpn);
    d.create_qp(qpn, static_cast<std::uint32_t>(src), qpn);
    s.use_plane(qpn, j % s.planes());
    d.use_plane(qpn, j % d.planes());
    const std::uint64_t at = static_cast<std::uint64_t>(j) * message_;
    r.rig->memories[static_cast<std::size_t>(dst)]->expect(at, message_, static_cast<std::uint32_t>(src), 0);
    s.post_send(qpn, {qpn, nic::Verb::kWrite, 0, at, 0, static_cast<std::uint32_t>(message_)});
    await(r.design.name, s.qp(qpn), 1, fmt::format("e{} -> e{} QP {:#x}", src, dst, qpn));
  }
  static const nic::QueuePair& sender(const Run& r, const Flow& f) { return r.rig->nics[f.src]->qp(f.qpn); }

  PacketPool pool_;
  lingyun::Topology topology_;
  std::deque<Run> runs_;
  int pairs_ = 0, qps_ = 0;
  std::uint64_t message_ = 0;
  Time fail_at_ = 0, links_up_ = 0;
};

}  // namespace

XY_TESTBENCH(NicFailover, 706, "nic-failover",
             "claim C9: dual-plane RDMA, one plane cut or flapped mid-transfer: detection, switch-over, drain")

}  // namespace xy
