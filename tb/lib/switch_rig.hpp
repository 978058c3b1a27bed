// Hosts on switch ports, and a switch with a host on every port: the rig of switch-latency and
// switch-uniform.
#pragma once
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "hw/link/attachment.hpp"
#include "hw/switch/switch.hpp"
#include "tb/lib/rig_fc.hpp"
#include "tb/lib/scenario.hpp"
#include "tb/lib/scoreboard.hpp"

namespace xy {

using sw::Switch;
using sw::SwitchParams;

// The host on one switch port: sends packets (paced by its line) and takes what arrives,
// checking order and content per source.
class Host : public Core {
 public:
  struct Traffic {
    double load = 0;             // fraction of the line; 0 = only what send() asks
    std::uint32_t min_bytes = 64, max_bytes = 64;
    Cycle stop_at = ~Cycle{0};   // generate nothing from here
    int dst = -1;                // every packet to this port; -1 = uniform over the others
    std::uint8_t vc = 0;         // the virtual channel of every packet
  };
  // `link`: its port, into a switch or a fabric (with that port's flow control, if any).
  Host(std::string name, int port, int ports, std::uint32_t width, Traffic t, Rng rng, link::PortAttachment link,
       PacketPool& pool, std::vector<std::vector<Scoreboard>>& boards)
      : Core(std::move(name)), port_(port), ports_(ports), width_(width), t_(t), rng_(rng), link_(link), pool_(pool),
        boards_(boards) {
    link_.bind(*this);
    const double mean_beats = (beats(t.min_bytes) + beats(t.max_bytes)) / 2.0;
    start_probability_ = t.load > 0 ? 1.0 / (1.0 + mean_beats * (1.0 / t.load - 1.0)) : 0;
  }
  // Queue one packet of `bytes` to `dst` at `at` (switch-latency's probes).
  void send(int dst, std::uint32_t bytes, Cycle at) {
    probes_.push_back({at, dst, bytes});
    wake_at(at);
  }
  void eval() override {
    while (link_.can_receive()) {
      Packet* p = link_.receive(clock().time_of(now()));
      if (on_arrival) on_arrival(*p, clock().time_of(now()));
      Scoreboard& board = boards_[port_][p->src];
      const std::uint64_t wrong = board.duplicated() + board.reordered() + board.corrupted();
      // A loss is judged at the end against the drops the switch counted; anything else is wrong now.
      if (std::string e = board.receive(*p);
          board.duplicated() + board.reordered() + board.corrupted() != wrong && error_.empty())
        error_ = fmt::format("{} at cycle {}: {}", name(), now(), e);
      ++received_;
      pool_.release(p);
    }
    if (now() < line_free_) return;
    if (held_) {  // waiting for the link's flow control
      if (!link_.can_send(*held_)) return;
      send(held_);
      held_ = nullptr;
      return;
    }
    if (!probes_.empty() && probes_.front().at <= now()) {
      const Probe pr = probes_.front();
      probes_.pop_front();
      emit(pr.dst, pr.bytes);
    } else if (t_.load > 0 && now() >= resume_at_ && now() < t_.stop_at) {
      int dst = t_.dst;
      if (dst < 0) {
        dst = static_cast<int>(rng_.below(static_cast<std::uint64_t>(ports_ - 1)));
        if (dst >= port_) ++dst;  // uniform over the other ports
      }
      emit(dst, static_cast<std::uint32_t>(rng_.between(t_.min_bytes, t_.max_bytes)));
      resume_at_ = line_free_ + rng_.geometric(start_probability_) - 1;
    }
  }
  void commit() override {
    Cycle next = ~Cycle{0};
    if (held_) {  // the flow control wakes us when it may go
      set_busy(link_.ready_by(now() + 1));
      return;
    }
    if (!probes_.empty()) next = std::max(probes_.front().at, line_free_);
    if (t_.load > 0 && now() < t_.stop_at) next = std::min(next, std::max(resume_at_, line_free_));
    if (next != ~Cycle{0}) wake_at(std::max(next, now() + 1));
    set_busy(link_.ready_by(now() + 1));
  }
  std::function<void(const Packet&, Time)> on_arrival;
  std::uint64_t sent() const { return sent_; }
  std::uint64_t received() const { return received_; }
  const std::string& error() const { return error_; }

