// The fabrics of composed Lingyun ports a run built, read from its results.json for the exporters
// of network simulators (formats.hpp): each fabric as the run described it (`fabrics`: topology,
// each link's FEC, LLR, flow control, cable and ports), the ports and switches all share from the
// run's config through their own declarations (PortParams, SwitchParams); every link's PHY
// latency is held against the latencies the run measured at its ports.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "sys/lingyun/fabric.hpp"
#include "hw/switch/switch.hpp"
#include "tb/export/export.hpp"

namespace xy::exports {

// One fabric of composed ports that a run built, as the exporters read it: its topology, links
// and switches, and the run's stats of it (the model itself is lingyun::Fabric).
struct FabricDescription {
  struct Link {
    lingyun::PortParams ports;  // this link's own (link_ports), its cable set
    std::string name;           // "leaf0 - spine0"
    // Fixed PHY latency, one way: encoder pipeline + PMA TX, cable (5 ns/m), PMA RX and deskew +
    // gathering the codeword group + decoder pipeline, in PHY cycles (the cycle contract of
    // hw/phy/phy.hpp); a frame's serialisation and queueing are not in it.
    Cycle phy_cycles = 0;
    double phy_ns = 0;
    std::array<std::string, 2> port_stats;  // each end's port in the run's stats: top.rs544.leaf0.port1
  };
  std::string input, scenario, name;  // input path; the fabric's name in the run (rs544, load1, ...)
  std::uint64_t seed = 0;
  std::string xysim_version;
  std::string dir;  // where its files go: its name, under the input's number when there are several
  lingyun::Topology topology;
  sw::SwitchParams switches;
  std::vector<Link> links;  // in topology order
  double line_gbps = 0;     // every port's MAC data rate
  const nlohmann::json* stats = nullptr;
  std::string stats_prefix;  // top.<name>

  std::string origin() const { return input + ": " + name; }  // for messages
  // The run's stat <prefix>.<node>.<what>, or nullptr.
  const nlohmann::json* stat(int node, const std::string& what) const;
  // A counter of both ends' ports of a link, summed (phy.fec.codewords: both directions).
  std::uint64_t link_count(const Link& link, const std::string& what) const;
  // The least port-to-port latency the run measured through these switches: their pipeline
  // without queueing; 0 when no frame crossed them.
  double least_switch_ns(const std::vector<int>& switches) const;
  double buffer_mib() const;  // the shared buffer of each switch
  // Throws ConfigError for an endpoint with several links (dual-plane); `why_one`: whose hosts
  // have one.
  void require_one_link_per_endpoint(const std::string& why_one) const;
};

// make(), its ConfigError or a malformed input's JSON error rethrown as one ConfigError line that
// starts with `origin` (an input path, or a fabric's origin()).
template <class Make>
auto naming(const std::string& origin, Make&& make) -> decltype(make()) {
  try {
    return make();
  } catch (const ConfigError& e) {
    throw ConfigError(origin + ": " + e.what());
  } catch (const nlohmann::json::exception& e) {
    throw ConfigError(origin + ": malformed: " + e.what());
  }
}

// Every fabric of every input, in order. Throws ConfigError, one line naming the input and what it
// lacks: not a results.json of a run that passed, or a run without a fabric of composed ports (no
// `fabrics`).
std::vector<FabricDescription> fabrics_of(const std::vector<Input>& inputs);

}  // namespace xy::exports
