// Switch scenarios: switch-latency and switch-uniform (see hw/switch/switch.hpp).
#include "tb/scenarios/switch.hpp"

#include <cmath>
#include <fstream>
#include <memory>

#include <fmt/format.h>

#include "hw/switch/forwarding.hpp"
#include "hw/switch/switch.hpp"
#include "tb/scoreboard.hpp"
#include "xingyun/clock_domain.hpp"

namespace xy {
namespace {

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
  };
  Host(std::string name, int port, int ports, std::uint32_t width, Traffic t, Rng rng, Channel<Packet*>& to_switch,
       Channel<Packet*>& from_switch, PacketPool& pool, std::vector<std::vector<Scoreboard>>& boards)
      : Core(std::move(name)), port_(port), ports_(ports), width_(width), t_(t), rng_(rng), to_switch_(to_switch),
        from_switch_(from_switch), pool_(pool), boards_(boards) {
    const double mean_beats = (beats(t.min_bytes) + beats(t.max_bytes)) / 2.0;
    start_probability_ = t.load > 0 ? 1.0 / (1.0 + mean_beats * (1.0 / t.load - 1.0)) : 0;
  }
  // Queue one packet of `bytes` to `dst` at `at` (switch-latency's probes).
  void send(int dst, std::uint32_t bytes, Cycle at) {
    probes_.push_back({at, dst, bytes});
    wake_at(at);
  }
  void eval() override {
    while (from_switch_.can_pop()) {
      Packet* p = from_switch_.pop();
      if (on_arrival) on_arrival(*p, clock().time_of(now()));
      if (std::string e = boards_[port_][p->src].receive(*p); !e.empty() && error_.empty())
        error_ = fmt::format("{} at cycle {}: {}", name(), now(), e);
      ++received_;
      pool_.release(p);
    }
    if (now() < line_free_) return;
    if (!probes_.empty() && probes_.front().at <= now()) {
      const Probe pr = probes_.front();
      probes_.pop_front();
      emit(pr.dst, pr.bytes);
    } else if (t_.load > 0 && now() >= resume_at_ && now() < t_.stop_at) {
      int dst = static_cast<int>(rng_.below(static_cast<std::uint64_t>(ports_ - 1)));
      if (dst >= port_) ++dst;  // uniform over the other ports
      emit(dst, static_cast<std::uint32_t>(rng_.between(t_.min_bytes, t_.max_bytes)));
      resume_at_ = line_free_ + rng_.geometric(start_probability_) - 1;
    }
  }
  void commit() override {
    Cycle next = ~Cycle{0};
    if (!probes_.empty()) next = std::max(probes_.front().at, line_free_);
    if (t_.load > 0 && now() < t_.stop_at) next = std::min(next, std::max(resume_at_, line_free_));
    if (next != ~Cycle{0}) wake_at(std::max(next, now() + 1));
    set_busy(from_switch_.ready_by(now() + 1));
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
    p->phantom = true;  // lengths and headers only: no bit of the payload matters here
    p->created = clock().time_of(now());
    boards_[dst][port_].expect(*p);
    to_switch_.push(p);
    line_free_ = now() + beats(bytes);
  }
  int port_, ports_;
  std::uint32_t width_;
  Traffic t_;
  Rng rng_;
  Channel<Packet*>& to_switch_;
  Channel<Packet*>& from_switch_;
  PacketPool& pool_;
  std::vector<std::vector<Scoreboard>>& boards_;
  std::deque<Probe> probes_;
  double start_probability_ = 0;
  Cycle line_free_ = 0, resume_at_ = 0;
  std::uint64_t sent_ = 0, received_ = 0;
  std::string error_;
};

// One switch with a host on every port.
struct Rig {
  std::vector<std::unique_ptr<Channel<Packet*>>> up, down;
  std::vector<std::vector<Scoreboard>> boards;
  std::vector<std::unique_ptr<Host>> hosts;
  std::unique_ptr<Switch> sw;

