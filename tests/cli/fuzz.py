#!/usr/bin/env python3
"""Fuzz test of the xysim command line and its YAML scenario files.

    fuzz.py XYSIM [--topology] [--long] [--cases N] [--seed S] [--jobs J] [--case ID] [--list]

The cases come from what xysim declares: `xysim scenarios`, then `xysim params SCENARIO` for the
key, type, default, unit and range of every parameter. Each is given wrong types, values out of
range and on its boundaries, units glued on, huge numbers, NaN, unicode, control characters, ...;
YAML files nest and dot the keys, repeat them, put lists where values go, alias, go deep or are
junk; --out, --waves and --pcap get places that cannot be written; options are misused. A real
results.json and sweep directory are mutated (cut short, NaN, wrong types, missing keys, huge
numbers) and given to `xysim compare`, `xysim export FORMAT` and `xysim run results.json`.

Every run must exit 0, 1 (a check failed; export has no such outcome) or 2 (bad input), never die of a signal, never leave a
sanitizer report, and end within --timeout. Exit 2 prints exactly one line on stderr; input that
is bad for sure must exit 2, and for one bad parameter the line names it.

With --topology, the topology-file campaign instead: the presets (single, leaf-spine, dual-plane)
written as files and mutated (nodes missing or named twice, self-links, loops, multi-homing, dead
first links, 0 and huge port counts, maps where lists go and lists where maps go, wrong types,
bytes), each file run by olink-latency and switch-uniform for a short time. Every run must exit
0, or 2 with one line on stderr: a topology the validator accepts must run (no signal, and no
failed check, which here would be a false report such as corruption from hosts sharing a
scoreboard); one it refuses is refused in one line. TOPOLOGY_SHORT files in CI, TOPOLOGY_LONG long.

Deterministic: the same seed and xysim give the same cases (stratified over the kinds of case,
so the short campaign touches every kind). Short campaign by default (ctest Cli.fuzz), the long
one with --long or XY_LONG=1. A run that breaks a rule is printed with the command that repeats
it, its files kept under ./cli-fuzz-failures/; `--case ID` reruns one case.
"""
import argparse
import concurrent.futures
import os
import random
import re
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SHORT_CASES, LONG_CASES = 500, 3000
# The results/sweep-file campaign: its runs read files (a run from results.json is pinned), so
# they are quick; counted apart from the cases above.
SHORT_FILE_CASES, LONG_FILE_CASES = 80, 800
# Every accepted run stops by this simulated time, so that it ends quickly.
PIN_US = 2
# In-range values above these make a legitimately big model (elaboration, memory, traffic): the
# fuzz test keeps to ones that end quickly, and tests the range's end with hi + 1 only. Under ASan
# at 2 us: switch-uniform with 512 ports 22 s, 100 load points 18 s, 100 Tb/s ports 7 s; and
# some declared maxima cannot be held at all: 512 GPUs in olink-alltoall, 2^30 packets per flow in
# switch-ecmp, 2^32-byte vectors in switch-allreduce each need more than 4 GiB; so do 64 GPUs with
# 65536 writes outstanding (a payload each) in olink-alltoall, 347 in olink-fast.
SIZE_CAPS = {
    "sim.max_time_us": PIN_US,
    "switch.ports": 64,
    "switch.port_gbps": 3200,
    "uniform.points": 10,
    "alltoall.gpus": 16,
    "fast.gpus": 64,
    "ecmp.packets": 2000,
    "allreduce.bytes": 1 << 20,
}
MEMORY_LIMIT_MIB = 4096
TOPOLOGY_SHORT, TOPOLOGY_LONG = 40, 500  # files; two runs each


# ---------------------------------------------------------------------------------------------
# What xysim declares

class Param:
    def __init__(self, key, kind, default, unit, lo=None, hi=None, choices=None):
        self.key, self.kind, self.default, self.unit = key, kind, default, unit
        self.lo, self.hi, self.choices = lo, hi, choices


PARAM_LINE = re.compile(r"^(\S+)\s+(\S+)\s+(.*)$")
RANGE = re.compile(r"^(.*?)\s*\[([^,\]]+),\s*([^\]]+)\]\s")


def parse_params(text):
    """`xysim params` columns: key, default (JSON), unit (may be empty or have spaces), allowed
    ([lo, hi] or a|b|c), description."""
    params = []
    lines = text.splitlines()
    if not lines or not lines[0].startswith("parameter"):
        raise ValueError("no header")
    for line in lines[1:]:
        m = PARAM_LINE.match(line)
        if not m:
            raise ValueError(f"cannot read: {line!r}")
        key, default, rest = m.groups()
        if default.startswith('"'):
            params.append(Param(key, "choice", default.strip('"'), "", choices=rest.split()[0].split("|")))
        elif default in ("true", "false"):
            params.append(Param(key, "bool", default, ""))
        else:
            r = RANGE.match(rest + " ")
            if not r:
                raise ValueError(f"no range: {line!r}")
            unit, lo, hi = r.group(1).strip(), r.group(2), r.group(3)
            if re.fullmatch(r"-?\d+", default) and re.fullmatch(r"-?\d+", lo) and re.fullmatch(r"-?\d+", hi):
                params.append(Param(key, "int", int(default), unit, int(lo), int(hi)))
            else:
                params.append(Param(key, "real", float(default), unit, float(lo), float(hi)))
    return params


def discover(xysim):
    out = subprocess.run([xysim, "scenarios"], capture_output=True, text=True, timeout=60, check=True).stdout
    names = [line.split()[0] for line in out.splitlines() if line.strip()]
    if not names:
        raise ValueError("xysim scenarios listed nothing")
    params = {}
    for name in names:
        text = subprocess.run([xysim, "params", name], capture_output=True, text=True, timeout=60, check=True).stdout
        params[name] = parse_params(text)
    return names, params


# ---------------------------------------------------------------------------------------------
# Values: (label, value, expect) with expect "bad" (must exit 2) or "any" (0, 1 or 2)

ANY, BAD = "any", "bad"
NOT_FAILED = "not-1"  # 0 or 2 only: export and compare of a file against itself have no failed check
JUNK = [  # wrong for every type
    ("empty", "", BAD), ("space", " ", BAD), ("word", "abc", BAD), ("yaml-null", "~", BAD),
    ("null-word", "null", BAD), ("list", "[1, 2]", BAD), ("map", "{a: 1}", BAD),
    ("newline", "1\n2", BAD), ("control-char", "\x01", BAD), ("escape-seq", "\x1b[31m1", BAD),
    ("fullwidth-digit", "\uff15", BAD), ("arabic-digit", "\u0663", BAD), ("zero-width", "1\u200b", BAD),
    ("long-word", "x" * 20000, BAD), ("shell-meta", "$(echo 1)", BAD), ("utf8-cjk", "\u4e94", BAD),
]


def capped(p, v):
    cap = SIZE_CAPS.get(p.key)
    return v if cap is None or v <= cap else type(v)(cap)


