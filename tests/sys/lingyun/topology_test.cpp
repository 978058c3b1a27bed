// The topology loader and the routes (sys/lingyun/topology.hpp): small YAML files written here,
// the nodes, ports, links and next hops expected of them worked out by hand, the presets' counts,
// and every refusal of the loader and of validate() with its message.
#include "sys/lingyun/topology.hpp"

#include <gtest/gtest.h>
#include <malloc.h>

#include <array>
#include <fstream>
#include <string>
#include <vector>

#include "tests/sys/lingyun/leaf_spine.hpp"
#include "tests/test_util.hpp"

namespace xy::lingyun {
namespace {

using Ports = std::vector<int>;

using testing::kLeafSpine;  // tests/sys/lingyun/leaf_spine.hpp: its ports are worked out there

constexpr const char* kSingle =
    "switches:\n"
    "  sw0: {ports: 3}\n"
    "endpoints: 3\n"
    "links:\n"
    "  - {a: e0, b: sw0}\n"
    "  - {a: sw0, b: e1}\n"
    "  - {a: e2, b: sw0, cable_m: 0.5}\n";

class TopologyFile : public ::testing::Test {
 protected:
  std::string write(const std::string& yaml) {
    const std::string path = dir_.file("topology.yaml");
    std::ofstream(path) << yaml;
    return path;
  }
  // The message of the ConfigError that loading `yaml` (then validating it) throws, with the
  // file's path replaced by FILE; "" when it loads.
  std::string refusal(const std::string& yaml) {
    const std::string path = write(yaml);
    std::string m = testing::config_error_of([&] { Topology::load(path).validate(); });
    for (std::size_t at; (at = m.find(path)) != std::string::npos;) m.replace(at, path.size(), "FILE");
    return m;
  }
  testing::TempDir dir_;
};

TEST_F(TopologyFile, ALeafSpineHasItsNodesLinksAndPortsInFileOrder) {
  const Topology t = Topology::load(write(kLeafSpine));
  t.validate();
  ASSERT_EQ(t.nodes.size(), 8u);
  ASSERT_EQ(t.links.size(), 8u);
  const char* names[] = {"leaf0", "leaf1", "spine0", "spine1", "h0", "h1", "h2", "h3"};
  const int ports[] = {4, 4, 2, 2, 1, 1, 1, 1};  // an endpoint has as many ports as links
  for (int n = 0; n < 8; ++n) {
    EXPECT_EQ(t.nodes[n].name, names[n]);
    EXPECT_EQ(t.nodes[n].is_switch, n < 4);
    EXPECT_EQ(t.nodes[n].ports, ports[n]) << names[n];
  }
  EXPECT_EQ(t.switches(), (Ports{0, 1, 2, 3}));
  EXPECT_EQ(t.endpoints(), (Ports{4, 5, 6, 7}));
  const int ends[8][2] = {{4, 0}, {5, 0}, {6, 1}, {7, 1}, {0, 2}, {0, 3}, {2, 1}, {1, 3}};
  const double cables[8] = {3, 2, 4, 5, 10, 20, 30, 40};  // link 1 takes the default, 2 m
  for (int l = 0; l < 8; ++l) {
    EXPECT_EQ(t.links[l].a, ends[l][0]) << l;
    EXPECT_EQ(t.links[l].b, ends[l][1]) << l;
    EXPECT_EQ(t.links[l].cable_m, cables[l]) << l;
    EXPECT_EQ(t.links[l].where, t.name + ":" + std::to_string(8 + l)) << l;
  }
  // Only link 4 sets its own FEC, LLR and flow control.
  EXPECT_EQ(t.links[4].fec, "rs272");
  EXPECT_EQ(t.links[4].llr, false);
  EXPECT_EQ(t.links[4].fc, "pfc");
  for (int l : {0, 1, 2, 3, 5, 6, 7}) EXPECT_FALSE(t.links[l].fec || t.links[l].llr || t.links[l].fc) << l;
  // h0, h1 against h2, h3: the two uplinks of leaf0 are the narrowest cut.
  EXPECT_EQ(t.bisection_links(), 2);
  EXPECT_EQ(t.longest_cable_m(), 40);
}

// Routes keep a row of sets per switch, not per node: one switch and 1024 endpoints hold 1024
// sets (a vector each, its one port in malloc's least chunk of 32 B) and a port pair per link,
// not a row of 1024 empty sets for each endpoint as well (25 MB).
TEST(Routes, KeepARowPerSwitchNotPerNode) {
  const Topology t = Topology::single(1024, 2);
  const std::size_t before = mallinfo2().uordblks;
  const Routes r(t);
  const std::size_t held = mallinfo2().uordblks - before;
  const std::size_t sets = 1024 * (sizeof(Ports) + 32), pairs = 1024 * sizeof(std::array<int, 2>),
                    rows = t.nodes.size() * sizeof(std::vector<Ports>);
  EXPECT_LT(held, 2 * (sets + pairs + rows)) << held << " B";
  EXPECT_EQ(r.next[0].size(), 1024u);
}

TEST_F(TopologyFile, ALeafSpinesRoutesAreTheShortestPathsEachSpineAnEqualCostChoice) {
  const Topology t = Topology::load(write(kLeafSpine));
  const Routes r(t);
  // port_of[link]: the port the link takes at a (its side 0) and at b.
  const std::vector<std::array<int, 2>> port_of = {{0, 0}, {0, 1}, {0, 0}, {0, 1}, {2, 0}, {3, 0}, {1, 2}, {3, 1}};
  EXPECT_EQ(r.port_of, port_of);
  // next[switch][endpoint h0..h3]: down to a host on the leaf, else up over both spines.
  const std::vector<std::vector<Ports>> next = {
      {{0}, {1}, {2, 3}, {2, 3}},  // leaf0
      {{2, 3}, {2, 3}, {0}, {1}},  // leaf1
      {{0}, {0}, {1}, {1}},        // spine0
      {{0}, {0}, {1}, {1}},        // spine1
  };
  ASSERT_EQ(r.next.size(), 8u);
  for (int s = 0; s < 4; ++s) EXPECT_EQ(r.next[s], next[s]) << t.nodes[s].name;
  for (int e = 4; e < 8; ++e) EXPECT_TRUE(r.next[e].empty()) << t.nodes[e].name;  // endpoints do not route
  EXPECT_EQ(r.max_switch_hops, 3);  // h0 -> leaf0 -> spine -> leaf1 -> h2
}

TEST_F(TopologyFile, ASingleSwitchWithCountedEndpointsRoutesEachToItsOwnPort) {
  const Topology t = Topology::load(write(kSingle));
  t.validate();
  ASSERT_EQ(t.nodes.size(), 4u);
  EXPECT_EQ(t.links.size(), 3u);
  EXPECT_EQ(t.nodes[0].name, "sw0");
  for (int e = 0; e < 3; ++e) {
    EXPECT_EQ(t.nodes[1 + e].name, "e" + std::to_string(e));
    EXPECT_EQ(t.nodes[1 + e].ports, 1);
  }
  const Routes r(t);
  EXPECT_EQ(r.next[0], (std::vector<Ports>{{0}, {1}, {2}}));
  EXPECT_EQ(r.port_of, (std::vector<std::array<int, 2>>{{0, 0}, {1, 0}, {0, 2}}));
  EXPECT_EQ(r.max_switch_hops, 1);
  EXPECT_EQ(t.bisection_links(), 1);  // e0 against e1, e2: e0's one link
  EXPECT_EQ(t.longest_cable_m(), 2);
}

// An endpoint on two switches has two ports, one on each.
TEST_F(TopologyFile, AnEndpointOnTwoSwitchesHasTwoPorts) {
  const Topology t = Topology::load(write("switches:\n  a: {ports: 2}\n  b: {ports: 2}\nendpoints: [x, y]\nlinks:\n"
                                          "  - {a: x, b: a}\n  - {a: x, b: b}\n  - {a: y, b: a}\n  - {a: y, b: b}\n"));
  t.validate();
  EXPECT_EQ(t.nodes[2].ports, 2);
  EXPECT_EQ(t.nodes[3].ports, 2);
  const Routes r(t);
  EXPECT_EQ(r.port_of, (std::vector<std::array<int, 2>>{{0, 0}, {1, 0}, {0, 1}, {1, 1}}));
  EXPECT_EQ(r.next[0], (std::vector<Ports>{{0}, {1}}));
  EXPECT_EQ(t.bisection_links(), 2);
}

TEST_F(TopologyFile, EveryRefusalOfTheFileNamesItsPlace) {
  const std::string sw = "switches:\n  sw0: {ports: 2}\n";  // lines 1-2
  const std::string eps = "endpoints: 2\n";                  // line 3
  const std::string links = "links:\n";                      // line 4, the first link on line 5
  const std::string sites = "switches:\n  sw0: {ports: 2}\n  sw1: {ports: 2}\n" + eps + links;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"- a\n- b\n", "FILE: a topology file is a map with switches, endpoints and links"},
      {sw + eps + "links: []\nhosts: 3\n", "FILE:5: unknown key 'hosts': allowed are switches, endpoints, links"},
      {eps + "links: []\n", "FILE: 'switches' missing: a map name -> {ports: N}"},
      {"switches: [sw0]\n" + eps + "links: []\n", "FILE:1: switches = a list: allowed a map name -> {ports: N}"},
      // Nothing has no line of its own in yaml-cpp (its mark is the next line's).
      {"switches:\n" + eps + "links: []\n", "FILE: switches = nothing: allowed a map name -> {ports: N}"},
      {"switches:\n  sw0: {ports: 2, radix: 2}\n", "FILE:2: unknown key 'radix': allowed are ports, buffer_mib"},
      {"switches:\n  sw0: {ports: 0}\n", "FILE:2: switch sw0 ports = 0: allowed 1..1024"},
      {"switches:\n  sw0: {ports: 1025}\n", "FILE:2: switch sw0 ports = 1025: allowed 1..1024"},
      // A value of the wrong type or shape: its key, the value as written and what is allowed,
      // never yaml-cpp's own "bad conversion" or "invalid node" (at line 0).
      {"switches:\n  sw0: {ports: many}\n", "FILE:2: switch sw0 ports = many: allowed 1..1024"},
      {"switches:\n  sw0: {ports: 99999999999}\n", "FILE:2: switch sw0 ports = 99999999999: allowed 1..1024"},
      {"switches:\n  sw0: {ports: 4, buffer_mib: 0}\n", "FILE:2: switch sw0 buffer_mib = 0: allowed 0.01..1e6"},
      {"switches:\n  sw0: {ports: 4, buffer_mib: deep}\n", "FILE:2: switch sw0 buffer_mib = deep: allowed 0.01..1e6"},
      {"switches:\n  sw0: {ports: [4]}\n", "FILE:2: switch sw0 ports = a list: allowed 1..1024"},
      {"switches:\n  sw0: 4\n", "FILE:2: switch sw0 = 4: allowed a map of ports, buffer_mib"},
      {"switches:\n  [a, b]: {ports: 4}\n", "FILE:2: a switch's name = a list: allowed a name"},
      {"? [a]\n: 1\n", "FILE:1: a key of the topology = a list: allowed a name"},
      {sw + "endpoints: {e0: 1, e1: 2}\n", "FILE:3: endpoints = a map: allowed a count 2..65536 or a list of names"},
      {sw + "endpoints: many\n", "FILE:3: endpoints = many: allowed 2..65536"},
      {sw + "endpoints: 99999999999\n", "FILE:3: endpoints = 99999999999: allowed 2..65536"},
      {sw + "endpoints: [h0, {h1: 1}]\n", "FILE:3: an endpoint = a map: allowed a name"},
      {sw + eps + links + "  - e0\n", "FILE:5: a link = e0: allowed a map of a, b, cable_m, fec, llr, fc, otn"},
      {sw + eps + links + "  - {a: [e0], b: sw0}\n", "FILE:5: link a = a list: allowed a name"},
      {sw + eps + links + "  - {a: e0, b: sw0, cable_m: far}\n", "FILE:5: cable_m = far: allowed 0..1e6 m"},
      {sw + eps + links + "  - {a: e0, b: sw0, fec: [rs544]}\n", "FILE:5: fec = a list: allowed are rs544, rs272, none"},
      // A switch without its ports, at the line of its name: flow style, then block style with
      // nothing under the name (line 3, after a switch on line 2).
      {"switches:\n  sw0: {}\n" + eps + "links: []\n", "FILE:2: switch sw0 without 'ports': a count 1..1024"},
      {"switches:\n  sw1: {ports: 2}\n  sw0:\n" + eps + "links: []\n",
       "FILE:3: switch sw0 without 'ports': a count 1..1024"},
      {sw + "links: []\n", "FILE: 'endpoints' missing: a count or a list of names"},
      {sw + "endpoints: 1\n", "FILE:3: endpoints = 1: allowed 2..65536"},
      {sw + "endpoints: 65537\n", "FILE:3: endpoints = 65537: allowed 2..65536"},
      {"switches:\n  e1: {ports: 2}\n" + eps, "FILE:3: 'e1' is named twice: switch and endpoint names must be unique"},
      {sw + "endpoints: [h0, sw0]\n", "FILE:3: 'sw0' is named twice: switch and endpoint names must be unique"},
      {sw + eps, "FILE: 'links' missing: a list of {a, b, cable_m}"},
      {sw + eps + "links: {a: e0, b: sw0}\n", "FILE:4: links = a map: allowed a list of {a, b, cable_m}"},
      {sw + eps + links + "  - {a: e0, b: sw0, length: 3}\n",
       "FILE:5: unknown key 'length': allowed are a, b, cable_m, fec, llr, fc, otn"},
      {sw + eps + links + "  - {b: sw0}\n", "FILE:5: link without 'a'"},
      {sw + eps + links + "  - {a: e0}\n", "FILE:5: link without 'b'"},
      {sw + eps + links + "  - {a: e0, b: sw9}\n", "FILE:5: link b = 'sw9': no switch or endpoint of that name"},
      {sw + eps + links + "  - {a: e0, b: sw0}\n  - {a: e7, b: sw0}\n",
       "FILE:6: link a = 'e7': no switch or endpoint of that name"},
      {sw + eps + links + "  - {a: e0, b: sw0, cable_m: -1}\n", "FILE:5: cable_m = -1: allowed 0..1e6 m"},
      {sw + eps + links + "  - {a: e0, b: sw0, cable_m: 2000000}\n", "FILE:5: cable_m = 2000000: allowed 0..1e6 m"},
      {sw + eps + links + "  - {a: e0, b: sw0, cable_m: .nan}\n", "FILE:5: cable_m = .nan: allowed 0..1e6 m"},
      {sw + eps + links + "  - {a: sw0, b: sw0}\n", "FILE:5: a link from 'sw0' to itself"},
      {sw + eps + links + "  - {a: e0, b: e1}\n",
       "FILE:5: a link between two endpoints: every link has a switch at one end"},
      {sw + eps + links + "  - {a: e0, b: sw0, fec: rs999}\n", "FILE:5: fec = 'rs999': allowed are rs544, rs272, none"},
      {sw + eps + links + "  - {a: e0, b: sw0, llr: maybe}\n", "FILE:5: llr = 'maybe': allowed are true, false"},
      {sw + eps + links + "  - {a: e0, b: sw0, fc: xon}\n", "FILE:5: fc = 'xon': allowed are cbfc, pfc, none"},
      // An OTN line (two switches, lines 1-3; the endpoints on 4, the first link on 6).
      {sw + eps + links + "  - {a: e0, b: sw0, otn: {}}\n",
       "FILE:5: otn on a link to an endpoint: an OTN line joins two switches (sites)"},
      {sites + "  - {a: sw0, b: sw1, otn: 8}\n", "FILE:6: otn = 8: allowed a map of the line's keys, {} for the defaults"},
      {sites + "  - {a: sw0, b: sw1, otn: {hue: 1}}\n",
       "FILE:6: unknown key 'hue': allowed are wavelengths, ber, fibre_ns_per_km, decoder_ns, client_ppm, server_ppm, "
       "codec"},
      {sites + "  - {a: sw0, b: sw1, otn: {wavelengths: 0}}\n", "FILE:6: otn.wavelengths = 0: allowed 1..64"},
      {sites + "  - {a: sw0, b: sw1, otn: {wavelengths: 2.5}}\n",
       "FILE:6: otn.wavelengths = 2.5: allowed a whole number 1..64"},
      {sites + "  - {a: sw0, b: sw1, otn: {ber: 0.5}}\n", "FILE:6: otn.ber = 0.5: allowed 0..0.01"},
      {sites + "  - {a: sw0, b: sw1, otn: {server_ppm: 30}}\n", "FILE:6: otn.server_ppm = 30: allowed -20..20"},
      {sites + "  - {a: sw0, b: sw1, otn: {codec: slow}}\n", "FILE:6: otn.codec = slow: allowed are fast, exact"},
      {sites + "  - {a: sw0, b: sw1, fec: rs544, otn: {}}\n",
       "FILE:6: fec with otn: an OTN line has the GFEC of its OTU4s, not a port's FEC"},
      {sites + "  - {a: sw0, b: sw1, llr: true, otn: {}}\n",
       "FILE:6: llr = true with otn: LLR is a short reach's retry; allowed: false, or unset"},
  };
  for (const auto& [yaml, message] : cases) EXPECT_EQ(refusal(yaml), message) << yaml;
}

