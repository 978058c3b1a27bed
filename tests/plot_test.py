#!/usr/bin/env python3
"""scripts/plot on small real runs and sweeps: plot_test.py XYSIM PLOT CASE

Every plot must be a valid image, and the numbers it drew (--data) must be the run's: the test
reads them itself from results.json and sweep.csv and compares; so must its axes (--axes: labels,
limits, legend, error bars, read from the figure once drawn). Bad input: exit 2, one line.
"""
import atexit
import csv
import json
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
import zlib
from pathlib import Path

xysim, plot, case = sys.argv[1], sys.argv[2], sys.argv[3]
work = Path(tempfile.mkdtemp(prefix="plot-test-"))
atexit.register(shutil.rmtree, work, ignore_errors=True)


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def run(*args):
    r = subprocess.run([str(a) for a in args], capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"{' '.join(map(str, args))}: exit {r.returncode}: {r.stderr.strip()}")
    return r.stdout


def check_png(path):
    """PNG signature, then an IHDR chunk (CRC checked) with a width and height above 0."""
    data = Path(path).read_bytes()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail(f"{path}: no PNG signature")
    length, kind = struct.unpack(">I4s", data[8:16])
    if kind != b"IHDR" or length != 13:
        fail(f"{path}: the first chunk is {kind!r} of {length} bytes, not IHDR of 13")
    width, height = struct.unpack(">II", data[16:24])
    (crc,) = struct.unpack(">I", data[29:33])
    if crc != zlib.crc32(data[12:29]):
        fail(f"{path}: IHDR CRC mismatch")
    if width == 0 or height == 0:
        fail(f"{path}: {width} x {height} pixels")
    if not data.endswith(b"IEND\xaeB`\x82"):
        fail(f"{path}: no IEND chunk at the end")
    print(f"ok: {path.name} is a {width} x {height} PNG of {len(data)} bytes")


def plot_data(kind, source, *extra, out="plot.png"):
    """Runs scripts/plot with --data and --axes; the image is checked, the rows drawn returned (the
    axes: axes_of(out))."""
    image, data = work / out, work / (out + ".csv")
    run(plot, kind, source, "-o", image, "--data", data, "--axes", work / (out + ".json"), *extra)
    if image.suffix == ".png":
        check_png(image)
    else:
        root = ET.parse(image).getroot()
        if not root.tag.endswith("svg"):
            fail(f"{image}: root element {root.tag}, not svg")
        print(f"ok: {image.name} is an SVG")
    with open(data, newline="") as f:
        return list(csv.DictReader(f))


def axes_of(out="plot.png"):
    return json.loads((work / (out + ".json")).read_text())


def param_unit(scenario, key):
    """The unit column of `xysim params`: its columns are as wide as their widest cell, so the unit
    of a row starts under the header's "unit" and ends where "allowed" starts."""
    lines = run(xysim, "params", scenario).splitlines()
    start, end = re.search(r" unit +", lines[0]).span()
    row = next(line for line in lines if line.split(" ", 1)[0] == key)
    return row[start + 1:end].strip()


def sweep_rows(directory):
    with open(directory / "sweep.csv", newline="") as f:
        return list(csv.DictReader(f))


def same(drawn, expected, what):
    """drawn and expected are sets of tuples with floats; equal to within rounding."""
    def key(t):
        return tuple(round(float(v), 9) if isinstance(v, (int, float)) or re.fullmatch(r"[-+.\deE]+", str(v)) else v
                     for v in t)
    d, e = sorted(map(key, drawn)), sorted(map(key, expected))
    if d != e:
        fail(f"{what}: drawn {d} but the results say {e}")
    print(f"ok: {what}: the {len(d)} points drawn are the results'")


def expect_bad_input(want, *args):
    r = subprocess.run([plot, *map(str, args)], capture_output=True, text=True)
    lines = r.stderr.strip().splitlines()
    if r.returncode != 2 or len(lines) != 1 or want not in r.stderr:
        fail(f"scripts/plot {' '.join(map(str, args))}: exit {r.returncode}, stderr {r.stderr!r}; expected exit 2 and "
             f"one line containing {want!r}")
    print(f"ok: {lines[0]}")