  Rig(const std::string& name, const SwitchParams& p, Clock& clock, Stats& stats, PacketPool& pool,
      const Host::Traffic& traffic, const RunContext& ctx)
      : boards(p.ports, std::vector<Scoreboard>(p.ports)) {
    std::vector<Channel<Packet*>*> in, out;
    for (int i = 0; i < p.ports; ++i) {
      up.push_back(std::make_unique<Channel<Packet*>>(fmt::format("{}.up{}", name, i), clock, ChannelSpec{1, 0, 1, 2}));
      down.push_back(std::make_unique<Channel<Packet*>>(fmt::format("{}.down{}", name, i), clock, ChannelSpec{1, 0, 1, 2}));
      in.push_back(up.back().get());
      out.push_back(down.back().get());
    }
    sw = std::make_unique<Switch>(name, p, clock, stats, in, out, [](const Packet& pk) { return static_cast<int>(pk.dst); });
    for (int i = 0; i < p.ports; ++i) {
      const std::string host = fmt::format("{}.host{}", name, i);
      hosts.push_back(std::make_unique<Host>(host, i, p.ports, p.port_bytes_per_cycle(), traffic, ctx.rng(host), *up[i],
                                             *down[i], pool, boards));
      clock.attach(*hosts.back());
      up[i]->connect(hosts.back().get(), &sw->ingress_core(i));
      down[i]->connect(&sw->egress_core(i), hosts.back().get());
      if (traffic.load > 0) hosts.back()->wake_at(0);
    }
  }
  std::uint64_t sent() const {
    std::uint64_t n = 0;
    for (const auto& h : hosts) n += h->sent();
    return n;
  }
  std::uint64_t received() const {
    std::uint64_t n = 0;
    for (const auto& h : hosts) n += h->received();
    return n;
  }
  std::string error() const {
    for (const auto& h : hosts)
      if (!h->error().empty()) return h->error();
    return "";
  }
};

// ---------------------------------------------------------------------------------------------

class SwitchLatency : public Testbench {
 public:
  explicit SwitchLatency(RunContext& ctx) : stats_(ctx.stats) {
    SwitchParams base = SwitchParams::declare(ctx.config, "switch");
    base.ports = 2;  // one path is all a zero-load measurement needs
    domain_ = std::make_unique<ClockDomain>("switch", base.period());
    const Cycle gap = 4 * (base.lat.total() + 9216 / base.port_bytes_per_cycle());
    for (bool ct : {true, false}) {
      SwitchParams p = base;
      p.cut_through = ct;
      auto rig = std::make_unique<Rig>(ct ? "top.ct" : "top.saf", p, domain_->clock(), stats_, pool_, Host::Traffic{},
                                       ctx);
      Cycle at = 10;
      for (std::uint32_t bytes : kSizes) {
        rig->hosts[0]->send(1, bytes, at);
        at += gap;
      }
      Rig* r = rig.get();
      r->hosts[1]->on_arrival = [this, ct, r](const Packet& pk, Time now) {
        samples_.push_back({ct, pk.bytes, (now - pk.created) / r->sw->params().period()});
      };
      rigs_.push_back(std::move(rig));
    }
    params_ = base;
  }
  bool done() const override { return samples_.size() == 2 * std::size(kSizes); }
  std::uint64_t progress() const override { return samples_.size(); }
  void check() const override {
    for (const auto& r : rigs_) r->sw->check_buffer_accounting();
    for (const auto& s : samples_)
      if (s.cycles != expected(s.cut_through, s.bytes))
        throw CheckFailure(fmt::format("{} {} B: {} cycles host to host, expected {}", s.cut_through ? "cut-through" : "store-and-forward",
                                       s.bytes, s.cycles, expected(s.cut_through, s.bytes)));
  }
  // Host to host = 1 cycle up + port to port + 1 cycle down; port to port is the stage sum, plus
  // the packet's own serialisation for store-and-forward.
  Cycle expected(bool ct, std::uint32_t bytes) const {
    const Cycle beats = (bytes + params_.port_bytes_per_cycle() - 1) / params_.port_bytes_per_cycle();
    return 2 + params_.lat.total() + (ct ? 0 : beats - 1);
  }
  nlohmann::json summary() const override {
    const double ns = to_ns(params_.period());
    nlohmann::json s;
    const auto& l = params_.lat;
    s["stages_cycles"] = {{"rx_mac", l.rx_mac}, {"parse", l.parse},   {"lookup", l.lookup},   {"enqueue", l.enqueue},
                          {"arbiter", l.arbiter}, {"crossbar", l.crossbar}, {"egress", l.egress}, {"tx_mac", l.tx_mac}};
    s["stage_sum_cycles"] = l.total();
    s["clock_period_ns"] = ns;
    s["public_anchors_ns"] = {{"tomahawk_ultra", 250}, {"ualink_switch", "150-250"}, {"sue_switch", "<250"}};
    for (const auto& smp : samples_) {
      const Cycle port_to_port = smp.cycles - 2;
      s[smp.cut_through ? "cut_through" : "store_and_forward"][std::to_string(smp.bytes)] = {
          {"port_to_port_cycles", port_to_port}, {"port_to_port_ns", port_to_port * ns}};
    }
    return s;
  }
  std::string report() const override {
    const nlohmann::json s = summary();
    std::string out = fmt::format("  stage sum {} cycles = {:.1f} ns at {:.4f} ns/cycle (Tomahawk Ultra 250 ns, UALink 150-250 ns)\n",
                                  params_.lat.total(), params_.lat.total() * to_ns(params_.period()), to_ns(params_.period()));
    out += fmt::format("  {:>8} {:>16} {:>20}\n", "bytes", "cut-through ns", "store-and-forward ns");
    for (std::uint32_t b : kSizes)
      out += fmt::format("  {:>8} {:>16.1f} {:>20.1f}\n", b, s["cut_through"][std::to_string(b)]["port_to_port_ns"].get<double>(),
                         s["store_and_forward"][std::to_string(b)]["port_to_port_ns"].get<double>());
    return out;
  }

