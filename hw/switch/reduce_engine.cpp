#include "hw/switch/reduce_engine.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace xy::sw {

ReduceEngine::ReduceEngine(std::string name, ReduceConfig config, int alus, std::vector<Channel<Packet*>*> in,
                           std::vector<Channel<Packet*>*> out, PacketPool& pool)
    : Core(std::move(name)),
      table_(config),
      alus_(alus),
      in_(std::move(in)),
      out_(std::move(out)),
      pool_(pool),
      members_(in_.size()),
      waiting_(in_.size()),
      results_(in_.size()) {
  if (alus < 1 || alus > 4096) throw std::invalid_argument(fmt::format("{}: alus = {}: allowed 1..4096", this->name(), alus));
  if (in_.size() != out_.size())
    throw std::invalid_argument(fmt::format("{}: {} input ports but {} outputs", this->name(), in_.size(), out_.size()));
}

void ReduceEngine::add_group(std::uint32_t group, const std::vector<int>& ports) {
  if (group > 0xffff) throw std::invalid_argument(fmt::format("{}: group {}: allowed 0..65535", name(), group));
  std::vector<std::uint32_t> ids;
  for (std::size_t m = 0; m < ports.size(); ++m) {
    const int p = ports[m];
    if (p < 0 || p >= static_cast<int>(in_.size()) || members_[p].listed)
      throw std::invalid_argument(fmt::format("{}: group {}: port {} is not a free ALU port (0..{})", name(), group, p,
                                              in_.size() - 1));
    ids.push_back(static_cast<std::uint32_t>(m));
  }
  table_.add_group(group, ids);  // validates the group before any port is taken
  for (std::size_t m = 0; m < ports.size(); ++m) members_[ports[m]] = {group, static_cast<std::uint32_t>(m), true};
  if (group_ports_.size() <= group) group_ports_.resize(group + 1);
  group_ports_[group] = ports;
}

bool ReduceEngine::try_start(int port) {
  Channel<Packet*>& in = *in_[port];
  if (!in.can_pop()) return false;
  const Member& m = members_[port];
  if (!m.listed) throw std::logic_error(fmt::format("{}: a contribution on port {}, which is in no group", name(), port));
  Packet* p = in.peek();
  const std::uint64_t chunk = p->id - 1;
  const std::uint64_t key = key_of(m.group, chunk);
  const bool by_arrival = table_.config().order == ReduceOrder::kArrival;
  Waiting& w = waiting_[port];
  const bool no_alu = static_cast<int>(passes_.size()) >= alus_;
  if (no_alu || (!table_.holds(m.group, chunk) && table_.slots_in_use() + draining_ >= table_.config().slots)) {
    if (!w.since) w = {now() + 1, no_alu};  // +1: a wait that began at cycle 0 still counts
    return false;
  }
  if (w.since) {  // the wait is counted once it ends, against what first held it
    (w.for_alu ? alu_wait_ : slot_wait_) += now() + 1 - w.since;
    w.since = 0;
  }
  in.pop();
  more_ = more_ || in.ready_by(now() + 1);  // this port's next one may start next cycle
  const Cycle pass = table_.cycles_for(p->bytes);
  const auto* done = table_.contribute(m.group, chunk, m.member, p->payload.data(), p->bytes);
  pool_.release(p);
  peak_slots_ = std::max(peak_slots_, table_.slots_in_use() + draining_ + (done ? 1 : 0));
  Cycle cycles = pass;
  if (!by_arrival) cycles = done ? pass * static_cast<Cycle>(group_ports_[m.group].size()) : 0;
  if (cycles == 0) return true;  // stored, no ALU
  Cycle ends = now() + cycles;
  if (by_arrival) {  // chained a cycle behind the chunk's pass before it
    auto [it, first] = adding_.try_emplace(key, ends);
    if (!first) it->second = ends = std::max(ends, it->second + 1);
  }
  Pass job{ends, key, nullptr, m.group, chunk};
  if (done) {
    job.result = std::make_shared<const std::vector<std::uint8_t>>(done->data);
    ++draining_;
  }
  alu_busy_cycles_ += ends - now();
  passes_.push(std::move(job));
  return true;
}

void ReduceEngine::eval() {
  while (!passes_.empty() && passes_.top().ends <= now()) {
    const Pass& done = passes_.top();
    if (auto it = adding_.find(done.key); it != adding_.end() && it->second == done.ends) adding_.erase(it);
    if (done.result) {
      --draining_;
      for (int port : group_ports_[done.group]) results_[port].push_back({done.chunk, done.result});
    }
    passes_.pop();
  }
  const int ports = static_cast<int>(in_.size());
  more_ = false;
  const int first = next_port_;
  for (int i = 0; i < ports; ++i)
    if (try_start((first + i) % ports)) next_port_ = (first + i + 1) % ports;  // round robin: after the last started
  for (int port = 0; port < ports; ++port) {
    auto& queue = results_[port];
    if (queue.empty() || !out_[port]->can_push()) continue;
    const Result& r = queue.front();
    Packet* p = pool_.acquire();
    p->id = r.chunk + 1;
    p->src = static_cast<std::uint32_t>(port);
    p->dst = static_cast<std::uint32_t>(port);
    p->bytes = static_cast<std::uint32_t>(r.data->size());
    p->phantom = false;
    p->payload.assign(r.data->begin(), r.data->end());
    p->created = clock().time_of(now());
    out_[port]->push(p);
    queue.pop_front();
  }
}

// A contribution that waits for an ALU or a slot can start only when a pass ends, and an
// arrival wakes the engine itself: it stays busy only to send results and to take a port's next
// contribution behind one it started.
void ReduceEngine::commit() {
  bool sending = false;
  for (const auto& q : results_) sending = sending || !q.empty();
  if (!passes_.empty()) wake_at(std::max(passes_.top().ends, now() + 1));
  set_busy(sending || more_);
}

}  // namespace xy::sw
