// switch-ecmp: ECMP hashing against packet spraying over equal-cost links (claims C6, C12).
#include "tb/lib/scenario.hpp"

#include <cmath>
#include <memory>

#include <fmt/format.h>

#include "hw/switch/forwarding.hpp"
#include "hw/switch/switch.hpp"
#include "kernel/clock_domain.hpp"

namespace xy {
namespace {

using sw::Switch;
using sw::SwitchParams;

// switch-ecmp: 32 elephant flows from leaf A through 8 equal-cost uplinks to leaf B (claims C6,
// C12), once per path choice, side by side in one simulation.

// The reference a hash is judged against: P(some link carries >= `worst` of `flows` flows) when
// each flow picks one of `links` links uniformly at random, counted exactly (the assignments with
// every link at most m flows, bin by bin: ways_b(n) = sum_k C(n, k) ways_{b-1}(n - k), k <= m).
double uniform_hash_p_worst_at_least(int flows, int links, int worst) {
  if (worst <= 0) return 1;
  const int m = worst - 1;
  std::vector<double> ways(flows + 1, 0.0);  // ways[n] / links^n: n flows on the links so far
  ways[0] = 1;
  std::vector<std::vector<double>> choose(flows + 1, std::vector<double>(flows + 1, 0.0));
  for (int n = 0; n <= flows; ++n) {
    choose[n][0] = 1;
    for (int k = 1; k <= n; ++k) choose[n][k] = choose[n - 1][k - 1] + (k < n ? choose[n - 1][k] : 0);
  }
  for (int b = 0; b < links; ++b) {
    std::vector<double> next(flows + 1, 0.0);
    for (int n = 0; n <= flows; ++n)
      for (int k = 0; k <= std::min(m, n); ++k) next[n] += choose[n][k] * ways[n - k];
    ways = next;
  }
  return 1 - ways[flows] / std::pow(links, flows);
}

// Sends one flow: `packets` packets of `bytes` to `dst`, paced at `rate` of the line.
class FlowSender : public Core {
 public:
  FlowSender(std::string name, int flow, int dst, std::uint64_t packets, std::uint32_t bytes, double rate,
             std::uint32_t width, Channel<Packet*>& out, PacketPool& pool)
      : Core(std::move(name)), flow_(flow), dst_(dst), packets_(packets), bytes_(bytes), out_(out), pool_(pool),
        gap_(static_cast<Cycle>(std::llround((bytes + width - 1) / width / rate))) {}
  void eval() override {
    if (sent_ == packets_) return;
    Packet* p = pool_.acquire();
    p->id = ++sent_;
    p->src = static_cast<std::uint32_t>(flow_);
    p->dst = static_cast<std::uint32_t>(dst_);
    p->bytes = bytes_;
    p->phantom = true;
    p->created = clock().time_of(now());
    out_.push(p);
    if (sent_ < packets_) wake_at(now() + gap_);
  }
  std::uint64_t sent() const { return sent_; }

 private:
  int flow_, dst_;
  std::uint64_t packets_, sent_ = 0;
  std::uint32_t bytes_;
  Channel<Packet*>& out_;
  PacketPool& pool_;
  Cycle gap_;
};

// Takes one flow: every packet exactly once; how far out of order they came; when it completed.
class FlowReceiver : public Core {
 public:
  FlowReceiver(std::string name, std::uint64_t packets, Channel<Packet*>& in, PacketPool& pool)
      : Core(std::move(name)), packets_(packets), seen_(packets + 1, false), in_(in), pool_(pool) {}
  void eval() override {
    while (in_.can_pop()) {
      Packet* p = in_.pop();
      if (p->id == 0 || p->id > packets_ || seen_[p->id]) {
        ++errors_;
      } else {
        seen_[p->id] = true;
        ++received_;
        if (p->id != next_) ++out_of_order_;
        while (next_ <= packets_ && seen_[next_]) ++next_;
        // Packets held for in-order delivery: those above the first gap.
        held_ = received_ - (next_ - 1);
        peak_held_ = std::max(peak_held_, held_);
        if (received_ == packets_) done_at_ = clock().time_of(now());
      }
      pool_.release(p);
    }
  }
  void commit() override { set_busy(in_.ready_by(now() + 1)); }
  bool done() const { return received_ == packets_; }
  std::uint64_t received() const { return received_; }
  Time done_at() const { return done_at_; }
  std::uint64_t out_of_order() const { return out_of_order_; }
  std::uint64_t peak_held() const { return peak_held_; }
  std::uint64_t errors() const { return errors_; }

