// nic-spray (claim C6 completed): elephant flows between two leaves over paths of unequal delay,
// RoCEv2 end to end with real bytes. The senders e0..e(S-1) each run `spray.qps` QPs to their
// partner on the far side (the last S endpoints), every QP a train of WRITEs; the paths are the
// spines, and spine k's cables are k x spray.skew_m longer than spine 0's, so that packets of
// one flow over different spines arrive out of order. Three designs side by side:
//  - ecmp:      one UDP source port per QP; the switches hash it (elephants that collide stay so);
//  - spray:     a new source port every data packet, no reorder window: every packet that
//               overtakes another is dropped and NAKed, Go-Back-N resends (what a ConnectX-class
//               RC receiver does);
//  - spray_rob: the same spraying into a reorder window (nic.reorder.window) that keeps what
//               overtakes, places WRITE payload at its address on arrival and delivers in order.
// Measured: the load on the senders' leaf's uplinks (data frames, max over mean), completion
// times, the switches' buffer peak, the reorder window's occupancy, NAKs and resent bytes; the application's view is
// checked: each message delivered once, in posting order, with all its bytes in memory when it
// is (bytes delivered otherwise are counted as out of order, and fail the run).
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
  bool spray, window;
};
const Design kDesigns[] = {{"ecmp", false, true}, {"spray", true, false}, {"spray_rob", true, true}};

class NicSpray : public NicTestbench {
 public:
  explicit NicSpray(RunContext& ctx) {
    Config& c = ctx.config;
    senders_ = static_cast<int>(c.integer("spray.senders", 8, "endpoints", 1, 512, "senders, each to a partner on the far side"));
    qps_ = static_cast<int>(c.integer("spray.qps", 4, "QPs", 1, 64, "QPs (flows) from each sender to its partner"));
    messages_ = static_cast<int>(c.integer("spray.messages", 8, "WRITEs", 1, 4096, "WRITEs each QP posts, in order"));
    message_ = static_cast<std::uint64_t>(c.integer("spray.message_kib", 128, "KiB", 1, 16384, "each WRITE's size")) * 1024;
    c.default_to("topology.endpoints", std::to_string(2 * senders_), "nic-spray (the senders and their partners)");
    c.default_to("topology.spines", "8", "nic-spray (8 paths between the leaves)");
    topology_ = *lingyun::Topology::declare(c, 2 * senders_, false, "leaf-spine");
    if (topology_.name == "leaf-spine") {  // a preset: the paths' delays made unequal here
      const double skew = c.real("spray.skew_m", 10, "m", 0, 1e5, "spine k's cables are k x this longer than spine 0's");
      for (auto& l : topology_.links)
        for (int n : {l.a, l.b})
          if (const std::string& name = topology_.nodes[n].name; name.rfind("spine", 0) == 0)
            l.cable_m += skew * std::stoi(name.substr(5));
    }
    const int endpoints = static_cast<int>(topology_.endpoints().size());
    if (endpoints < 2 * senders_)
      throw ConfigError(fmt::format("spray.senders = {}: needs {} endpoints (each sender's partner apart), the "
                                    "topology has {}",
                                    senders_, 2 * senders_, endpoints));
    c.default_to("nic.reorder.window", "256", "nic-spray (its spray_rob design)");
    c.fix("nic.entropy", "nic-spray, which runs every design");
    c.default_to("switch.ecn.on", "true", "nic-spray (DCQCN reacts to the marks)");
    c.fix("switch.when_full", "nic-spray: its ports' flow control holds back before a buffer fills, and without it the "
                              "switches drop");
    c.fix("switch.dwrr_quantum_bytes", "nic-spray, whose traffic is all on one VC");
    const sw::SwitchParams sp = sw::SwitchParams::declare(c, "switch");
    cell_bytes_ = sp.cell_bytes;
    const lingyun::PortParams pp = lingyun::PortParams::declare(c, sp.vcs);
    lingyun::fix_switch_keys_of_composed_ports(c, "nic-spray");
    nic::NicParams::Uses uses;
    uses.iglb = false;  // nic.entropy is its designs'
    const nic::NicParams np = nic::NicParams::declare(c, pp.line_gbps() * 1e9, uses);
    check_frames_fit(np, pp, false);
    if (np.qp.selective_repeat)
      throw ConfigError("nic.retransmit = selective: nic-spray's spray design has no reorder window to keep what "
                        "follows a hole; allowed: gbn");
    line_gbps_ = pp.line_gbps();
    links_up_ = pp.phy.cdr_lock_cycles * pp.phy.period();
    window_ = np.qp.reorder_window;
    for (const Design& d : kDesigns) {
      std::vector<nic::NicParams> per_endpoint(static_cast<std::size_t>(endpoints), np);
      for (auto& n : per_endpoint) {
        n.spray = d.spray;
        if (!d.window) n.qp.reorder_window = 0;
      }
      Run& r = runs_.emplace_back();
      r.design = d.name;
      r.window = d.window ? window_ : 0;
      r.rig = std::make_unique<NicRig>(fmt::format("top.{}", d.name), fmt::format("nic_spray_{}", d.name), topology_, sp,
                                       pp, per_endpoint, ctx.stats, pool_, ctx);
      follow(d.name, *r.rig);
      for (int s = 0; s < senders_; ++s)
        for (int q = 0; q < qps_; ++q) add_flow(r, s, endpoints - senders_ + s);
    }
  }

