// switch-latency and switch-uniform: one switch with a host on every port (see hw/switch/switch.hpp).
#include "tb/lib/scenario.hpp"

#include <cmath>
#include <fstream>
#include <sstream>
#include <memory>

#include <fmt/format.h>

#include "tb/lib/frames.hpp"
#include "tb/lib/fabric_rig.hpp"
#include "tb/lib/figure.hpp"
#include "tb/lib/latency_csv.hpp"
#include "tb/lib/memory.hpp"
#include "tb/lib/switch_rig.hpp"
#include "kernel/clock_domain.hpp"

namespace xy {
namespace {

using sw::Switch;
using sw::SwitchParams;

class SwitchLatency : public Testbench {
 public:
  explicit SwitchLatency(RunContext& ctx) : stats_(ctx.stats) {
    SwitchParams base = SwitchParams::declare(ctx.config, "switch");
    base.ports = 2;  // one path is all a zero-load measurement needs
    for (const char* key : {"switch.ports", "switch.forwarding"})
      ctx.config.fix(key, "switch-latency, which measures both forwarding modes on one path of a 2-port switch");
    // One packet at a time: no queue forms, so nothing buffers, arbitrates, shares VCs or marks.
    for (const char* key : {"switch.cell_bytes", "switch.buffer_mib", "switch.arbiter", "switch.iterations",
                            "switch.speedup", "switch.vcs", "switch.dt_alpha", "switch.when_full",
                            "switch.dwrr_quantum_bytes", "switch.ecn.on", "switch.ecn.kmin_bytes", "switch.ecn.kmax_bytes",
                            "switch.ecn.pmax"})
      ctx.config.fix(key, "switch-latency, which sends one packet at a time: no queue forms");
    domain_ = std::make_unique<ClockDomain>("switch", base.period());
    const Cycle gap = 4 * (base.lat.total() + 9216 / base.port_bytes_per_cycle());
    for (bool ct : {true, false}) {
      SwitchParams p = base;
      p.cut_through = ct;
      auto rig = std::make_unique<Rig>(ct ? "top.ct" : "top.saf", p, domain_->clock(), stats_, pool_, Host::Traffic{},
                                       ctx);
      Cycle at = 10;
      for (std::uint32_t bytes : kSizes) {
        rig->hosts[0]->send(1, bytes, at);
        at += gap;
      }
      Rig* r = rig.get();
      r->hosts[1]->on_arrival = [this, ct, r](const Packet& pk, Time now) {
        samples_.push_back({ct, pk.bytes, (now - pk.created) / r->sw->params().period()});
      };
      rigs_.push_back(std::move(rig));
    }
    params_ = base;
  }
  bool done() const override { return samples_.size() == 2 * std::size(kSizes); }
  std::uint64_t progress() const override { return samples_.size(); }
  void check() const override {
    for (const auto& r : rigs_) r->sw->check_buffer_accounting();
    for (const auto& s : samples_)
      if (s.cycles != expected(s.cut_through, s.bytes))
        throw CheckFailure(fmt::format("{} {} B: {} cycles host to host, expected {}", s.cut_through ? "cut-through" : "store-and-forward",
                                       s.bytes, s.cycles, expected(s.cut_through, s.bytes)));
  }
  // Host to host = 1 cycle up + port to port + 1 cycle down; port to port is the stage sum, plus
  // the packet's own serialisation for store-and-forward.
  Cycle expected(bool ct, std::uint32_t bytes) const {
    const Cycle beats = (bytes + params_.port_bytes_per_cycle() - 1) / params_.port_bytes_per_cycle();
    return 2 + params_.lat.total() + (ct ? 0 : beats - 1);
  }
  nlohmann::json summary() const override {
    const double ns = to_ns(params_.period());
    nlohmann::json s;
    const auto& l = params_.lat;
    s["stages_cycles"] = {{"rx_mac", l.rx_mac}, {"parse", l.parse},   {"lookup", l.lookup},   {"enqueue", l.enqueue},
                          {"arbiter", l.arbiter}, {"crossbar", l.crossbar}, {"egress", l.egress}, {"tx_mac", l.tx_mac}};
    s["stage_sum_cycles"] = l.total();
    s["clock_period_ns"] = ns;
    s["public_anchors_ns"] = {{"tomahawk_ultra", 250}, {"ualink_switch", "150-250"}, {"sue_switch", "<250"}};
    for (const auto& smp : samples_) {
      const Cycle port_to_port = smp.cycles - 2;
      s[smp.cut_through ? "cut_through" : "store_and_forward"][std::to_string(smp.bytes)] = {
          {"port_to_port_cycles", port_to_port}, {"port_to_port_ns", port_to_port * ns}};
    }
    return s;
  }
  std::string report() const override {
    const nlohmann::json s = summary();
    std::string out = fmt::format("  stage sum {} cycles = {:.1f} ns at {:.4f} ns/cycle (Tomahawk Ultra 250 ns, UALink 150-250 ns)\n",
                                  params_.lat.total(), params_.lat.total() * to_ns(params_.period()), to_ns(params_.period()));
    out += fmt::format("  {:>8} {:>16} {:>20}\n", "bytes", "cut-through ns", "store-and-forward ns");
    // n/a for a size not measured: a run stopped early (sim.max_time_us) lacks some
    const auto ns = [&s](const char* mode, std::uint32_t bytes) {
      const nlohmann::json::json_pointer at(fmt::format("/{}/{}/port_to_port_ns", mode, bytes));
      return s.contains(at) ? figure(s[at], 1) : std::string("n/a");
    };
    for (std::uint32_t b : kSizes)
      out += fmt::format("  {:>8} {:>16} {:>20}\n", b, ns("cut_through", b), ns("store_and_forward", b));
    return out;
  }

