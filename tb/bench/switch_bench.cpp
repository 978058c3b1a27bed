#include "tb/bench/switch_bench.hpp"

#include <sys/resource.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "tb/bench/median.hpp"

namespace xy {
namespace {

struct Run {
  double cycles_per_s, cycles_per_cpu_s, packets_per_s, wall_s, peak_mib;
};

double children_cpu_s() {
  rusage u{};
  getrusage(RUSAGE_CHILDREN, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * (u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// One switch-uniform run in a child process (SystemC elaborates once per process). Per wall
// second as the run measured it, and per second of the child's CPU time (user + system, the
// whole process), which other work on a shared machine disturbs less.
Run run_once(const char* self, const std::string& out, int ports, double load, std::uint64_t cycles) {
  const std::string cmd = fmt::format(
      "'{}' run switch-uniform --quiet --set switch.ports={} --set uniform.load={} --set uniform.warmup_cycles=0 "
      "--set uniform.measure_cycles={} --out '{}' > /dev/null",
      self, ports, load, cycles, out);
  const double cpu_before = children_cpu_s();
  if (std::system(cmd.c_str()) != 0) throw std::runtime_error("failed: " + cmd);
  const double cpu = children_cpu_s() - cpu_before;
  const auto run = nlohmann::json::parse(std::ifstream(out + "/run.json"));
  const auto results = nlohmann::json::parse(std::ifstream(out + "/results.json"));
  const double wall = run["wall_s"].get<double>();
  const double period_ns = 1000.0 / results["config"]["switch.clock_mhz"].get<double>();
  const double simulated = results["sim_time_ns"].get<double>() / period_ns;
  const double packets = static_cast<double>(results["stats"]["top.load1.packets_out"]["value"].get<std::uint64_t>());
  return {simulated / wall, simulated / cpu, packets / wall, wall, run["peak_rss_mib"].get<double>()};
}

}  // namespace

int switch_bench(const char* self, const SwitchBenchOptions& o) {
  char dir_template[] = "/tmp/xysim-bench-XXXXXX";
  const char* dir = mkdtemp(dir_template);
  if (!dir) throw std::runtime_error("cannot make a temporary folder");
  std::cout << fmt::format(
                   "switch-uniform, bare switch core (800G ports, 1562.5 MHz), uniform traffic 64-1500 B, {} cycles "
                   "measured, median of {}\n",
                   o.cycles, o.repeats)
            << fmt::format("  {:>6} {:>6} {:>12} {:>16} {:>12} {:>8} {:>9} {:>18}\n", "ports", "load", "cycles/s",
                           "cycles/CPU-s", "packets/s", "wall s", "peak MiB", "ns per port-cycle");
  // cycles/s per (ports, load), for the scaling lines
  std::vector<std::vector<double>> rate(o.ports.size(), std::vector<double>(o.loads.size()));
  for (std::size_t p = 0; p < o.ports.size(); ++p) {
    for (std::size_t l = 0; l < o.loads.size(); ++l) {
      std::vector<double> cycles_per_s, cycles_per_cpu_s, packets_per_s, wall, peak;
      for (int r = 0; r < o.repeats; ++r) {
        const Run run = run_once(self, fmt::format("{}/p{}-l{}-r{}", dir, o.ports[p], o.loads[l], r), o.ports[p],
                                 o.loads[l], o.cycles);
        cycles_per_s.push_back(run.cycles_per_s);
        cycles_per_cpu_s.push_back(run.cycles_per_cpu_s);
        packets_per_s.push_back(run.packets_per_s);
        wall.push_back(run.wall_s);
        peak.push_back(run.peak_mib);
      }
      rate[p][l] = median(cycles_per_s);
      std::cout << fmt::format("  {:>6} {:>6.2f} {:>12.0f} {:>16.0f} {:>12.0f} {:>8.2f} {:>9.1f} {:>18.2f}\n", o.ports[p],
                               o.loads[l], rate[p][l], median(cycles_per_cpu_s), median(packets_per_s), median(wall),
                               median(peak), 1e9 / (rate[p][l] * o.ports[p]))
                << std::flush;
    }
  }
  // Cost per cycle against ports, between neighbouring port counts: x in cost ~ ports^x (1 is a
  // cost that follows traffic, which grows with the ports at a given load).
  if (o.ports.size() > 1) {
    std::cout << "  cost per cycle ~ ports^x:";
    for (std::size_t l = 0; l < o.loads.size(); ++l) {
      std::cout << fmt::format("  load {:.2f}:", o.loads[l]);
      for (std::size_t p = 1; p < o.ports.size(); ++p)
        std::cout << fmt::format(" {}->{} {:.2f}", o.ports[p - 1], o.ports[p],
                                 std::log(rate[p - 1][l] / rate[p][l]) / std::log(double(o.ports[p]) / o.ports[p - 1]));
    }
    std::cout << "\n";
  }
  std::filesystem::remove_all(dir);
  return 0;
}

}  // namespace xy