def sweep(name, text, failed=False):
    """xysim sweep; it exits 1 when a point failed."""
    (work / f"{name}.yaml").write_text(text)
    args = [xysim, "sweep", work / f"{name}.yaml", "--out", work / name, "-j", "2"]
    if failed:
        r = subprocess.run(args, capture_output=True, text=True)
        if r.returncode != 1:
            fail(f"{' '.join(map(str, args))}: exit {r.returncode}, not 1 (points failed): {r.stderr.strip()}")
    else:
        run(*args)
    return work / name


SWITCH = "switch.ports: 8, uniform.warmup_cycles: 1000, uniform.measure_cycles: 4000"

if case == "latency_load":
    # One run: its curve of offered loads.
    run(xysim, "run", "switch-uniform", "--set", "switch.ports=8", "--set", "uniform.points=4", "--set",
        "uniform.measure_cycles=4000", "--set", "uniform.warmup_cycles=1000", "--out", work / "run", "--quiet")
    curve = json.loads((work / "run/results.json").read_text())["summary"]["curve"]
    drawn = plot_data("latency-load", work / "run")
    for panel, leaf in (("latency_p50_ns", "latency_p50_ns"), ("latency_p99_ns", "latency_p99_ns"),
                        ("accepted_load", "accepted_load")):
        same({(r["x"], r["y"]) for r in drawn if r["panel"] == panel}, {(c["offered_load"], c[leaf]) for c in curve},
             f"run, {panel}")
    # A sweep over load x buffer: a line per buffer size, each point from its row of sweep.csv.
    out = sweep("load-buffer", f"scenario: switch-uniform\nset: {{{SWITCH}, uniform.flow_control: none}}\n"
                               "grid:\n  uniform.load: [0.3, 0.9]\n  switch.buffer_mib: [0.125, 64]\n")
    rows = sweep_rows(out)
    drawn = plot_data("latency-load", out, out="sweep.svg")
    for panel, leaf in (("latency_p50_ns", "latency_p50_ns"), ("latency_p99_ns", "latency_p99_ns"),
                        ("accepted_load", "accepted_load")):
        same({(re.search(r"switch\.buffer_mib=(\S+)", r["series"]).group(1), r["x"], r["y"]) for r in drawn
              if r["panel"] == panel},
             {(r["param.switch.buffer_mib"], r["curve.0.offered_load"], r[f"curve.0.{leaf}"]) for r in rows},
             f"sweep, {panel}")
    run(xysim, "run", "link-basic", "--set", "traffic.packets=100", "--out", work / "link", "--quiet")
    expect_bad_input("latency-load needs switch-uniform results", "latency-load", work / "link", "-o", work / "x.png")

elif case == "fec_curve":
    run(xysim, "run", "phy-fec-curve", "--set", "curve.points=3", "--set", "curve.failures=20", "--out", work / "fc",
        "--quiet")
    summary = json.loads((work / "fc/results.json").read_text())["summary"]
    drawn = plot_data("fec-curve", work / "fc")
    for mode, s in summary.items():
        # The measured ratio from the counts, by the test's own division.
        same({(r["x"], r["y"]) for r in drawn if r["series"] == f"{mode} measured"},
             {(p["pre_fec_ber"], p["failed_codewords"] / p["codewords"]) for p in s["curve"]}, f"{mode} measured")
        same({(r["x"], r["y"]) for r in drawn if r["series"] == f"{mode} binomial"},
             {(p["pre_fec_ber"], p["binomial_cer"]) for p in s["curve"]}, f"{mode} binomial")
    expect_bad_input("stages needs olink-latency results (summary.FABRIC.breakdown); this is a phy-fec-curve run",
                     "stages", work / "fc", "-o", work / "x.png")
    # C2 + C4 as in scripts/sweeps/fec-llr-random.yaml, on fewer points and shorter traffic.
    out = sweep("fec-llr", "scenario: lingyun-fec-llr\nset: {sim.watchdog_us: 100, traffic.us: 4}\n"
                           "grid:\n  port.errors.ber: [1e-6, 1e-4]\n  fec_llr.design: [rs544, rs272_llr, none_llr]\n")
    rows = sweep_rows(out)
    drawn = plot_data("fec-curve", out, out="fec-llr.png")
    p99 = {(r["param.fec_llr.design"], r["param.port.errors.ber"], r[f"{r['param.fec_llr.design']}.latency_p99_ns"])
           for r in rows}
    # No FEC at 1e-4 delivers nothing measured: no p99, left out of the plot (it once stopped it).
    without = {row for row in p99 if row[2] in ("", None)}
    if not any(d == "none_llr" and float(ber) == 1e-4 for d, ber, _ in without):
        fail(f"no FEC at 1e-4 has no p99: {sorted(p99)}")
    same({(r["series"], r["x"], r["y"]) for r in drawn}, p99 - without, "p99 per design")
    expect_bad_input("fec-curve needs a phy-fec-curve run or a lingyun-fec-llr sweep; this is a lingyun-fec-llr run",
                     "fec-curve", out / "points/0000", "-o", work / "x.png")

