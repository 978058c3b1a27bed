#!/usr/bin/env bash
# Command-line behaviour of xysim: cli_test.sh XYSIM CASE
set -uo pipefail
xysim=$1
case_name=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# Runs xysim expecting exit status 2 and exactly one line on stderr containing $1.
expect_bad_input() {
  local want=$1; shift
  "$xysim" "$@" >"$work/out" 2>"$work/err"
  local rc=$?
  [ "$rc" -eq 2 ] || fail "xysim $*: exit $rc, expected 2; stderr: $(cat "$work/err")"
  [ "$(wc -l <"$work/err")" -eq 1 ] || fail "xysim $*: expected one line on stderr, got: $(cat "$work/err")"
  grep -qF -- "$want" "$work/err" || fail "xysim $*: stderr lacks '$want': $(cat "$work/err")"
  echo "ok: $(cat "$work/err")"
}

# Runs xysim expecting exit status 1 (a check failed) and a FAILED line on stderr containing $1.
expect_failed_run() {
  local want=$1; shift
  "$xysim" "$@" >"$work/out" 2>"$work/err"
  local rc=$?
  [ "$rc" -eq 1 ] || fail "xysim $*: exit $rc, expected 1; stderr: $(cat "$work/err")"
  grep -q "^FAILED: " "$work/err" || fail "xysim $*: no FAILED line: $(cat "$work/err")"
  grep -qF -- "$want" "$work/err" || fail "xysim $*: stderr lacks '$want': $(cat "$work/err")"
  echo "ok: $(grep '^FAILED: ' "$work/err")"
}

# An olink-message sweep of three sizes into $work/S (the exports' input).
message_sweep() {
  printf 'scenario: olink-message\nset: {message.count: 1}\ngrid:\n  message.bytes: [4096, 65536, 1048576]\n' >"$work/m.yaml"
  "$xysim" sweep "$work/m.yaml" --out "$work/S" -j 2 >/dev/null 2>"$work/err" || fail "sweep: $(cat "$work/err")"
}

# The sweep of sweep_resume and sweep_slurm: 12 points of switch-uniform over two parameters, each
# a few hundred milliseconds (a 4-port switch at one load for 10^6 cycles).
write_switch_sweep() {
  printf 'scenario: switch-uniform\nseeds: [1, 2]\nset: {switch.ports: 4, uniform.measure_cycles: 1000000}\ngrid:\n  uniform.load: [0.3, 0.6, 0.9]\n  switch.arbiter: [islip, round-robin]\n' >"$1"
}

# The rows of sweep.csv in $1 are the grid of write_switch_sweep, in its order (the last key fastest,
# then the seeds), each passed.
check_switch_sweep_rows() {
  python3 - "$1" <<'PY' || fail "$1: rows are not the grid's points"
import csv, itertools, sys
rows = list(csv.DictReader(open(sys.argv[1])))
want = [(load, arbiter, seed) for load, arbiter in itertools.product(["0.3", "0.6", "0.9"], ["islip", "round-robin"])
        for seed in ["1", "2"]]
got = [(r["param.uniform.load"], r["param.switch.arbiter"], r["seed"]) for r in rows]
assert got == want, got
assert [r["point"] for r in rows] == [str(i) for i in range(12)]
assert all(r["passed"] == "true" for r in rows)
PY
}

case "$case_name" in
  negative_latency)
    expect_bad_input "link.latency_cycles = '-3'" run link-basic --set link.latency_cycles=-3 --quiet ;;
  unknown_key)
    expect_bad_input "unknown parameter 'no.such.key'" run link-basic --set no.such.key=1 --quiet
    expect_bad_input "did you mean 'traffic.load'?" run link-basic --set trafic.load=0.5 --quiet
    # The default that --help names is the one a run without a scenario takes.
    named=$("$xysim" run --help | sed -n 's/.*(default: \([a-z0-9-]*\)).*/\1/p' | head -1)
    [ -n "$named" ] && cmp -s <("$xysim" params) <("$xysim" params "$named") || fail "run --help names '$named' as default" ;;
  yaml_syntax)
    printf 'scenario: link-basic\nparams:\n  link: {latency_cycles: 4\n' >"$work/bad.yaml"
    expect_bad_input "$work/bad.yaml:" run "$work/bad.yaml" --quiet ;;
  unknown_scenario)
    expect_bad_input "unknown scenario 'nope'" run nope ;;
  bad_waves_extension)
    expect_bad_input ".vcd or .fst" run --waves "$work/x.txt" --quiet ;;
  phy_bad_lanes)
    expect_bad_input "phy.lanes = 3" run phy-loopback --set phy.lanes=3 --quiet ;;
  phy_bad_ber)
    expect_bad_input "phy.errors.ber = '1'" run phy-loopback --set phy.errors.ber=1 --quiet ;;
  phy_bad_fec)
    expect_bad_input "must be one of rs544, rs272, none" run phy-loopback --set phy.fec=rs999 --quiet ;;
  llr_window_too_big)
    expect_bad_input "llr.window = 200" run link-llr --set llr.seq_bits=8 --set llr.window=200 --quiet ;;
  llr_300km)
    expect_bad_input "LLR is for short reach" run link-llr --set link.cable_m=300000 --quiet ;;
  cbfc_zero_credits)
    # 0 sizes the buffer by the rule; 11 credits of 128 B hold no 1500-byte frame (12 credits).
    expect_bad_input "cbfc.buffer_credits = 11: less than one largest frame" run link-cbfc --set cbfc.buffer_credits=11 --quiet ;;
  params_of_a_variant)
    # switch-uniform is the bare switch by default and composed ports on a topology: params
    # lists the keys of the variant that --set picks, and only those.
    "$xysim" params switch-uniform >"$work/bare" || fail "params switch-uniform failed"
    "$xysim" params switch-uniform --set topology=leaf-spine >"$work/leaf" || fail "params --set topology failed"
    grep -q '^uniform\.flow_control ' "$work/bare" && ! grep -q '^port\.fc ' "$work/bare" || fail "bare: $(cat "$work/bare")"
    grep -q '^port\.fc ' "$work/leaf" && ! grep -q '^uniform\.flow_control ' "$work/leaf" || fail "leaf-spine: $(cat "$work/leaf")"
    expect_bad_input "unknown parameter 'bogus.key'" params switch-uniform --set bogus.key=1
    echo "ok: uniform.flow_control on the bare switch, port.fc on a leaf-spine" ;;
  fixed_keys_name_their_owner)
    # A key the scenario sets itself is refused naming its owner, and not listed.
    expect_bad_input "port.fec = 'rs544' (--set): set by lingyun-fec-llr" run lingyun-fec-llr --set port.fec=rs544 --quiet
    expect_bad_input "port.fc = 'pfc' (--set): set by lingyun-incast" run lingyun-incast --set port.fc=pfc --quiet
    expect_bad_input "port.fec = 'none' (--set): set by olink-latency" run olink-latency --set port.fec=none --quiet
    "$xysim" params lingyun-fec-llr >"$work/params" || fail "xysim params lingyun-fec-llr failed"
    grep -q '^port\.lanes ' "$work/params" || fail "params lists no port.lanes"
    ! grep -qE '^port\.(fec|interleave|llr|cable_m) ' "$work/params" || fail "params lists a fixed or per-link key"
    echo "ok: params leaves out port.fec, port.interleave, port.llr and port.cable_m"
    # Keys a scenario's design leaves nothing to act on (issue 21) are its own too.
    expect_bad_input "switch.arbiter = 'round-robin' (--set): set by olink-latency, which sends one load at a time" \
      run olink-latency --set switch.arbiter=round-robin --quiet
    expect_bad_input "switch.arbiter = 'round-robin' (--set): set by switch-allreduce" run switch-allreduce --set switch.arbiter=round-robin --quiet
    "$xysim" params olink-latency >"$work/params" || fail "xysim params olink-latency failed"
    ! grep -qE '^(switch\.arbiter|llr\.window|cbfc\.credit_bytes) ' "$work/params" || fail "params lists a fixed key"
    echo "ok: params olink-latency leaves out switch.arbiter, llr.window and cbfc.credit_bytes" ;;
  frames_above_max_frame_bytes)
    # A frame larger than the ports carry is refused before the run; one at the limit runs.
    expect_bad_input "port.max_frame_bytes = 121: below a load's response frame (olink.bytes = 64 and 58 bytes of headers and FCS), 122 bytes; allowed: at least 122" \
      run olink-latency --set port.max_frame_bytes=121 --quiet
    "$xysim" run olink-latency --set port.max_frame_bytes=122 --set olink.loads=2 --out "$work/at" --quiet >/dev/null \
      || fail "olink-latency with frames at port.max_frame_bytes did not run"
    expect_bad_input "port.max_frame_bytes = 1499: below the hosts' largest frame (traffic.max_bytes, FCS included), 1500 bytes; allowed: at least 1500" \
      run lingyun-fec-llr --set port.max_frame_bytes=1499 --quiet
    expect_bad_input "port.max_frame_bytes = 4000: below the hosts' largest frame (traffic.max_bytes, FCS included), 9216 bytes" \
      run lingyun-fec-llr --set port.max_frame_bytes=4000 --set traffic.max_bytes=9216 --quiet
    "$xysim" run lingyun-fec-llr --set port.max_frame_bytes=1500 --set traffic.us=2 --set traffic.warmup_us=1 --out "$work/at" \
      --quiet >/dev/null || fail "lingyun-fec-llr with frames at port.max_frame_bytes did not run"
    echo "ok: frames at port.max_frame_bytes run" ;;
  cbfc_300km)
    expect_bad_input "CBFC is per hop and short reach" run link-cbfc --set link.cable_m=300000 --quiet ;;
  cbfc_rtl_counter_bits)
    expect_bad_input "cbfc.counter_bits = 16: the RTL twin" run link-cbfc --set cbfc.impl=rtl --set cbfc.counter_bits=16 --quiet ;;
  cbfc_rtl_dropin_identical)
    # The RTL twin in place of the model, over lossy lines with frequent CC_Updates.
    for impl in model rtl; do
      "$xysim" run link-cbfc --seed 3 --set link.frame_loss=0.01 --set link.update_loss=0.1 --set cbfc.resync_us=5 \
        --set cbfc.impl=$impl --out "$work/$impl" --quiet >/dev/null || fail "run $impl"
    done
    cmp "$work/model/results.json" "$work/rtl/results.json" || fail "the twin's results differ from the model's"
    grep -q '"cbfc.impl": "rtl"' "$work/rtl/run.json" || fail "run.json does not say the twin ran"
    grep -q '"cc_updates": 63' "$work/rtl/results.json" || fail "expected 63 CC_Updates"
    grep -q '"credits_restored": true' "$work/rtl/results.json" || fail "credits not restored"
    echo "ok: results.json byte-identical; 63 CC_Updates returned the credits of the frames lost" ;;
  cbfc_rtl_waves)
    # One FST with the twin's registers and the receiver model's counters.
    "$xysim" run link-cbfc --set cbfc.impl=rtl --set traffic.frames=2000 --waves "$work/w.fst" --quiet >/dev/null || fail "run"
    command -v fst2vcd >/dev/null || fail "fst2vcd is not installed (scripts/bootstrap installs gtkwave)"
    fst2vcd "$work/w.fst" >"$work/w.vcd" 2>/dev/null || fail "fst2vcd"
    for scope in cbfc_tx rtl cbfc_rx; do grep -q "scope module $scope " "$work/w.vcd" || fail "no $scope scope"; done
    grep -q 'top.a.fc.cbfc_tx.rtl.cc_due' "$work/w.gtkw" || fail "the .gtkw lacks the twin's signals"
    echo "ok: twin and model signals in one FST" ;;
  llr_gtkwave_names)
    # gtkwave (headless) opens the .gtkw from another directory and shows the LLR states by name
    # through the translate files, and counters as decimal numbers.
    "$xysim" run link-llr --waves "$work/w/llr.fst" --quiet >/dev/null || fail "run"
    command -v xvfb-run >/dev/null && command -v gtkwave >/dev/null || fail "gtkwave or xvfb-run is not installed (scripts/bootstrap installs them)"
    cat >"$work/check.tcl" <<'TCL'
