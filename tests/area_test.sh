#!/usr/bin/env bash
# scripts/area synthesizes every twin, and the flip-flops are the state each design holds:
# the delay line 64 bits x 4 stages + 4 valid bits; the CBFC sender two counters per VC plus
# the 32-bit time of the next CC_Update; the LLR transmitter per slot a 24-bit byte total and a
# 32-bit send time, plus state, pointers, byte totals, timer and counters; the LLR receiver its
# state, sequence numbers, timers and NACK count; the RS encoder one 10-bit symbol per parity symbol;
# the reduce lane groups one 32-bit sum per lane (the float ones an fp32 accumulator); the ICRC
# engine its 32-bit CRC register and 16-bit byte count; the OTN scrambler its 16-bit register,
# 14-bit place in the frame and the byte out with its valid bit.
set -uo pipefail
out=$("$1/scripts/area") || { echo "FAIL: scripts/area"; exit 1; }
echo "$out"
expect() {
  echo "$out" | awk -v t="$1" -v c="$2" -v f="$3" '$1 == t && $2 == c && $4 == f {ok = 1} END {exit !ok}' ||
    { echo "FAIL: $1 $2 should have $3 flops"; exit 1; }
}
expect xy_util_delay_line 64b-x4 $((64 * 4 + 4))
expect xy_cbfc_sender 8vc-20b $((8 * 2 * 20 + 32))
expect xy_cbfc_sender 32vc-20b $((32 * 2 * 20 + 32))
expect xy_llr_tx 64-slots $((64 * (24 + 32) + 2 + 20 + 7 + 7 + 2 * 24 + 32 + 8 + 1 + 4 * 32))
expect xy_llr_rx 20b $((2 + 2 * 20 + 32 + 2 * 32 + 2 + 32))
expect xy_rs_encoder rs272 $((14 * 10))
expect xy_rs_encoder rs544 $((30 * 10))
expect xy_reduce_int32 16-lanes $((16 * 32))
expect xy_reduce_int32 64-lanes $((64 * 32))
expect xy_reduce_float fp32-16 $((16 * 32))
expect xy_reduce_float bf16-16 $((16 * 32))
expect xy_icrc 8-bytes $((32 + 16))
expect xy_otn_scrambler 1-byte $((16 + 14 + 8 + 1))
