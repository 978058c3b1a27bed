// olink-latency (claim C1): GPU 0 loads 64 B from GPU 1's memory through one switch, one load at
// a time, for four fabrics side by side: OLink with RS(544,514), OLink with the light FEC, an
// NVLink-class fabric and a PCIe-switch fabric. Each load's latency is measured through the
// TLM socket and broken down by stage; the stages add up to the measurement exactly.
//
// The two comparators are presets from public figures (docs/olink.md): NVLink-class gives each
// GPU 450 GB/s each way (3600 Gb/s; NVLink 4's 900 GB/s counts both directions). In the PCIe
// fabric every GPU has its own Gen5 x16 port (512 Gb/s, 64 GB/s each way) on a PCIe switch, but
// the switch does not join the GPUs itself: every frame goes up its one uplink (Gen5 x16 too) to
// the root complex and back down (claim C11's mechanism: the GPUs behind a PCIe switch share its
// uplink). In the cycle-level fabric that is the switch's two directions as two switches: the up
// one takes every GPU's frames to its one uplink port, which a channel of `uplink_ns` (the links
// there and back and the root's turnaround) brings to the down one, which sends them to their
// GPUs. All of the GPUs' traffic crosses that one 512 Gb/s port, each direction of the uplink
// carrying all of it once, so in an all-to-all N GPUs get about 1/N of it each. The fast fabric
// books the same uplink on one calendar (tlm/olink/fast_fabric.hpp).
#include "tb/scenarios/olink.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <numeric>

#include <fmt/format.h>

#include "sys/lingyun/fabric.hpp"
#include "hw/switch/switch.hpp"
#include "tb/lib/gpu.hpp"
#include "tb/lib/figure.hpp"
#include "tlm/olink/endpoint.hpp"
#include "tlm/olink/fast_fabric.hpp"
#include "kernel/clock_domain.hpp"

namespace xy {
namespace {

using olink::Access;
using olink::EndpointParams;
using olink::GpuInitiator;
using olink::OlinkEndpoint;

// The stages of one fabric, in ns, and a GPU's bandwidth into it (estimates from public figures:
// see docs/olink.md). Each clock makes a 64-byte datapath, so that frames use whole beats with
// little padding (the switch forwards whole beats).
struct Preset {
  const char* name;
  double clock_mhz;
  double gpu_gbps;         // one GPU's injection bandwidth each way (its ports together)
  double egress, ingress;  // the GPU's NIC: packetise, depacketise
  double link;             // one link: SerDes, FEC, MAC/LLR at both ends, and the cable
  double switch_core;      // the switch from parser to egress (its ports' PHY is in `link`)
  double memory;           // HBM at the target
  double uplink;           // 0: the switch joins the GPUs; > 0: every frame goes up one uplink all
                           // GPUs share and back (ns: the links there and back, the root's turnaround)
};
// NVLink-class: 450 GB/s each way per GPU (NVLink 4: 18 links of 25 GB/s each way; the 900 GB/s
// quoted is both ways), 64 bytes a cycle at 7031.25 MHz. PCIe: a Gen5 x16 port per GPU, 32 GT/s
// x 16 = 512 Gb/s each way (64 GB/s; 63 after 128b/130b, not modelled: the frames here are
// OLink's), and the switch's one Gen5 x16 uplink, 60 ns of link each way and 150 ns of root
// complex turnaround.
constexpr Preset kPresets[] = {
    {"olink-rs544", 6250, 3200, 100, 100, 128, 68, 200, 0},
    {"olink-rs272", 6250, 3200, 100, 100, 97, 68, 200, 0},
    {"nvlink-class", 7031.25, 3600, 20, 20, 30, 40, 120, 0},
    {"pcie-switch", 1000, 512, 300, 300, 60, 150, 200, 60 + 150 + 60},
};

// A preset's stages in cycles of its clock, as configured (olink.<preset>.*), for N GPUs.
struct Stages {
  std::string name;
  Time period;
  Cycle egress, ingress, link, memory;
  Cycle uplink = 0;  // 0: no shared uplink; else the uplink from the switch and back, cycles
  std::uint32_t width;
  sw::SwitchParams sp;

  Cycle switch_cycles() const {
    const auto& l = sp.lat;
    return l.rx_mac + l.parse + l.lookup + l.enqueue + l.arbiter + l.crossbar + l.egress + l.tx_mac;
  }
  // The fast fabric with the same stages, for `gpus` GPUs; `data` false: timing only.
  olink::FastParams fast(std::uint32_t gpus, bool data) const {
    olink::FastParams fp;
    fp.period = period;
    fp.link = link;
    fp.switch_core = switch_cycles();
    fp.switch_width = width;
    fp.uplink = uplink;
    fp.data = data;
    fp.endpoint.gpus = gpus;
    fp.endpoint.width = width;
    fp.endpoint.egress = egress;
    fp.endpoint.ingress = ingress;
    fp.endpoint.memory = memory;
    fp.endpoint.memory_width = width;
    return fp;
  }
};

// One cycle-level fabric of N GPUs on one switch. With a shared uplink the switch is two: `sw`
// takes the GPUs' frames up to its uplink port, `down` brings them from the uplink to the GPUs.
struct Fabric : Stages {
  std::unique_ptr<ClockDomain> domain;
  std::vector<std::unique_ptr<Channel<Packet*>>> channels;
  std::unique_ptr<sw::Switch> sw, down;
  std::vector<std::unique_ptr<OlinkEndpoint>> endpoints;

