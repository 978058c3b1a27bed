// The OLink presets' stages and the cycle-level fabric of one (presets.hpp).
#include "tb/scenarios/olink/presets.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace xy::olink_tb {

using olink::EndpointParams;
using olink::OlinkEndpoint;

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

void fix_preset_switch_keys(Config& c, const std::string& owner) {
  for (const char* key : {"switch.ports", "switch.port_gbps", "switch.clock_mhz", "switch.lat.rx_mac", "switch.lat.parse",
                          "switch.lat.lookup", "switch.lat.enqueue", "switch.lat.arbiter", "switch.lat.crossbar",
                          "switch.lat.egress", "switch.lat.tx_mac"})
    c.fix(key, owner);
}

std::unique_ptr<PresetFabric> make_preset_fabric(const Preset& pr, int gpus, const sw::SwitchParams& base,
                                                PacketPool& pool, RunContext& ctx, const std::string& name, bool data) {
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
    Channel<Packet*>* to = in[g];
    Channel<Packet*>* from = out[g];
    const auto bind = [to, from, up = f->sw.get(), down, g](Core& nic) {
      to->connect(&nic, &up->ingress_core(g));
      from->connect(&down->egress_core(g), &nic);
    };
    f->endpoints.push_back(std::make_unique<OlinkEndpoint>(fmt::format("{}_gpu{}", f->name, g).c_str(), g, ep, clock,
                                                           link::PortAttachment(*to, *from, nullptr, nullptr, bind),
                                                           pool, ctx.stats));
  }
  return f;
}

}  // namespace xy::olink_tb
