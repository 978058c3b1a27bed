// An OLink fabric of composed Lingyun ports, for the OLink scenarios that measure one
// (olink-latency, olink-message).
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sys/lingyun/fabric.hpp"
#include "tb/scenarios/olink/presets.hpp"

namespace xy::olink_tb {

// An OLink fabric of composed Lingyun ports (sys/lingyun): GPUs on `topology`, the switches'
// core clock for GPUs and switches alike, the GPU NIC's stages from the preset. Every frame's
// stage times are summed per direction: requests (arriving at GPU 1) and responses (at GPU 0).
struct ComposedFabric {
  std::string name;
  Time period = 0;
  olink::EndpointParams ep;
  sw::SwitchParams sp;
  std::unique_ptr<ClockDomain> clocks;  // the GPUs' and switch cores' clock (0), the PHYs' (1)
  std::unique_ptr<lingyun::Fabric> fabric;
  std::vector<std::unique_ptr<olink::OlinkEndpoint>> endpoints;
  std::array<Time, lingyun::kStages> path[2]{};  // 0: request, 1: response
  std::uint64_t frames[2]{};
  std::uint64_t unmeasured[2]{};  // frames each way left out of path and frames (the bring-up's)
  std::vector<std::pair<Time, Time>> arrivals[2];  // every frame: onto the sender's line, off the receiver's
};

// Declares the GPU's side (GpuSide: olink.gpu.*) and builds the preset's
// fabric on `t` with the ports of `port` and the FEC `fec`, its endpoints attached, each with a
// port on every plane. Every frame's arrival and stage times are kept (path, arrivals), and the
// memories keep what is written; `stream`: neither, for streams of Stores nothing reads back.
std::unique_ptr<ComposedFabric> make_composed(const Preset& pr, const std::string& fec, const lingyun::Topology& t,
                                              const sw::SwitchParams& base, const lingyun::PortParams& port,
                                              PacketPool& pool, RunContext& ctx, bool stream = false);

// The memory make_composed's fabric on `t` takes with its endpoints, estimated before it is
// built: Fabric::memory_bytes at no load (OLink's scenarios here send one message or load at a
// time).
double composed_memory_bytes(const lingyun::Topology& t, const lingyun::PortParams& port, const std::string& fec);

// When the watchdog fires: the links the fabric cannot bring up and the frames its links gave
// up on (OLink has no end-to-end recovery to resend them), named with the fabric; "" when none.
std::string stall(const ComposedFabric& f);
// A link of the fabric that can never carry traffic (Fabric::link_fault), named with the fabric.
std::string fault(ComposedFabric& f);

}  // namespace xy::olink_tb
