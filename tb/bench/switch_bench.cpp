#include "tb/bench/switch_bench.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace xy {

int switch_bench(const char* self, std::uint64_t cycles) {
  char dir_template[] = "/tmp/xysim-bench-XXXXXX";
  const char* dir = mkdtemp(dir_template);
  if (!dir) throw std::runtime_error("cannot make a temporary folder");
  std::cout << fmt::format("64-port switch (800G ports, 1562.5 MHz), uniform traffic 64-1500 B, {} cycles measured\n",
                           cycles)
            << fmt::format("  {:>6} {:>14} {:>14} {:>12} {:>10}\n", "load", "cycles/s", "packets/s", "wall s", "peak MiB");
  for (double load : {0.5, 1.0}) {
    const std::string out = fmt::format("{}/load{}", dir, load);
    const std::string cmd = fmt::format(
        "'{}' run switch-uniform --quiet --set uniform.load={} --set uniform.warmup_cycles=0 "
        "--set uniform.measure_cycles={} --out '{}' > /dev/null",
        self, load, cycles, out);
    if (std::system(cmd.c_str()) != 0) throw std::runtime_error("failed: " + cmd);
    const auto run = nlohmann::json::parse(std::ifstream(out + "/run.json"));
    const auto results = nlohmann::json::parse(std::ifstream(out + "/results.json"));
    const double wall = run["wall_s"].get<double>();
    const double period_ns = 1000.0 / results["config"]["switch.clock_mhz"].get<double>();
    const double simulated = results["sim_time_ns"].get<double>() / period_ns;
    const double packets = static_cast<double>(results["stats"]["top.load1.packets_out"]["value"].get<std::uint64_t>());
    std::cout << fmt::format("  {:>6.2f} {:>14.0f} {:>14.0f} {:>12.2f} {:>10.1f}\n", load, simulated / wall, packets / wall,
                             wall, run["peak_rss_mib"].get<double>());
  }
  std::filesystem::remove_all(dir);
  return 0;
}

}  // namespace xy
