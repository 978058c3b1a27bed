// nic-psn-wrap: a soak that takes several RC queue pairs across the 24-bit PSN wrap, more than
// once each, under loss. Each QP has a pair of Tianyi NICs of its own, joined by a cable that
// loses frames at random each way (no switch: what is soaked is the NICs' transport, so the
// QPs run side by side and each can cross the wrap within the run). Every QP starts
// wrap.lead PSNs before the wrap and WRITEs a stream of messages, most of one small packet and
// every wrap.bulk_every-th of wrap.bulk_packets MTUs, until it has crossed wrap.wraps wraps.
// Every byte is checked at its address exactly once, and the application's view: each message
// delivered once, in order, whole.
//
// Cycle contract: the NICs' (hw/nic/nic.hpp) on a 1 GHz clock; a cable is wrap.delay_ns of
// latency and loses each frame with probability wrap.loss, no PHY or MAC below it.
#include <algorithm>
#include <cmath>
#include <deque>
#include <memory>

#include <fmt/format.h>

#include "kernel/rng.hpp"
#include "tb/lib/nic_rig.hpp"
#include "tb/lib/scenario.hpp"

namespace xy {
namespace {

constexpr Time kCycle = 1 * kNs;

// One direction of a cable: frames in, each lost with probability `loss`, the rest out after
// the out channel's latency.
class LossyCable : public Core {
 public:
  LossyCable(std::string name, Channel<Packet*>& in, Channel<Packet*>& out, double loss, Rng rng, PacketPool& pool)
      : Core(std::move(name)), in_(in), out_(out), loss_(loss), rng_(rng), pool_(pool) {}
  void eval() override {
    while (in_.can_pop()) {
      Packet* p = in_.pop();
      if (rng_.chance(loss_)) {
        ++lost_;
        pool_.release(p);
      } else {
        out_.push(p);
      }
    }
  }
  void commit() override { set_busy(in_.ready_by(now() + 1)); }
  std::uint64_t lost() const { return lost_; }

 private:
  Channel<Packet*>& in_;
  Channel<Packet*>& out_;
  double loss_;
  Rng rng_;
  PacketPool& pool_;
  std::uint64_t lost_ = 0;
};

class Feeder;

class NicPsnWrap : public Testbench {
 public:
  explicit NicPsnWrap(RunContext& ctx) : stats_(ctx.stats) {
    Config& c = ctx.config;
    qps_ = static_cast<int>(c.integer("wrap.qps", 2, "QPs", 1, 64, "queue pairs, each on a pair of NICs of its own"));
    wraps_ = static_cast<int>(c.integer("wrap.wraps", 3, "wraps", 1, 16, "PSN wraps each QP crosses"));
    lead_ = static_cast<std::uint32_t>(
        c.integer("wrap.lead", 1000, "PSNs", 1, nic::kPsnMask, "how far before the wrap each QP's first PSN is"));
    small_ = static_cast<std::uint32_t>(
        c.integer("wrap.message_bytes", 64, "B", 1, 4096, "the small messages' size (one packet at most MTUs)"));
    bulk_every_ = static_cast<std::uint32_t>(
        c.integer("wrap.bulk_every", 64, "messages", 1, 1 << 20, "every n-th message is a bulk one"));
    bulk_packets_ = static_cast<std::uint32_t>(
        c.integer("wrap.bulk_packets", 20, "MTUs", 1, 1024, "a bulk message's size, in MTUs"));
    loss_ = c.real("wrap.loss", 1e-4, "probability", 0, 0.1, "each frame lost on a cable, each way");
    delay_ = from_ns(c.real("wrap.delay_ns", 500, "ns", 1, 1e6, "a cable's latency one way (100 m: 500 ns)"));
    const double gbps = c.real("wrap.line_gbps", 800, "Gb/s", 8, 12800, "the NICs' line rate (a multiple of 8)");
    if (std::fmod(gbps, 8) != 0)
      throw ConfigError(fmt::format("wrap.line_gbps = {:g}: allowed multiples of 8 (whole bytes a 1 ns cycle)", gbps));
    nic::NicParams::Uses uses;
    uses.switched = false;
    c.default_to("nic.mtu", "256", "nic-psn-wrap (2^24 packets a wrap: small ones)");
    np_ = nic::NicParams::declare(c, gbps * 1e9, uses);
    width_ = static_cast<std::uint32_t>(gbps / 8);
    if (small_ > np_.qp.mtu)
      throw ConfigError(fmt::format("wrap.message_bytes = {}: allowed up to nic.mtu = {} (one packet)", small_,
                                    np_.qp.mtu));
    // Messages a QP posts: enough PSNs to cross the last wrap.
    const std::uint64_t cycle_psns = (bulk_every_ - 1) + bulk_packets_;  // PSNs of bulk_every_ messages
    const std::uint64_t psns = lead_ + std::uint64_t{nic::kPsnMask + 1} * (wraps_ - 1) + 1;
    messages_ = (psns + cycle_psns - 1) / cycle_psns * bulk_every_;
    domain_ = std::make_unique<ClockDomain>("core_nic_psn_wrap", kCycle);
    Clock& clock = domain_->clock();
    for (int q = 0; q < qps_; ++q) build_lane(q, clock, ctx.seed);
  }

