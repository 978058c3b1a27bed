#!/usr/bin/env python3
"""Checks an ASTRA-sim network config and system config the way ASTRA-sim reads them, and that the
network reproduces measured message times.

    astra_sim_check.py NETWORK.yml [--system SYSTEM.json] [--sweep SWEEP.json --tolerance 0.02]

Network rules, from astra-network-analytical (common/network-parser/NetworkParser.cpp,
include/.../NetworkParser.h, common/NetworkFunction.cpp, congestion_unaware/basic-topology/*.cpp):
- topology, npus_count, bandwidth, latency are lists (parse_vector iterates the node: a missing
  key or a scalar reads as an empty list); each element converts with yaml-cpp's as<T>:
  topology std::string, npus_count int, bandwidth and latency double;
- topology names are Ring, FullyConnected or Switch; there is at least one (get_dims_count
  asserts dims_count > 0);
- npus_count, bandwidth and latency have as many entries as topology;
- npus_count > 1, bandwidth > 0, latency >= 0;
- units: bandwidth GB/s with 1 GB = 2^30 B (bw_GBps_to_Bpns), latency ns.
A message of `size` bytes takes hops x latency + size / (bandwidth x 2^30 / 10^9) ns, truncated
to an integer (EventTime), with hops = 2 on a Switch (src -> switch -> dest) and 1 on a
FullyConnected dimension (BasicTopology::send, compute_communication_delay).

System rules, from astra-sim (astra-sim/system/Sys.cc initialize_sys, astraccl/CollectiveImplLookup.cc):
scheduling-policy LIFO | FIFO | EXPLICIT; collective-optimization baseline | localBWAware;
endpoint-delay, active-chunks-per-dimension, preferred-dataset-splits, local-reduction-delay
integers (assigned to int members); preferred-dataset-splits > 0 (Sys divides a collective's size
by it, and its own default is 0); each *-implementation a list of ring, oneRing, doubleBinaryTree,
direct[N], oneDirect[N], halvingDoubling, oneHalvingDoubling.

With --sweep (an `xysim sweep` of olink-message over message.bytes), every point's measured
network time (summary.transfer_ns) must be reproduced within the tolerance.
"""
import argparse
import json
import math
import re
import sys

import yaml

TOPOLOGIES = {"Ring", "FullyConnected", "Switch"}
HOPS = {"Switch": 2, "FullyConnected": 1}  # Ring: depends on the pair, not used here
IMPLEMENTATIONS = re.compile(r"^(ring|oneRing|doubleBinaryTree|direct\d*|oneDirect\d*|halvingDoubling|oneHalvingDoubling)$")
# yaml-cpp's as<int> and as<double> on plain scalars (decimal; as<double> also takes exponents).
INT = re.compile(r"^[-+]?[0-9]+$")
DOUBLE = re.compile(r"^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$")


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def scalars(root, key):
    """The list parse_vector reads: the elements of a sequence node, as their text."""
    node = next((v for k, v in root.value if k.value == key), None)
    if not isinstance(node, yaml.SequenceNode):
        return []  # a missing key or a scalar iterates as nothing
    out = []
    for element in node.value:
        if not isinstance(element, yaml.ScalarNode):
            fail(f"{key}: element {element.start_mark.line + 1} is not a scalar (yaml-cpp as<T> throws BadConversion)")
        out.append(element.value)
    return out


