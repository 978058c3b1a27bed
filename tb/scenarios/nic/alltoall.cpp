// nic-alltoall (claim C7's all-to-all): every endpoint WRITEs one message to every other, all at
// once, over a leaf-spine of composed Lingyun ASICs, RoCEv2 end to end with real bytes, for four
// designs side by side: DCQCN over PFC (the baseline) and over CBFC, ENCC over PFC, and ENCC with
// no link flow control (where loss can happen). Measured: goodput (the bytes moved over the time the last
// WRITE completed, against every endpoint's line), drops and their ratio to the frames sent, the
// switches' buffer (p99 as packets found it, and peak), PFC pauses, NAKs and resent bytes, and
// the WRITEs' completion times, from the links coming up. Every byte checked at its address.
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
  link::FcMode fc;
  bool encc;
};
const Design kDesigns[] = {{"dcqcn_pfc", link::FcMode::kPfc, false},
                           {"dcqcn_cbfc", link::FcMode::kCbfc, false},
                           {"encc_pfc", link::FcMode::kPfc, true},
                           {"encc", link::FcMode::kNone, true}};

class NicAlltoall : public NicTestbench {
 public:
  explicit NicAlltoall(RunContext& ctx) {
    Config& c = ctx.config;
    const int wanted = static_cast<int>(
        c.integer("alltoall.endpoints", 16, "endpoints", 2, 1024, "endpoints, each WRITEing to every other"));
    message_ = static_cast<std::uint64_t>(
                   c.integer("alltoall.message_kib", 256, "KiB", 1, 16384, "each WRITE, one per ordered pair")) *
               1024;
    topology_ = *lingyun::Topology::declare(c, wanted, false, "leaf-spine");
    endpoints_ = static_cast<int>(topology_.endpoints().size());
    if (endpoints_ < wanted)
      throw ConfigError(fmt::format("alltoall.endpoints = {}: the topology has {}", wanted, endpoints_));
    endpoints_ = wanted;
    c.default_to("switch.ecn.on", "true", "nic-alltoall (DCQCN reacts to the marks)");
    const sw::SwitchParams sp = sw::SwitchParams::declare(c, "switch");
    cell_bytes_ = sp.cell_bytes;
    const lingyun::PortParams base = lingyun::PortParams::declare(c, sp.vcs);
    c.fix("port.fc", "nic-alltoall, which runs every design");
    c.fix("nic.cc", "nic-alltoall, which runs every design");
    lingyun::fix_switch_keys_of_composed_ports(c, "nic-alltoall");
    c.fix("switch.when_full", "nic-alltoall: PFC pauses before a buffer fills, and without it the switches drop");
    for (const char* key : {"switch.vcs", "switch.dwrr_quantum_bytes"})
      c.fix(key, "nic-alltoall, whose traffic is all on one VC");
    const nic::NicParams np = nic::NicParams::declare(c, base.line_gbps() * 1e9, {});
    check_frames_fit(np, base, true);  // ENCC's frames carry the INT trailer
    line_gbps_ = base.line_gbps();
    links_up_ = base.phy.cdr_lock_cycles * base.phy.period();
    for (const Design& d : kDesigns) {
      lingyun::PortParams pp = base;
      pp.fc = d.fc;
      sw::SwitchParams s = sp;
      s.wait_when_full = false;
      std::vector<nic::NicParams> per_endpoint(topology_.endpoints().size(), np);
      for (auto& n : per_endpoint) {
        n.dcqcn = !d.encc;
        n.encc = d.encc;
        n.telemetry = n.encc || n.iglb;
      }
      Run& r = runs_.emplace_back();
      r.design = d.name;
      r.rig = std::make_unique<NicRig>(fmt::format("top.{}", d.name), fmt::format("nic_alltoall_{}", d.name), topology_,
                                       s, pp, per_endpoint, ctx.stats, pool_, ctx);
      follow(d.name, *r.rig);
      for (int src = 0; src < endpoints_; ++src)
        for (int dst = 0; dst < endpoints_; ++dst)
          if (src != dst) write(r, src, dst);
    }
  }

