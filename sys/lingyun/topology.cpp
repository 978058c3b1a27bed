#include "sys/lingyun/topology.hpp"

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <set>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "hw/link/flow_control.hpp"
#include "kernel/yaml_file.hpp"

namespace xy::lingyun {
namespace {

// What a node holds, for an error about a value of the wrong shape: its text, or its kind.
std::string shown(const YAML::Node& n) {
  if (n.IsScalar()) return n.Scalar();
  return n.IsSequence() ? "a list" : n.IsMap() ? "a map" : "nothing";
}

// A name (of a node, a key): a scalar, else one line naming `what` and what it holds.
std::string text(const std::string& path, const YAML::Node& n, const std::string& what) {
  if (!n.IsScalar() || n.Scalar().empty())
    throw ConfigError(fmt::format("{}: {} = {}: allowed a name", yaml_at(path, n), what, shown(n)));
  return n.Scalar();
}

// A whole number lo..hi; yaml-cpp's own refusal ("bad conversion") names neither key nor value.
int whole(const std::string& path, const YAML::Node& n, const std::string& what, int lo, int hi) {
  long long v = 0;
  if (!n.IsScalar() || !YAML::convert<long long>::decode(n, v) || v < lo || v > hi)
    throw ConfigError(fmt::format("{}: {} = {}: allowed {}..{}", yaml_at(path, n), what, shown(n), lo, hi));
  return static_cast<int>(v);
}

// Keys of a map node other than `allowed` are an error, as in scenario files; `what` holds the map.
void only(const std::string& path, const YAML::Node& n, std::initializer_list<const char*> allowed,
          const std::string& what) {
  if (!n.IsMap())
    throw ConfigError(fmt::format("{}: {} = {}: allowed a map of {}", yaml_at(path, n), what, shown(n),
                                  fmt::join(allowed, ", ")));
  for (const auto& kv : n) {
    const auto key = text(path, kv.first, "a key of " + what);
    if (std::none_of(allowed.begin(), allowed.end(), [&](const char* a) { return key == a; }))
      throw ConfigError(fmt::format("{}: unknown key '{}': allowed are {}", yaml_at(path, kv.first), key,
                                    fmt::join(allowed, ", ")));
  }
}

int add_node(Topology& t, std::map<std::string, int>& index, const std::string& name, bool is_switch, int ports,
             const std::string& where) {
  if (!index.emplace(name, static_cast<int>(t.nodes.size())).second)
    throw ConfigError(fmt::format("{}: '{}' is named twice: switch and endpoint names must be unique", where, name));
  t.nodes.push_back({name, is_switch, ports, where});
  return static_cast<int>(t.nodes.size()) - 1;
}

void connect(Topology& t, int a, int b, double cable_m, std::string where) {
  t.links.push_back({a, b, cable_m, std::move(where), {}, {}, {}, {}});
  for (int n : {a, b})
    if (!t.nodes[n].is_switch) ++t.nodes[n].ports;
}

// A link's `otn` map (the header lists its keys), checked as every key is.
otn::LineParams otn_line(const std::string& path, const YAML::Node& link, const YAML::Node& o, const Topology& t) {
  if (!o.IsMap()) throw ConfigError(fmt::format("{}: otn = {}: allowed a map of the line's keys, {{}} for the defaults",
                                                yaml_at(path, o), shown(o)));
  only(path, o, {"wavelengths", "ber", "fibre_ns_per_km", "decoder_ns", "client_ppm", "server_ppm", "codec"}, "otn");
  const Topology::Link& l = t.links.back();
  if (!t.nodes[l.a].is_switch || !t.nodes[l.b].is_switch)
    throw ConfigError(fmt::format("{}: otn on a link to an endpoint: an OTN line joins two switches (sites)",
                                  yaml_at(path, link)));
  if (link["fec"])
    throw ConfigError(fmt::format("{}: fec with otn: an OTN line has the GFEC of its OTU4s, not a port's FEC",
                                  yaml_at(path, link["fec"])));
  if (link["llr"] && link["llr"].IsScalar() && link["llr"].Scalar() == "true")
    throw ConfigError(fmt::format("{}: llr = true with otn: LLR is a short reach's retry; allowed: false, or unset",
                                  yaml_at(path, link["llr"])));
  otn::LineParams p;
  p.channels = 0;  // the port's lanes
  const auto number = [&](const char* key, double lo, double hi, double& into) {
    const YAML::Node v = o[key];
    if (v && (!v.IsScalar() || !YAML::convert<double>::decode(v, into) || !(into >= lo && into <= hi)))
      throw ConfigError(fmt::format("{}: otn.{} = {}: allowed {}..{}", yaml_at(path, v), key, shown(v), lo, hi));
  };
  double wavelengths = 0;
  number("wavelengths", 1, 64, wavelengths);
  if (wavelengths != std::floor(wavelengths))
    throw ConfigError(fmt::format("{}: otn.wavelengths = {}: allowed a whole number 1..64", yaml_at(path, o["wavelengths"]),
                                  shown(o["wavelengths"])));
  p.channels = static_cast<int>(wavelengths);
  number("ber", 0, 0.01, p.ber);
  number("fibre_ns_per_km", 4000, 6000, p.fibre_ns_per_km);
  number("decoder_ns", 0, 100000, p.decoder_ns);
  number("client_ppm", -100, 100, p.client_ppm);
  number("server_ppm", -20, 20, p.server_ppm);
  if (const YAML::Node v = o["codec"]) {
    if (!v.IsScalar() || (v.Scalar() != "fast" && v.Scalar() != "exact"))
      throw ConfigError(fmt::format("{}: otn.codec = {}: allowed are fast, exact", yaml_at(path, v), shown(v)));
    p.exact = v.Scalar() == "exact";
  }
  return p;
}

}  // namespace

Topology Topology::single(int endpoints, double cable_m) {
  Topology t;
  t.name = "single";
  std::map<std::string, int> index;
  const int sw = add_node(t, index, "sw0", true, endpoints, t.name);
  for (int e = 0; e < endpoints; ++e) connect(t, add_node(t, index, fmt::format("e{}", e), false, 0, t.name), sw, cable_m, t.name);
  return t;
}

Topology Topology::leaf_spine(int endpoints, int leaves, int spines, double oversubscription, double cable_m,
                              double spine_cable_m) {
  if (endpoints % leaves)
    throw ConfigError(fmt::format("topology.endpoints = {}: must be a multiple of topology.leaves = {}", endpoints, leaves));
  const int down = endpoints / leaves;
  const double up_exact = down / oversubscription;
  const int up = static_cast<int>(std::lround(up_exact));
  if (up < 1 || std::abs(up - up_exact) > 1e-9 || up % spines)
    throw ConfigError(fmt::format("topology.oversubscription = {}: {} endpoints per leaf over {} spines need a whole "
                                  "number of uplinks per spine ({:.3g} uplinks per leaf); allowed: ratios that make it "
                                  "a multiple of topology.spines",
                                  oversubscription, down, spines, up_exact));
  Topology t;
  t.name = "leaf-spine";
  std::map<std::string, int> index;
  std::vector<int> leaf, spine;
  for (int l = 0; l < leaves; ++l) leaf.push_back(add_node(t, index, fmt::format("leaf{}", l), true, down + up, t.name));
  for (int s = 0; s < spines; ++s)
    spine.push_back(add_node(t, index, fmt::format("spine{}", s), true, leaves * (up / spines), t.name));
  for (int e = 0; e < endpoints; ++e)
    connect(t, add_node(t, index, fmt::format("e{}", e), false, 0, t.name), leaf[e / down], cable_m, t.name);
  for (int l = 0; l < leaves; ++l)
    for (int u = 0; u < up; ++u) connect(t, leaf[l], spine[u % spines], spine_cable_m, t.name);
  return t;
}

Topology Topology::two_sites(const Sites& s) {
  const std::string preset = "two-sites";
  if (s.endpoints % s.leaves)
    throw ConfigError(fmt::format("{}: {} endpoints a site over {} leaves: allowed a multiple of the leaves", preset,
                                  s.endpoints, s.leaves));
  const int down = s.endpoints / s.leaves;
  if (down % s.spines)
    throw ConfigError(fmt::format("{}: {} endpoints a leaf over {} spines: a non-blocking leaf needs a multiple of the "
                                  "spines", preset, down, s.spines));
  const double lines_exact = s.endpoints / s.oversubscription;
  const int lines = static_cast<int>(std::lround(lines_exact));
  if (lines < 1 || std::abs(lines - lines_exact) > 1e-9 || lines % s.spines)
    throw ConfigError(fmt::format("{}: {} endpoints a site at {}:1 across need {:.3g} cross-site lines; allowed: a whole "
                                  "multiple of the {} spines",
                                  preset, s.endpoints, s.oversubscription, lines_exact, s.spines));
  Topology t;
  t.name = preset;
  std::map<std::string, int> index;
  std::vector<int> spines[2];
  for (int site = 0; site < 2; ++site) {
    const std::string name = site ? "b" : "a";
    std::vector<int> leaf;
    for (int l = 0; l < s.leaves; ++l)
      leaf.push_back(add_node(t, index, fmt::format("{}.leaf{}", name, l), true, 2 * down, preset));
    for (int k = 0; k < s.spines; ++k) {
      spines[site].push_back(add_node(t, index, fmt::format("{}.spine{}", name, k), true,
                                      s.leaves * down / s.spines + lines / s.spines, preset));
      t.nodes.back().buffer_mib = s.spine_buffer_mib;
    }
    for (int e = 0; e < s.endpoints; ++e)
      connect(t, add_node(t, index, fmt::format("e{}", site * s.endpoints + e), false, 0, preset), leaf[e / down],
              s.cable_m, preset);
    for (int l = 0; l < s.leaves; ++l)
      for (int u = 0; u < down; ++u) connect(t, leaf[l], spines[site][u % s.spines], s.spine_cable_m, preset);
  }
  for (int line = 0; line < lines; ++line) {
    const int k = line % s.spines;
    connect(t, spines[0][k], spines[1][k], s.km * 1000, preset);
    t.links.back().otn = s.otn;
    t.links.back().llr = false;
  }
  return t;
}

Topology Topology::dual_plane(int endpoints, double cable_m) { return planes(endpoints, 2, cable_m); }

Topology Topology::planes(int endpoints, int planes, double cable_m) {
  Topology t;
  t.name = planes == 2 ? "dual-plane" : fmt::format("{}-plane", planes);
  std::map<std::string, int> index;
  std::vector<int> plane;
  for (int k = 0; k < planes; ++k) plane.push_back(add_node(t, index, fmt::format("plane{}", k), true, endpoints, t.name));
  for (int e = 0; e < endpoints; ++e) {
    const int n = add_node(t, index, fmt::format("e{}", e), false, 0, t.name);
    for (int k : plane) connect(t, n, k, cable_m, t.name);
  }
  return t;
}

Topology Topology::load(const std::string& path) {
  const YAML::Node root = load_yaml_file(path, "topology file");
  if (!root.IsMap()) throw ConfigError(fmt::format("{}: a topology file is a map with switches, endpoints and links", path));
  only(path, root, {"switches", "endpoints", "links"}, "the topology");
  Topology t;
  t.name = path;
  std::map<std::string, int> index;
  try {
    const YAML::Node switches = root["switches"], endpoints = root["endpoints"], links = root["links"];
    if (!switches) throw ConfigError(fmt::format("{}: 'switches' missing: a map name -> {{ports: N}}", path));
    if (!switches.IsMap())
      throw ConfigError(fmt::format("{}: switches = {}: allowed a map name -> {{ports: N}}",
                                    switches.IsNull() ? path : yaml_at(path, switches), shown(switches)));
    for (const auto& kv : switches) {
      const std::string name = text(path, kv.first, "a switch's name");
      // yaml-cpp's missing key has no mark: name the switch's own line.
      if (kv.second.IsNull() || (kv.second.IsMap() && !kv.second["ports"]))
        throw ConfigError(fmt::format("{}: switch {} without 'ports': a count 1..1024", yaml_at(path, kv.first), name));
      only(path, kv.second, {"ports", "buffer_mib"}, "switch " + name);
      const int ports = whole(path, kv.second["ports"], "switch " + name + " ports", 1, 1024);
      add_node(t, index, name, true, ports, yaml_at(path, kv.first));
      if (const YAML::Node b = kv.second["buffer_mib"]) {
        double mib = 0;
        if (!b.IsScalar() || !YAML::convert<double>::decode(b, mib) || !(mib >= 0.01 && mib <= 1e6))
          throw ConfigError(fmt::format("{}: switch {} buffer_mib = {}: allowed 0.01..1e6", yaml_at(path, b), name, shown(b)));
        t.nodes.back().buffer_mib = mib;
      }
    }
    if (!endpoints) throw ConfigError(fmt::format("{}: 'endpoints' missing: a count or a list of names", path));
    if (endpoints.IsScalar()) {
      const int n = whole(path, endpoints, "endpoints", 2, 65536);
      for (int e = 0; e < n; ++e) add_node(t, index, fmt::format("e{}", e), false, 0, yaml_at(path, endpoints));
    } else if (endpoints.IsSequence()) {
      for (const auto& e : endpoints) add_node(t, index, text(path, e, "an endpoint"), false, 0, yaml_at(path, e));
    } else {
      throw ConfigError(fmt::format("{}: endpoints = {}: allowed a count 2..65536 or a list of names",
                                    yaml_at(path, endpoints), shown(endpoints)));
    }
    if (!links) throw ConfigError(fmt::format("{}: 'links' missing: a list of {{a, b, cable_m}}", path));
    if (!links.IsSequence())
      throw ConfigError(fmt::format("{}: links = {}: allowed a list of {{a, b, cable_m}}", yaml_at(path, links), shown(links)));
    for (const auto& l : links) {
      only(path, l, {"a", "b", "cable_m", "fec", "llr", "fc", "otn"}, "a link");
      int ends[2];
      const char* keys[2] = {"a", "b"};
      for (int i = 0; i < 2; ++i) {
        if (!l[keys[i]]) throw ConfigError(fmt::format("{}: link without '{}'", yaml_at(path, l), keys[i]));
        const auto name = text(path, l[keys[i]], fmt::format("link {}", keys[i]));
        const auto it = index.find(name);
        if (it == index.end())
          throw ConfigError(fmt::format("{}: link {} = '{}': no switch or endpoint of that name", yaml_at(path, l[keys[i]]), keys[i], name));
        ends[i] = it->second;
      }
      double cable = 2.0;
      if (const YAML::Node c = l["cable_m"];
          c && (!c.IsScalar() || !YAML::convert<double>::decode(c, cable) || !(cable >= 0 && cable <= 1e6)))
        throw ConfigError(fmt::format("{}: cable_m = {}: allowed 0..1e6 m", yaml_at(path, l), shown(c)));
      if (ends[0] == ends[1]) throw ConfigError(fmt::format("{}: a link from '{}' to itself", yaml_at(path, l), t.nodes[ends[0]].name));
      if (!t.nodes[ends[0]].is_switch && !t.nodes[ends[1]].is_switch)
        throw ConfigError(fmt::format("{}: a link between two endpoints: every link has a switch at one end", yaml_at(path, l)));
      connect(t, ends[0], ends[1], cable, yaml_at(path, l));
      Link& link = t.links.back();
      const auto pick = [&](const char* key, const std::vector<std::string>& allowed) -> std::optional<std::string> {
        if (!l[key]) return std::nullopt;
        const YAML::Node v = l[key];
        if (!v.IsScalar() || std::find(allowed.begin(), allowed.end(), v.Scalar()) == allowed.end())
          throw ConfigError(fmt::format("{}: {} = {}: allowed are {}", yaml_at(path, v), key,
                                        v.IsScalar() ? "'" + v.Scalar() + "'" : shown(v), fmt::join(allowed, ", ")));
        return v.Scalar();
      };
      link.fec = pick("fec", {"rs544", "rs272", "none"});
      link.fc = pick("fc", link::fc_mode_names());
      if (const auto llr = pick("llr", {"true", "false"})) link.llr = *llr == "true";
      if (const YAML::Node o = l["otn"]) link.otn = otn_line(path, l, o, t);
    }
  } catch (const YAML::Exception& e) {
    throw ConfigError(e.mark.is_null() ? fmt::format("{}: {}", path, e.msg)
                                       : fmt::format("{}:{}: {}", path, e.mark.line + 1, e.msg));
  }
  return t;
}

std::optional<Topology> Topology::declare(Config& c, int default_endpoints, bool bare_allowed,
                                         const std::string& default_preset) {
  const std::string which =
      c.text("topology", bare_allowed ? "bare" : default_preset,
             bare_allowed ? "the system: bare is one switch core, no ports modelled; a preset, or a topology YAML file "
                            "(docs/lingyun.md)"
                          : "the system: a preset, or a topology YAML file (docs/lingyun.md)",
             bare_allowed ? "bare|single|leaf-spine|dual-plane|a topology file path"
                          : "single|leaf-spine|dual-plane|a topology file path");
  if (bare_allowed && which == "bare") return std::nullopt;
  Topology t;
  if (which == "single" || which == "leaf-spine" || which == "dual-plane") {
    const int endpoints = static_cast<int>(c.integer("topology.endpoints", default_endpoints, "endpoints", 2, 4096, "endpoints of a preset"));
    const double cable = c.real("topology.cable_m", 2, "m", 0, 1e6, "endpoint to switch cable");
    if (which == "single") t = single(endpoints, cable);
    if (which == "dual-plane") t = dual_plane(endpoints, cable);
    if (which == "leaf-spine") {
      const int leaves = static_cast<int>(c.integer("topology.leaves", 2, "switches", 1, 1024, "leaf switches"));
      const int spines = static_cast<int>(c.integer("topology.spines", 1, "switches", 1, 1024, "spine switches"));
      const double ratio = c.real("topology.oversubscription", 1, "x", 0.01, 1024, "leaf down ports / up ports");
      const double spine_cable = c.real("topology.spine_cable_m", 10, "m", 0, 1e6, "leaf to spine cable");
      t = leaf_spine(endpoints, leaves, spines, ratio, cable, spine_cable);
    }
  } else {
    t = load(which);
  }
  t.validate();
  return t;
}

std::vector<int> Topology::endpoints() const {
  std::vector<int> out;
  for (int n = 0; n < static_cast<int>(nodes.size()); ++n)
    if (!nodes[n].is_switch) out.push_back(n);
  return out;
}

std::vector<int> Topology::switches() const {
  std::vector<int> out;
  for (int n = 0; n < static_cast<int>(nodes.size()); ++n)
    if (nodes[n].is_switch) out.push_back(n);
  return out;
}

void Topology::validate() const {
  std::vector<int> used(nodes.size(), 0);
  for (const Link& l : links)
    for (int n : {l.a, l.b})
      if (++used[n] > nodes[n].ports && nodes[n].is_switch)
        throw ConfigError(fmt::format("{}: switch {} has {} ports and this is link {} to it: port count exceeded",
                                      l.where, nodes[n].name, nodes[n].ports, used[n]));
  const std::vector<int> ends = endpoints();
  if (ends.size() < 2) throw ConfigError(fmt::format("topology {}: {} endpoints; at least 2 needed", name, ends.size()));
  for (int e : ends)
    if (!used[e])
      throw ConfigError(fmt::format("{}: endpoint {} has no link", nodes[e].where.empty() ? "topology " + name : nodes[e].where,
                                    nodes[e].name));
  // Planes: the switches joined by links between them. The builder gives an endpoint a port per
  // link, in file order, and routes to an endpoint over every port it has on a plane; the
  // testbenches run plane k on port k of every endpoint (FabricRig a scoreboard per plane, OLink
  // its GPUs on port 0). So port k of every endpoint must be on one plane, and no other port.
  std::vector<int> plane(nodes.size());
  for (std::size_t n = 0; n < nodes.size(); ++n) plane[n] = static_cast<int>(n);
  const auto root = [&](int n) {
    while (plane[n] != n) n = plane[n];
    return n;
  };
  for (const Link& l : links)
    if (nodes[l.a].is_switch && nodes[l.b].is_switch) plane[root(l.a)] = root(l.b);
  struct Port {
    int link, sw;  // its link (index) and the switch at the other end
  };
  std::vector<std::vector<Port>> ports(nodes.size());
  for (int i = 0; i < static_cast<int>(links.size()); ++i) {
    const Link& l = links[i];
    if (!nodes[l.a].is_switch) ports[l.a].push_back({i, l.b});
    if (!nodes[l.b].is_switch) ports[l.b].push_back({i, l.a});
  }
  // Two ports of one endpoint on one plane: the switches route to it over both, so its hosts get
  // each other's frames (one scoreboard), and OLink's GPU, on port 0 only, misses some.
  for (int e : ends)
    for (std::size_t k = 0; k < ports[e].size(); ++k)
      for (std::size_t j = 0; j < k; ++j)
        if (root(ports[e][j].sw) == root(ports[e][k].sw))
          throw ConfigError(fmt::format(
              "{}: endpoint {}: links {} (to {}) and {} (to {}) both reach one plane; multi-homing into one plane "
              "waits for the dual-plane NIC (issue 24); allowed: each of an endpoint's links on a plane of its own",
              links[ports[e][k].link].where, nodes[e].name, ports[e][j].link + 1, nodes[ports[e][j].sw].name,
              ports[e][k].link + 1, nodes[ports[e][k].sw].name));
  for (int e : ends)
    for (std::size_t k = 0; k < ports[e].size(); ++k) {
      const Port& p = ports[e][k];
      for (int d : ends) {
        if (d == e || (k < ports[d].size() && root(ports[d][k].sw) == root(p.sw))) continue;
        std::string why = fmt::format("no path from {} to it through switches", nodes[p.sw].name);
        for (std::size_t j = 0; j < ports[d].size(); ++j)
          if (root(ports[d][j].sw) == root(p.sw))
            why = fmt::format("{} is on that plane by its port {}, not {}: port k of every endpoint forms plane k",
                              nodes[d].name, j, k);
        throw ConfigError(fmt::format("{}: endpoint {}'s port {} (link {}, to {}) cannot reach endpoint {}: {}",
                                      links[p.link].where, nodes[e].name, k, p.link + 1, nodes[p.sw].name,
                                      nodes[d].name, why));
      }
    }
}

int Topology::bisection_links() const {
  // Unit capacity each way per link; source -> first half of the endpoints, second half -> sink.
  const int n = static_cast<int>(nodes.size()), source = n, sink = n + 1;
  std::vector<std::map<int, int>> cap(n + 2);
  for (const Link& l : links) {
    ++cap[l.a][l.b];
    ++cap[l.b][l.a];
  }
  const std::vector<int> ends = endpoints();
  const std::size_t half = ends.size() / 2;
  for (std::size_t i = 0; i < ends.size(); ++i) {
    if (i < half) cap[source][ends[i]] = 1 << 20;
    else cap[ends[i]][sink] = 1 << 20;
  }
  int flow = 0;
  for (;;) {
    std::vector<int> parent(n + 2, -1);
    parent[source] = source;
    std::deque<int> q{source};
    while (!q.empty() && parent[sink] < 0) {
      const int u = q.front();
      q.pop_front();
      for (const auto& [v, c] : cap[u])
        if (c > 0 && parent[v] < 0) parent[v] = u, q.push_back(v);
    }
    if (parent[sink] < 0) return flow;
    int push = 1 << 20;
    for (int v = sink; v != source; v = parent[v]) push = std::min(push, cap[parent[v]][v]);
    for (int v = sink; v != source; v = parent[v]) {
      cap[parent[v]][v] -= push;
      cap[v][parent[v]] += push;
    }
    flow += push;
  }
}

double Topology::longest_cable_m() const {
  double m = 0;
  for (const Link& l : links) m = std::max(m, l.cable_m);
  return m;
}

std::string Topology::sized_by() const {
  int ports = 0;
  for (int s : switches()) ports += nodes[s].ports;
  const std::string made = fmt::format("{} switches of {} ports in all, {} links", switches().size(), ports, links.size());
  if (name == "single" || name == "leaf-spine" || name == "dual-plane")
    return fmt::format("topology.endpoints = {} (topology = {}: {})", endpoints().size(), name, made);
  return fmt::format("topology = {} ({} endpoints, {})", name, endpoints().size(), made);
}

Routes::Routes(const Topology& t) {
  const int n = static_cast<int>(t.nodes.size());
  std::vector<int> next_port(n, 0);
  std::vector<std::vector<std::pair<int, int>>> adj(n);  // (neighbour, my port)
  for (const auto& l : t.links) {
    const int pa = next_port[l.a]++, pb = next_port[l.b]++;
    port_of.push_back({pa, pb});
    adj[l.a].push_back({l.b, pa});
    adj[l.b].push_back({l.a, pb});
  }
  const std::vector<int> ends = t.endpoints();
  // A row per switch only: an endpoint's would be as long and empty, nodes x endpoints of them
  // (400 MB at 4096 endpoints).
  next.assign(n, {});
  for (int s : t.switches()) next[s].resize(ends.size());
  int longest = 0;
  for (std::size_t e = 0; e < ends.size(); ++e) {
    // Distances to endpoint e, through switches only.
    std::vector<int> dist(n, -1);
    dist[ends[e]] = 0;
    std::deque<int> q{ends[e]};
    while (!q.empty()) {
      const int u = q.front();
      q.pop_front();
      if (u != ends[e] && !t.nodes[u].is_switch) continue;
      for (const auto& [v, port] : adj[u])
        if (dist[v] < 0) dist[v] = dist[u] + 1, q.push_back(v);
    }
    for (int s : t.switches())
      for (const auto& [v, port] : adj[s])
        if (dist[v] >= 0 && dist[s] >= 0 && dist[v] == dist[s] - 1) next[s][e].push_back(port);
    for (int f : ends) longest = std::max(longest, dist[f] - 1);
  }
  max_switch_hops = longest;
}

}  // namespace xy::lingyun
