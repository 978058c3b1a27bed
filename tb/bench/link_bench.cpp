#include "tb/bench/link_bench.hpp"

#include <sys/resource.h>

#include <chrono>
#include <iostream>

#include <fmt/format.h>

#include "tb/run/run.hpp"

namespace xy {

int link_bench(std::uint64_t frames, double frame_error) {
  RunOptions o;
  o.scenario = "link-llr";
  o.sets = {fmt::format("traffic.frames={}", frames), fmt::format("link.frame_error={}", frame_error)};
  o.quiet = true;
  const auto t0 = std::chrono::steady_clock::now();
  const RunResult r = run_scenario(o);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  const double period_ns = 1000.0 / r.results["config"]["link.clock_mhz"].get<double>();
  const double cycles = r.results["sim_time_ns"].get<double>() / period_ns;
  const auto& st = r.results["stats"];
  const double delivered = static_cast<double>(st["top.a.rx.delivered"]["value"].get<std::uint64_t>() +
                                               st["top.b.rx.delivered"]["value"].get<std::uint64_t>());
  std::cout << fmt::format("link-llr, 800 Gb/s each way at full load, frame error {:g}, {} frames each way\n",
                           frame_error, frames)
            << fmt::format("  simulated      {:.3f} ms = {:.0f} cycles in {:.2f} s wall\n",
                           r.results["sim_time_ns"].get<double>() / 1e6, cycles, wall)
            << fmt::format("  speed          {:.2f} M cycles/s, {:.2f} M frames/s delivered, {:.3f} simulated us/s\n",
                           cycles / wall / 1e6, delivered / wall / 1e6, r.results["sim_time_ns"].get<double>() / 1e3 / wall)
            << fmt::format("  peak memory    {:.1f} MiB\n", u.ru_maxrss / 1024.0);
  if (!r.failure.empty()) {
    std::cerr << "FAILED: " << r.failure << "\n";
    return 1;
  }
  return 0;
}

}  // namespace xy
