// The OLink presets' stages and the cycle-level fabric of one (presets.hpp).
#include "tb/scenarios/olink/presets.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace xy::olink_tb {

using olink::EndpointParams;
using olink::OlinkEndpoint;

GpuSide GpuSide::declare(const Preset& pr, Config& c) {
  GpuSide g;
  g.memory_ns = c.real("olink.gpu.memory_ns", 200, "ns", 0, 1e6, "HBM access at the target GPU, every fabric");
  if (pr.dma_egress > 0) {
    const std::string k = std::string("olink.") + pr.name + ".";
    g.egress_ns = c.real(k + "egress_ns", pr.dma_egress, "ns", 0, 1e6, "DMA engine: transaction to frame on the line");
    g.ingress_ns = c.real(k + "ingress_ns", pr.dma_ingress, "ns", 0, 1e6, "DMA engine: frame in to transaction");
  } else {
    g.egress_ns = c.real("olink.gpu.egress_ns", 100, "ns", 0, 1e6,
                         "the GPU's fabric controller: transaction to frame on the line (OLink, NVLink-class)");
    g.ingress_ns = c.real("olink.gpu.ingress_ns", 100, "ns", 0, 1e6,
                          "the GPU's fabric controller: frame in to transaction (OLink, NVLink-class)");
  }
  return g;
}

Stages declare_stages(const Preset& pr, int gpus, const sw::SwitchParams& base, Config& c) {
  const std::string k = std::string("olink.") + pr.name + ".";
  Stages f;
  f.name = pr.name;
  f.period = period_from_mhz(pr.clock_mhz);
  const auto cycles = [&](const char* key, double def, const char* what) {
    const double ns = c.real(k + key, def, "ns", 0, 1e6, what);
    return cycles_for(from_ns(ns), f.period);
  };
  const GpuSide gpu = GpuSide::declare(pr, c);
  const auto gpu_cycles = [&](double ns) { return cycles_for(from_ns(ns), f.period); };
  f.egress = gpu_cycles(gpu.egress_ns);
  f.ingress = gpu_cycles(gpu.ingress_ns);
  f.link = std::max<Cycle>(1, cycles("link_ns", pr.link, "one link: SerDes, FEC, MAC/LLR both ends, 1 m of cable"));
  f.memory = gpu_cycles(gpu.memory_ns);
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
  // All GPUs meet at the uplink, and a frame the switch cannot buffer waits on its link rather
  // than being dropped (PCIe's credits; any preset given an uplink too).
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
  f.path_links = {f.link, f.link};
  return f;
}

PresetPath PresetPath::between(const lingyun::Topology& t, int from, int to) {
  const lingyun::Routes routes(t);
  const std::vector<int> ends = t.endpoints();
  std::vector<std::vector<int>> links_of(t.nodes.size());  // a node's links in file order: its ports
  for (std::size_t l = 0; l < t.links.size(); ++l) {
    links_of[t.links[l].a].push_back(static_cast<int>(l));
    links_of[t.links[l].b].push_back(static_cast<int>(l));
  }
  PresetPath p;
  int node = ends[from], link = links_of[node].at(0);
  while (true) {
    p.cable_m.push_back(t.links[link].cable_m);
    node = t.links[link].a == node ? t.links[link].b : t.links[link].a;
    if (!t.nodes[node].is_switch) break;
    link = links_of[node].at(routes.next[node][to].at(0));
  }
  return p;
}

namespace {

// GPU 0 - switch 0 - ... - switch H-1 - GPU 1 over the path's links; port 0 of each switch faces
// GPU 0, port 1 GPU 1. fwd[i] carries link i's frames toward GPU 1, bwd[i] toward GPU 0.
void build_chain(PresetFabric& f, const PresetPath& path, const olink::EndpointParams& ep, PacketPool& pool,
                 RunContext& ctx) {
  if (f.uplink)
    throw ConfigError(fmt::format("olink.{}.uplink_ns = {:.1f} ns: this fabric follows another's path, which has no shared "
                                  "uplink; allowed: 0", f.name, to_ns(f.uplink * f.period)));
  Clock& clock = f.domain->clock();
  const int links = static_cast<int>(path.cable_m.size()), switches = path.switches();
  f.path_links.clear();
  f.path_switches = switches;
  std::vector<Channel<Packet*>*> fwd(links), bwd(links);
  for (int i = 0; i < links; ++i) {
    // The preset's link holds 1 m of cable: 5 ns for every metre more (or less).
    const double ns = std::max(0.0, to_ns(f.link * f.period) + 5 * (path.cable_m[i] - 1));
    const Cycle cycles = std::max<Cycle>(1, cycles_for(from_ns(ns), f.period));
    f.path_links.push_back(cycles);
    for (auto* dir : {&fwd, &bwd}) {
      f.channels.push_back(std::make_unique<Channel<Packet*>>(
          fmt::format("top.{}.link{}.{}", f.name, i, dir == &fwd ? "fwd" : "bwd"), clock, ChannelSpec{cycles, 0, 1, 2}));
      (*dir)[i] = f.channels.back().get();
    }
  }
  sw::SwitchParams sp = f.sp;
  sp.ports = 2;
  const auto toward = [](const Packet& p) { return p.dst == 0 ? 0 : 1; };
  std::vector<sw::Switch*> s;
  for (int i = 0; i < switches; ++i) {
    auto made = std::make_unique<sw::Switch>(fmt::format("top.{}.sw{}", f.name, i), sp, clock, ctx.stats,
                                             std::vector<Channel<Packet*>*>{fwd[i], bwd[i + 1]},
                                             std::vector<Channel<Packet*>*>{bwd[i], fwd[i + 1]}, toward, ctx.seed + i);
    s.push_back(made.get());
    if (i == 0) f.sw = std::move(made);
    else f.chain.push_back(std::move(made));
  }
  for (int i = 1; i < switches; ++i) {
    fwd[i]->connect(&s[i - 1]->egress_core(1), &s[i]->ingress_core(0));
    bwd[i]->connect(&s[i]->egress_core(0), &s[i - 1]->ingress_core(1));
  }
  for (int g = 0; g < 2; ++g) {
    Channel<Packet*>* to = g == 0 ? fwd[0] : bwd[links - 1];
    Channel<Packet*>* from = g == 0 ? bwd[0] : fwd[links - 1];
    sw::Switch* at = g == 0 ? s.front() : s.back();
    const int port = g == 0 ? 0 : 1;
    const auto bind = [to, from, at, port](Core& nic) {
      to->connect(&nic, &at->ingress_core(port));
      from->connect(&at->egress_core(port), &nic);
    };
    f.endpoints.push_back(std::make_unique<olink::OlinkEndpoint>(fmt::format("{}_gpu{}", f.name, g).c_str(), g, ep, clock,
                                                                 std::vector{link::PortAttachment(*to, *from, nullptr, nullptr, bind)},
                                                                 pool, ctx.stats));
  }
}

}  // namespace

