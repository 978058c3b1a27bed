// Stats: counters and latency histograms registered under hierarchical names
// (top.link.sink.latency). Histograms count whole cycles, one count per value seen, so
// percentiles are exact cycle counts.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <initializer_list>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernel/units.hpp"

namespace xy {

class Counter {
 public:
  void add(std::uint64_t n = 1) { value_ += n; }
  std::uint64_t value() const { return value_; }
  void reset() { value_ = 0; }

 private:
  std::uint64_t value_ = 0;
};

// Three cache lines: what a record of a dense value touches (the count, sum and bounds, the dense
// bins' pointer; the values not yet counted in them) in the first two, beside nothing else's; the
// sparse values' after.
class alignas(64) LatencyHistogram {
 public:
  explicit LatencyHistogram(Time period);
  // Inline: most records only append a dense value to the pending ones (a PHY records every frame).
  void record(Cycle cycles) {
    if (cycles >= kDense) return record_sparse(cycles);
    pending_[pending_count_++] = static_cast<std::uint16_t>(cycles);
    if (pending_count_ == pending_.size()) count_pending();
    note(cycles);
  }
  std::uint64_t count() const { return count_; }
  Cycle min() const { return min_; }
  Cycle max() const { return max_; }
  double mean() const { return count_ ? static_cast<double>(sum_) / count_ : 0.0; }
  // Smallest value v with at least q of the samples <= v (q in [0, 1]); 0 when empty.
  Cycle quantile(double q) const;
  // Several quantiles from one sort of the bins, in the order asked.
  std::vector<Cycle> quantiles(std::initializer_list<double> qs) const;
  Time period() const { return period_; }
  // (cycles, count) of every non-empty bin, ascending: the whole distribution, for CDFs.
  std::vector<std::pair<Cycle, std::uint64_t>> bins() const;
  void reset();
  nlohmann::json to_json() const;  // count, mean/p50/p99/p999/max in _cycles and _ns

 private:
  // Count per value: below kDense in a vector as long as the largest value seen there (8 KiB at
  // most; a PHY's frame latencies fall there), counted sixteen values at a time: a histogram of
  // one port among many finds its bins' lines gone from the cache since its last record, and
  // sixteen values, which fall on a few lines, wait for them together, where one at a time each
  // value waits alone.
  // Above kDense the samples are kept as they come and folded, once there are a quarter as many
  // as the distinct values folded before, into (value, count) pairs in order, so that memory and
  // the quantiles' work follow the distinct values, not the range (a queue that builds spreads a
  // few thousand samples over millions of cycles), at 16 bytes a value.
  static constexpr Cycle kDense = 1024;
  static constexpr std::size_t kFoldAtLeast = 4096;
  using Bins = std::vector<std::pair<Cycle, std::uint64_t>>;
  static Bins merged(const Bins& folded, std::vector<Cycle> samples);
  static void count_into(std::vector<std::uint64_t>& dense, const std::uint16_t* values, std::size_t n);
  void record_sparse(Cycle cycles);
  void count_pending();  // into the dense bins
  void note(Cycle cycles) {
    min_ = count_ ? std::min(min_, cycles) : cycles;
    max_ = std::max(max_, cycles);
    sum_ += cycles;
    ++count_;
  }
  std::vector<std::uint64_t> dense_;
  std::uint64_t count_ = 0, sum_ = 0;
  Cycle min_ = 0, max_ = 0;
  std::array<std::uint16_t, 16> pending_{};  // dense values the bins have not taken yet, the first
  std::uint8_t pending_count_ = 0;           // pending_count_ of them
  Time period_;
  Bins folded_;
  std::vector<Cycle> unfolded_;
};

class Stats {
 public:
  Stats() = default;
  Stats(const Stats&) = delete;  // its entries point into its own stores
  Stats& operator=(const Stats&) = delete;
  Stats(Stats&&) = default;
  Stats& operator=(Stats&&) = default;
  Counter& counter(const std::string& path, const std::string& unit, const std::string& description);
  LatencyHistogram& histogram(const std::string& path, Time period, const std::string& description);
  const Counter* find_counter(const std::string& path) const;
  const LatencyHistogram* find_histogram(const std::string& path) const;

  void reset();  // the end of warm-up
  nlohmann::json to_json() const;
  std::string table() const;  // for people

 private:
  template <class T>
  struct Entry {
    std::string unit, description;
    T* value;
  };
  // The counters side by side in the order registered: a block registers its own together, so
  // the few it adds to per frame share a cache line or two rather than one each.
  std::deque<Counter> counter_store_;
  std::deque<LatencyHistogram> histogram_store_;
  std::map<std::string, Entry<Counter>> counters_;
  std::map<std::string, Entry<LatencyHistogram>> histograms_;
};

}  // namespace xy