 private:
  static constexpr std::uint32_t kSizes[] = {64, 256, 1500, 4096, 9216};
  struct Sample {
    bool cut_through;
    std::uint32_t bytes;
    Cycle cycles;
  };
  Stats& stats_;
  SwitchParams params_;
  std::unique_ptr<ClockDomain> domain_;
  PacketPool pool_;
  std::vector<std::unique_ptr<Rig>> rigs_;
  std::vector<Sample> samples_;
};

// ---------------------------------------------------------------------------------------------

class SwitchUniform : public Testbench {
 public:
  explicit SwitchUniform(RunContext& ctx) : stats_(ctx.stats) {
    Config& c = ctx.config;
    const int points = static_cast<int>(c.integer("uniform.points", 10, "loads", 1, 100, "offered loads 1/N, 2/N ... 1"));
    const double single = c.real("uniform.load", 0, "fraction", 0, 1, "one offered load instead of the sweep; 0 = sweep");
    warmup_ = static_cast<Cycle>(c.integer("uniform.warmup_cycles", 5000, "cycles", 0, 1ll << 40, "not measured"));
    measure_ = static_cast<Cycle>(c.integer("uniform.measure_cycles", 20000, "cycles", 1, 1ll << 40, "measured"));
    const auto [min_bytes, max_bytes] = FrameSizes::declare(c, {64, 1500}, 64, 9216, "packet");
    const SwitchParams p = SwitchParams::declare(c, "switch");
    for (const char* key : {"switch.vcs", "switch.egress_scheduler", "switch.dwrr_quantum_bytes"})
      c.fix(key, "switch-uniform, whose hosts send on VC 0 only: there is nothing to schedule between VCs");
    // bare: today's switch core with hosts on constant-delay channels; otherwise a fabric of
    // composed Lingyun ports (sys/lingyun) on the topology, a host on every endpoint port.
    const std::optional<lingyun::Topology> topology = lingyun::Topology::declare(c, 16, true);
    std::optional<lingyun::PortParams> port;
    link::FcMode fc = link::FcMode::kNone;
    link::CbfcConfig cb;
    if (topology) {
      lingyun::fix_switch_keys_of_composed_ports(c, "switch-uniform on a topology");
      port = lingyun::PortParams::declare(c, p.vcs);
      port->check_frame(max_bytes, "the hosts' largest packet (traffic.max_bytes, FCS included)");
    } else {
      fc = link::declare_fc_mode(c, "uniform.flow_control", "cbfc",
                                 "flow control on the host-to-switch links of the bare switch (lossless with CBFC); with a "
                                 "topology, port.fc (xysim params switch-uniform --set topology=leaf-spine)", {"cbfc", "none"});
      cb.vcs = 1;
      cb.buffer_credits.assign(1, static_cast<std::uint32_t>(c.integer("cbfc.buffer_credits", 1024, "credits", 1, 1 << 30,
                                                                       "switch buffer per ingress port, 128-byte credits")));
      cb.validate("cbfc");
      if (fc == link::FcMode::kCbfc) cb.check_holds_frame(max_bytes, "traffic.max_bytes");
      domain_ = std::make_unique<ClockDomain>("switch", p.period());
    }
    period_ = p.period();
    const int runs = single > 0 ? 1 : points;
    const auto traffic_at = [&](int k) {
      return Host::Traffic{single > 0 ? single : static_cast<double>(k) / points, min_bytes, max_bytes, warmup_ + measure_};
    };
    if (topology) {  // a fabric for each offered load, all built before the first runs
      double bytes = 0;
      for (int k = 1; k <= runs; ++k) bytes += FabricRig::memory_bytes(*topology, p, *port, traffic_at(k));
      check_memory(bytes,
                   runs > 1 ? fmt::format("{}, a fabric for each of uniform.points = {} loads,", topology->sized_by(), runs)
                            : topology->sized_by(),
                   ctx.force_memory);
    }
    for (int k = 1; k <= runs; ++k) {
      Point pt;
      const Host::Traffic t = traffic_at(k);
      pt.load = t.load;
      const std::string name = fmt::format("top.load{}", k);
      if (topology)
        pt.fabric = std::make_unique<FabricRig>(name, fmt::format("load{}", k), *topology, p, *port, t, stats_, pool_, ctx);
      else
        pt.rig = std::make_unique<Rig>(name, p, domain_->clock(), stats_, pool_, t, ctx, fc, cb);
      pt.latency = std::make_unique<LatencyHistogram>(p.period());
      Point* raw = &points_.emplace_back(std::move(pt));
      auto measure = [this, raw](const Packet& pk, Time now) {
        const Cycle arrived = now / period_;
        if (arrived < warmup_ || arrived >= warmup_ + measure_) return;  // the measured window
        raw->beats += (pk.bytes + width_ - 1) / width_;
        raw->latency->record((now - pk.created) / period_);
      };
      if (raw->fabric) raw->fabric->on_arrival = measure;
      else
        for (auto& h : raw->rig->hosts) h->on_arrival = measure;
    }
    ports_ = topology ? static_cast<int>(points_.front().fabric->hosts.size()) : p.ports;
    width_ = p.port_bytes_per_cycle();
    if (topology) summary_line_ = points_.front().fabric->fabric->summary();
  }
  bool done() const override {
    for (const auto& pt : points_)
      if (pt.received() + pt.lost() < pt.sent() || pt.now() < warmup_ + measure_) return false;
    return true;
  }
  std::uint64_t progress() const override {
    std::uint64_t n = 0;
    for (const auto& pt : points_) n += pt.received();
    return n;
  }
  // Traffic is offered until the measured window ends; then the packets still on their way.
  double done_fraction() const override {
    double least = 1;
    for (const auto& pt : points_) least = std::min(least, static_cast<double>(pt.now()) / (warmup_ + measure_));
    return least;
  }
  std::string waiting_for() const override {
    std::uint64_t sent = 0, left = 0;
    for (const auto& pt : points_) {
      if (pt.now() < warmup_ + measure_) return "";
      sent += pt.sent();
      left += pt.sent() - std::min(pt.sent(), pt.received() + pt.lost());
    }
    return fmt::format("the last {} of {} packets in flight", left, sent);
  }
  void check() const override {
    for (const auto& pt : points_) {
      if (pt.fabric) {
        const FabricRig& g = *pt.fabric;
        for (const auto& sw : g.fabric->switches()) sw->check_buffer_accounting();
        if (std::string e = g.error(); !e.empty()) throw CheckFailure(e);
        if (g.missing() != pt.lost())
          throw CheckFailure(fmt::format("{} packets missing, {} dropped or lost on links with a reason", g.missing(),
                                         pt.lost()));
        continue;
      }
      pt.rig->sw->check_buffer_accounting();
      if (std::string e = pt.rig->error(); !e.empty()) throw CheckFailure(e);
      if (std::string e = pt.rig->losses_unaccounted(); !e.empty()) throw CheckFailure(e);
      for (const auto& l : pt.rig->links)
        if (!l->overflow().empty()) throw CheckFailure(l->overflow());
    }
  }
  nlohmann::json summary() const override {
    nlohmann::json curve = nlohmann::json::array();
    for (const auto& pt : points_) {
      const auto lat = pt.latency->to_json();
      curve.push_back({{"offered_load", pt.load},
                       {"accepted_load", accepted(pt)},
                       {"latency_p50_ns", lat["p50_ns"]},
                       {"latency_p99_ns", lat["p99_ns"]},
                       {"latency_max_ns", lat["max_ns"]},
                       {"drops", pt.lost()},
                       {"peak_buffer_cells", pt.peak_buffer_cells()}});
    }
    nlohmann::json s;
    if (!summary_line_.empty()) s["topology"] = summary_line_;
    s["ports"] = ports_;
    s["curve"] = curve;
    return s;
  }
  std::string report() const override {
    std::string out = summary_line_.empty() ? "" : "  " + summary_line_ + "\n";
    out += fmt::format("  {:>8} {:>9} {:>10} {:>10} {:>10} {:>7}\n", "offered", "accepted", "p50 ns", "p99 ns", "max ns", "drops");
    const nlohmann::json s = summary();  // a named object: the loop must not outlive it
    for (const auto& row : s["curve"])
      out += fmt::format("  {:>8.2f} {:>9.4f} {:>10} {:>10} {:>10} {:>7}\n", row["offered_load"].get<double>(),
                         row["accepted_load"].get<double>(), figure(row["latency_p50_ns"], 1),
                         figure(row["latency_p99_ns"], 1), figure(row["latency_max_ns"], 1),
                         row["drops"].get<std::uint64_t>());
    return out;
  }
  void write_artifacts(const std::string& dir) const override {
    std::ofstream csv(dir + "/switch_uniform.csv");
    csv << "offered_load,accepted_load,latency_p50_ns,latency_p99_ns,latency_max_ns,drops\n";
    const nlohmann::json s = summary();
    const auto cell = [](const nlohmann::json& v) {  // as the stream writes a double
      std::ostringstream text;
      if (v.is_number()) text << v.get<double>();
      return text.str();
    };
    for (const auto& row : s["curve"])  // an empty cell for a latency not measured
      csv << row["offered_load"].get<double>() << ',' << row["accepted_load"].get<double>() << ','
          << cell(row["latency_p50_ns"]) << ',' << cell(row["latency_p99_ns"]) << ',' << cell(row["latency_max_ns"])
          << ',' << row["drops"].get<std::uint64_t>() << '\n';
    std::vector<std::pair<std::string, const LatencyHistogram*>> histograms;
    for (const auto& pt : points_) histograms.emplace_back(fmt::format("load {}", pt.load), pt.latency.get());
    write_latency_histograms(dir, histograms);
  }