puts "tx=[gtkwave::getTraceValueAtMarkerFromName {top.a.mac.llr_tx.state[1:0]}]"
puts "rx=[gtkwave::getTraceValueAtMarkerFromName {top.b.mac.llr_rx.state[1:0]}]"
puts "kept=[gtkwave::getTraceValueAtMarkerFromName {top.a.mac.llr_tx.kept[31:0]}]"
gtkwave::/File/Quit
TCL
    mkdir -p "$work/elsewhere"
    out=$(cd "$work/elsewhere" && timeout 120 xvfb-run -a gtkwave -S ../check.tcl ../w/llr.gtkw 2>&1)
    echo "$out" | grep -qE '^tx=(INIT|ADVANCE|REPLAY|FLUSH)$' || fail "tx_state not shown by name: $out"
    echo "$out" | grep -qE '^rx=(SEND_ACKS|SEND_NACK|NACK_SENT)$' || fail "rx_state not shown by name: $out"
    echo "$out" | grep -qE '^kept=[0-9]+$' || fail "kept not shown in decimal: $out"
    echo "ok: $(echo "$out" | grep -E '^(tx|rx|kept)=' | tr '\n' ' ')" ;;
  llr_rtl_dropin_identical)
    # Both ports' LLR ends as RTL twins, over lossy lines, and through a link flap that flushes.
    for run in "3 --set link.frame_error=1e-3 --set link.control_loss=0.01" \
               "5 --set link.flap_at_us=20 --set link.flap_us=30 --set llr.data_age_us=10"; do
      seed=${run%% *}
      for impl in model rtl; do
        "$xysim" run link-llr --seed ${run} --set llr.impl=$impl --out "$work/$seed-$impl" \
          --waves "$work/$seed-$impl.fst" --quiet >/dev/null || fail "run $seed $impl"
        fst2vcd "$work/$seed-$impl.fst" >"$work/$seed-$impl.vcd" 2>/dev/null || fail "fst2vcd $seed $impl"
      done
      cmp "$work/$seed-model/results.json" "$work/$seed-rtl/results.json" || fail "seed $seed: the twins' results differ"
      # The probes read the twins' registers: every value change the same as the models', and the
      # twins' own ports beside them, under .rtl.
      python3 "$(dirname "$0")/vcd_signals.py" same "$work/$seed-model.vcd" "$work/$seed-rtl.vcd" --extra-under rtl \
        || fail "seed $seed: the twins' waves differ"
    done
    grep -q '"llr.impl": "rtl"' "$work/3-rtl/run.json" || fail "run.json does not say the twins ran"
    echo "ok: results.json and waves identical with replays (seed 3) and with flushes (seed 5)" ;;
  lingyun_rtl_dropin_identical)
    # Every composed port's LLR ends and CBFC sender as RTL twins (llr.impl, cbfc.impl): at BER
    # 1e-5 none_llr's ports replay frames; then with CC_Updates every microsecond and an ACK every
    # two frames; then olink-latency's CBFC senders (its 58-byte load requests are below the LLR
    # twin's 64-byte floor: llr.impl=rtl does not run there yet, see docs/lingyun.md).
    for run in "1 --set port.errors.ber=1e-5" \
               "7 --set port.errors.ber=1e-5 --set cbfc.resync_us=1 --set llr.ack_every=2"; do
      seed=${run%% *}
      "$xysim" run lingyun-fec-llr --seed ${run} --out "$work/$seed-model" --quiet >/dev/null || fail "run $seed model"
      "$xysim" run lingyun-fec-llr --seed ${run} --set llr.impl=rtl --set cbfc.impl=rtl --out "$work/$seed-rtl" \
        --quiet >/dev/null || fail "run $seed rtl"
      cmp "$work/$seed-model/results.json" "$work/$seed-rtl/results.json" || fail "seed $seed: the twins' results differ"
      grep -q '"llr_replays": [1-9]' "$work/$seed-rtl/results.json" || fail "seed $seed: no LLR replays"
    done
    for k in llr cbfc; do
      grep -q "\"$k.impl\": \"model\"" "$work/1-model/run.json" || fail "run.json does not say $k.impl=model ran"
      grep -q "\"$k.impl\": \"rtl\"" "$work/1-rtl/run.json" || fail "run.json does not say $k.impl=rtl ran"
    done
    for impl in model rtl; do
      "$xysim" run olink-latency --set cbfc.impl=$impl --out "$work/olink-$impl" --quiet >/dev/null || fail "olink $impl"
    done
    cmp "$work/olink-model/results.json" "$work/olink-rtl/results.json" || fail "olink-latency: the twin's results differ"
    echo "ok: lingyun-fec-llr (seeds 1, 7) and olink-latency (cbfc.impl) results.json byte-identical" ;;
  lingyun_rtl_refused)
    expect_bad_input "llr.seq_bits = 16: the RTL twins (llr.impl=rtl)" \
      run lingyun-fec-llr --set llr.impl=rtl --set llr.seq_bits=16 --quiet
    expect_bad_input "cbfc.impl = 'rtl' with port.fc = 'pfc'" run lingyun-fec-llr --set cbfc.impl=rtl --set port.fc=pfc --quiet
    expect_bad_input "beyond the RTL twins (llr.impl=rtl)" \
      run lingyun-fec-llr --set llr.impl=rtl --set topology.spine_cable_m=300 --quiet
    # OLink pads its frames without data to Ethernet's 64 bytes, the LLR twin's floor: its
    # scenarios run on the twins (they were refused at 58 bytes) and give the models' summary.
    for s in olink-message olink-latency; do
      "$xysim" run $s --out "$work/$s-model" --quiet >/dev/null || fail "$s: exit $?"
      "$xysim" run $s --set llr.impl=rtl --out "$work/$s-rtl" --quiet >/dev/null || fail "$s on the LLR twins: exit $?"
      "$xysim" compare "$work/$s-model/results.json" "$work/$s-rtl/results.json" | grep -q "^summary: every leaf the same" \
        || fail "$s: the LLR twins' summary differs from the models'"
    done ;;
  llr_timers_below_loop)
    # An ACK comes back after 2 x 160 ns + 15.36 ns (a 1500-byte frame) + the 500.48 ns ACK timer.
    expect_bad_input "llr.replay_timer_ns = 800: must be above 835.84 ns" run link-llr --set llr.replay_timer_ns=800 --quiet
    expect_bad_input "llr.nack_timer_ns = 300: must be above 335.36 ns" run link-llr --set llr.nack_timer_ns=300 --quiet
    expect_bad_input "e2e.rto_us = 5: must be above 8.52 us" run link-llr --set link.recovery=e2e --set e2e.rto_us=5 --quiet
    # The same llr.* timers on composed ports, against each link's loop: over 300 m of cable alone
    # a NACK's replay takes 2 x 1500 ns, more than the 2000 ns NACK timer.
    expect_bad_input "link e0 - sw0: llr.nack_timer_ns = 2000: must be above" run olink-latency --set topology.cable_m=300 --quiet ;;
  llr_dead_lane_flushes)
    # Issue 12: a burst that never ends. The RX re-NACKs (2 us) inside the replay timer (5 us);
    # those replays count toward llr.replay_limit, so the lane ends in FLUSHes, not a watchdog.
    for impl in model rtl; do
      "$xysim" run link-llr --set traffic.frames=1000 --set link.burst_start=0.5 --set link.burst_frames=1048576 \
        --set llr.impl=$impl --out "$work/$impl" >"$work/$impl.report" 2>&1 || fail "$impl: $(cat "$work/$impl.report")"
      summary() { sed -n '/"summary"/,$p' "$work/$impl/results.json" | grep -m1 "\"$1\"" | grep -o '[0-9]\+' | head -1; }
      flushed=$(summary flushed_frames)
      lost=$(summary frames_lost)
      grep -q '"passed": true' "$work/$impl/results.json" || fail "$impl: the run did not pass"
      [ "$flushed" -gt 0 ] || fail "$impl: nothing flushed"
      # Every frame delivered exactly once (the scenario's check) or flushed.
      [ "$lost" -le "$flushed" ] || fail "$impl: $lost frames lost, only $flushed flushed"
      echo "ok: $impl: $(grep faults "$work/$impl.report" | tr -s ' ' | sed 's/^ //')"
    done
    cmp "$work/model/results.json" "$work/rtl/results.json" || fail "the twins' results differ from the models'" ;;
  llr_rtl_window)
    expect_bad_input "the RTL twins (llr.impl=rtl) keep at most" run link-llr --set llr.impl=rtl --set link.recovery=e2e --quiet ;;
  olink_gpu_rate)
    expect_bad_input "olink.olink-rs544.gpu_gbps = 3001" run olink-alltoall --set alltoall.olink=preset \
      --set olink.olink-rs544.gpu_gbps=3001 --quiet ;;
  olink_write_too_big)
    expect_bad_input "alltoall.bytes = '2000000'" run olink-alltoall --set alltoall.bytes=2000000 --quiet
    expect_bad_input "fast.bytes_per_gpu = 65536: less than one write" \
      run olink-fast --set fast.bytes=1048576 --set fast.bytes_per_gpu=65536 --quiet ;;
  pcap_tshark)
    command -v tshark >/dev/null || fail "tshark is not installed (scripts/bootstrap installs it)"
    "$xysim" run link-llr --set link.frame_error=2e-3 --set traffic.frames=3000 --pcap "$work/llr.pcap" \
      --pcap-scope top.a --out "$work/R" --quiet >/dev/null || fail "run"
    tshark -r "$work/llr.pcap" -o eth.check_fcs:TRUE -T fields -e eth.fcs.status -e _ws.malformed \
      >"$work/fields" 2>"$work/tshark.err" || fail "tshark: $(cat "$work/tshark.err")"
    total=$(wc -l <"$work/fields")
    bad=$(awk -F'\t' '$1 == "0"' "$work/fields" | wc -l)
    malformed=$(awk -F'\t' '$2 != ""' "$work/fields" | wc -l)
    stat() { grep -A3 "\"$1\"" "$work/R/results.json" | grep '"value"' | grep -o '[0-9]\+' | head -1; }
    corrupted=$(stat top.a.line.corrupted_frames)
    sent=$(stat top.a.mac.frames_sent)
    [ "$total" -eq "$sent" ] || fail "tshark read $total frames, port a sent $sent"
    [ "$malformed" -eq 0 ] || fail "$malformed malformed frames"
    [ "$bad" -eq "$corrupted" ] || fail "$bad frames with a bad FCS, the channel corrupted $corrupted"
    [ "$corrupted" -gt 0 ] || fail "no corrupted frame to check"
    echo "ok: $total frames, $bad bad FCS = $corrupted corrupted on purpose, none malformed" ;;
  pcap_composed)
    # Every port of a composed fabric is a capture point; the scope picks leaf0's two ports.
    command -v tshark >/dev/null || fail "tshark is not installed (scripts/bootstrap installs it)"
    "$xysim" run lingyun-fec-llr --set traffic.us=5 --pcap "$work/fabric.pcap" --pcap-scope top.rs544.leaf0 \
      --out "$work/R" --quiet >/dev/null || fail "run"
    tshark -r "$work/fabric.pcap" -o eth.check_fcs:TRUE -T fields -e eth.fcs.status -e _ws.malformed -e eth.type \
      >"$work/fields" 2>"$work/tshark.err" || fail "tshark: $(cat "$work/tshark.err")"
    total=$(wc -l <"$work/fields")
    good=$(awk -F'\t' '$1 == "1"' "$work/fields" | wc -l)
    malformed=$(awk -F'\t' '$2 != ""' "$work/fields" | wc -l)
    sent=$(python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))["stats"]
print(sum(s[f"top.rs544.leaf0.port{p}.mac.frames_sent"]["value"] for p in (0, 1)))' "$work/R/results.json")
    [ "$total" -gt 0 ] || fail "no frames captured"
    [ "$total" -eq "$sent" ] || fail "tshark read $total frames, leaf0's two ports sent $sent"
    [ "$good" -eq "$total" ] || fail "$((total - good)) frames with a bad FCS as they left the MAC"
    [ "$malformed" -eq 0 ] || fail "$malformed malformed frames"
    echo "ok: $total frames from top.rs544.leaf0's ports, every FCS good, none malformed" ;;
  nic_bad_input)
    # The NIC's keys, refused by name before anything is simulated.
    expect_bad_input "nic.mtu = 1500: allowed 256, 512, 1024, 2048, 4096" run nic-incast --set nic.mtu=1500
    expect_bad_input "nic.retry_count = '8'" run nic-incast --set nic.retry_count=8
    expect_bad_input "nic.dcqcn.profile = 'fast'" run nic-incast --set nic.dcqcn.profile=fast
    expect_bad_input "nic.cc = 'fast' (--set): must be one of dcqcn, encc, none" run nic-spray --set nic.cc=fast
    expect_bad_input "nic.reorder.window = 0: nic-balance sprays" run nic-balance --set nic.reorder.window=0
    expect_bad_input "topology = single: nic-balance loads spine0" run nic-balance --set topology=single
    expect_bad_input "nic.iglb.paths = '1'" run nic-incast --set nic.iglb.paths=1
    expect_bad_input "alltoall.endpoints = 20: the topology has 16" \
      run nic-alltoall --set alltoall.endpoints=20 --set topology.endpoints=16
    expect_bad_input "nic.encc.eta = '1.5' (--set): must be a number in [0.001, 1]" run nic-incast --set nic.encc.eta=1.5
    expect_bad_input "nic.encc.min_rate_mbps = '900000' (--set): must be a number in [0.001, 800000]" \
      run nic-incast --set nic.encc.min_rate_mbps=900000
    expect_bad_input "nic.dcqcn.byte_counter = 5: allowed 0 when nic.dcqcn.rate_decrease_interval_us > 0" \
      run nic-incast --set nic.dcqcn.profile=mlx --set nic.dcqcn.byte_counter=5
    expect_bad_input "incast.senders = 20: needs 22 endpoints" run nic-incast --set incast.senders=20 --set topology.endpoints=20
    expect_bad_input "exceed port.max_frame_bytes = 1522" run nic-incast --set port.max_frame_bytes=1522
    expect_bad_input "nic.retransmit = selective: needs nic.reorder.window > 0" run nic-incast --set nic.retransmit=selective
    expect_bad_input "nic.reorder.window = '70000'" run nic-incast --set nic.reorder.window=70000
    expect_bad_input "spray.senders = 9: needs 18 endpoints" run nic-spray --set spray.senders=9 --set topology.endpoints=16
    expect_bad_input "nic.retransmit = selective: nic-spray's spray design has no reorder window" \
      run nic-spray --set nic.retransmit=selective
    expect_bad_input "nic.entropy = 'packet' (--set): set by nic-spray" run nic-spray --set nic.entropy=packet
    expect_bad_input "nic-failover needs two planes" run nic-failover --set topology=leaf-spine
    expect_bad_input "failover.pairs = 3: needs 6 endpoints, the topology has 4" \
      run nic-failover --set failover.pairs=3 --set topology.endpoints=4
    expect_bad_input "failover.at_us = 0.5: allowed from 1.00028 on" run nic-failover --set failover.at_us=0.5
    expect_bad_input "nic.failover.path_timeout_us = '-1'" run nic-failover --set nic.failover.path_timeout_us=-1
    expect_bad_input "wrap.line_gbps = 100: allowed multiples of 8" run nic-psn-wrap --set wrap.line_gbps=100
    expect_bad_input "wrap.message_bytes = 300: allowed up to nic.mtu = 256" run nic-psn-wrap --set wrap.message_bytes=300
    expect_bad_input "nic.dcqcn.profile" run nic-psn-wrap --set nic.dcqcn.profile=mlx ;;
  nic_pcap_roce)
    # Every frame nic-incast's NICs send, as tshark dissects it: RoCEv2 (UDP 4791) with a BTH,
    # nothing malformed; tshark does not check the ICRC, so it is recomputed here for each frame.
    command -v tshark >/dev/null || fail "tshark is not installed (scripts/bootstrap installs it)"
    "$xysim" run nic-incast --set incast.senders=3 --set incast.message_kib=64 --set incast.victim_kib=8 \
      --set switch.ecn.kmin_bytes=0 --set switch.ecn.kmax_bytes=20000 \
      --pcap "$work/nic.pcap" --pcap-scope top.dcqcn_pfc.e --out "$work/R" --quiet >/dev/null || fail "run"
    tshark -r "$work/nic.pcap" -T fields -e _ws.malformed -e infiniband.bth.opcode -e udp.dstport \
      >"$work/fields" 2>"$work/tshark.err" || fail "tshark: $(cat "$work/tshark.err")"
    total=$(wc -l <"$work/fields")
    malformed=$(awk -F'\t' '$1 != ""' "$work/fields" | wc -l)
    roce=$(awk -F'\t' '$2 != "" && $3 == "4791"' "$work/fields" | wc -l)
    cnps=$(awk -F'\t' '$2 == "129"' "$work/fields" | wc -l)
    [ "$total" -gt 0 ] || fail "no frames captured"
    [ "$malformed" -eq 0 ] || fail "$malformed malformed frames"
    [ "$roce" -eq "$total" ] || fail "$((total - roce)) of $total frames not RoCEv2 with a BTH"
    [ "$cnps" -gt 0 ] || fail "no CNP among the frames"
    python3 - "$work/nic.pcap" <<'PY' || fail "ICRC"
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
at, frames = 24, 0
while at < len(data):
    n = struct.unpack_from("<I", data, at + 8)[0]
    f = bytearray(data[at + 16:at + 16 + n])
    at += 16 + n
    ip_len = f[16] << 8 | f[17]
    end = 14 + ip_len - 4  # the ICRC's place; Ethernet padding and the FCS follow it
    wire = f[end:end + 4]
    m = bytearray(f[14:end])
    m[1] = 0xFF; m[8] = 0xFF; m[10] = m[11] = 0xFF   # IPv4 TOS, TTL, checksum
    m[26] = m[27] = 0xFF                              # UDP checksum
    m[32] = 0xFF                                      # BTH FECN, BECN, reserved
    crc = zlib.crc32(b"\xff" * 8 + bytes(m)) & 0xFFFFFFFF
    if crc.to_bytes(4, "little") != wire:
        sys.exit(f"frame {frames + 1}: ICRC {bytes(wire).hex()} on the wire, {crc.to_bytes(4, 'little').hex()} computed")
    frames += 1
print(f"{frames} ICRCs recomputed, all as on the wire")
PY
    echo "ok: $total frames, every one RoCEv2 with a BTH ($cnps CNPs), none malformed" ;;
  bad_cli_value)
    expect_bad_input "--seed" run --seed abc ;;
  readme_waves)
    # The README's waves example, as written there (it once named no scenario and the default
    # had no signals), writes a dump with signals under its scope.
    line=$(grep -m1 '^build/xysim run .*--waves ' "$(dirname "$0")/../../README.md")
    [ -n "$line" ] || fail "no waves example in the README"
    args=$(echo "$line" | sed -e 's|^build/xysim ||' -e "s|waves/link.fst|$work/readme.vcd|")
    # shellcheck disable=SC2086
    "$xysim" $args --quiet >/dev/null 2>"$work/err" || fail "README example failed: $(cat "$work/err")"
    grep -q '\$var' "$work/readme.vcd" || fail "README example dumped no signals"
    echo "ok: $line" ;;
  params_aligned)
    # Every column starts where its header does, whatever the widest cell (a quoted default, a
    # unit of two words).
    for scenario in lingyun-fec-llr olink-latency link-basic; do
      "$xysim" params "$scenario" | python3 -c '
import sys
lines = sys.stdin.read().splitlines()
starts = [lines[0].index(h) for h in ("default", "unit", "allowed", "description")]
for line in lines[1:]:
    for s, e in zip(starts, starts[1:] + [len(line)]):
        cell = line[s:e]  # begins right after a space, and with its text unless it is empty
        assert line[s - 1] == " " and (cell[:1] != " " or not cell.strip()), (s, line)
' || fail "xysim params $scenario: columns out of line"
    done
    echo "ok: params aligned" ;;
  sweep)
    # A grid of 2 x 2 x 2 seeds and a listed point with a value out of range: 8 points pass, 2 fail
    # (exit 2 each) and the sweep goes on; the merge agrees with every point's own results.json;
    # a second run skips what is done.
    printf 'scenario: link-basic\nseeds: [1, 2]\nset: {traffic.packets: 500}\ngrid:\n  link.latency_cycles: [1, 8]\n  traffic.load: [0.25, 0.5]\npoints:\n  - {link.latency_cycles: 0}\n' >"$work/s.yaml"
    "$xysim" sweep "$work/s.yaml" --out "$work/S" -j 2 >"$work/out" 2>"$work/err"
    rc=$?
    [ "$rc" -eq 1 ] || fail "sweep with two bad points: exit $rc, expected 1: $(cat "$work/err")"
    grep -q "point 8 failed (exit 2): error: link.latency_cycles" "$work/err" || fail "failed point not named: $(cat "$work/err")"
    python3 - "$work/S" <<'PY' || fail "sweep.csv does not match the points"