  nlohmann::json summary() const override {
    nlohmann::json s;
    s["topology"] = runs_.front().rig->fabric->summary();
    s["endpoints"] = endpoints_;
    s["message_bytes"] = message_;
    s["provenance"] = {{"endpoints", "configured"}, {"message_bytes", "configured"}};
    for (const Run& r : runs_) {
      std::vector<double> fct;
      std::uint64_t frames = 0, retx = 0, naks = 0;
      for (const Flow& f : r.flows) {
        const nic::QueuePair& qp = sender(r, f);
        fct.push_back(to_us(qp.completions().front().at - links_up_));
        frames += qp.stats().packets_sent;
        retx += qp.stats().retransmitted_bytes;
        naks += r.rig->nics[f.dst]->qp(f.qpn).stats().naks_sent;
      }
      std::sort(fct.begin(), fct.end());
      std::uint64_t pauses = 0, peak_cells = 0, p99_cells = 0;
      for (const auto& link : r.rig->fabric->links())
        for (int side = 0; side < 2; ++side) pauses += link->fc(side).xoffs();
      for (const auto& sw : r.rig->fabric->switches()) {
        peak_cells = std::max(peak_cells, sw->peak_buffer_cells());
        p99_cells = std::max(p99_cells, sw->admitted_buffer_cells(0.99));
      }
      const double bytes = static_cast<double>(message_) * static_cast<double>(r.flows.size());
      const double goodput = bytes * 8 / (fct.back() * 1e3) / (line_gbps_ * endpoints_);
      const std::uint64_t drops = r.rig->drops();
      s[r.design] = {
          {"goodput_ratio", goodput},
          {"drop_ratio", frames ? static_cast<double>(drops) / static_cast<double>(frames) : 0.0},
          {"drops", drops},
          {"queue_p99_bytes", p99_cells * cell_bytes_},
          {"peak_buffer_bytes", peak_cells * cell_bytes_},
          {"pfc_pauses", pauses},
          {"naks", naks},
          {"retx_bytes", retx},
          {"fct_p50_us", percentile(fct, 0.5)},
          {"fct_p99_us", percentile(fct, 0.99)},
          {"fct_max_us", fct.back()},
      };
      s["claim_c7"][r.design + "_bar_met"] = goodput > 0.90 && s[r.design]["drop_ratio"].get<double>() < 1e-6;
    }
    return s;
  }
  std::string report() const override {
    const nlohmann::json s = summary();
    std::string out = fmt::format("  {}\n  {} endpoints, each WRITEing {} KiB to every other at {:.0f} Gb/s\n",
                                  s["topology"].get<std::string>(), endpoints_, message_ / 1024, line_gbps_);
    out += fmt::format("  {:<10} {:>7} {:>6} {:>9} {:>9} {:>7} {:>5} {:>9} {:>10} {:>10}\n", "design", "goodput",
                       "drops", "p99 KiB", "peak KiB", "pauses", "NAKs", "retx KiB", "FCT p50", "FCT p99");
    for (const Design& d : kDesigns) {
      const auto& row = s[d.name];
      out += fmt::format("  {:<10} {:>7.3f} {:>6} {:>9.1f} {:>9.1f} {:>7} {:>5} {:>9.1f} {:>7.1f} us {:>7.1f} us\n", d.name,
                         row["goodput_ratio"].get<double>(), row["drops"].get<std::uint64_t>(),
                         row["queue_p99_bytes"].get<std::uint64_t>() / 1024.0,
                         row["peak_buffer_bytes"].get<std::uint64_t>() / 1024.0, row["pfc_pauses"].get<std::uint64_t>(),
                         row["naks"].get<std::uint64_t>(), row["retx_bytes"].get<std::uint64_t>() / 1024.0,
                         row["fct_p50_us"].get<double>(), row["fct_p99_us"].get<double>());
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
  };
  // One WRITE of message_ bytes from src's 0 to dst's src * message_, on a QP of its own.
  void write(Run& r, int src, int dst) {
    const auto qpn = static_cast<std::uint32_t>(0x100 + r.flows.size());
    r.flows.push_back({src, dst, qpn});
    r.rig->nics[src]->create_qp(qpn, static_cast<std::uint32_t>(dst), qpn);
    r.rig->nics[dst]->create_qp(qpn, static_cast<std::uint32_t>(src), qpn);
    const std::uint64_t at = static_cast<std::uint64_t>(src) * message_;
    r.rig->memories[dst]->expect(at, message_, static_cast<std::uint32_t>(src), 0);
    r.rig->nics[src]->post_send(qpn, {qpn, nic::Verb::kWrite, 0, at, 0, static_cast<std::uint32_t>(message_)});
    await(r.design, r.rig->nics[src]->qp(qpn), 1, fmt::format("e{} -> e{}", src, dst));
  }
  static const nic::QueuePair& sender(const Run& r, const Flow& f) { return r.rig->nics[f.src]->qp(f.qpn); }

  PacketPool pool_;
  lingyun::Topology topology_;
  std::deque<Run> runs_;
  int endpoints_ = 0;
  std::uint64_t message_ = 0;
  double line_gbps_ = 0;
  Time links_up_ = 0;
  std::uint64_t cell_bytes_ = 0;
};

}  // namespace

XY_TESTBENCH(NicAlltoall, 705, "nic-alltoall",
             "claim C7's all-to-all: every endpoint WRITEs to every other, DCQCN over PFC or CBFC, ENCC")

}  // namespace xy