  void check() const override {
    NicTestbench::check();
    for (const Run& r : runs_)
      if (const std::uint64_t late = out_of_order_bytes(r))
        throw CheckFailure(fmt::format("{}: {} bytes delivered to the application out of order", r.design, late));
  }

  nlohmann::json summary() const override {
    nlohmann::json s;
    s["topology"] = runs_.front().rig->fabric->summary();
    s["flows"] = senders_ * qps_;
    s["flow_bytes"] = message_ * static_cast<std::uint64_t>(messages_);
    s["provenance"] = {{"flows", "configured"}, {"flow_bytes", "configured"}};
    for (const Run& r : runs_) {
      std::vector<double> fct;
      nic::QpStats q;
      std::uint64_t retx = 0;
      std::uint32_t occupancy_p99 = 0;
      for (const Flow& f : r.flows) {
        const auto& done = sender(r, f).completions();
        if (done.size() == static_cast<std::size_t>(messages_)) fct.push_back(to_us(done.back().at - links_up_));
        retx += sender(r, f).stats().retransmitted_bytes;
        const nic::QueuePair& rx = r.rig->nics[f.dst]->qp(f.qpn);
        q.naks_sent += rx.stats().naks_sent;
        q.reordered += rx.stats().reordered;
        q.placed_early += rx.stats().placed_early;
        q.out_of_order += rx.stats().out_of_order;
        q.reorder_peak = std::max(q.reorder_peak, rx.stats().reorder_peak);
        if (r.window) occupancy_p99 = std::max(occupancy_p99, rx.reorder_occupancy(0.99));
      }
      std::sort(fct.begin(), fct.end());
      std::uint64_t peak_cells = 0;
      for (const auto& sw : r.rig->fabric->switches()) peak_cells = std::max(peak_cells, sw->peak_buffer_cells());
      const std::vector<std::uint64_t> load = r.rig->uplink_frames(topology_, 0);
      double total = 0, worst = 0;
      for (std::uint64_t l : load) {
        total += static_cast<double>(l);
        worst = std::max(worst, static_cast<double>(l));
      }
      const double bytes = static_cast<double>(message_) * messages_ * senders_ * qps_;
      s[r.design] = {
          {"uplink_frames", load},
          {"max_over_mean_link_load", total > 0 ? worst / (total / static_cast<double>(load.size())) : 0.0},
          {"fct_p50_us", percentile(fct, 0.5)},
          {"fct_p99_us", percentile(fct, 0.99)},
          {"flows_done", fct.size()},
          {"fct_max_us", fct.empty() ? 0.0 : fct.back()},
          {"goodput_ratio", fct.size() == r.flows.size() ? bytes * 8 / (fct.back() * 1e3) / (line_gbps_ * senders_) : 0.0},
          {"peak_buffer_bytes", peak_cells * cell_bytes_},
          {"arrived_out_of_order", q.out_of_order},
          {"reordered", q.reordered},
          {"placed_early", q.placed_early},
          {"reorder_window", r.window},
          {"reorder_occupancy_p99", occupancy_p99},
          {"reorder_occupancy_peak", q.reorder_peak},
          {"naks", q.naks_sent},
          {"retx_bytes", retx},
          {"drops", r.rig->drops()},
          {"app_out_of_order_bytes", out_of_order_bytes(r)},
      };
    }
    return s;
  }

