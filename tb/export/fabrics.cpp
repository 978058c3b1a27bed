#include "tb/export/fabrics.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "tb/export/formats.hpp"
#include "hw/link/flow_control.hpp"

namespace xy::exports {
namespace {

// The run's effective parameters, as given to it.
Config config_of(const nlohmann::json& config) {
  Config c;
  for (const auto& [key, value] : config.items())
    c.set(key, value.is_string() ? value.get<std::string>() : value.dump(), "its config");
  return c;
}

// The topology of a fabric as the run described it (lingyun::Fabric::description): its nodes,
// and its links with the FEC, LLR and flow control their ports ran, so that link_ports() gives
// each link the ports it had whatever set them (port.*, a topology file, the scenario).
lingyun::Topology topology_of(const nlohmann::json& fabric) {
  lingyun::Topology t;
  t.name = fabric.at("topology").get<std::string>();
  for (const auto& n : fabric.at("nodes")) {
    t.nodes.push_back({n.at("name").get<std::string>(), n.at("switch").get<bool>(), n.at("ports").get<int>()});
    t.nodes.back().buffer_mib = n.value("buffer_mib", 0.0);
  }
  for (const auto& l : fabric.at("links")) {
    lingyun::Topology::Link link;
    link.a = l.at("a").get<int>();
    link.b = l.at("b").get<int>();
    link.cable_m = l.at("cable_m").get<double>();
    link.where = l.at("where").get<std::string>();
    if (l.contains("otn"))
      throw ConfigError(fmt::format("fabrics: link {} is an OTN line: the exports carry links of PHYs only", link.where));
    link.fec = l.at("fec").get<std::string>();
    link.fc = l.at("fc").get<std::string>();
    link.llr = l.at("llr").get<bool>();
    for (int end : {link.a, link.b})
      if (end < 0 || end >= static_cast<int>(t.nodes.size()))
        throw ConfigError(fmt::format("fabrics: link {}: node {} of {}", link.where, end, t.nodes.size()));
    const auto& modes = link::fc_mode_names();
    if (std::find(modes.begin(), modes.end(), *link.fc) == modes.end())
      throw ConfigError(fmt::format("fabrics: link {}: fc '{}' is none of {}", link.where, *link.fc,
                                    fmt::join(link::fc_mode_names(), ", ")));
    t.links.push_back(std::move(link));
  }
  return t;
}

std::vector<FabricDescription> fabrics_of(const Input& in) {
  const nlohmann::json& doc = in.doc;
  if (doc.is_array())
    throw ConfigError("a sweep's points carry no config or stats: export a point's OUT/points/NNNN/results.json");
  for (const char* key : {"scenario", "seed", "config", "stats", "summary"})
    if (!doc.is_object() || !doc.contains(key)) throw ConfigError(fmt::format("no '{}': not a results.json", key));
  const auto scenario = doc["scenario"].get<std::string>();
  if (!doc.contains("fabrics")) {
    if (doc["config"].value("topology", "") == "bare")
      throw ConfigError("topology = bare: the bare switch core has no fabric of composed ports; allowed: runs with "
                        "--set topology=single|leaf-spine|dual-plane|FILE");
    throw ConfigError(fmt::format("scenario {} builds no fabric of composed Lingyun ports (its results.json has no "
                                  "'fabrics')",
                                  scenario));
  }
  // The ports and switches every fabric shares, as the run read them; what a fabric or a link set
  // for itself is in its description.
  Config c = config_of(doc["config"]);
  const sw::SwitchParams switches = sw::SwitchParams::declare(c, "switch");
  const lingyun::PortParams common = lingyun::PortParams::declare(c, switches.vcs);
  std::vector<FabricDescription> out;
  for (const nlohmann::json& described : doc["fabrics"]) {
    FabricDescription f;
    f.input = in.path;
    f.scenario = scenario;
    f.stats_prefix = described.at("prefix").get<std::string>();
    f.name = f.stats_prefix.substr(f.stats_prefix.rfind('.') + 1);
    f.seed = doc["seed"].get<std::uint64_t>();
    f.xysim_version = doc.value("xysim_version", "");
    f.topology = naming("fabric " + f.name, [&] { return topology_of(described); });
    f.switches = switches;
    f.line_gbps = common.line_gbps();
    f.stats = &doc["stats"];
    const lingyun::Topology& topology = f.topology;
    const nlohmann::json& ports = described.at("links");
    for (std::size_t i = 0; i < topology.links.size(); ++i) {
      const auto& l = topology.links[i];
      FabricDescription::Link link;
      link.ports = lingyun::link_ports(common, l).for_link(l.cable_m);
      link.name = topology.nodes[l.a].name + " - " + topology.nodes[l.b].name;
      const phy::PhyParams& q = link.ports.phy;
      link.phy_cycles = q.fixed_cycles();
      link.phy_ns = to_ns(link.phy_cycles * q.period());
      // Each direction's PHY measured frames from in to out: never below the fixed latency, and
      // within one codeword group of it (a small frame waits at most that for its group).
      for (int side = 0; side < 2; ++side) {
        link.port_stats[side] = ports[i].at("ports").at(side).get<std::string>();
        const auto it = f.stats->find(link.port_stats[side] + ".phy.frame_latency");
        if (it == f.stats->end())
          throw ConfigError(fmt::format("{}: link {}: no stats of its port {} in the run", f.name, link.name,
                                        link.port_stats[side]));
        const nlohmann::json& measured = *it;
        if (measured.value("count", 0) == 0) continue;
        const auto min = static_cast<Cycle>(measured.at("min_cycles").get<double>());
        if (min < link.phy_cycles || min >= link.phy_cycles + q.group_cycles())
          throw ConfigError(fmt::format("{}: link {}: the run measured {} PHY cycles at least, the link it describes "
                                        "takes {}: not the link it ran",
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