 private:
  std::uint64_t packets_, received_ = 0, next_ = 1, held_ = 0, peak_held_ = 0, out_of_order_ = 0, errors_ = 0;
  std::vector<bool> seen_;
  Channel<Packet*>& in_;
  PacketPool& pool_;
  Time done_at_ = 0;
};

class SwitchEcmp : public Testbench {
  static constexpr int kFlows = 32, kLinks = 8;

 public:
  explicit SwitchEcmp(RunContext& ctx) : stats_(ctx.stats) {
    Config& c = ctx.config;
    packets_ = static_cast<std::uint64_t>(c.integer("ecmp.packets", 2000, "packets", 1, 1ll << 30, "packets per flow"));
    const auto bytes = static_cast<std::uint32_t>(c.integer("ecmp.bytes", 1024, "bytes", 64, 9216, "packet size"));
    const double rate = c.real("ecmp.rate", 0.25, "fraction", 0.001, 1,
                               "each flow's rate; 32 flows x 0.25 fill the 8 uplinks exactly");
    SwitchParams p = SwitchParams::declare(c, "switch");
    buffer_mib_ = static_cast<double>(p.buffer_cells * p.cell_bytes) / (1 << 20);
    p.ports = kFlows + kLinks;
    c.fix("switch.ports", "switch-ecmp, whose switch has a port for each of its 32 flows and 8 uplinks");
    // Each input carries one flow, to one output, on VC 0: no arbiter finds another match, no VC
    // scheduler has a choice, a faster crossbar only moves where a packet waits.
    for (const char* key : {"switch.arbiter", "switch.iterations", "switch.speedup", "switch.vcs",
                            "switch.egress_scheduler", "switch.dwrr_quantum_bytes"})
      c.fix(key, "switch-ecmp, whose every input carries one flow on VC 0 to one output: each uplink's line rate "
                 "alone decides when a packet leaves");
    c.fix("switch.cell_bytes", "switch-ecmp, whose buffer must never fill (a drop ends its flows): the cell size "
                               "only counts when it does");
    period_ = p.period();
    domain_ = std::make_unique<ClockDomain>("switch", p.period());
    const struct { const char* name; sw::PathChoice choice; sw::HashKind hash; } variants[] = {
        {"ecmp-crc32", sw::PathChoice::kEcmpHash, sw::HashKind::kCrc32},
        {"ecmp-toeplitz", sw::PathChoice::kEcmpHash, sw::HashKind::kToeplitz},
        {"spray", sw::PathChoice::kSprayRoundRobin, sw::HashKind::kCrc32}};
    for (const auto& v : variants)
      variants_.push_back(std::make_unique<Variant>(v.name, v.choice, v.hash, p, packets_, bytes, rate, *this, ctx));
  }

  // Also done at the first drop: with no retransmission here, a dropped packet's flow never ends.
  bool done() const override {
    for (const auto& v : variants_)
      if (v->a->drops() || v->b->drops()) return true;
    for (const auto& v : variants_)
      for (const auto& r : v->receivers)
        if (!r->done()) return false;
    return true;
  }
  std::uint64_t progress() const override {
    std::uint64_t n = 0;
    for (const auto& v : variants_) n += v->a->forwarded() + v->b->forwarded();
    return n;
  }
  // Packets arrived of those every variant's flows send.
  double done_fraction() const override {
    return static_cast<double>(received()) / static_cast<double>(variants_.size() * kFlows * packets_);
  }
  std::string waiting_for() const override {
    if (sent() < variants_.size() * kFlows * packets_) return "";
    return fmt::format("the last {} of {} packets in flight", sent() - received(), sent());
  }
  void check() const override {
    for (const auto& v : variants_) {
      v->a->check_buffer_accounting();
      v->b->check_buffer_accounting();
      for (const auto& r : v->receivers)
        if (r->errors()) throw CheckFailure(v->name + ": a receiver got a duplicate or unknown packet");
      if (v->a->drops() || v->b->drops())
        throw CheckFailure(fmt::format("{}: {} packets dropped for want of switch buffer (switch.buffer_mib = {:g}); with "
                                       "no retransmission in this scenario their flows cannot complete: raise "
                                       "switch.buffer_mib",
                                       v->name, v->a->drops() + v->b->drops(), buffer_mib_));
    }
  }

