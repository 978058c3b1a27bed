#include "tb/bench/lingyun_bench.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <systemc>

#include "sys/lingyun/port.hpp"
#include "sys/lingyun/topology.hpp"
#include "tb/bench/median.hpp"
#include "tb/lib/fabric_rig.hpp"
#include "tb/lib/switch_rig.hpp"
#include "kernel/clock_domain.hpp"

namespace xy {
namespace {

constexpr int kPorts = 64;
constexpr double kPortBer = 1e-12;

struct RigSpec {
  const char* rig;
  const char* label;
  double load;
};
constexpr RigSpec kRigs[] = {{"bare", "bare switch core, 64 ports", 0.5},
                             {"composed", "composed Lingyun, 64 ports", 0.5},
                             {"leaf-spine", "leaf-spine, 64 endpoints", 0.2}};

const RigSpec& spec_of(const std::string& rig) {
  for (const RigSpec& s : kRigs)
    if (rig == s.rig) return s;
  throw std::invalid_argument("unknown rig " + rig);
}

long peak_rss_kib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

// Runs the kernel to `until` in slices as `xysim run` does (each bounding how far the clock
// domains may run ahead); "" or what a model invariant threw.
std::string run_until(Time until) {
  while (sim_now() < until) {
    const Time now = sim_now();
    const Time step = std::min<Time>(10 * kUs, until - now);
    ClockDomain::set_run_ahead_limit(now + step);
    try {
      sc_core::sc_start(to_sc_time(step));
    } catch (const sc_core::sc_report& e) {
      return e.get_msg();
    }
    if (sim_now() == now) return fmt::format("simulated time stuck at {}", format_time(now));
  }
  return "";
}

struct Child {
  double cycles_per_s = 0, packets_per_s = 0, wall_s = 0, build_s = 0, peak_mib = 0, cycles = 0;
  std::uint64_t packets = 0;
  int endpoints = 0;
  std::string topology;
};

Child run_child(const char* self, const std::string& rig, const LingyunBenchOptions& o) {
  const std::string cmd =
      fmt::format("'{}' bench lingyun-one --rig {} --us {} --warmup-us {}", self, rig, o.us, o.warmup_us);
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) throw std::runtime_error("cannot start " + cmd);
  std::string out;
  char buf[4096];
  while (fgets(buf, sizeof buf, pipe)) out += buf;
  if (pclose(pipe) != 0) throw std::runtime_error(fmt::format("'{}' failed: {}", cmd, out));
  const auto j = nlohmann::json::parse(out);
  Child c;
  c.cycles = j["cycles"].get<double>();
  c.wall_s = j["wall_s"].get<double>();
  c.build_s = j["build_s"].get<double>();
  c.packets = j["packets"].get<std::uint64_t>();
  c.cycles_per_s = c.wall_s > 0 ? c.cycles / c.wall_s : 0;
  c.packets_per_s = c.wall_s > 0 ? static_cast<double>(c.packets) / c.wall_s : 0;
  c.peak_mib = j["peak_rss_kib"].get<double>() / 1024.0;
  c.endpoints = j["endpoints"].get<int>();
  c.topology = j["topology"].get<std::string>();
  return c;
}

}  // namespace

int lingyun_bench_one(const LingyunBenchOptions& o) {
  const RigSpec& spec = spec_of(o.rig);
  const auto t0 = std::chrono::steady_clock::now();
  Config config;
  config.set("port.codec", "fast");
  config.set("port.errors.ber", fmt::format("{:g}", kPortBer));
  Stats stats;
  Waves waves;
  RunContext ctx{config, stats, waves, 1, Capture{}};
  const sw::SwitchParams sp = sw::SwitchParams::declare(config, "switch");
  Host::Traffic traffic;
  traffic.load = spec.load;
  traffic.min_bytes = 64;
  traffic.max_bytes = 1500;
  PacketPool pool;

  // One of the two is built; `received` and `error` read it.
  std::unique_ptr<ClockDomain> bare_domain;
  std::unique_ptr<Rig> bare;
  std::unique_ptr<FabricRig> fabric;
  std::string topology;
  int endpoints = kPorts;
  if (o.rig == "bare") {
    // As switch-uniform builds it (`xysim bench switch`): CBFC on the host links, one VC, 1024 credits.
    bare_domain = std::make_unique<ClockDomain>("core_bare", sp.period());
    link::CbfcConfig cb;
    cb.vcs = 1;
    cb.buffer_credits.assign(1, 1024);
    cb.validate("cbfc");
    bare = std::make_unique<Rig>("top", sp, bare_domain->clock(), stats, pool, traffic, ctx, link::FcMode::kCbfc, cb);
    topology = fmt::format("one switch core, {} ports, no PHY/MAC/LLR", sp.ports);
  } else {
    const lingyun::PortParams pp = lingyun::PortParams::declare(config, sp.vcs);
    const lingyun::Topology t = o.rig == "composed" ? lingyun::Topology::single(kPorts, 2.0)
                                                    : lingyun::Topology::leaf_spine(kPorts, 8, 8, 1.0, 2.0, 10.0);
    fabric = std::make_unique<FabricRig>("top", o.rig == "composed" ? "lingyun" : "leafspine", t, sp, pp, traffic,
                                         stats, pool, ctx);
    topology = fabric->fabric->summary();
    endpoints = fabric->fabric->endpoints();
  }
  const Time period = sp.period();
  auto received = [&] { return bare ? bare->received() : fabric->received(); };
  auto error = [&]() -> std::string {
    if (bare) {
      if (std::string e = bare->error(); !e.empty()) return e;
      for (const auto& l : bare->links)
        if (!l->overflow().empty()) return l->overflow();
      return "";
    }
    return fabric->error();
  };

  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  const Time warm_end = static_cast<Time>(o.warmup_us * kUs), end = warm_end + static_cast<Time>(o.us * kUs);
  std::string failure = run_until(warm_end);
  const auto t1 = std::chrono::steady_clock::now();
  const Time start = sim_now();
  const std::uint64_t before = received();
  if (failure.empty()) failure = run_until(end);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  const double build = std::chrono::duration<double>(t1 - t0).count();  // and the warm-up
  if (failure.empty()) failure = error();
  if (fabric) fabric->fabric->recycle_drops(pool);

  std::cout << nlohmann::json{{"rig", o.rig},
                              {"topology", topology},
                              {"endpoints", endpoints},
                              {"load", spec.load},
                              {"cycles", static_cast<double>(sim_now() - start) / static_cast<double>(period)},
                              {"wall_s", wall},
                              {"build_s", build},
                              {"packets", received() - before},
                              {"peak_rss_kib", peak_rss_kib()},
                              {"failure", failure}}
                   .dump()
            << "\n";
  if (!failure.empty()) {
    std::cerr << "FAILED: " << o.rig << ": " << failure << "\n";
    return 1;
  }
  return 0;
}

