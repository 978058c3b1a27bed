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
#include "tb/scenarios/lingyun.hpp"

namespace xy {

lingyun::Topology lingyun_fec_llr_topology(Config& c) {
  const double cable = c.real("topology.cable_m", 2, "m", 0, 1e6, "host to leaf cable");
  const double spine_cable = c.real("topology.spine_cable_m", 10, "m", 0, 1e6, "leaf to spine cable");
  return lingyun::Topology::leaf_spine(2, 2, 1, 1, cable, spine_cable);
}

lingyun::Topology lingyun_incast_topology(Config& c) {
  const double cable = c.real("topology.cable_m", 2, "m", 0, 1e6, "host to leaf cable");
  const double spine_cable = c.real("topology.spine_cable_m", 10, "m", 0, 1e6, "leaf to spine cable");
  lingyun::Topology t;
  t.name = "incast leaf-spine";
  for (const char* sw : {"leaf0", "leaf1", "leaf2"}) t.nodes.push_back({sw, true, 3});
  t.nodes.push_back({"spine0", true, 3});
  const char* hosts[] = {"A", "V", "S1", "W", "S2", "R"};  // two on each leaf
  for (const char* h : hosts) t.nodes.push_back({h, false, 1});
  for (int h = 0; h < 6; ++h) t.links.push_back({4 + h, h / 2, cable, "lingyun-incast", {}, {}, {}});
  for (int leaf = 0; leaf < 3; ++leaf) t.links.push_back({leaf, 3, spine_cable, "lingyun-incast", {}, {}, {}});
  t.validate();
  return t;
}

namespace {

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
    for (const char* key : {"switch.lat.rx_mac", "switch.lat.tx_mac"})
      c.fix(key, "lingyun-fec-llr, whose composed ports model the PHY and MAC (port.*, llr.*)");
    c.fix("switch.ports", "lingyun-fec-llr, whose topology gives each switch its ports");
    Host::Traffic traffic;
    traffic.load = c.real("traffic.load", 0.5, "fraction", 0.001, 1, "offered load of each host, fraction of its line");
    const FrameSizes sizes = FrameSizes::declare(c, {64, 1500}, 64, 9216);
    traffic.min_bytes = sizes.min_bytes;
    traffic.max_bytes = sizes.max_bytes;
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
    link::LlrConfig e2e;
    e2e.seq_bits = 22;
    e2e.window = 1u << 21;
    e2e.replay_buffer_bytes = 1ull << 32;  // host memory
    e2e.replay_limit = 1000;               // never gives up
    e2e.replay_timer_cycles = cycles_for(
        from_us(c.real("e2e.rto_us", 8, "us", 0.5, 1e6, "end-to-end retransmit timeout (a NACK is re-sent after it too)")),
        sp.period());
    e2e.nack_timer_cycles = e2e.replay_timer_cycles;
    e2e.ack_timer_cycles = cycles_for(
        from_ns(c.real("e2e.ack_timer_ns", 500, "ns", 1, 1e6, "ACK this long after the first unacknowledged packet")),
        sp.period());
    e2e.validate("e2e");
    const std::string only = c.choice("fec_llr.design", "all", {"all", "rs544", "rs272_llr", "none_llr"},
                                      "run all three designs side by side, or one (a design whose links cannot come "
                                      "up at this BER ends the run)");
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
  }

