#include "tb/bench/nic_bench.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace xy {

namespace {

struct Htsim {
  double wall_s = 0, last_done_us = 0;
  int flows_done = 0;
};

// The incast in htsim_roce: the senders' flows into node 0 over the topology file xysim exported
// for the PFC design, PFC pausing at 20 packets and resuming below 16, stdout kept to read when
// each flow finished. Bounded: htsim's own DCQCN is not run (it does not end, docs/nic.md).
Htsim run_htsim(const std::string& binary, const std::string& dir, const std::string& topo, int senders,
                std::uint64_t bytes, int mtu, double line_gbps, double end_us) {
  std::ifstream in(topo);
  int nodes = 0;
  for (std::string line; nodes == 0 && std::getline(in, line);)
    if (line.rfind("Nodes ", 0) == 0) nodes = std::stoi(line.substr(6));
  if (nodes <= senders) throw std::runtime_error("no 'Nodes' line for the incast in the htsim topology file " + topo);
  std::ofstream cm(dir + "/incast.cm");
  cm << "Nodes " << nodes << "\nConnections " << senders << "\n";
  for (int i = 1; i <= senders; ++i) cm << i << "->0 start 0 size " << bytes << "\n";
  cm.close();
  const std::string cmd = fmt::format(
      "cd '{}' && timeout 300 '{}' -nodes {} -topo '{}' -tm incast.cm -strat ecmp_host -paths 1 -linkspeed {:.0f} "
      "-mtu {} -q 16384 -pfc_thresholds 16 20 -end {:.0f} > htsim.out 2>&1",
      dir, binary, nodes, topo, line_gbps * 1000, mtu, end_us);
  const auto start = std::chrono::steady_clock::now();
  if (std::system(cmd.c_str()) != 0) throw std::runtime_error("failed: " + cmd);
  Htsim h;
  h.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::ifstream out(dir + "/htsim.out");
  for (std::string line; std::getline(out, line);) {
    const auto at = line.find("finished at ");
    if (line.rfind("Flow ", 0) != 0 || at == std::string::npos) continue;
    ++h.flows_done;
    h.last_done_us = std::max(h.last_done_us, std::stod(line.substr(at + 12)));
  }
  return h;
}

}  // namespace

int nic_bench(const char* self, const NicBenchOptions& o) {
  char dir_template[] = "/tmp/xysim-bench-XXXXXX";
  const char* dir = mkdtemp(dir_template);
  if (!dir) throw std::runtime_error("cannot make a temporary folder");
  const std::string out = std::string(dir) + "/nic-incast";
  const std::string cmd = fmt::format(
      "'{}' run nic-incast --quiet --set incast.senders={} --set incast.message_kib={} --out '{}' > /dev/null", self,
      o.senders, o.message_kib, out);
  if (std::system(cmd.c_str()) != 0) throw std::runtime_error("failed: " + cmd);
  const auto run = nlohmann::json::parse(std::ifstream(out + "/run.json"));
  const auto results = nlohmann::json::parse(std::ifstream(out + "/results.json"));
  Htsim htsim;
  if (!o.htsim.empty()) {
    const std::string exported = std::string(dir) + "/export";
    const std::string cmd = fmt::format("'{}' export htsim '{}' --out '{}' > /dev/null", self, out, exported);
    if (std::system(cmd.c_str()) != 0) throw std::runtime_error("failed: " + cmd);
    htsim = run_htsim(std::filesystem::absolute(o.htsim).string(), dir, exported + "/pfc.topo", o.senders,
                      std::uint64_t(o.message_kib) * 1024, results["config"]["nic.mtu"].get<int>(),
                      results["config"]["switch.port_gbps"].get<double>(), 20 * results["sim_time_ns"].get<double>() / 1000);
  }
  std::filesystem::remove_all(dir);
  const double wall = run["wall_s"].get<double>();
  const double sim_ns = results["sim_time_ns"].get<double>();
  const double period_ns = 1000.0 / results["config"]["switch.clock_mhz"].get<double>();
  const auto& s = results["summary"];
  int designs = 0;
  for (const auto& [name, row] : s.items()) designs += row.is_object() && row.contains("goodput_ratio");
  // The incast's and the victim's, every design.
  const double bytes =
      designs * (o.senders * o.message_kib + results["config"]["incast.victim_kib"].get<double>()) * 1024.0;
  std::cout << fmt::format("nic-incast, {} senders x {} KiB into one, {} designs, each its own fabric: {}\n", o.senders,
                           o.message_kib, designs, s["topology"].get<std::string>())
            << fmt::format("  simulated          {:>10.1f} us ({:.0f} switch-core cycles, each design)\n", sim_ns / 1000,
                           sim_ns / period_ns)
            << fmt::format("  wall               {:>10.2f} s, peak {:.1f} MiB\n", wall, run["peak_rss_mib"].get<double>())
            << fmt::format("  cycles/s           {:>10.0f} (of one design's clock; {} fabrics advance together)\n",
                           sim_ns / period_ns / wall, designs)
            << fmt::format("  delivered          {:>10.2f} Gb/s of simulated traffic per wall second ({:.1f} MB)\n",
                           bytes * 8 / 1e9 / wall, bytes / 1e6);
  if (o.htsim.empty()) {
    std::cout << "  htsim_roce         not given (--htsim PATH times the same incast there)\n";
    return 0;
  }
  const double htsim_bytes = o.senders * o.message_kib * 1024.0;
  const double ours = bytes * 8 / 1e9 / wall, theirs = htsim_bytes * 8 / 1e9 / htsim.wall_s;
  std::cout << fmt::format("htsim_roce, the same incast, PFC only, on the fabric exported for ours:\n")
            << fmt::format("  flows done         {:>10} of {}, the last at {:.1f} us simulated\n", htsim.flows_done,
                           o.senders, htsim.last_done_us)
            << fmt::format("  wall               {:>10.2f} s\n", htsim.wall_s)
            << fmt::format("  delivered          {:>10.2f} Gb/s of simulated traffic per wall second ({:.1f} MB)\n",
                           theirs, htsim_bytes / 1e6)
            << fmt::format("  xysim / htsim      {:>10.4f} (simulated traffic per wall second; ours cycle by cycle, "
                           "htsim packet events)\n",
                           ours / theirs);
  return 0;
}

}  // namespace xy