  void check_buffer_accounting() const {
    sw->check_buffer_accounting();
    if (down) down->check_buffer_accounting();
  }
};

// Declares a preset's parameters (olink.<preset>.*) and returns its stages for `gpus` GPUs.
Stages declare_stages(const Preset& pr, int gpus, const sw::SwitchParams& base, Config& c) {
  const std::string k = std::string("olink.") + pr.name + ".";
  Stages f;
  f.name = pr.name;
  f.period = period_from_mhz(pr.clock_mhz);
  const auto cycles = [&](const char* key, double def, const char* what) {
    const double ns = c.real(k + key, def, "ns", 0, 1e6, what);
    return cycles_for(from_ns(ns), f.period);
  };
  f.egress = cycles("egress_ns", pr.egress, "GPU NIC: transaction to frame on the line");
  f.ingress = cycles("ingress_ns", pr.ingress, "GPU NIC: frame in to transaction");
  f.link = std::max<Cycle>(1, cycles("link_ns", pr.link, "one link: SerDes, FEC, MAC/LLR both ends, cable"));
  f.memory = cycles("memory_ns", pr.memory, "HBM access at the target");
  const Cycle core = std::max<Cycle>(6, cycles("switch_ns", pr.switch_core, "the switch, parser to egress"));
  const double uplink = c.real(k + "uplink_ns", pr.uplink, "ns", 0, 1e6,
                              "0: the switch joins the GPUs; > 0: every frame goes up one uplink all GPUs share, at their "
                              "ports' rate, and back down through the switch (the links there and back, the root's turnaround)");
  f.uplink = uplink > 0 ? std::max<Cycle>(1, cycles_for(from_ns(uplink), f.period))
                        : 0;
  const double gbps = c.real(k + "gpu_gbps", pr.gpu_gbps, "Gb/s", 1, 1e6, "one GPU's bandwidth into the fabric, each way");
  const double width = gbps / 8 * 1000 / pr.clock_mhz;
  if (std::abs(width - std::round(width)) > 1e-9)
    throw ConfigError(fmt::format("{}gpu_gbps = {}: at {} MHz this is {:.3f} bytes per cycle, must be whole", k, gbps,
                                  pr.clock_mhz, width));
  f.width = static_cast<std::uint32_t>(std::llround(width));
  // The switch's own stage split, scaled to this fabric's total; its PHY is in `link`.
  f.sp = base;
  f.sp.ports = gpus + (f.uplink ? 1 : 0);  // the uplink is the last port
  f.sp.clock_mhz = pr.clock_mhz;
  // PCIe is lossless (credits): all GPUs meet at the uplink, and a frame the switch cannot buffer
  // waits at its port rather than being dropped.
  if (f.uplink) f.sp.wait_when_full = true;
  f.sp.port_gbps = gbps;
  auto& l = f.sp.lat;
  const double scale =
      static_cast<double>(core) / static_cast<double>(l.parse + l.lookup + l.enqueue + l.arbiter + l.crossbar + l.egress);
  l.rx_mac = l.tx_mac = 0;
  l.lookup = static_cast<Cycle>(std::llround(l.lookup * scale));
  l.enqueue = std::max<Cycle>(1, static_cast<Cycle>(std::llround(l.enqueue * scale)));
  l.arbiter = static_cast<Cycle>(std::llround(l.arbiter * scale));
  l.crossbar = std::max<Cycle>(1, static_cast<Cycle>(std::llround(l.crossbar * scale)));  // the switch needs one
  l.egress = static_cast<Cycle>(std::llround(l.egress * scale));
  // When one stage dominates the split (switch.lat.egress=1e6), rounding and the least cycles of
  // enqueue and crossbar take the others past the total: the excess comes off the largest (parse
  // wrapped below zero, a wake 2^64 cycles away).
  Cycle rest = l.lookup + l.enqueue + l.arbiter + l.crossbar + l.egress;
  Cycle* stages[] = {&l.egress, &l.crossbar, &l.arbiter, &l.lookup, &l.enqueue};
  std::stable_sort(std::begin(stages), std::end(stages), [](const Cycle* a, const Cycle* b) { return *a > *b; });
  for (Cycle* stage : stages) {
    const Cycle least = stage == &l.enqueue || stage == &l.crossbar ? 1 : 0;
    const Cycle cut = std::min(rest - std::min(rest, core), *stage - least);
    *stage -= cut;
    rest -= cut;
  }
  l.parse = core - rest;
  return f;
}

// What declare_stages takes from the preset, not from switch.*: the switch's ports, their rate, its
// clock and its latency (olink.<preset>.switch_ns, split over the stages in a fixed ratio that no
// figure of a run shows). A scenario whose every switch is a preset's fixes those keys.
void fix_preset_switch_keys(Config& c, const std::string& owner) {
  for (const char* key : {"switch.ports", "switch.port_gbps", "switch.clock_mhz", "switch.lat.rx_mac", "switch.lat.parse",
                          "switch.lat.lookup", "switch.lat.enqueue", "switch.lat.arbiter", "switch.lat.crossbar",
                          "switch.lat.egress", "switch.lat.tx_mac"})
    c.fix(key, owner);
}

// Declares a preset's parameters and builds its cycle-level fabric of `gpus` GPUs, named after
// the preset unless `name` is given; with `data` false the GPUs' memories keep nothing (timing only).
std::unique_ptr<Fabric> make_fabric(const Preset& pr, int gpus, const sw::SwitchParams& base, PacketPool& pool,
                                    RunContext& ctx, const std::string& name = "", bool data = true) {
  auto f = std::make_unique<Fabric>();
  static_cast<Stages&>(*f) = declare_stages(pr, gpus, base, ctx.config);
  if (!name.empty()) f->name = name;
  f->domain = std::make_unique<ClockDomain>(("olink_" + f->name).c_str(), f->period);
  Clock& clock = f->domain->clock();
  EndpointParams ep;
  ep.gpus = static_cast<std::uint32_t>(gpus);
  ep.width = f->width;
  ep.egress = f->egress;
  ep.ingress = f->ingress;
  ep.memory = f->memory;
  ep.memory_width = f->width;
  ep.data = data;
  std::vector<Channel<Packet*>*> in(gpus), out(gpus);
  for (int g = 0; g < gpus; ++g) {
    f->channels.push_back(std::make_unique<Channel<Packet*>>(fmt::format("top.{}.up{}", f->name, g), clock,
                                                             ChannelSpec{f->link, 0, 1, 2}));
    in[g] = f->channels.back().get();
    f->channels.push_back(std::make_unique<Channel<Packet*>>(fmt::format("top.{}.down{}", f->name, g), clock,
                                                             ChannelSpec{f->link, 0, 1, 2}));
    out[g] = f->channels.back().get();
  }
  const auto to_dst = [](const Packet& p) { return static_cast<int>(p.dst); };
  sw::Switch* down = nullptr;
  if (f->uplink) {
    // Up: the GPUs' ports in, the uplink out. Down: the uplink in, the GPUs' ports out.
    f->channels.push_back(std::make_unique<Channel<Packet*>>(fmt::format("top.{}.uplink", f->name), clock,
                                                             ChannelSpec{f->uplink, 0, 1, 2}));
    Channel<Packet*>* uplink = f->channels.back().get();
    std::vector<Channel<Packet*>*> up_in = in, up_out(gpus + 1), down_in(gpus + 1), down_out = out;
    up_in.push_back(nullptr);
    up_out[gpus] = uplink;
    down_in[gpus] = uplink;
    down_out.push_back(nullptr);
    f->sw = std::make_unique<sw::Switch>("top." + f->name + ".sw", f->sp, clock, ctx.stats, up_in, up_out,
                                         [gpus](const Packet&) { return gpus; }, ctx.seed);
    f->down = std::make_unique<sw::Switch>("top." + f->name + ".sw_down", f->sp, clock, ctx.stats, down_in, down_out,
                                           to_dst, ctx.seed + 1);
    uplink->connect(&f->sw->egress_core(gpus), &f->down->ingress_core(gpus));
    down = f->down.get();
  } else {
    f->sw = std::make_unique<sw::Switch>("top." + f->name + ".sw", f->sp, clock, ctx.stats, in, out, to_dst, ctx.seed);
    down = f->sw.get();
  }
  for (int g = 0; g < gpus; ++g) {
    f->endpoints.push_back(std::make_unique<OlinkEndpoint>(fmt::format("{}_gpu{}", f->name, g).c_str(), g, ep, clock,
                                                           *in[g], *out[g], pool, ctx.stats));
    in[g]->connect(&f->endpoints.back()->core(), &f->sw->ingress_core(g));
    out[g]->connect(&down->egress_core(g), &f->endpoints.back()->core());
  }
  return f;
}

// The bytes a streamer has delivered by now, for the watchdog. A loosely timed one (on the fast
// fabric) has each write answered at once with its completion ahead of SystemC's time, up to the
// whole transfer ahead (all 4096 Stores of 1 MiB posted at once, 64 GPUs sharing the PCIe uplink:
// 1.6 ms); its bytes count pro rata over the time from its start to its last answer so far, so
// that the watchdog sees data arriving until then, not a stall.
std::uint64_t delivered(const olink::StoreStreamer& s) {
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  if (now >= s.finished_at() || s.finished_at() <= s.started_at()) return s.bytes_moved();
  return static_cast<std::uint64_t>(static_cast<double>(s.bytes_moved()) * ((now - s.started_at()) / (s.finished_at() - s.started_at())));
}

// Declares an all-to-all's parameters (<prefix>.gpus, bytes, bytes_per_gpu, outstanding, pattern).
olink::StreamSpec declare_streams(Config& c, const std::string& prefix, std::int64_t bytes_per_gpu,
                                  std::uint64_t seed, std::int64_t bytes = 256) {
  const std::string k = prefix + ".";
  olink::StreamSpec spec;
  spec.gpus = static_cast<std::uint32_t>(c.integer(k + "gpus", 8, "GPUs", 2, 512, "GPUs on the switch"));
  spec.bytes = static_cast<std::uint32_t>(
      c.integer(k + "bytes", bytes, "bytes", 8, 1 << 20, "bytes per write: a Store up to 256, an RDMA-style bulk write above"));
  const auto per_gpu = static_cast<std::uint64_t>(c.integer(k + "bytes_per_gpu", bytes_per_gpu, "bytes", 256, 1ll << 34,
                                                            "what each GPU sends, spread over the others"));
  if (per_gpu < spec.bytes)
    throw ConfigError(fmt::format("{}bytes_per_gpu = {}: less than one write ({}bytes = {}); allowed: at least {}", k,
                                  per_gpu, k, spec.bytes, spec.bytes));
  spec.count = static_cast<std::uint32_t>(per_gpu / spec.bytes);
  spec.outstanding = static_cast<std::uint32_t>(c.integer(k + "outstanding", 4096, "writes", 1, 65536,
                                                          "writes a GPU keeps in flight"));
  const std::string pattern = c.choice(k + "pattern", "alltoall", olink::kPatternNames,
                                       "destinations: round robin over the others, random, or the next on a ring");
  spec.pattern = static_cast<olink::Pattern>(std::find(olink::kPatternNames.begin(), olink::kPatternNames.end(), pattern) -
                                             olink::kPatternNames.begin());
  spec.seed = seed;
  return spec;
}

// An OLink fabric of composed Lingyun ports (sys/lingyun): GPUs on `topology`, the switches'
// core clock for GPUs and switches alike, the GPU NIC's stages from the preset. Every frame's
// stage times are summed per direction: requests (arriving at GPU 1) and responses (at GPU 0).
struct ComposedFabric {
  std::string name;
  Time period = 0;
  EndpointParams ep;
  sw::SwitchParams sp;
  std::unique_ptr<ClockDomain> core, phy;
  std::unique_ptr<lingyun::Fabric> fabric;
  std::vector<std::unique_ptr<OlinkEndpoint>> endpoints;
  std::array<Time, kStages> path[2]{};  // 0: request, 1: response
  std::uint64_t frames[2]{};
  std::uint64_t unmeasured[2]{};  // frames each way left out of path and frames (the bring-up's)
  std::vector<std::pair<Time, Time>> arrivals[2];  // every frame: onto the sender's line, off the receiver's
};

std::unique_ptr<ComposedFabric> make_composed(const Preset& pr, const std::string& fec, const lingyun::Topology& t,
                                              const sw::SwitchParams& base, const lingyun::PortParams& port,
                                              PacketPool& pool, RunContext& ctx) {
  auto f = std::make_unique<ComposedFabric>();
  f->name = pr.name;
  f->sp = base;
  f->period = base.period();
  const std::string k = std::string("olink.") + pr.name + ".";
  const auto cycles = [&](const char* key, double def, const char* what) {
    const double ns = ctx.config.real(k + key, def, "ns", 0, 1e6, what);
    return cycles_for(from_ns(ns), f->period);
  };
  f->ep.gpus = static_cast<std::uint32_t>(t.endpoints().size());
  f->ep.width = base.port_bytes_per_cycle();
  f->ep.memory_width = f->ep.width;
  f->ep.egress = cycles("egress_ns", pr.egress, "GPU NIC: transaction to frame on the line");
  f->ep.ingress = cycles("ingress_ns", pr.ingress, "GPU NIC: frame in to transaction");
  f->ep.memory = cycles("memory_ns", pr.memory, "HBM access at the target");
  // OLink's frames without data (a load's request, a Store's completion) are 14 + 40 + 4 bytes,
  // below the 64 (Ethernet's least) the LLR twin takes: refused here, not a failure mid-run.
  if (port.llr && port.llr_rtl())
    throw ConfigError(fmt::format("llr.impl = 'rtl': OLink's frames without data are {} bytes, below the 64 the LLR "
                                  "twin takes; allowed: llr.impl=model, or port.llr=false",
                                  olink::kEthernetHeaderBytes + olink::kHeaderBytes + olink::kFcsBytes));
  lingyun::PortParams pp = port;
  pp.phy = port.phy.with_fec(fec);
  f->core = std::make_unique<ClockDomain>(("olink_" + f->name).c_str(), f->period);
  f->phy = std::make_unique<ClockDomain>(("olink_" + f->name + "_phy").c_str(), pp.phy.period());
  Clock& clock = f->core->clock();
  const std::string prefix = "top." + f->name;
  f->fabric = std::make_unique<lingyun::Fabric>(prefix, t, base, pp, clock, f->phy->clock(), clock, ctx.stats, ctx.seed,
                                                pool, false);
  f->fabric->probe(ctx.waves, clock, f->phy->clock());
  for (std::uint32_t g = 0; g < f->ep.gpus; ++g) {
    f->endpoints.push_back(std::make_unique<OlinkEndpoint>(fmt::format("{}_gpu{}", f->name, g).c_str(), g, f->ep, clock,
                                                           f->fabric->to_fabric(g, 0), f->fabric->from_fabric(g, 0),
                                                           pool, ctx.stats));
    f->fabric->attach(static_cast<int>(g), 0, &f->endpoints.back()->core());
    ComposedFabric* fp = f.get();
    lingyun::PortFc& fc = f->fabric->gate(static_cast<int>(g), 0);
    f->endpoints.back()->attach_port(&fc, &fc, [fp, g](const Packet& p, Time now) {
      const int dir = g == 0 ? 1 : 0;  // GPU 0 issues the loads, GPU 1 answers them
      fp->arrivals[dir].emplace_back(p.created, now);
      if (fp->unmeasured[dir]) {
        --fp->unmeasured[dir];
        return;
      }
      for (int s = 0; s < kStages; ++s) fp->path[dir][s] += p.stage_time[s];
      fp->path[dir][p.stage] += now - p.stage_since;  // the FIFO into the NIC
      ++fp->frames[dir];
    });
  }
  return f;
}

class OlinkLatency : public Testbench {
 public:
  explicit OlinkLatency(RunContext& ctx) {
    Config& c = ctx.config;
    bytes_ = static_cast<std::uint32_t>(c.integer("olink.bytes", 64, "bytes", 8, 256, "bytes per load"));
    loads_ = static_cast<int>(c.integer("olink.loads", 20, "loads", 1, 100000, "loads per fabric, one at a time"));
    const sw::SwitchParams base = sw::SwitchParams::declare(c, "switch");
    // The OLink fabrics are composed Lingyun ports and switches; the comparators stay presets.
    const lingyun::Topology topology = *lingyun::Topology::declare(c, 2);
    const lingyun::PortParams port = lingyun::PortParams::declare(c, base.vcs);
    for (const char* key : {"port.fec", "port.interleave", "port.none.encoder_ns", "port.none.decoder_ns"})
      c.fix(key, "olink-latency, whose OLink presets carry their FEC (olink-rs544, olink-rs272)");
    for (const char* key : {"switch.lat.rx_mac", "switch.lat.tx_mac"})
      c.fix(key, "olink-latency, whose composed ports model the PHY and MAC (port.*, llr.*)");
    c.fix("switch.ports", "olink-latency, whose topology gives each switch its ports (its presets' switches, one per GPU)");
    for (const Preset& pr : kPresets) {
      Measured m;
      std::string name;
      const std::vector<std::unique_ptr<OlinkEndpoint>>* ends;
      Time period;
      if (std::string(pr.name).rfind("olink-", 0) == 0) {
        m.composed = make_composed(pr, std::string(pr.name).substr(6), topology, base, port, pool_, ctx);
        name = m.composed->name;
        ends = &m.composed->endpoints;
        period = m.composed->period;
        summary_line_ = m.composed->fabric->summary();
      } else {
        m.fabric = make_fabric(pr, 2, base, pool_, ctx);
        name = m.fabric->name;
        ends = &m.fabric->endpoints;
        period = m.fabric->period;
      }
      // One load more than measured, first: it waits for the links to come up (CDR lock,
      // port.cdr_lock_us, then LLR's INIT exchange), which is bring-up, not a load's latency.
      if (m.composed) m.composed->unmeasured[0] = m.composed->unmeasured[1] = 1;
      std::vector<Access> program;
      for (int i = 0; i <= loads_; ++i) program.push_back({Access::kLoad, olink::uva(1, 4096 + 64 * i), bytes_, 0});
      // One load at a time, each issued when the last has returned: every one sees an idle
      // fabric. The first starts on a clock edge, as every later one does. GPU 1 only serves.
      m.gpu = std::make_unique<GpuInitiator>(fmt::format("{}_initiator", name).c_str(), program,
                                             to_sc_time(1000 * period));
      m.gpu->socket.bind((*ends)[0]->socket);
      for (std::size_t g = 1; g < ends->size(); ++g) {  // the others only serve (a topology may have more than 2)
        m.idle.push_back(std::make_unique<GpuInitiator>(fmt::format("{}_gpu{}_initiator", name, g).c_str(),
                                                        std::vector<Access>{}, sc_core::SC_ZERO_TIME));
        m.idle.back()->socket.bind((*ends)[g]->socket);
      }
      runs_.push_back(std::move(m));
    }
  }

