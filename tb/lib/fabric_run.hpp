// What a run of a composed fabric offers its user, the same for every scenario that builds one:
// every port's and switch's signals to the waves, every port's frames to --pcap (by port name,
// --pcap-scope selecting), and the fabric as built to results.json's `fabrics`.
#pragma once
#include <fmt/format.h>

#include "sys/lingyun/fabric.hpp"
#include "tb/lib/scenario.hpp"

namespace xy {

inline void offer_fabric(RunContext& ctx, lingyun::Fabric& fabric, Clock& core, Clock& phy) {
  fabric.probe(ctx.waves, core, phy);
  fabric.capture([&ctx](const std::string& port) { return ctx.capture.for_link(port); });
  ctx.fabrics.push_back(fabric.description());
  const nlohmann::json& links = ctx.fabrics.back()["links"];
  for (std::size_t i = 0; i < fabric.links().size(); ++i) {
    ctx.reach_at_least(fabric.links()[i]->fixed_latency(),
                       fmt::format("link {} ({}: cable_m = {}, its line's pipelines and the cable)",
                                   fabric.links()[i]->side_name(0), links[i]["where"].get<std::string>(),
                                   links[i]["cable_m"].get<double>()));
  }
}

}  // namespace xy