int lingyun_bench(const char* self, const LingyunBenchOptions& o) {
  sw::SwitchParams sp;
  {
    Config c;
    sp = sw::SwitchParams::declare(c, "switch");
  }
  const double cycles = o.us * kUs / static_cast<double>(sp.period());
  std::cout << fmt::format(
                   "Lingyun ASIC: bare switch core vs every port composed (PHY rs544 fast codec, pre-FEC BER {:g}, "
                   "MAC/FCS, LLR, CBFC)\n"
                   "uniform traffic 64-1500 B; {} us measured (= {:.0f} switch-core cycles at {} MHz) after {} us of "
                   "untimed warm-up; {} rounds of the three rigs\n",
                   kPortBer, o.us, cycles, sp.clock_mhz, o.warmup_us, o.repeats)
            << fmt::format("  {:<28} {:>5} {:>14} {:>13} {:>9} {:>9} {:>9}\n", "rig", "load", "cycles/s", "packets/s",
                           "wall s", "setup s", "peak MiB");
  std::cout.flush();
  // Round by round, the rigs back to back: the machine's speed drifts over seconds, and a pair run
  // close together shares it. The ratio is the median of the rounds' ratios.
  std::vector<Child> runs[std::size(kRigs)];
  std::vector<double> ratios;
  for (int round = 0; round < o.repeats; ++round) {
    for (std::size_t i = 0; i < std::size(kRigs); ++i) {
      const Child& c = runs[i].emplace_back(run_child(self, kRigs[i].rig, o));
      std::cout << fmt::format("  {:<28} {:>5.2f} {:>14.0f} {:>13.0f} {:>9.2f} {:>9.2f} {:>9.1f}\n", kRigs[i].label,
                               kRigs[i].load, c.cycles_per_s, c.packets_per_s, c.wall_s, c.build_s, c.peak_mib);
      std::cout.flush();
    }
    const double bare = runs[0].back().cycles_per_s, composed = runs[1].back().cycles_per_s;
    ratios.push_back(bare > 0 ? composed / bare : 0);
  }
  auto cycles_per_s = [&](std::size_t rig) {
    std::vector<double> v;
    for (const Child& c : runs[rig]) v.push_back(c.cycles_per_s);
    return median(v);
  };
  const Child& leaf_spine = runs[2].front();
  const auto [lowest, highest] = std::minmax_element(ratios.begin(), ratios.end());
  std::cout << fmt::format("  {}\n  {}\n", runs[1].front().topology, leaf_spine.topology)
            << fmt::format("bare switch core cycles/s:     {:.0f} (median of {})\n", cycles_per_s(0), o.repeats)
            << fmt::format("composed Lingyun cycles/s:     {:.0f} (median of {})\n", cycles_per_s(1), o.repeats)
            << fmt::format("composed / bare:               {:.4f}x (median of {} rounds' ratios, {:.4f}-{:.4f}; "
                           "aim: >= 0.5x)\n",
                           median(ratios), o.repeats, *lowest, *highest)
            << fmt::format("leaf-spine cycles/s:           {:.0f} = {:.0f} endpoint-cycles/s ({} endpoints)\n",
                           cycles_per_s(2), cycles_per_s(2) * leaf_spine.endpoints, leaf_spine.endpoints)
            << "cycles/s: switch-core clock cycles simulated per wall second, measured window only; packets/s: frames\n"
               "delivered to the hosts per wall second; setup s: build and warm-up (untimed); each rig in its own process.\n";
  return 0;
}

}  // namespace xy