import csv, json, sys
d = sys.argv[1]
rows = list(csv.DictReader(open(d + "/sweep.csv")))
assert len(rows) == 10, len(rows)
assert sum(r["passed"] == "true" for r in rows) == 8
for r in rows:
    if r["passed"] != "true":
        continue
    own = json.load(open(f"{d}/points/{int(r['point']):04}/results.json"))
    assert own["seed"] == int(r["seed"]), r
    assert own["config"]["link.latency_cycles"] == int(r["param.link.latency_cycles"]), r
    assert abs(own["summary"]["goodput_Gbps"] - float(r["goodput_Gbps"])) < 1e-9, r
PY
    "$xysim" sweep "$work/s.yaml" --out "$work/S" -j 2 >"$work/out" 2>/dev/null
    grep -q "10 points, 2 run, 8 skipped, 2 failed" "$work/out" || fail "second run: $(cat "$work/out")"
    [ "$("$xysim" sweep "$work/s.yaml" --backend print | grep -c ' run link-basic --seed ')" -eq 10 ] || fail "print backend"
    printf 'scenario: link-basic\ngird: {traffic.load: [0.5]}\n' >"$work/bad.yaml"
    expect_bad_input "bad.yaml:2: unknown key 'gird'" sweep "$work/bad.yaml"
    printf 'scenario: link-basic\ngrid: {traffic.load: []}\n' >"$work/empty.yaml"
    expect_bad_input "empty.yaml:2: grid.traffic.load must be a list of at least one value" sweep "$work/empty.yaml"
    expect_bad_input "--backend: slurmm not in {local,print,slurm}" sweep "$work/s.yaml" --backend slurmm
    echo "ok: sweep" ;;
  compare)
    # Two runs that differ in one parameter and the seed: compare names both, and each differing
    # leaf's relative change is the one the test computes from the two results.json.
    "$xysim" run link-basic --out "$work/A" --quiet >/dev/null || fail "run A"
    "$xysim" run link-basic --set traffic.load=0.6 --seed 2 --out "$work/B" --quiet >/dev/null || fail "run B"
    "$xysim" compare "$work/A" "$work/B/results.json" >"$work/out"
    [ $? -eq 1 ] || fail "compare of different runs: exit not 1"
    grep -q '^seed: 1 vs 2$' "$work/out" || fail "seed not named: $(cat "$work/out")"
    grep -Eq '^  traffic.load +0.5 +0.6 +\+20 %$' "$work/out" || fail "parameter not named: $(cat "$work/out")"
    python3 - "$work" <<'PY' || fail "compare's leaves: $(cat "$work/out")"
import json, sys
w = sys.argv[1]
a, b = (json.load(open(f"{w}/{r}/results.json"))["summary"] for r in "AB")
shown = {line.split()[0]: line.split() for line in open(f"{w}/out") if line.startswith("  ") and "%" in line}
for key in ("goodput_Gbps", "beat_utilisation"):
    change = 100 * (b[key] - a[key]) / abs(a[key])
    assert float(shown[key][3]) == float(f"{change:+.3g}"), (key, change, shown[key])
assert "packets_received" not in shown  # 20000 both times
PY
    "$xysim" compare "$work/A" "$work/A" | grep -q "every leaf the same" || fail "a run against itself"
    "$xysim" compare "$work/A" "$work/B" --tolerance 0.5 >/dev/null || fail "--tolerance 0.5 still differs"
    expect_bad_input "not a results.json of xysim run" compare "$work/A" "$work/A/run.json"
    expect_bad_input "cannot read it" compare "$work/A" "$work/none"
    # run.json names the commit the binary was built from: one of this checkout's history (HEAD
    # itself unless commits were made since the build).
    src=$(cd "$(dirname "$0")/../.." && pwd)
    commit=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["git_commit"])' "$work/A/run.json")
    if git -C "$src" rev-parse HEAD >/dev/null 2>&1; then
      git -C "$src" merge-base --is-ancestor "${commit%-dirty}" HEAD 2>/dev/null \
        || fail "run.json git_commit '$commit' is not a commit of $src's history"
    fi
    echo "ok: compare, commit $commit" ;;
  claims)
    # Every claim's runs (about a minute): the table equals docs/claims.md but for its "Produced by"
    # line (command, commit, wall time); every figure equals the value at its place in its own run's
    # results.json; every verdict follows from the runs' summaries by the rules restated below.
    "$xysim" claims --out "$work/C" -j 2 >"$work/out" 2>"$work/err" || fail "claims: exit $?: $(tail -3 "$work/err")"
    diff <(grep -v '^Produced by ' "$(dirname "$0")/../../docs/claims.md") <(grep -v '^Produced by ' "$work/C/claims.md") \
      >"$work/diff" || fail "claims.md differs from docs/claims.md (run the command at its top): $(cat "$work/diff")"
    python3 - "$work/C" <<'PY' || fail "claims.json or claims.md disagree with the runs"
import json, sys
d = sys.argv[1]
claims = {c["id"]: c for c in json.load(open(d + "/claims.json"))["claims"]}
rows = {line.split("|")[1].strip(): line for line in open(d + "/claims.md") if line.startswith("| C")}
assert sorted(claims) == sorted(rows) == sorted(f"C{i}" for i in range(1, 14)), (sorted(claims), sorted(rows))

def results(run):
    return json.load(open(f"{d}/runs/{run}/results.json"))

def at(doc, pointer):  # RFC 6901
    for part in pointer.split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        doc = doc[int(part)] if isinstance(doc, list) else doc[part]
    return doc

for c in claims.values():
    for f in c["figures"]:
        assert at(results(f["run"]), f["pointer"]) == f["value"], (c["id"], f)
    assert c["measured"] in rows[c["id"]] and f"**{c['verdict']}**" in rows[c["id"]], c["id"]

s = lambda run: results(run)["summary"]
olat, oa2a, ecmp = s("olink-latency"), s("olink-alltoall"), s("switch-ecmp")
fl0, curve = s("lingyun-fec-llr"), s("phy-fec-curve")
chain = s("switch-incast")
llr, e2e = s("link-llr"), s("link-e2e")
spray = ecmp["spray"]["link_bytes"]
nspray = s("nic-spray")
uncorrectable = lambda run, d: s(run)[d]["uncorrectable_codewords"]

def uniform_p_at_least(worst, flows=32, links=8):
    """P(some link gets >= worst flows), each flow on a uniformly random link: 1 - (assignments
    with every link below worst) / links^flows, by inclusion of one link at a time."""
    from math import comb
    ways = [1] + [0] * flows
    for _ in range(links):
        ways = [sum(comb(n, k) * ways[n - k] for k in range(min(worst - 1, n) + 1)) for n in range(flows + 1)]
    return 1 - ways[flows] / links ** flows

rule = {
    "C1": olat["olink-rs544"]["load_latency_ns"] >= 8 * olat["nvlink-class"]["load_latency_ns"],
    "C2": fl0["rs272_llr"]["latency_p50_ns"] < fl0["rs544"]["latency_p50_ns"]
          and uncorrectable("lingyun-fec-llr-1e-3-rs272", "rs272_llr") > uncorrectable("lingyun-fec-llr-1e-3-rs544", "rs544")
          and curve["rs272"]["curve"][0]["pre_fec_ber"] < curve["rs544"]["curve"][0]["pre_fec_ber"],
    "C3": all(s(r)["cbfc_shared_vc"]["backpressure_hops"] <= 1
              and s(r)["pfc_shared_vc"]["backpressure_hops"] > s(r)["cbfc_shared_vc"]["backpressure_hops"]
              for r in ("lingyun-incast-96k", "lingyun-incast-128k", "lingyun-incast-512k"))
          and chain["cbfc"]["backpressure_hops"] <= 1 < chain["pfc"]["backpressure_hops"]
          and not any(s(f"lingyun-deadlock-{l}")["cbfc_one_vc"]["frames_held"] > 0
                      and s(f"lingyun-deadlock-{l}")["pfc_one_vc"]["frames_held"] > 0 for l in ("0.4", "0.45", "0.8")),
    "C4": all(2 * s(l)["latency_p999_ns"] <= s(e)["latency_p999_ns"] and s(l)["goodput_ratio"] >= s(e)["goodput_ratio"]
              for l, e in (("link-llr", "link-e2e"), ("link-llr", "link-e2e-2us"), ("link-llr-1e-4", "link-e2e-1e-4"),
                           ("link-llr-1e-2", "link-e2e-1e-2"))),
    "C5": all(min(s(r)["ring"]["time_us"], s(r)["halving_doubling"]["time_us"]) >= 1.1 * s(r)["in_network"]["time_us"]
              for r in ("switch-allreduce", "switch-allreduce-skew", "switch-allreduce-64", "switch-allreduce-64-skew")),
    "C6": max(spray) <= 1.05 * sum(spray) / len(spray)
          and all(ecmp["spray"]["completion_max_us"] <= 0.9 * ecmp[h]["completion_max_us"] for h in ("ecmp-crc32", "ecmp-toeplitz"))
          and max(nspray["spray_rob"]["uplink_frames"]) <= 1.05 * sum(nspray["spray_rob"]["uplink_frames"]) / len(nspray["spray_rob"]["uplink_frames"])
          and nspray["spray_rob"]["fct_max_us"] <= 0.9 * nspray["ecmp"]["fct_max_us"]
          and nspray["spray_rob"]["reorder_occupancy_p99"] > 0 and nspray["spray_rob"]["app_out_of_order_bytes"] == 0,
    "C11": all(10 * oa2a["pcie-switch"]["bandwidth_per_gpu_GBps"] <= oa2a[f]["bandwidth_per_gpu_GBps"]
               for f in ("olink-rs544", "nvlink-class")),
    "C12": min(uniform_p_at_least(max(ecmp[h]["flows_first_link"])) for h in ("ecmp-crc32", "ecmp-toeplitz")) <= 0.05,
    "C13": s("nic-incast")["pfc"]["pause_hops"] >= 2
           and 4 * s("nic-incast")["pfc"]["victim_gbps"] < s("nic-incast")["dcqcn"]["victim_gbps"]
           and s("nic-incast-drops")["dcqcn"]["retx_bytes"] > 4096 * s("nic-incast-drops")["dcqcn"]["drops"]
           and s("nic-incast-drops")["dcqcn"]["fct_p99_us"] >= 1.1 * s("nic-incast-drops")["pfc"]["fct_p99_us"],
    "C7": all(s(r)["encc"]["goodput_ratio"] > 0.90 and s(r)["encc"]["drop_ratio"] < 1e-6
              for r in ("nic-incast", "nic-incast-64", "nic-alltoall")),
    "C9": all(s("nic-failover")[d]["restore_us"] < 1000 for d in ("cut_sender", "cut_receiver", "flap_sender", "plane_down"))
          and s("nic-failover")["claim_c9"]["bytes_lost_at_application"] == 0,
    "C10": s("across-300km")["fast_model"]["ipcn"]["slowdown_pct"] < 0.13,
    "C8": s("nic-balance")["iglb"]["fct_p99_us"] <= 0.9 * s("nic-balance")["ecmp"]["fct_p99_us"]
          and s("nic-balance")["iglb"]["max_over_mean_link_load"] < s("nic-balance")["ecmp"]["max_over_mean_link_load"],
}
for cid, c in claims.items():
    want = ("reproduced" if rule[cid] else "refuted") if cid in rule else "not modelled"
    assert c["verdict"] == want, (cid, c["verdict"], want)
PY
    echo "ok: claims: $(grep -c '^| C' "$work/C/claims.md") rows as in docs/claims.md" ;;
  claims_failed_run)
    # A run that fails (its results.json cannot be written) fails every row that reads it, with the
    # run's error line, and the command exits 1; the other rows stand. A claim not in the table is
    # bad input.
    mkdir -p "$work/C/runs/switch-ecmp/results.json"
    "$xysim" claims --only C5,C12,C10 --out "$work/C" -j 2 >"$work/out" 2>"$work/err"
    rc=$?
    [ "$rc" -eq 1 ] || fail "claims with a failing run: exit $rc, expected 1: $(cat "$work/err")"
    error=$(grep -v '^$' "$work/C/runs/switch-ecmp/log.txt" | tail -1)
    [[ "$error" == "error: cannot write "* ]] || fail "the run did not fail as arranged: $error"
    grep -qF "| C12 | ECMP hash polarisation: e.g. 32 elephant flows, 5 on one link | failed: switch-ecmp: $error | **failed** " \
      "$work/C/claims.md" || fail "no failed C12 row with the run's error line: $(cat "$work/C/claims.md")"
    grep -qE '^\| C5 \| .*\| \*\*(reproduced|refuted)\*\* ' "$work/C/claims.md" || fail "C5 row: $(cat "$work/C/claims.md")"
    grep -qE '^\| C10 \| .*\| \*\*(reproduced|refuted)\*\* ' "$work/C/claims.md" || fail "C10 row: $(cat "$work/C/claims.md")"
    [ "$(grep -c '^| C' "$work/C/claims.md")" -eq 3 ] || fail "--only C5,C12,C10 gave other rows"
    expect_bad_input "--only 'C99': no such claim" claims --only C99
    echo "ok: claims_failed_run" ;;
  sweep_resume)
    # A sweep killed half-way and run again runs only the points that had not finished, leaves the
    # finished ones as they were, and merges the same sweep.csv as a sweep never stopped.
    write_switch_sweep "$work/s.yaml"
    "$xysim" sweep "$work/s.yaml" --out "$work/whole" -j 2 >"$work/out" 2>/dev/null || fail "sweep: $(cat "$work/out")"
    grep -q "12 points, 12 run, 0 skipped, 0 failed" "$work/out" || fail "uninterrupted sweep: $(cat "$work/out")"
    check_switch_sweep_rows "$work/whole/sweep.csv"
    # Its own process group, so that the kill reaches the points it runs too.
    setsid "$xysim" sweep "$work/s.yaml" --out "$work/cut" -j 2 >/dev/null 2>&1 &
    sweep_pid=$!
    until [ "$(ls "$work"/cut/points/*/results.json 2>/dev/null | wc -l)" -ge 3 ]; do
      kill -0 "$sweep_pid" 2>/dev/null || fail "the sweep ended before 3 points were done"
      sleep 0.05
    done
    kill -TERM -- -"$sweep_pid"
    while kill -0 -- -"$sweep_pid" 2>/dev/null; do sleep 0.05; done
    # Finished: results.json whole (a point killed while writing it is not).
    python3 - "$work/cut" >"$work/finished" <<'PY'
import glob, json, os, sys
for f in sorted(glob.glob(sys.argv[1] + "/points/*/results.json")):
    try:
        json.load(open(f))
    except ValueError:
        continue
    print(f, os.stat(f).st_mtime_ns)
PY
    finished=$(wc -l <"$work/finished")
    [ "$finished" -ge 3 ] && [ "$finished" -lt 12 ] || fail "killed with $finished of 12 points finished"
    "$xysim" sweep "$work/s.yaml" --out "$work/cut" -j 2 >"$work/out" 2>/dev/null || fail "resumed sweep: $(cat "$work/out")"
    grep -q "12 points, $((12 - finished)) run, $finished skipped, 0 failed" "$work/out" ||
      fail "resumed after $finished finished: $(cat "$work/out")"
    python3 - "$work/finished" <<'PY' || fail "a point finished before the kill was run again"
import os, sys
for line in open(sys.argv[1]):
    path, mtime_ns = line.split()
    assert os.stat(path).st_mtime_ns == int(mtime_ns), path
