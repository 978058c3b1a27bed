// switch-allreduce: in-network reduce against a ring AllReduce (claim C5).
#include "tb/lib/scenario.hpp"

#include <cmath>
#include <cstring>
#include <deque>
#include <memory>
#include <numeric>

#include <fmt/format.h>

#include "hw/switch/reduce.hpp"
#include "hw/switch/reduce_engine.hpp"
#include "hw/switch/switch.hpp"
#include "kernel/clock_domain.hpp"
#include "tb/lib/memory.hpp"

namespace xy {
namespace {

using sw::Switch;
using sw::SwitchParams;

// switch-allreduce (claim C5): N endpoints, in G groups that each AllReduce fp32 vectors, three
// ways: with the switch's reduce engine (one ALU port per endpoint: contributions to port N+i,
// results back from it; the engine's ALUs and slots shared by every group), as a ring over a
// switch of N ports, and by recursive halving and doubling (Rabenseifner) over another. The GPUs'
// own additions (ring and halving-doubling) cost no time: a GPU adds far faster than its line.

// A packet of an endpoint's vector: payload = the bytes; id = its index within the send + 1, psn
// = the step it belongs to (the in-network chunk number is id - 1).
Packet* vector_packet(PacketPool& pool, int src, int dst, std::uint64_t index, std::uint32_t step,
                      const std::uint8_t* bytes, std::uint32_t size, Time now) {
  Packet* p = pool.acquire();
  p->id = index + 1;
  p->psn = step;
  p->src = static_cast<std::uint32_t>(src);
  p->dst = static_cast<std::uint32_t>(dst);
  p->bytes = size;
  p->phantom = false;
  p->payload.assign(bytes, bytes + size);
  p->created = now;
  return p;
}

// An endpoint that starts at `start_at` (skew), sends its vector in packets paced by its line,
// and collects what comes back.
class VectorEndpoint : public Core {
 public:
  VectorEndpoint(std::string name, int index, Cycle start_at, std::uint32_t width, std::uint32_t packet_bytes,
                 Channel<Packet*>& out, Channel<Packet*>& in, PacketPool& pool)
      : Core(std::move(name)), index_(index), start_at_(start_at), width_(width), packet_bytes_(packet_bytes),
        out_(out), in_(in), pool_(pool) {}
  std::vector<std::uint8_t> data;  // this endpoint's vector; the result when done
  std::uint64_t bytes_sent = 0, bytes_received = 0;
  Time done_at = 0;
  Cycle start_at() const { return start_at_; }

 protected:
  // Queue `size` bytes at `offset` of `data` as packets to `dst`, tagged with `step`.
  void queue_send(int dst, std::uint64_t offset, std::uint64_t size, std::uint32_t step) {
    std::uint64_t index = 0;
    for (std::uint64_t at = 0; at < size; at += packet_bytes_, ++index)
      to_send_.push_back({dst, offset + at, static_cast<std::uint32_t>(std::min<std::uint64_t>(packet_bytes_, size - at)),
                          index, step});
  }
  // Sends the next queued packet if the line is free and `may_send` allows it.
  void send_some(bool may_send = true) {
    if (to_send_.empty() || now() < line_free_ || !may_send) return;
    const Send s = to_send_.front();
    to_send_.pop_front();
    out_.push(vector_packet(pool_, index_, s.dst, s.index, s.step, data.data() + s.offset, s.size, clock().time_of(now())));
    bytes_sent += s.size;
    line_free_ = now() + (s.size + width_ - 1) / width_;
  }
  bool sending() const { return !to_send_.empty(); }
  // `may_send`: whether what is queued may go (else an arrival wakes the endpoint).
  void keep_going(bool may_send = true) {
    if (sending() && may_send) wake_at(std::max(line_free_, now() + 1));
    set_busy(in_.ready_by(now() + 1));
  }
  int index_;
  Cycle start_at_;
  std::uint32_t width_, packet_bytes_;
  Channel<Packet*>& out_;
  Channel<Packet*>& in_;
  PacketPool& pool_;

