#!/usr/bin/env python3
"""docs/guide-new-block.md followed in a scratch copy of the tree, as a reader would.

  guide_test.py SOURCE_DIR SCRATCH_DIR CMAKE CXX [LAUNCHER]

Copies SOURCE_DIR (its git files, or the tree without build directories) to SCRATCH_DIR/src,
writes every code block of the guide whose info string has file=PATH (a new file: one that
exists already is an error) and appends every block with append=PATH to that file (which must
exist), configures build/ as scripts/build does (Release, Ninja; LAUNCHER, e.g. ccache, for the
compilers), then runs the guide's `sh run` blocks in order there with bash -e. Then: the tree
with the guide's files obeys the layers (tests/layers/check_includes.py), and
tests/golden/results.sha256 holds every line it held, in order, and one more: the one for the
name the guide added to runs.txt. The scratch copy is removed when everything passed.

SCRATCH_DIR should sit under ccache's base_dir, with src/build at the same depth below it as the
tree's own build/, so that the copy's objects are those ccache has seen.
"""
import os
import re
import shutil
import subprocess
import sys

src, scratch, cmake, cxx = sys.argv[1:5]
launcher = sys.argv[5] if len(sys.argv) > 5 else ""
guide = os.path.join(src, "docs", "guide-new-block.md")
tree = os.path.join(scratch, "src")


def fail(message):
    print(f"FAIL: {message}\n(scratch tree kept in {tree})")
    sys.exit(1)


def run(cmd, **kw):
    r = subprocess.run(cmd, cwd=tree, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
    return r.returncode, r.stdout


# The copy: what git tracks (and untracked files it does not ignore), or everything but builds.
shutil.rmtree(scratch, ignore_errors=True)
os.makedirs(tree)
listed = subprocess.run(["git", "-C", src, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
if listed.returncode == 0:
    files = [f for f in listed.stdout.decode().split("\0") if f and os.path.isfile(os.path.join(src, f))]
else:
    files = []
    for dirpath, dirnames, names in os.walk(src):
        rel = os.path.relpath(dirpath, src)
        dirnames[:] = [d for d in dirnames if not (rel == "." and (d.startswith("build") or d == ".git"))]
        files += [os.path.normpath(os.path.join(rel, n)) for n in names]
for f in files:
    os.makedirs(os.path.dirname(os.path.join(tree, f)) or tree, exist_ok=True)
    shutil.copy2(os.path.join(src, f), os.path.join(tree, f))
print(f"ok: {len(files)} files copied to {tree}")

# The guide's blocks, in order.
blocks = re.findall(r"^```(\w+)([^\n]*)\n(.*?)^```\s*$", open(guide).read(), re.S | re.M)
written, appended, scripts = [], [], []
for lang, info, body in blocks:
    attrs = dict(a.split("=", 1) for a in info.split() if "=" in a)
    if "file" in attrs:
        path = os.path.join(tree, attrs["file"])
        if os.path.exists(path):
            fail(f"the guide writes {attrs['file']}, which the tree has already")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as out:
            out.write(body)
        written.append(attrs["file"])
    elif "append" in attrs:
        path = os.path.join(tree, attrs["append"])
        if not os.path.isfile(path):
            fail(f"the guide appends to {attrs['append']}, which the tree does not have")
        with open(path) as f:
            text = f.read()
        with open(path, "w") as out:
            out.write(text + ("" if text.endswith("\n") else "\n") + body)
        appended.append((attrs["append"], body))
    elif lang == "sh" and "run" in info.split():
        scripts.append(body)
if not written or not appended or not scripts:
    fail(f"the guide has {len(written)} files, {len(appended)} additions and {len(scripts)} commands to run")
print(f"ok: wrote {', '.join(written)}; added to {', '.join(a for a, _ in appended)}")

golden_before = open(os.path.join(tree, "tests/golden/results.sha256")).read().splitlines()
golden_names = [body.split()[0] for path, body in appended if path == "tests/golden/runs.txt"]
if len(golden_names) != 1:
    fail(f"the guide adds {len(golden_names)} lines to tests/golden/runs.txt, expected one")

# Configured as scripts/build configures build/.
configure = [cmake, "-S", ".", "-B", "build", "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release", f"-DCMAKE_CXX_COMPILER={cxx}"]
if launcher:
    configure += [f"-DCMAKE_CXX_COMPILER_LAUNCHER={launcher}", f"-DCMAKE_C_COMPILER_LAUNCHER={launcher}"]
rc, out = run(configure)
if rc:
    fail(f"configure:\n{out}")
print("ok: configured build/")

env = dict(os.environ, PATH=os.path.dirname(cmake) + os.pathsep + os.environ.get("PATH", ""))
for i, script in enumerate(scripts):
    rc, out = run(["bash", "-euo", "pipefail", "-c", script], env=env)
    print(f"--- sh block {i + 1}:\n{script}{out}")
    if rc:
        fail(f"sh block {i + 1} exited {rc}")

rc, out = run([sys.executable, "tests/layers/check_includes.py", "."])
if rc:
    fail(f"the guide's files break the layers:\n{out}")
print(f"ok: layers: {out.strip()}")

golden_after = open(os.path.join(tree, "tests/golden/results.sha256")).read().splitlines()
added = [line for line in golden_after if line not in golden_before]
if [line for line in golden_after if line in golden_before] != golden_before or len(added) != 1 or \
        added[0].split()[-1] != golden_names[0]:
    fail(f"tests/golden/results.sha256: expected the same {len(golden_before)} lines and one for "
         f"{golden_names[0]}; lines added: {added}, lines lost: {[l for l in golden_before if l not in golden_after]}")
print(f"ok: golden: {len(golden_before)} results unchanged, one added: {added[0]}")

shutil.rmtree(scratch)
print("ok: docs/guide-new-block.md builds and runs")