  bool done() const override {
    for (const Lane& l : lanes_)
      if (l.completed < messages_) return false;
    return true;
  }
  std::uint64_t progress() const override {
    std::uint64_t n = 0;
    for (const Lane& l : lanes_) n += l.completed;
    return n;
  }
  // Every QP's frames back to back at line rate (its own line), headers without a RETH.
  Work work() const override {
    const std::uint64_t small = small_ + nic::kRoceOverheadBytes + 4;
    const std::uint64_t bulk = bulk_packets_ * (np_.qp.mtu + nic::kRoceOverheadBytes + 4);
    const std::uint64_t bytes = messages_ / bulk_every_ * ((bulk_every_ - 1) * small + bulk);
    return {static_cast<Time>(bytes) * kCycle / width_,
            fmt::format("wrap.wraps = {}: {} messages a QP at {} Gb/s", wraps_, messages_, width_ * 8)};
  }
  double done_fraction() const override {
    return static_cast<double>(progress()) / (static_cast<double>(messages_) * qps_);
  }
  void check() const override {
    for (const Lane& l : lanes_) {
      if (!l.problem.empty()) throw CheckFailure(l.problem);
      if (std::string p = l.memory->problem(); !p.empty()) throw CheckFailure(p);
      if (const std::uint64_t late = l.deliveries->out_of_order_bytes())
        throw CheckFailure(fmt::format("QP {}: {} bytes delivered out of order", l.index, late));
    }
  }
  nlohmann::json summary() const override {
    nlohmann::json s;
    s["qps"] = qps_;
    s["messages_per_qp"] = messages_;
    s["provenance"] = {{"qps", "configured"}, {"messages_per_qp", "derived"}};
    nlohmann::json per = nlohmann::json::array();
    std::uint64_t lost = 0, retx = 0;
    int least_wraps = 1 << 30;
    for (const Lane& l : lanes_) {
      const nic::QueuePair& tx = l.a->qp(1);
      const nic::QueuePair& rx = l.b->qp(1);
      // PSNs the requester used, from its first: how many times they passed 2^24.
      const std::uint64_t used = l.psns_completed;
      const int wraps = static_cast<int>((std::uint64_t{nic::kPsnMask + 1} - lead_ + used) >> 24);
      least_wraps = std::min(least_wraps, wraps);
      // On the cables, and in a receive buffer that a host slower than the line filled (nic.host=pcie).
      const std::uint64_t lane_lost = l.cable[0]->lost() + l.cable[1]->lost() + l.a->rx_dropped() + l.b->rx_dropped();
      lost += lane_lost;
      retx += tx.stats().retransmitted_bytes;
      per.push_back({{"wraps", wraps},
                     {"psns", used},
                     {"messages", l.completed},
                     {"done_us", to_us(l.last_done)},
                     {"frames_lost", lane_lost},
                     {"naks", rx.stats().naks_sent},
                     {"timeouts", tx.stats().timeouts},
                     {"retx_bytes", tx.stats().retransmitted_bytes},
                     {"bytes_delivered", l.memory->covered()},
                     {"bytes_wrong", l.memory->wrong()},
                     {"bytes_twice", l.memory->twice()},
                     {"app_out_of_order_bytes", l.deliveries->out_of_order_bytes()}});
    }
    s["per_qp"] = per;
    s["least_wraps"] = least_wraps;
    s["frames_lost"] = lost;
    s["retx_bytes"] = retx;
    return s;
  }
  std::string report() const override {
    const nlohmann::json s = summary();
    std::string out = fmt::format("  {} QPs, each from {} PSNs before the wrap, {} messages each, loss {:g} each way\n",
                                  qps_, lead_, messages_, loss_);
    out += fmt::format("  {:>3} {:>6} {:>11} {:>9} {:>6} {:>9} {:>11} {:>6} {:>6}\n", "QP", "wraps", "PSNs", "lost", "NAKs",
                       "timeouts", "retx KiB", "wrong", "twice");
    int q = 0;
    for (const auto& r : s["per_qp"])
      out += fmt::format("  {:>3} {:>6} {:>11} {:>9} {:>6} {:>9} {:>11.1f} {:>6} {:>6}\n", q++, r["wraps"].get<int>(),
                         r["psns"].get<std::uint64_t>(), r["frames_lost"].get<std::uint64_t>(),
                         r["naks"].get<std::uint64_t>(), r["timeouts"].get<std::uint64_t>(),
                         r["retx_bytes"].get<std::uint64_t>() / 1024.0, r["bytes_wrong"].get<std::uint64_t>(),
                         r["bytes_twice"].get<std::uint64_t>());
    return out;
  }