 private:
  struct Send {
    int dst;
    std::uint64_t offset;
    std::uint32_t size;
    std::uint64_t index;
    std::uint32_t step;
  };
  std::deque<Send> to_send_;
  Cycle line_free_ = 0;
};

// In-network: send everything to my ALU port, at most `window` chunks without their result, and
// take the reduced chunks back.
class SharpEndpoint : public VectorEndpoint {
 public:
  SharpEndpoint(std::string name, int index, Cycle start_at, int alu_port, std::uint64_t window, std::uint32_t width,
                std::uint32_t packet_bytes, Channel<Packet*>& out, Channel<Packet*>& in, PacketPool& pool)
      : VectorEndpoint(std::move(name), index, start_at, width, packet_bytes, out, in, pool),
        alu_port_(alu_port), window_(window) {}
  void eval() override {
    if (!started_ && now() >= start_at_) {
      started_ = true;
      queue_send(alu_port_, 0, data.size(), 0);
      chunks_ = (data.size() + packet_bytes_ - 1) / packet_bytes_;
    }
    while (in_.can_pop()) {
      Packet* p = in_.pop();
      std::copy(p->payload.begin(), p->payload.end(), data.begin() + static_cast<std::ptrdiff_t>((p->id - 1) * packet_bytes_));
      bytes_received += p->bytes;
      if (++received_ == chunks_) done_at = clock().time_of(now());
      pool_.release(p);
    }
    send_some(window_open());
  }
  void commit() override { keep_going(window_open()); }  // a full window reopens with a result's arrival
  bool done() const { return started_ && received_ == chunks_; }

 private:
  bool window_open() const { return bytes_sent / packet_bytes_ - received_ < window_; }  // whole packets: allreduce.bytes checks it
  int alu_port_;
  std::uint64_t window_;
  bool started_ = false;
  std::uint64_t chunks_ = 0, received_ = 0;
};

// One step of an AllReduce schedule: send `send_bytes` at `send_at` to `to`, receive `recv_bytes`
// into `recv_at` (adding, or copying a reduced block).
struct Step {
  int to;
  std::uint64_t send_at, send_bytes, recv_at, recv_bytes;
  bool add;
};

// Ring over n endpoints (local index r): n-1 reduce-scatter steps, then n-1 all-gather steps, one
// segment per step to the next endpoint.
std::vector<Step> ring_schedule(int r, int n, int base, std::uint64_t bytes) {
  const std::uint64_t seg = bytes / static_cast<std::uint64_t>(n);
  auto at = [&](int s) { return static_cast<std::uint64_t>(((s % n) + n) % n) * seg; };
  std::vector<Step> steps;
  const int next = base + (r + 1) % n;
  for (int t = 0; t < n - 1; ++t) steps.push_back({next, at(r - t), seg, at(r - t - 1), seg, true});
  for (int t = 0; t < n - 1; ++t) steps.push_back({next, at(r + 1 - t), seg, at(r - t), seg, false});
  return steps;
}

// Recursive halving (reduce-scatter) then doubling (all-gather) over n = 2^k endpoints: at each
// halving step the partner across the current distance gets the half of the current range this
// endpoint does not keep; the doubling steps retrace them, exchanging the reduced blocks.
std::vector<Step> halving_doubling_schedule(int r, int n, int base, std::uint64_t bytes) {
  std::vector<Step> steps;
  std::uint64_t lo = 0, len = bytes;
  for (int d = n / 2; d >= 1; d /= 2) {
    const std::uint64_t half = len / 2;
    const bool lower = (r & d) == 0;
    const std::uint64_t keep = lower ? lo : lo + half, give = lower ? lo + half : lo;
    steps.push_back({base + (r ^ d), give, half, keep, half, true});
    lo = keep;
    len = half;
  }
  for (int d = 1; d < n; d *= 2) {
    const bool lower = (r & d) == 0;
    const std::uint64_t theirs = lower ? lo + len : lo - len;
    steps.push_back({base + (r ^ d), lo, len, theirs, len, false});
    lo = std::min(lo, theirs);
    len *= 2;
  }
  return steps;
}

// An endpoint that runs a schedule: a step's send waits for the previous step's data to have
// arrived (it sends what was just reduced); packets of a later step, from a partner ahead of it,
// wait until it gets there, and everything waits until the endpoint has started.
class StepEndpoint : public VectorEndpoint {
 public:
  StepEndpoint(std::string name, int index, Cycle start_at, std::vector<Step> steps, std::uint32_t width,
               std::uint32_t packet_bytes, Channel<Packet*>& out, Channel<Packet*>& in, PacketPool& pool)
      : VectorEndpoint(std::move(name), index, start_at, width, packet_bytes, out, in, pool), steps_(std::move(steps)) {}
  void eval() override {
    if (!started_ && now() >= start_at_) {
      started_ = true;
      begin_step();
      advance();
    }
    while (in_.can_pop()) {
      Packet* p = in_.pop();
      if (started_ && p->psn == step_) {
        absorb(p);
        advance();
      } else {
        early_.push_back(p);
      }
    }
    send_some();
  }
  void commit() override { keep_going(); }
  bool done() const { return step_ == steps_.size(); }