TEST_F(TopologyFile, ATopologyThatLoadsButCannotBeBuiltIsRefusedByValidate) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"switches:\n  sw0: {ports: 1}\nendpoints: 2\nlinks:\n  - {a: e0, b: sw0}\n  - {a: e1, b: sw0}\n",
       "FILE:6: switch sw0 has 1 ports and this is link 2 to it: port count exceeded"},
      {"switches:\n  sw0: {ports: 2}\nendpoints: [h0]\nlinks:\n  - {a: h0, b: sw0}\n",
       "topology FILE: 1 endpoints; at least 2 needed"},
      {"switches:\n  sw0: {ports: 2}\nendpoints: 3\nlinks:\n  - {a: e0, b: sw0}\n  - {a: e1, b: sw0}\n",
       "FILE:3: endpoint e2 has no link"},
      {"switches:\n  sw0: {ports: 2}\nendpoints:\n  - h0\n  - h1\n  - h2\nlinks:\n  - {a: h0, b: sw0}\n  - {a: h1, b: sw0}\n",
       "FILE:6: endpoint h2 has no link"},
      {"switches:\n  sw0: {ports: 2}\n  sw1: {ports: 2}\nendpoints: 2\nlinks:\n  - {a: e0, b: sw0}\n  - {a: e1, b: sw1}\n",
       "FILE:6: endpoint e0's port 0 (link 1, to sw0) cannot reach endpoint e1: no path from sw0 to it through switches"},
      // e1 is on both switches, but an endpoint forwards nothing: e0 cannot reach e2 through it.
      {"switches:\n  sw0: {ports: 2}\n  sw1: {ports: 2}\nendpoints: 3\nlinks:\n  - {a: e0, b: sw0}\n"
       "  - {a: e1, b: sw0}\n  - {a: e1, b: sw1}\n  - {a: e2, b: sw1}\n",
       "FILE:6: endpoint e0's port 0 (link 1, to sw0) cannot reach endpoint e2: no path from sw0 to it through switches"},
      // Endpoints send on their first port (OLink's GPUs on no other; FabricRig's hosts on plane
      // 0 there): e0's goes to a switch with no route onward, which divided by an empty set of
      // next hops (SIGFPE), though e0 reaches e1 by its second link.
      {"switches:\n  sw0: {ports: 2}\n  dead: {ports: 1}\nendpoints: 2\nlinks:\n  - {a: e0, b: dead}\n"
       "  - {a: e0, b: sw0}\n  - {a: e1, b: sw0}\n",
       "FILE:6: endpoint e0's port 0 (link 1, to dead) cannot reach endpoint e1: no path from dead to it through switches"},
      // Port k of every endpoint forms plane k: x's port 1 has no y on its plane (FabricRig's host
      // there sends to y all the same) ...
      {"switches:\n  a: {ports: 2}\n  b: {ports: 1}\nendpoints: [x, y]\nlinks:\n  - {a: x, b: a}\n  - {a: x, b: b}\n"
       "  - {a: y, b: a}\n",
       "FILE:7: endpoint x's port 1 (link 2, to b) cannot reach endpoint y: no path from b to it through switches"},
      // ... and two planes in the other order at y: its host on port 1 would get x's plane-0 frames.
      {"switches:\n  a: {ports: 2}\n  b: {ports: 2}\nendpoints: [x, y]\nlinks:\n  - {a: x, b: a}\n  - {a: x, b: b}\n"
       "  - {a: y, b: b}\n  - {a: y, b: a}\n",
       "FILE:6: endpoint x's port 0 (link 1, to a) cannot reach endpoint y: y is on that plane by its port 1, not 0: port "
       "k of every endpoint forms plane k"},
      // Multi-homing into one plane: two parallel links to one leaf (every endpoint, so each port
      // k still reaches every other's), then one link to each of two leaves under one spine.
      // Accepted, the hosts on x's two ports shared one scoreboard and reported corruption.
      {"switches:\n  leaf0: {ports: 4}\nendpoints: [x, y]\nlinks:\n  - {a: x, b: leaf0}\n  - {a: y, b: leaf0}\n"
       "  - {a: x, b: leaf0}\n  - {a: y, b: leaf0}\n",
       "FILE:7: endpoint x: links 1 (to leaf0) and 3 (to leaf0) both reach one plane; multi-homing into one plane waits "
       "for the dual-plane NIC (issue 24); allowed: each of an endpoint's links on a plane of its own"},
      {"switches:\n  leaf0: {ports: 3}\n  leaf1: {ports: 3}\n  spine: {ports: 2}\nendpoints: [x, y]\nlinks:\n"
       "  - {a: x, b: leaf0}\n  - {a: x, b: leaf1}\n  - {a: y, b: leaf0}\n  - {a: y, b: leaf1}\n"
       "  - {a: leaf0, b: spine}\n  - {a: leaf1, b: spine}\n",
       "FILE:8: endpoint x: links 1 (to leaf0) and 2 (to leaf1) both reach one plane; multi-homing into one plane waits "
       "for the dual-plane NIC (issue 24); allowed: each of an endpoint's links on a plane of its own"},
  };
  for (const auto& [yaml, message] : cases) EXPECT_EQ(refusal(yaml), message) << yaml;
}

