// What a run of a composed fabric offers its user, the same for every scenario that builds one:
// every port's and switch's signals to the waves, every port's frames to --pcap (by port name,
// --pcap-scope selecting), and the fabric as built to results.json's `fabrics`.
#pragma once
#include "sys/lingyun/fabric.hpp"
#include "tb/lib/scenario.hpp"

namespace xy {

inline void offer_fabric(RunContext& ctx, lingyun::Fabric& fabric, Clock& core, Clock& phy) {
  fabric.probe(ctx.waves, core, phy);
  fabric.capture([&ctx](const std::string& port) { return ctx.capture.for_link(port); });
  ctx.fabrics.push_back(fabric.description());
}

}  // namespace xy