 private:
  void absorb(Packet* p) {
    const Step& s = steps_[step_];
    std::uint8_t* at = data.data() + s.recv_at + (p->id - 1) * packet_bytes_;
    if (s.add) {
      for (std::uint32_t e = 0; e < p->bytes; e += 4) {
        float mine, theirs;
        std::memcpy(&mine, at + e, 4);
        std::memcpy(&theirs, p->payload.data() + e, 4);
        mine += theirs;
        std::memcpy(at + e, &mine, 4);
      }
    } else {
      std::copy(p->payload.begin(), p->payload.end(), at);
    }
    received_in_step_ += p->bytes;
    bytes_received += p->bytes;
    pool_.release(p);
  }
  // Moves on while the current step's data is all in.
  void advance() {
    while (step_ < steps_.size() && received_in_step_ == steps_[step_].recv_bytes) {
      received_in_step_ = 0;
      if (++step_ == steps_.size()) {
        done_at = clock().time_of(now());
        return;
      }
      begin_step();
    }
  }
  void begin_step() {
    const Step& s = steps_[step_];
    queue_send(s.to, s.send_at, s.send_bytes, static_cast<std::uint32_t>(step_));
    for (auto it = early_.begin(); it != early_.end();) {
      if ((*it)->psn == step_) {
        absorb(*it);
        it = early_.erase(it);
      } else {
        ++it;
      }
    }
  }
  std::vector<Step> steps_;
  bool started_ = false;
  std::size_t step_ = 0;
  std::uint64_t received_in_step_ = 0;
  std::deque<Packet*> early_;
};

class SwitchAllreduce : public Testbench {
 public:
  explicit SwitchAllreduce(RunContext& ctx) : stats_(ctx.stats) {
    Config& c = ctx.config;
    n_ = static_cast<int>(c.integer("allreduce.endpoints", 8, "endpoints", 2, 64, "GPUs taking part"));
    groups_ = static_cast<int>(c.integer("allreduce.groups", 1, "groups", 1, 32,
                                         "AllReduces at once, each over endpoints / groups GPUs, sharing the reduce engine"));
    if (n_ % groups_ || n_ / groups_ < 2)
      throw ConfigError(fmt::format("allreduce.groups = {}: must divide allreduce.endpoints = {} into groups of at least "
                                    "2 GPUs", groups_, n_));
    per_group_ = n_ / groups_;
    bytes_ = static_cast<std::uint64_t>(c.integer("allreduce.bytes", 262144, "bytes", 4, 1ll << 32,
                                                   "vector per endpoint (fp32)"));
    packet_bytes_ = static_cast<std::uint32_t>(c.integer("allreduce.packet_bytes", 4096, "bytes", 4, 9216, "payload per packet"));
    if (bytes_ % (4ull * n_ * packet_bytes_ / std::gcd<std::uint64_t>(4ull * n_, packet_bytes_)) != 0 || packet_bytes_ % 4)
      throw ConfigError(fmt::format("allreduce.bytes = {}: must split into {} segments of whole {}-byte packets of fp32 "
                                    "(a multiple of endpoints x packet_bytes)", bytes_, n_, packet_bytes_));
    const double skew_ns = c.real("allreduce.skew_ns", 0, "ns", 0, 1e6,
                                  "each GPU starts after a delay drawn uniformly from 0 to this (not synchronised)");
    const auto window = static_cast<std::uint64_t>(c.integer("allreduce.window", 64, "chunks", 1, 1 << 20,
                                                             "chunks a GPU has sent in-network without their result yet"));
    // Each endpoint's vector, and its copies in the in-network GPU, the ring GPU and the halving-doubling GPU.
    check_memory(4.0 * n_ * static_cast<double>(bytes_),
                 fmt::format("allreduce.bytes = {} x allreduce.endpoints = {} (four copies of each vector)", bytes_, n_),
                 ctx.force_memory);
    sw::ReduceConfig rc;
    rc.type = sw::ElemType::kFp32;
    rc.accumulate = sw::parse_accum_width(c.choice("reduce.accumulate", "32", {"32", "64"}, "accumulator width (fp32 or fp64)"));
    rc.order = sw::parse_reduce_order(c.choice("reduce.order", "arrival", {"arrival", "member"},
                                               "add in arrival order, or in member order (independent of arrival)"));
    rc.slots = static_cast<int>(c.integer("reduce.slots", 64, "slots", 1, 65536, "aggregation slots"));
    rc.lanes = static_cast<int>(c.integer("reduce.lanes", 16, "elements", 1, 4096, "elements an ALU adds per cycle"));
    const int alus = static_cast<int>(c.integer("reduce.alus", 64, "ALUs", 1, 4096,
                                                "ALUs of the reduce engine, shared by all its ports and groups"));
    rc.vector_bytes = packet_bytes_;
    rc.validate("reduce");
    SwitchParams p = SwitchParams::declare(c, "switch");
    c.fix("switch.ports", "switch-allreduce, which sizes its switches to allreduce.endpoints (2N ports with the "
                          "reduce engine's, N for the ring and for halving-doubling)");
    for (const char* key : {"switch.arbiter", "switch.iterations", "switch.speedup", "switch.cell_bytes", "switch.vcs",
                            "switch.dwrr_quantum_bytes"})
      c.fix(key, "switch-allreduce, which compares AllReduce algorithms on one switch design, its defaults (every "
                 "GPU sends on VC 0)");
    domain_ = std::make_unique<ClockDomain>("switch", p.period());
    Clock& clock = domain_->clock();
    period_ = p.period();
    line_bytes_per_cycle_ = p.port_bytes_per_cycle();
    alus_ = alus;
    lanes_ = rc.lanes;
    // The channels into the ALU ports are their input queues; the GPUs' window bounds them.
    auto channel = [&](const std::string& name) {
      channels_.push_back(std::make_unique<Channel<Packet*>>(name, clock, ChannelSpec{1, 0, 1, 2}));
      return channels_.back().get();
    };
    std::vector<std::vector<std::uint8_t>> vectors(n_);
    std::vector<Cycle> start(n_);
    for (int i = 0; i < n_; ++i) {
      Rng rng = ctx.rng(fmt::format("top.gpu{}.data", i));
      vectors[i].resize(bytes_);
      for (std::uint64_t e = 0; e < bytes_ / 4; ++e) {
        const float v = static_cast<float>(rng.uniform() * 2 - 1);
        std::memcpy(vectors[i].data() + 4 * e, &v, 4);
      }
      Rng when = ctx.rng(fmt::format("top.gpu{}.start", i));
      start[i] = skew_ns > 0 ? from_ns(when.uniform() * skew_ns) / period_ : 0;
    }
    // In-network: hosts on ports 0..N-1, ALU ports N..2N-1 (the engine's port i serves host i).
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
      engine_ = std::make_unique<sw::ReduceEngine>("top.innet.reduce", rc, alus, alu_in, alu_out, pool_);
      for (int g = 0; g < groups_; ++g) {
        std::vector<int> ports;
        for (int m = 0; m < per_group_; ++m) ports.push_back(g * per_group_ + m);
        engine_->add_group(static_cast<std::uint32_t>(g), ports);
      }
      clock.attach(*engine_);
      for (int i = 0; i < n_; ++i) {
        sharp_.push_back(std::make_unique<SharpEndpoint>(fmt::format("top.innet.gpu{}", i), i, start[i], n_ + i, window,
                                                         line_bytes_per_cycle_, packet_bytes_, *in[i], *out[i], pool_));
        sharp_.back()->data = vectors[i];
        clock.attach(*sharp_.back());
        in[i]->connect(sharp_.back().get(), &innet_->ingress_core(i));
        out[i]->connect(&innet_->egress_core(i), sharp_.back().get());
        alu_in[i]->connect(&innet_->egress_core(n_ + i), engine_.get());
        alu_out[i]->connect(engine_.get(), &innet_->ingress_core(n_ + i));
        sharp_.back()->wake_at(start[i]);
      }
    }
    // The hosts' own algorithms, each over a switch of N ports: the ring and, for groups of a
    // power of two, halving-doubling.
    const bool power_of_two = (per_group_ & (per_group_ - 1)) == 0;
    auto hosts = [&](const std::string& name, auto schedule, std::unique_ptr<Switch>& sw,
                     std::vector<std::unique_ptr<StepEndpoint>>& endpoints) {
      SwitchParams q = p;
      q.ports = n_;
      std::vector<Channel<Packet*>*> in(q.ports), out(q.ports);
      for (int i = 0; i < n_; ++i) {
        in[i] = channel(fmt::format("top.{}.up{}", name, i));
        out[i] = channel(fmt::format("top.{}.down{}", name, i));
      }
      sw = std::make_unique<Switch>(fmt::format("top.{}.sw", name), q, clock, stats_, in, out,
                                    [](const Packet& pk) { return static_cast<int>(pk.dst); });
      for (int i = 0; i < n_; ++i) {
        const int base = i / per_group_ * per_group_;
        endpoints.push_back(std::make_unique<StepEndpoint>(fmt::format("top.{}.gpu{}", name, i), i, start[i],
                                                           schedule(i - base, per_group_, base, bytes_),
                                                           line_bytes_per_cycle_, packet_bytes_, *in[i], *out[i], pool_));
        endpoints.back()->data = vectors[i];
        clock.attach(*endpoints.back());
        in[i]->connect(endpoints.back().get(), &sw->ingress_core(i));
        out[i]->connect(&sw->egress_core(i), endpoints.back().get());
        endpoints.back()->wake_at(start[i]);
      }
    };
    hosts("ring", ring_schedule, ring_sw_, ring_);
    if (power_of_two) hosts("hd", halving_doubling_schedule, hd_sw_, hd_);
    // Each endpoint receives its vector (in-network), 2(n-1)/n of it (ring, halving-doubling).
    const std::uint64_t host_share = 2 * static_cast<std::uint64_t>(per_group_ - 1) * bytes_ / per_group_;
    to_receive_ = static_cast<std::uint64_t>(n_) * (bytes_ + host_share * (power_of_two ? 2 : 1));
    // The exact sum of each group, for reference.
    reference_.assign(groups_, std::vector<double>(bytes_ / 4, 0.0));
    for (int i = 0; i < n_; ++i)
      for (std::uint64_t e = 0; e < bytes_ / 4; ++e) {
        float x;
        std::memcpy(&x, vectors[i].data() + 4 * e, 4);
        reference_[i / per_group_][e] += x;
      }
  }