  bool done() const override {
    for (const auto& m : runs_)
      if (!m.gpu->done()) return false;
    return true;
  }
  std::uint64_t progress() const override {
    std::uint64_t n = 0;
    for (const auto& m : runs_) n += m.gpu->results().size();
    return n;
  }
  void check() const override {
    for (const auto& m : runs_) {
      for (const auto& r : m.gpu->results())
        if (r.status != tlm::TLM_OK_RESPONSE) throw CheckFailure(name(m) + ": a load failed");
      if (m.composed) {
        // Every load crossed the fabric once each way, and its stages fit inside it.
        const ComposedFabric& f = *m.composed;
        const auto loads = measured(m);
        if (f.frames[0] != loads || f.frames[1] != loads)
          throw CheckFailure(fmt::format("{}: {} loads but {} request and {} response frames arrived", f.name, loads,
                                         f.frames[0], f.frames[1]));
        if (loads && mean_load(m) + 1e-9 < sum_path(f, 0) + sum_path(f, 1))
          throw CheckFailure(fmt::format("{}: the stages of the paths add up to more than the load took", f.name));
        continue;
      }
      const Fabric& f = *m.fabric;
      for (const auto& r : m.gpu->results()) {
        const Cycle measured = from_sc_time(r.latency) / f.period;
        if (measured != total(f))
          throw CheckFailure(fmt::format("{}: load took {} cycles, the stages add up to {}", f.name, measured, total(f)));
      }
    }
  }
  nlohmann::json summary() const override {
    nlohmann::json s;
    if (!summary_line_.empty()) s["topology"] = summary_line_;
    for (const auto& m : runs_) {
      nlohmann::json stages = nlohmann::json::object(), provenance = nlohmann::json::object();
      for (const auto& st : breakdown(m)) {
        stages[st.name + "_ns"] = st.ns;
        provenance[st.name + "_ns"] = st.provenance;
      }
      // A run stopped before its first load returned has no latency to report.
      const bool none = measured(m) == 0;
      s[name(m)] = {{"load_latency_ns", none ? nlohmann::json(nullptr) : nlohmann::json(mean_load(m))},
                    {"one_way_ns", none ? nlohmann::json(nullptr) : nlohmann::json(one_way(m))},
                    {"breakdown", stages},
                    {"provenance", provenance},
                    {"composed", m.composed != nullptr}};
    }
    // Claim C1: OLink one way about 1.2 us, NVLink-class 0.1-0.2 us, a 10x gap.
    const auto& kp4 = s["olink-rs544"], & nv = s["nvlink-class"];
    if (!kp4["load_latency_ns"].is_null() && !nv["load_latency_ns"].is_null()) {
      const double load = kp4["load_latency_ns"].get<double>(), one = kp4["one_way_ns"].get<double>();
      s["claim_c1"] = {{"seed_one_way_ns", 1200},
                       {"closer_to_seed", std::abs(one - 1200) < std::abs(load - 1200) ? "one_way" : "round_trip"},
                       {"olink_over_nvlink_load", load / nv["load_latency_ns"].get<double>()},
                       {"ten_x_gap_met", load / nv["load_latency_ns"].get<double>() >= 10}};
    }
    return s;
  }
  std::string report() const override {
    const nlohmann::json s = summary();
    std::string out = fmt::format("  {}-byte remote load, one at a time\n", bytes_);
    if (!summary_line_.empty()) out += "  OLink fabrics: " + summary_line_ + "\n";
    // Composed fabrics first (measured), then the comparators (configured presets).
    for (bool composed : {true, false}) {
      const Measured* first = nullptr;
      for (const auto& m : runs_)
        if ((m.composed != nullptr) == composed && !first) first = &m;
      if (!first) continue;
      out += fmt::format("  {:<30}", composed ? "stage (ns), composed ports" : "stage (ns), presets");
      for (const auto& m : runs_)
        if ((m.composed != nullptr) == composed) out += fmt::format(" {:>13}", name(m));
      out += "\n";
      for (const auto& st : breakdown(*first)) {
        out += fmt::format("  {:<30}", st.name + (st.provenance == "measured" ? "" : " *"));
        for (const auto& m : runs_)
          if ((m.composed != nullptr) == composed)
            out += fmt::format(" {:>13.1f}", s[name(m)]["breakdown"][st.name + "_ns"].get<double>());
        out += "\n";
      }
    }
    out += "  (* configured or derived from configuration; the rest measured from timestamps)\n";
    for (const char* row : {"load_latency_ns", "one_way_ns"}) {
      out += fmt::format("  {:<30}", row == std::string("load_latency_ns") ? "load, measured (mean)" : "one way (request)");
      for (const auto& m : runs_) {
        out += fmt::format(" {:>13}", figure(s[name(m)][row], 1));
      }
      out += "\n";
    }
    if (s.contains("claim_c1"))
      out += fmt::format("  C1: the seed's 1.2 us is closest to OLink's {}; OLink/NVLink-class load = {:.1f}x: 10x {}\n",
                         s["claim_c1"]["closer_to_seed"].get<std::string>() == "one_way" ? "one-way time" : "round trip",
                         s["claim_c1"]["olink_over_nvlink_load"].get<double>(),
                         s["claim_c1"]["ten_x_gap_met"].get<bool>() ? "met" : "not met");
    return out;
  }

