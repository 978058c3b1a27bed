#include "tb/bench/nic_bench.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace xy {

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
                           bytes * 8 / 1e9 / wall, bytes / 1e6)
            << "  htsim_roce: not built here; the side-by-side run of issue 24 is open (docs/nic.md)\n";
  return 0;
}

}  // namespace xy