TEST_F(TopologyFile, AMissingFileOrBadYamlIsRefusedNamingTheFile) {
  const std::string missing = dir_.file("none.yaml");
  EXPECT_EQ(testing::config_error_of([&] { Topology::load(missing); }).rfind(missing + ": cannot read topology file", 0), 0u);
  const std::string bad = refusal("switches: {sw0: [\n");
  EXPECT_EQ(bad.rfind("FILE:2:1: YAML syntax error: ", 0), 0u) << bad;
}

// The presets, counted by hand.
TEST(TopologyPreset, SingleLeafSpineAndDualPlaneHaveTheirNodesAndLinks) {
  const Topology single = Topology::single(4, 2);
  EXPECT_EQ(single.switches().size(), 1u);
  EXPECT_EQ(single.nodes[0].ports, 4);
  EXPECT_EQ(single.endpoints().size(), 4u);
  EXPECT_EQ(single.links.size(), 4u);
  single.validate();

  // 8 endpoints on 2 leaves, 2 spines, 1:1: 4 down and 4 up per leaf, 2 to each spine.
  const Topology ls = Topology::leaf_spine(8, 2, 2, 1, 2, 10);
  ls.validate();
  ASSERT_EQ(ls.switches(), (Ports{0, 1, 2, 3}));
  EXPECT_EQ(ls.nodes[0].name, "leaf0");
  EXPECT_EQ(ls.nodes[2].name, "spine0");
  for (int s : {0, 1}) EXPECT_EQ(ls.nodes[s].ports, 8);
  for (int s : {2, 3}) EXPECT_EQ(ls.nodes[s].ports, 4);
  EXPECT_EQ(ls.endpoints().size(), 8u);
  EXPECT_EQ(ls.links.size(), 8u + 8u);
  EXPECT_EQ(ls.bisection_links(), 4);  // e0..e3 on leaf0 against e4..e7 on leaf1: an uplink a host
  EXPECT_EQ(ls.longest_cable_m(), 10);
  EXPECT_EQ(Routes(ls).next[0][4], (Ports{4, 5, 6, 7}));  // leaf0 to e4 on leaf1: its 4 uplinks
  // 2:1 over one spine: 4 down, 2 up.
  const Topology over = Topology::leaf_spine(8, 2, 1, 2, 2, 10);
  EXPECT_EQ(over.nodes[0].ports, 6);
  EXPECT_EQ(over.bisection_links(), 2);

  const Topology dual = Topology::dual_plane(4, 2);
  dual.validate();
  EXPECT_EQ(dual.switches().size(), 2u);
  EXPECT_EQ(dual.links.size(), 8u);
  for (int e : dual.endpoints()) EXPECT_EQ(dual.nodes[e].ports, 2);
}

