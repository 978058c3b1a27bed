#include "kernel/stats.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace xy {

LatencyHistogram::LatencyHistogram(Time period) : period_(period) {}

void LatencyHistogram::count_into(std::vector<std::uint64_t>& dense, const std::uint16_t* values, std::size_t n) {
  for (const std::uint16_t* v = values; v != values + n; ++v) {
    if (*v >= dense.size()) dense.resize(*v + 1u);
    ++dense[*v];
  }
}

void LatencyHistogram::record_sparse(Cycle cycles) {
  unfolded_.push_back(cycles);
  if (unfolded_.size() >= std::max(kFoldAtLeast, folded_.size() / 4)) {
    folded_ = merged(folded_, std::move(unfolded_));
    unfolded_.clear();
  }
  note(cycles);
}

void LatencyHistogram::count_pending() {
  count_into(dense_, pending_.data(), pending_count_);
  pending_count_ = 0;
}

Cycle LatencyHistogram::quantile(double q) const { return quantiles({q}).front(); }

std::vector<Cycle> LatencyHistogram::quantiles(std::initializer_list<double> qs) const {
  const auto sorted = bins();
  std::vector<Cycle> out;
  for (double q : qs) {
    // The q-quantile is the first value whose cumulative count reaches ceil(q * count).
    const auto need = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::ceil(q * count_)));
    std::uint64_t seen = 0;
    Cycle v = count_ ? max_ : 0;
    for (const auto& [cycles, n] : sorted)
      if ((seen += n) >= need) {
        v = cycles;
        break;
      }
    out.push_back(v);
  }
  return out;
}

// `folded` with `samples` counted in, in order.
LatencyHistogram::Bins LatencyHistogram::merged(const Bins& folded, std::vector<Cycle> samples) {
  std::sort(samples.begin(), samples.end());
  Bins out;
  out.reserve(folded.size() + samples.size());
  auto f = folded.begin();
  for (std::size_t i = 0; i < samples.size();) {
    const Cycle v = samples[i];
    for (; f != folded.end() && f->first < v; ++f) out.push_back(*f);
    std::uint64_t n = 0;
    for (; i < samples.size() && samples[i] == v; ++i) ++n;
    if (f != folded.end() && f->first == v) n += (f++)->second;
    out.emplace_back(v, n);
  }
  out.insert(out.end(), f, folded.end());
  out.shrink_to_fit();
  return out;
}

std::vector<std::pair<Cycle, std::uint64_t>> LatencyHistogram::bins() const {
  std::vector<std::uint64_t> dense = dense_;
  count_into(dense, pending_.data(), pending_count_);
  std::vector<std::pair<Cycle, std::uint64_t>> out;
  for (Cycle c = 0; c < dense.size(); ++c)
    if (dense[c]) out.emplace_back(c, dense[c]);
  const Bins sparse = merged(folded_, unfolded_);
  out.insert(out.end(), sparse.begin(), sparse.end());
  return out;
}

void LatencyHistogram::reset() {
  dense_.clear();
  pending_count_ = 0;
  Bins().swap(folded_);
  std::vector<Cycle>().swap(unfolded_);
  count_ = sum_ = min_ = max_ = 0;
}

nlohmann::json LatencyHistogram::to_json() const {
  const double ns_per_cycle = static_cast<double>(period_) / kNs;
  nlohmann::json j;
  j["count"] = count_;
  auto put = [&](const char* name, double cycles) {  // null without samples: no latency, not 0
    j[fmt::format("{}_cycles", name)] = count_ ? nlohmann::json(cycles) : nlohmann::json();
    j[fmt::format("{}_ns", name)] = count_ ? nlohmann::json(cycles * ns_per_cycle) : nlohmann::json();
  };
  put("min", static_cast<double>(min_));
  put("mean", mean());
  const auto q = quantiles({0.50, 0.99, 0.999});
  put("p50", static_cast<double>(q[0]));
  put("p99", static_cast<double>(q[1]));
  put("p999", static_cast<double>(q[2]));
  put("max", static_cast<double>(max_));
  return j;
}

Counter& Stats::counter(const std::string& path, const std::string& unit, const std::string& description) {
  if (counters_.count(path) || histograms_.count(path)) throw std::logic_error("stat registered twice: " + path);
  auto& e = counters_[path];
  e = {unit, description, &counter_store_.emplace_back()};
  return *e.value;
}

LatencyHistogram& Stats::histogram(const std::string& path, Time period, const std::string& description) {
  if (counters_.count(path) || histograms_.count(path)) throw std::logic_error("stat registered twice: " + path);
  auto& e = histograms_[path];
  e = {"cycles", description, &histogram_store_.emplace_back(period)};
  return *e.value;
}

const Counter* Stats::find_counter(const std::string& path) const {
  auto it = counters_.find(path);
  return it == counters_.end() ? nullptr : it->second.value;
}

const LatencyHistogram* Stats::find_histogram(const std::string& path) const {
  auto it = histograms_.find(path);
  return it == histograms_.end() ? nullptr : it->second.value;
}

void Stats::reset() {
  for (auto& [path, e] : counters_) e.value->reset();
  for (auto& [path, e] : histograms_) e.value->reset();
}

nlohmann::json Stats::to_json() const {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [path, e] : counters_)
    j[path] = {{"value", e.value->value()}, {"unit", e.unit}, {"description", e.description}};
  for (const auto& [path, e] : histograms_) {  // with the clock whose cycles it counts
    j[path] = e.value->to_json();
    j[path]["description"] = e.description;
    j[path]["clock_period_ns"] = to_ns(e.value->period());
  }
  return j;
}

std::string Stats::table() const {
  std::string out;
  for (const auto& [path, e] : counters_)
    out += fmt::format("  {:<44} {:>14} {}\n", path, e.value->value(), e.unit);
  for (const auto& [path, e] : histograms_) {
    const LatencyHistogram& h = *e.value;
    const auto q = h.quantiles({0.5, 0.99, 0.999});
    out += fmt::format("  {:<44} n={} p50={} p99={} p99.9={} max={} cycles\n", path, h.count(), q[0], q[1], q[2],
                       h.max());
  }
  return out;
}

}  // namespace xy
