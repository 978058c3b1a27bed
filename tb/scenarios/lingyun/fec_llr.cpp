// lingyun-fec-llr (claims C2 + C4): the seed's reason for a light FEC with LLR. Hosts on a
// leaf-spine path (host -> leaf -> spine -> leaf -> host, every hop a composed Lingyun port) send
// to each other at the same pre-FEC BER, for three port designs side by side: KP4 RS(544,514)
// without LLR (frames its FEC cannot correct are lost on the hop and resent end to end), the light
// RS(272,257+1) with LLR, and no FEC with LLR. Every design has the hosts' end-to-end Go-Back-N
// above its links, as an RDMA transport would be (with LLR it has nothing to do but for frames a
// FLUSH dropped), so the three differ only in their ports. Latency percentiles, goodput, replays
// per hop and end-to-end resends, and frames lost, each traced to the codewords that failed.
#include <cmath>
#include <deque>
#include <memory>

#include <fmt/format.h>

#include "tb/lib/frames.hpp"
#include "tb/lib/fabric_rig.hpp"
#include "tb/lib/figure.hpp"
#include "tb/lib/latency_csv.hpp"
#include "tb/lib/scenario.hpp"

namespace xy {
namespace {

// The path host -> leaf -> spine -> leaf -> host: a leaf-spine of two leaves on one spine, one
// host on each leaf, cables from topology.cable_m and topology.spine_cable_m.
lingyun::Topology lingyun_fec_llr_topology(Config& c) {
  const double cable = c.real("topology.cable_m", 2, "m", 0, 1e6, "host to leaf cable");
  const double spine_cable = c.real("topology.spine_cable_m", 10, "m", 0, 1e6, "leaf to spine cable");
  return lingyun::Topology::leaf_spine(2, 2, 1, 1, cable, spine_cable);
}

struct Design {
  const char* name;
  const char* fec;
  bool llr;
};
constexpr Design kDesigns[] = {{"rs544", "rs544", false}, {"rs272_llr", "rs272", true}, {"none_llr", "none", true}};

class LingyunFecLlr : public Testbench {
 public:
  explicit LingyunFecLlr(RunContext& ctx) : stats_(ctx.stats) {
    Config& c = ctx.config;
    sw::SwitchParams sp = sw::SwitchParams::declare(c, "switch");
    const lingyun::PortParams base = lingyun::PortParams::declare(c, sp.vcs);
    for (const char* key : {"port.fec", "port.interleave", "port.llr"})
      c.fix(key, "lingyun-fec-llr, which runs each design's FEC and LLR (fec_llr.design picks one design)");
    lingyun::fix_switch_keys_of_composed_ports(c, "lingyun-fec-llr");
    // Two hosts, one path: no two flows meet at a switch's output, so no queue forms.
    for (const char* key : {"switch.arbiter", "switch.cell_bytes", "switch.dt_alpha", "switch.dwrr_quantum_bytes",
                            "switch.iterations", "switch.when_full"})
      c.fix(key, "lingyun-fec-llr, whose two hosts send to each other over one path: no queue forms");
    Host::Traffic traffic;
    traffic.load = c.real("traffic.load", 0.5, "fraction", 0.001, 1, "offered load of each host, fraction of its line");
    const FrameSizes sizes = FrameSizes::declare(c, {64, 1500}, 64, 9216);
    traffic.min_bytes = sizes.min_bytes;
    traffic.max_bytes = sizes.max_bytes;
    base.check_frame(sizes.max_bytes, "the hosts' largest frame (traffic.max_bytes, FCS included)");
    load_ = traffic.load;
    ber_ = base.phy.errors.ber;
    traffic_us_ = c.real("traffic.us", 200, "us", 0.01, 1e6, "how long the hosts send (200 us: about 23,000 frames, enough for a steady p99.9)");
    traffic.stop_at = static_cast<Cycle>(traffic_us_ * kUs / static_cast<double>(sp.period()));
    const double warmup_us =
        c.real("traffic.warmup_us", std::min(5.0, traffic_us_ / 2), "us", 0, 1e6,
               "latency and goodput count frames made after this (links up, LLR's INIT done); default 5, or "
               "half of traffic.us if that is shorter");
    if (warmup_us >= traffic_us_)
      throw ConfigError(fmt::format("traffic.warmup_us = {}: must be below traffic.us = {}", warmup_us, traffic_us_));
    const lingyun::Topology t = lingyun_fec_llr_topology(c);
    // End to end: Go-Back-N over the path, its timeout above the path's round trip.
    const link::LlrConfig e2e = E2eTransport::declare(c, sp.period(), 8).config;
    const std::string only = c.choice("fec_llr.design", "all", {"all", "rs544", "rs272_llr", "none_llr"},
                                      "run all three designs side by side, or one (a design whose links cannot come "
                                      "up at this BER ends the run; one that stalls is reported so)");
    for (const Design& d : kDesigns) {
      if (only != "all" && only != d.name) continue;
      lingyun::PortParams pp = base;
      pp.phy = base.phy.with_fec(d.fec);
      pp.llr = d.llr;
      runs_.push_back({&d, std::make_unique<FabricRig>(std::string("top.") + d.name, d.name, t, sp, pp, traffic, stats_,
                                                       pool_, ctx, false, &e2e)});
      FabricRig& rig = *runs_.back().rig;
      rig.measure_from = std::max(rig.links_up, static_cast<Time>(warmup_us * kUs));
    }
    summary_line_ = runs_.front().rig->fabric->summary();
    stop_ = traffic.stop_at;
    stall_after_ = ctx.watchdog / 2;
  }