  bool done() const override {
    bool all = true;
    each_endpoint([&](const VectorEndpoint& e, bool done) { all = all && done; });
    return all;
  }
  std::uint64_t progress() const override {
    return innet_->forwarded() + ring_sw_->forwarded() + (hd_sw_ ? hd_sw_->forwarded() : 0);
  }
  // Bytes the endpoints have received of those the AllReduces bring them.
  double done_fraction() const override {
    return static_cast<double>(total(&VectorEndpoint::bytes_received)) / static_cast<double>(to_receive_);
  }
  // Once every endpoint has sent its share, what is left is arriving.
  std::string waiting_for() const override {
    if (total(&VectorEndpoint::bytes_sent) < to_receive_) return "";
    return fmt::format("the last {} of {} bytes the endpoints receive", to_receive_ - total(&VectorEndpoint::bytes_received),
                       to_receive_);
  }
  void check() const override {
    innet_->check_buffer_accounting();
    ring_sw_->check_buffer_accounting();
    if (hd_sw_) hd_sw_->check_buffer_accounting();
    auto same_in_groups = [this](const auto& endpoints, const char* what) {
      for (int i = 0; i < static_cast<int>(endpoints.size()); ++i)
        if (i % per_group_ && endpoints[i]->data != endpoints[i - i % per_group_]->data)
          throw CheckFailure(fmt::format("{} AllReduce: endpoint {} holds another result than endpoint {} of its group",
                                         what, i, i - i % per_group_));
    };
    same_in_groups(sharp_, "in-network");
    same_in_groups(ring_, "ring");
    same_in_groups(hd_, "halving-doubling");
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
    // The worst deviation from the exact sum over every endpoint (each holds its group's).
    auto max_error = [this](const auto& endpoints) {
      double worst = 0;
      for (int i = 0; i < n_; i += per_group_) {
        const auto& result = endpoints[i]->data;
        const auto& exact = reference_[i / per_group_];
        for (std::size_t e = 0; e < exact.size(); ++e) {
          float x;
          std::memcpy(&x, result.data() + 4 * e, 4);
          worst = std::max(worst, std::abs(static_cast<double>(x) - exact[e]));
        }
      }
      return worst;
    };
    auto algorithm = [&](const auto& endpoints) {
      return nlohmann::json{{"time_us", finish_us(endpoints)},
                            {"endpoint_bytes_sent", host_bytes(endpoints)},
                            {"max_abs_error_vs_exact", max_error(endpoints)},
                            {"identical_at_every_endpoint", true}};
    };
    const double innet = finish_us(sharp_), ring = finish_us(ring_);
    const double us_per_cycle = to_us(period_);
    nlohmann::json s;
    s["endpoints"] = n_;
    s["groups"] = groups_;
    s["vector_bytes"] = bytes_;
    Cycle last_start = 0;
    for (const auto& e : sharp_) last_start = std::max(last_start, e->start_at());
    s["last_start_us"] = static_cast<double>(last_start) * us_per_cycle;
    s["in_network"] = algorithm(sharp_);
    const sw::ReduceEngine& engine = *engine_;
    s["in_network"]["peak_slots"] = engine.peak_slots();
    s["in_network"]["slot_wait_cycles"] = engine.slot_wait_cycles();
    s["in_network"]["alu_wait_cycles"] = engine.alu_wait_cycles();
    s["in_network"]["alu_utilisation"] =
        static_cast<double>(engine.alu_busy_cycles()) / (static_cast<double>(engine.alus()) * innet / us_per_cycle);
    // Derived: what no schedule can beat. In-network, each GPU's line carries its vector once
    // each way, and the ALUs make one pass per contribution: N x elements / (alus x lanes).
    const double elements = static_cast<double>(bytes_) / 4;
    s["in_network"]["line_bound_us"] = static_cast<double>(bytes_) / line_bytes_per_cycle_ * us_per_cycle;
    s["in_network"]["alu_bound_us"] = n_ * elements / (static_cast<double>(alus_) * lanes_) * us_per_cycle;
    s["ring"] = algorithm(ring_);
    // The hosts' algorithms send 2(n-1)/n of the vector each.
    const double host_bound_us = 2.0 * (per_group_ - 1) / per_group_ * static_cast<double>(bytes_) /
                                 line_bytes_per_cycle_ * us_per_cycle;
    s["ring"]["line_bound_us"] = host_bound_us;
    double best = ring;
    if (!hd_.empty()) {
      s["halving_doubling"] = algorithm(hd_);
      s["halving_doubling"]["line_bound_us"] = host_bound_us;
      best = std::min(best, finish_us(hd_));
      s["speedup_vs_halving_doubling"] = finish_us(hd_) / innet;
    } else {
      s["halving_doubling"] = nullptr;  // not run: groups of a power of two only
    }
    s["speedup"] = ring / innet;
    s["speedup_vs_best_baseline"] = best / innet;
    s["results_equal_bit_for_bit"] = sharp_[0]->data == ring_[0]->data;
    return s;
  }
  std::string report() const override {
    const nlohmann::json s = summary();
    std::string out = fmt::format("  {} endpoints in {} group(s), {} bytes each (fp32)\n", n_, groups_,
                                  s["vector_bytes"].get<std::uint64_t>());
    for (const char* v : {"in_network", "ring", "halving_doubling"}) {
      if (s[v].is_null()) continue;
      out += fmt::format("  {:<16} {:>10.2f} us, {:>12} bytes sent by endpoints, max |error| {:.3g}\n", v,
                         s[v]["time_us"].get<double>(), s[v]["endpoint_bytes_sent"].get<std::uint64_t>(),
                         s[v]["max_abs_error_vs_exact"].get<double>());
    }
    out += fmt::format("  reduce engine: {:.0f} % of its ALUs busy, bounds {:.2f} us (ALUs), {:.2f} us (line)\n",
                       100 * s["in_network"]["alu_utilisation"].get<double>(), s["in_network"]["alu_bound_us"].get<double>(),
                       s["in_network"]["line_bound_us"].get<double>());
    out += fmt::format("  in-network is {:.2f}x faster than the ring, {:.2f}x than the best baseline; results equal "
                       "bit for bit: {}\n",
                       s["speedup"].get<double>(), s["speedup_vs_best_baseline"].get<double>(),
                       s["results_equal_bit_for_bit"].get<bool>() ? "yes" : "no (different summation orders)");
    return out;
  }

