// link-basic: a traffic generator and a sink with a scoreboard over one credit-controlled
// channel of configurable latency, width and clock.
//
// Cycle contract (exact, asserted by tests/hw): a flit pushed at cycle t is popped at t + latency
// unless the sink stalls or credits run out; a packet of b beats injected at cycle t with no
// stall has its head at t + latency and its tail at t + latency + b - 1. With enough credits
// (latency + credit_latency) and load 1.0 the channel carries one beat every cycle.
#include "tb/lib/scenario.hpp"

#include <fmt/format.h>

#include "kernel/channel.hpp"
#include "kernel/clock_domain.hpp"
#include "kernel/packet.hpp"
#include "tb/lib/frames.hpp"
#include "tb/lib/scoreboard.hpp"
#include "tb/lib/figure.hpp"

namespace xy {
namespace {

struct Params {
  double clock_mhz;
  Cycle latency, credit_latency;
  std::uint32_t width, credits;
  double load, stall;
  std::uint64_t packets;
  std::uint32_t min_bytes, max_bytes;
  bool payload;

  explicit Params(Config& c) {
    clock_mhz = c.real("link.clock_mhz", 1000, "MHz", 1, 100000, "clock of the link's domain");
    latency = c.integer("link.latency_cycles", 8, "cycles", 1, 1000000, "flit latency through the channel");
    width = c.integer("link.width_bytes", 32, "bytes", 1, 4096, "bytes per beat, one beat per cycle");
    credit_latency = c.integer("link.credit_latency_cycles", 1, "cycles", 1, 1000000,
                               "from a pop at the sink to the credit usable by the generator");
    credits = c.integer("link.credits", 0, "beats", 0, 10000000,
                        "sink buffer in beats; 0 = latency + credit latency (full rate)");
    if (credits == 0) credits = static_cast<std::uint32_t>(latency + credit_latency);
    load = c.real("traffic.load", 0.5, "fraction", 0.0001, 1, "offered load as a fraction of line rate (beats)");
    packets = c.integer("traffic.packets", 20000, "packets", 1, 1000000000, "packets to send");
    const FrameSizes sizes = FrameSizes::declare(c, {64, 1500}, 1, 65536, "packet");
    min_bytes = sizes.min_bytes;
    max_bytes = sizes.max_bytes;
    payload = c.flag("traffic.payload", true, "carry real random bytes and check them at the sink");
    stall = c.real("sink.stall_probability", 0, "fraction", 0, 0.99,
                   "chance per cycle that the sink does not take a beat (back-pressure)");
  }
};

class Generator : public Core {
 public:
  Generator(std::string name, const Params& p, Channel<Flit>& out, PacketPool& pool, Scoreboard& scoreboard,
            Rng rng)
      : Core(std::move(name)), p_(p), out_(out), pool_(pool), scoreboard_(scoreboard), rng_(rng) {
    const double mean_beats = (beats(p.min_bytes, p.width) + beats(p.max_bytes, p.width)) / 2.0;
    start_probability_ = 1.0 / (1.0 + mean_beats * (1.0 / p.load - 1.0));
  }

  void eval() override {
    if (now() < resume_at_) return;  // woken early by a returning credit
    if (!current_ && made_ < p_.packets) current_ = make_packet();
    if (current_ && out_.can_push()) {
      Flit f;
      f.packet = current_;
      f.index = beat_;
      f.head = beat_ == 0;
      const std::uint32_t left = current_->bytes - beat_ * p_.width;
      f.bytes = static_cast<std::uint16_t>(std::min(left, p_.width));
      f.tail = left <= p_.width;
      if (f.head) current_->injected = clock().time_of(now());
      out_.push(f);
      ++beat_;
      if (f.tail) {
        current_ = nullptr;
        beat_ = 0;
        if (made_ < p_.packets) {
          // Idle gap before the next packet: geometric, so the offered load comes out at `load`.
          const Cycle gap = rng_.geometric(start_probability_) - 1;
          resume_at_ = now() + 1 + gap;
          if (gap) wake_at(resume_at_);
        }
      }
    }
  }
  void commit() override { set_busy(current_ || (made_ < p_.packets && resume_at_ <= now() + 1)); }

  std::uint64_t made() const { return made_; }
  std::uint64_t current_id() const { return current_ ? current_->id : 0; }

 private:
  Packet* make_packet() {
    Packet* pk = pool_.acquire();
    pk->id = ++made_;
    pk->bytes = static_cast<std::uint32_t>(rng_.between(p_.min_bytes, p_.max_bytes));
    pk->phantom = !p_.payload;
    pk->created = clock().time_of(now());
    if (p_.payload) {
      pk->payload.resize(pk->bytes);
      rng_.fill(pk->payload.data(), pk->payload.size());
    }
    scoreboard_.expect(*pk);
    return pk;
  }