 private:
  static constexpr std::uint32_t kSizes[] = {64, 256, 1500, 4096, 9216};
  struct Sample {
    bool cut_through;
    std::uint32_t bytes;
    Cycle cycles;
  };
  Stats& stats_;
  SwitchParams params_;
  std::unique_ptr<ClockDomain> domain_;
  PacketPool pool_;
  std::vector<std::unique_ptr<Rig>> rigs_;
  std::vector<Sample> samples_;
};

// ---------------------------------------------------------------------------------------------

class SwitchUniform : public Testbench {
 public:
  explicit SwitchUniform(RunContext& ctx) : stats_(ctx.stats) {
    Config& c = ctx.config;
    const int points = static_cast<int>(c.integer("uniform.points", 10, "loads", 1, 100, "offered loads 1/N, 2/N ... 1"));
    const double single = c.real("uniform.load", 0, "fraction", 0, 1, "one offered load instead of the sweep; 0 = sweep");
    warmup_ = static_cast<Cycle>(c.integer("uniform.warmup_cycles", 5000, "cycles", 0, 1ll << 40, "not measured"));
    measure_ = static_cast<Cycle>(c.integer("uniform.measure_cycles", 20000, "cycles", 1, 1ll << 40, "measured"));
    const auto min_bytes = static_cast<std::uint32_t>(c.integer("traffic.min_bytes", 64, "bytes", 64, 9216, "smallest packet"));
    const auto max_bytes = static_cast<std::uint32_t>(c.integer("traffic.max_bytes", 1500, "bytes", 64, 9216, "largest packet"));
    if (min_bytes > max_bytes)
      throw ConfigError(fmt::format("traffic.min_bytes = {} is above traffic.max_bytes = {}: must be <=", min_bytes, max_bytes));
    const SwitchParams p = SwitchParams::declare(c, "switch");
    period_ = p.period();
    domain_ = std::make_unique<ClockDomain>("switch", p.period());
    const int runs = single > 0 ? 1 : points;
    for (int k = 1; k <= runs; ++k) {
      Point pt;
      pt.load = single > 0 ? single : static_cast<double>(k) / points;
      Host::Traffic t{pt.load, min_bytes, max_bytes, warmup_ + measure_};
      pt.rig = std::make_unique<Rig>(fmt::format("top.load{}", k), p, domain_->clock(), stats_, pool_, t, ctx);
      pt.latency = std::make_unique<LatencyHistogram>(p.period());
      Point* raw = &points_.emplace_back(std::move(pt));
      for (auto& h : raw->rig->hosts)
        h->on_arrival = [this, raw](const Packet& pk, Time now) {
          const Cycle arrived = now / period_;
          if (arrived < warmup_ || arrived >= warmup_ + measure_) return;  // the measured window
          raw->beats += (pk.bytes + width_ - 1) / width_;
          raw->latency->record((now - pk.created) / period_);
        };
    }
    ports_ = p.ports;
    width_ = p.port_bytes_per_cycle();
  }
  bool done() const override {
    for (const auto& pt : points_)
      if (pt.rig->received() + pt.rig->sw->drops() < pt.rig->sent() || domain_->clock().now() < warmup_ + measure_)
        return false;
    return true;
  }
  std::uint64_t progress() const override {
    std::uint64_t n = 0;
    for (const auto& pt : points_) n += pt.rig->received();
    return n;
  }
  void check() const override {
    for (const auto& pt : points_) {
      pt.rig->sw->check_buffer_accounting();
      if (std::string e = pt.rig->error(); !e.empty()) throw CheckFailure(e);
    }
  }
  nlohmann::json summary() const override {
    nlohmann::json curve = nlohmann::json::array();
    for (const auto& pt : points_) {
      const auto lat = pt.latency->to_json();
      curve.push_back({{"offered_load", pt.load},
                       {"accepted_load", accepted(pt)},
                       {"latency_p50_ns", lat["p50_ns"]},
                       {"latency_p99_ns", lat["p99_ns"]},
                       {"latency_max_ns", lat["max_ns"]},
                       {"drops", pt.rig->sw->drops()},
                       {"peak_buffer_cells", pt.rig->sw->peak_buffer_cells()}});
    }
    nlohmann::json s;
    s["ports"] = ports_;
    s["curve"] = curve;
    return s;
  }
  std::string report() const override {
    std::string out = fmt::format("  {:>8} {:>9} {:>10} {:>10} {:>10} {:>7}\n", "offered", "accepted", "p50 ns", "p99 ns", "max ns", "drops");
    const nlohmann::json s = summary();  // a named object: the loop must not outlive it
    for (const auto& row : s["curve"])
      out += fmt::format("  {:>8.2f} {:>9.4f} {:>10.1f} {:>10.1f} {:>10.1f} {:>7}\n", row["offered_load"].get<double>(),
                         row["accepted_load"].get<double>(), row["latency_p50_ns"].get<double>(),
                         row["latency_p99_ns"].get<double>(), row["latency_max_ns"].get<double>(),
                         row["drops"].get<std::uint64_t>());
    return out;
  }
  void write_artifacts(const std::string& dir) const override {
    std::ofstream csv(dir + "/switch_uniform.csv");
    csv << "offered_load,accepted_load,latency_p50_ns,latency_p99_ns,latency_max_ns,drops\n";
    const nlohmann::json s = summary();
    for (const auto& row : s["curve"])
      csv << row["offered_load"].get<double>() << ',' << row["accepted_load"].get<double>() << ','
          << row["latency_p50_ns"].get<double>() << ',' << row["latency_p99_ns"].get<double>() << ','
          << row["latency_max_ns"].get<double>() << ',' << row["drops"].get<std::uint64_t>() << '\n';
  }

