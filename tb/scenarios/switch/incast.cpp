// switch-incast: PFC against CBFC across three switches (claim C3).
#include "tb/lib/scenario.hpp"

#include <algorithm>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "hw/switch/switch.hpp"
#include "kernel/clock_domain.hpp"
#include "tb/lib/rig_fc.hpp"

namespace xy {
namespace {

using sw::Switch;
using sw::SwitchParams;

// switch-incast (claim C3): three switches in a chain, S1 - S2 - S3. K senders on S2 and one on
// S1 send to R on S3, so the S2 -> S3 link is the congested hop ((K+1):1); an innocent victim
// flow goes from S1 to W on S2 through the same S1 -> S2 link. Every link into a switch port runs
// the flow control under test; four variants run side by side: CBFC with credits freed when a
// packet leaves the switch, CBFC with credits freed when the shared buffer takes it, PFC, none.
// The victim rides the incast's VC (incast.victim_vc = shared) or a VC of its own (own).
//
// Back-pressure is measured the same way for every variant, at the senders: the cycles of the
// measured window in which a link's flow control held back a frame its upstream (a host or a
// switch egress) wanted to send (link::PortFc::held_cycles: CBFC credits short of the
// frame's cost, or a PFC pause). A link's hop count is its distance upstream of the congested
// port (S2's egress to S3): links into S2 are 1 hop, links into S1 are 2, the congested link
// into S3 itself is 0.

// Sends packets of `bytes` to `dst` as fast as its line and its link's flow control allow.
class PacedSender : public Core {
 public:
  PacedSender(std::string name, int src, int dst, std::uint8_t vc, std::uint32_t bytes, std::uint32_t width,
              Cycle stop_at, Channel<Packet*>& out, link::PortFc& fc, PacketPool& pool)
      : Core(std::move(name)), src_(src), dst_(dst), vc_(vc), bytes_(bytes), beats_((bytes + width - 1) / width),
        stop_at_(stop_at), out_(out), fc_(fc), pool_(pool) {}
  void eval() override {
    if (now() < line_free_ || now() >= stop_at_) return;
    Packet* p = pool_.acquire();
    p->id = ++sent_;
    p->src = static_cast<std::uint32_t>(src_);
    p->dst = static_cast<std::uint32_t>(dst_);
    p->bytes = bytes_;
    p->vc = vc_;
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
  std::uint8_t vc_;
  std::uint32_t bytes_;
  Cycle beats_, stop_at_, line_free_ = 0;
  Channel<Packet*>& out_;
  link::PortFc& fc_;
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
      if (t >= from_ && t < to_) {
        bytes_ += p->bytes;
        if (p->src >= by_src_.size()) by_src_.resize(p->src + 1, 0);
        by_src_[p->src] += p->bytes;
      }
      pool_.release(p);
    }
  }
  void commit() override { set_busy(in_.ready_by(now() + 1)); }
  double gbps() const { return static_cast<double>(bytes_) * 8 / to_ns(to_ - from_); }
  double gbps_from(std::uint32_t src) const {
    return src < by_src_.size() ? static_cast<double>(by_src_[src]) * 8 / to_ns(to_ - from_) : 0.0;
  }

 private:
  Channel<Packet*>& in_;
  PacketPool& pool_;
  Time from_, to_;
  std::uint64_t bytes_ = 0;
  std::vector<std::uint64_t> by_src_;
};

// Reads every link's held cycles at the start and at the end of the measured window.
class WindowProbe : public Core {
 public:
  WindowProbe(std::string name, std::vector<const link::PortFc*> links, Cycle from, Cycle to)
      : Core(std::move(name)), links_(std::move(links)), from_(from), to_(to) {}
  void start() { wake_at(from_); }  // once attached to the clock
  void eval() override {
    if (now() >= from_ && at_from_.empty()) {
      at_from_ = read();
      wake_at(to_);
    }
    if (now() >= to_ && at_to_.empty()) at_to_ = read();
  }
  // Held cycles of link i, VC vc, inside the window (0 before the window has closed).
  std::uint64_t held(std::size_t i, int vc) const {
    if (at_to_.empty()) return 0;
    return at_to_[i][vc] - at_from_[i][vc];
  }