  bool done() const override {
    for (const auto& r : runs_) {
      const FabricRig& g = *r.rig;
      if (g.core->clock().now() < stop_ || g.received() + unrecovered(r) < g.sent()) return false;
    }
    return true;
  }
  std::uint64_t progress() const override {
    std::uint64_t n = 0;
    for (const auto& r : runs_) n += r.rig->received() + unrecovered(r);
    return n;
  }
  // Traffic is offered until stop_; then the frames still on their way are waited for.
  double done_fraction() const override {
    double least = 1;
    for (const auto& r : runs_) least = std::min(least, static_cast<double>(r.rig->core->clock().now()) / stop_);
    return least;
  }
  std::string waiting_for() const override {
    std::uint64_t sent = 0, left = 0;
    for (const auto& r : runs_) {
      if (r.rig->core->clock().now() < stop_) return "";
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
  void check() const override {
    for (const auto& r : runs_) {
      const FabricRig& g = *r.rig;
      if (std::string e = g.error(); !e.empty()) throw CheckFailure(fmt::format("{}: {}", r.design->name, e));
      // Every frame that did not arrive is one LLR flushed or a switch dropped (with end-to-end
      // recovery, none: every one is resent until it arrives).
      // (A flushed frame may have arrived, its ACK lost: flushes bound the losses from above.)
      if (g.missing() > unrecovered(r))
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
      const double ns = to_ns(g.core->clock().period());
      const auto q = g.latency->quantiles({0.5, 0.99, 0.999});
      // null, not 0, for a design that delivered nothing
      const auto latency_ns = [&](Cycle c) { return g.latency->count() ? nlohmann::json(c * ns) : nlohmann::json(); };
      s[r.design->name] = {
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
          {"frames_lost_after_recovery", unrecovered(r)},
      };
      // A delivered frame's path, stage by stage, mean over the frames (four hops).
      nlohmann::json stages = nlohmann::json::object(), provenance = nlohmann::json::object();
      for (int st = kStageMacTx; st < kStages; ++st) {
        const std::string key = std::string(stage_name(static_cast<Stage>(st))) + "_ns";
        stages[key] = g.arrivals ? nlohmann::json(to_ns(g.stage_time[st]) / static_cast<double>(g.arrivals))
                                 : nlohmann::json();
        provenance[key] = stage_provenance(static_cast<Stage>(st));
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
  };
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
  static std::uint64_t resent(const FabricRig& g) {
    std::uint64_t n = 0;
    for (const auto& t : g.transports) n += t->resent();
    return n;
  }
  double traffic_us_ = 0, load_ = 0, ber_ = 0;
  Cycle stop_ = 0;
};

// lingyun-incast (claim C3): an incast on a leaf-spine fabric of composed ports, for CBFC, PFC and
// no flow control, with the victim flow on the incast's VC and on its own. Three leaves on one
// spine, two hosts each: A and V on leaf0, S1 and W on leaf1, S2 and R on leaf2. A (half line), S1
// and S2 (full line) send to R: 2.5 lines into one. The victim V sends to W at half a line; its
// path (leaf0 -> spine -> leaf1) never crosses the congested port leaf2 -> R, but shares the
// leaf0 uplink with A. Measured: R's and the victim's throughput, how far back-pressure of either
// kind (credits withheld or pauses) reached upstream of the congested port, buffer peaks, drops.
class LingyunIncast : public Testbench {
 public:
  explicit LingyunIncast(RunContext& ctx) : stats_(ctx.stats) {
    Config& c = ctx.config;
    sw::SwitchParams sp = sw::SwitchParams::declare(c, "switch");
    sp.vcs = std::max(sp.vcs, 2);
    warmup_us_ = c.real("incast.warmup_us", 10, "us", 0, 1e6, "not measured: the buffers fill");
    measure_us_ = c.real("incast.measure_us", 40, "us", 0.1, 1e6, "measured");
    topology_ = lingyun_incast_topology(c);
    const lingyun::PortParams base = lingyun::PortParams::declare(c, sp.vcs);
    c.fix("port.fc", "lingyun-incast, which runs every flow-control mode (cbfc, pfc, none)");
    for (const char* key : {"switch.lat.rx_mac", "switch.lat.tx_mac"})
      c.fix(key, "lingyun-incast, whose composed ports model the PHY and MAC (port.*, llr.*)");
    c.fix("switch.ports", "lingyun-incast, whose topology gives each switch its ports");
    period_ = sp.period();
    const auto stop = static_cast<Cycle>((warmup_us_ + measure_us_) * kUs / static_cast<double>(period_));
    for (const std::string& fc : link::fc_mode_names())
      for (bool own_vc : {false, true}) {
        lingyun::PortParams pp = base;
        pp.fc = link::fc_mode(fc);
        std::vector<Host::Traffic> traffic(kHosts);
        const auto flow = [&](int host, int dst, double load, std::uint8_t vc) {
          traffic[host] = Host::Traffic{load, 64, 1500, stop, dst, vc};
        };
        flow(kA, kR, 0.5, 0);
        flow(kS1, kR, 1.0, 0);
        flow(kS2, kR, 1.0, 0);
        flow(kV, kW, 0.5, own_vc ? 1 : 0);
        Run run{fc.c_str(), own_vc, {}};
        const std::string name = fmt::format("{}_{}", fc, own_vc ? "own_vc" : "shared_vc");
        run.rig = std::make_unique<FabricRig>("top." + name, "incast_" + name, topology_, sp, pp, traffic, stats_,
                                              pool_, ctx);
        Run* r = &runs_.emplace_back(std::move(run));
        r->rig->on_arrival = [this, r](const Packet& p, Time now) {
          if (now < from() || now >= to()) return;  // the measured window
          (p.src == kV ? r->victim_bytes : r->incast_bytes) += p.bytes;
          if (p.src == kA) r->a_bytes += p.bytes;
        };
      }
    summary_line_ = runs_.front().rig->fabric->summary();
  }

  bool done() const override {
    for (const auto& r : runs_)
      if (r.rig->core->clock().time_of(r.rig->core->clock().now()) < to() ||
          r.rig->received() + lost(r) < r.rig->sent())
        return false;
    return true;
  }
  std::uint64_t progress() const override {
    std::uint64_t n = 0;
    for (const auto& r : runs_) n += r.rig->received() + lost(r);
    return n;
  }
  // Traffic is offered until to(); then the packets still on their way are waited for.
  double done_fraction() const override {
    double least = 1;
    for (const auto& r : runs_)
      least = std::min(least, static_cast<double>(r.rig->core->clock().time_of(r.rig->core->clock().now())) / to());
    return least;
  }
  std::string waiting_for() const override {
    std::uint64_t sent = 0, left = 0;
    for (const auto& r : runs_) {
      if (r.rig->core->clock().time_of(r.rig->core->clock().now()) < to()) return "";
      sent += r.rig->sent();
      left += r.rig->sent() - std::min(r.rig->sent(), r.rig->received() + lost(r));
    }
    return fmt::format("the last {} of {} packets in flight", left, sent);
  }
  std::string stall() const override {
    for (const auto& r : runs_)
      if (std::string s = r.rig->fabric->stall(); !s.empty()) return s;
    return "";
  }
  void check() const override {
    for (const auto& r : runs_) {
      if (std::string e = r.rig->error(); !e.empty()) throw CheckFailure(e);
      if (r.rig->missing() > lost(r))
        throw CheckFailure(fmt::format("{}: {} packets missing, {} dropped or lost with a reason", r.fc,
                                       r.rig->missing(), lost(r)));
    }
  }
  nlohmann::json summary() const override {
    nlohmann::json s;
    s["topology"] = summary_line_;
    const double window_ns = measure_us_ * 1000;
    for (const auto& r : runs_) {
      const Reach reach = backpressure(r);
      nlohmann::json peaks = nlohmann::json::object();
      const auto& switches = r.rig->fabric->switches();  // in the topology's order of switch nodes
      for (std::size_t i = 0; i < switches.size(); ++i)
        peaks[topology_.nodes[topology_.switches()[i]].name] = switches[i]->peak_buffer_cells();
      s[fmt::format("{}_{}", r.fc, r.own_vc ? "own_vc" : "shared_vc")] = {
          {"victim_gbps", r.victim_bytes * 8.0 / window_ns},
          {"incast_gbps", r.incast_bytes * 8.0 / window_ns},
          {"incast_from_a_gbps", r.a_bytes * 8.0 / window_ns},
          {"backpressure_hops", reach.hops},
          {"switches_that_held_upstream", reach.switches},
          {"held_percent", reach.held_percent},
          {"pauses_sent", reach.pauses},
          {"peak_buffer_cells", peaks},
          {"drops", r.rig->fabric->drops()},
      };
    }
    return s;
  }
  std::string report() const override {
    const nlohmann::json s = summary();
    std::string out = fmt::format("  {}\n  A, S1, S2 -> R (2.5 lines into one); victim V -> W at half a line, "
                                  "{} us measured after {} us\n",
                                  summary_line_, measure_us_, warmup_us_);
    out += fmt::format("  {:<16} {:>11} {:>8} {:>8} {:>5} {:>9} {:>7} {:>6}   {}\n", "fc, victim", "victim Gb/s",
                       "R Gb/s", "A Gb/s", "hops", "switches", "pauses", "drops", "held % of the traffic time");
    for (const auto& [key, row] : s.items()) {
      if (!row.is_object() || !row.contains("victim_gbps")) continue;
      std::string held;
      for (const auto& [port, pct] : row["held_percent"].items())
        held += fmt::format("{}{} {:.0f}", held.empty() ? "" : ", ", port, pct.get<double>());
      out += fmt::format("  {:<16} {:>11.1f} {:>8.1f} {:>8.1f} {:>5} {:>9} {:>7} {:>6}   {}\n", key,
                         row["victim_gbps"].get<double>(), row["incast_gbps"].get<double>(),
                         row["incast_from_a_gbps"].get<double>(),
                         row["backpressure_hops"].get<int>(), row["switches_that_held_upstream"].get<int>(),
                         row["pauses_sent"].get<std::uint64_t>(), row["drops"].get<std::uint64_t>(),
                         held.empty() ? "-" : held);
    }
    return out;
  }

 private:
  enum : int { kA, kV, kS1, kW, kS2, kR, kHosts };
  struct Run {
    const char* fc;
    bool own_vc;
    std::unique_ptr<FabricRig> rig;
    std::uint64_t victim_bytes = 0, incast_bytes = 0, a_bytes = 0;  // A: the incast sender beside V
  };
  // Who was held back, and how far from the congested port leaf2 -> R.
  struct Reach {
    int hops = 0, switches = 0;
    std::uint64_t pauses = 0;
    nlohmann::json held_percent = nlohmann::json::object();  // sender side -> % of the run, all VCs
  };
  Time from() const { return static_cast<Time>(warmup_us_ * kUs); }
  Time to() const { return static_cast<Time>((warmup_us_ + measure_us_) * kUs); }
  std::uint64_t lost(const Run& r) const { return r.rig->fabric->drops() + r.rig->fabric->frames_lost_on_links(); }
  Reach backpressure(const Run& r) const {
    // Hops from the congested switch (leaf2), through switches only.
    const std::vector<int> hops_from_leaf2 = {2, 2, 0, 1};  // leaf0, leaf1, leaf2, spine0
    const auto hops_of = [&](int node) { return node < 4 ? hops_from_leaf2[node] : hops_from_leaf2[(node - 4) / 2] + 1; };
    Reach reach;
    const Cycle run = to() / period_;  // while the hosts send
    std::vector<bool> holder(topology_.nodes.size(), false);
    const auto& links = r.rig->fabric->links();
    for (std::size_t i = 0; i < links.size(); ++i)
      for (int side = 0; side < 2; ++side) {
        const lingyun::PortFc& fc = links[i]->fc(side);
        reach.pauses += fc.xoffs();
        std::uint64_t held = 0;
        for (int vc = 0; vc < 2; ++vc) held += fc.held_cycles(vc);
        if (held * 100 < run) continue;  // held under 1 % of the time: not back-pressure
        const int sender = side == 0 ? topology_.links[i].a : topology_.links[i].b;
        const int receiver = side == 0 ? topology_.links[i].b : topology_.links[i].a;
        reach.held_percent[fmt::format("{}->{}", topology_.nodes[sender].name, topology_.nodes[receiver].name)] =
            100.0 * static_cast<double>(held) / static_cast<double>(run);
        reach.hops = std::max(reach.hops, hops_of(sender));
        if (topology_.nodes[receiver].is_switch && !holder[receiver]) {
          holder[receiver] = true;
          ++reach.switches;
        }
      }
    return reach;
  }

  Stats& stats_;
  PacketPool pool_;
  lingyun::Topology topology_;
  std::deque<Run> runs_;
  std::string summary_line_;
  Time period_ = 0;
  double warmup_us_ = 0, measure_us_ = 0;
};

}  // namespace

Scenario lingyun_incast_scenario() {
  return {"lingyun-incast",
          "claim C3: incast on a leaf-spine of composed ports, CBFC vs PFC vs none, victim on a shared or its own VC",
          [](RunContext& ctx) { return std::make_unique<LingyunIncast>(ctx); }};
}

Scenario lingyun_fec_llr_scenario() {
  return {"lingyun-fec-llr",
          "claims C2+C4: KP4 without LLR vs light FEC + LLR vs no FEC + LLR on a leaf-spine path, same BER",
          [](RunContext& ctx) { return std::make_unique<LingyunFecLlr>(ctx); }};
}

}  // namespace xy
