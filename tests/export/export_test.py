#!/usr/bin/env python3
"""Exports of real runs (xysim export), read back as their consumers read them (consumers.py), against
arithmetic from first principles written here: export_test.py XYSIM CASE."""
import json
import math
import os
import re
import subprocess
import sys
import tempfile

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from consumers import Rejected, hpcc_config, hpcc_topology, htsim_load  # noqa: E402

XYSIM, CASE = sys.argv[1:3]
WORK = tempfile.mkdtemp(prefix="export_test_")


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)
    print(f"ok: {msg}")


def run(name, scenario, *sets, status=0):
    out = os.path.join(WORK, name)
    args = [XYSIM, "run", scenario, "--quiet", "--out", out] + [a for s in sets for a in ("--set", s)]
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != status:
        fail(f"{' '.join(args)}: exit {r.returncode}: {r.stderr}")
    with open(os.path.join(out, "results.json")) as f:
        return out, json.load(f)


def export(fmt, *inputs):
    out = os.path.join(WORK, f"{fmt}-{len(os.listdir(WORK))}")
    r = subprocess.run([XYSIM, "export", fmt, *inputs, "--out", out], capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"export {fmt} {inputs}: exit {r.returncode}: {r.stderr}")
    return out


def refused(fmt, inputs, want):
    r = subprocess.run([XYSIM, "export", fmt, *inputs, "--out", os.path.join(WORK, "refused")], capture_output=True,
                       text=True)
    lines = r.stderr.splitlines()
    check(r.returncode == 2 and len(lines) == 1 and want in lines[0] and inputs[0] in lines[0],
          f"{fmt} refuses {inputs[0]}: exit {r.returncode}, one line naming it and '{want}': {r.stderr.strip()}")


def read(*path):
    with open(os.path.join(*path)) as f:
        return f.read()


# --- first principles ---

def line_bps(cfg):
    # 64b/66b then 256b/257b transcoding, then RS(544,514) parity: 100 Gb/s a 106.25 Gb/s lane.
    return cfg["port.lanes"] * cfg["port.lane_gbps"] * 1e9 * 514 / 544 * 256 / 257


def phy_ns(cfg, fec, cable_m):
    """One way through the PHY (its cycle contract, hw/phy/phy.hpp): MAC/PCS + encoder + PMA TX,
    5 ns/m of cable, PMA RX and deskew + the codeword group gathered at the RX + decoder + PCS/MAC,
    each in whole PHY cycles (40 bits a lane a cycle)."""
    cycle = 40 / cfg["port.lane_gbps"]
    cycles = lambda ns: math.ceil(ns / cycle - 1e-9)  # noqa: E731
    n = {"rs544": 544, "rs272": 272, "none": 514}[fec]
    per_cycle = 40 * cfg["port.lanes"]
    # KP4 as 802.3 lays it out by the port's rate (100G lanes of 106.25 Gb/s): up to 100G one word,
    # 200G and 400G two, 800G four (802.3df); the others the fewest words that fill whole cycles.
    named_gbps = cfg["port.lanes"] * cfg["port.lane_gbps"] / 1.0625
    if fec == "rs544":
        words = 4 if named_gbps > 400.5 else 2 if named_gbps > 100.5 else 1
    else:
        words = 1 if fec == "none" else next(k for k in (1, 2) if n * 10 * k % per_cycle == 0)
    group = math.ceil(n * 10 * words / per_cycle)
    path = cycles(cfg["port.pma_tx_ns"] + 5 * cable_m + cfg["port.pma_rx_ns"] + cfg["port.max_skew_ns"])
    mac_pcs = cycles(cfg["port.mac_pcs.tx_ns"]) + cycles(cfg["port.mac_pcs.rx_ns"])
    return (mac_pcs + cycles(cfg[f"port.{fec}.encoder_ns"]) + path + group + cycles(cfg[f"port.{fec}.decoder_ns"])) * cycle


def switch_pipeline_ns(cfg):
    # In a fabric the ports model the MACs: the switch core's rx_mac and tx_mac stages are 0.
    stages = ("parse", "lookup", "enqueue", "arbiter", "crossbar", "egress")
    return sum(cfg[f"switch.lat.{s}"] for s in stages) * 1000 / cfg["switch.clock_mhz"]