// Two sites of 8 GPUs on 2 leaves and 2 spines each, 8:1 across: one cross-site line (8 GPUs / 8)
// is not a multiple of 2 spines, refused; with one spine per site: each leaf 4 down and 4 up, the
// spine 8 down and the line, whose far end is the other site's spine, 300 km of OTN.
TEST(TopologyPreset, TwoSitesJoinTheirSpinesByOtnLinesOfTheRatio) {
  Topology::Sites s;
  s.endpoints = 8;
  s.leaves = 2;
  s.spines = 2;
  const std::string m = testing::config_error_of([&] { Topology::two_sites(s); });
  EXPECT_EQ(m, "two-sites: 8 endpoints a site at 8:1 across need 1 cross-site lines; allowed: a whole multiple of "
               "the 2 spines") << m;
  s.spines = 1;
  const Topology t = Topology::two_sites(s);
  t.validate();
  ASSERT_EQ(t.switches().size(), 6u);
  EXPECT_EQ(t.endpoints().size(), 16u);
  EXPECT_EQ(t.links.size(), 2 * (8u + 8u) + 1u);
  for (int n : t.switches()) {
    const auto& node = t.nodes[static_cast<std::size_t>(n)];
    const bool spine = node.name.find("spine") != std::string::npos;
    EXPECT_EQ(node.ports, spine ? 9 : 8) << node.name;
    EXPECT_EQ(node.buffer_mib, spine ? 8192 : 0) << node.name;
  }
  const auto& line = t.links.back();
  EXPECT_EQ(t.nodes[static_cast<std::size_t>(line.a)].name, "a.spine0");
  EXPECT_EQ(t.nodes[static_cast<std::size_t>(line.b)].name, "b.spine0");
  EXPECT_EQ(line.cable_m, 300000);
  ASSERT_TRUE(line.otn);
  EXPECT_EQ(line.llr, false);
  EXPECT_EQ(t.bisection_links(), 1);  // a site against the other: the line
  EXPECT_EQ(t.nodes[static_cast<std::size_t>(t.endpoints()[8])].name, "e8");  // site b's first
}