def int_values(p):
    lo, hi, d = p.lo, p.hi, capped(p, p.default)
    unit = p.unit.split()[0] if p.unit else "us"
    v = [("min", str(lo), ANY), ("max", str(capped(p, hi)), ANY), ("default", str(d), ANY),
         ("below-min", str(lo - 1), BAD), ("above-max", str(hi + 1), BAD),
         ("int64-max", "9223372036854775807", BAD), ("int64-max+1", "9223372036854775808", BAD),
         ("2^64", "18446744073709551616", BAD), ("int64-min-1", "-9223372036854775809", BAD),
         ("negative", "-1", BAD if lo > -1 else ANY), ("hex", hex(d), ANY), ("plus", f"+{d}", ANY),
         ("leading-space", f" {d}", ANY), ("trailing-space", f"{d} ", ANY), ("leading-zero", f"0{d}", ANY),
         ("fraction", f"{d}.5", BAD), ("real-form", f"{d}.0", BAD), ("exponent", "1e3", BAD),
         ("unit-glued", f"{d}{unit}", BAD), ("us-glued", "5us", BAD), ("unit-spaced", f"{d} {unit}", BAD),
         ("nan", "nan", BAD), ("inf", "inf", BAD), ("-inf", "-inf", BAD), ("1e308", "1e308", BAD),
         ("bool-word", "true", BAD), ("thousands", "1,000", BAD), ("underscore", "1_000", BAD),
         ("double-minus", "--1", BAD), ("long-digits", "9" * 10000, BAD),
         ("long-zeros", "0" * 10000 + "1", ANY)]
    return v + JUNK


def real_values(p):
    lo, hi, d = p.lo, p.hi, capped(p, p.default)
    unit = p.unit.split()[0] if p.unit else "us"
    v = [("min", repr(lo), ANY), ("max", repr(capped(p, hi)), ANY), ("default", repr(d), ANY),
         ("below-min", repr(lo - max(1e-9, abs(lo) * 1e-6)), BAD), ("above-max", repr(hi * (1 + 1e-6) + 1e-9), BAD),
         ("nan", "nan", BAD), ("NaN", "NaN", BAD), ("-nan", "-nan", BAD), ("inf", "inf", BAD),
         ("-inf", "-inf", BAD), ("infinity", "Infinity", BAD), ("1e308", "1e308", BAD), ("1e309", "1e309", BAD),
         ("-1e308", "-1e308", BAD), ("2^64", "18446744073709551616", BAD), ("underflow", "1e-400", ANY),
         ("denormal", "4.9e-324", ANY), ("hex-float", "0x1p-2", ANY), ("plus", f"+{d!r}", ANY),
         ("leading-space", f" {d!r}", ANY), ("trailing-space", f"{d!r} ", ANY),
         ("unit-glued", f"{d!r}{unit}", BAD), ("us-glued", "5us", BAD), ("unit-spaced", f"{d!r} {unit}", BAD),
         ("decimal-comma", "0,5", BAD), ("two-dots", "1.2.3", BAD), ("exponent-only", "e5", BAD),
         ("dangling-exponent", "1e", BAD), ("dot", ".", BAD), ("minus", "-", BAD), ("bool-word", "true", BAD),
         ("long-digits", "1" + "0" * 400, BAD), ("long-fraction", "0." + "0" * 10000 + "1", ANY)]
    return v + JUNK


def bool_values(p):
    v = [(f"accepted-{w}", w, ANY) for w in ("true", "false", "1", "0", "yes", "no", "on", "off")]
    v += [("capitalised", "True", ANY), ("upper", "TRUE", ANY), ("two", "2", BAD), ("minus-one", "-1", BAD),
          ("maybe", "maybe", BAD), ("truncated", "tru", BAD), ("trailing-space", "true ", BAD),
          ("fullwidth", "\uff54\uff52\uff55\uff45", BAD)]
    return v + JUNK


def choice_values(p):
    v = [(f"option-{i}", c, ANY) for i, c in enumerate(p.choices)]
    c = p.default
    if c.upper() != c:
        v.append(("upper", c.upper(), BAD))
    v += [("trailing-space", c + " ", BAD), ("leading-space", " " + c, BAD), ("prefix", c[:-1], BAD),
          ("suffix", c + "x", BAD), ("all-joined", "|".join(p.choices), BAD), ("two-lines", f"{c}\n{c}", BAD)]
    return v + JUNK


VALUES = {"int": int_values, "real": real_values, "bool": bool_values, "choice": choice_values}


def valid_value(p):
    return str(p.default) if p.kind != "real" else repr(p.default)


# ---------------------------------------------------------------------------------------------
# Cases

class Case:
    """argv with {d} for the case's directory; files: name -> bytes; dirs and links to make;
    may_fail: exit 1 (a check failed) is a legitimate outcome."""

    def __init__(self, tag, argv, expect, mention=None, files=None, dirs=(), links=(), pool="all", may_fail=True):
        self.tag, self.argv, self.expect, self.mention, self.may_fail = tag, argv, expect, mention, may_fail
        self.files, self.dirs, self.links, self.pool = files or {}, list(dirs), list(links), pool
        self.id = None


def pinned(scenario, *more):
    return ["run", scenario, "--set", f"sim.max_time_us={PIN_US}", *more, "--quiet"]


def set_value_cases(names, params):
    for s in names:
        for p in params[s]:
            for label, value, expect in VALUES[p.kind](p):
                yield Case(f"set/{p.kind}/{label}", pinned(s, "--set", f"{p.key}={value}"), expect,
                           mention=p.key if expect == BAD else None)


def set_syntax_cases(names, params):
    for s in names:
        p = params[s][-1]
        k, v = p.key, valid_value(p)
        for label, arg, expect, mention in [
                ("no-equals", k, BAD, k), ("empty-key", "=5", BAD, None), ("only-equals", "=", BAD, None),
                ("empty", "", BAD, None), ("double-equals", f"{k}=={v}", BAD, k),
                ("unknown-key", "no.such.key=1", BAD, "no.such.key"), ("unknown-child", f"{k}.x={v}", BAD, f"{k}.x"),
                ("upper-key", f"{k.upper()}={v}", BAD, None), ("space-in-key", f"{k} ={v}", BAD, None),
                ("trailing-dot", f"{k}.={v}", BAD, None), ("dots-only", "..=1", BAD, None),
                ("unicode-key", "\u94fe\u8def.\u5ef6\u8fdf=1", BAD, None), ("long-key", "k" * 100000 + "=1", BAD, None),
                ("newline-key", f"a\n{k}={v}", BAD, None)]:
            yield Case(f"set-syntax/{label}", pinned(s, "--set", arg), expect, mention=mention)
        yield Case("set-syntax/twice", pinned(s, "--set", f"{k}={v}", "--set", f"{k}={v}"), ANY)
        bad = [x for x in VALUES[p.kind](p) if x[2] == BAD][0][1]
        yield Case("set-syntax/bad-then-good", pinned(s, "--set", f"{k}={bad}", "--set", f"{k}={v}"), ANY)
        yield Case("set-syntax/take-all", pinned(s, "--set", f"{k}={v}", f"{k}={v}"), ANY)
        yield Case("set-syntax/equals-form", ["run", s, f"--set=sim.max_time_us={PIN_US}", "--quiet"], ANY)


def yaml_quote(v):
    return '"' + v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def nested(key, value, indent="  "):
    parts = key.split(".")
    out = ""
    for i, part in enumerate(parts[:-1]):
        out += f"{indent * (i + 1)}{part}:\n"
    return out + f"{indent * len(parts)}{parts[-1]}: {value}\n"