def frame_loss(fec, ber, payload_bytes):
    """Packets lost without LLR: a PAM4 symbol errs with 2 x BER, a 10-bit RS symbol spans 5 of
    them; a codeword fails with more than t symbol errors; a packet spans k+1 or k+2 codewords."""
    n, t, data_bits = {"rs544": (544, 15, 5120), "rs272": (272, 7, 2560), "none": (514, 0, 5120)}[fec]
    p = 1 - (1 - 2 * ber) ** 5
    cer = 1 - sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(t + 1))
    q = payload_bytes * 8 / data_bits
    k, frac = math.floor(q), q - math.floor(q)
    return (1 - frac) * (1 - (1 - cer) ** (k + 1)) + frac * (1 - (1 - cer) ** (k + 2))


def htsim(path):
    try:
        return htsim_load(read(path))
    except Rejected as e:
        fail(f"htsim would not load {path}: {e}")


def hpcc(directory):
    try:
        config = hpcc_config(read(directory, "config.txt"))
        mix = config["TOPOLOGY_FILE"]
        check(mix == "mix/topology.txt", f"TOPOLOGY_FILE names the topology.txt beside it in mix/: {mix}")
        return config, hpcc_topology(read(directory, "topology.txt"), config)
    except Rejected as e:
        fail(f"third.cc would not read {directory}: {e}")


# --- cases ---

def htsim_leaf_spine():
    out, res = run("ls", "switch-uniform", "topology=leaf-spine", "topology.endpoints=16", "topology.leaves=4",
                   "topology.spines=2", "topology.oversubscription=2", "uniform.points=1", "uniform.load=0.3",
                   "uniform.measure_cycles=3000", "uniform.warmup_cycles=1000")
    cfg = res["config"]
    topo = htsim(os.path.join(export("htsim", out), "load1.topo"))
    # 16 endpoints on 4 leaves: 4 down a leaf, 4 / 2 = 2 up, one to each of the 2 spines.
    check(topo["NSRV"] == 16 and topo["NTOR"] == 4 and topo["NAGG"] == 2 and topo["NCORE"] == 0,
          f"16 hosts, 4 ToRs, 2 aggregation switches: {topo['NSRV']}, {topo['NTOR']}, {topo['NAGG']}")
    check(topo["links"] == {"host": 16, "tor_agg": 8}, f"16 host links, 4 x 2 uplinks: {topo['links']}")
    check(all(s == round(line_bps(cfg) / 1e9) * 10**9 for s in topo["speed_bps"][:2]),
          f"link speed 8 x 106.25 x 514/544 x 256/257 = {line_bps(cfg) / 1e9:.3f} Gb/s, rounded: {topo['speed_bps']}")
    t0, t1 = topo["tiers"][0], topo["tiers"][1]
    for tier, cable in ((t0, cfg["topology.cable_m"]), (t1, cfg["topology.spine_cable_m"])):
        want = round(phy_ns(cfg, cfg["port.fec"], cable))
        check(tier["downlink_latency_ns"] == want, f"{cable} m link: {tier['downlink_latency_ns']} ns = {want}")
    extra = 5 * (cfg["topology.spine_cable_m"] - cfg["topology.cable_m"])
    check(abs(t1["downlink_latency_ns"] - t0["downlink_latency_ns"] - extra) <= 1.5,
          f"the longer cable adds 5 ns/m: {t1['downlink_latency_ns'] - t0['downlink_latency_ns']} ns vs {extra}")
    pipe = round(switch_pipeline_ns(cfg))
    check(t0["switch_latency_ns"] == pipe and t1["switch_latency_ns"] == pipe,
          f"switch latency = the unloaded pipeline, {pipe} ns: {t0['switch_latency_ns']}, {t1['switch_latency_ns']}")
    config, top = hpcc(os.path.join(export("ns3", out), "load1"))
    check(top["nodes"] == 22 and len(top["switches"]) == 6 and len(top["links"]) == 24,
          f"ns-3: 16 + 4 + 2 nodes, 6 switches, 16 + 8 links: {top['nodes']}, {len(top['switches'])}, "
          f"{len(top['links'])}")