PY
    cmp "$work/whole/sweep.csv" "$work/cut/sweep.csv" || fail "resumed sweep.csv differs from the uninterrupted one"
    echo "ok: killed with $finished of 12 finished, resumed running $((12 - finished))" ;;
  sweep_slurm)
    # The same sweep as one Slurm job array on a local single-node Slurm (scripts/slurm-local) gives
    # the local backend's sweep.csv; a second submission runs only the points left to do.
    write_switch_sweep "$work/s.yaml"
    printf 'scenario: link-basic\nslurm: {partiton: debug}\n' >"$work/bad.yaml"
    expect_bad_input "bad.yaml:2: unknown key 'slurm.partiton': allowed are partition, time, args" \
      sweep "$work/bad.yaml" --backend slurm
    PATH=/nonexistent "$xysim" sweep "$work/s.yaml" --out "$work/N" --backend slurm 2>"$work/err"
    rc=$?
    [ "$rc" -eq 2 ] && [ "$(wc -l <"$work/err")" -eq 1 ] && grep -q "sbatch is not on PATH" "$work/err" ||
      fail "without sbatch: exit $rc, $(cat "$work/err")"
    [ "$(id -u)" -eq 0 ] || { echo "SKIP: starting a local Slurm (scripts/slurm-local) needs root"; exit 77; }
    slurm_local=$(dirname "$0")/../../scripts/slurm-local
    export XY_SLURM_DIR=$work/slurm SLURM_CONF=$work/slurm/slurm.conf
    trap '"$slurm_local" stop; rm -rf "$work"' EXIT
    "$slurm_local" start || fail "scripts/slurm-local start"
    "$xysim" sweep "$work/s.yaml" --out "$work/local" -j 2 >/dev/null 2>&1 || fail "local sweep"
    "$xysim" sweep "$work/s.yaml" --out "$work/slurm-out" -j 2 --backend slurm >"$work/out" 2>"$work/err" ||
      fail "slurm sweep: $(cat "$work/out" "$work/err")"
    grep -q "12 points, 12 run, 0 skipped, 0 failed" "$work/out" || fail "slurm sweep: $(cat "$work/out")"
    cmp "$work/local/sweep.csv" "$work/slurm-out/sweep.csv" || fail "Slurm's sweep.csv differs from the local one"
    check_switch_sweep_rows "$work/slurm-out/sweep.csv"
    # Slurm writes each array task's output as slurm/<task id>.txt: one a point.
    [ "$(cd "$work/slurm-out/slurm" && ls [0-9]*.txt | sort -n | tr '\n' ' ')" = "$(seq -f %g.txt -s ' ' 0 11) " ] ||
      fail "array tasks: $(ls "$work/slurm-out/slurm")"
    rm -r "$work/slurm-out/slurm" "$work"/slurm-out/points/{0003,0010}/results.json
    "$xysim" sweep "$work/s.yaml" --out "$work/slurm-out" --backend slurm >"$work/out" 2>"$work/err" ||
      fail "second slurm sweep: $(cat "$work/out" "$work/err")"
    grep -q "12 points, 2 run, 10 skipped, 0 failed" "$work/out" || fail "second slurm sweep: $(cat "$work/out")"
    [ "$(cd "$work/slurm-out/slurm" && ls [0-9]*.txt | sort -n | tr '\n' ' ')" = "3.txt 10.txt " ] ||
      fail "second array's tasks: $(ls "$work/slurm-out/slurm")"
    cmp "$work/local/sweep.csv" "$work/slurm-out/sweep.csv" || fail "second slurm sweep.csv differs from the local one"
    echo "ok: sweep_slurm" ;;
  olink_latency_more_endpoints)
    # GPUs that only serve are bound too: on one switch with 4 GPUs, GPU 0's loads from GPU 1 take
    # the same path, so the same time, as with 2.
    "$xysim" run olink-latency --set olink.loads=3 --out "$work/two" --quiet >/dev/null || fail "2 endpoints"
    "$xysim" run olink-latency --set olink.loads=3 --set topology.endpoints=4 --out "$work/four" --quiet >"$work/out" 2>&1 \
      || fail "4 endpoints: $(tail -1 "$work/out")"
    python3 - "$work" <<'PY' || fail "4 endpoints changed GPU 0 -> GPU 1"
import json, sys
two, four = (json.load(open(f"{sys.argv[1]}/{d}/results.json"))["summary"] for d in ("two", "four"))
for fabric in ("olink-rs544", "olink-rs272"):
    assert two[fabric]["load_latency_ns"] == four[fabric]["load_latency_ns"], fabric
PY
    echo "ok: 4 endpoints" ;;
  lingyun_waves)
    # The composed fabric's hierarchy in the waves (switch, port, mac/phy/fc), and the same results
    # with waves on as off.
    "$xysim" run lingyun-fec-llr --set traffic.us=2 --out "$work/A" --quiet >/dev/null || fail "run without waves"
    "$xysim" run lingyun-fec-llr --set traffic.us=2 --out "$work/B" --waves "$work/w.vcd" \
      --waves-scope top.rs272_llr.leaf0.port1 --quiet >/dev/null || fail "run with waves"
    cmp -s "$work/A/results.json" "$work/B/results.json" || fail "results.json differs with waves on"
    fc_probe=fc.cbfc_tx.vc0.credits
    for probe in mac.llr_tx.state phy.uncorrectable $fc_probe; do
      grep -q "top.rs272_llr.leaf0.port1.$probe" "$work/w.gtkw" || fail "no $probe in the waves"
    done
    grep -q 'scope module leaf0' "$work/w.vcd" || fail "no leaf0 scope"
    grep -q 'scope module spine0' "$work/w.vcd" && fail "the scope let spine0 in"
    grep -q 'scope module rtl' "$work/w.vcd" && fail "RTL signals without a twin"
    # With the twins dropped into every port, their own ports show beside the models' names, and
    # the models' names change as without them.
    "$xysim" run lingyun-fec-llr --set traffic.us=2 --set llr.impl=rtl --set cbfc.impl=rtl --out "$work/C" \
      --waves "$work/r.vcd" --waves-scope top.rs272_llr.leaf0.port1 --quiet >/dev/null || fail "run with the twins"
    for probe in mac.llr_tx.rtl.next_timer mac.llr_rx.rtl.verdict fc.cbfc_tx.rtl.cc_next; do
      grep -q "top.rs272_llr.leaf0.port1.$probe" "$work/r.gtkw" || fail "no $probe in the twins' waves"
    done
    python3 "$(dirname "$0")/vcd_signals.py" same "$work/w.vcd" "$work/r.vcd" --extra-under rtl || fail "the twins' waves"
    echo "ok: waves of top.rs272_llr.leaf0.port1, with and without the twins" ;;
  bad_topology)
    # A topology that cannot be built is refused before the run, naming the file and line.
    printf 'switches:\n  sw0: {ports: 4}\nendpoints: 2\nlinks:\n  - {a: e0, b: sw0}\n  - {a: e1, b: sw9}\n' >"$work/t.yaml"
    expect_bad_input "t.yaml:6: link b = 'sw9': no switch or endpoint of that name" run olink-latency --set topology="$work/t.yaml"
    printf 'switches:\n  sw0: {ports: 1}\nendpoints: 2\nlinks:\n  - {a: e0, b: sw0}\n  - {a: e1, b: sw0}\n' >"$work/t.yaml"
    expect_bad_input "t.yaml:6: switch sw0 has 1 ports" run olink-latency --set topology="$work/t.yaml"
    printf 'switches:\n  sw0: {ports: 4}\n  sw1: {ports: 4}\nendpoints: 2\nlinks:\n  - {a: e0, b: sw0}\n  - {a: e1, b: sw1}\n' >"$work/t.yaml"
    expect_bad_input "t.yaml:6: endpoint e0's port 0 (link 1, to sw0) cannot reach endpoint e1" run olink-latency --set topology="$work/t.yaml"
    # e0's first link goes to a switch with no route onward (it was accepted, then SIGFPE).
    printf 'switches:\n  sw0: {ports: 3}\n  dead: {ports: 1}\nendpoints: [e0, e1]\nlinks:\n  - {a: e0, b: dead}\n  - {a: e0, b: sw0}\n  - {a: e1, b: sw0}\n' >"$work/t.yaml"
    for s in olink-latency switch-uniform; do
      expect_bad_input "t.yaml:6: endpoint e0's port 0 (link 1, to dead) cannot reach endpoint e1: no path from dead to it" run $s --set topology="$work/t.yaml"
    done
    # Two links of each endpoint to one leaf (it was accepted, then "packet 1 received again", a watchdog).
    printf 'switches:\n  leaf0: {ports: 4}\nendpoints: [x, y]\nlinks:\n  - {a: x, b: leaf0}\n  - {a: y, b: leaf0}\n  - {a: x, b: leaf0}\n  - {a: y, b: leaf0}\n' >"$work/t.yaml"
    for s in olink-latency switch-uniform; do
      expect_bad_input "t.yaml:7: endpoint x: links 1 (to leaf0) and 3 (to leaf0) both reach one plane; multi-homing" run $s --set topology="$work/t.yaml"
    done
    printf 'switches:\n  sw0: {ports: 4}\nendpoints: 2\nlinks:\n  - {a: e0, b: sw0, cable_m: 20000}\n  - {a: e1, b: sw0}\n' >"$work/t.yaml"
    expect_bad_input "t.yaml:5: link e0 - sw0: LLR over 20000 m needs" run olink-latency --set topology="$work/t.yaml"
    printf 'switches:\n  sw0: {ports: 4}\nendpoints: 2\nlinks: [\n' >"$work/t.yaml"
    expect_bad_input "YAML syntax error" run olink-latency --set topology="$work/t.yaml"
    printf 'switches:\n  sw0: {ports: 4}\nendpoints: 2\nlinks:\n  - {a: e0, b: sw0, fec: rs999}\n  - {a: e1, b: sw0}\n' >"$work/t.yaml"
    expect_bad_input "t.yaml:5: fec = 'rs999': allowed are rs544, rs272, none" run olink-latency --set topology="$work/t.yaml"
    # Values of the wrong shape or size: the key, the value and what is allowed, at their line.
    printf 'switches:\n  sw0: {ports: 4}\nendpoints: {e0: 1, e1: 1}\nlinks:\n  - {a: e0, b: sw0}\n  - {a: e1, b: sw0}\n' >"$work/t.yaml"
    expect_bad_input "t.yaml:3: endpoints = a map: allowed a count 2..65536 or a list of names" run olink-latency --set topology="$work/t.yaml"
    printf 'switches:\n  sw0: {ports: 99999999999}\nendpoints: 2\nlinks:\n  - {a: e0, b: sw0}\n  - {a: e1, b: sw0}\n' >"$work/t.yaml"
    expect_bad_input "t.yaml:2: switch sw0 ports = 99999999999: allowed 1..1024" run switch-uniform --set topology="$work/t.yaml"
    expect_bad_input "no such file" run olink-latency --set topology="$work/none.yaml" ;;
  bench_nan)
    # CLI11's Range checks let NaN through; real options refuse it before running anything.
    expect_bad_input "--scale: must be a finite number, not nan" bench kernel --scale nan
    expect_bad_input "--seconds: must be a finite number, not nan" bench fec --seconds nan
    expect_bad_input "must be a finite number, not inf" bench fec --ber inf
    expect_bad_input "--us: must be a finite number, not nan" bench lingyun --us nan
    expect_bad_input "--loads: must be a finite number, not nan" bench switch --loads 0.5,nan
    expect_bad_input "--ports: Value 1 not in range 2 to 512" bench switch --ports 16,1 ;;
  nic_icrc_rtl_dropin_identical)
    # Every received frame's ICRC checked by the RTL twin instead of the model: the same results,
    # on the lossy design (drops, NAKs, resends) too.
    for impl in model rtl; do
      "$xysim" run nic-incast --set incast.senders=8 --set incast.message_kib=1024 --set switch.buffer_mib=6 \
        --set pfc.buffer_bytes=131072 --set pfc.headroom_bytes=81920 --set pfc.xoff_bytes=49152 \
        --set pfc.xon_bytes=32768 --set nic.icrc.impl=$impl --out "$work/$impl" --quiet >/dev/null || fail "run $impl"
    done
    cmp "$work/model/results.json" "$work/rtl/results.json" || fail "the twin's results differ"
    drops=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"]["dcqcn"]["drops"])' "$work/rtl/results.json")
    [ "$drops" -gt 0 ] || fail "no drops: the lossy design was not exercised"
    echo "ok: results.json byte-identical with the model's ($drops drops recovered)" ;;
  nic_slow_host_pauses)
    # A receiver behind PCIe Gen5 x8: 31.5 GB/s a way, of which 4096 of every 4480 bytes is
    # payload, 230.4 Gb/s, below the 800 Gb/s line. Lossless, its NIC's full receive buffer
    # pauses the switch and the incast runs at the host's rate, nothing dropped; without link
    # flow control the NIC drops, and the run still ends with every byte once (its check).
    "$xysim" run nic-incast --set incast.senders=4 --set incast.message_kib=512 --set incast.victim_kib=0 \
      --set nic.host=pcie --set nic.pcie.lanes=8 --out "$work/r" --quiet >/dev/null || fail "run: exit $?"
    python3 - "$work/r/results.json" <<'PY' || fail "figures"
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
host = 8 * 32 * 128 / 130 / 8 * 4096 / 4480 * 8 / 800  # the host's share of the line
total = 4 * 512 * 1024
for d in ("pfc", "cbfc"):
    r = s[d]
    assert r["drops"] == 0, (d, r["drops"])
    # A sender's WRITE completes when the receiver's NIC has its bytes: the last of them may
    # still be in the receive buffer, the rest went to the host at its rate.
    bound = host * total / (total - r["receiver_rx_buffer_peak_bytes"])
    assert 0.9 * host < r["goodput_ratio"] <= bound, (d, r["goodput_ratio"], host, bound)
assert s["pfc"]["host_pauses"] > 0, s["pfc"]
assert s["dcqcn"]["drops"] > 0 and s["dcqcn"]["retx_bytes"] > 0, s["dcqcn"]
print(f"ok: the host's share {host:.3f}; pfc {s['pfc']['goodput_ratio']:.3f} with {s['pfc']['host_pauses']} "
      f"pauses from the NIC, cbfc {s['cbfc']['goodput_ratio']:.3f}; without flow control {s['dcqcn']['drops']} dropped")
PY
    ;;
  otn_across_sites)
    # Two sites of one switch each, joined by 300 km of OTN line (8 wavelengths of OTU4), one
    # endpoint a site, each WRITEing 64 KiB to the other. A WRITE completes when its ACK is back:
    # at least two crossings of 300 km of fibre at 4.9 us/km; the OTN mapping and framing, the
    # local hops and the serialisation add microseconds, not more.
    printf 'switches:\n  a: {ports: 2}\n  b: {ports: 2}\nendpoints: 2\nlinks:\n  - {a: e0, b: a}\n  - {a: e1, b: b}\n  - {a: a, b: b, cable_m: 300000, otn: {}}\n' >"$work/t.yaml"
    "$xysim" run nic-alltoall --set topology="$work/t.yaml" --set alltoall.endpoints=2 --set alltoall.message_kib=64 \
      --set nic.timeout_exp=14 --set sim.watchdog_us=10000 --out "$work/r" --quiet >/dev/null || fail "run: exit $?"
    python3 - "$work/r/results.json" <<'PY' || fail "figures"
import json, sys
doc = json.load(open(sys.argv[1]))
s, link = doc["summary"], doc["fabrics"][0]["links"][2]
assert link["otn"]["wavelengths"] == 8 and not link["llr"] and link["fc"] == "none", link
rtt = 2 * 300 * 4.9  # us of fibre, there and back
for d in ("dcqcn_pfc", "dcqcn_cbfc", "encc_pfc", "encc"):
    assert s[d]["drops"] == 0 and s[d]["retx_bytes"] == 0, (d, s[d])
    assert rtt <= s[d]["fct_max_us"] <= rtt + 20, (d, s[d]["fct_max_us"])