 private:
  struct Measured {
    std::unique_ptr<Fabric> fabric;             // a preset: constant-delay links
    std::unique_ptr<ComposedFabric> composed;   // composed Lingyun ports
    std::unique_ptr<GpuInitiator> gpu;
    std::vector<std::unique_ptr<GpuInitiator>> idle;
  };
  struct StageNs {
    std::string name;
    double ns;
    std::string provenance;  // measured | configured | derived (from codeword size and lane rate)
  };
  static std::string name(const Measured& m) { return m.composed ? m.composed->name : m.fabric->name; }
  static Cycle beats(const Fabric& f, std::uint32_t payload) {
    return (olink::kEthernetHeaderBytes + olink::kHeaderBytes + payload + olink::kFcsBytes + f.width - 1) / f.width - 1;
  }
  // The loads measured: all but the first (the links' bring-up).
  static std::size_t measured(const Measured& m) { return std::max<std::size_t>(m.gpu->results().size(), 1) - 1; }
  double mean_load(const Measured& m) const {
    const auto& all = m.gpu->results();
    double sum = 0;
    for (std::size_t i = 1; i < all.size(); ++i) sum += to_ns(from_sc_time(all[i].latency));
    return measured(m) ? sum / static_cast<double>(measured(m)) : 0;
  }
  static double path_ns(const ComposedFabric& f, int dir, int stage) {
    return f.frames[dir] ? to_ns(f.path[dir][stage]) / static_cast<double>(f.frames[dir]) : 0;
  }
  static double sum_path(const ComposedFabric& f, int dir) {
    double sum = 0;
    for (int st = kStageMacTx; st < kStages; ++st) sum += path_ns(f, dir, st);
    return sum;
  }
  // The stages of a load, in order, in ns.
  std::vector<StageNs> breakdown(const Measured& m) const {
    std::vector<StageNs> out;
    if (m.composed) {
      const ComposedFabric& f = *m.composed;
      const double ns = to_ns(f.period);
      const Cycle data = (bytes_ + f.ep.width - 1) / f.ep.width;
      double sum = 0;
      const auto add = [&](std::string n, double v, const char* p) {
        out.push_back({std::move(n), v, p});
        sum += v;
      };
      add("gpu_egress", f.ep.egress * ns, "configured");
      for (int st = kStageMacTx; st < kStages; ++st)
        add(std::string("request.") + stage_name(static_cast<Stage>(st)), path_ns(f, 0, st),
            stage_provenance(static_cast<Stage>(st)));
      add("gpu_ingress_target", f.ep.ingress * ns, "configured");
      add("memory", (f.ep.memory + data) * ns, "configured");
      add("gpu_egress_target", f.ep.egress * ns, "configured");
      for (int st = kStageMacTx; st < kStages; ++st)
        add(std::string("response.") + stage_name(static_cast<Stage>(st)), path_ns(f, 1, st),
            stage_provenance(static_cast<Stage>(st)));
      add("gpu_ingress", f.ep.ingress * ns, "configured");
      // The rest: the clock edge a load starts on, and the NICs waiting for a frame's tail.
      out.push_back({"endpoint_other", measured(m) == 0 ? 0.0 : mean_load(m) - sum, "measured"});
      return out;
    }
    const double ns = to_ns(m.fabric->period);
    for (const auto& [n, cycles] : preset_stages(*m.fabric)) out.push_back({n, cycles * ns, "configured"});
    return out;
  }
  // A preset fabric's stages of a load, in cycles.
  std::vector<std::pair<const char*, Cycle>> preset_stages(const Fabric& f) const {
    const Cycle data = (bytes_ + f.width - 1) / f.width;
    return {{"entry", 1},
            {"gpu_egress", f.egress},
            {"links_request", 2 * f.link},
            {"switch_request", f.switch_cycles()},
            {"uplink_request", f.uplink},
            {"switch_down_request", f.uplink ? f.switch_cycles() : 0},
            {"frame_tail_request", beats(f, 0)},
            {"gpu_ingress_target", f.ingress},
            {"memory", f.memory + data},
            {"gpu_egress_target", f.egress},
            {"links_response", 2 * f.link},
            {"switch_response", f.switch_cycles()},
            {"uplink_response", f.uplink},
            {"switch_down_response", f.uplink ? f.switch_cycles() : 0},
            {"frame_tail_response", beats(f, bytes_)},
            {"gpu_ingress", f.ingress}};
  }
  Cycle total(const Fabric& f) const {
    Cycle t = 0;
    for (const auto& st : preset_stages(f)) t += st.second;
    return t;
  }
  // GPU 0's NIC to GPU 1's NIC, the NIC pipelines included.
  double one_way(const Measured& m) const {
    if (m.composed) {
      const ComposedFabric& f = *m.composed;
      return (f.ep.egress + f.ep.ingress) * to_ns(f.period) + sum_path(f, 0);
    }
    const Fabric& f = *m.fabric;
    const Cycle switches = f.uplink ? 2 * f.switch_cycles() + f.uplink : f.switch_cycles();
    return to_ns(f.period) * static_cast<double>(f.egress + 2 * f.link + switches + beats(f, 0) + f.ingress);
  }