  const Params& p_;
  Channel<Flit>& out_;
  PacketPool& pool_;
  Scoreboard& scoreboard_;
  Rng rng_;
  double start_probability_;
  Packet* current_ = nullptr;
  std::uint32_t beat_ = 0;
  std::uint64_t made_ = 0;
  Cycle resume_at_ = 0;
};

class Sink : public Core {
 public:
  Sink(std::string name, const Params& p, Channel<Flit>& in, PacketPool& pool, Scoreboard& scoreboard,
       Rng rng, Stats& stats)
      : Core(std::move(name)), p_(p), in_(in), pool_(pool), scoreboard_(scoreboard), rng_(rng),
        packets_(stats.counter(this->name() + ".packets", "packets", "packets received whole")),
        bytes_(stats.counter(this->name() + ".bytes", "bytes", "payload bytes received")),
        beats_(stats.counter(this->name() + ".beats", "beats", "beats taken from the channel")),
        stalls_(stats.counter(this->name() + ".stall_cycles", "cycles", "cycles a ready beat was not taken")),
        latency_(stats.histogram(this->name() + ".latency", clock_period(p),
                                 "packet latency: head injected to tail received")),
        head_latency_(stats.histogram(this->name() + ".head_latency", clock_period(p),
                                      "network latency: head injected to head received")) {}

  void eval() override {
    if (!in_.can_pop()) return;
    if (p_.stall > 0 && rng_.chance(p_.stall)) {
      stalls_.add();
      return;
    }
    const Flit f = in_.pop();
    beats_.add();
    const Time t = clock().time_of(now());
    const Cycle period = clock().period();
    if (!first_beat_) first_beat_ = t;
    last_beat_ = t;
    if (f.head != (f.index == 0) || f.index != expected_beat_)
      fail(fmt::format("beat {} of packet {} arrived when beat {} was due", f.index, f.packet->id, expected_beat_));
    if (f.head) head_latency_.record((t - f.packet->injected) / period);
    ++expected_beat_;
    if (!f.tail) return;
    expected_beat_ = 0;
    Packet* pk = f.packet;
    latency_.record((t - pk->injected) / period);
    packets_.add();
    bytes_.add(pk->bytes);
    last_id_ = pk->id;
    if (std::string e = scoreboard_.receive(*pk); !e.empty()) fail(e);
    pool_.release(pk);
  }
  void commit() override { set_busy(in_.ready_by(now() + 1)); }

  std::uint64_t last_id() const { return last_id_; }
  const std::string& first_error() const { return first_error_; }
  Time first_beat() const { return first_beat_; }
  Time last_beat() const { return last_beat_; }
  void restart_window() { first_beat_ = last_beat_ = 0; }

 private:
  static Time clock_period(const Params& p) { return period_from_mhz(p.clock_mhz); }
  void fail(std::string what) {
    if (first_error_.empty())
      first_error_ = fmt::format("{} at cycle {} ({}): {}", name(), now(), format_time(clock().time_of(now())), what);
  }
  const Params& p_;
  Channel<Flit>& in_;
  PacketPool& pool_;
  Scoreboard& scoreboard_;
  Rng rng_;
  Counter &packets_, &bytes_, &beats_, &stalls_;
  LatencyHistogram &latency_, &head_latency_;
  std::uint32_t expected_beat_ = 0;
  std::uint64_t last_id_ = 0;
  Time first_beat_ = 0, last_beat_ = 0;
  std::string first_error_;
};

class LinkBasic : public Testbench {
 public:
  explicit LinkBasic(RunContext& ctx)
      : p_(ctx.config),
        domain_("link", period_from_mhz(p_.clock_mhz)),
        channel_("top.link.channel", domain_.clock(), ChannelSpec{p_.latency, p_.credits, p_.credit_latency, 2}),
        gen_("top.link.gen", p_, channel_, pool_, scoreboard_, ctx.rng("top.link.gen")),
        sink_("top.link.sink", p_, channel_, pool_, scoreboard_, ctx.rng("top.link.sink"), ctx.stats),
        stats_(ctx.stats) {
    domain_.attach(gen_);
    domain_.attach(sink_);
    channel_.connect(&gen_, &sink_);
    gen_.wake_at(0);
    ctx.reach_at_least(p_.latency * domain_.clock().period(),
                       fmt::format("the channel (link.latency_cycles = {} at link.clock_mhz = {})", p_.latency,
                                   p_.clock_mhz));

    Waves& w = ctx.waves;
    w.probe("top.link.gen.packet_id", 32, [this] { return gen_.current_id(); });
    w.probe("top.link.gen.packets_made", 32, [this] { return gen_.made(); });
    w.probe("top.link.channel.credits", 32, [this] { return channel_.credits_available(); });
    w.probe("top.link.channel.in_flight", 32, [this] { return channel_.in_flight(); });
    w.probe("top.link.sink.packets", 32, [this] { return scoreboard_.received(); });
    w.probe("top.link.sink.last_id", 32, [this] { return sink_.last_id(); });
    w.watch(domain_.clock());
  }