print(f"ok: 64 KiB across 300 km of OTN in {s['encc']['fct_max_us']:.1f} us, {rtt:.0f} us of it the fibre")
PY
    # The NIC's default retransmit timeout (131 us) is far below the 2.94 ms round trip: a named outcome.
    expect_failed_run "ended in retry exceeded" run nic-alltoall --set topology="$work/t.yaml" --set alltoall.endpoints=2 \
      --set alltoall.message_kib=64 --set sim.watchdog_us=10000 ;;
  across_300km)
    # A small across-300km: 4 GPUs a site on one leaf and one spine, one 800G line across (4:1),
    # 512 KiB of gradient (128 KiB shards), 100 us of compute, 2 steps. Checked from first
    # principles: a step across has the exchange's 300 km of fibre one way more than in one site
    # (1470 us at 4.9 us/km) and little else; every byte arrived once (the run passes); with ECN
    # off the only CNPs are the switches' (IPCN), with IPCN off there are none of those.
    "$xysim" run across-300km --set across.gpus_per_site=4 --set across.leaves=1 --set across.oversubscription=4 \
      --set across.gradient_mib=0.5 --set across.compute_us=100 --out "$work/r" --quiet >/dev/null || fail "run: exit $?"
    python3 - "$work/r/results.json" <<'PY' || fail "figures"
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
fibre = 300 * 4.9
for cc in ("ecn", "ipcn"):
    one, two = s[f"single_{cc}"], s[f"across_{cc}"]
    gap = two["mean_iteration_us"] - one["mean_iteration_us"]
    assert fibre - 10 <= gap <= fibre + 100, (cc, gap)
    assert abs(s[f"slowdown_pct_{cc}"] - 100 * (two["mean_iteration_us"] / one["mean_iteration_us"] - 1)) < 1e-9, cc
    for d in (one, two):
        assert d["drops"] == 0 and 100 <= min(d["iteration_us"]), d
        assert 0 < d["spine_buffer_peak_bytes"] <= 8 * 2**30, d
    # The exchange across: the fibre, then 4 shards of 128 KiB one after another on the 800G line
    # (100 B a ns), and a few microseconds of OTN mapping and hops; in one site, a shard's time.
    shards = 4 * 128 * 1024 / 100e3
    assert fibre + shards <= two["phase_us"]["exchange"] <= fibre + shards + 20, (cc, two["phase_us"])
    assert 128 * 1024 / 100e3 <= one["phase_us"]["exchange"] <= 20, (cc, one["phase_us"])
for d in ("single_ipcn", "across_ipcn"):
    assert s[d]["ipcn_notices"] == s[d]["cnps_received"] > 0, s[d]
for d in ("single_ecn", "across_ecn"):
    assert s[d]["ipcn_notices"] == 0, s[d]
print(f"ok: a step {s['across_ecn']['mean_iteration_us']:.0f} us across against {s['single_ecn']['mean_iteration_us']:.0f} us in one site")
PY
    ;;
  nic_failover)
    # Two pairs over two planes, 2 QPs each of one 4 MiB WRITE, QP j on plane j; plane 0 fails at
    # 10 us where e0 (or e1) meets it, or all of it. Checked against the line: 800 Gb/s is 100 GB/s.
    "$xysim" run nic-failover --out "$work/r" --quiet >/dev/null || fail "run: exit $?"
    python3 - "$work/r/results.json" <<'PY' || fail "figures"
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
mib4, line = 4 * 2**20, 100e3  # bytes; bytes per us
for d in ("none", "cut_sender", "cut_receiver", "flap_sender", "plane_down"):
    assert s[d]["bytes_lost_at_application"] == 0, (d, s[d])
assert s["none"]["qps_moved"] == 0 and s["none"]["retransmitted_packets"] == 0, s["none"]
assert s["none"]["fct_max_us"] >= mib4 / line, s["none"]  # one QP's 4 MiB on its own line
for d in ("cut_sender", "cut_receiver", "flap_sender", "plane_down"):
    assert s[d]["qps_moved"] >= 1 and s[d]["retransmitted_packets"] > 0, (d, s[d])
    assert 0 < s[d]["restore_us"] < 1000, (d, s[d])
assert s["plane_down"]["qps_moved"] == 2, s["plane_down"]  # both senders' QPs on plane 0
# Cut at e0: of e0's 8 MiB, at most 9 us of each line (locked at 1 us) left before the cut; the
# rest goes over plane 1 alone: the last completion is no sooner than that allows.
assert s["cut_sender"]["fct_max_us"] >= 9 + (2 * mib4 - 2 * 9 * line) / line, s["cut_sender"]
# Cut at e1: e0's own link stays up, so only the path timeout (16 us from its last ACK, which
# came within a microsecond of the cut) can find it.
r = s["cut_receiver"]
assert r["found_by"].startswith("path timeout") and 15 <= r["detection_us"] <= 18, r
assert s["cut_sender"]["found_by"].startswith("link down"), s["cut_sender"]
print(f"ok: restore {s['cut_sender']['restore_us']:.1f} us (cut at the sender), {r['restore_us']:.1f} us (at the "
      f"receiver, found by a path timeout after {r['detection_us']:.1f} us); nothing lost")
PY
    ;;
  bench_nic)
    # A tiny nic-incast timed: its figures are there and positive.
    "$xysim" bench nic --senders 2 --message-kib 16 >"$work/out" 2>"$work/err" || fail "exit $?: $(cat "$work/err")"
    cat "$work/out"
    for figure in "cycles/s" "delivered"; do
      value=$(sed -n "s|^  $figure  *\([0-9.]*\).*|\1|p" "$work/out")
      python3 -c "import sys; sys.exit(0 if float('${value:-0}') > 0 else 1)" || fail "$figure: '$value'"
    done
    # With --htsim: the incast handed to htsim_roce as its connection matrix, and the flows'
    # finish lines read back. A stand-in that answers as htsim does checks what it is given.
    cat >"$work/htsim_roce" <<'SH'
#!/bin/sh
grep -qx "Connections 2" incast.cm && grep -qx "2->0 start 0 size 16384" incast.cm || exit 3
case " $* " in *" -tm incast.cm "*"-linkspeed 800000 "*"-mtu 4096 "*) ;; *) exit 4 ;; esac
echo "Flow Roce_1_0 0 size 16384 start 0 end 0 fct 10.5 sent 4 0 finished at 10.5"
echo "Flow Roce_2_0 1 size 16384 start 0 end 0 fct 12.25 sent 4 0 finished at 12.25"
SH
    chmod +x "$work/htsim_roce"
    "$xysim" bench nic --senders 2 --message-kib 16 --htsim "$work/htsim_roce" >"$work/out" 2>"$work/err" \
      || fail "with --htsim: exit $?: $(cat "$work/err")"
    grep -q "flows done *2 of 2, the last at 12.2 us simulated" "$work/out" || fail "htsim's flows: $(cat "$work/out")"
    grep -q "xysim / htsim" "$work/out" || fail "no ratio: $(cat "$work/out")"
    echo "ok" ;;
  bench_otn)
    # A short run of the OTU4 path: both rows every client byte intact, the errored one corrected.
    "$xysim" bench otn --frames 40 --ber 1e-4 >"$work/out" 2>"$work/err" || fail "exit $?: $(cat "$work/err")"
    cat "$work/out"
    grep -E '^  (clean|BER 0.0001) ' "$work/out" | sed -E 's/^  (clean|BER 0.0001) +//' >"$work/rows"
    [ "$(wc -l <"$work/rows")" -eq 2 ] || fail "not two rows"
    # frames/s, x realtime, source %, client Gb/s, corrected, uncorrectable, client bytes, intact
    awk 'NR == 1 && $5 != 0 { exit 1 } NR == 2 && $5 == 0 { exit 1 } !($1 > 0 && $4 > 0 && $6 == 0 && $7 > 0 && $8 == "yes") { exit 1 }' \
      "$work/rows" || fail "rows: $(cat "$work/rows")"
    echo "ok" ;;
  bench_lingyun)
    # A tiny run of every rig, two rounds: each rig's median cycles/s, the median of the rounds'
    # ratios (of two, the upper one), the leaf-spine's endpoint-cycles/s.
    "$xysim" bench lingyun --us 1 --warmup-us 1.5 --repeats 2 >"$work/out" 2>"$work/err" \
      || fail "exit $?: $(cat "$work/err")"
    cat "$work/out"
    figure() { sed -n "s|^$1: *\([0-9.]*\).*|\1|p" "$work/out"; }
    bare=$(figure "bare switch core cycles/s")
    composed=$(figure "composed Lingyun cycles/s")
    ratio=$(figure "composed / bare")
    [ -n "$bare" ] && [ -n "$composed" ] && [ -n "$ratio" ] || fail "a figure is missing"
    grep -qE "^leaf-spine cycles/s: +[1-9][0-9]* = [1-9][0-9]* endpoint-cycles/s \(64 endpoints\)" "$work/out" \
      || fail "no leaf-spine figures"
    # Past link-up (the PHYs lock in 1 us) every rig delivers frames: a rate of 0 is a rig not running.
    grep -E '^  (bare switch core|composed Lingyun|leaf-spine), ' "$work/out" | sed -E 's/^  [^,]+, [0-9]+ [a-z]+ +//' \
      >"$work/rows"
    [ "$(wc -l <"$work/rows")" -eq 6 ] || fail "not three rigs twice in the table"
    awk '!($2 > 0 && $3 > 0) { exit 1 }' "$work/rows" || fail "a rig without cycles/s or packets/s: $(cat "$work/rows")"
    # The summary from the rows: rounds are rows 1-3 and 4-6 (bare, composed, leaf-spine).
    awk -v b="$bare" -v c="$composed" -v r="$ratio" '
      { v[NR] = $2 }
      function upper(x, y) { return x > y ? x : y }
      function near(x, y) { return x - y < 1 + y * 1e-6 && y - x < 1 + y * 1e-6 }
      END { want = upper(v[2] / v[1], v[5] / v[4]); d = want - r
            exit !(near(b, upper(v[1], v[4])) && near(c, upper(v[2], v[5])) && d < 1e-4 && -d < 1e-4) }' "$work/rows" \
      || fail "summary $bare, $composed, $ratio does not follow from the rows: $(cat "$work/rows")"
    [ ! -s "$work/err" ] || fail "stderr: $(cat "$work/err")"
    echo "ok: bare $bare, composed $composed cycles/s, ratio $ratio" ;;
  same_seed_same_results)
    "$xysim" run link-basic --seed 7 --out "$work/A" --quiet >/dev/null || fail "run A"
    "$xysim" run link-basic --seed 7 --out "$work/B" --quiet >/dev/null || fail "run B"
    "$xysim" run link-basic --seed 8 --out "$work/C" --quiet >/dev/null || fail "run C"
    cmp "$work/A/results.json" "$work/B/results.json" || fail "same seed, different results"
    cmp -s "$work/A/results.json" "$work/C/results.json" && fail "seeds 7 and 8 gave identical results"
    [ -s "$work/A/run.json" ] || fail "no run.json"
    echo "ok: seed 7 twice identical, seed 8 differs" ;;
  yaml_scenario_file)
    printf 'scenario: link-basic\nseed: 3\nparams:\n  link:\n    latency_cycles: 21\n  traffic.packets: 300\n' >"$work/s.yaml"
    "$xysim" run "$work/s.yaml" --out "$work/Y" --quiet >/dev/null || fail "yaml run"
    grep -q '"link.latency_cycles": 21' "$work/Y/results.json" || fail "latency not applied"
    grep -q '"seed": 3' "$work/Y/results.json" || fail "seed not applied"
    echo "ok" ;;
  lists)
    "$xysim" scenarios | grep -q '^link-basic ' || fail "scenarios"
    "$xysim" params link-basic | grep -q '^link.latency_cycles ' || fail "params"
    "$xysim" --version | grep -q '^xysim ' || fail "version"
    echo "ok" ;;
  # Issue 12: failures reported as what they are, bad input refused before the run.
  olink_latency_cut_short)
    expect_failed_run "not finished at sim.max_time_us = 2" run olink-latency --set sim.max_time_us=2 --quiet
    grep -q "load, measured .* n/a" "$work/out" || fail "no n/a for the loads that never returned: $(cat "$work/out")" ;;
  cbfc_updates_all_lost)
    expect_failed_run "credit deadlock at top.a.fc VC" run link-cbfc --set link.update_loss=1 --set traffic.frames=2000 --quiet
    grep -q "the run FAILED" "$work/out" || fail "the report does not say its figures are partial" ;;
  cbfc_buffer_below_one_frame)
    expect_bad_input "cbfc.buffer_credits = 3: less than one largest frame" run link-cbfc --set cbfc.buffer_credits=3 --quiet ;;
  pfc_overflow_named)
    expect_failed_run "PFC overflow at top.b.fc priority" run link-cbfc --set fc.mode=pfc --set link.update_loss=0.5 --quiet
    grep -q "B beyond the buffer: the 98304 B headroom above XOFF" "$work/err" || fail "no headroom figures"
    expect_failed_run "PFC overflow at " run switch-incast --set switch.clock_mhz=200 \
      --set pfc.buffer_bytes=131072 --set pfc.headroom_bytes=49152 --quiet ;;
  seed_out_of_range)
    expect_bad_input "--seed: seed = '-1': must be an integer in [0, 18446744073709551615]" run --seed -1 --quiet
    expect_bad_input "seed = '18446744073709551616'" run --seed 18446744073709551616 --quiet
    printf 'scenario: link-basic\nseed: -5\n' >"$work/s.yaml"
    expect_bad_input "seed = '-5'" run "$work/s.yaml" --quiet ;;
  unwritable_outputs)
    expect_bad_input "--out '/proc/nope': cannot write there" run link-llr --out /proc/nope --quiet
    expect_bad_input "--waves '/proc/nope.fst': cannot open" run link-llr --waves /proc/nope.fst --quiet
    expect_bad_input "--pcap '/proc/nope.pcap': cannot open" run link-llr --pcap /proc/nope.pcap --quiet ;;
  refusals_leave_nothing)
    # A refused run (exit 2) removes the --out and --pcap it created: refused before the build (a
    # value out of range), after it (a capture scope that matches nothing), after the run (a
    # warm-up past its end). A directory that was there before stays.
    expect_bad_input "traffic.load" run link-llr --set traffic.load=7 --out "$work/new/out" --pcap "$work/p/x.pcap" --quiet
    expect_bad_input "--pcap-scope 'top.z' matches none" run link-llr --out "$work/new/out" --pcap "$work/p/x.pcap" --pcap-scope top.z --quiet
    expect_bad_input "before its warm-up ended" run link-llr --set traffic.frames=100 --set sim.warmup_us=1000 \
      --out "$work/new/out" --pcap "$work/p/x.pcap" --quiet
    expect_bad_input "--waves-scope 'top.nope' matches none" run link-basic --waves "$work/w/x.fst" --waves-scope top.nope \
      --out "$work/new/out" --quiet
    left=$(cd "$work" && ls -A | grep -vx -e out -e err)
    [ -z "$left" ] || fail "refused runs left behind: $left"
    mkdir "$work/there"
    expect_bad_input "traffic.load" run link-llr --set traffic.load=7 --out "$work/there" --quiet
    [ -d "$work/there" ] || fail "a directory that was there before was removed"
    echo "ok: refusals leave nothing behind" ;;
  scenario_file_is_a_directory)
    mkdir "$work/d.yaml"
    expect_bad_input "d.yaml: cannot read scenario file (not a regular file)" run "$work/d.yaml" --quiet
    expect_bad_input "no.yaml: cannot read scenario file (no such file)" run "$work/no.yaml" --quiet ;;
  warmup_past_the_end)
    expect_bad_input "sim.warmup_us = 200: must be below sim.max_time_us = 100" \
      run link-basic --set sim.warmup_us=200 --set sim.max_time_us=100 --quiet
    expect_bad_input "before its warm-up ended" run link-basic --set traffic.packets=100 --set sim.warmup_us=1000 --quiet
    expect_bad_input "phy-fec-curve counts a fixed number of codewords" run phy-fec-curve --set sim.warmup_us=100 --quiet ;;
  capture_and_waves_that_catch_nothing)
    expect_bad_input "--pcap: scenario link-basic has no link whose frames can be captured" \
      run link-basic --pcap "$work/x.pcap" --quiet
    expect_bad_input "--pcap-scope 'top.z' matches none of this scenario's links: top.a, top.b" \
      run link-llr --pcap "$work/x.pcap" --pcap-scope top.z --quiet
    expect_bad_input "--pcap-scope without --pcap" run link-llr --pcap-scope top.a --quiet
    expect_bad_input "--waves-scope 'top.nope' matches none of this scenario's signals; its scopes: top.link.channel" \
      run link-basic --waves "$work/w.fst" --waves-scope top.nope --quiet
    expect_bad_input "--waves-window without --waves" run link-basic --waves-window 1us:2us --quiet ;;
  yaml_key_given_twice)
    printf 'scenario: link-basic\nparams:\n  link:\n    latency_cycles: 4\n  link.latency_cycles: 5\n' >"$work/d.yaml"
    expect_bad_input "d.yaml:5: parameter 'link.latency_cycles' given twice (also at $work/d.yaml:4)" run "$work/d.yaml" --quiet ;;
  ecmp_buffer_too_small)
    expect_failed_run "packets dropped for want of switch buffer (switch.buffer_mib = 3)" \
      run switch-ecmp --set switch.buffer_mib=3 --quiet ;;
  switch_buffer_below_one_frame)
    # Issue 22, defect 8: a 1500 B frame takes 12 credits of 128 B, so 11 never send it; the PFC
    # buffer of 1024 B holds no 9216 B frame (port.max_frame_bytes): refused as link-cbfc does.
    expect_bad_input "cbfc.buffer_credits = 11: less than one largest frame (traffic.max_bytes = 1500 takes 12 credits" \
      run switch-uniform --set cbfc.buffer_credits=11 --quiet
    expect_bad_input "pfc.buffer_bytes = 1024: less than one largest frame (port.max_frame_bytes = 9216 B)" \
      run lingyun-incast --set pfc.buffer_bytes=1024 --set pfc.headroom_bytes=512 --set pfc.xoff_bytes=256 \
      --set pfc.xon_bytes=128 --quiet
    # A PCIe switch of 9 ports of 256 B: 9 cells of 256 B, where a bulk write's 4154 B segment takes 17.
    expect_bad_input "olink.pcie-switch.port_buffer_bytes = 256: 9 ports of it cannot admit a 4154 B frame" \
      run olink-alltoall --set olink.pcie-switch.port_buffer_bytes=256 --quiet ;;
  lossless_buffer_too_small)
    # Issue 22, defect 4: 0.01 MiB is 40 cells of 256 B (10240 B). The bare switch's 64 ports of
    # 1024 credits let in 1024 frames of 64 B each, a cell each: 65536 cells (16777216 B), and the
    # last cell of a port needs 1024 free (dt_alpha 1): 66559 cells, 17039104 B, 16.2498 MiB rounded up.
    expect_bad_input "switch.buffer_mib = 0.01 (10240 B) cannot back the CBFC credits of top.load1's 64 lossless ports: they let in up to 16777216 B" \
      run switch-uniform --set switch.buffer_mib=0.01 --quiet
    grep -qF "allowed: at least 16.2498 MiB, or switch.when_full=wait" "$work/err" || fail "no least buffer: $(cat "$work/err")"
    expect_bad_input "switch.buffer_mib = 0.01 (10240 B) cannot back the CBFC credits of top.load1.leaf0's" \
      run switch-uniform --set topology=leaf-spine --set switch.buffer_mib=0.01 --quiet
    expect_bad_input "switch.buffer_mib = 0.01 (10240 B) cannot back the CBFC credits of top.cbfc_shared_vc.leaf0's 3" \
      run lingyun-incast --set switch.buffer_mib=0.01 --quiet
    # Waiting instead of dropping keeps it lossless: accepted (and run).
    "$xysim" run switch-uniform --set switch.buffer_mib=0.01 --set switch.when_full=wait --set uniform.load=0.5 \
      --set uniform.measure_cycles=2000 --quiet >/dev/null 2>"$work/err" || fail "when_full=wait: $(cat "$work/err")" ;;
  incast_held_within_traffic_time)
    # Issue 22, defect 3: links down from the end of sending (30 us) to 60 us, with buffers that
    # hold through it, gave up to 207 %: both VCs added and the holds after sending counted. Now
    # the most held VC, within the traffic time. (A switch buffer that backs the 8 MiB PFC buffers.)
    "$xysim" run lingyun-incast --set port.link_down_at_us=30 --set port.link_down_us=30 --set incast.measure_us=20 \
      --set pfc.buffer_bytes=8388608 --set pfc.headroom_bytes=8000000 --set switch.buffer_mib=1024 --out "$work/R" \
      --quiet >/dev/null 2>"$work/err" \
      || fail "run: $(cat "$work/err")"
    python3 - "$work/R/results.json" <<'PY' || fail "held % outside [0, 100]"
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
held = [(row, port, pct) for row, v in s.items() if isinstance(v, dict) and "held_percent" in v
        for port, pct in v["held_percent"].items()]
