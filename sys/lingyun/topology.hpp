// Systems as data: switches, endpoints and the cables between them, from a YAML file or a preset,
// and the routes computed from the graph (never written per scenario).
//
// File format (every key checked; errors name file:line):
//   switches:                 # name: {ports: N}, and its own buffer_mib (else switch.buffer_mib)
//     leaf0: {ports: 16}
//     spine0: {ports: 16, buffer_mib: 8192}
//   endpoints: 4              # a count (e0, e1, ...) or a list of names
//   links:                    # a, b, cable length in metres (5 ns per metre)
//     - {a: e0, b: leaf0, cable_m: 2}
//     - {a: leaf0, b: spine0, cable_m: 10, fec: rs272, llr: true, fc: cbfc}
// A link may set its own fec (rs544 | rs272 | none), llr (true | false) and fc (cbfc | pfc |
// none); unset, the port.* parameters hold. A link between two switches may be a long-haul OTN
// line instead of a PHY (hw/otn/line.hpp), its length the cable's:
//     - {a: spine0, b: remote0, cable_m: 300000, otn: {wavelengths: 8, ber: 1e-6}}
// otn's keys, all optional: wavelengths (1-64, default the port's lanes: an OTU4 a 100G lane),
// ber (pre-FEC, 0-0.01), fibre_ns_per_km (4000-6000, default 4900), decoder_ns (0-100000, default
// 0), client_ppm (-100..100), server_ppm (-20..20), codec (fast | exact). Such a link runs no LLR
// and no flow control unless it sets fc (llr: true is refused: LLR is a short reach's retry).
// An endpoint has as many ports as links, its k-th link its port k (two for dual-plane); port k of
// every endpoint forms plane k, apart from the other planes. Presets: single (N endpoints on one
// switch), leaf-spine (two-tier Clos with an oversubscription ratio), dual-plane (every endpoint
// on two independent single-switch planes).
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hw/otn/line.hpp"
#include "kernel/config.hpp"
#include "kernel/units.hpp"

namespace xy::lingyun {

struct Topology {
  struct Node {
    std::string name;
    bool is_switch = false;
    int ports = 0;  // switches: radix; endpoints: links attached
    std::string where = "";  // file:line, or the preset, for error messages
    double buffer_mib = 0;   // a switch's own shared buffer; 0: switch.buffer_mib
  };
  struct Link {
    int a = 0, b = 0;  // node indices
    double cable_m = 2;
    std::string where;  // file:line, or the preset, for error messages
    std::optional<std::string> fec, fc;  // this link's own, or the ports' (port.*)
    std::optional<bool> llr;
    std::optional<otn::LineParams> otn;  // a long-haul OTN line; its channels 0: the port's lanes
    // A failure a scenario plants: the link dark both ways from dark_from until dark_until, then
    // its CDR relocking (kForever: cut for good); none when they are equal.
    static constexpr Time kForever = ~Time{0};
    Time dark_from = 0, dark_until = 0;
  };
  std::string name;
  std::vector<Node> nodes;
  std::vector<Link> links;

  // `topology` = single | leaf-spine | dual-plane | a YAML file; declares topology.* for presets.
  // With `bare_allowed`, "bare" (the default then) asks for no fabric of composed ports: none;
  // else the default is `default_preset`.
  static std::optional<Topology> declare(Config& c, int default_endpoints, bool bare_allowed = false,
                                         const std::string& default_preset = "single");
  static Topology load(const std::string& path);  // throws ConfigError naming file:line
  static Topology single(int endpoints, double cable_m);
  static Topology leaf_spine(int endpoints, int leaves, int spines, double oversubscription, double cable_m,
                             double spine_cable_m);
  static Topology dual_plane(int endpoints, double cable_m);  // planes(endpoints, 2, cable_m)
  // Two sites (a, b), each a non-blocking leaf-spine of `endpoints` (e0... in site a, then site
  // b's), whose spines go straight into OTN lines to their peers in the other site: cross-site
  // capacity 1/`oversubscription` of a site's endpoints', in whole lines spread evenly over the
  // spines, `km` long; the spines' buffers `spine_buffer_mib`.
  struct Sites {
    int endpoints = 16, leaves = 4, spines = 2;
    double oversubscription = 8, km = 300, spine_buffer_mib = 8192, cable_m = 2, spine_cable_m = 10;
    otn::LineParams otn;
  };
  static Topology two_sites(const Sites& s);
  // Every endpoint on `planes` independent single-switch planes (plane0, plane1...), one port each.
  static Topology planes(int endpoints, int planes, double cable_m);

  std::vector<int> endpoints() const;  // node indices, in order: endpoint e is endpoints()[e]
  std::vector<int> switches() const;
  // Throws ConfigError (at the link's file:line) for what the fabric builder and the testbenches
  // rely on: a switch with more links than ports, an endpoint without a link, an endpoint's port
  // that does not reach every other endpoint's port of the same number (port k of every endpoint
  // forms plane k: the switches joined by links), or two of an endpoint's ports on one plane.
  void validate() const;
  // Links crossing the narrowest cut between the first and second half of the endpoints (max
  // flow), for the bisection bandwidth.
  int bisection_links() const;
  double longest_cable_m() const;
  // What sets its size, for a message about its memory: the preset's topology.endpoints or the
  // file, with the switches, their ports and the links it makes.
  std::string sized_by() const;
};

// Routes from the graph: for every switch and destination endpoint, the switch's ports on a
// shortest path (an ECMP set). Port p of a switch is its p-th link in file order.
struct Routes {
  explicit Routes(const Topology& t);
  // next[s][e]: ports of switch node s toward endpoint e; next[n] of an endpoint node is empty.
  std::vector<std::vector<std::vector<int>>> next;
  // port_of[link][side]: the port the link takes at that end (side 0 = a).
  std::vector<std::array<int, 2>> port_of;
  int max_switch_hops = 0;  // switches on the longest shortest path between two endpoints
};

}  // namespace xy::lingyun
