// switch-allreduce: in-network reduce against a ring AllReduce (claim C5).
#include "tb/lib/scenario.hpp"

#include <cmath>
#include <cstring>
#include <deque>
#include <memory>
#include <numeric>

#include <fmt/format.h>

#include "hw/switch/reduce.hpp"
#include "hw/switch/switch.hpp"
#include "kernel/clock_domain.hpp"
#include "tb/lib/memory.hpp"

namespace xy {
namespace {

using sw::Switch;
using sw::SwitchParams;

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
  std::uint64_t bytes_sent = 0, bytes_received = 0;
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
      bytes_received += p->bytes;
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
      bytes_received += p->bytes;
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
    // Each endpoint's vector, and its copies in the in-network GPU and the ring GPU.
    check_memory(3.0 * n_ * static_cast<double>(bytes),
                 fmt::format("allreduce.bytes = {} x allreduce.endpoints = {} (three copies of each vector)", bytes, n_),
                 ctx.force_memory);
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
    c.fix("switch.ports", "switch-allreduce, which sizes its switches to allreduce.endpoints (2N ports with the "
                          "reduce engine's, N for the ring)");
    // The GPUs send in lockstep, each on its own path (to its ALU port, or the next on the ring):
    // no two packets want one output, and every chunk's contributions reach the engine together,
    // in member order, and are reduced before the next chunk's arrive.
    for (const char* key : {"switch.arbiter", "switch.iterations", "switch.speedup", "switch.cell_bytes", "switch.vcs",
                            "switch.dwrr_quantum_bytes"})
      c.fix(key, "switch-allreduce, whose every GPU sends on VC 0 on a path of its own: no queue forms");
    c.fix("reduce.order", "switch-allreduce, whose GPUs' contributions to a chunk reach the engine in member order: "
                          "both orders add alike");
    c.fix("reduce.slots", "switch-allreduce, whose GPUs send in lockstep: a chunk is reduced before the next one "
                          "takes a slot, so one is enough");
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
    // Each endpoint receives what it sends: its vector (in-network), 2(N-1) segments of it (ring).
    to_receive_ = static_cast<std::uint64_t>(n_) * bytes + 2 * static_cast<std::uint64_t>(n_ - 1) * bytes;
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
  // Bytes the endpoints have received of those both AllReduces bring them.
  double done_fraction() const override {
    return static_cast<double>(total(&VectorEndpoint::bytes_received)) / static_cast<double>(to_receive_);
  }
  // Once every endpoint has sent its share (the ring's last step too), what is left is arriving.
  std::string waiting_for() const override {
    if (total(&VectorEndpoint::bytes_sent) < to_receive_) return "";
    return fmt::format("the last {} of {} bytes the endpoints receive", to_receive_ - total(&VectorEndpoint::bytes_received),
                       to_receive_);
  }
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
  std::uint64_t to_receive_ = 0;  // by all endpoints of both AllReduces

  // A byte count summed over both AllReduces' endpoints.
  std::uint64_t total(std::uint64_t VectorEndpoint::*bytes) const {
    std::uint64_t n = 0;
    for (const auto& e : sharp_) n += (*e).*bytes;
    for (const auto& e : ring_) n += (*e).*bytes;
    return n;
  }
};

}  // namespace

XY_TESTBENCH(SwitchAllreduce, 430, "switch-allreduce",
             "N endpoints AllReduce fp32 vectors: the switch's reduce engine vs a ring over the switch")

}  // namespace xy