assert held, s
bad = [h for h in held if not 0 <= h[2] <= 100]
assert not bad, bad
PY
    echo "ok" ;;
  llr_in_flight_not_lost)
    # Issue 22, defect 5: over 10000 km (50 ms each way) no frame has arrived when the run stops
    # at 1 ms; none was lost: every one of the 2 x 1000 is still on the line.
    expect_failed_run "not finished at sim.max_time_us = 1000" run link-llr --set link.cable_m=10000000 \
      --set link.recovery=none --set traffic.frames=1000 --set sim.max_time_us=1000 --set sim.watchdog_us=60000 \
      --out "$work/R" --quiet
    python3 - "$work/R/results.json" <<'PY' || fail "frames in flight counted as lost"
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
assert s["frames_lost"] == 0 and s["frames_in_flight"] == 2000, (s["frames_lost"], s.get("frames_in_flight"))
PY
    grep -q "0 lost, 2000 still in flight" "$work/out" || fail "report: $(cat "$work/out")" ;;
  llr_link_down_named)
    # A line dark for good: both ends flush, then wait for an answer to INIT that never comes.
    expect_failed_run "link down at top.a (its LLR TX in INIT" \
      run link-llr --set link.flap_at_us=5 --set link.flap_us=1000000 --quiet ;;
  fec_llr_link_cannot_initialise)
    # Issue 22, defect 7: at BER 0.49 (nearly every codeword fails) LLR's INIT is never answered.
    # The PHYs lock at 1 us (port.cdr_lock_us); llr.replay_limit + 1 = 4 replay timers of 5 us
    # later, at 21 us, the link is named, at the end of the 10 us slice it falls in: 30 us, not
    # the 1 ms watchdog.
    expect_failed_run "rs272_llr: link top.rs272_llr.e0.port0 cannot initialise: its LLR TX is still in INIT" \
      run lingyun-fec-llr --set port.errors.ber=0.49 --set traffic.us=2 --set fec_llr.design=rs272_llr \
      --out "$work/r" --quiet
    grep -q '"sim_time_ns": 30000.0,' "$work/r/results.json" || fail "stopped at $(grep sim_time_ns "$work/r/results.json")" ;;
  fec_llr_link_dead_without_llr)
    # Issue 22, defect 7, a link without LLR (no INIT to wait for): at BER 0.49 no frame crosses
    # rs544's line. Once 8192 codewords (802.3's RS-FEC failure window, 5,440 bits each on
    # 8 x 106.25 Gb/s lanes: 52.4 us) failed after the 1 us lock with nothing delivered, the link
    # is named at the end of the 10 us slice that holds 53.4 us: 60 us, not the 1 ms watchdog.
    expect_failed_run "rs544: link top.rs544.e0.port0 is dead: no frame came through to top.rs544.leaf0.port0" \
      run lingyun-fec-llr --set port.errors.ber=0.49 --set traffic.us=2 --set fec_llr.design=rs544 \
      --out "$work/r" --quiet
    grep -q '"sim_time_ns": 60000.0,' "$work/r/results.json" || fail "stopped at $(grep sim_time_ns "$work/r/results.json")"
    # Stopped early: the frames not delivered are on their way (the end points resend until they
    # arrive), not lost (issue 23, defect 8: the figure was 0 by construction with end points).
    python3 - "$work/r/results.json" <<'PY' || fail "frames in flight counted wrong"
import json, sys
d = json.load(open(sys.argv[1]))["summary"]["rs544"]
assert d["frames_sent"] > d["frames_delivered"], d
assert d["frames_in_flight"] == d["frames_sent"] - d["frames_delivered"] and d["frames_lost_after_recovery"] == 0, d
PY
    ;;
  switch_never_admits)
    # Issue 22: switch.dt_alpha x switch.buffer_mib below one packet's cells admits nothing, even
    # into an empty buffer (0.01 x 40 cells = 0.4): lossless ports waited for the 1 ms watchdog
    # with no cause. The switch names the port and the packet at once; the report of what ran
    # until then shows n/a, not NaN or a 1e300 "slowest GPU".
    # (The PCIe switch, whose buffer is its own, takes enough of it to admit its largest frame.)
    for s in "olink-alltoall --set alltoall.pattern=random --set olink.pcie-switch.port_buffer_bytes=65536" \
             "olink-fast --set fast.pattern=random"; do
      # shellcheck disable=SC2086  # the arguments are words
      expect_failed_run "can never be admitted: a port may hold switch.dt_alpha = 0.01 x the free cells, 0.40 of switch.buffer_mib = 0.01 (40 cells) even when all are free" \
        run $s --set switch.dt_alpha=0.01 --set switch.buffer_mib=0.01 --set switch.when_full=wait
      ! grep -Eiq "nan|inf|e\+" "$work/out" || fail "$s: impossible figures in the report: $(cat "$work/out")"
    done ;;
  link_e2e_connected)
    # Issue 23, defect 6: at zero loss the end points' Go-Back-N keeps the line as full as LLR
    # does (both only add ACKs). Its ends start connected; they used to exchange an INIT over the
    # 8 us loop, which held the first frame for two loops and lost 2 % of goodput (0.9784 against
    # 0.9970 over 100,000 frames), and, skipped without dropping the INIT ready at start, would
    # reset the partner's receiver mid-stream (replays and flushes with no frame lost).
    for r in llr e2e; do
      "$xysim" run link-llr --set link.recovery=$r --set traffic.frames=100000 --out "$work/$r" --quiet >/dev/null \
        || fail "recovery $r: exit $?"
    done
    python3 - "$work/llr/results.json" "$work/e2e/results.json" <<'PY' || fail "e2e below LLR at zero loss"
import json, sys
llr, e2e = (json.load(open(f))["summary"] for f in sys.argv[1:])
assert e2e["replays"] == 0 and e2e["flushed_frames"] == 0 and e2e["frames_lost"] == 0, e2e
assert e2e["goodput_ratio"] >= llr["goodput_ratio"] - 1e-3, (e2e["goodput_ratio"], llr["goodput_ratio"])
PY
    echo "ok: the end points' Go-Back-N as fast as LLR at zero loss" ;;
  watchdog_below_one_way)
    # Issue 22: a watchdog no longer than a frame's one-way trip fails a healthy run before its
    # first frame could arrive (1000 km of fibre at 5 ns/m: 5 ms; 300 km: 1.5 ms), so it is
    # refused before the run, naming the link; above it the run starts.
    expect_bad_input "sim.watchdog_us = 1000: a frame takes 5.000 ms one way on the link (link.phy_latency_ns = 150 + link.cable_m = 1000000 at 5 ns/m)" \
      run link-llr --set link.cable_m=1000000 --set link.recovery=none --quiet
    expect_bad_input "sim.watchdog_us = 1000: a frame takes 1.500 ms one way on link top.olink-rs544.e0.port0 (single: cable_m = 300000" \
      run olink-latency --set topology.cable_m=300000 --set port.llr=false --set port.fc=none --quiet
    "$xysim" run link-llr --set link.cable_m=1000000 --set link.recovery=none --set sim.watchdog_us=5001 \
      --set traffic.frames=100 --quiet >/dev/null || fail "a watchdog above the one-way trip: exit $?"
    echo "ok: watchdogs shorter than a frame's one-way trip refused" ;;
  fec_llr_credits_held_named)
    # At BER 1e-4 without FEC about 40 % of the 5140-bit units fail, so a frame of 1000 B or more
    # arrives intact less than a third of the time: LLR gives most bursts up after
    # llr.replay_limit = 3 replays, their credits leave with them, and only a CC_Update (every
    # 256 us, itself lost as often) returns them. A host's port runs dry: the design stalls, and
    # the run reports that as its outcome, naming the port, the hop that lost its credits and the
    # CC_Updates, not a bare watchdog.
    "$xysim" run lingyun-fec-llr --set fec_llr.design=none_llr --set port.errors.ber=1e-4 --set traffic.us=20 \
      --out "$work/r" --quiet 2>"$work/err" || fail "the stalled design failed the run: $(cat "$work/err")"
    python3 - "$work/r/results.json" <<'PY' || fail "credit hold not explained: $(cat "$work/r/results.json" | head -c 2000)"
import json, re, sys
results = json.load(open(sys.argv[1]))
stats, d = results["stats"], results["summary"]["none_llr"]
assert d["outcome"] == "stalled", d["outcome"]
head = re.search(r"^credits held at top.none_llr.(e\d).port0.fc VC 0: a \d+ B frame needs (\d+) credits, (\d+) of (\d+) "
                 r"available \((\d+) in use\); of those in use, ", d["stall"])
assert head, d["stall"]
host = head.group(1)
need, avail, buf, used = map(int, head.group(2, 3, 4, 5))
assert avail < need and avail + used == buf, head.groups()
rest = d["stall"][head.end():]
# Where the credits are depends on the moment: frames the hop lost (LLR gave them up), or
# credits freed whose CF_Updates were lost.
lost = re.match(r"(\d+) for frames top.none_llr.(leaf\d).port0 never received: its LLR delivered (\d+) frames there and "
                r"flushed (\d+) .*cbfc.resync_us = 256: (\d+) sent, (\d+) arrived\)", rest)
unreported = re.match(r"(\d+) freed by top.none_llr.leaf\d.port0 but not yet reported back", rest)
assert lost or unreported, rest
if lost:
    unreceived, leaf, delivered, flushed, sent, arrived = lost.groups()
    unreceived, delivered, flushed, sent, arrived = map(int, (unreceived, delivered, flushed, sent, arrived))
    assert 0 < unreceived <= used and flushed > delivered > 0, lost.groups()
    assert delivered == stats[f"top.none_llr.{leaf}.port0.mac.rx.delivered"]["value"], delivered
    assert sent == stats[f"top.none_llr.{host}.port0.fc.cbfc.cc_updates"]["value"] and arrived <= sent, (sent, arrived)
else:
    assert 0 < int(unreported.group(1)) <= used, rest
assert d["frames_in_flight"] == d["frames_sent"] - d["frames_delivered"] and d["frames_lost_after_recovery"] == 0, d
PY
    echo "ok: the stalled design is reported with its credits" ;;
  olink_flap_named)
    # Issue 22, defect 10: a 20 us flap outlasts LLR's 3 replays 5 us apart, so LLR flushes frames
    # OLink never resends; the watchdog's failure names the flap (2 us, dark until 22 us, the CDR's
    # 1 us relock) and the ports that flushed.
    for s in olink-latency olink-message; do
      expect_failed_run "olink-rs544: " run $s --set port.link_down_at_us=2 --set port.link_down_us=20 --quiet
      grep -q "frames given up on the links after the link flap at 2.000 us (dark until 22.000 us, locked again at 23.000 us) (LLR flushes a frame after llr.replay_limit = 3 replays without progress): top.olink-rs544.[a-z0-9]*.port[0-9]: [0-9]* flushed" "$work/err" || fail "$s: $(cat "$work/err")"
    done ;;
  run_beyond_max_time)
    expect_bad_input "traffic.frames = 1099511627776 at 800 Gb/s needs at least" \
      run link-llr --set traffic.frames=1099511627776 --quiet ;;
  export_astra_sim)
    # A small olink-message size sweep exported for ASTRA-sim: the files obey ASTRA-sim's own parsing
    # rules (astra_sim_check.py, from its source), and its formula with the exported latency and
    # bandwidth gives every measured message's time within 2 %.
    message_sweep
    (cd "$work" && "$xysim" export astra-sim S >"$work/out") || fail "export astra-sim"  # no --out: here
    [ "$(cat "$work/out")" = "$(printf './network.yml\n./system.json')" ] || fail "printed: $(cat "$work/out")"
    python3 "$(dirname "$0")/astra_sim_check.py" "$work/network.yml" --system "$work/system.json" \
      --sweep "$work/S/sweep.json" || fail "the export does not pass ASTRA-sim's rules or the measurements"
    # The checker refuses what ASTRA-sim refuses: two latencies for one dimension, a topology it lacks.
    sed 's/^latency: \[ \(.*\) \]/latency: [ \1, 1 ]/' "$work/network.yml" >"$work/bad.yml"
    python3 "$(dirname "$0")/astra_sim_check.py" "$work/bad.yml" >"$work/check" && fail "checker took 2 latencies"
    grep -q "length of latency (2)" "$work/check" || fail "checker: $(cat "$work/check")"
    sed 's/^topology: \[ Switch \]/topology: [ Torus ]/' "$work/network.yml" >"$work/bad.yml"
    python3 "$(dirname "$0")/astra_sim_check.py" "$work/bad.yml" >"$work/check" && fail "checker took a Torus"
    grep -q "'Torus': not supported" "$work/check" || fail "checker: $(cat "$work/check")"
    echo "ok: export astra-sim" ;;
  olink_message_line_rate)
    # olink-message against arithmetic: from 64 KiB to 1 MiB the network time grows by 240 more 4 KiB
    # Stores, each 14 + 40 + 4096 + 4 (FCS) + 20 (preamble, gap) = 4174 bytes at the port's line rate.
    message_sweep
    python3 - "$work/S/sweep.json" <<'PY' || fail "olink-message does not grow at line rate"