 private:
  Stats& stats_;
  int n_ = 0, groups_ = 1, per_group_ = 0, alus_ = 0, lanes_ = 0;
  std::uint64_t bytes_ = 0;
  std::uint32_t packet_bytes_ = 0, line_bytes_per_cycle_ = 0;
  Time period_ = 0;
  std::unique_ptr<ClockDomain> domain_;
  PacketPool pool_;
  std::vector<std::unique_ptr<Channel<Packet*>>> channels_;
  std::unique_ptr<Switch> innet_, ring_sw_, hd_sw_;
  std::unique_ptr<sw::ReduceEngine> engine_;
  std::vector<std::unique_ptr<SharpEndpoint>> sharp_;
  std::vector<std::unique_ptr<StepEndpoint>> ring_, hd_;
  std::vector<std::vector<double>> reference_;  // by group
  std::uint64_t to_receive_ = 0;  // by all endpoints of every AllReduce

  template <class F>
  void each_endpoint(F f) const {
    for (const auto& e : sharp_) f(*e, e->done());
    for (const auto& e : ring_) f(*e, e->done());
    for (const auto& e : hd_) f(*e, e->done());
  }
  // A byte count summed over every AllReduce's endpoints.
  std::uint64_t total(std::uint64_t VectorEndpoint::*bytes) const {
    std::uint64_t n = 0;
    each_endpoint([&](const VectorEndpoint& e, bool) { n += e.*bytes; });
    return n;
  }
};

}  // namespace

XY_TESTBENCH(SwitchAllreduce, 430, "switch-allreduce",
             "N endpoints AllReduce fp32 vectors: the switch's reduce engine against a ring and halving-doubling")

}  // namespace xy