def yaml_file_cases(names, params, rng):
    def case(tag, text, expect, mention=None, name="s.yaml", extra=()):
        data = text.encode() if isinstance(text, str) else text
        return Case(tag, ["run", "{d}/" + name, "--set", f"sim.max_time_us={PIN_US}", *extra, "--quiet"], expect,
                    mention=mention, files={name: data})

    for s in names:
        ps = [p for p in params[s] if p.key != "sim.max_time_us"]  # the --set pin would override it
        p = ps[rng.randrange(len(ps))]
        q = ps[rng.randrange(len(ps))]
        k, v = p.key, valid_value(p)
        head = f"scenario: {s}\nseed: 3\n"
        yield case("yaml/nested-valid", head + "params:\n" + nested(k, v), ANY)
        yield case("yaml/dotted-valid", head + f"params:\n  {k}: {v}\n", ANY)
        if q.key != k and q.key.split(".")[0] != k.split(".")[0]:
            yield case("yaml/mixed-valid", head + "params:\n" + nested(k, v) + f"  {q.key}: {valid_value(q)}\n", ANY)
        yield case("yaml/quoted-valid", head + f"params:\n  {k}: {yaml_quote(v)}\n", ANY)
        if "." in k:
            yield case("yaml/dup-nested-dotted", head + "params:\n" + nested(k, v) + f"  {k}: {v}\n", BAD)
            first, rest = k.split(".", 1)
            yield case("yaml/dup-nested-map", head + f"params:\n  {first}:\n    {rest}: {v}\n  {first}:\n    {rest}: {v}\n",
                       BAD)
        yield case("yaml/dup-dotted", head + f"params:\n  {k}: {v}\n  {k}: {v}\n", BAD)
        yield case("yaml/dup-scenario", head + f"scenario: {s}\nparams:\n  {k}: {v}\n", BAD)
        yield case("yaml/dup-seed", head + "seed: 4\n", BAD)
        yield case("yaml/dup-params", head + f"params:\n  {k}: {v}\nparams:\n  {k}: {v}\n", BAD)
        for label, value, expect in VALUES[p.kind](p):
            if expect == BAD and label not in ("yaml-null", "list", "map"):
                yield case(f"yaml/value-{label}", head + f"params:\n  {k}: {yaml_quote(value)}\n", BAD, mention=k)
        yield case("yaml/list-value", head + f"params:\n  {k}: [{v}, {v}]\n", BAD, mention=k)
        yield case("yaml/map-value", head + f"params:\n  {k}: {{x: {v}}}\n", BAD, mention=k)
        yield case("yaml/null-value", head + f"params:\n  {k}: ~\n", BAD, mention=k)
        yield case("yaml/empty-value", head + f"params:\n  {k}:\n", BAD, mention=k)
        yield case("yaml/anchor-alias", head + f"params:\n  {k}: &v {v}\ndescription: *v\n", ANY)
        yield case("yaml/alias-map", f"scenario: {s}\nparams: &p\n  {k}: {v}\ndescription: *p\n", ANY)
        yield case("yaml/alias-undefined", head + f"params:\n  {k}: *nope\n", BAD)
        yield case("yaml/alias-into-params", head + f"description: &m {{x: 1}}\nparams:\n  {k}: {v}\n  sub: *m\n", BAD)
        yield case("yaml/merge-key", head + f"description: &m {{{k}: {v}}}\nparams:\n  <<: *m\n", ANY)
        yield case("yaml/tag-str", head + f"params:\n  {k}: !!str {v}\n", ANY)
        yield case("yaml/tag-custom", head + f"params:\n  {k}: !custom {v}\n", ANY)
        yield case("yaml/tag-binary", head + f"params:\n  {k}: !!binary aGVsbG8=\n", ANY)
        yield case("yaml/multi-document", head + f"params:\n  {k}: {v}\n---\nscenario: nope\n", ANY)
        yield case("yaml/bom", "\ufeff" + head + f"params:\n  {k}: {v}\n", ANY)
        yield case("yaml/crlf", (head + f"params:\n  {k}: {v}\n").replace("\n", "\r\n"), ANY)
        yield case("yaml/nul-byte", (head + f"params:\n  {k}: {v}\n").encode().replace(b"\n", b"\n\0", 1), ANY)
        yield case("yaml/invalid-utf8", head.encode() + b"params:\n  \xff\xfe: 1\n", BAD)
        yield case("yaml/unknown-param", head + "params:\n  no.such.key: 1\n", BAD, mention="no.such.key")
        yield case("yaml/unknown-top-key", head + "bogus: 1\n", BAD, mention="bogus")
        yield case("yaml/long-key", head + "params:\n  " + "k" * 100000 + ": 1\n", BAD)
        yield case("yaml/long-value", head + f"params:\n  {k}: " + "9" * 1000000 + "\n", BAD, mention=k)
        yield case("yaml/value-newline", head + f"params:\n  {k}: \"{v}\\n{v}\"\n", BAD, mention=k)
        yield case("yaml/params-list", head + f"params: [{k}, {v}]\n", BAD)
        yield case("yaml/params-scalar", head + "params: 5\n", BAD)
        yield case("yaml/params-null", head + "params: ~\n", ANY)
        yield case("yaml/description-any", head + "description: [1, {a: b}, ~]\n", ANY)
        yield case("yaml/complex-key", head + "params:\n  [a, b]: 1\n", BAD)
        yield case("yaml/map-key", head + "params:\n  ? {a: 1}\n  : 2\n", BAD)
        yield case("yaml/null-key", head + "params:\n  ~: 1\n", BAD)
        yield case("yaml/complex-top-key", head + "? [scenario]\n: 1\n", BAD)
        yield case("yaml/int-key", head + "params:\n  5: 1\n", BAD)
        yield case("yaml/tab-indent", head + f"params:\n\t{k}: {v}\n", BAD)
        yield case("yaml/unterminated-quote", head + f"params:\n  {k}: \"{v}\n", BAD)
        yield case("yaml/bad-indent", head + f"params:\n    {k}: {v}\n  x: 1\n", BAD)
        yield case("yaml/anchor-self", head + "params:\n  a: &x [*x]\n", BAD)
        depth = 20000
        yield case("yaml/deep-flow", head + "params: " + "{a: " * depth + "1" + "}" * depth + "\n", BAD)
        yield case("yaml/deep-flow-list", head + "params:\n  a: " + "[" * depth + "]" * depth + "\n", BAD)
        block = "".join("  " * (i + 1) + f"k{i}:\n" for i in range(2000)) + "  " * 2001 + "v: 1\n"
        yield case("yaml/deep-block", head + "params:\n" + block, BAD)
        # Aliases that expand: 6^6 leaves from a few hundred bytes, all unknown parameters.
        laughs = "description:\n  l0: &l0 {a: 1, b: 1, c: 1, d: 1, e: 1, f: 1}\n"
        for i in range(1, 6):
            laughs += f"  l{i}: &l{i} {{a: *l{i-1}, b: *l{i-1}, c: *l{i-1}, d: *l{i-1}, e: *l{i-1}, f: *l{i-1}}}\n"
        yield case("yaml/alias-expansion", head + laughs + "params:\n  x: *l5\n", BAD)
        yield case("yaml/seed-negative", f"scenario: {s}\nseed: -1\n", BAD)
        yield case("yaml/seed-2^64", f"scenario: {s}\nseed: 18446744073709551616\n", BAD)
        yield case("yaml/seed-u64-max", f"scenario: {s}\nseed: 18446744073709551615\n", ANY)
        yield case("yaml/seed-fraction", f"scenario: {s}\nseed: 1.5\n", BAD)
        yield case("yaml/seed-exponent", f"scenario: {s}\nseed: 1e3\n", BAD)
        yield case("yaml/seed-word", f"scenario: {s}\nseed: abc\n", BAD)
        yield case("yaml/seed-null", f"scenario: {s}\nseed: ~\n", BAD)
        yield case("yaml/seed-list", f"scenario: {s}\nseed: [1]\n", BAD)
        yield case("yaml/seed-hex", f"scenario: {s}\nseed: 0x10\n", ANY)
        yield case("yaml/scenario-list", f"scenario: [{s}]\n", BAD)
        yield case("yaml/scenario-null", "scenario: ~\n", BAD)
        yield case("yaml/scenario-unknown", "scenario: nope\n", BAD, mention="nope")
        yield case("yaml/scenario-missing", "seed: 3\n", BAD)
        yield case("path/yml-extension", head + f"params:\n  {k}: {v}\n", ANY, name="s.yml")
        yield case("path/unicode-name", head, ANY, name="\u573a\u666f.yaml")
        yield case("path/space-in-name", head, ANY, name="my scenario.yaml")
    # The same with 9^9 leaves from 800 bytes: every one becomes a parameter before any is refused
    # (8^8 took 12 s and 3.4 GB). The long campaign only.
    bomb = "scenario: link-basic\ndescription:\n  l0: &l0 {" + ", ".join(f"{k}: 1" for k in "abcdefghi") + "}\n"
    for i in range(1, 9):
        bomb += f"  l{i}: &l{i} {{" + ", ".join(f"{k}: *l{i-1}" for k in "abcdefghi") + "}\n"
    yield Case("yaml/alias-bomb", ["run", "{d}/bomb.yaml", "--quiet"], BAD,
               files={"bomb.yaml": (bomb + "params:\n  x: *l8\n").encode()}, pool="long-only")
    for label, text in [("empty", ""), ("comment-only", "# nothing\n"), ("document-marker", "---\n"),
                        ("scalar-root", "link-basic\n"), ("list-root", "- scenario: link-basic\n"),
                        ("null-root", "~\n"), ("flow-unclosed", "{scenario: link-basic\n")]:
        yield case(f"yaml/{label}", text, BAD)
    for i in range(8):
        junk = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 4000)))
        yield case("yaml/binary-junk", junk, BAD)
    yield Case("path/upper-extension", ["run", "{d}/s.YAML", "--quiet"], BAD, files={"s.YAML": b"scenario: link-basic\n"})
    yield Case("path/missing-yaml", ["run", "{d}/missing.yaml", "--quiet"], BAD, mention="missing.yaml")
    yield Case("path/directory-yaml", ["run", "{d}/dir.yaml", "--quiet"], BAD, dirs=["dir.yaml"])
    yield Case("path/directory-plain", ["run", "{d}", "--quiet"], BAD)
    yield Case("path/symlink-loop", ["run", "{d}/loop.yaml", "--quiet"], BAD, links=[("loop.yaml", "loop.yaml")])
    yield Case("path/dev-null", ["run", "/dev/null", "--quiet"], BAD)