  std::uint32_t bytes_ = 64;
  int loads_ = 20;
  PacketPool pool_;
  std::vector<Measured> runs_;
  std::string summary_line_;
};

// olink-message: GPU 0 writes a message of `message.bytes` into the last GPU's memory through
// composed Lingyun ports, `message.count` times, each when the last is acknowledged (an idle
// fabric every time), after one more that is not measured. Per message, measured from
// timestamps: the network's time, from its first frame onto GPU 0's line to its last frame off
// the other GPU's line, and the GPU-to-GPU time, from the write handed to GPU 0's NIC to the
// other NIC handing its last Store to memory. A sweep over message.bytes gives the points that
// `xysim export` fits (scripts/sweeps/olink-message-size.yaml, docs/exports.md).
class OlinkMessage : public Testbench {
 public:
  explicit OlinkMessage(RunContext& ctx) {
    Config& c = ctx.config;
    bytes_ = static_cast<std::uint32_t>(c.integer("message.bytes", 65536, "bytes", 8, 1 << 20,
                                                  "bytes per message: one Store up to 256, above a bulk write of 4 KiB Stores"));
    count_ = static_cast<int>(c.integer("message.count", 4, "messages", 1, 100000, "messages measured, one after the other (after one that is not)"));
    const std::string fabric = c.choice("message.fabric", "olink-rs544", {"olink-rs544", "olink-rs272"},
                                        "the OLink preset (NIC stages, FEC) on composed ports");
    const sw::SwitchParams base = sw::SwitchParams::declare(c, "switch");
    const lingyun::Topology topology = *lingyun::Topology::declare(c, 2);
    const lingyun::PortParams port = lingyun::PortParams::declare(c, base.vcs);
    for (const char* key : {"port.fec", "port.interleave", "port.none.encoder_ns", "port.none.decoder_ns"})
      c.fix(key, "olink-message, whose OLink preset carries its FEC (message.fabric)");
    for (const char* key : {"switch.lat.rx_mac", "switch.lat.tx_mac"})
      c.fix(key, "olink-message, whose composed ports model the PHY and MAC (port.*, llr.*)");
    c.fix("switch.ports", "olink-message, whose topology gives each switch its ports (its presets' switches, one per GPU)");
    const Preset& pr = *std::find_if(std::begin(kPresets), std::end(kPresets), [&](const Preset& p) { return fabric == p.name; });
    f_ = make_composed(pr, fabric.substr(6), topology, base, port, pool_, ctx);
    line_gbps_ = port.line_gbps();
    to_ = f_->ep.gpus - 1;
    f_->endpoints[to_]->on_served([this](Time t) { served_.push_back(t); });
    // One message more than measured, first: it waits for the links to come up (CDR lock, then
    // LLR's INIT exchange, about 190 ns at each end), which is bring-up, not the steady state.
    std::vector<Access> program(count_ + 1, {Access::kStore, olink::uva(to_, 0), bytes_, 0});
    // The first starts on a clock edge, as in olink-latency.
    gpus_.push_back(std::make_unique<GpuInitiator>("message_gpu0", program, to_sc_time(1000 * f_->period)));
    for (std::uint32_t g = 1; g < f_->ep.gpus; ++g)  // the others only serve, but their sockets must be bound
      gpus_.push_back(std::make_unique<GpuInitiator>(fmt::format("message_gpu{}", g).c_str(), std::vector<Access>{},
                                                     sc_core::SC_ZERO_TIME));
    for (std::uint32_t g = 0; g < f_->ep.gpus; ++g) gpus_[g]->socket.bind(f_->endpoints[g]->socket);
  }