import json, sys
s = {p["summary"]["message_bytes"]: p["summary"] for p in json.load(open(sys.argv[1]))}
grown = s[1048576]["transfer_ns"] - s[65536]["transfer_ns"]
line = (1048576 - 65536) // 4096 * 4174 / s[65536]["line_GBps"]
print(f"64 KiB -> 1 MiB: {grown:.1f} ns more, 240 frames at line rate {line:.1f} ns ({100 * (grown / line - 1):+.2f} %)")
assert abs(grown / line - 1) < 0.01
assert s[1048576]["frames_per_message"] == 256 and s[4096]["frames_per_message"] == 1
PY
    echo "ok: olink-message at line rate" ;;
  export_nccl_tests)
    message_sweep
    "$xysim" export nccl-tests "$work/S/sweep.json" --out "$work/E" >"$work/out" || fail "export nccl-tests"
    [ "$(cat "$work/out")" = "$work/E/nccl-tests.csv" ] || fail "printed: $(cat "$work/out")"
    python3 "$(dirname "$0")/nccl_tests_check.py" "$work/E/nccl-tests.csv" "$work/S/sweep.json" || fail "nccl-tests.csv"
    echo "ok: export nccl-tests" ;;
  export_bad_input)
    "$xysim" export --list | grep -q "^astra-sim " || fail "--list does not name astra-sim"
    expect_bad_input "unknown format 'ns2': one of astra-sim" export ns2 "$work"
    expect_bad_input "no format given" export
    expect_bad_input "export astra-sim: no RESULTS given" export astra-sim
    expect_bad_input "$work/none.json: cannot read it" export astra-sim "$work/none.json"
    expect_bad_input "$work/results.json: cannot read it; give a results.json or a run's --out directory (or a sweep's directory or its sweep.json)" \
      export astra-sim "$work"
    echo '{"scenario": 1' >"$work/cut.json"
    expect_bad_input "$work/cut.json: not valid JSON (byte 16)" export astra-sim "$work/cut.json"
    echo '{"seed": 1}' >"$work/other.json"
    expect_bad_input "$work/other.json: not a results.json of xysim run (no 'scenario' and 'summary') (or a sweep's" \
      export nccl-tests "$work/other.json"
    echo '[{"seed": 1}]' >"$work/list.json"
    expect_bad_input "$work/list.json: not a sweep.json of xysim sweep: entry 0: 'point' missing" \
      export nccl-tests "$work/list.json"
    "$xysim" run link-basic --set traffic.packets=100 --out "$work/L" --quiet >/dev/null || fail "link-basic"
    expect_bad_input "$work/L/results.json: summary.message_bytes missing or not a number: astra-sim needs runs that report a message's size and latency (summary.message_bytes, transfer_ns, delivered_ns, gpus), such as those of scripts/sweeps/olink-message-size.yaml" \
      export astra-sim "$work/L"
    "$xysim" run olink-message --set message.count=1 --out "$work/M" --quiet >/dev/null || fail "olink-message"
    expect_bad_input "1 message size, astra-sim needs at least 2" export astra-sim "$work/M"
    "$xysim" run olink-message --set message.count=1 --set message.fabric=olink-rs272 --set message.bytes=4096 \
      --out "$work/N" --quiet >/dev/null || fail "olink-message rs272"
    expect_bad_input "one system at a time" export astra-sim "$work/M" "$work/N"
    sed 's/"schema_version": 1/"schema_version": 99/' "$work/M/results.json" >"$work/future.json"
    expect_bad_input "$work/future.json: schema_version 99: this xysim reads 1" export astra-sim "$work/future.json"
    sed 's/"passed": true/"passed": false/' "$work/M/results.json" >"$work/failed.json"
    expect_bad_input "$work/failed.json: the run did not pass" export nccl-tests "$work/failed.json" ;;
  bad_results_files)
    # A results.json cut short or holding NaN is told as not JSON, with the byte where it stops
    # being JSON, by compare, export and run; a sweep directory whose point file was corrupted or
    # changed since the merge is named.
    "$xysim" run link-basic --set traffic.packets=100 --out "$work/A" --quiet >/dev/null || fail "run"
    head -c 100 "$work/A/results.json" >"$work/cut.json"
    expect_bad_input "$work/cut.json: not valid JSON (byte 101): parse error at line" compare "$work/cut.json" "$work/A"
    expect_bad_input "$work/cut.json: not valid JSON (byte 101)" export nccl-tests "$work/cut.json"
    expect_bad_input "$work/cut.json: not valid JSON (byte 101)" run "$work/cut.json" --quiet
    # NaN in place of the first figure: nlohmann stops at its N (bytes counted from 1).
    byte=$(python3 - "$work/A/results.json" "$work/nan.json" <<'PY'
import re, sys
text, key = open(sys.argv[1]).read(), '"goodput_Gbps": '
at = text.index(key) + len(key)
open(sys.argv[2], "w").write(text[:at] + re.sub(r"^[-0-9.e+]+", "NaN", text[at:]))
print(at + 1)
PY
)
    expect_bad_input "$work/nan.json: not valid JSON (byte $byte)" compare "$work/A" "$work/nan.json"
    sed 's/"seed": 1,/"seed": "one",/' "$work/A/results.json" >"$work/seed.json"
    expect_bad_input "$work/seed.json: 'seed' is a string, must be a seed" compare "$work/A" "$work/seed.json"
    message_sweep
    cp -r "$work/S" "$work/T"
    head -c 50 "$work/S/points/0001/results.json" >"$work/cut" && mv "$work/cut" "$work/S/points/0001/results.json"
    expect_bad_input "$work/S/points/0001/results.json: not valid JSON (byte 51)" export nccl-tests "$work/S"
    python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); r["summary"]["transfer_ns"] += 1
json.dump(r, open(sys.argv[1], "w"))' "$work/T/points/0002/results.json"
    expect_bad_input "$work/T/points/0002/results.json: its summary is not that of point 2 in $work/T/sweep.json" \
      export nccl-tests "$work/T"
    echo "ok: bad results files named" ;;
  sweep_file_checked)
    # A sweep file's unknown key, a value that is a list, an empty grid: refused before any point
    # runs (exit 2), naming the line; no point directory is made.
    printf 'scenario: link-basic\nset: {traffic.packets: 100}\ngrid:\n  traffic.lod: [0.5, 0.6]\n' >"$work/u.yaml"
    expect_bad_input "unknown parameter 'traffic.lod' ($work/u.yaml:4): no block of this scenario declares it; did you mean 'traffic.load'?" \
      sweep "$work/u.yaml" --out "$work/U"
    printf 'scenario: link-basic\nset: {traffic.pakets: 100}\n' >"$work/v.yaml"
    expect_bad_input "unknown parameter 'traffic.pakets' ($work/v.yaml:2)" sweep "$work/v.yaml" --out "$work/U"
    printf 'scenario: link-basic\ngrid:\n  traffic.load:\n    - [0.1, 0.2]\n' >"$work/n.yaml"
    expect_bad_input "$work/n.yaml:4: grid.traffic.load holds a list: each value must be a single value" sweep "$work/n.yaml" --out "$work/U"
    printf 'scenario: link-basic\ngrid: {}\n' >"$work/e.yaml"
    expect_bad_input "$work/e.yaml:2: grid must be a map of key: [values] with at least one key" sweep "$work/e.yaml" --out "$work/U"
    [ ! -e "$work/U" ] || fail "a refused sweep made $work/U"
    echo "ok: sweep files checked" ;;
  progress_eta)
    # Progress lines count the scenario's traffic, not sim.max_time_us: the share done never falls
    # and stays below 100 % (reaching it only on the last line, printed once the traffic is in),
    # and once the traffic has all been sent the line says what the run waits for, naming the
    # total the test asked for: link-basic's packets, switch-ecmp's 3 variants x 32 flows x 2000
    # packets, switch-allreduce's bytes received (each of 8 endpoints its 4 MiB vector in-network,
    # 2 x 7/8 of it in the ring and again in halving-doubling: 36 x 4 MiB). olink-alltoall's and olink-fast's GPUs post their
    # writes as soon as they have room in flight: no such line, the share reaches 100 %.
    check_progress() {  # TOTAL (or none) SCENARIO [--set ...]
      local total=$1; shift
      "$xysim" run "$@" --progress-every 0 >/dev/null 2>"$work/err" || fail "$1: $(tail -1 "$work/err")"
      python3 - "$work/err" "$total" <<'PY' || fail "$1: progress lines: $(head -5 "$work/err")"
import re, sys
total = None if sys.argv[2] == "none" else int(sys.argv[2])
lines = [l.rstrip("\n") for l in open(sys.argv[1]) if l.startswith("[xysim] ")]
assert len(lines) >= 3, lines
shares, ended = [], False
for i, line in enumerate(lines):
    assert "max_time" not in line and "does not tell" not in line, line
    waiting = re.search(r", traffic ended, waiting for the last (\d+) of (\d+) \w+ [a-z ]+$", line)
    eta = re.search(r", ([0-9.]+) % of the traffic done, ETA (\d+) s$", line)
    none_yet = line.endswith(", 0 % of the traffic done, no ETA yet")
    assert waiting or eta or none_yet, line
    if waiting:
        ended = True
        assert total is not None and int(waiting.group(2)) == total and int(waiting.group(1)) <= total, line
    else:
        assert not ended, "an ETA after the traffic ended: " + line
        shares.append(0.0 if none_yet else float(eta.group(1)))
        assert shares[-1] < 100 or i == len(lines) - 1, line
assert shares and shares == sorted(shares) and shares[0] < 100, shares
if total is None:
    assert not ended and shares[-1] == 100, shares
else:
    assert ended, "no line said the traffic had ended"
PY
      echo "ok: progress_eta $1"
    }
    check_progress 40000 link-basic --set traffic.packets=40000
    check_progress 192000 switch-ecmp
    check_progress $((36 * 4194304)) switch-allreduce --set allreduce.bytes=4194304
    check_progress none olink-alltoall
    check_progress none olink-fast
    echo "ok: progress_eta" ;;
  params_json)
    # --json lists what the table does, typed; a filter is a glob (or a part of the key), matched
    # here with Python's fnmatch; topology lists its presets and a file path.
    "$xysim" params lingyun-fec-llr >"$work/table" || fail "params table"
    "$xysim" params lingyun-fec-llr --json >"$work/all.json" || fail "params --json"
    "$xysim" params lingyun-fec-llr 'llr.*' --json >"$work/llr.json" || fail "params 'llr.*' --json"
    "$xysim" params lingyun-fec-llr errors >"$work/errors" || fail "params errors"
    "$xysim" params olink-message topology --json >"$work/topology.json" || fail "params olink-message topology"
    python3 - "$work" <<'PY' || fail "params --json"
import fnmatch, json, sys
d = sys.argv[1]
table = [l.split()[0] for l in open(d + "/table").read().splitlines()[1:]]
every = json.load(open(d + "/all.json"))
assert [p["key"] for p in every] == table, "the JSON lists other keys than the table"
for p in every:
    assert set(p) >= {"key", "type", "default", "unit", "min", "max", "allowed", "meaning"}, p
    if p["type"] in ("int", "real"):
        assert isinstance(p["min"], (int, float)) and isinstance(p["max"], (int, float)), p
        assert p["min"] <= p["default"] <= p["max"], p
    if p["type"] == "bool":
        assert p["allowed"] == [True, False] and isinstance(p["default"], bool), p
    if p["type"] == "choice":
        assert p["default"] in p["allowed"], p
llr = [p["key"] for p in json.load(open(d + "/llr.json"))]
assert llr and llr == [k for k in table if fnmatch.fnmatchcase(k, "llr.*")], llr
errors = [l.split()[0] for l in open(d + "/errors").read().splitlines()[1:]]
assert errors and errors == [k for k in table if "errors" in k], errors
topology = next(p for p in json.load(open(d + "/topology.json")) if p["key"] == "topology")
assert {"single", "leaf-spine", "dual-plane", "a topology file path"} <= set(topology["allowed"]), topology
PY
    expect_bad_input "matches no parameter of link-basic" params link-basic 'no.such.*'
    echo "ok: params_json" ;;
  params_units)
    # Every numeric parameter of every scenario says its unit (a count says what it counts).
    "$xysim" scenarios | cut -d' ' -f1 >"$work/names"
    while read -r scenario; do
      "$xysim" params "$scenario" --json >"$work/p.json" || fail "params $scenario --json"
      python3 - "$work/p.json" "$scenario" <<'PY' || fail "params $scenario: a number without a unit"
import json, sys
bare = [p["key"] for p in json.load(open(sys.argv[1])) if p["type"] in ("int", "real") and not p["unit"].strip()]
assert not bare, f"{sys.argv[2]}: {bare}"
PY
    done <"$work/names"
    echo "ok: params_units" ;;
  sweep_typed_params)
    # sweep.json holds a parameter as the scenario read it: numbers as numbers, a flag as a
    # boolean, a choice as text; sweep.csv writes each as JSON does.
    printf 'scenario: link-basic\nset: {traffic.packets: 200}\ngrid:\n  traffic.load: [0.25, 0.5]\n  link.latency_cycles: [2]\n' >"$work/t.yaml"
    printf 'scenario: phy-loopback\nset: {traffic.frames: 200}\ngrid:\n  phy.fec: [rs544]\n  phy.lanes: [8]\n' >"$work/u.yaml"
    "$xysim" sweep "$work/t.yaml" --out "$work/T" -j 2 >/dev/null 2>"$work/err" || fail "sweep: $(cat "$work/err")"
    "$xysim" sweep "$work/u.yaml" --out "$work/U" -j 2 >/dev/null 2>"$work/err" || fail "sweep: $(cat "$work/err")"
    python3 - "$work" <<'PY' || fail "sweep parameters are not typed"
import csv, json, sys
d = sys.argv[1]
t = json.load(open(d + "/T/sweep.json"))
assert [p["params"] for p in t] == [{"traffic.packets": 200, "traffic.load": 0.25, "link.latency_cycles": 2},
                                    {"traffic.packets": 200, "traffic.load": 0.5, "link.latency_cycles": 2}], t
assert all(type(p["params"]["traffic.packets"]) is int and type(p["params"]["traffic.load"]) is float for p in t)
u = json.load(open(d + "/U/sweep.json"))[0]["params"]
assert u == {"traffic.frames": 200, "phy.fec": "rs544", "phy.lanes": 8} and type(u["phy.lanes"]) is int, u
rows = list(csv.DictReader(open(d + "/T/sweep.csv")))
assert [r["param.traffic.load"] for r in rows] == ["0.25", "0.5"], rows
PY
    echo "ok: sweep_typed_params" ;;
  sweep_failed_points_blank)
    # A point that failed a check (here: a watchdog of 9 ns, above the channel's 8 ns one way, so
    # the run starts, and below a packet's gap) has figures of what it did until then in its
    # results.json; sweep.csv and sweep.json leave them blank.
    printf 'scenario: link-basic\nset: {traffic.packets: 2000}\ngrid:\n  sim.watchdog_us: [1000, 0.009]\n' >"$work/f.yaml"
    "$xysim" sweep "$work/f.yaml" --out "$work/F" -j 2 >"$work/out" 2>"$work/err"
    [ "$?" -eq 1 ] || fail "a sweep with a failed point: exit not 1: $(cat "$work/err")"
    python3 - "$work/F" <<'PY' || fail "a failed point's figures are not blank"
import csv, json, sys
d = sys.argv[1]
rows = list(csv.DictReader(open(d + "/sweep.csv")))
assert [r["passed"] for r in rows] == ["true", "false"], rows
figures = [k for k in rows[0] if k not in ("point", "seed", "passed") and not k.startswith("param.")]
assert "goodput_Gbps" in figures and rows[0]["goodput_Gbps"] != "", rows[0]
assert all(rows[1][k] == "" for k in figures), {k: rows[1][k] for k in figures if rows[1][k]}
own = json.load(open(d + "/points/0001/results.json"))
assert not own["passed"] and own["summary"]["goodput_Gbps"] is not None, own["summary"]
def leaves(t):
    return [x for v in t.values() for x in leaves(v)] if isinstance(t, dict) else \
        [x for v in t for x in leaves(v)] if isinstance(t, list) else [t]