def mutated_yaml(names, params, rng):
    alphabet = b":{}[]&*!|>-#'\"%@,?\t\n  \\~0123456789.e"
    s = names[rng.randrange(len(names))]
    p = params[s][rng.randrange(len(params[s]))]
    base = bytearray(f"scenario: {s}\nseed: 3\nparams:\n".encode() + nested(p.key, valid_value(p)).encode())
    for _ in range(rng.randrange(1, 9)):
        at = rng.randrange(len(base) + 1)
        op = rng.randrange(3)
        if op == 0 and at < len(base):
            del base[at]
        elif op == 1 and at < len(base):
            base[at] = alphabet[rng.randrange(len(alphabet))]
        else:
            base[at:at] = bytes([alphabet[rng.randrange(len(alphabet))]])
    return Case("random/mutated-yaml", ["run", "{d}/m.yaml", "--set", f"sim.max_time_us={PIN_US}", "--quiet"], ANY,
                files={"m.yaml": bytes(base)})


def mixed_sets(names, params, rng):
    """2-5 parameters of one scenario, each given any of its values, bad or not."""
    s = names[rng.randrange(len(names))]
    sets, expect = [], ANY
    for _ in range(rng.randrange(2, 6)):
        p = params[s][rng.randrange(len(params[s]))]
        label, value, e = rng.choice(VALUES[p.kind](p))
        sets += ["--set", f"{p.key}={value}"]
        expect = BAD if e == BAD else expect
    return Case("random/mixed-sets", pinned(s, *sets), expect)


def in_range(p, rng):
    if p.kind == "bool":
        return rng.choice(["true", "false"])
    if p.kind == "choice":
        return rng.choice(p.choices)
    lo, hi = p.lo, capped(p, p.hi)
    pick = rng.randrange(4)
    if pick < 2:
        return str([lo, hi][pick]) if p.kind == "int" else repr(float([lo, hi][pick]))
    if p.kind == "int":  # log-uniform, so that small values come up as often as large ones
        v = int(round(2 ** rng.uniform(0, max(hi, 1).bit_length()))) - 1 + lo
        return str(min(max(v, lo), hi))
    v = lo + (hi - lo) * (rng.random() if pick == 2 else rng.random() ** 8)
    return repr(min(max(v, lo), hi))


def in_range_sets(names, params, rng):
    """2-8 parameters of one scenario, each a value its range allows: the models' corners."""
    s = names[rng.randrange(len(names))]
    sets = []
    for _ in range(rng.randrange(2, 9)):
        p = params[s][rng.randrange(len(params[s]))]
        if p.key != "sim.max_time_us":
            sets += ["--set", f"{p.key}={in_range(p, rng)}"]
    return Case("random/in-range-sets", pinned(s, *sets), ANY)


def random_cases(names, params, rng, count):
    makers = [mutated_yaml, mixed_sets, in_range_sets, in_range_sets]
    return [makers[rng.randrange(len(makers))](names, params, rng) for _ in range(count)]