 private:
  friend class Feeder;
  // One QP's NICs, cables, memory and bookkeeping.
  struct Lane {
    int index = 0;
    std::unique_ptr<ScoreboardMemory> memory;  // B's; A reads its pattern
    std::unique_ptr<Channel<Packet*>> a_out, a_to_b, b_out, b_to_a;
    std::unique_ptr<nic::Nic> a, b;
    std::unique_ptr<LossyCable> cable[2];
    std::unique_ptr<Feeder> feeder;
    std::uint64_t posted = 0, completed = 0, psns_completed = 0;
    Time last_done = 0;  // the last completion's time
    std::uint64_t posted_bytes = 0;  // where the next message starts, at both ends
    std::deque<std::uint32_t> psns_of;  // of the posted, not completed messages
    std::unique_ptr<DeliveryOrder> deliveries;
    std::string problem;
  };
  std::uint32_t message_bytes(std::uint64_t m) const {
    return (m + 1) % bulk_every_ == 0 ? bulk_packets_ * np_.qp.mtu : small_;
  }
  void build_lane(int q, Clock& clock, std::uint64_t seed);

  Stats& stats_;
  PacketPool pool_;
  std::unique_ptr<ClockDomain> domain_;
  nic::NicParams np_;
  std::deque<Lane> lanes_;
  ScoreboardMemory source_{0};  // every A's memory: pattern bytes, never written
  int qps_ = 0, wraps_ = 0;
  std::uint32_t lead_ = 0, small_ = 0, bulk_every_ = 0, bulk_packets_ = 0, width_ = 0;
  double loss_ = 0;
  Time delay_ = 0;
  std::uint64_t messages_ = 0;
};

// Keeps a QP's send queue fed and its completions drained: the soak's messages are far too many
// to post at once.
class Feeder : public Core {
 public:
  static constexpr std::uint64_t kDepth = 4096;  // messages posted and not completed, per QP: more than a round trip holds
  Feeder(std::string name, NicPsnWrap& tb, NicPsnWrap::Lane& lane) : Core(std::move(name)), tb_(tb), l_(lane) {}
  void eval() override {
    auto& done = l_.a->qp(1).completions();
    for (; !done.empty(); done.pop_front()) {
      if (done.front().status != nic::WcStatus::kSuccess || done.front().id != l_.completed)
        l_.problem = fmt::format("QP {}: message {} completed as {} ({})", l_.index, done.front().id,
                                 nic::to_string(done.front().status), l_.completed);
      l_.last_done = done.front().at;
      l_.psns_completed += l_.psns_of.front();
      l_.psns_of.pop_front();
      ++l_.completed;
    }
    while (l_.posted < tb_.messages_ && l_.posted - l_.completed < kDepth) {
      const std::uint32_t size = tb_.message_bytes(l_.posted);
      l_.a->post_send(1, {l_.posted, nic::Verb::kWrite, l_.posted_bytes, l_.posted_bytes, 0, size});
      l_.psns_of.push_back((size + tb_.np_.qp.mtu - 1) / tb_.np_.qp.mtu);
      l_.posted_bytes += size;
      ++l_.posted;
    }
  }
  void commit() override { set_busy(l_.completed < tb_.messages_); }