 private:
  struct Probe {
    Cycle at;
    int dst;
    std::uint32_t bytes;
  };
  Cycle beats(std::uint32_t bytes) const { return (bytes + width_ - 1) / width_; }
  void emit(int dst, std::uint32_t bytes) {
    Packet* p = pool_.acquire();
    p->id = ++sent_;
    p->src = static_cast<std::uint32_t>(port_);
    p->dst = static_cast<std::uint32_t>(dst);
    p->bytes = bytes;
    p->vc = t_.vc;
    p->phantom = true;  // lengths and headers only: no bit of the payload matters here
    p->created = clock().time_of(now());
    boards_[dst][port_].expect(*p);
    if (!link_.can_send(*p)) {
      held_ = p;
      return;
    }
    send(p);
  }
  void send(Packet* p) {
    link_.send(p);
    line_free_ = now() + beats(p->bytes);
  }
  int port_, ports_;
  std::uint32_t width_;
  Traffic t_;
  Rng rng_;
  link::PortAttachment link_;
  PacketPool& pool_;
  std::vector<std::vector<Scoreboard>>& boards_;
  std::deque<Probe> probes_;
  Packet* held_ = nullptr;  // made, waiting for flow control
  double start_probability_ = 0;
  Cycle line_free_ = 0, resume_at_ = 0;
  std::uint64_t sent_ = 0, received_ = 0;
  std::string error_;
};

// The hosts of a rig, and their totals.
struct Hosts : std::vector<std::unique_ptr<Host>> {
  std::uint64_t sent() const {
    std::uint64_t n = 0;
    for (const auto& h : *this) n += h->sent();
    return n;
  }
  std::uint64_t received() const {
    std::uint64_t n = 0;
    for (const auto& h : *this) n += h->received();
    return n;
  }
  std::string error() const {  // the first host's that found something wrong, or ""
    for (const auto& h : *this)
      if (!h->error().empty()) return h->error();
    return "";
  }
};

// One switch with a host on every port.
struct Rig {
  std::vector<std::unique_ptr<Channel<Packet*>>> up, down;
  std::vector<std::vector<Scoreboard>> boards;
  Hosts hosts;
  std::unique_ptr<Switch> sw;

  std::vector<std::unique_ptr<RigFcLink>> links;

  // `fc`: flow control on every host-to-switch link (none for kNone).
  Rig(const std::string& name, const SwitchParams& p, Clock& clock, Stats& stats, PacketPool& pool,
      const Host::Traffic& traffic, const RunContext& ctx, link::FcMode fc = link::FcMode::kNone,
      const link::CbfcConfig& cbfc = {}, const link::PfcConfig& pfc = {})
      : boards(p.ports, std::vector<Scoreboard>(p.ports)) {
    p.check_lossless(std::vector<std::uint64_t>(p.ports, link::lossless_cells(fc, cbfc, pfc, p.cell_bytes, traffic.min_bytes,
                                                                            traffic.max_bytes)),
                     name, fc == link::FcMode::kCbfc ? "CBFC credits" : "PFC buffers");
    std::vector<Channel<Packet*>*> in, out;
    for (int i = 0; i < p.ports; ++i) {
      up.push_back(std::make_unique<Channel<Packet*>>(fmt::format("{}.up{}", name, i), clock, ChannelSpec{1, 0, 1, 2}));
      down.push_back(std::make_unique<Channel<Packet*>>(fmt::format("{}.down{}", name, i), clock, ChannelSpec{1, 0, 1, 2}));
      in.push_back(up.back().get());
      out.push_back(down.back().get());
    }
    sw = std::make_unique<Switch>(
        name, p, clock, stats, in, out, [](const Packet& pk) { return static_cast<int>(pk.dst); }, ctx.seed);
    for (int i = 0; i < p.ports; ++i) {
      const std::string host = fmt::format("{}.host{}", name, i);
      RigFcLink* fc_link = nullptr;
      if (fc != link::FcMode::kNone) {
        links.push_back(std::make_unique<RigFcLink>(fmt::format("{}.fc{}", name, i), fc, cbfc, pfc, clock, 1, stats));
        fc_link = links.back().get();
        sw->set_ingress_monitor(i, &fc_link->receiver());
      }
      Channel<Packet*>* to = up[i].get();
      Channel<Packet*>* from = down[i].get();
      const auto bind = [s = sw.get(), i, to, from, fc_link](Core& h) {
        to->connect(&h, &s->ingress_core(i));
        from->connect(&s->egress_core(i), &h);
        if (fc_link) fc_link->wake_feeder(&h);
      };
      hosts.push_back(std::make_unique<Host>(host, i, p.ports, p.port_bytes_per_cycle(), traffic, ctx.rng(host),
                                             link::PortAttachment(*to, *from, fc_link ? &fc_link->sender() : nullptr,
                                                                  nullptr, bind),
                                             pool, boards));
      clock.attach(*hosts.back());
      if (traffic.load > 0) hosts.back()->wake_at(0);
    }
  }
  std::uint64_t sent() const { return hosts.sent(); }
  // Every packet not delivered must be one the switch dropped and counted.
  std::string losses_unaccounted() const {
    std::uint64_t missing = 0;
    for (const auto& row : boards)
      for (const auto& b : row) missing += b.outstanding() + b.lost();
    return missing == sw->drops() ? ""
                                  : fmt::format("{} packets missing, {} dropped with a reason", missing, sw->drops());
  }
  std::uint64_t received() const { return hosts.received(); }
  std::string error() const { return hosts.error(); }
};

}  // namespace xy