  // Every design has delivered (or given up on) every frame, or stalled.
  bool done() const override {
    bool all = true;
    for (const auto& r : runs_) all = (finished(r) || stalled(r)) && all;
    return all;
  }
  std::uint64_t progress() const override {
    std::uint64_t n = 0;
    for (const auto& r : runs_) n += r.rig->received() + unrecovered(r);
    return n;
  }
  // Traffic is offered until stop_; then the frames still on their way are waited for.
  double done_fraction() const override {
    double least = 1;
    for (const auto& r : runs_) least = std::min(least, static_cast<double>(r.rig->core().now()) / stop_);
    return least;
  }
  std::string waiting_for() const override {
    std::uint64_t sent = 0, left = 0;
    for (const auto& r : runs_) {
      if (r.rig->core().now() < stop_) return "";
      sent += r.rig->sent();
      left += r.rig->sent() - std::min(r.rig->sent(), r.rig->received() + unrecovered(r));
    }
    return fmt::format("the last {} of {} frames in flight", left, sent);
  }
  std::string stall() const override {
    for (const auto& r : runs_)
      if (std::string s = r.rig->fabric->stall(); !s.empty()) return fmt::format("{}: {}", r.design->name, s);
    return "";
  }
  std::string fault() const override {
    for (const auto& r : runs_)
      if (std::string f = r.rig->fabric->link_fault(sim_now()); !f.empty())
        return fmt::format("{}: {}", r.design->name, f);
    return "";
  }
  void check() const override {
    for (const auto& r : runs_) {
      const FabricRig& g = *r.rig;
      if (std::string e = g.error(); !e.empty()) throw CheckFailure(fmt::format("{}: {}", r.design->name, e));
      // Every frame that did not arrive is one LLR flushed or a switch dropped (with end-to-end
      // recovery, none: every one is resent until it arrives), or held where its design stalled.
      // (A flushed frame may have arrived, its ACK lost: flushes bound the losses from above.)
      if (r.stall.empty() && g.missing() > unrecovered(r))
        throw CheckFailure(fmt::format("{}: {} frames missing, {} lost after recovery and counted", r.design->name,
                                       g.missing(), unrecovered(r)));
      // Every frame the MACs rejected was damaged by the PHY: flagged by a failed codeword, or
      // (miscorrected) caught by the FCS alone; so at least as many as the PHY flagged.
      const Figures f = figures(r);
      if (f.bad_fcs < f.phy_bad)
        throw CheckFailure(fmt::format("{}: the PHYs delivered {} frames marked bad but the MACs saw only {} bad FCS",
                                       r.design->name, f.phy_bad, f.bad_fcs));
    }
  }