 private:
  std::vector<std::vector<std::uint64_t>> read() const {
    std::vector<std::vector<std::uint64_t>> r;
    for (const auto* l : links_) {
      r.emplace_back();
      for (int vc = 0; vc < l->vcs(); ++vc) r.back().push_back(l->held_cycles(vc));
    }
    return r;
  }
  std::vector<const link::PortFc*> links_;
  Cycle from_, to_;
  std::vector<std::vector<std::uint64_t>> at_from_, at_to_;
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
    own_vc_ = c.choice("incast.victim_vc", "shared", {"shared", "own"},
                       "the victim on the incast's VC 0, or on VC 1 of its own (then every link and switch has 2 VCs, "
                       "each with the buffer below)") == "own";
    const int vcs = own_vc_ ? 2 : 1;
    link::CbfcConfig cb;
    cb.vcs = vcs;
    cb.buffer_credits.assign(vcs, static_cast<std::uint32_t>(c.integer("cbfc.buffer_credits", 512, "credits", 1, 1 << 30,
                                                                       "receive buffer per link and VC, 128-byte credits")));
    cb.validate("cbfc");
    SwitchParams sp = SwitchParams::declare(c, "switch");
    c.fix("switch.ports", "switch-incast, which sizes its three switches to incast.senders");
    for (const char* key : {"switch.arbiter", "switch.iterations"})
      c.fix(key, "switch-incast, whose flows meet at one output only (the congested hop), which takes its inputs "
                 "in turn under any arbiter");
    c.fix("switch.vcs", "switch-incast, whose VCs are incast.victim_vc's: one shared, or two with the victim on its own");
    c.fix("switch.when_full", "switch-incast, whose lossless chains (CBFC, PFC) wait and whose chain without flow "
                              "control drops");
    sp.vcs = std::max(sp.vcs, vcs);
    const link::PfcConfig pf = link::PfcConfig::declare(c, vcs, sp.port_gbps);
    domain_ = std::make_unique<ClockDomain>("switch", sp.period());
    from_ = static_cast<Time>(warmup_us * kUs);
    to_ = static_cast<Time>((warmup_us + measure_us) * kUs);
    const Time period = domain_->clock().period();
    from_cycle_ = (from_ + period - 1) / period;
    to_cycle_ = (to_ + period - 1) / period;
    const struct {
      const char* name;
      link::FcMode mode;
      link::CreditRelease release;
    } variants[] = {{"cbfc", link::FcMode::kCbfc, link::CreditRelease::kDeparture},
                    {"cbfc-admit", link::FcMode::kCbfc, link::CreditRelease::kAdmission},
                    {"pfc", link::FcMode::kPfc, link::CreditRelease::kDeparture},
                    {"none", link::FcMode::kNone, link::CreditRelease::kDeparture}};
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
  double done_fraction() const override {
    return static_cast<double>(domain_->clock().time_of(domain_->clock().now())) / (to_ + 20 * kUs);
  }
  std::string waiting_for() const override {
    return domain_->clock().time_of(domain_->clock().now()) < to_ ? "" : "the 20 us drain after the measured window";
  }
  void check() const override {
    for (const auto& ch : chains_) {
      for (const auto& s : ch->switches) s->check_buffer_accounting();
      if (ch->mode != link::FcMode::kNone) {
        for (const auto& fc : ch->links)
          if (!fc->overflow().empty()) throw CheckFailure(fc->overflow());
        for (const auto& s : ch->switches)
          if (s->drops()) throw CheckFailure(ch->name + ": a lossless chain dropped packets");
      }
    }
  }
  nlohmann::json summary() const override {
    nlohmann::json s;
    s["victim_vc"] = own_vc_ ? "own" : "shared";
    s["window_cycles"] = to_cycle_ - from_cycle_;
    for (const auto& ch : chains_) {
      nlohmann::json xoff = nlohmann::json::object(), drops = nlohmann::json::object(), peak = nlohmann::json::object(),
                     blocked = nlohmann::json::object(), held = nlohmann::json::object();
      for (int sw_index = 0; sw_index < 3; ++sw_index) {
        std::uint64_t x = 0;
        for (const auto& fc : ch->links)  // pauses are sent by the receiving end, the switch's
          if (fc->receiver().name().find(fmt::format(".s{}.", sw_index + 1)) != std::string::npos)
            x += fc->receiver().xoffs();
        xoff[fmt::format("into_s{}", sw_index + 1)] = x;
        const auto& swp = ch->switches[sw_index];
        drops[fmt::format("s{}", sw_index + 1)] = swp->drops();
        peak[fmt::format("s{}_bytes", sw_index + 1)] = swp->peak_buffer_cells() * swp->params().cell_bytes;
        blocked[fmt::format("s{}", sw_index + 1)] =
            stats_.find_counter(fmt::format("top.{}.s{}.egress.flow_control_blocked", ch->name, sw_index + 1))->value();
      }
      // Back-pressure: which senders were held, how far upstream of the congested port.
      int hops = 0;
      bool switch_held[3] = {false, false, false};
      for (std::size_t i = 0; i < ch->link_info.size(); ++i) {
        const LinkInfo& li = ch->link_info[i];
        nlohmann::json per_vc = nlohmann::json::array();
        std::uint64_t any = 0;
        for (int vc = 0; vc < ch->links[i]->sender().vcs(); ++vc) {
          per_vc.push_back(ch->probe->held(i, vc));
          any += ch->probe->held(i, vc);
        }
        held[li.key] = per_vc;
        if (any) {
          hops = std::max(hops, li.hop);
          switch_held[li.into_switch - 1] = true;
        }
      }
      std::uint64_t marked = 0;
      for (int i = 1; i <= 3; ++i)
        marked += stats_.find_counter(fmt::format("top.{}.s{}.egress.ecn_marked", ch->name, i))->value();
      s[ch->name] = {{"victim_Gbps", ch->victim->gbps()},
                     {"ecn_marked", marked},
                     {"incast_Gbps", ch->incast->gbps()},
                     {"incast_from_a_Gbps", ch->incast->gbps_from(0)},
                     {"xoff_frames", xoff},
                     {"held_cycles", held},
                     {"backpressure_hops", hops},
                     {"switches_that_held_upstream", switch_held[0] + switch_held[1] + switch_held[2]},
                     {"egress_blocked_cycles", blocked},
                     {"drops", drops},
                     {"peak_buffer", peak}};
    }
    return s;
  }
  std::string report() const override {
    const nlohmann::json s = summary();
    const auto u = [](const nlohmann::json& j) { return j.get<std::uint64_t>(); };
    std::string out = fmt::format("  {} senders on S2 + 1 (A) on S1 -> R on S3; victim V S1 -> W on S2, on {}\n", k_,
                                  own_vc_ ? "a VC of its own (VC 1)" : "the incast's VC");
    out += fmt::format("  {:<10} {:>11} {:>11} {:>9} {:>18} {:>22} {:>14} {:>26}\n", "fc", "victim Gb/s", "incast Gb/s",
                       "A Gb/s", "XOFF into S1/S2/S3", "egress held S1/S2/S3", "drops S1/S2/S3", "peak buffer S1/S2/S3 KiB");
    for (const auto& ch : chains_) {
      const auto& r = s[ch->name];
      out += fmt::format(
          "  {:<10} {:>11.1f} {:>11.1f} {:>9.1f} {:>18} {:>22} {:>14} {:>26}\n", ch->name, r["victim_Gbps"].get<double>(),
          r["incast_Gbps"].get<double>(), r["incast_from_a_Gbps"].get<double>(),
          fmt::format("{}/{}/{}", u(r["xoff_frames"]["into_s1"]), u(r["xoff_frames"]["into_s2"]),
                      u(r["xoff_frames"]["into_s3"])),
          fmt::format("{}/{}/{}", u(r["egress_blocked_cycles"]["s1"]), u(r["egress_blocked_cycles"]["s2"]),
                      u(r["egress_blocked_cycles"]["s3"])),
          fmt::format("{}/{}/{}", u(r["drops"]["s1"]), u(r["drops"]["s2"]), u(r["drops"]["s3"])),
          fmt::format("{}/{}/{}", u(r["peak_buffer"]["s1_bytes"]) / 1024, u(r["peak_buffer"]["s2_bytes"]) / 1024,
                      u(r["peak_buffer"]["s3_bytes"]) / 1024));
    }
    // Held: share of the window in which the sender of a link had a frame held by its flow control.
    const double window = static_cast<double>(to_cycle_ - from_cycle_);
    out += fmt::format("  sender held by flow control, % of the window ({} cycles); hops: how far upstream of the "
                       "congested S2 -> S3 port\n",
                       to_cycle_ - from_cycle_);
    out += fmt::format("  {:<10} {:>7} {:>7} {:>15} {:>13} {:>8} {:>5} {:>9}\n", "fc", "A->S1", "V->S1",
                       own_vc_ ? "S1->S2 vc0/vc1" : "S1->S2", "hosts->S2 max", "S2->S3", "hops", "switches");
    for (const auto& ch : chains_) {
      const auto& r = s[ch->name];
      const auto pct = [&](const std::string& key, int vc) {
        return 100.0 * static_cast<double>(u(r["held_cycles"][key][vc])) / window;
      };
      double hosts = 0;
      for (int j = 1; j <= k_; ++j) hosts = std::max(hosts, pct(fmt::format("host{}_to_s2", j), 0));
      const int vv = own_vc_ ? 1 : 0;
      const std::string s1s2 = own_vc_ ? fmt::format("{:.1f}/{:.1f}", pct("s1_to_s2", 0), pct("s1_to_s2", 1))
                                       : fmt::format("{:.1f}", pct("s1_to_s2", 0));
      out += fmt::format("  {:<10} {:>7.1f} {:>7.1f} {:>15} {:>13.1f} {:>8.1f} {:>5} {:>9}\n", ch->name, pct("a_to_s1", 0),
                         pct("v_to_s1", vv), s1s2, hosts, pct("s2_to_s3", 0), r["backpressure_hops"].get<int>(),
                         r["switches_that_held_upstream"].get<int>());
    }
    return out;
  }