TEST(TopologyPreset, ALeafSpineThatDoesNotDivideIsRefusedNamingTheKey) {
  EXPECT_EQ(testing::config_error_of([] { Topology::leaf_spine(8, 3, 1, 1, 2, 10); }),
            "topology.endpoints = 8: must be a multiple of topology.leaves = 3");
  const std::string ratio = testing::config_error_of([] { Topology::leaf_spine(8, 2, 2, 3, 2, 10); });
  EXPECT_EQ(ratio.rfind("topology.oversubscription = 3: 4 endpoints per leaf over 2 spines need a whole number", 0), 0u)
      << ratio;
}

// `topology` picks a preset or a file; where bare is allowed (and the default) it builds none.
TEST_F(TopologyFile, DeclareLoadsAFileAndValidatesIt) {
  Config c;
  c.set("topology", write(kSingle));
  const auto t = Topology::declare(c, 2);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->links.size(), 3u);
  Config bare;
  EXPECT_FALSE(Topology::declare(bare, 2, true));
  Config unbuildable;
  unbuildable.set("topology", write("switches:\n  sw0: {ports: 2}\nendpoints: 3\nlinks:\n  - {a: e0, b: sw0}\n"
                                    "  - {a: e1, b: sw0}\n"));
  EXPECT_NE(testing::config_error_of([&] { Topology::declare(unbuildable, 2); }).find("endpoint e2 has no link"),
            std::string::npos);
}

}  // namespace
}  // namespace xy::lingyun
