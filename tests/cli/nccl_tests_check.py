#!/usr/bin/env python3
"""Checks a nccl-tests CSV against nccl-tests' definitions and the sweep it came from.

    nccl_tests_check.py CSV SWEEP.json

nccl-tests (doc/PERFORMANCE.md, src/sendrecv.cu SendRecvGetBw): time is the operation's time in
us; algbw = size / time in GB/s of 10^9 bytes (count * typesize / 1.0E9 / sec); busbw = algbw x
factor, 1 for point-to-point. Lines starting with '#' are comments, as in nccl-tests' own output.
Each row's time must be the sweep's measured GPU-to-GPU time (summary.delivered_ns) for that size,
the mean if several points have it.
"""
import csv
import json
import sys


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


path, sweep = sys.argv[1], sys.argv[2]
lines = [l for l in open(path) if not l.startswith("#")]
rows = list(csv.reader(lines))
if rows[0] != ["size", "time", "algbw", "busbw"]:
    fail(f"{path}: header {rows[0]}, expected size,time,algbw,busbw")
measured = {}
for p in json.load(open(sweep)):
    measured.setdefault(p["summary"]["message_bytes"], []).append(p["summary"]["delivered_ns"])
sizes = []
for r in rows[1:]:
    size, time_us, algbw, busbw = int(r[0]), float(r[1]), float(r[2]), float(r[3])
    sizes.append(size)
    want_us = sum(measured[size]) / len(measured[size]) / 1000
    if abs(time_us - want_us) > 5e-5:  # written with 4 decimals
        fail(f"{size} B: time {time_us} us, the sweep measured {want_us} us")
    want_algbw = size / 1e9 / (time_us * 1e-6)
    if abs(algbw / want_algbw - 1) > 2e-4:
        fail(f"{size} B: algbw {algbw}, size / time = {want_algbw} GB/s")
    if abs(busbw - algbw * 1) > 1e-4:
        fail(f"{size} B: busbw {busbw}, point to point is algbw x 1 = {algbw}")
if sizes != sorted(measured):
    fail(f"{path}: sizes {sizes}, the sweep has {sorted(measured)}")
print(f"ok: {len(sizes)} rows: time is the measured delivery, algbw = size/time, busbw = algbw (point to point)")
