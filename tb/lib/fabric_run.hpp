// What a run of a composed fabric offers its user, the same for every scenario that builds one:
// every port's and switch's signals to the waves, every port's frames to --pcap (by port name,
// --pcap-scope selecting), and the fabric as built to results.json's `fabrics`.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "kernel/clock_domain.hpp"
#include "sys/lingyun/fabric.hpp"
#include "tb/lib/scenario.hpp"

namespace xy {

// A composed fabric's two clocks in one domain: the cores' (clock 0, "<name>.core") and the
// PHYs' (clock 1, "<name>.phy"), which talk every few cycles.
inline std::unique_ptr<ClockDomain> fabric_clocks(const std::string& name, Time core_period, Time phy_period) {
  return std::make_unique<ClockDomain>(name.c_str(),
                                       std::vector<ClockDomain::ClockSpec>{{"core", core_period}, {"phy", phy_period}});
}

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
