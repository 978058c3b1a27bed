#!/usr/bin/env python3
"""The layers of docs/architecture.md, held against every #include "..." line of the sources.

A file may include files of its own layer and of the layers below it, never above. The order,
lowest first (a path belongs to the longest prefix that names it):

    kernel        the simulation kernel: time, clocks, channels, config, stats, waves
    hw            the blocks: hw/phy, hw/link, hw/switch, hw/nic, hw/otn (cores and shells)
    rtl           the Verilog twins and their adapters behind the blocks' interfaces
    sys           composed systems: sys/lingyun (ports, fabrics, topologies; picks twins)
    tlm           TLM-2.0 endpoints and fabrics (OLink)
    tb/lib        the testbench library: hosts, GPU initiators, transports, scoreboards, rigs
    tb/scenarios  the scenarios, which register themselves
    tb/run        running a scenario: the run engine and its results files
    tb/bench      benchmarks
    tb/export     exporters to other simulators
    tb/xysim      the xysim application: its subcommands

  check_includes.py ROOT            checks the tree at ROOT; exit 1 naming every upward include
  check_includes.py --self-test     plants an upward include in a scratch tree and expects it caught
"""
import os
import re
import sys
import tempfile

LAYERS = ["kernel", "hw", "rtl", "sys", "tlm", "tb/lib", "tb/scenarios", "tb/run", "tb/bench", "tb/export",
          "tb/xysim"]
SOURCE_DIRS = ["kernel", "hw", "rtl", "sys", "tlm", "tb"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(path):
    best = None
    for i, name in enumerate(LAYERS):
        if (path == name or path.startswith(name + "/")) and (best is None or len(name) > len(LAYERS[best])):
            best = i
    return best


def check(root):
    problems, files = [], 0
    for top in SOURCE_DIRS:
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for name in sorted(names):
                if not name.endswith((".hpp", ".cpp", ".h")):
                    continue
                path = os.path.relpath(os.path.join(dirpath, name), root)
                mine = layer_of(path)
                if mine is None:
                    problems.append(f"{path}: in no layer; add its folder to the layers")
                    continue
                files += 1
                with open(os.path.join(root, path), encoding="utf-8") as f:
                    text = f.read()
                for m in INCLUDE.finditer(text):
                    target = m.group(1)
                    theirs = layer_of(target)
                    if theirs is None:
                        continue  # a generated or third-party header (Verilated classes, fst_config.h)
                    if theirs > mine:
                        line = text.count("\n", 0, m.start()) + 1
                        problems.append(f"{path}:{line}: includes {target}, of layer {LAYERS[theirs]}, above "
                                        f"its own ({LAYERS[mine]})")
    return problems, files


def self_test():
    with tempfile.TemporaryDirectory() as root:
        for path, text in {"kernel/clock.hpp": "", "hw/link/llr.hpp": '#include "kernel/clock.hpp"\n',
                           "sys/lingyun/port.hpp": '#include "hw/link/llr.hpp"\n'}.items():
            os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
            with open(os.path.join(root, path), "w") as f:
                f.write(text)
        problems, _ = check(root)
        assert problems == [], problems
        with open(os.path.join(root, "hw/link/llr.hpp"), "a") as f:  # a block reaching up into a system
            f.write('#include "sys/lingyun/port.hpp"\n')
        problems, _ = check(root)
        assert len(problems) == 1 and "hw/link/llr.hpp:2: includes sys/lingyun/port.hpp" in problems[0], problems
    print("self-test: a planted upward include is caught")


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        sys.exit(0)
    problems, files = check(sys.argv[1])
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} includes against the layers (docs/architecture.md)")
        sys.exit(1)
    print(f"ok: {files} files, every include at its own layer or below")