 private:
  struct Point {
    double load = 0;
    std::unique_ptr<Rig> rig;            // bare
    std::unique_ptr<FabricRig> fabric;   // on a topology
    std::unique_ptr<LatencyHistogram> latency;
    std::uint64_t beats = 0;  // delivered in the measured window

    std::uint64_t sent() const { return rig ? rig->sent() : fabric->sent(); }
    std::uint64_t received() const { return rig ? rig->received() : fabric->received(); }
    // Packets that will not arrive: dropped by a switch, or lost on a link without LLR.
    std::uint64_t lost() const {
      return rig ? rig->sw->drops() : fabric->fabric->drops() + fabric->fabric->frames_lost_on_links();
    }
    std::uint64_t peak_buffer_cells() const { return rig ? rig->sw->peak_buffer_cells() : fabric->peak_buffer_cells(); }
    Cycle now() const { return rig ? rig->hosts.front()->now() : fabric->core().now(); }
  };
  // Line beats delivered in the window over the window's beats: the same unit as the offered
  // load (a packet's last beat may be partly empty on both sides).
  double accepted(const Point& pt) const {
    return static_cast<double>(pt.beats) / (static_cast<double>(ports_) * static_cast<double>(measure_));
  }
  Stats& stats_;
  Time period_ = 0;
  Cycle warmup_ = 0, measure_ = 0;
  int ports_ = 0;
  std::uint32_t width_ = 0;
  std::unique_ptr<ClockDomain> domain_;  // bare
  std::string summary_line_;             // on a topology
  PacketPool pool_;
  std::deque<Point> points_;
};

}  // namespace

XY_TESTBENCH(SwitchLatency, 400, "switch-latency",
             "port-to-port latency at zero load, cut-through and store-and-forward, per frame size")

XY_TESTBENCH(SwitchUniform, 410, "switch-uniform",
             "all ports, uniform random traffic at offered loads 0.1 ... 1.0: throughput and latency")

}  // namespace xy