 private:
  NicPsnWrap& tb_;
  NicPsnWrap::Lane& l_;
};

void NicPsnWrap::build_lane(int q, Clock& clock, std::uint64_t seed) {
  Lane& l = lanes_.emplace_back();
  l.index = q;
  const std::string name = fmt::format("top.qp{}", q);
  const Cycle delay = std::max<Cycle>(1, cycles_for(delay_, kCycle));
  l.a_out = std::make_unique<Channel<Packet*>>(name + ".a_out", clock, clock, ChannelSpec{1});
  l.b_out = std::make_unique<Channel<Packet*>>(name + ".b_out", clock, clock, ChannelSpec{1});
  l.a_to_b = std::make_unique<Channel<Packet*>>(name + ".a_to_b", clock, clock, ChannelSpec{delay});
  l.b_to_a = std::make_unique<Channel<Packet*>>(name + ".b_to_a", clock, clock, ChannelSpec{delay});
  // B's memory expects A's bytes, message after message, from 0 on both sides.
  const std::uint64_t cycles = messages_ / bulk_every_;
  const std::uint64_t total = cycles * ((bulk_every_ - 1) * std::uint64_t{small_} + bulk_packets_ * np_.qp.mtu);
  l.memory = std::make_unique<ScoreboardMemory>(1);
  l.memory->expect(0, total, 0, 0);
  const auto port = [](Channel<Packet*>& out, Channel<Packet*>& in) {  // one, no flow control
    return std::vector<link::PortAttachment>{link::PortAttachment(out, in, nullptr, nullptr, [](Core&) {})};
  };
  l.a = std::make_unique<nic::Nic>(name + ".a", 0, np_, width_, port(*l.a_out, *l.b_to_a), pool_, source_, stats_);
  l.b = std::make_unique<nic::Nic>(name + ".b", 1, np_, width_, port(*l.b_out, *l.a_to_b), pool_, *l.memory, stats_);
  l.cable[0] = std::make_unique<LossyCable>(name + ".cable_ab", *l.a_out, *l.a_to_b, loss_,
                                            Rng(seed, fmt::format("{}.cable_ab", name)), pool_);
  l.cable[1] = std::make_unique<LossyCable>(name + ".cable_ba", *l.b_out, *l.b_to_a, loss_,
                                            Rng(seed, fmt::format("{}.cable_ba", name)), pool_);
  l.feeder = std::make_unique<Feeder>(name + ".feeder", *this, l);
  for (Core* core : std::initializer_list<Core*>{l.a.get(), l.b.get(), l.cable[0].get(), l.cable[1].get(), l.feeder.get()})
    clock.attach(*core);
  l.feeder->wake_at(0);
  l.a_out->connect(l.a.get(), l.cable[0].get());
  l.a_to_b->connect(l.cable[0].get(), l.b.get());
  l.b_out->connect(l.b.get(), l.cable[1].get());
  l.b_to_a->connect(l.cable[1].get(), l.a.get());
  const std::uint32_t first = (nic::kPsnMask + 1 - lead_) & nic::kPsnMask;
  l.a->create_qp(1, 1, 1, first, first);
  nic::QueuePair& rx = l.b->create_qp(1, 0, 1, first, first);
  l.deliveries = std::make_unique<DeliveryOrder>(rx, *l.memory, 0);
}

}  // namespace

XY_TESTBENCH(NicPsnWrap, 720, "nic-psn-wrap",
             "RC queue pairs soaked across the 24-bit PSN wrap several times each, under loss")

}  // namespace xy
