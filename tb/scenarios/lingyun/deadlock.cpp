// lingyun-deadlock (claim C3's deadlock): a ring of switches of composed ports, one host on each,
// every host sending to the host two switches on (the one shortest path, clockwise, from five
// switches up). Each ring link carries a host's first hop and its neighbour's second, so the ring
// links' receive buffers wait on one another in a cycle: under a sustained overload a lossless
// scheme can fill them all and stop for good. Run for CBFC and PFC, with every host on one VC and
// with the hosts on alternate VCs (which breaks the cycle: a VC's chain of waits ends at the
// first neighbour on the other VC). Reported per variant: its outcome (every frame delivered,
// still draining, or a deadlock with the cycle of held ports the fabric found), when the last
// frame arrived, and what was delivered.
#include <algorithm>
#include <deque>
#include <memory>

#include <fmt/format.h>

#include "tb/lib/fabric_rig.hpp"
#include "tb/lib/scenario.hpp"

namespace xy {
namespace {

// Switches s0..s(n-1) in a ring, host hi on si; cables from topology.cable_m and topology.ring_cable_m.
lingyun::Topology ring_topology(Config& c, int n) {
  const double cable = c.real("topology.cable_m", 2, "m", 0, 1e6, "host to switch cable");
  const double ring_cable = c.real("topology.ring_cable_m", 10, "m", 0, 1e6, "switch to switch cable");
  lingyun::Topology t;
  t.name = fmt::format("ring of {}", n);
  for (int i = 0; i < n; ++i) t.nodes.push_back({fmt::format("s{}", i), true, 3});
  for (int i = 0; i < n; ++i) t.nodes.push_back({fmt::format("h{}", i), false, 1});
  for (int i = 0; i < n; ++i) t.links.push_back({n + i, i, cable, "lingyun-deadlock", {}, {}, {}, {}});
  for (int i = 0; i < n; ++i) t.links.push_back({i, (i + 1) % n, ring_cable, "lingyun-deadlock", {}, {}, {}, {}});
  t.validate();
  return t;
}

class LingyunDeadlock : public Testbench {
 public:
  explicit LingyunDeadlock(RunContext& ctx) {
    Config& c = ctx.config;
    sw::SwitchParams sp = sw::SwitchParams::declare(c, "switch");
    sp.vcs = std::max(sp.vcs, 2);
    n_ = static_cast<int>(c.integer("deadlock.switches", 5, "switches", 5, 16,
                                    "switches in the ring (from 5, a host two switches on has one shortest path)"));
    load_ = c.real("deadlock.load", 0.8, "of the line", 0.01, 1, "each host's offered load (each ring link carries two hosts')");
    traffic_us_ = c.real("deadlock.traffic_us", 40, "us", 1, 1e5, "the hosts send for this long");
    drain_us_ = c.real("deadlock.drain_us", 100, "us", 1, 1e5,
                       "then this long for what is in flight; a variant with frames still held at the end deadlocked");
    topology_ = ring_topology(c, n_);
    const lingyun::PortParams base = lingyun::PortParams::declare(c, sp.vcs);
    c.fix("port.fc", "lingyun-deadlock, which runs CBFC and PFC");
    c.fix("switch.vcs", "lingyun-deadlock, which runs every host on VC 0 and on alternate VCs 0 and 1");
    lingyun::fix_switch_keys_of_composed_ports(c, "lingyun-deadlock");
    for (const char* key : {"switch.when_full", "switch.cell_bytes"})
      c.fix(key, "lingyun-deadlock, whose links are all lossless: the shared buffer must hold what they let in "
                 "(checked), so it never fills and its cells never limit");
    period_ = sp.period();
    const auto stop = static_cast<Cycle>(traffic_us_ * kUs / static_cast<double>(period_));
    for (const char* fc : {"cbfc", "pfc"})
      for (bool split : {false, true}) {
        lingyun::PortParams pp = base;
        pp.fc = link::fc_mode(fc);
        std::vector<Host::Traffic> traffic(n_);
        for (int h = 0; h < n_; ++h)
          traffic[h] = Host::Traffic{load_, 64, 1500, stop, (h + 2) % n_, static_cast<std::uint8_t>(split ? h % 2 : 0)};
        const std::string name = fmt::format("{}_{}", fc, split ? "alternate_vcs" : "one_vc");
        runs_.push_back({name, std::make_unique<FabricRig>("top." + name, "deadlock_" + name, topology_, sp, pp, traffic,
                                                           ctx.stats, pool_, ctx)});
      }
    summary_line_ = runs_.front().rig->fabric->summary();
  }

