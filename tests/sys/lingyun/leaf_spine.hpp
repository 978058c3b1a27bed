// The small leaf-spine the topology and fabric tests work out by hand.
#pragma once

namespace xy::testing {

// Two leaves with two hosts each, two spines, each leaf on each spine once. Link i is the i-th
// line under links: (port p of a switch is its p-th link in file order):
//   leaf0: h0 p0, h1 p1, spine0 p2, spine1 p3     spine0: leaf0 p0, leaf1 p1
//   leaf1: h2 p0, h3 p1, spine0 p2, spine1 p3     spine1: leaf0 p0, leaf1 p1
constexpr const char* kLeafSpine =
    "switches:\n"
    "  leaf0: {ports: 4}\n"
    "  leaf1: {ports: 4}\n"
    "  spine0: {ports: 2}\n"
    "  spine1: {ports: 2}\n"
    "endpoints: [h0, h1, h2, h3]\n"
    "links:\n"
    "  - {a: h0, b: leaf0, cable_m: 3}\n"
    "  - {a: h1, b: leaf0}\n"
    "  - {a: h2, b: leaf1, cable_m: 4}\n"
    "  - {a: h3, b: leaf1, cable_m: 5}\n"
    "  - {a: leaf0, b: spine0, cable_m: 10, fec: rs272, llr: false, fc: pfc}\n"
    "  - {a: leaf0, b: spine1, cable_m: 20}\n"
    "  - {a: spine0, b: leaf1, cable_m: 30}\n"
    "  - {a: leaf1, b: spine1, cable_m: 40}\n";

}  // namespace xy::testing