def htsim_fec_llr():
    out, res = run("fec", "lingyun-fec-llr", "traffic.us=20")
    cfg, directory = res["config"], export("htsim", out)
    for design in ("rs544", "rs272_llr", "none_llr"):
        topo = htsim(os.path.join(directory, f"{design}.topo"))
        fec = res["summary"][design]["fec"]
        t0, t1 = topo["tiers"][0]["downlink_latency_ns"], topo["tiers"][1]["downlink_latency_ns"]
        want = tuple(round(phy_ns(cfg, fec, cfg[k])) for k in ("topology.cable_m", "topology.spine_cable_m"))
        check((t0, t1) == want, f"{design}: host and spine link latencies {t0}, {t1} ns = {want}")
        # The path e0 - leaf0 - spine0 - leaf1 - e1 crosses each link kind twice; its PHY stages
        # were measured (summed over the frames' hops) by the run.
        path = res["summary"][design]["path"]
        measured = sum(path[s] for s in ("mac_pcs_tx_ns", "fec_encode_ns", "pma_cable_ns", "fec_accumulate_ns",
                                         "fec_decode_ns", "mac_pcs_rx_ns"))
        check(abs(2 * t0 + 2 * t1 - measured) <= 2, f"{design}: 2 x {t0} + 2 x {t1} ns = the run's path PHY stages "
              f"{measured:.2f} ns (4 roundings)")
        check(topo["NSRV"] == 2 and topo["NTOR"] == 2 and topo["NAGG"] == 1, f"{design}: 2 hosts, 2 leaves, 1 spine")


def htsim_incast():
    out, res = run("incast", "lingyun-incast", "incast.warmup_us=2", "incast.measure_us=3")
    topo_path = os.path.join(export("htsim", out), "cbfc_shared_vc.topo")
    topo = htsim(topo_path)
    # Six hosts, two on each of three leaves, one uplink each to one spine: oversubscribed 2:1.
    check(topo["NSRV"] == 6 and topo["NTOR"] == 3 and topo["NAGG"] == 1, "6 hosts, 3 ToRs, 1 spine")
    check(topo["tiers"][0]["oversubscribed"] == 2 and topo["links"] == {"host": 6, "tor_agg": 3},
          f"2 hosts over 1 uplink a leaf: {topo['tiers'][0]['oversubscribed']}, {topo['links']}")
    check("# ToR 2 = leaf2: hosts 4..5 = S2 R" in read(topo_path), "hosts 4 and 5 of htsim are S2 and R on leaf2")


def yaml_topology(path, host_cables, spine_fec):
    text = "switches:\n  leaf0: {ports: 4}\n  leaf1: {ports: 4}\n  spine0: {ports: 4}\nendpoints: 2\nlinks:\n"
    for e, cable in enumerate(host_cables):
        text += f"  - {{a: e{e}, b: leaf{e}, cable_m: {cable}}}\n"
    for leaf in (0, 1):
        text += f"  - {{a: leaf{leaf}, b: spine0, cable_m: 30, fec: {spine_fec}}}\n"
    with open(path, "w") as f:
        f.write(text)
    return path


