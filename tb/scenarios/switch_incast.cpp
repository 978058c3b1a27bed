// switch-incast: PFC against CBFC across three switches (claim C3).
#include "tb/scenarios/switch.hpp"

#include <memory>

#include <fmt/format.h>

#include "hw/switch/port_fc.hpp"
#include "hw/switch/switch.hpp"
#include "xingyun/clock_domain.hpp"

namespace xy {
namespace {

using sw::Switch;
using sw::SwitchParams;

// switch-incast (claim C3): three switches in a chain, S1 - S2 - S3. K senders on S2 and one on
// S1 send to R on S3, so the S2 -> S3 link is the congested hop ((K+1):1); an innocent victim
// flow goes from S1 to W on S2 through the same S1 -> S2 link. Every link into a switch port runs
// the flow control under test; four variants run side by side: CBFC with credits freed when a
// packet leaves the switch, CBFC with credits freed when the shared buffer takes it, PFC, none.

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
    const struct {
      const char* name;
      sw::LinkFc mode;
      sw::CreditRelease release;
    } variants[] = {{"cbfc", sw::LinkFc::kCbfc, sw::CreditRelease::kDeparture},
                    {"cbfc-admit", sw::LinkFc::kCbfc, sw::CreditRelease::kAdmission},
                    {"pfc", sw::LinkFc::kPfc, sw::CreditRelease::kDeparture},
                    {"none", sw::LinkFc::kNone, sw::CreditRelease::kDeparture}};
    for (const auto& v : variants)
      chains_.push_back(std::make_unique<Chain>(*this, v.name, v.mode, v.release, sp, cb, pf, bytes, latency, ctx));
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
    out += fmt::format("  {:<10} {:>11} {:>11} {:>20} {:>26} {:>16}\n", "fc", "victim Gb/s", "incast Gb/s",
                       "XOFF into S1/S2/S3", "egress held S1/S2/S3", "drops S1/S2/S3");
    for (const auto& ch : chains_) {
      const auto& r = s[ch->name];
      out += fmt::format("  {:<10} {:>11.1f} {:>11.1f} {:>20} {:>26} {:>16}\n", ch->name, r["victim_Gbps"].get<double>(),
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

    Chain(SwitchIncast& tb, const char* variant, sw::LinkFc m, sw::CreditRelease release, const SwitchParams& sp,
          const link::CbfcConfig& cb, const link::PfcConfig& pf, std::uint32_t bytes, Cycle latency, RunContext& ctx)
        : name(variant), mode(m) {
      Clock& clock = tb.domain_->clock();
      const int k = tb.k_;
      auto channel = [&](const std::string& what) {
        channels.push_back(std::make_unique<Channel<Packet*>>(fmt::format("top.{}.{}", name, what), clock,
                                                              ChannelSpec{latency, 0, 1, 2}));
        return channels.back().get();
      };
      auto fc = [&](const std::string& what) {
        links.push_back(std::make_unique<sw::PortFlowControl>(fmt::format("top.{}.{}", name, what), mode, cb, pf,
                                                              clock.period(), latency, ctx.stats, release));
        clock.attach(*links.back());
        return links.back().get();
      };
      // Ports. S1: 0 sender A, 1 victim V, 2 uplink. S2: 0 from S1, 1..k senders, k+1 uplink, k+2 W. S3: 0 from S2, 1 R.
      SwitchParams base = sp;
      base.wait_when_full = mode != sw::LinkFc::kNone;  // lossless links never drop
      SwitchParams p1 = base, p2 = base, p3 = base;
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

Scenario switch_incast_scenario() {
  return {"switch-incast", "three switches, (K+1):1 incast and a victim flow: CBFC vs PFC vs no flow control",
          [](RunContext& ctx) { return std::make_unique<SwitchIncast>(ctx); }};
}

}  // namespace xy