 private:
  struct Point {
    double load = 0;
    std::unique_ptr<Rig> rig;
    std::unique_ptr<LatencyHistogram> latency;
    std::uint64_t beats = 0;  // delivered in the measured window
  };
  // Line beats delivered in the window over the window's beats: the same unit as the offered
  // load (a packet's last beat may be partly empty on both sides).
  double accepted(const Point& pt) const {
    return static_cast<double>(pt.beats) / (static_cast<double>(ports_) * static_cast<double>(measure_));
  }
  Stats& stats_;
  Time period_ = 0;
  Cycle warmup_ = 0, measure_ = 0;
  int ports_ = 0;
  std::uint32_t width_ = 0;
  std::unique_ptr<ClockDomain> domain_;
  PacketPool pool_;
  std::deque<Point> points_;
};


// ---------------------------------------------------------------------------------------------
// switch-ecmp: 32 elephant flows from leaf A through 8 equal-cost uplinks to leaf B (claims C6,
// C12), once per path choice, side by side in one simulation.

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
    const auto packets = static_cast<std::uint64_t>(c.integer("ecmp.packets", 2000, "packets", 1, 1ll << 30, "packets per flow"));
    const auto bytes = static_cast<std::uint32_t>(c.integer("ecmp.bytes", 1024, "bytes", 64, 9216, "packet size"));
    const double rate = c.real("ecmp.rate", 0.25, "fraction", 0.001, 1,
                               "each flow's rate; 32 flows x 0.25 fill the 8 uplinks exactly");
    SwitchParams p = SwitchParams::declare(c, "switch");
    p.ports = kFlows + kLinks;
    period_ = p.period();
    domain_ = std::make_unique<ClockDomain>("switch", p.period());
    const struct { const char* name; sw::PathChoice choice; sw::HashKind hash; } variants[] = {
        {"ecmp-crc32", sw::PathChoice::kEcmpHash, sw::HashKind::kCrc32},
        {"ecmp-toeplitz", sw::PathChoice::kEcmpHash, sw::HashKind::kToeplitz},
        {"spray", sw::PathChoice::kSprayRoundRobin, sw::HashKind::kCrc32}};
    for (const auto& v : variants)
      variants_.push_back(std::make_unique<Variant>(v.name, v.choice, v.hash, p, packets, bytes, rate, *this, ctx));
  }

  bool done() const override {
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
  void check() const override {
    for (const auto& v : variants_) {
      v->a->check_buffer_accounting();
      v->b->check_buffer_accounting();
      for (const auto& r : v->receivers)
        if (r->errors()) throw CheckFailure(v->name + ": a receiver got a duplicate or unknown packet");
      if (v->a->drops() || v->b->drops()) throw CheckFailure(v->name + ": packets dropped");
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
      s[v->name] = {{"link_bytes", links},
                    {"flows_first_link", flows},
                    {"flows_on_worst_link", worst_flows},
                    {"max_over_mean_link_load", worst / (total / kLinks)},
                    {"completion_max_us", fct_max},
                    {"completion_mean_us", fct_sum / kFlows},
                    {"out_of_order_packets", ooo},
                    {"peak_reorder_held_packets", held}};
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
    return out;
  }

 private:
  // Leaf A: hosts on ports 0..31, uplinks on 32..39 to leaf B's ports 0..7; B: receivers on 8..39.
  struct Variant {
    std::string name;
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
        : name(std::move(n)), selector(choice, hash, kLinks, ctx.rng("top." + name + ".paths")) {
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
  Stats& stats_;
  Time period_ = 0;
  std::unique_ptr<ClockDomain> domain_;
  PacketPool pool_;
  std::vector<std::unique_ptr<Variant>> variants_;
};

}  // namespace

Scenario switch_latency_scenario() {
  return {"switch-latency", "port-to-port latency at zero load, cut-through and store-and-forward, per frame size",
          [](RunContext& ctx) { return std::make_unique<SwitchLatency>(ctx); }};
}

Scenario switch_uniform_scenario() {
  return {"switch-uniform", "all ports, uniform random traffic at offered loads 0.1 ... 1.0: throughput and latency",
          [](RunContext& ctx) { return std::make_unique<SwitchUniform>(ctx); }};
}

}  // namespace xy

namespace xy {
Scenario switch_ecmp_scenario() {
  return {"switch-ecmp", "32 elephant flows over 8 equal-cost links: ECMP hash (CRC-32, Toeplitz) vs packet spraying",
          [](RunContext& ctx) { return std::make_unique<SwitchEcmp>(ctx); }};
}
}  // namespace xy