def htsim_refusals():
    basic, _ = run("basic", "link-basic", "traffic.packets=100")
    refused("htsim", [basic], "builds no fabric of composed Lingyun ports")
    dual, _ = run("dual", "olink-latency", "topology=dual-plane")
    refused("htsim", [dual], "endpoint e0 has 2 links")
    single, _ = run("single", "olink-latency", "topology=single")
    refused("htsim", [single], "one tier of switches")
    half, _ = run("half", "switch-uniform", "topology=leaf-spine", "topology.endpoints=4",
                  "topology.oversubscription=0.5", "uniform.points=1", "uniform.load=0.2",
                  "uniform.measure_cycles=2000")
    refused("htsim", [half], "whole ratio")
    uneven = yaml_topology(os.path.join(WORK, "uneven.yaml"), (2, 7), "rs544")
    out, _ = run("uneven", "switch-uniform", f"topology={uneven}", "uniform.points=1", "uniform.load=0.2",
                 "uniform.measure_cycles=2000")
    refused("htsim", [out], "htsim has one latency a tier")
    # The fabric is the one results.json describes (`fabrics`): the file changed after the run
    # changes nothing.
    yaml_topology(uneven, (2, 7), "none")
    refused("htsim", [out], "htsim has one latency a tier")
    # A description that is not the fabric the run measured is refused: links whose FEC the run
    # did not have, a port with no stats in the run.
    with open(os.path.join(out, "results.json")) as f:
        doc = json.load(f)
    for link in doc["fabrics"][0]["links"]:
        link["fec"] = "none"
    tampered = os.path.join(WORK, "tampered.json")
    with open(tampered, "w") as f:
        json.dump(doc, f)
    refused("htsim", [tampered], "not the link it ran")
    with open(os.path.join(out, "results.json")) as f:
        doc = json.load(f)
    doc["fabrics"][0]["links"][0]["ports"][1] = "top.load1.leaf0.port9"
    with open(tampered, "w") as f:
        json.dump(doc, f)
    refused("htsim", [tampered], "no stats of its port top.load1.leaf0.port9")
    with open(yaml_topology(uneven, (2, 7), "rs544"), "a") as f:
        f.write("  - {a: leaf0, b: spine0, cable_m: 30}\n")
    run("lopsided", "switch-uniform", f"topology={uneven}", "uniform.points=1", "uniform.load=0.2",
        "uniform.measure_cycles=2000")
    refused("htsim", [os.path.join(WORK, "lopsided")], "by a bundle of the same size")
    with open(os.path.join(out, "results.json")) as f:
        doc = json.load(f)
    doc["stats"]["top.load1.e0.port0.phy.frame_latency"] = {"count": 3}
    broken = os.path.join(WORK, "broken.json")
    with open(broken, "w") as f:
        json.dump(doc, f)
    refused("htsim", [broken], "malformed")
    sweep = os.path.join(WORK, "sweep.yaml")
    with open(sweep, "w") as f:
        f.write("scenario: olink-latency\npoints:\n  - {topology: leaf-spine}\n")
    r = subprocess.run([XYSIM, "sweep", sweep, "--out", os.path.join(WORK, "sweep"), "-j", "1"], capture_output=True,
                       text=True)
    check(r.returncode == 0, f"xysim sweep: exit {r.returncode} {r.stderr}")
    refused("htsim", [os.path.join(WORK, "sweep", "sweep.json")], "OUT/points/NNNN/results.json")


def ns3_fec_llr():
    out, res = run("fec", "lingyun-fec-llr", "traffic.us=20")
    cfg = res["config"]
    directory = export("ns3", out, out)  # twice: each input's fabrics under its number
    for design in ("rs544", "rs272_llr", "none_llr"):
        config, top = hpcc(os.path.join(directory, "2", design))
        fec = res["summary"][design]["fec"]
        check(top["nodes"] == 5 and len(top["switches"]) == 3 and len(top["links"]) == 4,
              f"{design}: 2 hosts + 3 switches, 4 links")
        # Node ids in the preset's order: leaf0 0, leaf1 1, spine0 2, e0 3, e1 4.
        for link in top["links"]:
            spine = 2 in (link["src"], link["dst"])
            want = round(phy_ns(cfg, fec, cfg["topology.spine_cable_m" if spine else "topology.cable_m"]))
            check(link["delay_ns"] == want and link["bps"] == line_bps(cfg) and link["error"] == 0,
                  f"{design} {link['src']}-{link['dst']}: {link['delay_ns']} ns = {want}, {link['bps']} b/s, "
                  "error 0 at BER 0")
        check(config["ENABLE_QCN"] == int(cfg["switch.ecn.on"]), "ENABLE_QCN = switch.ecn.on")
        rate = int(line_bps(cfg))
        check(config["KMIN_MAP"] == {rate: round(cfg["switch.ecn.kmin_bytes"] / 1000)}
              and config["KMAX_MAP"] == {rate: round(cfg["switch.ecn.kmax_bytes"] / 1000)}
              and config["PMAX_MAP"] == {rate: cfg["switch.ecn.pmax"]},
              f"ECN maps in KB at the link rate: {config['KMIN_MAP']}, {config['KMAX_MAP']}, {config['PMAX_MAP']}")
        check(config["BUFFER_SIZE"] == round(cfg["switch.buffer_mib"]) and config["LINK_DOWN"] == [0, 0, 0],
              f"BUFFER_SIZE {config['BUFFER_SIZE']} MiB, no link down")