def option_cases():
    base = pinned("link-basic")
    pcap = pinned("link-llr")
    unwritable = [("proc", "/proc/nope/x"), ("under-file", "{d}/file/x")]
    for label, path in [("proc", "/proc/nope"), ("regular-file", "{d}/file"), ("under-file", "{d}/file/sub"),
                        ("dev-null", "/dev/null"), ("name-too-long", "{d}/" + "n" * 300)]:
        yield Case(f"out/{label}", base + ["--out", path], BAD, files={"file": b"x"})
    for label, path, expect in [("empty", "", ANY), ("fresh", "{d}/new/deeper", ANY), ("dot", ".", ANY),
                                ("unicode", "{d}/\u7ed3\u679c", ANY)]:
        yield Case(f"out/{label}", base + ["--out", path], expect)
    for label, path in unwritable + [("directory", "{d}/w.vcd")]:
        ext = "" if label == "directory" else ".fst"
        yield Case(f"waves/{label}", base + ["--waves", path + ext], BAD, files={"file": b"x"}, dirs=["w.vcd"])
    for label, path, expect in [("vcd", "{d}/w.vcd", ANY), ("fst", "{d}/w.fst", ANY), ("upper-extension", "{d}/w.VCD", ANY),
                                ("no-extension", "{d}/w", BAD), ("double-extension", "{d}/w.vcd.txt", BAD),
                                ("dev-null", "/dev/null", BAD), ("empty", "", ANY), ("only-extension", "{d}/.vcd", ANY)]:
        yield Case(f"waves/{label}", base + ["--waves", path], expect)
    for label, scope in [("empty", ""), ("junk", "no.such.scope"), ("unicode", "\u9876.\u5c42"), ("long", "s" * 50000)]:
        yield Case(f"waves-scope/{label}", base + ["--waves", "{d}/w.vcd", "--waves-scope", scope], ANY)
    for label, window, expect in [("ok", "0.5us:1us", ANY), ("reversed", "2us:1us", BAD), ("junk", "abc", BAD),
                                  ("colon-only", ":", ANY), ("open-begin", ":1us", ANY), ("open-end", "1us:", ANY),
                                  ("no-unit", "1:2", BAD), ("negative", "-1us:1us", BAD), ("nan", "nanus:1us", BAD),
                                  ("inf", "infus:", BAD), ("huge", "1e308us:", BAD), ("three-parts", "1us:2us:3us", BAD),
                                  ("unicode", "\uff11us:2us", BAD), ("long", "9" * 400 + "us:", BAD),
                                  ("spaces", " 1 us : 2 us ", BAD), ("zero", "0:0", ANY)]:
        yield Case(f"window/{label}", base + ["--waves", "{d}/w.vcd", "--waves-window", window], expect)
    yield Case("window/without-waves", base + ["--waves-window", "10us:12us"], BAD)
    for label, path in unwritable + [("directory", "{d}/p.pcap")]:
        yield Case(f"pcap/{label}", pcap + ["--pcap", path], BAD, files={"file": b"x"}, dirs=["p.pcap"])
    for label, path in [("ok", "{d}/p.pcap"), ("dev-full", "/dev/full"), ("empty", "")]:
        yield Case(f"pcap/{label}", pcap + ["--pcap", path], ANY)
    for label, scope in [("junk", "no.such"), ("unicode", "\u94fe"), ("empty", "")]:
        yield Case(f"pcap-scope/{label}", pcap + ["--pcap", "{d}/p.pcap", "--pcap-scope", scope], ANY)
    for label, seed, expect in [("negative", "-1", BAD), ("u64-max", "18446744073709551615", ANY),
                                ("2^64", "18446744073709551616", BAD), ("huge", "1" * 30, BAD), ("exponent", "1e3", ANY),
                                ("hex", "0x10", ANY), ("empty", "", BAD), ("word", "abc", BAD), ("fraction", "1.5", BAD),
                                ("leading-space", " 7", ANY), ("plus", "+7", ANY), ("minus-zero", "-0", ANY),
                                ("unicode", "\uff17", BAD), ("nan", "nan", BAD)]:
        yield Case(f"seed/{label}", base + ["--seed", seed], expect, mention="--seed" if expect == BAD else None)
    yield Case("seed/twice", base + ["--seed", "1", "--seed", "2"], ANY)
    yield Case("seed/equals-form", base + ["--seed=5"], ANY)
    misuse = [
        ("no-arguments", [], BAD), ("unknown-subcommand", ["nope"], BAD), ("unknown-option", ["run", "--nope"], BAD),
        ("extra-positional", pinned("link-basic", "extra"), BAD), ("option-missing-value-seed", ["run", "--seed"], BAD),
        ("option-missing-value-out", ["run", "--out"], BAD), ("option-missing-value-set", ["run", "--set"], BAD),
        ("option-missing-value-waves", ["run", "--waves"], BAD),
        ("option-missing-value-window", ["run", "--waves-window"], BAD),
        ("quiet-twice", base + ["--quiet"], ANY), ("double-dash", ["run", "--set", f"sim.max_time_us={PIN_US}",
                                                                    "--quiet", "--", "link-basic"], ANY),
        ("help", ["--help"], ANY), ("run-help", ["run", "--help"], ANY), ("short-help", ["-h"], ANY),
        ("version", ["--version"], ANY), ("scenarios-extra", ["scenarios", "extra"], BAD),
        ("params-unknown", ["params", "nope"], BAD), ("params-extra", ["params", "link-basic", "extra"], BAD),
        ("params-empty", ["params", ""], ANY), ("run-empty-scenario", ["run", "", "--set", f"sim.max_time_us={PIN_US}",
                                                                        "--quiet"], ANY),
        ("run-dash", ["run", "-", "--quiet"], BAD), ("long-argument", ["run", "a" * 100000, "--quiet"], BAD),
        ("bench-alone", ["bench"], BAD), ("bench-unknown", ["bench", "nope"], BAD),
        ("bench-kernel-repeats-0", ["bench", "kernel", "--repeats", "0"], BAD),
        ("bench-kernel-repeats-16", ["bench", "kernel", "--repeats", "16"], BAD),
        ("bench-kernel-scale-0", ["bench", "kernel", "--scale", "0"], BAD),
        ("bench-kernel-scale-nan", ["bench", "kernel", "--scale", "nan"], BAD),
        ("bench-fec-seconds-nan", ["bench", "fec", "--seconds", "nan"], BAD),
        ("bench-link-error-nan", ["bench", "link", "--frame-error", "nan"], BAD),
        ("bench-switch-cycles-small", ["bench", "switch", "--cycles", "999"], BAD),
        ("bench-kernel-one-style", ["bench", "kernel-one", "--style", "nope", "--blocks", "1", "--activity", "1",
                                    "--cycles", "1"], BAD),
        ("bench-kernel-one-tiny", ["bench", "kernel-one", "--style", "domain", "--blocks", "1", "--activity", "1",
                                   "--cycles", "1"], ANY),
        ("bench-kernel-one-missing", ["bench", "kernel-one", "--style", "domain"], BAD),
        ("bench-lingyun-us-0", ["bench", "lingyun", "--us", "0"], BAD),
        ("bench-lingyun-warmup-negative", ["bench", "lingyun", "--warmup-us", "-1"], BAD),
        ("bench-lingyun-one-rig", ["bench", "lingyun-one", "--rig", "nope", "--us", "1", "--warmup-us", "0"], BAD),
        ("bench-lingyun-one-missing", ["bench", "lingyun-one", "--rig", "composed"], BAD),
        ("bench-lingyun-one-tiny", ["bench", "lingyun-one", "--rig", "composed", "--us", "0.01", "--warmup-us", "0"], ANY),
    ]
    for label, argv, expect in misuse:
        yield Case(f"misuse/{label}", argv, expect)
    # Accepted today: 3 s of codec benchmark, then a phy-loopback that fails. The long campaign only.
    yield Case("misuse/bench-fec-ber-nan", ["bench", "fec", "--seconds", "0.01", "--ber", "nan"], BAD,
               pool="long-only")


def systematic_cases(names, params, rng):
    pool = []
    pool += set_value_cases(names, params)
    pool += set_syntax_cases(names, params)
    pool += yaml_file_cases(names, params, rng)
    pool += option_cases()
    return pool


def pick(pool, count, rng, long_campaign):
    """Stratified: every kind of case (tag) in turn, each kind's cases in a seeded order."""
    groups = {}
    for c in pool:
        if long_campaign or c.pool != "long-only":
            groups.setdefault(c.tag, []).append(c)
    for g in groups.values():
        rng.shuffle(g)
    tags = sorted(groups)
    rng.shuffle(tags)
    picked, i = [], 0
    while len(picked) < count and any(groups.values()):
        g = groups[tags[i % len(tags)]]
        if g:
            picked.append(g.pop())
        i += 1
    return picked


def campaign(names, params, seed, long_campaign, count):
    """The systematic cases (every kind first), then random ones (a sixth of the whole)."""
    rng = random.Random(seed)
    randoms = count // 6 if long_campaign else count // 9
    cases = pick(systematic_cases(names, params, rng), count - randoms, rng, long_campaign)
    cases += random_cases(names, params, rng, count - len(cases))
    for n, c in enumerate(cases):
        c.id = n
    return cases