  nlohmann::json summary() const override {
    nlohmann::json s;
    s["topology"] = summary_line_;
    for (const auto& r : runs_) {
      const Figures f = figures(r);
      const FabricRig& g = *r.rig;
      const double ns = to_ns(g.core().period());
      const auto q = g.latency->quantiles({0.5, 0.99, 0.999});
      // null, not 0, for a design that delivered nothing
      const auto latency_ns = [&](Cycle c) { return g.latency->count() ? nlohmann::json(c * ns) : nlohmann::json(); };
      s[r.design->name] = {
          {"outcome", r.stall.empty() ? "delivered" : "stalled"},
          {"fec", r.design->fec},
          {"llr", r.design->llr},
          {"frames_sent", g.sent()},
          {"frames_delivered", g.received()},
          {"latency_p50_ns", latency_ns(q[0])},
          {"latency_p99_ns", latency_ns(q[1])},
          {"latency_p999_ns", latency_ns(q[2])},
          {"goodput_per_host_gbps", g.goodput_per_host_gbps()},
          {"pre_fec_ber_measured", f.line_bits ? static_cast<double>(f.bit_errors) / static_cast<double>(f.line_bits) : 0.0},
          {"uncorrectable_codewords", f.uncorrectable},
          {"frames_marked_bad_by_phy", f.phy_bad},
          {"frames_bad_fcs", f.bad_fcs},
          {"llr_replays", f.replays},
          {"llr_replays_per_hop", f.replays / static_cast<double>(2 * g.fabric->links().size())},
          {"llr_replayed_frames", f.replayed_frames},
          {"frames_lost_on_links", g.fabric->frames_lost_on_links()},
          {"e2e_resent", resent(g)},
          {"frames_lost_after_recovery", lost(r)},
      };
      // Only a run stopped early has frames still on their way; they are not lost. A design that
      // stalled holds its frames where the stall names.
      if (const std::uint64_t left = g.missing() - lost(r)) s[r.design->name]["frames_in_flight"] = left;
      if (!r.stall.empty()) {
        s[r.design->name]["stall"] = r.stall;
        s[r.design->name]["stalled_at_us"] = to_us(r.stalled_at);
      }
      // A delivered frame's path, stage by stage, mean over the frames (four hops).
      nlohmann::json stages = nlohmann::json::object(), provenance = nlohmann::json::object();
      for (int st = lingyun::kStageMacTx; st < lingyun::kStages; ++st) {
        const std::string key = std::string(lingyun::stage_name(static_cast<Stage>(st))) + "_ns";
        stages[key] = g.arrivals ? nlohmann::json(to_ns(g.stage_time[st]) / static_cast<double>(g.arrivals))
                                 : nlohmann::json();
        provenance[key] = lingyun::stage_provenance(static_cast<Stage>(st));
      }
      s[r.design->name]["path"] = stages;
      s[r.design->name]["provenance"] = provenance;
    }
    s["figures"] = {{"measured", "latency percentiles, goodput, BER, codeword and frame counts, replays"},
                    {"configured", "pre-FEC BER (port.errors.ber), load, cables, pipelines"}};
    return s;
  }

  std::string report() const override {
    const nlohmann::json s = summary();
    std::string out = fmt::format("  {}\n  BER {:g}, {} us of traffic at load {}\n", summary_line_, ber_, traffic_us_,
                                  load_);
    out += fmt::format("  {:<10} {:>9} {:>9} {:>10} {:>10} {:>13} {:>8} {:>12} {:>11} {:>5}\n", "design", "p50 ns",
                       "p99 ns", "p99.9 ns", "Gb/s/host", "uncorrectable", "bad FCS", "LLR replays", "e2e resent",
                       "lost");
    for (const auto& r : runs_) {
      const auto& d = s[r.design->name];
      if (!r.stall.empty())
        out += fmt::format("  {} STALLED at {:.1f} us, nothing delivered for {:.0f} us (half sim.watchdog_us): {}\n",
                           r.design->name, to_us(r.stalled_at), to_us(stall_after_), r.stall);
      out += fmt::format("  {:<10} {:>9} {:>9} {:>10} {:>10.1f} {:>13} {:>8} {:>12} {:>11} {:>5}\n", r.design->name,
                         figure(d["latency_p50_ns"], 1), figure(d["latency_p99_ns"], 1),
                         figure(d["latency_p999_ns"], 1), d["goodput_per_host_gbps"].get<double>(),
                         d["uncorrectable_codewords"].get<std::uint64_t>(), d["frames_bad_fcs"].get<std::uint64_t>(),
                         d["llr_replays"].get<std::uint64_t>(), d["e2e_resent"].get<std::uint64_t>(),
                         d["frames_lost_after_recovery"].get<std::uint64_t>());
    }
    return out;
  }
  void write_artifacts(const std::string& dir) const override {
    std::vector<std::pair<std::string, const LatencyHistogram*>> histograms;
    for (const auto& r : runs_) histograms.emplace_back(r.design->name, r.rig->latency);
    write_latency_histograms(dir, histograms);
  }