  std::string report() const override {
    const nlohmann::json s = summary();
    std::string out = fmt::format("  {}\n  {} senders x {} QPs, {} WRITEs of {} KiB each, at {:.0f} Gb/s\n",
                                  s["topology"].get<std::string>(), senders_, qps_, messages_, message_ / 1024, line_gbps_);
    out += fmt::format("  {:<10} {:>9} {:>9} {:>9} {:>9} {:>8} {:>7} {:>7} {:>6} {:>9}\n", "design", "max/mean", "FCT p50",
                       "FCT p99", "FCT max", "goodput", "ROB p99", "ROB max", "NAKs", "retx KiB");
    for (const Design& d : kDesigns) {
      const auto& row = s[d.name];
      out += fmt::format("  {:<10} {:>9.3f} {:>6.1f} us {:>6.1f} us {:>6.1f} us {:>8.3f} {:>7} {:>7} {:>6} {:>9.1f}\n", d.name,
                         row["max_over_mean_link_load"].get<double>(), row["fct_p50_us"].get<double>(),
                         row["fct_p99_us"].get<double>(), row["fct_max_us"].get<double>(),
                         row["goodput_ratio"].get<double>(), row["reorder_occupancy_p99"].get<std::uint32_t>(),
                         row["reorder_occupancy_peak"].get<std::uint32_t>(), row["naks"].get<std::uint64_t>(),
                         row["retx_bytes"].get<std::uint64_t>() / 1024.0);
    }
    return out;
  }

 private:
  struct Flow {
    int src, dst;
    std::uint32_t qpn;
    std::uint64_t base;  // where its WRITEs land at dst, one after another
  };
  struct Run {
    std::string design;
    std::unique_ptr<NicRig> rig;
    std::vector<Flow> flows;
    std::uint32_t window = 0;  // the receivers' reorder window, packets
    std::deque<DeliveryOrder> deliveries;  // each flow's, as its receiver sees them (stable: they hold `this`)
  };

  // A QP from src to dst posting its WRITEs back to back (from src's 0 to dst's `base` on), and
  // the application's check of what the receiver delivers.
  void add_flow(Run& r, int src, int dst) {
    const auto qpn = static_cast<std::uint32_t>(0x100 + r.flows.size());
    const std::uint64_t span = message_ * static_cast<std::uint64_t>(messages_);
    const Flow& f = r.flows.emplace_back(Flow{src, dst, qpn, (qpn - 0x100) * span});
    r.rig->nics[src]->create_qp(qpn, static_cast<std::uint32_t>(dst), qpn);
    nic::QueuePair& rx = r.rig->nics[dst]->create_qp(qpn, static_cast<std::uint32_t>(src), qpn);
    r.rig->memories[dst]->expect(f.base, span, static_cast<std::uint32_t>(src), 0);
    r.deliveries.emplace_back(rx, *r.rig->memories[dst], f.base);
    for (int m = 0; m < messages_; ++m) {
      const std::uint64_t offset = static_cast<std::uint64_t>(m) * message_;
      r.rig->nics[src]->post_send(qpn, {static_cast<std::uint64_t>(m), nic::Verb::kWrite, offset, f.base + offset, 0,
                                        static_cast<std::uint32_t>(message_)});
    }
    await(r.design, r.rig->nics[src]->qp(qpn), static_cast<std::size_t>(messages_), fmt::format("a WRITE of e{}", src));
  }
  static const nic::QueuePair& sender(const Run& r, const Flow& f) { return r.rig->nics[f.src]->qp(f.qpn); }
  static std::uint64_t out_of_order_bytes(const Run& r) {
    std::uint64_t n = 0;
    for (const DeliveryOrder& d : r.deliveries) n += d.out_of_order_bytes();
    return n;
  }
  PacketPool pool_;
  lingyun::Topology topology_;
  std::deque<Run> runs_;
  int senders_ = 0, qps_ = 0, messages_ = 0;
  std::uint64_t message_ = 0;
  double line_gbps_ = 0;
  Time links_up_ = 0;
  std::uint32_t window_ = 0;
  std::uint64_t cell_bytes_ = 0;
};

}  // namespace

XY_TESTBENCH(NicSpray, 710, "nic-spray",
             "claim C6 completed: elephants over unequal paths, ECMP vs spraying with and without a reorder window")

}  // namespace xy