  bool done() const override { return gpus_[0]->done(); }
  std::uint64_t progress() const override { return served_.size(); }
  double done_fraction() const override {
    return static_cast<double>(served_.size()) / static_cast<double>((count_ + 1) * frames_per_message());
  }
  Work work() const override {  // every message's bytes back to back at line rate
    const double bits = static_cast<double>(count_ + 1) * bytes_ * 8;
    return {static_cast<Time>(bits / line_gbps_ * kNs),
            fmt::format("message.count + 1 = {} messages of message.bytes = {} at {:.0f} Gb/s", count_ + 1,
                        bytes_, line_gbps_)};
  }
  void check() const override {
    for (const auto& r : gpus_[0]->results())
      if (r.status != tlm::TLM_OK_RESPONSE) throw CheckFailure("a message's write failed");
    const auto frames = gpus_[0]->results().size() * frames_per_message();
    if (served_.size() != frames || f_->arrivals[0].size() != frames)
      throw CheckFailure(fmt::format("{} messages of {} frames, but {} frames arrived and {} were served",
                                     gpus_[0]->results().size(), frames_per_message(), f_->arrivals[0].size(), served_.size()));
  }
  nlohmann::json summary() const override {
    std::vector<double> transfer, delivered, write;
    const auto& results = gpus_[0]->results();
    const auto& arrivals = f_->arrivals[0];  // in time order, as served_
    std::size_t a = 0, d = 0;                 // the first arrival and the first service not yet looked at
    for (std::size_t i = 1; i < results.size(); ++i) {  // the first is the start-up's
      // A message's frames all arrive before its write is acknowledged, so before the next is issued:
      // one pass over the arrivals and the services, a message's window at a time.
      const Time from = from_sc_time(results[i].issued), to = from + from_sc_time(results[i].latency);
      Time sent = ~Time{0}, arrived = 0, served = 0;
      for (; a < arrivals.size() && arrivals[a].second <= to; ++a)
        if (arrivals[a].second >= from) {
          sent = std::min(sent, arrivals[a].first);
          arrived = std::max(arrived, arrivals[a].second);
        }
      for (; d < served_.size() && served_[d] <= to; ++d)
        if (served_[d] >= from) served = std::max(served, served_[d]);
      transfer.push_back(to_ns(arrived - sent));
      delivered.push_back(to_ns(served - from));
      write.push_back(to_ns(to - from));
    }
    const auto mean = [](const std::vector<double>& v) {
      return v.empty() ? nlohmann::json(nullptr) : nlohmann::json(std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size()));
    };
    const auto spread = [](const std::vector<double>& v) {
      return v.empty() ? nlohmann::json(nullptr)
                       : nlohmann::json(*std::max_element(v.begin(), v.end()) - *std::min_element(v.begin(), v.end()));
    };
    const double ns = to_ns(f_->period);
    return {{"fabric", f_->name},
            {"topology", f_->fabric->summary()},
            {"gpus", f_->ep.gpus},
            {"from_gpu", 0},
            {"to_gpu", to_},
            {"message_bytes", bytes_},
            {"messages", transfer.size()},
            {"frames_per_message", frames_per_message()},
            {"transfer_ns", mean(transfer)},
            {"transfer_spread_ns", spread(transfer)},
            {"delivered_ns", mean(delivered)},
            {"write_ns", mean(write)},
            {"line_GBps", line_gbps_ / 8},
            {"nic_egress_ns", f_->ep.egress * ns},
            {"nic_ingress_ns", f_->ep.ingress * ns},
            {"provenance",
             {{"transfer_ns", "measured: first frame onto GPU 0's line to last frame off the other GPU's line, mean over messages"},
              {"transfer_spread_ns", "measured: largest less smallest transfer_ns"},
              {"delivered_ns", "measured: write handed to GPU 0's NIC to the other NIC handing its last Store to memory, mean"},
              {"write_ns", "measured: write handed to GPU 0's NIC to its last acknowledgement back, mean"},
              {"line_GBps", "derived: port lanes x lane rate less FEC and transcoding (configured port.*)"},
              {"nic_egress_ns", "configured: olink.<fabric>.egress_ns"},
              {"nic_ingress_ns", "configured: olink.<fabric>.ingress_ns"},
              {"message_bytes", "configured: message.bytes"}}}};
  }
  std::string report() const override {
    const nlohmann::json s = summary();
    const auto ns = [&](const char* key) { return figure(s[key], 1); };
    return fmt::format("  {} bytes from GPU 0 to GPU {} on {} ({}), {} messages of {} frames\n"
                       "  network, first frame on the line to last frame off it  {:>10} ns (spread {} ns)\n"
                       "  GPU to GPU, write to last Store handed to memory      {:>10} ns\n"
                       "  write to its last acknowledgement                     {:>10} ns\n",
                       bytes_, to_, f_->name, s["topology"].get<std::string>(), s["messages"].get<std::size_t>(),
                       frames_per_message(), ns("transfer_ns"), ns("transfer_spread_ns"), ns("delivered_ns"), ns("write_ns"));
  }