void fix_preset_switch_keys(Config& c, const std::string& owner) {
  for (const char* key : {"switch.ports", "switch.port_gbps", "switch.clock_mhz", "switch.lat.rx_mac", "switch.lat.parse",
                          "switch.lat.lookup", "switch.lat.enqueue", "switch.lat.arbiter", "switch.lat.crossbar",
                          "switch.lat.egress", "switch.lat.tx_mac"})
    c.fix(key, owner);
}

std::unique_ptr<PresetFabric> make_preset_fabric(const Preset& pr, int gpus, const sw::SwitchParams& base,
                                                PacketPool& pool, RunContext& ctx, const std::string& name, bool data,
                                                const PresetPath* path) {
  auto f = std::make_unique<PresetFabric>();
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
  if (path) {
    build_chain(*f, *path, ep, pool, ctx);
    return f;
  }
  // A PCIe switch's packet RAM is a few tens of KB a port, not a network switch's buffer, and
  // its ports take only the posted writes their GPU has credits for: a full switch holds the
  // GPUs' writes back in the GPUs (PCIe flow control) rather than queueing all of them.
  ChannelSpec up_link{f->link, 0, 1, 2};
  if (pr.dma_egress > 0) {  // PCIe, with or without its uplink
    const std::string k = std::string("olink.") + pr.name + ".";
    f->sp.wait_when_full = true;
    // By the rule: a port alone keeps its line busy through the switch and its link's credit loop.
    const std::uint32_t largest = olink::frame_bytes(std::max(ep.max_bytes, ep.segment_bytes));
    const Cycle loop = f->switch_cycles() + 2 * f->link;
    const std::uint64_t rule = loop * f->width + 2ull * largest;
    const std::uint64_t port_bytes = static_cast<std::uint64_t>(ctx.config.integer(
        k + "port_buffer_bytes", 0, "bytes", 0, 1ll << 30,
        fmt::format("packet RAM per switch port, the switch's is ports x this; 0 = by the rule: line rate x (switch + "
                    "link there and back) + 2 largest frames ({} B)", rule)));
    f->sp.buffer_cells = (port_bytes ? port_bytes : rule) * f->sp.ports / f->sp.cell_bytes;
    f->sp.buffer_mib = static_cast<double>(f->sp.buffer_cells * f->sp.cell_bytes) / (1 << 20);
    const std::uint64_t cells = (largest + f->sp.cell_bytes - 1) / f->sp.cell_bytes;
    if (static_cast<double>(cells) > f->sp.dt_alpha * static_cast<double>(f->sp.buffer_cells))
      throw ConfigError(fmt::format("{}port_buffer_bytes = {}{}: {} ports of it cannot admit a {} B frame (a bulk "
                                    "write's segment) under switch.dt_alpha = {:g}; allowed: at least {:.0f}",
                                    k, port_bytes, port_bytes ? "" : fmt::format(" (the rule's {} B)", rule), f->sp.ports,
                                    largest, f->sp.dt_alpha,
                                    std::ceil(static_cast<double>(cells * f->sp.cell_bytes) / f->sp.dt_alpha / f->sp.ports)));
    up_link.credits = static_cast<std::uint32_t>(ctx.config.integer(
        k + "posted_credits", 64, "frames", 1, 1 << 20,
        "posted-request header credits a switch port gives its GPU (Intel Xeon C5500 IIO, x16: 64)"));
    up_link.credit_latency = f->link;  // an UpdateFC comes back over the link
  }
  std::vector<Channel<Packet*>*> in(gpus), out(gpus);
  for (int g = 0; g < gpus; ++g) {
    f->channels.push_back(std::make_unique<Channel<Packet*>>(fmt::format("top.{}.up{}", f->name, g), clock, up_link));
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
    Channel<Packet*>* to = in[g];
    Channel<Packet*>* from = out[g];
    const auto bind = [to, from, up = f->sw.get(), down, g](Core& nic) {
      to->connect(&nic, &up->ingress_core(g));
      from->connect(&down->egress_core(g), &nic);
    };
    f->endpoints.push_back(std::make_unique<OlinkEndpoint>(fmt::format("{}_gpu{}", f->name, g).c_str(), g, ep, clock,
                                                           std::vector{link::PortAttachment(*to, *from, nullptr, nullptr, bind)},
                                                           pool, ctx.stats));
  }
  return f;
}

}  // namespace xy::olink_tb