 private:
  struct LinkInfo {
    std::string key;  // "a_to_s1", "v_to_s1", "s1_to_s2", "host<j>_to_s2", "s2_to_s3"
    int into_switch;  // 1..3
    int hop;          // upstream of the congested port: into S1 2, into S2 1, into S3 0
  };
  struct Chain {
    std::string name;
    link::FcMode mode;
    std::vector<std::unique_ptr<Channel<Packet*>>> channels;
    std::vector<std::unique_ptr<Switch>> switches;
    std::vector<std::unique_ptr<RigFcLink>> links;
    std::vector<LinkInfo> link_info;  // one per link, same order
    std::vector<std::unique_ptr<PacedSender>> senders;
    std::unique_ptr<CountingSink> victim, incast;
    std::unique_ptr<WindowProbe> probe;

    Chain(SwitchIncast& tb, const char* variant, link::FcMode m, link::CreditRelease release, const SwitchParams& sp,
          const link::CbfcConfig& cb, const link::PfcConfig& pf, std::uint32_t bytes, Cycle latency, RunContext& ctx)
        : name(variant), mode(m) {
      Clock& clock = tb.domain_->clock();
      const int k = tb.k_;
      auto channel = [&](const std::string& what) {
        channels.push_back(std::make_unique<Channel<Packet*>>(fmt::format("top.{}.{}", name, what), clock,
                                                              ChannelSpec{latency, 0, 1, 2}));
        return channels.back().get();
      };
      auto fc = [&](const std::string& what, const std::string& key, int into_switch) {
        links.push_back(std::make_unique<RigFcLink>(fmt::format("top.{}.{}", name, what), mode, cb, pf, clock, latency,
                                                    ctx.stats, release));
        link_info.push_back({key, into_switch, 3 - into_switch});
        return links.back().get();
      };
      // Ports. S1: 0 sender A, 1 victim V, 2 uplink. S2: 0 from S1, 1..k senders, k+1 uplink, k+2 W. S3: 0 from S2, 1 R.
      SwitchParams base = sp;
      base.wait_when_full = mode != link::FcMode::kNone;  // lossless links never drop
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
      auto sender = [&](const std::string& who, const std::string& key, int src, int dst, std::uint8_t vc,
                        Channel<Packet*>* up, Switch& sw, int port) {
        const int index = &sw == s1.get() ? 1 : 2;
        RigFcLink* f = fc(fmt::format("s{}.in{}", index, port), key, index);
        senders.push_back(std::make_unique<PacedSender>(fmt::format("top.{}.{}", name, who), src, dst, vc, bytes, width,
                                                        stop, *up, f->sender(), tb.pool_));
        clock.attach(*senders.back());
        f->wake_feeder(senders.back().get());
        sw.set_ingress_monitor(port, &f->receiver());
        up->connect(senders.back().get(), &sw.ingress_core(port));
        senders.back()->wake_at(0);
      };
      sender("a", "a_to_s1", 0, kR, 0, in1[0], *s1, 0);
      sender("v", "v_to_s1", 1, kW, tb.own_vc_ ? 1 : 0, in1[1], *s1, 1);
      for (int j = 1; j <= k; ++j)
        sender(fmt::format("s2host{}", j), fmt::format("host{}_to_s2", j), 1 + j, kR, 0, in2[j], *s2, j);
      // Switch to switch: the upstream egress asks, the downstream ingress reports.
      auto hop = [&](Switch& up, int up_port, Switch& down, int down_port, int down_index, const std::string& key) {
        RigFcLink* f = fc(fmt::format("s{}.in{}", down_index, down_port), key, down_index);
        f->wake_feeder(&up.egress_core(up_port));
        up.set_egress_gate(up_port, &f->sender());
        down.set_ingress_monitor(down_port, &f->receiver());
      };
      hop(*s1, 2, *s2, 0, 2, "s1_to_s2");
      hop(*s2, k + 1, *s3, 0, 3, "s2_to_s3");
      out1[2]->connect(&s1->egress_core(2), &s2->ingress_core(0));
      out2[k + 1]->connect(&s2->egress_core(k + 1), &s3->ingress_core(0));
      victim = std::make_unique<CountingSink>("top." + name + ".w", *out2[k + 2], tb.pool_, tb.from_, tb.to_);
      incast = std::make_unique<CountingSink>("top." + name + ".r", *out3[1], tb.pool_, tb.from_, tb.to_);
      clock.attach(*victim);
      clock.attach(*incast);
      out2[k + 2]->connect(&s2->egress_core(k + 2), victim.get());
      out3[1]->connect(&s3->egress_core(1), incast.get());
      std::vector<const link::PortFc*> watched;
      for (const auto& l : links) watched.push_back(&l->sender());
      probe = std::make_unique<WindowProbe>("top." + name + ".probe", std::move(watched), tb.from_cycle_, tb.to_cycle_);
      clock.attach(*probe);
      probe->start();
      switches.push_back(std::move(s1));
      switches.push_back(std::move(s2));
      switches.push_back(std::move(s3));
    }
  };
  Stats& stats_;
  int k_ = 0;
  bool own_vc_ = false;
  Time from_ = 0, to_ = 0;
  Cycle from_cycle_ = 0, to_cycle_ = 0;
  std::unique_ptr<ClockDomain> domain_;
  PacketPool pool_;
  std::vector<std::unique_ptr<Chain>> chains_;
};

}  // namespace

XY_TESTBENCH(SwitchIncast, 440, "switch-incast",
             "three switches, (K+1):1 incast and a victim flow: CBFC vs PFC vs no flow control")

}  // namespace xy