 private:
  std::size_t frames_per_message() const {
    return bytes_ > f_->ep.max_bytes ? (bytes_ + f_->ep.segment_bytes - 1) / f_->ep.segment_bytes : 1;
  }
  std::uint32_t bytes_ = 0, to_ = 1;
  int count_ = 1;
  double line_gbps_ = 0;
  PacketPool pool_;
  std::unique_ptr<ComposedFabric> f_;
  std::vector<std::unique_ptr<GpuInitiator>> gpus_;
  std::vector<Time> served_;  // at the receiving GPU: when each Store was handed to its memory
};

// olink-alltoall (claim C11): every GPU streams Stores to every other (an MoE all-to-all) with
// many in flight, on each fabric side by side; bandwidth per GPU. On the PCIe fabric all GPUs
// share the switch's uplink, so each gets about its 1/N (see the top of this file). `alltoall.pattern` swaps the
// destinations for seeded random ones or a ring (a TP all-gather step); `alltoall.model=fast`
// runs the fast fabric (timing only) instead, for systems too large for cycle accuracy. The GPUs'
// memories keep no data in either (nothing reads the Stores back): at 64 GPUs they would hold
// 256 MiB of it.
class OlinkAlltoall : public Testbench {
 public:
  explicit OlinkAlltoall(RunContext& ctx) {
    Config& c = ctx.config;
    olink::StreamSpec spec = declare_streams(c, "alltoall", 1048576, ctx.seed);
    const bool fast = c.choice("alltoall.model", "cycle", {"cycle", "fast"},
                               "the cycle-level fabric, or the fast one (timing only, see olink-fast)") == "fast";
    spec.loosely_timed = fast;
    const int gpus = static_cast<int>(spec.gpus);
    const sw::SwitchParams base = sw::SwitchParams::declare(c, "switch");
    fix_preset_switch_keys(c, "olink-alltoall, whose OLink presets set the switch's ports, rate, clock and latency "
                              "(olink.<preset>.gpu_gbps, switch_ns)");
    for (const Preset& pr : kPresets) {
      Run run;
      std::function<tlm::tlm_target_socket<>&(int)> socket;
      if (fast) {
        run.stages = declare_stages(pr, gpus, base, c);
        run.fast = std::make_unique<olink::FastFabric>(pr.name, run.stages.fast(spec.gpus, false));
        socket = [&run](int g) -> tlm::tlm_target_socket<>& { return run.fast->socket(g); };
      } else {
        run.fabric = make_fabric(pr, gpus, base, pool_, ctx, "", false);  // nothing reads the Stores back
        run.stages = *run.fabric;
        socket = [&run](int g) -> tlm::tlm_target_socket<>& { return run.fabric->endpoints[g]->socket; };
      }
      for (int g = 0; g < gpus; ++g) {
        run.gpus.push_back(std::make_unique<olink::StoreStreamer>(fmt::format("{}_stream{}", pr.name, g).c_str(), g, spec));
        run.gpus.back()->socket.bind(socket(g));
      }
      runs_.push_back(std::move(run));
    }
  }
  bool done() const override {
    for (const auto& r : runs_)
      for (const auto& g : r.gpus)
        if (!g->done()) return false;
    return true;
  }
  std::uint64_t progress() const override {
    std::uint64_t n = 0;
    for (const auto& r : runs_)
      for (const auto& g : r.gpus) n += delivered(*g);
    return n;
  }
  void check() const override {
    for (const auto& r : runs_) {
      if (r.fabric) r.fabric->check_buffer_accounting();
      for (const auto& g : r.gpus)
        if (g->errors()) throw CheckFailure(r.stages.name + ": writes failed");
    }
  }
  nlohmann::json summary() const override {
    nlohmann::json s;
    for (const auto& r : runs_) {
      double worst = 1e300, sum = 0;
      for (const auto& g : r.gpus) {
        const double gbs = static_cast<double>(g->bytes_moved()) / (g->finished_at().to_seconds() * 1e9);
        worst = std::min(worst, gbs);
        sum += gbs;
      }
      const double link = static_cast<double>(r.stages.width) / to_ns(r.stages.period);
      s[r.stages.name] = {{"gpus", r.gpus.size()},
                          {"gpu_link_GBps", link},
                          // all GPUs share it, at their links' rate; null: none
                          {"shared_uplink_GBps", r.stages.uplink ? nlohmann::json(link) : nlohmann::json(nullptr)},
                          {"bandwidth_per_gpu_GBps", sum / static_cast<double>(r.gpus.size())},
                          {"slowest_gpu_GBps", worst}};
    }
    return s;
  }
  std::string report() const override {
    const nlohmann::json s = summary();
    std::string out = fmt::format("  {:<14} {:>6} {:>14} {:>18} {:>16} {:>14}\n", "fabric", "GPUs", "GPU link GB/s",
                                  "shared uplink GB/s", "GB/s per GPU", "slowest GB/s");
    for (const auto& r : runs_) {
      const auto& x = s[r.stages.name];
      const auto& up = x["shared_uplink_GBps"];
      out += fmt::format("  {:<14} {:>6} {:>14.1f} {:>18} {:>16.1f} {:>14.1f}\n", r.stages.name, x["gpus"].get<int>(),
                         x["gpu_link_GBps"].get<double>(), up.is_null() ? "-" : fmt::format("{:.1f}", up.get<double>()),
                         x["bandwidth_per_gpu_GBps"].get<double>(), x["slowest_gpu_GBps"].get<double>());
    }
    return out;
  }

 private:
  struct Run {
    Stages stages;
    std::unique_ptr<Fabric> fabric;             // cycle-level
    std::unique_ptr<olink::FastFabric> fast;    // or fast
    std::vector<std::unique_ptr<olink::StoreStreamer>> gpus;
  };
  PacketPool pool_;
  std::vector<Run> runs_;
};

// olink-fast: calibrates the fast fabric against the cycle-level one on the same preset: a load's
// latency (one at a time, GPU 0 from GPU 1) and an all-to-all's bandwidth. Three models run one
// after the other, so that a stopwatch can time each: the fast fabric timing only, the fast
// fabric with data, and the cycle-level fabric — simulated time per wall-second for all three,
// in the same run. The default all-to-all is of 64 KiB bulk writes, the way an MoE dispatch
// moves its tokens, 16 MiB per GPU so that the fast model runs long enough to time;
// `fast.bytes=256` makes it one of Stores.
class OlinkFast : public Testbench {
 public:
  explicit OlinkFast(RunContext& ctx) {
    Config& c = ctx.config;
    std::vector<std::string> names;
    for (const Preset& pr : kPresets) names.push_back(pr.name);
    const std::string preset = c.choice("fast.fabric", "olink-rs544", names, "the preset the models run");
    const olink::StreamSpec spec = declare_streams(c, "fast", 16777216, ctx.seed, 65536);
    const int gpus = static_cast<int>(spec.gpus);
    bytes_ = spec.bytes;
    const int loads = static_cast<int>(c.integer("fast.loads", 20, "loads", 1, 100000, "64-byte loads, one at a time"));
    const sw::SwitchParams base = sw::SwitchParams::declare(c, "switch");
    fix_preset_switch_keys(c, "olink-fast, whose OLink preset sets the switch's ports, rate, clock and latency "
                              "(olink.<preset>.gpu_gbps, switch_ns)");
    const Preset& pr = *std::find_if(std::begin(kPresets), std::end(kPresets),
                                     [&](const Preset& p) { return preset == p.name; });
    name_ = pr.name;
    std::vector<Access> program;
    for (int i = 0; i < loads; ++i) program.push_back({Access::kLoad, olink::uva(1, 4096 + 64 * i), 64, 0});
    // The cycle-level fabrics (one for the loads, one for the all-to-all) first: the fast ones take their stages.
    Model& cycle = models_[kCycle];
    cycle.cycle_latency = make_fabric(pr, 2, base, pool_, ctx, name_ + "-loads");
    cycle.cycle_alltoall = make_fabric(pr, gpus, base, pool_, ctx, name_ + "-alltoall");
    const Fabric& f = *cycle.cycle_latency;
    for (int i = 0; i < kModels; ++i) {
      Model& m = models_[i];
      m.key = kKeys[i];
      std::function<tlm::tlm_target_socket<>&(int)> latency, alltoall;  // each fabric's GPU sockets
      if (i == kCycle) {
        latency = [&m](int g) -> tlm::tlm_target_socket<>& { return m.cycle_latency->endpoints[g]->socket; };
        alltoall = [&m](int g) -> tlm::tlm_target_socket<>& { return m.cycle_alltoall->endpoints[g]->socket; };
      } else {
        m.fast_latency = std::make_unique<olink::FastFabric>((m.key + "_latency").c_str(), f.fast(2, i == kFastData));
        m.fast_alltoall = std::make_unique<olink::FastFabric>((m.key + "_alltoall").c_str(),
                                                              f.fast(static_cast<std::uint32_t>(gpus), i == kFastData));
        latency = [&m](int g) -> tlm::tlm_target_socket<>& { return m.fast_latency->socket(g); };
        alltoall = [&m](int g) -> tlm::tlm_target_socket<>& { return m.fast_alltoall->socket(g); };
      }
      m.loads = std::make_unique<GpuInitiator>((m.key + "_loads").c_str(), program,
                                               to_sc_time(1000 * f.period), &m.go_loads);
      m.loads->socket.bind(latency(0));
      // GPU 1 only serves the loads, but a target socket must be bound.
      m.idle = std::make_unique<GpuInitiator>((m.key + "_gpu1").c_str(), std::vector<Access>{}, sc_core::SC_ZERO_TIME);
      m.idle->socket.bind(latency(1));
      olink::StreamSpec model_spec = spec;
      model_spec.loosely_timed = i != kCycle;  // the cycle-level GPUs use the AT protocol
      for (int g = 0; g < gpus; ++g) {
        m.streams.push_back(std::make_unique<olink::StoreStreamer>(fmt::format("{}_stream{}", m.key, g).c_str(), g,
                                                                   model_spec, &m.go_streams));
        m.streams.back()->socket.bind(alltoall(g));
      }
    }
    stopwatch_ = std::make_unique<Stopwatch>("stopwatch", *this);
  }