elif case == "cdf":
    run(xysim, "run", "lingyun-fec-llr", "--set", "traffic.us=10", "--set", "port.errors.ber=1e-5", "--out",
        work / "run", "--quiet")
    summary = json.loads((work / "run/results.json").read_text())["summary"]
    drawn = plot_data("cdf", work / "run")
    for design in ("rs544", "rs272_llr", "none_llr"):
        cdf = [(float(r["x"]), float(r["y"])) for r in drawn if r["panel"] == "cdf" and r["series"] == design]
        if not cdf or abs(cdf[-1][1] - 1) > 1e-12:
            fail(f"{design}: the CDF does not end at 1: {cdf[-3:]}")
        # A quantile is the smallest latency whose CDF reaches it (xysim's definition).
        for q, leaf in ((0.5, "latency_p50_ns"), (0.99, "latency_p99_ns"), (0.999, "latency_p999_ns")):
            at = next(x for x, y in cdf if y >= q - 1e-12)
            if abs(at - summary[design][leaf]) > 1e-6:
                fail(f"{design}: the CDF reaches {q} at {at} ns, results.json says {leaf} = {summary[design][leaf]}")
        print(f"ok: {design}: the CDF's p50, p99, p99.9 are results.json's")
    run(xysim, "run", "olink-latency", "--out", work / "olink", "--quiet")
    expect_bad_input("latency_histograms.csv: no such file", "cdf", work / "olink", "-o", work / "x.png")

elif case == "stages":
    run(xysim, "run", "olink-latency", "--out", work / "run", "--quiet")
    summary = json.loads((work / "run/results.json").read_text())["summary"]
    drawn = plot_data("stages", work / "run")
    expected = {(fabric, s["provenance"][k], k.removesuffix("_ns"), v) for fabric, s in summary.items()
                if isinstance(s, dict) and "breakdown" in s for k, v in s["breakdown"].items()}
    same({(r["panel"], r["series"], r["x"], r["y"]) for r in drawn}, expected, "stages with their provenance")
    if {e[1] for e in expected} < {"measured", "configured"}:
        fail("olink-latency reports no measured and configured stages to tell apart")
    # One x scale for every panel, from 0 to just past the longest stage of any fabric.
    panels, longest = axes_of(), max(e[3] for e in expected)
    limits = {tuple(p["xlim"]) for p in panels}
    if len(panels) != len({e[0] for e in expected}) or len(limits) != 1:
        fail(f"the {len(panels)} panels have x limits {limits}, not one scale")
    low, high = limits.pop()
    if low != 0 or not longest <= high <= 1.1 * longest:
        fail(f"x from {low} to {high}: not 0 to just past the longest stage, {longest} ns")
    print(f"ok: {len(panels)} panels share x from 0 to {high:.1f} ns (longest stage {longest} ns)")

elif case == "sweep_leaf":
    out = sweep("arbiter", f"scenario: switch-uniform\nset: {{{SWITCH}}}\n"
                           "grid:\n  uniform.load: [0.5, 1.0]\n  switch.arbiter: [islip, round-robin]\n")
    rows = sweep_rows(out)
    leaf = "curve.0.latency_p99_ns"
    drawn = plot_data("sweep", out, "--x", "uniform.load", "--y", leaf, "--series", "switch.arbiter", "--xysim", xysim)
    same({(r["series"], r["x"], r["y"]) for r in drawn},
         {(f"switch.arbiter={r['param.switch.arbiter']}", r["param.uniform.load"], r[leaf]) for r in rows}, leaf)
    # Units: the parameter's from `xysim params`, the leaf's from its name (docs/results.md: _ns).
    (panel,) = axes_of()
    unit = param_unit("switch-uniform", "uniform.load")
    if not unit or panel["xlabel"] != f"uniform.load, {unit}" or panel["ylabel"] != f"{leaf}, ns":
        fail(f"axes labelled {panel['xlabel']!r} and {panel['ylabel']!r}; xysim params gives uniform.load the unit "
             f"{unit!r}, and {leaf} is in ns")
    print(f"ok: axes {panel['xlabel']!r}, {panel['ylabel']!r}")
    expect_bad_input(f"--xysim {work / 'none'}: cannot run it", "sweep", out, "--x", "uniform.load", "--y", leaf,
                     "--xysim", work / "none", "-o", work / "x.png")
    expect_bad_input("leaves: curve.0.accepted_load, curve.0.drops", "sweep", out, "--x", "uniform.load", "--y",
                     "curve.0.p99", "-o", work / "x.png")
    expect_bad_input("--x 'no.such': the sweep sets no such parameter; it sets: switch.arbiter, switch.ports", "sweep", out, "--x",
                     "no.such", "--y", leaf, "-o", work / "x.png")

