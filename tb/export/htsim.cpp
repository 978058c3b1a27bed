// htsim's fat-tree topology file, as FatTreeTopology::load (sim/datacenter/fat_tree_topology.cpp
// of htsim) reads it: a header (Nodes, Tiers, Podsize), then per tier its downlink speed (Gb/s),
// radices, oversubscription, bundle size, downlink and switch latencies (ns), each an integer read
// with stoi, one space between key and value; lines starting with '#' are skipped.
#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "tb/export/fabrics.hpp"
#include "tb/export/formats.hpp"

namespace xy::exports {
namespace {

// A fabric seen as htsim's two-tier fat tree: ToRs (leaves) with the hosts, aggregation switches
// (spines) above them, one pod.
struct LeafSpine {
  std::vector<int> leaves, spines;         // node indices, in topology order
  std::vector<std::vector<int>> hosts;     // per leaf, its endpoints in link order
  int down = 0, bundle = 0;                // hosts per leaf; links between a leaf and a spine
  std::vector<int> host_links, up_links;   // link indices
};

LeafSpine leaf_spine(const FabricDescription& f) {
  const lingyun::Topology& t = f.topology;
  LeafSpine ls;
  f.require_one_link_per_endpoint("htsim's fat tree gives every host one");
  const auto host_link = [&](const lingyun::Topology::Link& l) {
    return !t.nodes[l.a].is_switch || !t.nodes[l.b].is_switch;
  };
  std::vector<bool> has_host(t.nodes.size(), false);
  for (const auto& l : t.links)
    if (host_link(l)) has_host[l.a] = has_host[l.b] = true;
  std::vector<int> leaf_of(t.nodes.size(), -1);
  for (int s : t.switches()) {
    if (!has_host[s]) {
      ls.spines.push_back(s);
      continue;
    }
    leaf_of[s] = static_cast<int>(ls.leaves.size());
    ls.leaves.push_back(s);
  }
  if (ls.spines.empty())
    throw ConfigError(fmt::format("topology {}: one tier of switches; htsim's .topo describes two or three", t.name));
  ls.hosts.resize(ls.leaves.size());
  std::map<std::pair<int, int>, int> bundles;  // (leaf, spine) -> links
  for (int i = 0; i < static_cast<int>(t.links.size()); ++i) {
    const auto& l = t.links[i];
    const bool a_leaf = leaf_of[l.a] >= 0, b_leaf = leaf_of[l.b] >= 0;
    if (host_link(l)) {
      const int host = t.nodes[l.a].is_switch ? l.b : l.a;
      ls.hosts[leaf_of[host == l.a ? l.b : l.a]].push_back(host);
      ls.host_links.push_back(i);
    } else if (a_leaf != b_leaf) {
      ++bundles[a_leaf ? std::pair{l.a, l.b} : std::pair{l.b, l.a}];
      ls.up_links.push_back(i);
    } else {
      throw ConfigError(fmt::format("{}: link {} joins two {}: htsim's two tiers link leaves to spines only", l.where,
                                    f.links[i].name, a_leaf ? "leaves" : "spines"));
    }
  }
  ls.down = static_cast<int>(ls.hosts[0].size());
  const std::pair<int, int> first = bundles.empty() ? std::pair{ls.leaves[0], ls.spines[0]} : bundles.begin()->first;
  ls.bundle = bundles.empty() ? 0 : bundles.begin()->second;
  for (std::size_t k = 0; k < ls.leaves.size(); ++k)
    if (static_cast<int>(ls.hosts[k].size()) != ls.down)
      throw ConfigError(fmt::format("leaf {} has {} endpoints and leaf {} has {}: htsim's ToRs all have Radix_Down "
                                    "hosts",
                                    t.nodes[ls.leaves[0]].name, ls.down, t.nodes[ls.leaves[k]].name,
                                    ls.hosts[k].size()));
  for (int leaf : ls.leaves)
    for (int spine : ls.spines) {
      const auto it = bundles.find({leaf, spine});
      const int n = it == bundles.end() ? 0 : it->second;
      if (n == 0 || n != ls.bundle)
        throw ConfigError(fmt::format("{} links between {} and {} but {} between {} and {}: htsim links every ToR to "
                                      "every spine by a bundle of the same size, at least one",
                                      n, t.nodes[leaf].name, t.nodes[spine].name, ls.bundle, t.nodes[first.first].name,
                                      t.nodes[first.second].name));
    }
  const int up = ls.bundle * static_cast<int>(ls.spines.size());
  if (ls.down % up)
    throw ConfigError(fmt::format("{} endpoints over {} uplinks a leaf: htsim's Oversubscribed is a whole ratio "
                                  "(Radix_Down / Radix_Up)",
                                  ls.down, up));
  return ls;
}

// The one latency, in whole ns, of a tier's links (htsim has one a tier).
long tier_latency_ns(const FabricDescription& f, const std::vector<int>& links) {
  const long ns = std::lround(f.links[links[0]].phy_ns);
  for (int i : links)
    if (std::lround(f.links[i].phy_ns) != ns)
      throw ConfigError(fmt::format("links {} ({:.3f} ns) and {} ({:.3f} ns) differ: htsim has one latency a tier",
                                    f.links[links[0]].name, f.links[links[0]].phy_ns, f.links[i].name,
                                    f.links[i].phy_ns));
  return ns;
}

// The least port-to-port latency the run measured through a tier's switches (htsim queues at its
// ports itself).
double tier_switch_ns(const FabricDescription& f, const std::vector<int>& switches) {
  const double ns = f.least_switch_ns(switches);
  if (ns == 0)
    throw ConfigError(fmt::format("no frame crossed switch {} or its tier in the run: no switch latency measured",
                                  f.topology.nodes[switches[0]].name));
  return ns;
}

std::string topo(const FabricDescription& f) {
  const LeafSpine ls = leaf_spine(f);
  const auto& t = f.topology;
  const int up = ls.bundle * static_cast<int>(ls.spines.size());
  const int hosts = static_cast<int>(t.endpoints().size());
  const long host_ns = tier_latency_ns(f, ls.host_links), spine_ns = tier_latency_ns(f, ls.up_links);
  const double leaf_switch = tier_switch_ns(f, ls.leaves), spine_switch = tier_switch_ns(f, ls.spines);
  const auto& host_link = f.links[ls.host_links[0]];
  const auto& up_link = f.links[ls.up_links[0]];
  std::string s = fmt::format(
      "# htsim fat-tree topology (FatTreeTopology::load) exported by xysim {} from {}:\n"
      "# scenario {}, seed {}, fabric {}; topology {}.\n"
      "# htsim reads integers: Gb/s and ns below are rounded to the nearest.\n"
      "# Downlink_speed_Gbps: the ports' MAC data rate, {:.3f} Gb/s (configured: port.lanes x port.lane_gbps less FEC "
      "and transcoding).\n"
      "# Downlink_Latency_ns: a link's fixed PHY latency one way (MAC/PCS and FEC encoder pipelines, PMA TX, 5 ns/m "
      "of cable, PMA RX and deskew, codeword gathering, FEC decoder and PCS/MAC pipelines, in PHY cycles): {:.3f} ns host-leaf ({} m, {}), {:.3f} ns leaf-spine "
      "({} m, {}); configured, and within a codeword group of the least PHY latency the run measured at every "
      "port (checked).\n"
      "# Switch_Latency_ns: the least port-to-port latency the run measured through the tier's switches (pipeline, no "
      "queueing): {:.2f} ns leaves, {:.2f} ns spines.\n"
      "# Not here: the shared switch buffer ({} MiB; htsim sizes each port's queue with -q, and Queue_Down/Queue_Up "
      "lines would clash with that: 'Duplicate queue_down setting'), link flow control and LLR (htsim's queue types), "
      "the MAC and clock-crossing stages (a few ns a hop, measured).\n",
      f.xysim_version, f.input, f.scenario, f.seed, f.name, t.name, f.line_gbps, host_link.phy_ns,
      t.links[ls.host_links[0]].cable_m, host_link.ports.phy.fec, up_link.phy_ns, t.links[ls.up_links[0]].cable_m,
      up_link.ports.phy.fec, leaf_switch, spine_switch,
      f.buffer_mib());
  for (std::size_t k = 0; k < ls.leaves.size(); ++k) {
    std::vector<std::string> names;
    for (int e : ls.hosts[k]) names.push_back(t.nodes[e].name);
    s += fmt::format("# ToR {} = {}: hosts {}..{} = {}\n", k, t.nodes[ls.leaves[k]].name, k * ls.down,
                     (k + 1) * ls.down - 1, fmt::join(names, " "));
  }
  for (std::size_t k = 0; k < ls.spines.size(); ++k) s += fmt::format("# Agg {} = {}\n", k, t.nodes[ls.spines[k]].name);
  const long gbps = std::lround(f.line_gbps);
  s += fmt::format("Nodes {}\nTiers 2\nPodsize {}\n\n", hosts, hosts);
  s += fmt::format("Tier 0\nDownlink_speed_Gbps {}\nRadix_Down {}\nRadix_Up {}\nOversubscribed {}\n"
                   "Downlink_Latency_ns {}\nSwitch_Latency_ns {}\n\n",
                   gbps, ls.down, up, ls.down / up, host_ns, std::lround(leaf_switch));
  s += fmt::format("Tier 1\nDownlink_speed_Gbps {}\nRadix_Down {}\nBundle {}\nDownlink_Latency_ns {}\n"
                   "Switch_Latency_ns {}\n",
                   gbps, ls.bundle * static_cast<int>(ls.leaves.size()), ls.bundle, spine_ns,
                   std::lround(spine_switch));
  return s;
}

}  // namespace

std::vector<File> htsim_topo(const std::vector<Input>& inputs) {
  std::vector<File> out;
  for (const FabricDescription& f : fabrics_of(inputs))
    out.push_back({f.dir + ".topo", naming(f.origin(), [&] { return topo(f); })});
  return out;
}

}  // namespace xy::exports
