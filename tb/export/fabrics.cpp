#include "tb/export/fabrics.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "tb/export/formats.hpp"
#include "tb/scenarios/lingyun/topologies.hpp"

namespace xy::exports {
namespace {

// The run's effective parameters, as given to it.
Config config_of(const nlohmann::json& config) {
  Config c;
  for (const auto& [key, value] : config.items())
    c.set(key, value.is_string() ? value.get<std::string>() : value.dump(), "its config");
  return c;
}

// The fabric a scenario builds: lingyun-fec-llr's and lingyun-incast's own, or `topology`.
lingyun::Topology topology_of(const std::string& scenario, Config& c, bool has_topology) {
  if (scenario == "lingyun-fec-llr") return lingyun_fec_llr_topology(c);
  if (scenario == "lingyun-incast") return lingyun_incast_topology(c);
  if (!has_topology)
    throw ConfigError(fmt::format("scenario {} builds no fabric of composed Lingyun ports (no topology in its config); "
                                  "allowed: runs of lingyun-fec-llr, lingyun-incast, olink-latency, switch-uniform "
                                  "--set topology=...",
                                  scenario));
  const auto t = lingyun::Topology::declare(c, 2, true);
  if (!t)
    throw ConfigError("topology = bare: the bare switch core has no fabric of composed ports; allowed: runs with "
                      "--set topology=single|leaf-spine|dual-plane|FILE");
  return *t;
}

// What a scenario set over port.* for one fabric: lingyun-fec-llr's designs name their FEC and
// LLR in the summary; olink-latency's composed fabrics are named olink-<fec>.
lingyun::PortParams ports_of(const lingyun::PortParams& common, const std::string& scenario,
                             const std::string& fabric, const nlohmann::json& summary) {
  lingyun::PortParams p = common;
  if (scenario == "lingyun-fec-llr") {
    p.phy = common.phy.with_fec(summary.at(fabric).at("fec").get<std::string>());
    p.llr = summary.at(fabric).at("llr").get<bool>();
  }
  if (scenario == "olink-latency") p.phy = common.phy.with_fec(fabric.substr(fabric.find('-') + 1));
  return p;
}

// The fabrics in the stats: every prefix with a PHY at the first endpoint's first port.
std::vector<std::string> stats_prefixes(const nlohmann::json& stats, const std::string& endpoint) {
  const std::string tail = "." + endpoint + ".port0.phy.frame_latency";
  std::vector<std::string> out;
  for (const auto& [key, value] : stats.items())
    if (key.size() > tail.size() && key.compare(key.size() - tail.size(), tail.size(), tail) == 0)
      out.push_back(key.substr(0, key.size() - tail.size()));
  return out;
}

std::vector<FabricDescription> fabrics_of(const Input& in) {
  const nlohmann::json& doc = in.doc;
  if (doc.is_array())
    throw ConfigError("a sweep's points carry no config or stats: export a point's OUT/points/NNNN/results.json");
  for (const char* key : {"scenario", "seed", "config", "stats", "summary"})
    if (!doc.is_object() || !doc.contains(key)) throw ConfigError(fmt::format("no '{}': not a results.json", key));
  const auto scenario = doc["scenario"].get<std::string>();
  Config c = config_of(doc["config"]);
  const sw::SwitchParams switches = sw::SwitchParams::declare(c, "switch");
  const lingyun::PortParams common = lingyun::PortParams::declare(c, switches.vcs);
  const lingyun::Topology topology = topology_of(scenario, c, doc["config"].contains("topology"));
  const lingyun::Routes routes(topology);
  const std::string first = topology.nodes[topology.endpoints()[0]].name;
  const std::vector<std::string> prefixes = stats_prefixes(doc["stats"], first);
  if (prefixes.empty())
    throw ConfigError(
        fmt::format("no fabric of composed ports in its stats (no <fabric>.{}.port0.phy.frame_latency)", first));
  std::vector<FabricDescription> out;
  for (const std::string& prefix : prefixes) {
    FabricDescription f;
    f.input = in.path;
    f.scenario = scenario;
    f.name = prefix.substr(prefix.rfind('.') + 1);
    f.seed = doc["seed"].get<std::uint64_t>();
    f.xysim_version = doc.value("xysim_version", "");
    f.topology = topology;
    f.switches = switches;
    f.line_gbps = common.line_gbps();
    f.stats = &doc["stats"];
    f.stats_prefix = prefix;
    const lingyun::PortParams fabric_ports = ports_of(common, scenario, f.name, doc["summary"]);
    for (std::size_t i = 0; i < topology.links.size(); ++i) {
      const auto& l = topology.links[i];
      FabricDescription::Link link;
      link.ports = lingyun::link_ports(fabric_ports, l).for_link(l.cable_m);
      link.name = topology.nodes[l.a].name + " - " + topology.nodes[l.b].name;
      const phy::PhyParams& q = link.ports.phy;
      link.phy_cycles = q.fixed_cycles();
      link.phy_ns = to_ns(link.phy_cycles * q.period());
      // Each direction's PHY measured frames from in to out: never below the fixed latency, and
      // within one codeword group of it (a small frame waits at most that for its group).
      for (int side = 0; side < 2; ++side) {
        const int node = side ? l.b : l.a;
        link.port_stats[side] = fmt::format("{}.{}.port{}", prefix, topology.nodes[node].name, routes.port_of[i][side]);
        const auto it = f.stats->find(link.port_stats[side] + ".phy.frame_latency");
        const nlohmann::json* measured = it == f.stats->end() ? nullptr : &*it;
        if (!measured)
          throw ConfigError(fmt::format("{}: link {}: no stats of its port at {} in the run: the topology rebuilt "
                                        "from its config is not the one it ran (a topology file changed since?)",
                                        f.name, link.name, topology.nodes[node].name));
        if (measured->value("count", 0) == 0) continue;
        const auto min = static_cast<Cycle>(measured->at("min_cycles").get<double>());
        if (min < link.phy_cycles || min >= link.phy_cycles + q.group_cycles())
          throw ConfigError(fmt::format("{}: link {}: the run measured {} PHY cycles at least, the rebuilt link takes "
                                        "{}: not the link it ran (a topology file changed since?)",
                                        f.name, link.name, min, link.phy_cycles));
      }
      f.links.push_back(std::move(link));
    }
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace

const nlohmann::json* FabricDescription::stat(int node, const std::string& what) const {
  const auto it = stats->find(fmt::format("{}.{}.{}", stats_prefix, topology.nodes[node].name, what));
  return it == stats->end() ? nullptr : &*it;
}

std::uint64_t FabricDescription::link_count(const Link& link, const std::string& what) const {
  std::uint64_t n = 0;
  for (const std::string& port : link.port_stats)
    if (const auto it = stats->find(port + "." + what); it != stats->end()) n += it->at("value").get<std::uint64_t>();
  return n;
}

double FabricDescription::least_switch_ns(const std::vector<int>& switches) const {
  double ns = 0;
  for (int s : switches)
    if (const nlohmann::json* m = stat(s, "port_to_port"); m && m->value("count", 0) > 0)
      ns = ns > 0 ? std::min(ns, m->at("min_ns").get<double>()) : m->at("min_ns").get<double>();
  return ns;
}

double FabricDescription::buffer_mib() const {
  return static_cast<double>(switches.buffer_cells * switches.cell_bytes) / (1 << 20);
}

void FabricDescription::require_one_link_per_endpoint(const std::string& why_one) const {
  for (int e : topology.endpoints())
    if (topology.nodes[e].ports != 1)
      throw ConfigError(
          fmt::format("endpoint {} has {} links: {}", topology.nodes[e].name, topology.nodes[e].ports, why_one));
}

std::vector<FabricDescription> fabrics_of(const std::vector<Input>& inputs) {
  points_of(inputs);  // each a run that passed, of this schema_version
  std::vector<FabricDescription> out;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    for (FabricDescription& f : naming(inputs[k].path, [&] { return fabrics_of(inputs[k]); })) {
      f.dir = inputs.size() > 1 ? fmt::format("{}/{}", k + 1, f.name) : f.name;
      out.push_back(std::move(f));
    }
  }
  return out;
}

}  // namespace xy::exports
