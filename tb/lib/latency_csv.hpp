// latency_histograms.csv, an artifact beside results.json (--out): every bin of some latency
// histograms, so that their CDFs can be drawn (scripts/plot cdf); results.json keeps only their
// percentiles.
#pragma once
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "kernel/stats.hpp"

namespace xy {

// One row a non-empty bin: series (the histogram's name in the run), latency, packets.
inline void write_latency_histograms(const std::string& dir,
                                     const std::vector<std::pair<std::string, const LatencyHistogram*>>& series) {
  std::ofstream csv(dir + "/latency_histograms.csv");
  csv << "series,latency_cycles,latency_ns,count\n";
  for (const auto& [name, histogram] : series) {
    const double ns_per_cycle = to_ns(histogram->period());
    for (const auto& [cycles, count] : histogram->bins())
      csv << fmt::format("{},{},{},{}\n", name, cycles, cycles * ns_per_cycle, count);
  }
}

}  // namespace xy
