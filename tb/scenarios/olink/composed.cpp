// The OLink fabric of composed Lingyun ports (composed.hpp).
#include "tb/scenarios/olink/composed.hpp"

#include <fmt/format.h>

#include "tb/lib/fabric_run.hpp"

namespace xy::olink_tb {

using olink::OlinkEndpoint;

std::unique_ptr<ComposedFabric> make_composed(const Preset& pr, const std::string& fec, const lingyun::Topology& t,
                                              const sw::SwitchParams& base, const lingyun::PortParams& port,
                                              PacketPool& pool, RunContext& ctx, bool stream) {
  auto f = std::make_unique<ComposedFabric>();
  f->name = pr.name;
  f->sp = base;
  f->period = base.period();
  const GpuSide gpu = GpuSide::declare(pr, ctx.config);
  const auto cycles = [&](double ns) { return cycles_for(from_ns(ns), f->period); };
  f->ep.gpus = static_cast<std::uint32_t>(t.endpoints().size());
  f->ep.width = base.port_bytes_per_cycle();
  // The HBM keeps up with all of a GPU's lines, as the presets' with their one (same memory).
  f->ep.memory_width = f->ep.width * static_cast<std::uint32_t>(t.nodes[t.endpoints().front()].ports);
  f->ep.egress = cycles(gpu.egress_ns);
  f->ep.ingress = cycles(gpu.ingress_ns);
  f->ep.memory = cycles(gpu.memory_ns);
  f->ep.data = !stream;
  lingyun::PortParams pp = port;
  pp.phy = port.phy.with_fec(fec);
  f->clocks = fabric_clocks("olink_" + f->name, f->period, pp.phy.period());
  Clock& clock = f->clocks->clock(0);
  const std::string prefix = "top." + f->name;
  f->fabric = std::make_unique<lingyun::Fabric>(prefix, t, base, pp, clock, f->clocks->clock(1), clock, ctx.stats, ctx.seed,
                                                pool, false);
  offer_fabric(ctx, *f->fabric, clock, f->clocks->clock(1));
  for (std::uint32_t g = 0; g < f->ep.gpus; ++g) {
    std::vector<link::PortAttachment> ports;  // one per plane
    for (int k = 0; k < f->fabric->ports_of(static_cast<int>(g)); ++k) ports.push_back(f->fabric->port(static_cast<int>(g), k));
    f->endpoints.push_back(std::make_unique<OlinkEndpoint>(fmt::format("{}_gpu{}", f->name, g).c_str(), g, f->ep, clock,
                                                           std::move(ports), pool, ctx.stats));
    if (stream) continue;
    ComposedFabric* fp = f.get();
    f->endpoints.back()->on_arrival([fp, g](const Packet& p, Time now) {
      const int dir = g == 0 ? 1 : 0;  // GPU 0 issues the loads, GPU 1 answers them
      fp->arrivals[dir].emplace_back(p.created, now);
      if (fp->unmeasured[dir]) {
        --fp->unmeasured[dir];
        return;
      }
      for (int s = 0; s < lingyun::kStages; ++s) fp->path[dir][s] += p.stage_time[s];
      ++fp->frames[dir];
    });
  }
  return f;
}

double composed_memory_bytes(const lingyun::Topology& t, const lingyun::PortParams& port, const std::string& fec) {
  lingyun::PortParams pp = port;
  pp.phy = port.phy.with_fec(fec);
  // The endpoints (NIC, memory target with the pages a message touches) are within what the
  // fabric's estimate leaves over: olink-message's peak RSS on leaf-spine at 64 to 1024 endpoints
  // is 1 to 4 % below it alone.
  return lingyun::Fabric::memory_bytes(t, pp, 0);
}

std::string stall(const ComposedFabric& f) {
  std::string down = f.fabric->stall(), lost = f.fabric->losses();
  if (down.empty() && lost.empty()) return "";
  return fmt::format("{}: {}{}{}", f.name, down, down.empty() || lost.empty() ? "" : "; ", lost);
}

std::string fault(ComposedFabric& f) {
  const std::string dead = f.fabric->link_fault(sim_now());
  return dead.empty() ? "" : fmt::format("{}: {}", f.name, dead);
}

}  // namespace xy::olink_tb
