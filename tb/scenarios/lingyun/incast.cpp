// lingyun-incast (claim C3): an incast on a leaf-spine fabric of composed ports, for CBFC, PFC and
// no flow control, with the victim flow on the incast's VC and on its own. Three leaves on one
// spine, two hosts each: A and V on leaf0, S1 and W on leaf1, S2 and R on leaf2. A (half line), S1
// and S2 (full line) send to R: 2.5 lines into one. The victim V sends to W at half a line; its
// path (leaf0 -> spine -> leaf1) never crosses the congested port leaf2 -> R, but shares the
// leaf0 uplink with A. Measured: R's and the victim's throughput, how far back-pressure of either
// kind (credits withheld or pauses) reached upstream of the congested port, buffer peaks, drops.
#include <algorithm>
#include <deque>
#include <memory>

#include <fmt/format.h>

#include "tb/lib/fabric_rig.hpp"
#include "tb/lib/figure.hpp"
#include "tb/lib/frames.hpp"
#include "tb/lib/scenario.hpp"

namespace xy {
namespace {

// Three leaves on one spine, two hosts on each (the top of this file), cables from topology.cable_m and
// topology.spine_cable_m.
lingyun::Topology lingyun_incast_topology(Config& c) {
  const double cable = c.real("topology.cable_m", 2, "m", 0, 1e6, "host to leaf cable");
  const double spine_cable = c.real("topology.spine_cable_m", 10, "m", 0, 1e6, "leaf to spine cable");
  lingyun::Topology t;
  t.name = "incast leaf-spine";
  for (const char* sw : {"leaf0", "leaf1", "leaf2"}) t.nodes.push_back({sw, true, 3});
  t.nodes.push_back({"spine0", true, 3});
  const char* hosts[] = {"A", "V", "S1", "W", "S2", "R"};  // two on each leaf
  for (const char* h : hosts) t.nodes.push_back({h, false, 1});
  for (int h = 0; h < 6; ++h) t.links.push_back({4 + h, h / 2, cable, "lingyun-incast", {}, {}, {}, {}});
  for (int leaf = 0; leaf < 3; ++leaf) t.links.push_back({leaf, 3, spine_cable, "lingyun-incast", {}, {}, {}, {}});
  t.validate();
  return t;
}

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
    lingyun::fix_switch_keys_of_composed_ports(c, "lingyun-incast");
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
        for (const auto& l : run.rig->fabric->links())  // held % counts the traffic time only
          for (int side = 0; side < 2; ++side) l->fc(side).count_holds_until(to() / period_);
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
      if (r.rig->core().time_of(r.rig->core().now()) < to() ||
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
      least = std::min(least, static_cast<double>(r.rig->core().time_of(r.rig->core().now())) / to());
    return least;
  }
  std::string waiting_for() const override {
    std::uint64_t sent = 0, left = 0;
    for (const auto& r : runs_) {
      if (r.rig->core().time_of(r.rig->core().now()) < to()) return "";
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
  std::string fault() const override {
    for (const auto& r : runs_)
      if (std::string f = r.rig->fabric->link_fault(sim_now()); !f.empty()) return f;
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
                       "R Gb/s", "A Gb/s", "hops", "switches", "pauses", "drops", "held % of the traffic time (most held VC)");
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
    // sender side -> % of the traffic time (0 to the end of sending) its most held VC was held
    nlohmann::json held_percent = nlohmann::json::object();
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
        const link::PortFc& fc = links[i]->fc(side);
        reach.pauses += fc.xoffs();
        std::uint64_t held = 0;  // the most held VC's: a fraction of the time, whatever the VCs
        for (int vc = 0; vc < fc.vcs(); ++vc) held = std::max(held, fc.held_cycles(vc));
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

XY_TESTBENCH(LingyunIncast, 610, "lingyun-incast",
             "claim C3: incast on a leaf-spine of composed ports, CBFC vs PFC vs none, victim on a shared or its own VC")

}  // namespace xy
