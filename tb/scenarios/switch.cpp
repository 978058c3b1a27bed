// Switch scenarios: switch-latency and switch-uniform (see hw/switch/switch.hpp).
#include "tb/scenarios/switch.hpp"

#include <cmath>
#include <cstring>
#include <numeric>
#include <fstream>
#include <memory>

#include <fmt/format.h>

#include "hw/switch/forwarding.hpp"
#include "hw/switch/port_fc.hpp"
#include "hw/switch/reduce.hpp"
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
      if (!gate_->can_send(*held_)) return;
      send(held_);
      held_ = nullptr;
      return;
    }
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
    if (held_) {  // the flow control wakes us when it may go
      set_busy(from_switch_.ready_by(now() + 1));
      return;
    }
    if (!probes_.empty()) next = std::max(probes_.front().at, line_free_);
    if (t_.load > 0 && now() < t_.stop_at) next = std::min(next, std::max(resume_at_, line_free_));
    if (next != ~Cycle{0}) wake_at(std::max(next, now() + 1));
    set_busy(from_switch_.ready_by(now() + 1));
  }
  std::function<void(const Packet&, Time)> on_arrival;
  std::uint64_t sent() const { return sent_; }
  std::uint64_t received() const { return received_; }
  const std::string& error() const { return error_; }
  void gate_by(sw::EgressGate* gate) { gate_ = gate; }  // the flow control of the link to the switch

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
    if (gate_ && !gate_->can_send(*p)) {
      held_ = p;
      return;
    }
    send(p);
  }
  void send(Packet* p) {
    if (gate_) gate_->on_send(*p);
    to_switch_.push(p);
    line_free_ = now() + beats(p->bytes);
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
  sw::EgressGate* gate_ = nullptr;
  Packet* held_ = nullptr;  // made, waiting for flow control
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

  std::vector<std::unique_ptr<sw::PortFlowControl>> links;

  // `fc`: flow control on every host-to-switch link (none for kNone).
  Rig(const std::string& name, const SwitchParams& p, Clock& clock, Stats& stats, PacketPool& pool,
      const Host::Traffic& traffic, const RunContext& ctx, sw::LinkFc fc = sw::LinkFc::kNone,
      const link::CbfcConfig& cbfc = {}, const link::PfcConfig& pfc = {})
      : boards(p.ports, std::vector<Scoreboard>(p.ports)) {
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
      hosts.push_back(std::make_unique<Host>(host, i, p.ports, p.port_bytes_per_cycle(), traffic, ctx.rng(host), *up[i],
                                             *down[i], pool, boards));
      clock.attach(*hosts.back());
      up[i]->connect(hosts.back().get(), &sw->ingress_core(i));
      down[i]->connect(&sw->egress_core(i), hosts.back().get());
      if (traffic.load > 0) hosts.back()->wake_at(0);
      if (fc != sw::LinkFc::kNone) {
        links.push_back(std::make_unique<sw::PortFlowControl>(fmt::format("{}.fc{}", name, i), fc, cbfc, pfc,
                                                              clock.period(), 1, stats));
        clock.attach(*links.back());
        links.back()->set_upstream(hosts.back().get());
        hosts.back()->gate_by(links.back().get());
        sw->set_ingress_monitor(i, links.back().get());
      }
    }
  }
  std::uint64_t sent() const {
    std::uint64_t n = 0;
    for (const auto& h : hosts) n += h->sent();
    return n;
  }
  // Every packet not delivered must be one the switch dropped and counted.
  std::string losses_unaccounted() const {
    std::uint64_t missing = 0;
    for (const auto& row : boards)
      for (const auto& b : row) missing += b.outstanding() + b.lost();
    return missing == sw->drops() ? ""
                                  : fmt::format("{} packets missing, {} dropped with a reason", missing, sw->drops());
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
    const std::string fc_name = c.choice("uniform.flow_control", "cbfc", {"cbfc", "none"},
                                         "flow control on the host-to-switch links (lossless with CBFC)");
    const sw::LinkFc fc = fc_name == "cbfc" ? sw::LinkFc::kCbfc : sw::LinkFc::kNone;
    link::CbfcConfig cb;
    cb.vcs = 1;
    cb.buffer_credits.assign(1, static_cast<std::uint32_t>(c.integer("cbfc.buffer_credits", 1024, "credits", 1, 1 << 30,
                                                                     "switch buffer per ingress port, 128-byte credits")));
    cb.validate("cbfc");
    period_ = p.period();
    domain_ = std::make_unique<ClockDomain>("switch", p.period());
    const int runs = single > 0 ? 1 : points;
    for (int k = 1; k <= runs; ++k) {
      Point pt;
      pt.load = single > 0 ? single : static_cast<double>(k) / points;
      Host::Traffic t{pt.load, min_bytes, max_bytes, warmup_ + measure_};
      pt.rig = std::make_unique<Rig>(fmt::format("top.load{}", k), p, domain_->clock(), stats_, pool_, t, ctx, fc, cb);
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
      if (std::string e = pt.rig->losses_unaccounted(); !e.empty()) throw CheckFailure(e);
      for (const auto& l : pt.rig->links)
        if (!l->overflow().empty()) throw CheckFailure(l->overflow());
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


// ---------------------------------------------------------------------------------------------
// switch-allreduce (claim C5): N endpoints AllReduce fp32 vectors, once with the switch's reduce
// engine (one ALU port per endpoint: contributions to port N+i, results back from it) and once
// as a ring AllReduce over the same kind of switch.

// Packets of an endpoint's vector slice: payload = the bytes, id = chunk + 1.
Packet* vector_packet(PacketPool& pool, int src, int dst, std::uint64_t chunk, const std::uint8_t* bytes,
                      std::uint32_t size, Time now) {
  Packet* p = pool.acquire();
  p->id = chunk + 1;
  p->src = static_cast<std::uint32_t>(src);
  p->dst = static_cast<std::uint32_t>(dst);
  p->bytes = size;
  p->phantom = false;
  p->payload.assign(bytes, bytes + size);
  p->created = now;
  return p;
}

// An endpoint that sends its vector in packets, paced by its line, and collects what comes back.
class VectorEndpoint : public Core {
 public:
  VectorEndpoint(std::string name, int index, std::uint32_t width, Channel<Packet*>& out, Channel<Packet*>& in,
                 PacketPool& pool)
      : Core(std::move(name)), index_(index), width_(width), out_(out), in_(in), pool_(pool) {}
  std::vector<std::uint8_t> data;  // this endpoint's vector; the result when done
  std::uint64_t bytes_sent = 0;
  Time done_at = 0;

 protected:
  // Queue `size` bytes at `offset` of `data` as packets to `dst` (chunk numbers from `chunk`).
  void queue_send(int dst, std::uint64_t offset, std::uint64_t size, std::uint32_t packet_bytes, std::uint64_t chunk) {
    for (std::uint64_t at = 0; at < size; at += packet_bytes, ++chunk)
      to_send_.push_back({dst, offset + at, static_cast<std::uint32_t>(std::min<std::uint64_t>(packet_bytes, size - at)), chunk});
  }
  void send_some() {
    if (to_send_.empty() || now() < line_free_) return;
    const Send s = to_send_.front();
    to_send_.pop_front();
    out_.push(vector_packet(pool_, index_, s.dst, s.chunk, data.data() + s.offset, s.size, clock().time_of(now())));
    bytes_sent += s.size;
    line_free_ = now() + (s.size + width_ - 1) / width_;
  }
  bool sending() const { return !to_send_.empty(); }
  void keep_going() {
    if (sending()) wake_at(std::max(line_free_, now() + 1));
    set_busy(in_.ready_by(now() + 1));
  }
  int index_;
  std::uint32_t width_;
  Channel<Packet*>& out_;
  Channel<Packet*>& in_;
  PacketPool& pool_;

 private:
  struct Send {
    int dst;
    std::uint64_t offset;
    std::uint32_t size;
    std::uint64_t chunk;
  };
  std::deque<Send> to_send_;
  Cycle line_free_ = 0;
};

// In-network: send everything to my ALU port, take the reduced chunks back.
class SharpEndpoint : public VectorEndpoint {
 public:
  SharpEndpoint(std::string name, int index, int alu_port, std::uint32_t width, std::uint32_t packet_bytes,
                Channel<Packet*>& out, Channel<Packet*>& in, PacketPool& pool)
      : VectorEndpoint(std::move(name), index, width, out, in, pool), alu_port_(alu_port), packet_bytes_(packet_bytes) {}
  void eval() override {
    if (!started_) {
      started_ = true;
      queue_send(alu_port_, 0, data.size(), packet_bytes_, 0);
      chunks_ = (data.size() + packet_bytes_ - 1) / packet_bytes_;
    }
    while (in_.can_pop()) {
      Packet* p = in_.pop();
      std::copy(p->payload.begin(), p->payload.end(), data.begin() + static_cast<std::ptrdiff_t>((p->id - 1) * packet_bytes_));
      if (++received_ == chunks_) done_at = clock().time_of(now());
      pool_.release(p);
    }
    send_some();
  }
  void commit() override { keep_going(); }
  bool done() const { return started_ && received_ == chunks_; }

 private:
  int alu_port_;
  std::uint32_t packet_bytes_;
  bool started_ = false;
  std::uint64_t chunks_ = 0, received_ = 0;
};

// The switch's reduce engine: one ALU port per endpoint; a chunk's result goes back to every
// endpoint once its last contribution has been through the ALU (cycles_for(bytes) cycles).
class ReduceEngine : public Core {
 public:
  ReduceEngine(std::string name, const sw::ReduceConfig& config, int endpoints, std::vector<Channel<Packet*>*> in,
               std::vector<Channel<Packet*>*> out, PacketPool& pool)
      : Core(std::move(name)), table_(config), in_(std::move(in)), out_(std::move(out)), pool_(pool), results_(endpoints) {
    std::vector<std::uint32_t> members;
    for (int i = 0; i < endpoints; ++i) members.push_back(static_cast<std::uint32_t>(i));
    table_.add_group(0, members);
  }
  void eval() override {
    for (std::size_t i = 0; i < in_.size(); ++i) {
      if (!in_[i]->can_pop() || !table_.can_accept(0, in_[i]->peek()->id - 1)) continue;  // full: back-pressure
      Packet* p = in_[i]->pop();
      const Cycle alu = table_.cycles_for(p->bytes);
      if (auto done = table_.contribute(0, p->id - 1, static_cast<std::uint32_t>(p->src), p->payload.data(), p->bytes)) {
        const Cycle ready = now() + alu;
        for (std::size_t d = 0; d < out_.size(); ++d) results_[d].push_back({ready, done->chunk, done->data});
        ++completed_;
      }
      pool_.release(p);
    }
    for (std::size_t d = 0; d < out_.size(); ++d) {
      if (results_[d].empty() || results_[d].front().ready > now() || !out_[d]->can_push()) continue;
      const Result& r = results_[d].front();
      out_[d]->push(vector_packet(pool_, -1, static_cast<int>(d), r.chunk, r.data.data(),
                                  static_cast<std::uint32_t>(r.data.size()), clock().time_of(now())));
      bytes_out_ += r.data.size();
      results_[d].pop_front();
    }
  }
  void commit() override {
    bool pending = false;
    Cycle next = ~Cycle{0};
    for (const auto& q : results_)
      if (!q.empty()) {
        pending = true;
        next = std::min(next, q.front().ready);
      }
    if (pending) wake_at(std::max(next, now() + 1));
    bool waiting = false;
    for (const auto* c : in_) waiting = waiting || c->ready_by(now() + 1);
    set_busy(waiting);
  }
  const sw::ReduceTable& table() const { return table_; }

 private:
  struct Result {
    Cycle ready;
    std::uint64_t chunk;
    std::vector<std::uint8_t> data;
  };
  sw::ReduceTable table_;
  std::vector<Channel<Packet*>*> in_, out_;
  PacketPool& pool_;
  std::vector<std::deque<Result>> results_;
  std::uint64_t completed_ = 0, bytes_out_ = 0;
};

// Ring AllReduce: N-1 reduce-scatter steps, then N-1 all-gather steps, one segment per step to
// the next endpoint; a step's send waits for the previous step's segment to arrive.
class RingEndpoint : public VectorEndpoint {
 public:
  RingEndpoint(std::string name, int index, int endpoints, std::uint32_t width, std::uint32_t packet_bytes,
               Channel<Packet*>& out, Channel<Packet*>& in, PacketPool& pool)
      : VectorEndpoint(std::move(name), index, width, out, in, pool), n_(endpoints), packet_bytes_(packet_bytes) {}
  void eval() override {
    const std::uint64_t segment = data.size() / static_cast<std::uint64_t>(n_);
    if (step_ == 0 && !step_sent_) start_step(segment);
    while (in_.can_pop()) {
      Packet* p = in_.pop();
      const std::uint64_t at = segment_of(step_, -1) * segment + (p->id - 1 - step_base_) * packet_bytes_;
      float* mine = reinterpret_cast<float*>(data.data() + at);
      const float* theirs = reinterpret_cast<const float*>(p->payload.data());
      const std::size_t count = p->bytes / sizeof(float);
      if (step_ < n_ - 1) {
        for (std::size_t e = 0; e < count; ++e) mine[e] += theirs[e];  // reduce-scatter: add
      } else {
        std::copy(theirs, theirs + count, mine);  // all-gather: take the reduced segment
      }
      received_in_step_ += p->bytes;
      pool_.release(p);
      if (received_in_step_ == segment) {
        received_in_step_ = 0;
        step_base_ += (segment + packet_bytes_ - 1) / packet_bytes_;
        if (++step_ == 2 * (n_ - 1)) done_at = clock().time_of(now());
        else start_step(segment);
      }
    }
    send_some();
  }
  void commit() override { keep_going(); }
  bool done() const { return step_ == 2 * (n_ - 1); }

 private:
  // The segment this endpoint sends (dir 0) or receives (dir -1) in `step`.
  std::uint64_t segment_of(int step, int dir) const {
    const int t = step < n_ - 1 ? step : step - (n_ - 1);
    const int base = step < n_ - 1 ? index_ - t : index_ + 1 - t;
    return static_cast<std::uint64_t>(((base + dir) % n_ + n_) % n_);
  }
  void start_step(std::uint64_t segment) {
    queue_send((index_ + 1) % n_, segment_of(step_, 0) * segment, segment, packet_bytes_, step_base_);
    step_sent_ = true;
  }
  int n_;
  std::uint32_t packet_bytes_;
  int step_ = 0;
  bool step_sent_ = false;
  std::uint64_t step_base_ = 0, received_in_step_ = 0;
};

class SwitchAllreduce : public Testbench {
 public:
  explicit SwitchAllreduce(RunContext& ctx) : stats_(ctx.stats) {
    Config& c = ctx.config;
    n_ = static_cast<int>(c.integer("allreduce.endpoints", 8, "endpoints", 2, 64, "GPUs taking part"));
    const auto bytes = static_cast<std::uint64_t>(c.integer("allreduce.bytes", 262144, "bytes", 4, 1ll << 32,
                                                            "vector per endpoint (fp32)"));
    packet_bytes_ = static_cast<std::uint32_t>(c.integer("allreduce.packet_bytes", 4096, "bytes", 4, 9216, "payload per packet"));
    if (bytes % (4ull * n_ * packet_bytes_ / std::gcd<std::uint64_t>(4ull * n_, packet_bytes_)) != 0 || packet_bytes_ % 4)
      throw ConfigError(fmt::format("allreduce.bytes = {}: must split into {} segments of whole {}-byte packets of fp32 "
                                    "(a multiple of endpoints x packet_bytes)", bytes, n_, packet_bytes_));
    sw::ReduceConfig rc;
    rc.type = sw::ElemType::kFp32;
    rc.accumulate = sw::parse_accum_width(c.choice("reduce.accumulate", "32", {"32", "64"}, "accumulator width (fp32 or fp64)"));
    rc.order = sw::parse_reduce_order(c.choice("reduce.order", "arrival", {"arrival", "member"},
                                               "add in arrival order, or in member order (independent of arrival)"));
    rc.slots = static_cast<int>(c.integer("reduce.slots", 64, "slots", 1, 65536, "aggregation slots"));
    rc.lanes = static_cast<int>(c.integer("reduce.lanes", 16, "elements", 1, 4096, "elements added per cycle per ALU port"));
    rc.vector_bytes = packet_bytes_;
    rc.validate("reduce");
    SwitchParams p = SwitchParams::declare(c, "switch");
    domain_ = std::make_unique<ClockDomain>("switch", p.period());
    Clock& clock = domain_->clock();
    auto channel = [&](const std::string& name) {
      channels_.push_back(std::make_unique<Channel<Packet*>>(name, clock, ChannelSpec{1, 0, 1, 2}));
      return channels_.back().get();
    };
    std::vector<std::vector<std::uint8_t>> vectors(n_);
    for (int i = 0; i < n_; ++i) {
      Rng rng = ctx.rng(fmt::format("top.gpu{}.data", i));
      vectors[i].resize(bytes);
      for (std::uint64_t e = 0; e < bytes / 4; ++e) {
        const float v = static_cast<float>(rng.uniform() * 2 - 1);
        std::memcpy(vectors[i].data() + 4 * e, &v, 4);
      }
    }
    // In-network: hosts on ports 0..N-1, ALU ports N..2N-1.
    {
      SwitchParams q = p;
      q.ports = 2 * n_;
      std::vector<Channel<Packet*>*> in(q.ports), out(q.ports), alu_in, alu_out;
      for (int i = 0; i < n_; ++i) {
        in[i] = channel(fmt::format("top.innet.up{}", i));
        out[i] = channel(fmt::format("top.innet.down{}", i));
        out[n_ + i] = channel(fmt::format("top.innet.alu_in{}", i));
        in[n_ + i] = channel(fmt::format("top.innet.alu_out{}", i));
        alu_in.push_back(out[n_ + i]);
        alu_out.push_back(in[n_ + i]);
      }
      innet_ = std::make_unique<Switch>("top.innet.sw", q, clock, stats_, in, out,
                                        [](const Packet& pk) { return static_cast<int>(pk.dst); });
      engine_ = std::make_unique<ReduceEngine>("top.innet.reduce", rc, n_, alu_in, alu_out, pool_);
      clock.attach(*engine_);
      for (int i = 0; i < n_; ++i) {
        sharp_.push_back(std::make_unique<SharpEndpoint>(fmt::format("top.innet.gpu{}", i), i, n_ + i,
                                                         q.port_bytes_per_cycle(), packet_bytes_, *in[i], *out[i], pool_));
        sharp_.back()->data = vectors[i];
        clock.attach(*sharp_.back());
        in[i]->connect(sharp_.back().get(), &innet_->ingress_core(i));
        out[i]->connect(&innet_->egress_core(i), sharp_.back().get());
        alu_in[i]->connect(&innet_->egress_core(n_ + i), engine_.get());
        alu_out[i]->connect(engine_.get(), &innet_->ingress_core(n_ + i));
        sharp_.back()->wake_at(0);
      }
    }
    // Ring over a switch of N ports.
    {
      SwitchParams q = p;
      q.ports = n_;
      std::vector<Channel<Packet*>*> in(q.ports), out(q.ports);
      for (int i = 0; i < n_; ++i) {
        in[i] = channel(fmt::format("top.ring.up{}", i));
        out[i] = channel(fmt::format("top.ring.down{}", i));
      }
      ring_sw_ = std::make_unique<Switch>("top.ring.sw", q, clock, stats_, in, out,
                                          [](const Packet& pk) { return static_cast<int>(pk.dst); });
      for (int i = 0; i < n_; ++i) {
        ring_.push_back(std::make_unique<RingEndpoint>(fmt::format("top.ring.gpu{}", i), i, n_, q.port_bytes_per_cycle(),
                                                       packet_bytes_, *in[i], *out[i], pool_));
        ring_.back()->data = vectors[i];
        clock.attach(*ring_.back());
        in[i]->connect(ring_.back().get(), &ring_sw_->ingress_core(i));
        out[i]->connect(&ring_sw_->egress_core(i), ring_.back().get());
        ring_.back()->wake_at(0);
      }
    }
    // The exact sum, for reference.
    reference_.assign(bytes / 4, 0.0);
    for (const auto& v : vectors)
      for (std::uint64_t e = 0; e < bytes / 4; ++e) {
        float x;
        std::memcpy(&x, v.data() + 4 * e, 4);
        reference_[e] += x;
      }
  }

  bool done() const override {
    for (const auto& e : sharp_)
      if (!e->done()) return false;
    for (const auto& e : ring_)
      if (!e->done()) return false;
    return true;
  }
  std::uint64_t progress() const override { return innet_->forwarded() + ring_sw_->forwarded(); }
  void check() const override {
    innet_->check_buffer_accounting();
    ring_sw_->check_buffer_accounting();
    for (int i = 1; i < n_; ++i) {
      if (sharp_[i]->data != sharp_[0]->data)
        throw CheckFailure(fmt::format("in-network AllReduce: endpoint {} holds another result than endpoint 0", i));
      if (ring_[i]->data != ring_[0]->data)
        throw CheckFailure(fmt::format("ring AllReduce: endpoint {} holds another result than endpoint 0", i));
    }
  }
  nlohmann::json summary() const override {
    auto finish_us = [](const auto& endpoints) {
      double t = 0;
      for (const auto& e : endpoints) t = std::max(t, to_us(e->done_at));
      return t;
    };
    auto host_bytes = [](const auto& endpoints) {
      std::uint64_t b = 0;
      for (const auto& e : endpoints) b += e->bytes_sent;
      return b;
    };
    auto max_error = [this](const std::vector<std::uint8_t>& result) {
      double worst = 0;
      for (std::size_t e = 0; e < reference_.size(); ++e) {
        float x;
        std::memcpy(&x, result.data() + 4 * e, 4);
        worst = std::max(worst, std::abs(static_cast<double>(x) - reference_[e]));
      }
      return worst;
    };
    nlohmann::json s;
    s["endpoints"] = n_;
    s["vector_bytes"] = sharp_[0]->data.size();
    // Bytes the endpoints put on their links (results coming back are the same again).
    s["in_network"] = {{"time_us", finish_us(sharp_)},
                       {"endpoint_bytes_sent", host_bytes(sharp_)},
                       {"max_abs_error_vs_exact", max_error(sharp_[0]->data)},
                       {"identical_at_every_endpoint", true},
                       {"peak_slots", engine_->table().peak_slots()}};
    s["ring"] = {{"time_us", finish_us(ring_)},
                 {"endpoint_bytes_sent", host_bytes(ring_)},
                 {"max_abs_error_vs_exact", max_error(ring_[0]->data)},
                 {"identical_at_every_endpoint", true}};
    s["speedup"] = finish_us(ring_) / finish_us(sharp_);
    s["results_equal_bit_for_bit"] = sharp_[0]->data == ring_[0]->data;
    return s;
  }
  std::string report() const override {
    const nlohmann::json s = summary();
    std::string out = fmt::format("  {} endpoints, {} bytes each (fp32)\n", n_, s["vector_bytes"].get<std::uint64_t>());
    for (const char* v : {"in_network", "ring"})
      out += fmt::format("  {:<11} {:>10.2f} us, {:>12} bytes sent by endpoints, max |error| {:.3g}\n", v,
                         s[v]["time_us"].get<double>(), s[v]["endpoint_bytes_sent"].get<std::uint64_t>(),
                         s[v]["max_abs_error_vs_exact"].get<double>());
    out += fmt::format("  in-network is {:.2f}x faster; results equal bit for bit: {}\n", s["speedup"].get<double>(),
                       s["results_equal_bit_for_bit"].get<bool>() ? "yes" : "no (different summation orders)");
    return out;
  }

 private:
  Stats& stats_;
  int n_ = 0;
  std::uint32_t packet_bytes_ = 0;
  std::unique_ptr<ClockDomain> domain_;
  PacketPool pool_;
  std::vector<std::unique_ptr<Channel<Packet*>>> channels_;
  std::unique_ptr<Switch> innet_, ring_sw_;
  std::unique_ptr<ReduceEngine> engine_;
  std::vector<std::unique_ptr<SharpEndpoint>> sharp_;
  std::vector<std::unique_ptr<RingEndpoint>> ring_;
  std::vector<double> reference_;
};


// ---------------------------------------------------------------------------------------------
// switch-incast (claim C3): three switches in a chain, S1 - S2 - S3. K senders on S2 and one on
// S1 send to R on S3 (a (K+1):1 incast at S3's port to R); an innocent victim flow goes from S1
// to W on S2 through the same S1 -> S2 link. Every link into a switch port runs the flow
// control under test; the three variants (CBFC, PFC, none) run side by side.

// Sends packets of `bytes` to `dst` as fast as its line and its link's flow control allow.
class PacedSender : public Core {
 public:
  PacedSender(std::string name, int src, int dst, std::uint32_t bytes, std::uint32_t width, Cycle stop_at,
              Channel<Packet*>& out, sw::PortFlowControl& fc, PacketPool& pool)
      : Core(std::move(name)), src_(src), dst_(dst), bytes_(bytes), beats_((bytes + width - 1) / width),
        stop_at_(stop_at), out_(out), fc_(fc), pool_(pool) {}
  void eval() override {
    if (now() < line_free_ || now() >= stop_at_) return;
    Packet* p = pool_.acquire();
    p->id = ++sent_;
    p->src = static_cast<std::uint32_t>(src_);
    p->dst = static_cast<std::uint32_t>(dst_);
    p->bytes = bytes_;
    p->phantom = true;
    p->created = clock().time_of(now());
    if (!fc_.can_send(*p)) {  // held: the flow control wakes us when that changes
      pool_.release(p);
      --sent_;
      return;
    }
    fc_.on_send(*p);
    out_.push(p);
    line_free_ = now() + beats_;
    wake_at(line_free_);
  }

 private:
  int src_, dst_;
  std::uint32_t bytes_;
  Cycle beats_, stop_at_, line_free_ = 0;
  Channel<Packet*>& out_;
  sw::PortFlowControl& fc_;
  PacketPool& pool_;
  std::uint64_t sent_ = 0;
};

// Counts what arrives inside the measured window.
class CountingSink : public Core {
 public:
  CountingSink(std::string name, Channel<Packet*>& in, PacketPool& pool, Time from, Time to)
      : Core(std::move(name)), in_(in), pool_(pool), from_(from), to_(to) {}
  void eval() override {
    while (in_.can_pop()) {
      Packet* p = in_.pop();
      const Time t = clock().time_of(now());
      if (t >= from_ && t < to_) bytes_ += p->bytes;
      pool_.release(p);
    }
  }
  void commit() override { set_busy(in_.ready_by(now() + 1)); }
  double gbps() const { return static_cast<double>(bytes_) * 8 / to_ns(to_ - from_); }

 private:
  Channel<Packet*>& in_;
  PacketPool& pool_;
  Time from_, to_;
  std::uint64_t bytes_ = 0;
};

class SwitchIncast : public Testbench {
  static constexpr int kR = 1000, kW = 1001;  // endpoint ids of the incast receiver and the victim's

 public:
  explicit SwitchIncast(RunContext& ctx) : stats_(ctx.stats) {
    Config& c = ctx.config;
    k_ = static_cast<int>(c.integer("incast.senders", 4, "senders", 1, 60, "incast senders on S2 (one more on S1)"));
    const auto bytes = static_cast<std::uint32_t>(c.integer("incast.bytes", 1024, "bytes", 64, 9216, "packet size"));
    const double warmup_us = c.real("incast.warmup_us", 20, "us", 0, 1e6, "not measured");
    const double measure_us = c.real("incast.measure_us", 50, "us", 0.1, 1e6, "measured");
    const auto latency = static_cast<Cycle>(c.integer("incast.link_latency_cycles", 40, "cycles", 1, 1 << 30,
                                                      "each link, one way (cable; the PHY is in rx_mac/tx_mac)"));
    link::CbfcConfig cb;
    cb.vcs = 1;
    cb.buffer_credits.assign(1, static_cast<std::uint32_t>(c.integer("cbfc.buffer_credits", 512, "credits", 1, 1 << 30,
                                                                     "receive buffer per link, 128-byte credits")));
    cb.validate("cbfc");
    SwitchParams sp = SwitchParams::declare(c, "switch");
    link::PfcConfig pf;
    pf.priorities = 1;
    pf.line_gbps = sp.port_gbps;
    pf.buffer_bytes = static_cast<std::uint32_t>(c.integer("pfc.buffer_bytes", 131072, "bytes", 1024, 1 << 30, "ingress allowance per port"));
    pf.headroom_bytes = static_cast<std::uint32_t>(c.integer("pfc.headroom_bytes", 49152, "bytes", 0, 1 << 30, "above XOFF"));
    pf.xoff_bytes = static_cast<std::uint32_t>(c.integer("pfc.xoff_bytes", 81920, "bytes", 1, 1 << 30, "XOFF threshold"));
    pf.xon_bytes = static_cast<std::uint32_t>(c.integer("pfc.xon_bytes", 65536, "bytes", 0, 1 << 30, "XON threshold"));
    pf.validate("pfc");
    domain_ = std::make_unique<ClockDomain>("switch", sp.period());
    from_ = static_cast<Time>(warmup_us * kUs);
    to_ = static_cast<Time>((warmup_us + measure_us) * kUs);
    for (sw::LinkFc mode : {sw::LinkFc::kCbfc, sw::LinkFc::kPfc, sw::LinkFc::kNone})
      chains_.push_back(std::make_unique<Chain>(*this, mode, sp, cb, pf, bytes, latency, ctx));
  }

  bool done() const override { return domain_->clock().time_of(domain_->clock().now()) >= to_ + 20 * kUs; }
  std::uint64_t progress() const override {
    std::uint64_t n = 0;
    for (const auto& ch : chains_)
      for (const auto& s : ch->switches) n += s->forwarded();
    return n + domain_->clock().now();  // traffic stops by design: time itself is progress
  }
  void check() const override {
    for (const auto& ch : chains_) {
      for (const auto& s : ch->switches) s->check_buffer_accounting();
      if (ch->mode != sw::LinkFc::kNone) {
        for (const auto& fc : ch->links)
          if (!fc->overflow().empty()) throw CheckFailure(fc->overflow());
        for (const auto& s : ch->switches)
          if (s->drops()) throw CheckFailure(ch->name + ": a lossless chain dropped packets");
      }
    }
  }
  nlohmann::json summary() const override {
    nlohmann::json s;
    for (const auto& ch : chains_) {
      nlohmann::json xoff = nlohmann::json::object(), drops = nlohmann::json::object(), peak = nlohmann::json::object(),
                     blocked = nlohmann::json::object();
      int hops_paused = 0;
      for (int sw_index = 0; sw_index < 3; ++sw_index) {
        std::uint64_t x = 0;
        for (const auto& fc : ch->links)
          if (fc->name().find(fmt::format(".s{}.", sw_index + 1)) != std::string::npos) x += fc->xoffs();
        xoff[fmt::format("into_s{}", sw_index + 1)] = x;
        hops_paused += x > 0;
        const auto& swp = ch->switches[sw_index];
        drops[fmt::format("s{}", sw_index + 1)] = swp->drops();
        peak[fmt::format("s{}_bytes", sw_index + 1)] = swp->peak_buffer_cells() * swp->params().cell_bytes;
        blocked[fmt::format("s{}", sw_index + 1)] =
            stats_.find_counter(fmt::format("top.{}.s{}.egress.flow_control_blocked", ch->name, sw_index + 1))->value();
      }
      std::uint64_t marked = 0;
      for (int i = 1; i <= 3; ++i)
        marked += stats_.find_counter(fmt::format("top.{}.s{}.egress.ecn_marked", ch->name, i))->value();
      s[ch->name] = {{"victim_Gbps", ch->victim->gbps()},
                     {"ecn_marked", marked},
                     {"incast_Gbps", ch->incast->gbps()},
                     {"xoff_frames", xoff},
                     {"switches_that_paused_upstream", hops_paused},
                     {"egress_blocked_cycles", blocked},
                     {"drops", drops},
                     {"peak_buffer", peak}};
    }
    return s;
  }
  std::string report() const override {
    const nlohmann::json s = summary();
    std::string out = fmt::format("  {} senders on S2 + 1 on S1 -> R on S3; victim S1 -> S2\n", k_);
    out += fmt::format("  {:<6} {:>11} {:>11} {:>20} {:>26} {:>16}\n", "fc", "victim Gb/s", "incast Gb/s",
                       "XOFF into S1/S2/S3", "egress held S1/S2/S3", "drops S1/S2/S3");
    for (const auto& ch : chains_) {
      const auto& r = s[ch->name];
      out += fmt::format("  {:<6} {:>11.1f} {:>11.1f} {:>20} {:>26} {:>16}\n", ch->name, r["victim_Gbps"].get<double>(),
                         r["incast_Gbps"].get<double>(),
                         fmt::format("{}/{}/{}", r["xoff_frames"]["into_s1"].get<std::uint64_t>(),
                                     r["xoff_frames"]["into_s2"].get<std::uint64_t>(),
                                     r["xoff_frames"]["into_s3"].get<std::uint64_t>()),
                         fmt::format("{}/{}/{}", r["egress_blocked_cycles"]["s1"].get<std::uint64_t>(),
                                     r["egress_blocked_cycles"]["s2"].get<std::uint64_t>(),
                                     r["egress_blocked_cycles"]["s3"].get<std::uint64_t>()),
                         fmt::format("{}/{}/{}", r["drops"]["s1"].get<std::uint64_t>(), r["drops"]["s2"].get<std::uint64_t>(),
                                     r["drops"]["s3"].get<std::uint64_t>()));
    }
    return out;
  }

 private:
  struct Chain {
    std::string name;
    sw::LinkFc mode;
    std::vector<std::unique_ptr<Channel<Packet*>>> channels;
    std::vector<std::unique_ptr<Switch>> switches;
    std::vector<std::unique_ptr<sw::PortFlowControl>> links;
    std::vector<std::unique_ptr<PacedSender>> senders;
    std::unique_ptr<CountingSink> victim, incast;

    Chain(SwitchIncast& tb, sw::LinkFc m, const SwitchParams& sp, const link::CbfcConfig& cb, const link::PfcConfig& pf,
          std::uint32_t bytes, Cycle latency, RunContext& ctx)
        : name(m == sw::LinkFc::kCbfc ? "cbfc" : m == sw::LinkFc::kPfc ? "pfc" : "none"), mode(m) {
      Clock& clock = tb.domain_->clock();
      const int k = tb.k_;
      auto channel = [&](const std::string& what) {
        channels.push_back(std::make_unique<Channel<Packet*>>(fmt::format("top.{}.{}", name, what), clock,
                                                              ChannelSpec{latency, 0, 1, 2}));
        return channels.back().get();
      };
      auto fc = [&](const std::string& what) {
        links.push_back(std::make_unique<sw::PortFlowControl>(fmt::format("top.{}.{}", name, what), mode, cb, pf,
                                                              clock.period(), latency, ctx.stats));
        clock.attach(*links.back());
        return links.back().get();
      };
      // Ports. S1: 0 sender A, 1 victim V, 2 uplink. S2: 0 from S1, 1..k senders, k+1 uplink, k+2 W. S3: 0 from S2, 1 R.
      SwitchParams p1 = sp, p2 = sp, p3 = sp;
      p1.ports = 3;
      p2.ports = k + 3;
      p3.ports = 2;
      std::vector<Channel<Packet*>*> in1(3), out1(3), in2(k + 3), out2(k + 3), in3(2), out3(2);
      in1[0] = channel("a.up");
      in1[1] = channel("v.up");
      out1[2] = in2[0] = channel("s1_s2");
      for (int j = 1; j <= k; ++j) in2[j] = channel(fmt::format("s2host{}.up", j));
      out2[k + 1] = in3[0] = channel("s2_s3");
      out2[k + 2] = channel("w.down");
      out3[1] = channel("r.down");
      auto s1 = std::make_unique<Switch>("top." + name + ".s1", p1, clock, ctx.stats, in1, out1, [](const Packet&) { return 2; });
      auto s2 = std::make_unique<Switch>(
          "top." + name + ".s2", p2, clock, ctx.stats, in2, out2,
          [k](const Packet& pk) { return pk.dst == static_cast<std::uint32_t>(kR) ? k + 1 : k + 2; }, ctx.seed);
      auto s3 = std::make_unique<Switch>("top." + name + ".s3", p3, clock, ctx.stats, in3, out3, [](const Packet&) { return 1; });
      const Cycle stop = tb.to_ / clock.period();
      const std::uint32_t width = sp.port_bytes_per_cycle();
      auto sender = [&](const std::string& who, int src, int dst, Channel<Packet*>* up, Switch& sw, int port) {
        sw::PortFlowControl* f = fc(fmt::format("s{}.in{}", &sw == s1.get() ? 1 : 2, port));
        senders.push_back(std::make_unique<PacedSender>(fmt::format("top.{}.{}", name, who), src, dst, bytes, width, stop,
                                                        *up, *f, tb.pool_));
        clock.attach(*senders.back());
        f->set_upstream(senders.back().get());
        sw.set_ingress_monitor(port, f);
        up->connect(senders.back().get(), &sw.ingress_core(port));
        senders.back()->wake_at(0);
      };
      sender("a", 0, kR, in1[0], *s1, 0);
      sender("v", 1, kW, in1[1], *s1, 1);
      for (int j = 1; j <= k; ++j) sender(fmt::format("s2host{}", j), 1 + j, kR, in2[j], *s2, j);
      // Switch to switch: the upstream egress asks, the downstream ingress reports.
      auto hop = [&](Switch& up, int up_port, Switch& down, int down_port, int down_index) {
        sw::PortFlowControl* f = fc(fmt::format("s{}.in{}", down_index, down_port));
        up.set_egress_gate(up_port, f);
        f->set_upstream(&up.egress_core(up_port));
        down.set_ingress_monitor(down_port, f);
      };
      hop(*s1, 2, *s2, 0, 2);
      hop(*s2, k + 1, *s3, 0, 3);
      out1[2]->connect(&s1->egress_core(2), &s2->ingress_core(0));
      out2[k + 1]->connect(&s2->egress_core(k + 1), &s3->ingress_core(0));
      victim = std::make_unique<CountingSink>("top." + name + ".w", *out2[k + 2], tb.pool_, tb.from_, tb.to_);
      incast = std::make_unique<CountingSink>("top." + name + ".r", *out3[1], tb.pool_, tb.from_, tb.to_);
      clock.attach(*victim);
      clock.attach(*incast);
      out2[k + 2]->connect(&s2->egress_core(k + 2), victim.get());
      out3[1]->connect(&s3->egress_core(1), incast.get());
      switches.push_back(std::move(s1));
      switches.push_back(std::move(s2));
      switches.push_back(std::move(s3));
    }
  };
  Stats& stats_;
  int k_ = 0;
  Time from_ = 0, to_ = 0;
  std::unique_ptr<ClockDomain> domain_;
  PacketPool pool_;
  std::vector<std::unique_ptr<Chain>> chains_;
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

namespace xy {
Scenario switch_allreduce_scenario() {
  return {"switch-allreduce", "N endpoints AllReduce fp32 vectors: the switch's reduce engine vs a ring over the switch",
          [](RunContext& ctx) { return std::make_unique<SwitchAllreduce>(ctx); }};
}
}  // namespace xy

namespace xy {
Scenario switch_incast_scenario() {
  return {"switch-incast", "three switches, (K+1):1 incast and a victim flow: CBFC vs PFC vs no flow control",
          [](RunContext& ctx) { return std::make_unique<SwitchIncast>(ctx); }};
}
}  // namespace xy
