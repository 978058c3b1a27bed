#!/usr/bin/env bash
# gtkwave (headless, under xvfb) opens the mismatch window the CBFC lockstep writes, with its
# .gtkw: every recorded signal is loaded and shown.  gtkwave_test.sh COSIM_TESTS
set -uo pipefail
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
XY_MISMATCH_DIR=$work "$1" --gtest_filter='CbfcSenderCosim.CatchesATwinWithTheWrongOverhead' >"$work/test.log" 2>&1 ||
  fail "the lockstep test: $(tail -5 "$work/test.log")"
[ -s "$work/cbfc_mismatch.fst" ] && [ -s "$work/cbfc_mismatch.gtkw" ] || fail "no dump written"
cat >"$work/check.tcl" <<'TCL'
puts "facs=[gtkwave::getNumFacs] displayed=[llength [gtkwave::getDisplayedSignals]]"
gtkwave::/File/Quit
TCL
out=$(timeout 120 xvfb-run -a gtkwave -S "$work/check.tcl" "$work/cbfc_mismatch.fst" "$work/cbfc_mismatch.gtkw" 2>&1)
echo "$out" | grep -q "facs=17 displayed=17" || fail "gtkwave did not show the 17 signals: $out"
echo "ok: gtkwave loaded and displayed 17 signals"