def ns3_file_topology():
    path = yaml_topology(os.path.join(WORK, "mixed.yaml"), (3, 2), "rs272")
    out, res = run("mixed", "switch-uniform", f"topology={path}", "uniform.points=1", "uniform.load=0.2",
                   "uniform.measure_cycles=2000")
    cfg = res["config"]
    _, top = hpcc(os.path.join(export("ns3", out), "load1"))
    # Node ids: leaf0 0, leaf1 1, spine0 2, e0 3, e1 4; links in file order.
    want = [round(phy_ns(cfg, "rs544", 3)), round(phy_ns(cfg, "rs544", 2)), round(phy_ns(cfg, "rs272", 30)),
            round(phy_ns(cfg, "rs272", 30))]
    got = [link["delay_ns"] for link in top["links"]]
    check(got == want, f"each link its own cable and FEC (3 m, 2 m rs544; 30 m rs272): {got} ns = {want}")
    check([(link["src"], link["dst"]) for link in top["links"]] == [(3, 0), (4, 1), (0, 2), (1, 2)],
          "links between the file's nodes, in its order")


def ns3_parallel_links():
    """A leaf-spine with 8 links from each leaf to its one spine: third.cc routes over one link per
    node pair (consumers.hpcc_topology), so the capacity it sees between two nodes must be what the
    run had, the links' count times the line rate."""
    out, res = run("parallel", "switch-uniform", "topology=leaf-spine", "topology.endpoints=16", "topology.leaves=2",
                   "topology.spines=1", "topology.oversubscription=1", "uniform.points=1", "uniform.load=0.3",
                   "uniform.measure_cycles=2000", "uniform.warmup_cycles=500")
    cfg = res["config"]
    directory = os.path.join(export("ns3", out), "load1")
    config, top = hpcc(directory)
    # Node ids in the preset's order: leaf0 0, leaf1 1, spine0 2, e0.. 3..18. 8 endpoints a leaf,
    # 8 / 1 = 8 uplinks, all to spine0.
    leaves, per_leaf = cfg["topology.leaves"], cfg["topology.endpoints"] // cfg["topology.leaves"]
    uplinks = round(per_leaf / cfg["topology.oversubscription"]) // cfg["topology.spines"]
    line = round(line_bps(cfg))
    want = {(e // per_leaf, leaves + cfg["topology.spines"] + e): line for e in range(cfg["topology.endpoints"])}
    want.update({(leaf, leaves + s): uplinks * line for leaf in range(leaves) for s in range(cfg["topology.spines"])})
    check(uplinks == 8 and top["capacity"] == want,
          f"capacity per node pair as third.cc routes: hosts {line} b/s, leaf-spine {uplinks} x {line} b/s: "
          f"{sorted(set(top['capacity'].values()))}")
    check(len(top["links"]) == 16 + 2, f"16 host links and 2 merged uplinks: {len(top['links'])} lines")
    spine = [link for link in top["links"] if 2 in (link["src"], link["dst"])]
    check(all(link["delay_ns"] == round(phy_ns(cfg, cfg["port.fec"], cfg["topology.spine_cable_m"])) for link in spine),
          "a merged link keeps its links' delay")
    # third.cc asserts an ECN entry at every switch port's rate; a merged port's queue holds 8 ports'.
    check(config["KMIN_MAP"] == {line: round(cfg["switch.ecn.kmin_bytes"] / 1000),
                                 uplinks * line: round(uplinks * cfg["switch.ecn.kmin_bytes"] / 1000)}
          and set(config["PMAX_MAP"]) == {line, uplinks * line},
          f"ECN maps at both rates: {config['KMIN_MAP']}, {config['PMAX_MAP']}")
    check(f"- 0 - 2 (leaf0 - spine0): 8 links of {line_bps(cfg) / 1e9:.3f} Gb/s, written as one"
          in read(directory, "README.md"),
          "the README names the merged links")
    # What the exporter wrote before: every link on its own line. third.cc would route over one of 8.
    text = read(directory, "topology.txt").split("\n")
    header, body = text[:2], [l for l in text[2:] if l]
    split = []
    for l in body:
        src, dst, rate, delay, error = l.split()
        n = uplinks if 2 in (int(src), int(dst)) else 1
        split += [f"{src} {dst} {line}bps {delay} {error}"] * n
    old = "\n".join([f"19 3 {len(split)}", header[1]] + split) + "\n"
    try:
        hpcc_topology(old, config)
        fail("8 parallel links, one line each, were read as usable")
    except Rejected as e:
        check("already joined" in str(e), f"one line per parallel link is rejected: {e}")
    # Parallel links that differ cannot be one link: refused, naming why.
    path = os.path.join(WORK, "unlike.yaml")
    with open(path, "w") as f:
        f.write("switches:\n  leaf0: {ports: 4}\n  leaf1: {ports: 4}\n  spine0: {ports: 4}\nendpoints: 2\nlinks:\n"
                "  - {a: e0, b: leaf0}\n  - {a: e1, b: leaf1}\n  - {a: leaf0, b: spine0, cable_m: 30}\n"
                "  - {a: leaf0, b: spine0, cable_m: 10}\n  - {a: leaf1, b: spine0, cable_m: 30}\n")
    unlike, _ = run("unlike", "switch-uniform", f"topology={path}", "uniform.points=1", "uniform.load=0.2",
                    "uniform.measure_cycles=2000")
    refused("ns3", [unlike], "keeps one link per node pair")


def ns3_error_rate():
    ber = 1e-3
    for design, lossy in (("rs544", True), ("rs272_llr", False)):
        out, res = run(design, "lingyun-fec-llr", f"fec_llr.design={design}", f"port.errors.ber={ber}", "traffic.us=10")
        config, top = hpcc(os.path.join(export("ns3", out), design))
        fec = res["summary"][design]["fec"]
        want = frame_loss(fec, ber, config["PACKET_PAYLOAD_SIZE"]) if lossy else 0
        for link in top["links"]:
            check(abs(link["error"] - want) <= 1e-5 * want,
                  f"{design} at BER {ber}: per-packet loss {link['error']:.6g} = {want:.6g}"
                  f"{' (binomial, RS(544,514) corrects 15 symbols)' if lossy else ' (LLR replays)'}")
    check(want == 0 and frame_loss("rs544", ber, 1000) > 1e-5, "a lossy rate was exercised")


def ns3_refusals():
    basic, _ = run("basic", "link-basic", "traffic.packets=100")
    refused("ns3", [basic], "builds no fabric of composed Lingyun ports")
    bare, _ = run("bare", "switch-uniform", "uniform.points=1", "uniform.measure_cycles=2000")
    refused("ns3", [bare], "topology = bare")
    dual, _ = run("dual", "olink-latency", "topology=dual-plane")
    refused("ns3", [dual], "HPCC's hosts have one NIC")
    flap, _ = run("flap", "lingyun-fec-llr", "fec_llr.design=rs272_llr", "traffic.us=20", "port.link_down_at_us=8",
                  "port.link_down_us=0.5")
    refused("ns3", [flap], "LINK_DOWN")
    # No FEC at 1e-3: LLR cannot bring the links up, and the run fails naming them.
    down, _ = run("down", "lingyun-fec-llr", "fec_llr.design=none_llr", "port.errors.ber=1e-3", "traffic.us=10",
                  "sim.watchdog_us=20", status=1)
    refused("ns3", [down], "the run did not pass")
    burst, _ = run("burst", "lingyun-fec-llr", "fec_llr.design=rs544", "traffic.us=10",
                   "port.errors.p_good_to_bad=1e-7")
    refused("ns3", [burst], "random errors only")


def astra_sim_valid_range():
    """network.yml states the message sizes it holds for and a bound: ASTRA-sim's formula on the
    file's values (tests/cli/astra_sim_check.py has its source's rules) stays within the bound for
    every measured message in the range, and a 64-byte message, below it, is off by more."""
    sweep = os.path.join(WORK, "sizes")
    with open(sweep + ".yaml", "w") as f:
        f.write("scenario: olink-message\nset: {message.count: 1}\ngrid:\n  message.bytes: [4096, 65536, 1048576]\n")
    r = subprocess.run([XYSIM, "sweep", sweep + ".yaml", "--out", sweep, "-j", "2"], capture_output=True, text=True)
    check(r.returncode == 0, f"xysim sweep: exit {r.returncode} {r.stderr}")
    text = read(export("astra-sim", sweep), "network.yml")
    stated = re.search(r"^# Valid range: messages of (\d+) to (\d+) bytes .*? within ([\d.]+) % of every measured",
                       text, re.M | re.S)
    check(stated is not None, "network.yml states its valid range and bound")
    smallest, largest, bound = int(stated[1]), int(stated[2]), float(stated[3]) / 100
    network = yaml.safe_load(text)
    latency, bandwidth = network["latency"][0], network["bandwidth"][0]

    def astra_ns(size):  # a Switch: 2 hops; GB/s of 2^30 bytes; EventTime truncates
        return math.floor(2 * latency + size / (bandwidth * 2**30 / 1e9))

    with open(os.path.join(sweep, "sweep.json")) as f:
        points = [(p["summary"]["message_bytes"], p["summary"]["transfer_ns"]) for p in json.load(f)]
    check((smallest, largest) == (min(s for s, _ in points), max(s for s, _ in points)),
          f"the range is the sizes measured: {smallest} to {largest} bytes")
    for size, measured in points:
        error = astra_ns(size) / measured - 1
        check(abs(error) <= bound, f"{size} B: ASTRA-sim {astra_ns(size)} ns, measured {measured:.1f} ns: "
              f"{100 * error:+.3f} %, within the stated {100 * bound:.2f} %")
    _, res = run("small", "olink-message", "message.bytes=64", "message.count=1")
    measured = res["summary"]["transfer_ns"]
    error = astra_ns(64) / measured - 1
    check(64 < smallest and error > bound, f"64 B, outside the range: ASTRA-sim {astra_ns(64)} ns, measured "
          f"{measured:.1f} ns: {100 * error:+.1f} %, beyond the bound (the line overstates it)")


def checkers_catch_planted_bugs():
    """The consumers' rules above are shown to bite: each planted bug in a good export is rejected."""
    out, _ = run("fec", "lingyun-fec-llr", "fec_llr.design=rs544", "traffic.us=10")
    topo = read(export("htsim", out), "rs544.topo")
    htsim_load(topo)
    ns3 = os.path.join(export("ns3", out), "rs544")
    config, topology = read(ns3, "config.txt"), read(ns3, "topology.txt")
    hpcc_topology(topology, hpcc_config(config))
    plants = [
        ("htsim", "Downlink_Latency_ns 197", "Downlink_Latency_ns 196.988", "not an integer"),
        ("htsim", "Oversubscribed 1", "Oversubscribed 2", "Mismatch between TOR radix"),
        ("htsim", "Bundle 1", "Bundle 1\nQueue_Down 100000", "Duplicate queue_down"),
        ("htsim", "Radix_Down 2", "Radix_Down 3", "not a multiple"),
        ("htsim", "Downlink_Latency_ns 237", "Downlink_latency_ns 0", "Missing downlink_latency_ns"),
        ("config", "PAUSE_TIME 5\n", "", "keys missing ['PAUSE_TIME']"),
        ("config", "ENABLE_QCN 0\nUSE_DYNAMIC_PFC_THRESHOLD 1", "USE_DYNAMIC_PFC_THRESHOLD 1\nENABLE_QCN 0", "order"),
        ("config", "PAUSE_TIME 5", "PAUSE_TIME 5 # from xysim", "not a key third.cc reads"),
        ("config", "BUFFER_SIZE 64", "BUFFER_SIZE 4096", "overflows"),
        ("config", "L2_CHUNK_SIZE 4000", "L2_CHUNK_SIZE 4000.5", "not a uint32"),
        ("config", "KMAX_MAP 1 800000000000", "KMAX_MAP 1 400000000000", "must set KMAX_MAP"),
        ("topology", "800Gbps 197ns", "800Gbits 197ns", "DataRate cannot parse"),
        ("topology", "800Gbps 197ns", "800Gbps 196.5ns", "finer than ns-3's resolution"),
        ("topology", "5 3 4", "4 3 4", "beyond"),
        ("topology", "5 3 4", "5 3 3", "words after the last link"),
    ]
    for where, good, bad, want in plants:
        try:
            if where == "htsim":
                check(good in topo, f"{good!r} in the .topo")
                htsim_load(topo.replace(good, bad, 1))
            else:
                text = config if where == "config" else topology
                check(good in text, f"{good!r} in the {where} file")
                mutated = text.replace(good, bad, 1)
                hpcc_topology(mutated if where == "topology" else topology,
                              hpcc_config(mutated if where == "config" else config))
            fail(f"{where}: {bad!r} for {good!r} was read")
        except Rejected as e:
            check(want in str(e), f"{where}: {bad!r} for {good!r} rejected: {e}")


CASES = {f.__name__: f for f in (htsim_leaf_spine, htsim_fec_llr, htsim_incast, htsim_refusals, ns3_fec_llr,
                                 ns3_file_topology, ns3_parallel_links, ns3_error_rate, ns3_refusals,
                                 astra_sim_valid_range, checkers_catch_planted_bugs)}
if CASE not in CASES:
    fail(f"unknown case {CASE}")
CASES[CASE]()
subprocess.run(["rm", "-rf", WORK])