  bool done() const override { return sim_now() >= end(); }
  // Time itself is progress: a deadlocked variant is an outcome, reported at the end.
  std::uint64_t progress() const override {
    std::uint64_t n = 0;
    for (const auto& r : runs_) n += r.rig->received();
    return n + static_cast<std::uint64_t>(sim_now() / kNs);
  }
  double done_fraction() const override { return static_cast<double>(sim_now()) / static_cast<double>(end()); }
  std::string waiting_for() const override { return sim_now() < sent_by() ? "" : "the drain after the hosts stop"; }
  std::string fault() const override {
    for (const auto& r : runs_)
      if (std::string f = r.rig->fabric->link_fault(sim_now()); !f.empty()) return f;
    return "";
  }
  // Nothing is lost: a frame arrived, is held in a deadlock, or is still on its way.
  void check() const override {
    for (const auto& r : runs_) {
      if (std::string e = r.rig->error(); !e.empty()) throw CheckFailure(e);
      const std::uint64_t lost = r.rig->fabric->drops() + r.rig->fabric->frames_lost_on_links() + r.rig->lost_at_hosts();
      if (lost) throw CheckFailure(fmt::format("{}: {} frames lost on a lossless ring", r.name, lost));
    }
  }
  nlohmann::json summary() const override {
    nlohmann::json s;
    s["topology"] = summary_line_;
    s["load"] = load_;
    const double window_ns = traffic_us_ * 1000;
    for (const auto& r : runs_) {
      const Outcome o = outcome(r);
      s[r.name] = {{"outcome", o.name},
                   {"cycle", o.cycle},
                   {"frames_held", o.name == "deadlock" ? r.rig->missing() : 0},
                   {"frames_in_flight", o.name == "draining" ? r.rig->missing() : 0},
                   {"last_arrival_us", to_us(r.rig->last_arrival)},
                   {"delivered_gbps_per_host", r.rig->bytes_arrived * 8.0 / window_ns / n_}};
    }
    return s;
  }
  std::string report() const override {
    const nlohmann::json s = summary();
    std::string out = fmt::format("  {}\n  each host to the host two switches on at {:.2f} of the line for {} us\n",
                                  summary_line_, load_, traffic_us_);
    for (const auto& r : runs_) {
      const auto& row = s[r.name];
      out += fmt::format("  {:<18} {:>8.1f} Gb/s per host, last frame at {:>7.2f} us: {}\n", r.name,
                         row["delivered_gbps_per_host"].get<double>(), row["last_arrival_us"].get<double>(),
                         row["outcome"] == "deadlock"
                             ? fmt::format("DEADLOCK, {} frames held in {}", row["frames_held"].get<std::uint64_t>(),
                                           row["cycle"].get<std::string>())
                         : row["outcome"] == "draining"
                             ? fmt::format("still draining, {} frames on their way (a longer deadlock.drain_us)",
                                           row["frames_in_flight"].get<std::uint64_t>())
                             : std::string("every frame delivered"));
    }
    return out;
  }

 private:
  struct Run {
    std::string name;
    std::unique_ptr<FabricRig> rig;
  };
  // deadlock: a cycle of held ports at the end and no frame in over the drain's second half (a
  // congested ring that still moves can be all held at one moment); draining: frames still on
  // their way; delivered: every frame in.
  struct Outcome {
    std::string name, cycle;
  };
  Outcome outcome(const Run& r) const {
    if (!r.rig->missing()) return {"delivered", ""};
    std::string cycle = r.rig->fabric->deadlock();
    const bool stopped = r.rig->last_arrival < end() - static_cast<Time>(drain_us_ / 2 * kUs);
    if (!cycle.empty() && stopped) return {"deadlock", cycle};
    return {"draining", ""};
  }
  Time sent_by() const { return static_cast<Time>(traffic_us_ * kUs); }
  Time end() const { return static_cast<Time>((traffic_us_ + drain_us_) * kUs); }

  PacketPool pool_;
  lingyun::Topology topology_;
  std::deque<Run> runs_;
  std::string summary_line_;
  Time period_ = 0;
  int n_ = 0;
  double load_ = 0, traffic_us_ = 0, drain_us_ = 0;
};

}  // namespace

XY_TESTBENCH(LingyunDeadlock, 620, "lingyun-deadlock",
             "claim C3's deadlock: a ring of switches with a cyclic buffer dependency, CBFC and PFC, one VC or alternate VCs")

}  // namespace xy
