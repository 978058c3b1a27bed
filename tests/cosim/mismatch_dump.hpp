// The window around a lockstep mismatch, for a verification engineer to open in gtkwave: keeps
// the last `before` cycles of a twin's signals (RTL and model side by side) and, once a
// mismatch is reported, `after` more; then writes them as an FST with a .gtkw beside it.
#pragma once
#include <cstdint>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "kernel/units.hpp"
#include "kernel/waves.hpp"

namespace xy {

// A lockstep run's disagreements: how many, and the first, as the test reports it.
struct Mismatch {
  Cycle cycle = 0;
  std::string signal;
  std::uint64_t rtl = 0, model = 0;
  std::string text() const { return fmt::format("cycle {}: {} rtl={:#x} model={:#x}", cycle, signal, rtl, model); }
};

class MismatchLog {
 public:
  // Compares one signal; returns whether RTL and model differ (and logs it).
  bool check(Cycle cycle, const std::string& signal, std::uint64_t rtl, std::uint64_t model) {
    if (rtl == model) return false;
    if (count_++ == 0) first_ = Mismatch{cycle, signal, rtl, model};
    return true;
  }
  std::uint64_t count() const { return count_; }
  const Mismatch& first() const { return first_; }

 private:
  std::uint64_t count_ = 0;
  Mismatch first_;
};

class MismatchDump {
 public:
  // Signals as (hierarchical name, width); name them "<twin>.rtl.x" and "<twin>.model.x" so
  // that the .gtkw groups each side.
  MismatchDump(std::vector<std::pair<std::string, unsigned>> signals, Cycle before = 64, Cycle after = 32)
      : signals_(std::move(signals)), before_(before), after_(after) {}

  // One cycle's values, in the order of the signals; call every cycle.
  void record(Cycle cycle, std::vector<std::uint64_t> values) {
    if (complete()) return;
    rows_.push_back({cycle, std::move(values)});
    if (!armed_ && rows_.size() > before_) rows_.pop_front();
    if (armed_ && cycle >= mismatch_ + after_) complete_ = true;
  }
  void mismatch(Cycle cycle) {  // the first one sets the window
    if (armed_) return;
    armed_ = true;
    mismatch_ = cycle;
  }
  bool armed() const { return armed_; }
  bool complete() const { return complete_; }

  // Writes `path` (.fst or .vcd) and its .gtkw; time = cycle × period.
  void write(const std::string& path, Time period) const {
    WavesOptions options;
    options.path = path;
    Waves waves(options);
    const std::vector<std::uint64_t>* row = nullptr;
    for (std::size_t i = 0; i < signals_.size(); ++i)
      waves.probe(signals_[i].first, signals_[i].second, [&row, i] { return (*row)[i]; });
    waves.start();
    for (const auto& r : rows_) {
      row = &r.values;
      waves.sample(r.cycle * period);
    }
    waves.finish(rows_.empty() ? 0 : (rows_.back().cycle + 1) * period);
  }

 private:
  struct Row {
    Cycle cycle;
    std::vector<std::uint64_t> values;
  };
  std::vector<std::pair<std::string, unsigned>> signals_;
  Cycle before_, after_;
  std::deque<Row> rows_;
  bool armed_ = false, complete_ = false;
  Cycle mismatch_ = 0;
};

}  // namespace xy