  bool done() const override { return scoreboard_.received() + scoreboard_.lost() >= p_.packets; }
  std::uint64_t progress() const override { return channel_.popped(); }
  Work work() const override {
    const double cycles = static_cast<double>(p_.packets) * beats(p_.min_bytes, p_.width) / p_.load;
    return {static_cast<Time>(cycles * static_cast<double>(period_from_mhz(p_.clock_mhz))),
            fmt::format("traffic.packets = {} at load {}", p_.packets, p_.load)};
  }
  double done_fraction() const override {
    return static_cast<double>(scoreboard_.received() + scoreboard_.lost()) / p_.packets;
  }
  std::string waiting_for() const override {
    if (gen_.made() < p_.packets) return "";
    return fmt::format("the last {} of {} packets in flight", p_.packets - scoreboard_.received() - scoreboard_.lost(),
                       p_.packets);
  }
  void end_warmup() override { sink_.restart_window(); }

  void check() const override {
    if (!sink_.first_error().empty()) throw CheckFailure(sink_.first_error());
    if (!done()) throw CheckFailure(fmt::format("top.link.sink: {} of {} packets received", scoreboard_.received(), p_.packets));
  }

  nlohmann::json summary() const override {
    const Time period = domain_.clock().period();
    const auto* lat = stats_.find_histogram("top.link.sink.latency");
    const auto* head = stats_.find_histogram("top.link.sink.head_latency");
    const double window_cycles = sink_.last_beat() > sink_.first_beat()
                                     ? static_cast<double>(sink_.last_beat() - sink_.first_beat()) / period + 1
                                     : 0;
    const double beats = static_cast<double>(stats_.find_counter("top.link.sink.beats")->value());
    const double bytes = static_cast<double>(stats_.find_counter("top.link.sink.bytes")->value());
    nlohmann::json s;
    s["line_rate_Gbps"] = gbps(p_.width, period);
    s["goodput_Gbps"] = window_cycles ? gbps(bytes / window_cycles, period) : 0.0;
    s["beat_utilisation"] = window_cycles ? beats / window_cycles : 0.0;
    s["packets_sent"] = gen_.made();
    s["packets_received"] = scoreboard_.received();
    s["packets_lost"] = scoreboard_.lost();
    s["packets_duplicated"] = scoreboard_.duplicated();
    s["packets_reordered"] = scoreboard_.reordered();
    s["packets_corrupted"] = scoreboard_.corrupted();
    s["configured_latency_cycles"] = p_.latency;
    s["head_latency"] = head->to_json();
    s["packet_latency"] = lat->to_json();
    return s;
  }

  std::string report() const override {
    const nlohmann::json s = summary();
    const auto& h = s["head_latency"];
    const auto& l = s["packet_latency"];
    std::string out;
    out += fmt::format("  {:<28} {:>12.3f} Gb/s\n", "line rate", s["line_rate_Gbps"].get<double>());
    out += fmt::format("  {:<28} {:>12.3f} Gb/s  (beat utilisation {:.4f})\n", "goodput",
                       s["goodput_Gbps"].get<double>(), s["beat_utilisation"].get<double>());
    out += fmt::format("  {:<28} {:>12} / {} sent  (lost {}, duplicated {}, reordered {}, corrupted {})\n",
                       "packets received", scoreboard_.received(), gen_.made(), scoreboard_.lost(), scoreboard_.duplicated(),
                       scoreboard_.reordered(), scoreboard_.corrupted());
    out += fmt::format("  {:<28} min {} p50 {} p99 {} max {} cycles (configured {})\n", "head latency",
                       figure(h["min_cycles"], 0), figure(h["p50_cycles"], 0), figure(h["p99_cycles"], 0),
                       figure(h["max_cycles"], 0), p_.latency);
    out += fmt::format("  {:<28} p50 {} p99 {} p99.9 {} max {} ns\n", "packet latency", figure(l["p50_ns"], 2),
                       figure(l["p99_ns"], 2), figure(l["p999_ns"], 2), figure(l["max_ns"], 2));
    return out;
  }

 private:
  Params p_;
  ClockDomain domain_;
  PacketPool pool_;
  Scoreboard scoreboard_;
  Channel<Flit> channel_;
  Generator gen_;
  Sink sink_;
  Stats& stats_;
};

}  // namespace

XY_TESTBENCH(LinkBasic, 100, "link-basic",
             "generator -> one channel (latency, width, clock, credits) -> sink with scoreboard")

}  // namespace xy