 private:
  struct Run {
    const Design* design;
    std::unique_ptr<FabricRig> rig;
    // Watched as the run goes (done() is asked after every slice): frames accounted for when
    // they last moved, and the stall, once nothing moved for stall_after_.
    mutable std::uint64_t accounted = 0;
    mutable Time moved = 0, stalled_at = 0;
    mutable std::string stall;
  };
  bool finished(const Run& r) const {
    const FabricRig& g = *r.rig;
    return g.core().now() >= stop_ && g.received() + unrecovered(r) >= g.sent();
  }
  // A design that has delivered nothing (nor given anything up) for stall_after_ has stalled
  // (a configured flap's dark time not counted): reported, with what holds it, as that design's
  // outcome; the other designs run on.
  bool stalled(const Run& r) const {
    if (!r.stall.empty()) return true;
    const Time now = sim_now();
    const std::uint64_t n = r.rig->received() + unrecovered(r);
    if (n != r.accounted || now < r.rig->links_up || r.rig->fabric->flapping(now)) {  // a flap's dark time: no stall
      r.accounted = n;
      r.moved = now;
      return false;
    }
    if (now - r.moved < stall_after_) return false;
    std::string why = r.rig->fabric->stall();
    // Links that LLR cannot bring up or keep up are a fault of the run (fault(), or the
    // watchdog), not a design's outcome.
    if (why.rfind("link down", 0) == 0) return false;
    r.stall = why.empty() ? "no frame moved, and no flow control holds one" : why;
    r.stalled_at = now;
    return true;
  }
  struct Figures {
    std::uint64_t uncorrectable = 0, phy_bad = 0, bad_fcs = 0, replays = 0, replayed_frames = 0, line_bits = 0,
                  bit_errors = 0;
  };
  Figures figures(const Run& r) const {
    const FabricRig& g = *r.rig;
    Figures f;
    f.uncorrectable = g.port_sum(stats_, ".phy.fec.uncorrectable_codewords");
    f.phy_bad = g.port_sum(stats_, ".phy.frames_bad");
    f.bad_fcs = g.port_sum(stats_, ".mac.rx.bad_fcs_data") + g.port_sum(stats_, ".mac.rx.bad_fcs_control");
    f.replayed_frames = g.port_sum(stats_, ".mac.llr.replayed_frames");
    f.line_bits = g.port_sum(stats_, ".phy.line_bits");
    f.bit_errors = g.port_sum(stats_, ".phy.pre_fec_bit_errors");
    for (const auto& l : g.fabric->links())
      for (int side = 0; side < 2; ++side) f.replays += l->mac(side).llr_tx().replays();
    return f;
  }

  Stats& stats_;
  PacketPool pool_;
  std::vector<Run> runs_;
  std::string summary_line_;
  // Frames that will never arrive: lost on links with no end-to-end recovery to resend them.
  static std::uint64_t unrecovered(const Run& r) {
    return r.rig->transports.empty() ? r.rig->fabric->frames_lost_on_links() + r.rig->fabric->drops() : 0;
  }
  // Frames sent and never delivered, from the scoreboards once every frame has had its chance;
  // before that (a run stopped early, or a design that stalled) those the links and switches gave
  // up on, at most.
  std::uint64_t lost(const Run& r) const {
    return finished(r) ? r.rig->missing() : std::min(r.rig->missing(), unrecovered(r));
  }
  static std::uint64_t resent(const FabricRig& g) {
    std::uint64_t n = 0;
    for (const auto& t : g.transports) n += t->resent();
    return n;
  }
  double traffic_us_ = 0, load_ = 0, ber_ = 0;
  Cycle stop_ = 0;
  Time stall_after_ = 0;
};

}  // namespace

XY_TESTBENCH(LingyunFecLlr, 600, "lingyun-fec-llr",
             "claims C2+C4: KP4 without LLR vs light FEC + LLR vs no FEC + LLR on a leaf-spine path, same BER")

}  // namespace xy