# ---------------------------------------------------------------------------------------------
# The topology-file campaign

def preset(kind, rng):
    """A preset as data: (switches {name: ports}, endpoints [names], links [dict]), as
    sys/lingyun/topology.cpp builds it."""
    if kind == "single":
        n = rng.randrange(2, 7)
        eps = [f"e{i}" for i in range(n)]
        return {"sw0": n}, eps, [{"a": e, "b": "sw0"} for e in eps]
    if kind == "dual-plane":
        n = rng.randrange(2, 5)
        eps = [f"e{i}" for i in range(n)]
        return {"plane0": n, "plane1": n}, eps, [{"a": e, "b": p} for e in eps for p in ("plane0", "plane1")]
    leaves, spines, per_leaf = rng.choice([(2, 1, 2), (2, 2, 2), (3, 1, 1), (2, 2, 1)])
    eps = [f"e{i}" for i in range(leaves * per_leaf)]
    switches = {f"leaf{l}": per_leaf + spines for l in range(leaves)}
    switches.update({f"spine{s}": leaves for s in range(spines)})
    links = [{"a": e, "b": f"leaf{i // per_leaf}", "cable_m": 2} for i, e in enumerate(eps)]
    links += [{"a": f"leaf{l}", "b": f"spine{s}", "cable_m": 10} for l in range(leaves) for s in range(spines)]
    return switches, eps, links


