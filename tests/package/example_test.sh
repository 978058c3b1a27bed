#!/usr/bin/env bash
# The installed package as a user meets it: example_test.sh CMAKE SOURCE_DIR BUILD_DIR CXX
# installs BUILD_DIR into a temporary prefix, builds examples/ against it (find_package(xingyun))
# and runs the user's executable: run, params, bad input, --waves and a sweep of its own scenario.
set -uo pipefail
cmake=$1 src=$2 build=$3 cxx=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$cmake" --install "$build" --prefix "$work/prefix" >"$work/install.log" || fail "install: $(tail -5 "$work/install.log")"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
"$cmake" -S "$src/examples" -B "$work/example" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_CXX_COMPILER="$cxx" \
  "${launcher[@]}" >"$work/configure.log" 2>&1 || fail "configure examples/: $(cat "$work/configure.log")"
"$cmake" --build "$work/example" >"$work/build.log" 2>&1 || fail "build examples/: $(tail -30 "$work/build.log")"
sim=$work/example/xysim-incrementer
echo "ok: examples/ built against $work/prefix"

# Its scenario beside the built-in ones.
"$sim" scenarios >"$work/scenarios" || fail "scenarios"
grep -q '^incrementer ' "$work/scenarios" && grep -q '^link-basic ' "$work/scenarios" || fail "scenarios: $(cat "$work/scenarios")"

# One item a cycle from cycle 0, 2 cycles through `a`, passed on in the cycle it arrives, 1 cycle
# through `b`; credits 4 >= 2 + 1 and 2 >= 1 + 1 hold no item back: item i is taken at cycle i + 3.
"$sim" run incrementer --set incrementer.items=300 --out "$work/run" >"$work/out" 2>"$work/err" || fail "run: $(cat "$work/err")"
python3 - "$work/run/results.json" <<'PY' || fail "run: results.json"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["scenario"] == "incrementer" and r["passed"], r
s = r["summary"]
assert s["items_received"] == 300 and s["items_incremented"] == 300, s
assert s["last_item_cycle"] == 299 + 3, s
PY
grep -q "items received  *300 / 300 sent" "$work/out" || fail "run report: $(cat "$work/out")"
echo "ok: run"

# params: its own parameters with their defaults, and the driver's.
"$sim" params incrementer >"$work/params" || fail "params"
grep -Eq '^incrementer\.items +1000 +items +\[1, 1000000000\]' "$work/params" || fail "params: $(cat "$work/params")"
grep -Eq '^consumer\.stall_probability +0\.0 ' "$work/params" || fail "params: $(cat "$work/params")"
grep -q '^sim.max_time_us ' "$work/params" || fail "params: $(cat "$work/params")"
echo "ok: params"

# Bad input: exit 2, one line naming the key.
for bad in consumer.stall_probability=2 incrementer.itmes=5; do
  "$sim" run incrementer --set "$bad" >/dev/null 2>"$work/err"
  rc=$?
  [ "$rc" -eq 2 ] || fail "--set $bad: exit $rc, expected 2"
  [ "$(wc -l <"$work/err")" -eq 1 ] && grep -qF "${bad%%=*}" "$work/err" || fail "--set $bad: $(cat "$work/err")"
  echo "ok: $(cat "$work/err")"
done

# Back-pressure from a stalling consumer: every item still arrives, later than at full rate.
"$sim" run incrementer --set consumer.stall_probability=0.5 --seed 3 --out "$work/stall" --waves "$work/w.vcd" \
  >/dev/null 2>"$work/err" || fail "stalling run: $(cat "$work/err")"
python3 - "$work/stall/results.json" <<'PY' || fail "stalling run: results.json"
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
assert s["items_received"] == 1000 and s["last_item_cycle"] > 999 + 3, s
PY
python3 - "$work/w.vcd" <<'PY' || fail "waves: top.consumer.received does not end at 1000"
import sys
ident, last = None, None
for line in open(sys.argv[1]):
    f = line.split()
    if f[:1] == ["$var"] and f[4] == "received":
        ident = f[3]
    elif ident and len(f) == 2 and f[0].startswith("b") and f[1] == ident:
        last = int(f[0][1:], 2)
assert last == 1000, last
PY
echo "ok: stalls and waves"

# A sweep of its own scenario: each point is the user's executable again, here found through PATH
# from another directory.
printf 'scenario: incrementer\ngrid:\n  incrementer.items: [10, 500]\n' >"$work/sweep.yaml"
mkdir "$work/elsewhere"
(cd "$work/elsewhere" && PATH="$work/example:$PATH" xysim-incrementer sweep "$work/sweep.yaml" --out "$work/S" -j 2) \
  >"$work/out" 2>"$work/err" || fail "sweep: $(cat "$work/out" "$work/err")"
python3 - "$work/S/sweep.csv" <<'PY' || fail "sweep.csv: $(cat "$work/S/sweep.csv")"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [r["param.incrementer.items"] for r in rows] == ["10", "500"], rows
for r in rows:
    n = int(r["param.incrementer.items"])
    assert r["passed"] == "true" and int(r["items_received"]) == n and int(r["last_item_cycle"]) == n - 1 + 3, r
PY
echo "ok: sweep"