def network(path):
    root = yaml.compose(open(path))
    if not isinstance(root, yaml.MappingNode):
        fail(f"{path}: not a map of keys")
    topology = scalars(root, "topology")
    if not topology:
        fail(f"{path}: topology: no dimension (dims_count must be > 0)")
    for name in topology:
        if name not in TOPOLOGIES:
            fail(f"{path}: topology {name!r}: not supported (Ring, FullyConnected, Switch)")
    values = {}
    for key, pattern, kind in (("npus_count", INT, int), ("bandwidth", DOUBLE, float), ("latency", DOUBLE, float)):
        texts = scalars(root, key)
        if len(texts) != len(topology):
            fail(f"{path}: length of {key} ({len(texts)}) doesn't match with dimensions ({len(topology)})")
        for t in texts:
            if not pattern.match(t):
                fail(f"{path}: {key}: {t!r} does not convert to {kind.__name__}")
        values[key] = [kind(t) for t in texts]
    if any(n <= 1 for n in values["npus_count"]):
        fail(f"{path}: npus_count {values['npus_count']} should be larger than 1")
    if any(not b > 0 for b in values["bandwidth"]):
        fail(f"{path}: bandwidth {values['bandwidth']} should be larger than 0")
    if any(not l >= 0 for l in values["latency"]):
        fail(f"{path}: latency {values['latency']} should be non-negative")
    return topology, values


def system(path):
    j = json.load(open(path))
    allowed = {"scheduling-policy": {"LIFO", "FIFO", "EXPLICIT"}, "collective-optimization": {"baseline", "localBWAware"}}
    for key, names in allowed.items():
        if key in j and j[key] not in names:
            fail(f"{path}: {key} = {j[key]!r}: one of {sorted(names)}")
    if "scheduling-policy" not in j:
        fail(f"{path}: scheduling-policy missing (Sys leaves it unset)")
    for key in ("endpoint-delay", "active-chunks-per-dimension", "preferred-dataset-splits", "local-reduction-delay"):
        if key in j and not isinstance(j[key], int):
            fail(f"{path}: {key} = {j[key]!r}: an integer")
    if not j.get("preferred-dataset-splits", 0) > 0:
        fail(f"{path}: preferred-dataset-splits must be > 0 (a collective's size is divided by it)")
    for key in ("all-reduce-implementation", "all-gather-implementation", "reduce-scatter-implementation",
                "all-to-all-implementation"):
        if key not in j:
            fail(f"{path}: {key} missing: a workload with that collective finds no implementation")
        if not isinstance(j[key], list) or not all(isinstance(x, str) and IMPLEMENTATIONS.match(x) for x in j[key]):
            fail(f"{path}: {key} = {j[key]!r}: a list of collective implementations")
    return j


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("network")
    ap.add_argument("--system")
    ap.add_argument("--sweep")
    ap.add_argument("--tolerance", type=float, default=0.02)
    a = ap.parse_args()
    topology, v = network(a.network)
    print(f"ok: {a.network} parses: {topology}, npus {v['npus_count']}, {v['bandwidth']} GB/s, {v['latency']} ns")
    if a.system:
        j = system(a.system)
        print(f"ok: {a.system}: endpoint-delay {j.get('endpoint-delay')} ns, every key ASTRA-sim reads is valid")
    if a.sweep:
        if len(topology) != 1 or topology[0] not in HOPS:
            fail("the acceptance check takes one Switch or FullyConnected dimension")
        hops, latency, bandwidth = HOPS[topology[0]], v["latency"][0], v["bandwidth"][0]
        bytes_per_ns = bandwidth * 2**30 / 1e9
        points = json.load(open(a.sweep))
        sizes = set()
        for p in points:
            size, measured = p["summary"]["message_bytes"], p["summary"]["transfer_ns"]
            modelled = math.floor(hops * latency + size / bytes_per_ns)
            error = modelled / measured - 1
            print(f"  {size:>8} B: measured {measured:.1f} ns, ASTRA-sim {modelled} ns ({100 * error:+.2f} %)")
            if abs(error) > a.tolerance:
                fail(f"{size} B: ASTRA-sim gives {modelled} ns, measured {measured} ns: {100 * error:+.2f} % "
                     f"(allowed {100 * a.tolerance} %)")
            sizes.add(size)
        if len(sizes) < 2:
            fail(f"{a.sweep}: {len(sizes)} message size(s); the check needs two at least")
        print(f"ok: {len(points)} measured messages of {len(sizes)} sizes reproduced within {100 * a.tolerance} %")


main()