elif case == "sweep_seeds_failed":
    # Two seeds a point; without FEC at BER 1e-3 the links never come up (LLR's INIT is never
    # answered) and both of that point's runs fail.
    out = sweep("seeds", "scenario: lingyun-fec-llr\nseeds: [1, 2]\nset: {sim.watchdog_us: 20, traffic.us: 4, "
                         "fec_llr.design: none_llr}\ngrid:\n  port.errors.ber: [1e-7, 1e-6, 1e-3]\n", failed=True)
    rows, leaf = sweep_rows(out), "none_llr.latency_p99_ns"
    drawn = plot_data("sweep", out, "--x", "port.errors.ber", "--y", leaf, "--logx", "--xysim", xysim)
    by_ber = {}
    for r in rows:
        if r["passed"] == "true":
            by_ber.setdefault(float(r["param.port.errors.ber"]), []).append(float(r[leaf]))
    if any(len(set(v)) < 2 for v in by_ber.values()):
        fail(f"the seeds gave the same {leaf} at a point, nothing to spread: {by_ber}")
    same({(r["x"], r["y"], r["y_min"], r["y_max"], r["seeds"]) for r in drawn if r["series"] != "failed"},
         {(x, sum(v) / len(v), min(v), max(v), len(v)) for x, v in by_ber.items()}, "mean, least, largest over seeds")
    failed = sorted(float(r["param.port.errors.ber"]) for r in rows if r["passed"] == "false")
    marked = sorted(float(r["x"]) for r in drawn if r["series"] == "failed" and r["y"] == "")
    if not failed or marked != failed:
        fail(f"failed points at BER {failed}, marked {marked}")
    (panel,) = axes_of()
    if f"failed: {len(failed)} points" not in panel["legend"] or len(panel["error_bars"]) != 1:
        fail(f"legend {panel['legend']}, error bars {panel['error_bars']}: want the {len(failed)} failed counted, "
             "one series with bars")
    print(f"ok: {len(failed)} failed points marked at BER {failed} and counted in the legend; bars over seeds")
    # The axis carries the unit xysim params lists for the swept key (port.errors.ber: a ratio).
    unit = param_unit("lingyun-fec-llr", "port.errors.ber")
    if not unit or panel["xlabel"] != f"port.errors.ber, {unit}":
        fail(f"x axis {panel['xlabel']!r}")
    print(f"ok: x axis {panel['xlabel']!r}")

elif case == "bad_input":
    expect_bad_input("no such file or directory", "latency-load", work / "missing", "-o", work / "x.png")
    expect_bad_input("give a .png or .svg file", "latency-load", work, "-o", work / "x.pdf")
    expect_bad_input("holds neither sweep.json nor results.json", "cdf", work, "-o", work / "x.png")
    (work / "results.json").write_text("{not json")
    expect_bad_input("not JSON", "stages", work / "results.json", "-o", work / "x.png")
    (work / "results.json").write_text(json.dumps({"schema_version": 2, "scenario": "olink-latency", "passed": True,
                                                   "summary": {}}))
    expect_bad_input("schema_version 2: scripts/plot reads 1", "stages", work, "-o", work / "x.png")
    expect_bad_input("the following arguments are required: --y", "sweep", work, "--x", "a", "-o", work / "x.png")
    expect_bad_input("invalid choice: 'pie'", "pie", work, "-o", work / "x.png")

else:
    fail(f"unknown case {case}")