  nlohmann::json summary() const override {
    nlohmann::json s;
    for (const auto& v : variants_) {
      nlohmann::json links = nlohmann::json::array(), flows = nlohmann::json::array();
      double total = 0, worst = 0;
      for (int l = 0; l < kLinks; ++l) {
        links.push_back(v->link_bytes[l]);
        total += static_cast<double>(v->link_bytes[l]);
        worst = std::max(worst, static_cast<double>(v->link_bytes[l]));
        flows.push_back(v->flows_on_link[l]);
      }
      double fct_max = 0, fct_sum = 0;
      std::uint64_t ooo = 0, held = 0;
      for (const auto& r : v->receivers) {
        fct_max = std::max(fct_max, to_us(r->done_at()));
        fct_sum += to_us(r->done_at());
        ooo += r->out_of_order();
        held = std::max(held, r->peak_held());
      }
      int worst_flows = 0;
      for (int n : v->flows_on_link) worst_flows = std::max(worst_flows, n);
      if (v->hashed) {  // derived, not simulated: where this worst link sits among a uniform hash's
        int median = 0, p95 = 0;
        while (uniform_hash_p_worst_at_least(kFlows, kLinks, median + 1) > 0.5) ++median;
        while (uniform_hash_p_worst_at_least(kFlows, kLinks, p95 + 1) > 0.05) ++p95;
        s[v->name]["uniform_hash"] = {
            {"p_worst_at_least", uniform_hash_p_worst_at_least(kFlows, kLinks, worst_flows)},
            {"worst_median", median},
            {"worst_p95", p95}};
      }
      s[v->name].update({{"link_bytes", links},
                    {"flows_first_link", flows},
                    {"flows_on_worst_link", worst_flows},
                    {"max_over_mean_link_load", worst / (total / kLinks)},
                    {"completion_max_us", fct_max},
                    {"completion_mean_us", fct_sum / kFlows},
                    {"out_of_order_packets", ooo},
                    {"peak_reorder_held_packets", held}});
    }
    return s;
  }
  std::string report() const override {
    const nlohmann::json s = summary();
    std::string out = fmt::format("  {:<14} {:>12} {:>10} {:>13} {:>13} {:>11} {:>10}\n", "path choice", "worst link",
                                  "max/mean", "last flow us", "mean flow us", "reordered", "reorder buf");
    for (const auto& v : variants_) {
      const auto& r = s[v->name];
      out += fmt::format("  {:<14} {:>7} flows {:>10.3f} {:>13.2f} {:>13.2f} {:>11} {:>10}\n", v->name,
                         r["flows_on_worst_link"].get<int>(), r["max_over_mean_link_load"].get<double>(),
                         r["completion_max_us"].get<double>(), r["completion_mean_us"].get<double>(),
                         r["out_of_order_packets"].get<std::uint64_t>(), r["peak_reorder_held_packets"].get<std::uint64_t>());
    }
    for (const auto& v : variants_) {
      if (!v->hashed) continue;
      const auto& u = s[v->name]["uniform_hash"];
      out += fmt::format("  {:<14} a uniform random hash puts >= {} flows on some link with P = {:.3g} (its worst "
                         "link: median {}, 95th percentile {})\n",
                         v->name, s[v->name]["flows_on_worst_link"].get<int>(), u["p_worst_at_least"].get<double>(),
                         u["worst_median"].get<int>(), u["worst_p95"].get<int>());
    }
    return out;
  }

 private:
  // Leaf A: hosts on ports 0..31, uplinks on 32..39 to leaf B's ports 0..7; B: receivers on 8..39.
  struct Variant {
    std::string name;
    bool hashed;  // one path per flow
    sw::PathSelector selector;
    std::vector<std::unique_ptr<Channel<Packet*>>> channels;
    std::unique_ptr<Switch> a, b;
    std::vector<std::unique_ptr<FlowSender>> senders;
    std::vector<std::unique_ptr<FlowReceiver>> receivers;
    std::vector<std::uint64_t> link_bytes = std::vector<std::uint64_t>(kLinks, 0);
    std::vector<int> flows_on_link = std::vector<int>(kLinks, 0);
    std::vector<bool> flow_placed = std::vector<bool>(kFlows, false);