merged = json.load(open(d + "/sweep.json"))
assert leaves(merged[1]["summary"]) and all(v is None for v in leaves(merged[1]["summary"])), merged[1]
assert merged[0]["summary"]["goodput_Gbps"] == json.load(open(d + "/points/0000/results.json"))["summary"]["goodput_Gbps"]
PY
    echo "ok: a failed point's figures are blank in sweep.csv and null in sweep.json" ;;
  memory_estimates)
    # Declared maxima the machine cannot hold are refused before anything is allocated, naming
    # what drives the estimate; under an address-space limit of 4 GiB (ulimit -v), so that the test
    # does not depend on the machine's memory. Nothing here allocates more than the limit.
    # AddressSanitizer reserves terabytes of address space for its shadow, so under
    # scripts/test --sanitize (ASAN_OPTIONS set) there is no limit: the estimates above any
    # machine's memory (1024 GiB, 50 GB) are still refused; the others are left out.
    limit="more than this process's address space limit (ulimit -v), 4.0 GiB"
    [ -z "${ASAN_OPTIONS:-}" ] || limit="more than"
    (
      [ -n "${ASAN_OPTIONS:-}" ] || ulimit -v 4194304
      # 4 copies x 64 endpoints x 2^32 bytes = 1024 GiB.
      expect_bad_input "allreduce.bytes = 4294967296 x allreduce.endpoints = 64 (four copies of each vector) need about 1024.0 GiB of memory, $limit" \
        run switch-allreduce --set allreduce.endpoints=64 --set allreduce.bytes=4294967296 --quiet
      if [ -z "${ASAN_OPTIONS:-}" ]; then  # some 25 GiB: within a large machine's memory
        # One fabric at a time: 512 GPUs x 65536 writes in flight x (200 B a slot + 256 B) = 14.2 GiB.
        expect_bad_input "alltoall.gpus = 512 x alltoall.outstanding = 65536 (a slot for each write a GPU keeps in flight, one fabric at a time) need about 14.2 GiB" \
          run olink-alltoall --set alltoall.gpus=512 --set alltoall.outstanding=65536 --set alltoall.bytes_per_gpu=17179869184 --quiet
        # 512 GPUs x (256 writes in flight x (200 B a slot + 256 B) + 2 x 256 x 16 B + 2 x 16 MiB written) = 16.1 GiB.
        expect_bad_input "fast.gpus = 512 x fast.outstanding = 65536 (a slot for each write a GPU keeps in flight, made up front) and x fast.bytes_per_gpu = 16777216 (the bytes written, kept by two models) need about 16.1 GiB" \
          run olink-fast --set fast.gpus=512 --set fast.outstanding=65536 --quiet
      fi
      # 30^5 points: at least 2 KiB each to merge, some 50 GB.
      python3 -c "print('scenario: link-basic\ngrid:\n' + ''.join('  k%d: [%s]\n' % (k, ', '.join(map(str, range(30)))) for k in range(5)))" >"$work/big.yaml"
      expect_bad_input "the sweep's 24300000 points (1 seeds x the grid's combinations and the points listed) need about" \
        sweep "$work/big.yaml" --out "$work/B"
      [ ! -e "$work/B" ] || fail "a refused sweep made its directory"
      # A composed fabric, refused before it is built, naming the preset's size: 10 fabrics (one
      # per offered load) of 4096 endpoints on 2 leaves of 4096 ports and a spine of 4096 hold
      # at least their scoreboards (4096^2 a fabric, 64 B each: 24 B of vector, five counters)
      # and VOQs (3 x 4096^2, a head and a tail of 4 B): 13.75 GiB.
      expect_bad_input "topology.endpoints = 4096 (topology = leaf-spine: 3 switches of 12288 ports in all, 8192 links), a fabric for each of uniform.points = 10 loads, need about" \
        run switch-uniform --set topology=leaf-spine --set topology.endpoints=4096 --set switch.when_full=wait --quiet
      python3 - "$work/err" <<'PY' || fail "leaf-spine 4096: estimate below its scoreboards and VOQs"
import re, sys
need = float(re.search(r"need about ([0-9.]+) GiB", open(sys.argv[1]).read()).group(1))
least = 10 * (4096**2 * 64 + 3 * 4096**2 * 8) / 2**30
assert need >= least, (need, least)
PY
      if [ -z "${ASAN_OPTIONS:-}" ]; then  # some GiB: within the machine's memory, so it would run
        # A topology file, named: 2000 endpoints on two switches of 1024 ports.
        python3 -c "print('switches:\n  sw0: {ports: 1024}\n  sw1: {ports: 1024}\nendpoints: 2000\nlinks:\n' +
          ''.join('  - {a: e%d, b: sw%d}\n' % (e, e // 1000) for e in range(2000)) + '  - {a: sw0, b: sw1}\n' * 24)" \
          >"$work/two.yaml"
        expect_bad_input "topology = $work/two.yaml (2000 endpoints, 2 switches of 2048 ports in all, 2024 links), a fabric for each of uniform.points = 10 loads, need about" \
          run switch-uniform --set topology="$work/two.yaml" --set switch.when_full=wait --quiet
      fi
    ) || exit 1
    [ -n "${ASAN_OPTIONS:-}" ] || (  # below the machine's memory: only against an address-space limit
      # OLink GPUs on a composed fabric of 4096 endpoints (8192 links), above 1 GiB.
      ulimit -v 1048576
      expect_bad_input "topology.endpoints = 4096 (topology = leaf-spine: 3 switches of 12288 ports in all, 8192 links) need about" \
        run olink-message --set topology=leaf-spine --set topology.endpoints=4096 --set switch.when_full=wait --quiet
    ) || exit 1
    if [ -n "${ASAN_OPTIONS:-}" ]; then
      echo "ok: memory estimated before allocating (under AddressSanitizer: no address-space limit, its cases left out)"
      exit 0
    fi
    (
      # 4 fabrics x 512 GPUs and the thread that runs the fabrics in turn: 2049 SystemC threads of
      # 256 KiB stacks, 0.5 GiB with what the process holds, above 512 MiB (main: SystemC's E518, stack setup failed). (On presets: OLink's
      # composed fabrics of 512 GPUs would be refused first, for their own memory.)
      ulimit -v 524288
      expect_bad_input "2049 SystemC threads (GPUs, hosts, endpoints), each with a stack of 256 KiB, need about 0.5 GiB of memory, more than this process's address space limit (ulimit -v), 0.5 GiB" \
        run olink-alltoall --set alltoall.olink=preset --set alltoall.gpus=512 --set alltoall.outstanding=1 \
        --set alltoall.bytes_per_gpu=256 --quiet
    ) || exit 1
    (
      # Forced past the estimate (1.0 GiB under a limit of 256 MiB), the allocation fails: one line, exit 2.
      ulimit -v 262144
      expect_bad_input "need about 1.0 GiB of memory, more than this process's address space limit (ulimit -v), 0.2 GiB: ask for less, or give --force-memory" \
        run switch-allreduce --set allreduce.endpoints=16 --set allreduce.bytes=16777216 --quiet
      expect_bad_input "error: out of memory (std::bad_alloc) while building or running" \
        run switch-allreduce --set allreduce.endpoints=16 --set allreduce.bytes=16777216 --quiet --force-memory
    ) || exit 1
    echo "ok: memory estimated before allocating" ;;
  llr_flush_named)
    # At 5 % frame loss LLR gives frames up after llr.replay_limit = 3 replays: the run passes (the
    # protocol's behaviour) but says the flushed frames are lost, naming the count the ports
    # report; with the limit at 1000 nothing is flushed and every frame is delivered.
    "$xysim" run link-llr --set link.frame_error=0.05 --set llr.replay_limit=3 --set traffic.frames=20000 \
      --out "$work/F" --quiet >"$work/report" || fail "run at limit 3: exit $?"
    python3 - "$work/F/results.json" "$work/report" <<'PY' || fail "flushed frames not named as lost"
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
flushed = sum(p["flushed_frames"] for p in s["ports"].values())
assert flushed > 0 and s["frames_lost"] >= flushed, (flushed, s["frames_lost"])
note = (f"LLR flushed {flushed} frames after llr.replay_limit = 3 replays without progress: no layer above recovers "
        f"them here, so they are among the {s['frames_lost']} frames lost (not delivered)")
assert any(w.startswith(note) for w in s["warnings"]), s.get("warnings")
assert note in open(sys.argv[2]).read(), "report"
PY
    "$xysim" run link-llr --set link.frame_error=0.05 --set llr.replay_limit=1000 --set traffic.frames=20000 \
      --out "$work/G" --quiet >"$work/report" || fail "run at limit 1000: exit $?"
    python3 - "$work/G/results.json" "$work/report" <<'PY' || fail "a soak at limit 1000 lost frames"
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
assert s["flushed_frames"] == 0 and s["frames_lost"] == 0 and "warnings" not in s, s
assert "0 flushed, 0 lost (every frame delivered)" in open(sys.argv[2]).read(), "report"
PY
    # Issue 22, defect 13: with the end points' Go-Back-N above LLR (the composed hosts'
    # transport), what LLR flushes is resent: through bursts of loss and a 30 us flap, LLR gives
    # frames up and still every frame arrives, exactly once and unchanged (the scoreboards check).
    "$xysim" run link-llr --set link.recovery=llr+e2e --set link.frame_error=0.05 --set llr.replay_limit=3 \
      --set link.flap_at_us=20 --set link.flap_us=30 --set traffic.frames=20000 --out "$work/H" --quiet \
      >"$work/report" || fail "run with the end points above LLR: exit $?"
    python3 - "$work/H/results.json" "$work/report" <<'PY' || fail "the end points above LLR did not deliver every frame"
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
assert s["recovery"] == "llr+e2e" and s["flushed_frames"] > 0 and s["e2e_resent"] > 0, s
assert s["frames_lost"] == 0 and "frames_in_flight" not in s and "warnings" not in s, s
report = open(sys.argv[2]).read()
assert f"{s['flushed_frames']} flushed, 0 lost (every frame delivered)" in report, report
assert f"the end points' Go-Back-N resent {s['e2e_resent']} packets, so none is lost" in report, report
PY
    echo "ok: flushed frames named as lost; at llr.replay_limit = 1000, or with the end points above LLR, every frame delivered" ;;
  sweep_expected_failures)
    # A point's failure is one short line naming the file that holds all of it; with
    # expect_failures: true the sweep exits 0 and still counts them.
    long=$(printf '9%.0s' $(seq 1500))
    printf 'scenario: link-basic\nset: {traffic.packets: 200}\npoints:\n  - {link.latency_cycles: 2}\n  - {link.latency_cycles: %s}\n' "$long" >"$work/f.yaml"
    "$xysim" sweep "$work/f.yaml" --out "$work/F" -j 2 >"$work/out" 2>"$work/err"
    rc=$?
    [ "$rc" -eq 1 ] || fail "a sweep with a failed point: exit $rc, expected 1"
    line=$(grep '^\[sweep\] point 1 failed' "$work/err") || fail "point 1 not reported: $(head -c 300 "$work/err")"
    [ "${#line}" -le 250 ] || fail "failure line of ${#line} characters: ${line:0:300}"
    [[ "$line" == *"error: link.latency_cycles = '999"*"... ($work/F/points/0001/log.txt)" ]] || fail "failure line: $line"
    grep -q "$long" "$work/F/points/0001/log.txt" || fail "the log does not hold the whole error"
    { cat "$work/f.yaml"; echo 'expect_failures: true'; } >"$work/g.yaml"
    "$xysim" sweep "$work/g.yaml" --out "$work/G" -j 2 >"$work/out" 2>"$work/err" \
      || fail "expect_failures: true: exit $?: $(head -c 300 "$work/err")"
    grep -q "2 points, 2 run, 0 skipped, 1 failed (expect_failures: true)" "$work/out" || fail "summary: $(cat "$work/out")"
    printf 'scenario: link-basic\nexpect_failures: maybe\n' >"$work/h.yaml"
    expect_bad_input "h.yaml:2: expect_failures = 'maybe': must be true or false" sweep "$work/h.yaml"
    echo "ok: sweep_expected_failures" ;;
  run_from_results)
    # A run repeats from its own results.json or run.json: the same results.json byte for byte
    # (scenario, seed and every parameter read back); --set and --seed still override.
    "$xysim" run link-basic --seed 7 --set traffic.load=0.3 --set traffic.packets=500 --out "$work/A" --quiet >/dev/null \
      || fail "run A"
    "$xysim" run "$work/A/results.json" --out "$work/B" --quiet >/dev/null || fail "run from results.json"
    cmp "$work/A/results.json" "$work/B/results.json" || fail "repeat from results.json differs"
    "$xysim" run "$work/A/run.json" --out "$work/C" --quiet >/dev/null || fail "run from run.json"
    cmp "$work/A/results.json" "$work/C/results.json" || fail "repeat from run.json differs"
    "$xysim" run "$work/A/results.json" --seed 8 --out "$work/D" --quiet >/dev/null || fail "run with --seed"
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["seed"] == 8 and r["config"]["traffic.load"] == 0.3, r' \
      "$work/D/results.json" || fail "--seed over results.json"
    echo '{"seed": 1}' >"$work/x.json"
    expect_bad_input "$work/x.json: not a results.json" run "$work/x.json"
    echo "ok: run_from_results" ;;
  latency_na)
    # A design that delivered nothing has no latency: its report says n/a and its results.json
    # null, with count 0 (a dead lane on link-llr; no FEC with LLR at BER 1e-3, links never up).
    "$xysim" run link-llr --set link.frame_error=1 --set traffic.frames=100 --out "$work/L" --quiet >"$work/out" 2>&1
    grep -qE '^  frame latency a->b +p50 n/a p99 n/a p99.9 n/a max n/a ns$' "$work/out" || fail "link-llr: $(cat "$work/out")"
    "$xysim" run lingyun-fec-llr --set port.errors.ber=1e-3 --set fec_llr.design=none_llr --set traffic.us=20 \
      --out "$work/Y" --quiet >"$work/out" 2>/dev/null
    grep -qE '^  none_llr +n/a +n/a +n/a ' "$work/out" || fail "lingyun-fec-llr: $(cat "$work/out")"
    python3 - "$work" <<'PY' || fail "latency of nothing delivered is not null"
import json, sys
d = sys.argv[1]
l = json.load(open(d + "/L/results.json"))
assert l["summary"]["latency_p50_ns"] is None and l["summary"]["latency_max_ns"] is None, l["summary"]
empty = [v for v in l["stats"].values() if "count" in v and v["count"] == 0]
assert empty, "no empty histogram in stats"
assert all(v[k] is None for v in empty for k in v if k.endswith(("_cycles", "_ns")) and k != "clock_period_ns"), empty
y = json.load(open(d + "/Y/results.json"))["summary"]["none_llr"]
assert y["frames_delivered"] == 0, y
assert all(y[k] is None for k in ("latency_p50_ns", "latency_p99_ns", "latency_p999_ns")), y
assert all(v is None for v in y["path"].values()), y["path"]
PY
    echo "ok: latency_na" ;;
  stats_described)
    # Every stat in results.json says what it is, and a histogram the clock its cycles count in:
    # link-basic's at link.clock_mhz = 800 is 1.25 ns, and its _ns figures are its _cycles x 1.25.
    "$xysim" run link-basic --set link.clock_mhz=800 --set traffic.packets=300 --out "$work/A" --quiet >/dev/null || fail "run"
    python3 - "$work/A/results.json" <<'PY' || fail "stats without description or clock"
import json, sys
stats = json.load(open(sys.argv[1]))["stats"]
assert stats and all(isinstance(v["description"], str) and v["description"] for v in stats.values()), stats
histograms = {k: v for k, v in stats.items() if "count" in v}
assert set(histograms) == {"top.link.sink.latency", "top.link.sink.head_latency"}, histograms.keys()
for h in histograms.values():
    assert h["clock_period_ns"] == 1000 / 800, h
    assert h["p99_ns"] == h["p99_cycles"] * 1.25 and h["max_ns"] == h["max_cycles"] * 1.25, h
assert all("clock_period_ns" not in v for k, v in stats.items() if k not in histograms)
PY
    echo "ok: stats_described" ;;
  *) fail "unknown case $case_name" ;;
esac