def yaml_of(v):
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {yaml_of(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(yaml_of(x) for x in v) + "]"
    if v is None:
        return "~"
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def topology_text(switches, endpoints, links):
    """Block style at the top, flow style within, so that every link has its own line."""
    out = "switches:\n" if isinstance(switches, dict) else f"switches: {yaml_of(switches)}\n"
    if isinstance(switches, dict):
        out += "".join(f"  {name}: {yaml_of(v if isinstance(v, (dict, list)) or v is None else {'ports': v})}\n"
                       for name, v in switches.items())
    out += f"endpoints: {yaml_of(endpoints)}\n"
    if isinstance(links, list):
        out += "links:\n" + "".join(f"  - {yaml_of(l)}\n" for l in links)
    else:
        out += f"links: {yaml_of(links)}\n"
    return out


def mutate_topology(switches, endpoints, links, rng):
    """One mutation, in place where it can; returns the parts and its label."""
    sw = list(switches) if isinstance(switches, dict) else []
    eps = list(endpoints) if isinstance(endpoints, list) else []
    ls = links if isinstance(links, list) else []
    some = lambda xs: xs[rng.randrange(len(xs))]
    op = rng.randrange(26)
    if op == 0 and sw:
        del switches[some(sw)]
        return switches, endpoints, links, "missing-switch"
    if op == 1 and eps:
        endpoints.remove(some(eps))
        return switches, endpoints, links, "missing-endpoint"
    if op == 2 and ls:
        del ls[rng.randrange(len(ls))]
        return switches, endpoints, links, "missing-link"
    if op == 3 and sw and eps:
        endpoints[rng.randrange(len(eps))] = some(sw)
        return switches, endpoints, links, "duplicate-name"
    if op == 4 and eps:
        endpoints.append(some(eps))
        return switches, endpoints, links, "duplicate-endpoint"
    if op == 5 and sw:
        ls.append({"a": some(sw), "b": some(sw)} if rng.randrange(2) else {"a": some(eps or sw), "b": some(eps or sw)})
        return switches, endpoints, links, "self-link"
    if op == 6 and len(sw) >= 2:  # a loop of switches; ports raised so the radix holds
        ring = rng.sample(sw, min(len(sw), rng.randrange(2, 5)))
        for i, x in enumerate(ring):
            y = ring[(i + 1) % len(ring)]
            ls.append({"a": x, "b": y, "cable_m": rng.choice([1, 10])})
            for z in (x, y):
                if isinstance(switches.get(z), int):
                    switches[z] += 1
        return switches, endpoints, links, "loop"
    if op in (7, 8) and sw and eps:  # an endpoint with a second link: to its own switch, or any
        e = some(eps)
        own = [l["b"] for l in ls if isinstance(l, dict) and l.get("a") == e]
        target = own[0] if own and op == 7 else some(sw)
        ls.append({"a": e, "b": target})
        if isinstance(switches.get(target), int):
            switches[target] += 1
        return switches, endpoints, links, "multi-homing"
    if op == 9 and sw and eps:  # its first link to a switch that goes nowhere
        e = some(eps)
        switches["dead"] = 1
        ls.insert(0, {"a": e, "b": "dead"})
        return switches, endpoints, links, "dead-first-link"
    if op == 10 and eps:  # an endpoint's links in the other order: its ports swap planes
        e = some(eps)
        mine = [i for i, l in enumerate(ls) if isinstance(l, dict) and l.get("a") == e]
        if len(mine) >= 2:
            ls[mine[0]], ls[mine[1]] = ls[mine[1]], ls[mine[0]]
        return switches, endpoints, links, "swapped-ports"
    if op == 11 and sw:
        switches[some(sw)] = rng.choice([0, -1, 1, 1025, 1024, 99999999999, 2 ** 64, "1.5", "many", "0x10", "~", "[4]"])
        return switches, endpoints, links, "port-count"
    if op == 12 and sw:  # exactly the links it has, or one fewer
        x = some(sw)
        n = sum(1 for l in ls if isinstance(l, dict) and x in (l.get("a"), l.get("b")))
        switches[x] = max(n - rng.randrange(2), 0)
        return switches, endpoints, links, "tight-radix"
    if op == 13:
        return switches, {yaml_of(e): 1 for e in eps} if eps else {"e0": 1}, links, "endpoints-map"
    if op == 14:
        return switches, rng.choice([0, 1, 2, 3, 65537, 99999999999, "many", "1.5", "~"]), links, "endpoints-count"
    if op == 15:
        return list(sw), endpoints, links, "switches-list"
    if op == 16:
        return switches, endpoints, {i: l for i, l in enumerate(ls)}, "links-map"
    if op == 17 and ls:
        i = rng.randrange(len(ls))
        ls[i] = rng.choice([list(ls[i].values()) if isinstance(ls[i], dict) else [1], "e0", 5, None])
        return switches, endpoints, links, "link-not-a-map"
    if op == 18 and sw:
        x = some(sw)
        switches[x] = rng.choice([[switches[x]], {"ports": {"n": 4}}, {"ports": [4]}, {"ports": 4, "radix": 4}, {}, None])
        return switches, endpoints, links, "switch-not-a-count"
    if op == 19 and eps:
        endpoints[rng.randrange(len(eps))] = rng.choice([{"x": 1}, ["x"], None, 5, ""])
        return switches, endpoints, links, "endpoint-not-a-name"
    if op == 20 and ls:
        l = some(ls)
        if isinstance(l, dict):
            key = rng.choice(["a", "b", "cable_m", "fec", "llr", "fc", "length"])
            l[key] = rng.choice([[1], {"x": 1}, None, "far", -1, 1e7, ".nan", "rs999", "maybe", "xon", 99999999999])
        return switches, endpoints, links, "link-value"
    if op == 21 and ls:  # valid per-link settings
        l = some(ls)
        if isinstance(l, dict):
            l.update(rng.choice([{"fec": "rs272"}, {"fec": "none", "llr": True}, {"llr": False}, {"fc": "pfc"},
                                 {"fc": "none"}, {"fec": "rs544", "fc": "cbfc"}]))
        return switches, endpoints, links, "link-settings"
    if op == 22 and ls:
        l = some(ls)
        if isinstance(l, dict):
            l["cable_m"] = rng.choice([0, 0.5, 100, 1000, 20000, 40000, 1e6])
        return switches, endpoints, links, "cable"
    if op == 23 and ls:
        l = some(ls)
        if isinstance(l, dict) and isinstance(l.get("a"), str):
            l["a"] = l["a"] + "x"
        return switches, endpoints, links, "unknown-node"
    if op == 24 and len(sw) >= 2 and eps:  # a switch-to-switch link between two planes or leaves
        a, b = rng.sample(sw, 2)
        ls.append({"a": a, "b": b})
        for z in (a, b):
            if isinstance(switches.get(z), int):
                switches[z] += 1
        return switches, endpoints, links, "bridge"
    if op == 25 and eps and sw:  # a new endpoint, linked or not
        endpoints.append("new")
        if rng.randrange(2):
            ls.append({"a": "new", "b": some(sw)})
        return switches, endpoints, links, "new-endpoint"
    return switches, endpoints, links, "unchanged"


def topology_file(rng):
    """One topology file: a preset with 1-3 mutations (sometimes none), now and then its bytes
    mutated too. Returns (label, bytes)."""
    kind = rng.choice(["single", "leaf-spine", "dual-plane"])
    parts = preset(kind, rng)
    labels = []
    for _ in range(rng.choice([0, 1, 1, 2, 3])):
        *parts, label = mutate_topology(*parts, rng)
        labels.append(label)
    text = topology_text(*parts).encode()
    if rng.randrange(10) == 0:
        data = bytearray(text)
        for _ in range(rng.randrange(1, 4)):
            at = rng.randrange(len(data))
            data[at] = b":{}[]-,#~ \n0123456789e"[rng.randrange(22)]
        text, labels = bytes(data), labels + ["bytes"]
    return f"topology/{kind}/{'+'.join(labels) or 'preset'}", text


# Each with a small workload (a fraction of a second a run); no time pin, as a long cable takes
# its time.
TOPOLOGY_SCENARIOS = {
    "olink-latency": ["olink.loads=2"],
    "switch-uniform": ["uniform.load=0.5", "uniform.warmup_cycles=500", "uniform.measure_cycles=2000"],
}


def topology_campaign(seed, files):
    rng = random.Random(seed)
    cases = []
    for _ in range(files):
        tag, text = topology_file(rng)
        for s, sets in TOPOLOGY_SCENARIOS.items():
            argv = ["run", s, "--set", "topology={d}/t.yaml"] + [a for kv in sets for a in ("--set", kv)] + ["--quiet"]
            cases.append(Case(tag, argv, ANY, files={"t.yaml": text}, may_fail=False))
    for n, c in enumerate(cases):
        c.id = n
    return cases


# ---------------------------------------------------------------------------------------------
# The results/sweep-file campaign

def real_files(xysim, root):
    """A results.json of olink-message (the exporters' input) and a two-point sweep directory of
    it: name -> bytes, as xysim wrote them."""
    base = os.path.join(root, "base")
    run = [xysim, "run", "olink-message", "--set", "message.count=1", "--out", os.path.join(base, "R"), "--quiet"]
    subprocess.run(run, capture_output=True, timeout=120, check=True)
    sweep = os.path.join(base, "s.yaml")
    with open(sweep, "w") as f:
        f.write("scenario: olink-message\nset: {message.count: 1}\ngrid:\n  message.bytes: [4096, 65536]\n")
    r = subprocess.run([xysim, "sweep", sweep, "--out", os.path.join(base, "S"), "-j", "2"], capture_output=True,
                       timeout=300)
    if r.returncode != 0:
        raise RuntimeError(f"the sweep the file campaign mutates failed: {r.stderr.decode()}")
    files = {}
    for name in ["R/results.json", "S/sweep.json", "S/points/0000/results.json", "S/points/0000/point.json",
                 "S/points/0001/results.json", "S/points/0001/point.json"]:
        with open(os.path.join(base, name), "rb") as f:
            files[name] = f.read()
    return files


def json_paths(tree, path=()):
    """Every path into a JSON tree: tuples of keys and indices, the root's () first."""
    yield path
    items = tree.items() if isinstance(tree, dict) else enumerate(tree) if isinstance(tree, list) else ()
    for k, v in items:
        yield from json_paths(v, path + (k,))


WRONG = ["x", "", [], {}, None, True, -1, 0, 1.5, [1, 2], {"a": 1}]
HUGE = [1e308, -1e308, 18446744073709551615, 18446744073709551616, 10 ** 40, -(10 ** 40), 2 ** 63, 4.9e-324]


def mutate_json(data, rng):
    """(label, bytes, sure_bad): one mutation of a JSON file's text; sure_bad when no xysim
    command may accept it (it is no longer JSON)."""
    import json
    text = data.decode()
    kind = rng.choice(["truncate", "nan", "wrong-type", "missing-key", "huge", "junk", "wrong-type", "missing-key"])
    if kind == "truncate":
        return kind, data[:rng.randrange(len(data))], True
    if kind == "junk":
        at = rng.randrange(len(data))
        return kind, data[:at] + rng.choice([b"\x00", b"\xff\xfe", b"}", b",", b"\"", b"NaN"]) + data[at:], False
    tree = json.loads(text)
    numbers = [m for m in re.finditer(r"(?<=: )-?[0-9][0-9.e+-]*", text)]
    if kind == "nan":
        m = rng.choice(numbers)
        return kind, (text[:m.start()] + rng.choice(["NaN", "Infinity", "-Infinity", "nan"]) + text[m.end():]).encode(), True
    paths = [p for p in json_paths(tree) if p]
    path = rng.choice(paths)
    parent = tree
    for k in path[:-1]:
        parent = parent[k]
    if kind == "missing-key":
        if isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent.pop(path[-1])
    else:
        parent[path[-1]] = rng.choice(WRONG if kind == "wrong-type" else HUGE)
    return f"{kind}/{path[0]}", json.dumps(tree, indent=2).encode(), False


def file_cases(files, rng, count):
    """Mutated results.json and sweep directories through compare, export and run."""
    formats = ["nccl-tests", "astra-sim", "htsim", "ns3"]
    cases = []
    for _ in range(count):
        target = rng.choice(["results", "results", "sweep", "point"])
        out = ["--out", "{d}/o"]
        if target == "results":
            label, data, sure = mutate_json(files["R/results.json"], rng)
            given = {"r.json": data, "good.json": files["R/results.json"]}
            command = rng.choice(["compare", "export", "run"])
            argv = (["compare", "{d}/r.json", "{d}/good.json"] if command == "compare"
                    else ["export", rng.choice(formats), "{d}/r.json"] + out if command == "export"
                    else ["run", "{d}/r.json", "--set", f"sim.max_time_us={PIN_US}", "--quiet"] + out)
        else:
            given = {name[2:]: data for name, data in files.items() if name.startswith("S/")}
            name = "sweep.json" if target == "sweep" else f"points/000{rng.randrange(2)}/results.json"
            label, given[name], sure = mutate_json(given[name], rng)
            command = "export"
            argv = ["export", rng.choice(formats), "{d}"] + out
        # A compare may find a difference (exit 1); an export or a run that failed a check cannot.
        expect = BAD if sure else ANY if command in ("compare", "run") else NOT_FAILED
        cases.append(Case(f"files/{target}/{command}/{label}", argv, expect, files=given))
    return cases


# ---------------------------------------------------------------------------------------------
# Running and judging

SANITIZER = re.compile(r"ERROR: (Address|Leak|Undefined)Sanitizer|runtime error: |Sanitizer:DEADLYSIGNAL")


def uses_asan(xysim):
    out = subprocess.run(["ldd", xysim], capture_output=True, text=True).stdout
    return "libasan" in out


def prepare(case, root):
    d = os.path.join(root, f"case{case.id:05d}")
    os.makedirs(d, exist_ok=True)
    for name, data in case.files.items():
        os.makedirs(os.path.dirname(os.path.join(d, name)), exist_ok=True)
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)
    for name in case.dirs:
        os.makedirs(os.path.join(d, name), exist_ok=True)
    for name, target in case.links:
        os.symlink(target, os.path.join(d, name))
    return d, [a.replace("{d}", d) for a in case.argv]


def run_case(xysim, case, root, timeout, env, asan):
    d, argv = prepare(case, root)

    def limits():
        os.setsid()
        if not asan:  # ASan reserves terabytes of address space; it gets hard_rss_limit_mb instead
            limit = MEMORY_LIMIT_MIB << 20
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    start = time.monotonic()
    p = subprocess.Popen([xysim] + argv, cwd=d, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env, preexec_fn=limits)
    try:
        out, err = p.communicate(timeout=timeout)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        rc = None
    return d, argv, rc, err.decode(errors="replace"), time.monotonic() - start


def judge(case, rc, err):
    bad = []
    if rc is None:
        bad.append("timeout")
    elif rc < 0 or rc >= 128:
        bad.append("signal")
    elif rc not in (0, 1, 2):
        bad.append(f"exit {rc}")
    if SANITIZER.search(err):
        bad.append("sanitizer report")
    if rc == 2:
        lines = err.splitlines()
        if len(lines) != 1:
            bad.append("stderr lines")
        elif case.mention and case.mention not in lines[0]:
            bad.append("error line lacks the key")
    if rc == 1 and not case.may_fail:
        bad.append("failed check")
    if case.expect == BAD and rc in (0, 1):
        bad.append(f"bad input exited {rc}")
    if case.expect == NOT_FAILED and rc == 1:
        bad.append("exit 1 where only 0 or 2 can be")
    return bad


def shown(xysim, argv):
    return shlex.join([xysim] + argv)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("xysim")
    ap.add_argument("--topology", action="store_true", help="the topology-file campaign")
    ap.add_argument("--long", action="store_true", help="the long campaign (also XY_LONG=1)")
    ap.add_argument("--cases", type=int, help=f"how many (default {SHORT_CASES}, long {LONG_CASES}; with "
                                              f"--topology files, {TOPOLOGY_SHORT}, long {TOPOLOGY_LONG})")
    ap.add_argument("--file-cases", type=int,
                    help=f"how many of the results/sweep-file campaign (default {SHORT_FILE_CASES}, long {LONG_FILE_CASES})")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds a run may take")
    ap.add_argument("--case", type=int, action="append", help="run only this case (repeatable)")
    ap.add_argument("--list", action="store_true", help="list the cases, run nothing")
    ap.add_argument("--keep", default="cli-fuzz-failures", help="where the files of failed cases are kept")
    args = ap.parse_args()
    long_campaign = args.long or bool(os.environ.get("XY_LONG"))
    xysim = os.path.abspath(args.xysim)
    file_count = 0
    if args.topology:
        count = args.cases or (TOPOLOGY_LONG if long_campaign else TOPOLOGY_SHORT)
        cases = topology_campaign(args.seed, count)
    else:
        count = args.cases or (LONG_CASES if long_campaign else SHORT_CASES)
        names, params = discover(xysim)
        cases = campaign(names, params, args.seed, long_campaign, count)
        file_count = args.file_cases if args.file_cases is not None else LONG_FILE_CASES if long_campaign else SHORT_FILE_CASES
    if file_count:
        base = tempfile.mkdtemp(prefix="xysim-fuzz-base-")
        try:
            files = real_files(xysim, base)
        finally:
            shutil.rmtree(base, ignore_errors=True)
        cases += file_cases(files, random.Random(args.seed), file_count)
        for n, c in enumerate(cases):
            c.id = n
    if args.case:
        cases = [c for c in cases if c.id in args.case]
    if args.list:
        for c in cases:
            print(f"{c.id:5d} {c.expect:3} {c.tag:40} {shown('xysim', c.argv)[:200]}")
        return 0

    asan = uses_asan(xysim)
    env = dict(os.environ)
    if asan:
        extra = f"allocator_may_return_null=1:hard_rss_limit_mb={MEMORY_LIMIT_MIB}"
        env["ASAN_OPTIONS"] = extra + (":" + env["ASAN_OPTIONS"] if env.get("ASAN_OPTIONS") else "")
    shutil.rmtree(args.keep, ignore_errors=True)  # a previous run's failures
    root = tempfile.mkdtemp(prefix="xysim-fuzz-")
    start = time.monotonic()
    failures, slowest, exits = [], (0.0, None), {}
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            futures = {pool.submit(run_case, xysim, c, root, args.timeout, env, asan): c for c in cases}
            for f in concurrent.futures.as_completed(futures):
                c = futures[f]
                d, argv, rc, err, secs = f.result()
                slowest = max(slowest, (secs, c.id), key=lambda x: x[0])
                exits["timeout" if rc is None else rc] = exits.get("timeout" if rc is None else rc, 0) + 1
                violations = judge(c, rc, err)
                if not violations:
                    shutil.rmtree(d, ignore_errors=True)
                    continue
                failures.append((c, d, argv, rc, err, violations))
        os.makedirs(args.keep, exist_ok=True) if failures else None
        for c, d, argv, rc, err, violations in sorted(failures, key=lambda x: x[0].id):
            kept = os.path.abspath(os.path.join(args.keep, os.path.basename(d)))
            shutil.rmtree(kept, ignore_errors=True)
            shutil.move(d, kept)
            argv = [a.replace(d, kept) for a in argv]
            tail = err.strip().splitlines()
            print(f"FAIL case {c.id} [{c.tag}] expected {'exit 2' if c.expect == BAD else 'exit 0, 1 or 2' if c.may_fail else 'exit 0 or 2'}: "
                  f"{', '.join(violations)} (exit {'timeout' if rc is None else rc})")
            print(f"  command: {shown(xysim, argv)[:2000]}")
            for name in c.files:
                print(f"  file:    {os.path.join(kept, name)}")
            print(f"  again:   {shlex.join([sys.argv[0], args.xysim, '--seed', str(args.seed), '--cases', str(count), '--file-cases', str(file_count)] + (['--topology'] if args.topology else []) + (['--long'] if long_campaign else []) + ['--case', str(c.id)])}")
            for line in tail[:6]:
                print(f"  stderr:  {line[:300]}")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    secs = time.monotonic() - start
    campaign_name = ("long" if long_campaign else "short") + (" topology" if args.topology else "")
    print(f"fuzz: {len(cases)} runs of {xysim} ({campaign_name} campaign, seed {args.seed}, "
          f"{'ASan' if asan else 'no sanitizer'}; {file_count} of them on mutated results and sweep files), "
          f"{len(failures)} failed, exits {', '.join(f'{k}: {v}' for k, v in sorted(exits.items(), key=str))}, "
          f"{secs:.0f} s (slowest run {slowest[0]:.1f} s, case {slowest[1]})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