    Variant(std::string n, sw::PathChoice choice, sw::HashKind hash, const SwitchParams& p, std::uint64_t packets,
            std::uint32_t bytes, double rate, SwitchEcmp& tb, RunContext& ctx)
        : name(std::move(n)), hashed(choice == sw::PathChoice::kEcmpHash),
          selector(choice, hash, kLinks, ctx.rng("top." + name + ".paths")) {
      Clock& clock = tb.domain_->clock();
      auto channel = [&](const std::string& what) {
        channels.push_back(std::make_unique<Channel<Packet*>>(fmt::format("top.{}.{}", name, what), clock, ChannelSpec{1, 0, 1, 2}));
        return channels.back().get();
      };
      std::vector<Channel<Packet*>*> a_in(p.ports, nullptr), a_out(p.ports, nullptr), b_in(p.ports, nullptr),
          b_out(p.ports, nullptr);
      for (int f = 0; f < kFlows; ++f) a_in[f] = channel(fmt::format("host{}", f));
      for (int l = 0; l < kLinks; ++l) a_out[kFlows + l] = b_in[l] = channel(fmt::format("uplink{}", l));
      for (int f = 0; f < kFlows; ++f) b_out[kLinks + f] = channel(fmt::format("rx{}", f));
      a = std::make_unique<Switch>("top." + name + ".a", p, clock, tb.stats_, a_in, a_out, [this](const Packet& pk) {
        const int l = selector.choose(tuple_of(static_cast<int>(pk.src)));
        link_bytes[l] += pk.bytes;
        if (!flow_placed[pk.src]) {
          flow_placed[pk.src] = true;
          ++flows_on_link[l];
        }
        return kFlows + l;
      });
      b = std::make_unique<Switch>("top." + name + ".b", p, clock, tb.stats_, b_in, b_out,
                                   [](const Packet& pk) { return kLinks + static_cast<int>(pk.dst); });
      for (int f = 0; f < kFlows; ++f) {
        senders.push_back(std::make_unique<FlowSender>(fmt::format("top.{}.flow{}", name, f), f, f, packets, bytes, rate,
                                                       p.port_bytes_per_cycle(), *a_in[f], tb.pool_));
        receivers.push_back(std::make_unique<FlowReceiver>(fmt::format("top.{}.rx{}", name, f), packets,
                                                           *b_out[kLinks + f], tb.pool_));
        clock.attach(*senders.back());
        clock.attach(*receivers.back());
        a_in[f]->connect(senders.back().get(), &a->ingress_core(f));
        b_out[kLinks + f]->connect(&b->egress_core(kLinks + f), receivers.back().get());
        senders.back()->wake_at(0);
      }
      for (int l = 0; l < kLinks; ++l) a_out[kFlows + l]->connect(&a->egress_core(kFlows + l), &b->ingress_core(l));
    }
  };
  // The claim-C12 setup: 8 NICs (10.0.0.1-8) with 4 queue pairs each (UDP source ports
  // 49152-49155) to 8 peers (10.0.1.1-8), RoCEv2's fixed destination port 4791.
  static sw::FiveTuple tuple_of(int flow) {
    sw::FiveTuple t;
    t.src_ip = 0x0A000001u + static_cast<std::uint32_t>(flow / 4);
    t.dst_ip = 0x0A000101u + static_cast<std::uint32_t>(flow / 4);
    t.src_port = static_cast<std::uint16_t>(49152 + flow % 4);
    t.dst_port = sw::kRoceV2UdpPort;
    t.protocol = sw::kIpProtoUdp;
    return t;
  }
  // Packets sent and received by every variant's flows.
  std::uint64_t sent() const {
    std::uint64_t n = 0;
    for (const auto& v : variants_)
      for (const auto& f : v->senders) n += f->sent();
    return n;
  }
  std::uint64_t received() const {
    std::uint64_t n = 0;
    for (const auto& v : variants_)
      for (const auto& r : v->receivers) n += r->received();
    return n;
  }
  Stats& stats_;
  std::uint64_t packets_ = 0;  // per flow
  double buffer_mib_ = 0;
  Time period_ = 0;
  std::unique_ptr<ClockDomain> domain_;
  PacketPool pool_;
  std::vector<std::unique_ptr<Variant>> variants_;
};

}  // namespace

XY_TESTBENCH(SwitchEcmp, 420, "switch-ecmp",
             "32 elephant flows over 8 equal-cost links: ECMP hash (CRC-32, Toeplitz) vs packet spraying")

}  // namespace xy
