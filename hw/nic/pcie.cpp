#include "hw/nic/pcie.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "kernel/config.hpp"

namespace xy::nic {

namespace {
std::uint64_t tlps(std::uint64_t bytes, std::uint32_t per) { return std::max<std::uint64_t>(1, (bytes + per - 1) / per); }
bool power_of_two_in(std::uint32_t v, std::uint32_t lo, std::uint32_t hi) { return v >= lo && v <= hi && !(v & (v - 1)); }
}  // namespace

void PcieConfig::validate(const std::string& prefix) const {
  if (lanes != 1 && lanes != 2 && lanes != 4 && lanes != 8 && lanes != 16)
    throw ConfigError(fmt::format("{}.lanes = {}: allowed 1, 2, 4, 8, 16", prefix, lanes));
  if (!(gts >= 8 && gts <= 64))
    throw ConfigError(fmt::format("{}.gts = {:g}: allowed 8 to 64 GT/s (Gen3 to Gen6)", prefix, gts));
  if (!power_of_two_in(max_payload, 128, 4096))
    throw ConfigError(fmt::format("{}.max_payload = {}: allowed 128, 256, ... 4096", prefix, max_payload));
  if (!power_of_two_in(max_read_request, 128, 4096))
    throw ConfigError(fmt::format("{}.max_read_request = {}: allowed 128, 256, ... 4096", prefix, max_read_request));
}

PcieLink::PcieLink(const PcieConfig& config) : cfg_(config) { cfg_.validate("nic.pcie"); }

Time PcieLink::wire_time(std::uint64_t bytes) const {
  return static_cast<Time>(std::ceil(static_cast<double>(bytes) * kNs / cfg_.bytes_per_ns()));
}

Time PcieLink::completion_time(std::uint64_t bytes) const {
  return wire_time(bytes + tlps(bytes, cfg_.max_payload) * kCompletionTlpOverhead);
}

Time PcieLink::send(int d, std::uint64_t bytes, Time at) {
  // The first idle stretch from `at` on that holds the transfer: one booked for later (a read's
  // completions) does not hold back one that fits before it (a doorbell rung meanwhile).
  std::map<Time, Time>& busy = busy_[d];
  const Time length = wire_time(bytes);
  while (!busy.empty() && busy.begin()->second + kForget < at) busy.erase(busy.begin());
  Time start = at;
  auto it = busy.upper_bound(at);
  if (it != busy.begin() && std::prev(it)->second > start) start = std::prev(it)->second;
  for (; it != busy.end() && it->first < start + length; ++it) start = std::max(start, it->second);
  peak_wait_[d] = std::max(peak_wait_[d], start - at);
  // Book [start, start + length), merged with the stretches it touches.
  Time lo = start, hi = start + length;
  auto after = busy.upper_bound(hi);
  auto first = busy.lower_bound(lo);
  if (first != busy.begin() && std::prev(first)->second >= lo) --first;
  for (auto k = first; k != after; ++k) {
    lo = std::min(lo, k->first);
    hi = std::max(hi, k->second);
  }
  busy.erase(first, after);
  busy[lo] = hi;
  wire_[d] += bytes;
  return start + length;
}

Time PcieLink::read(std::uint64_t bytes, Time now) {
  const std::uint64_t requests = tlps(bytes, cfg_.max_read_request);
  const Time first_sent = send(kUp, kMemoryTlpOverhead, now);
  if (requests > 1) send(kUp, (requests - 1) * kMemoryTlpOverhead, first_sent);
  const Time data_from = first_sent + cfg_.latency + cfg_.memory_latency;
  return send(kDown, bytes + tlps(bytes, cfg_.max_payload) * kCompletionTlpOverhead, data_from) + cfg_.latency;
}

Time PcieLink::write(std::uint64_t bytes, Time now) {
  return send(kUp, bytes + tlps(bytes, cfg_.max_payload) * kMemoryTlpOverhead, now) + cfg_.latency;
}

Time PcieLink::doorbell(Time now) { return send(kDown, kDoorbellBytes + kMemoryTlpOverhead, now) + cfg_.latency; }

}  // namespace xy::nic
