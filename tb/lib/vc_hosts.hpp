// The hosts at the ends of a flow-controlled link: a sender with a queue per VC that asks its
// link's flow control before every frame, and a receiver whose buffer drains at a set rate (a
// slow consumer), reporting what arrives and what leaves to its flow control.
#pragma once
#include <algorithm>
#include <deque>
#include <string>
#include <vector>

#include "hw/link/port_fc.hpp"
#include "kernel/channel.hpp"
#include "kernel/stats.hpp"

namespace xy {

// Cycle contract: takes frames from `in` into its VC's queue (4 deep; the source blocks behind a
// full one) and, when the MAC's FIFO has room, hands it the head frame of the next VC in round
// robin order that the flow control lets go, one a cycle.
class VcSender : public Core {
 public:
  VcSender(std::string name, int vcs, Channel<Packet*>& in, Channel<Packet*>& to_mac, link::PortFc& fc, Stats& stats)
      : Core(std::move(name)), in_(in), to_mac_(to_mac), fc_(fc), queues_(static_cast<std::size_t>(vcs)),
        stall_cycles_(stats.counter(this->name() + ".stall_cycles", "cycles",
                                    "cycles with frames waiting and the MAC's FIFO free, but no VC allowed to send")) {}
  void eval() override {
    while (in_.can_pop()) {
      const int vc = in_.peek()->vc % static_cast<int>(queues_.size());
      if (queues_[vc].size() >= 4) break;
      queues_[vc].push_back(in_.pop());
    }
    held_ = false;
    if (!to_mac_.can_push()) {  // the FIFO's credit coming back wakes us
      held_ = queued();
      return;
    }
    bool waiting = false;
    for (std::size_t i = 0; i < queues_.size(); ++i) {
      const int vc = static_cast<int>((next_vc_ + i) % queues_.size());
      if (queues_[vc].empty()) continue;
      waiting = true;
      Packet* f = queues_[vc].front();
      if (!fc_.can_send(*f)) continue;
      queues_[vc].pop_front();
      fc_.on_send(*f);
      to_mac_.push(f);
      next_vc_ = (vc + 1) % static_cast<int>(queues_.size());
      return;
    }
    if (waiting) stall_cycles_.add();
    held_ = waiting;  // the flow control wakes us when credits come or a pause ends
  }
  void commit() override { set_busy(in_.ready_by(now() + 1) || (queued() && !held_)); }
  bool idle() const { return !queued() && !in_.in_flight(); }
  // The VCs whose head frame flow control holds back, and why; or "".
  std::string held_back() const {
    std::string out;
    for (std::size_t q = 0; q < queues_.size(); ++q)
      if (!queues_[q].empty())
        if (std::string why = fc_.held_back(static_cast<int>(q), queues_[q].front()->bytes); !why.empty())
          out += (out.empty() ? "" : "; ") + why;
    return out;
  }

 private:
  bool queued() const {
    return std::any_of(queues_.begin(), queues_.end(), [](const auto& q) { return !q.empty(); });
  }
  Channel<Packet*>& in_;
  Channel<Packet*>& to_mac_;
  link::PortFc& fc_;
  std::vector<std::deque<Packet*>> queues_;
  int next_vc_ = 0;
  bool held_ = false;  // frames wait for flow control or the FIFO, both of which wake us
  Counter& stall_cycles_;
};

// Cycle contract: takes every frame the MAC hands it into its VC's buffer (on_arrive) and drains
// them to `out` at `drain_bytes_per_cycle` (a token bucket), one frame a cycle, VCs in round
// robin (on_depart).
class DrainingReceiver : public Core {
 public:
  DrainingReceiver(std::string name, int vcs, double drain_bytes_per_cycle, Channel<Packet*>& from_mac,
                   Channel<Packet*>& out, link::PortFc& fc)
      : Core(std::move(name)), drain_per_cycle_(drain_bytes_per_cycle), from_mac_(from_mac), out_(out), fc_(fc),
        queues_(static_cast<std::size_t>(vcs)), occupancy_(queues_.size(), 0), peak_(queues_.size(), 0) {}
  void eval() override {
    while (from_mac_.can_pop()) {
      Packet* f = from_mac_.pop();
      const int vc = f->vc % static_cast<int>(queues_.size());
      fc_.on_arrive(*f);
      occupancy_[vc] += f->bytes;
      peak_[vc] = std::max(peak_[vc], occupancy_[vc]);
      queues_[vc].push_back(f);
    }
    tokens_ = std::min(tokens_ + drain_per_cycle_, drain_per_cycle_ + 16384.0);
    for (std::size_t i = 0; i < queues_.size(); ++i) {
      const int vc = static_cast<int>((next_vc_ + i) % queues_.size());
      if (queues_[vc].empty()) continue;
      Packet* f = queues_[vc].front();
      if (tokens_ < f->bytes || !out_.can_push()) break;
      tokens_ -= f->bytes;
      queues_[vc].pop_front();
      occupancy_[vc] -= f->bytes;
      fc_.on_depart(f->bytes, static_cast<std::uint8_t>(vc));
      out_.push(f);
      next_vc_ = (vc + 1) % static_cast<int>(queues_.size());
      break;
    }
  }
  void commit() override { set_busy(!idle()); }
  bool idle() const {
    return std::all_of(queues_.begin(), queues_.end(), [](const auto& q) { return q.empty(); });
  }
  std::uint64_t peak_occupancy_bytes(int vc) const { return peak_[vc]; }

 private:
  double drain_per_cycle_, tokens_ = 0;
  Channel<Packet*>& from_mac_;
  Channel<Packet*>& out_;
  link::PortFc& fc_;
  std::vector<std::deque<Packet*>> queues_;
  std::vector<std::uint64_t> occupancy_, peak_;
  int next_vc_ = 0;
};

}  // namespace xy