  bool done() const override { return models_[kModels - 1].done(); }
  std::uint64_t progress() const override {
    std::uint64_t n = 0;
    for (const auto& m : models_) {
      n += m.loads->results().size();
      for (const auto& s : m.streams) n += delivered(*s);
    }
    return n;
  }
  void check() const override {
    models_[kCycle].cycle_alltoall->check_buffer_accounting();
    for (const auto& m : models_) {
      for (const auto& r : m.loads->results())
        if (r.status != tlm::TLM_OK_RESPONSE) throw CheckFailure(m.key + ": a load failed");
      for (const auto& s : m.streams)
        if (s->errors()) throw CheckFailure(m.key + ": writes failed");
    }
    // The fast fabric's times must not depend on whether it carries the data.
    const Model &timing = models_[kFast], &data = models_[kFastData];
    if (timing.latency_ns() != data.latency_ns() || timing.bandwidth() != data.bandwidth())
      throw CheckFailure(fmt::format("the fast fabric times differ with data: {} ns and {} GB/s, {} ns and {} GB/s without",
                                     data.latency_ns(), data.bandwidth(), timing.latency_ns(), timing.bandwidth()));
  }
  nlohmann::json summary() const override {
    nlohmann::json s = {{"fabric", name_}, {"bytes_per_write", bytes_}};
    for (const Model& m : models_)
      s[m.key] = {{"load_latency_ns", m.latency_ns()},
                  {"bandwidth_per_gpu_GBps", m.bandwidth()},
                  {"simulated_us", m.simulated.to_seconds() * 1e6}};
    s["latency_error"] = over_cycle(s, "fast", "load_latency_ns") - 1;
    s["bandwidth_error"] = over_cycle(s, "fast", "bandwidth_per_gpu_GBps") - 1;
    return s;
  }
  // Speed is wall time: run.json's, never results.json's, which the same seed must reproduce.
  nlohmann::json wall_clock() const override {
    nlohmann::json s;
    for (const Model& m : models_)
      s[m.key] = {{"wall_s", m.wall_s}, {"simulated_us_per_wall_s", m.simulated.to_seconds() * 1e6 / m.wall_s}};
    s["speedup"] = over_cycle(s, "fast", "simulated_us_per_wall_s");
    s["speedup_with_data"] = over_cycle(s, "fast_data", "simulated_us_per_wall_s");
    return s;
  }
  std::string report() const override {
    nlohmann::json s = summary();
    s.merge_patch(wall_clock());
    std::string out = fmt::format("  {} ({} GPUs in the all-to-all, {}-byte writes)\n  {:<26} {:>12} {:>12} {:>10} {:>12} {:>10}\n",
                                  name_, models_[0].streams.size(), bytes_, "", "cycle-level", "fast", "fast/cycle",
                                  "fast+data", "/cycle");
    const auto row = [&](const char* label, const char* key) {
      const double c = s["cycle"][key].get<double>(), f = s["fast"][key].get<double>(),
                   d = s["fast_data"][key].get<double>();
      out += fmt::format("  {:<26} {:>12.1f} {:>12.1f} {:>10.3f} {:>12.1f} {:>10.3f}\n", label, c, f, f / c, d, d / c);
    };
    row("load latency, ns", "load_latency_ns");
    row("all-to-all, GB/s per GPU", "bandwidth_per_gpu_GBps");
    row("simulated us", "simulated_us");
    row("simulated us per wall-s", "simulated_us_per_wall_s");
    return out;
  }

 private:
  static constexpr int kFast = 0, kFastData = 1, kCycle = 2, kModels = 3;  // the order they run in
  static constexpr const char* kKeys[kModels] = {"fast", "fast_data", "cycle"};
  // A model's figure over the cycle-level model's.
  static double over_cycle(const nlohmann::json& s, const char* model, const char* key) {
    return s[model][key].get<double>() / s["cycle"][key].get<double>();
  }
  struct Model {
    std::string key;
    std::unique_ptr<Fabric> cycle_latency, cycle_alltoall;                  // the cycle-level model's
    std::unique_ptr<olink::FastFabric> fast_latency, fast_alltoall;         // a fast model's
    std::unique_ptr<GpuInitiator> loads, idle;
    std::vector<std::unique_ptr<olink::StoreStreamer>> streams;
    sc_core::sc_event go_loads, go_streams;
    sc_core::sc_time simulated;  // from the first load to the last write
    double wall_s = 0;
    bool done() const {
      if (!loads->done()) return false;
      for (const auto& s : streams)
        if (!s->done()) return false;
      return true;
    }
    double latency_ns() const {
      double sum = 0;
      for (const auto& r : loads->results()) sum += r.latency.to_seconds() * 1e9;
      return sum / static_cast<double>(loads->results().size());
    }
    double bandwidth() const {
      double sum = 0;
      for (const auto& s : streams)
        sum += static_cast<double>(s->bytes_moved()) / ((s->finished_at() - s->started_at()).to_seconds() * 1e9);
      return sum / static_cast<double>(streams.size());
    }
  };
  // Starts each model's loads when the last model is done, then its all-to-all, and times both.
  struct Stopwatch : sc_core::sc_module {
    SC_HAS_PROCESS(Stopwatch);
    Stopwatch(const sc_core::sc_module_name& name, OlinkFast& tb_) : sc_core::sc_module(name), tb(tb_) { SC_THREAD(run); }
    void run() {
      // Each model starts on a multiple of this many cycles, so that the fast fabric's calendar
      // buckets fall on the traffic the same way in both fast models.
      const Time epoch = tb.models_[kCycle].cycle_latency->period << 16;
      for (Model& m : tb.models_) {
        sc_core::wait(to_sc_time(epoch - sim_now() % epoch));
        const auto wall = std::chrono::steady_clock::now();
        const sc_core::sc_time begin = sc_core::sc_time_stamp();
        m.go_loads.notify(sc_core::SC_ZERO_TIME);
        if (!m.loads->done()) sc_core::wait(m.loads->done_event());
        m.go_streams.notify(sc_core::SC_ZERO_TIME);
        for (const auto& s : m.streams)
          if (!s->done()) sc_core::wait(s->done_event());
        sc_core::sc_time last = begin;
        for (const auto& s : m.streams) last = std::max(last, s->finished_at());
        m.simulated = last - begin;
        m.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall).count();
      }
    }
    OlinkFast& tb;
  };

  std::string name_;
  std::uint32_t bytes_ = 0;
  PacketPool pool_;
  Model models_[kModels];
  std::unique_ptr<Stopwatch> stopwatch_;
};

}  // namespace

Scenario olink_latency_scenario() {
  return {"olink-latency", "GPU-to-GPU remote load through one switch, per-stage breakdown for four fabrics (claim C1)",
          [](RunContext& ctx) { return std::make_unique<OlinkLatency>(ctx); }};
}

}  // namespace xy

namespace xy {
Scenario olink_alltoall_scenario() {
  return {"olink-alltoall", "8 GPUs (or more) on one switch, MoE all-to-all of Stores: bandwidth per GPU per fabric (claim C11)",
          [](RunContext& ctx) { return std::make_unique<OlinkAlltoall>(ctx); }};
}

Scenario olink_message_scenario() {
  return {"olink-message", "one message of message.bytes from GPU to GPU through composed OLink ports: network and GPU-to-GPU time",
          [](RunContext& ctx) { return std::make_unique<OlinkMessage>(ctx); }};
}

Scenario olink_fast_scenario() {
  return {"olink-fast", "the fast OLink fabric against the cycle-level one: latency, bandwidth, speed",
          [](RunContext& ctx) { return std::make_unique<OlinkFast>(ctx); }};
}
}  // namespace xy
