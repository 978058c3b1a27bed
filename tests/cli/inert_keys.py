#!/usr/bin/env python3
"""No listed key is inert (issue 21).

    inert_keys.py XYSIM [--jobs J] [--only SCENARIO,...] [--key GLOB] [--verbose]

For every scenario (`xysim scenarios`) and every key `xysim params SCENARIO --json` lists, the
key is set to a second valid value and the run compared with the reference run without it: its
results.json must differ, or the run must be refused (exit 2, one line on stderr). A key that
changes nothing is a bug: the key does nothing, or it matters only together with another one.

What is compared: results.json without the inputs it echoes (`config`, `scenario`, `seed`,
`xysim_version`, `schema_version`), and without the summary figures its `provenance` objects mark
`configured` or `derived` (a parameter reported as given, or arithmetic on parameters): a key
must move something the run measured (`stats`, `sim_time_ns`, `passed`, `failure`, the measured
summary). run.json (host, wall time) is never compared.

The runs are short (SHORT: each scenario's traffic, time or size keys set to a fraction of their
defaults), so that the test takes a few minutes of two cores. The reference run of a key is the
scenario's short run, with the key's PAIRING when it has one: keys that only matter together
with another (a burst's exit probability with bursts on, a DWRR quantum with DWRR and VCs) are
run with that other key set, in the reference and the variant alike. The second value of a key
is VALUE's when it has one, else the generic rule (second_value): the other boolean, the next
allowed choice, twice a number (or the other end of its range when twice is out of it).

Implementation choices (IMPLEMENTATIONS) are the exception: the C++ model or its RTL twin, the
fast or exact codec, must give byte-identical results.json (the codecs but for the counter of the
codec's own work), or be refused; the test asserts that instead.

A row of any table that matches no key fails.

Runs go --jobs at a time (default 2). Every inert key is printed with the two commands that
show it; the exit status is 1 when any key is inert or any rule is broken.
"""
import argparse
import concurrent.futures
import fnmatch
import json
import math
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Each scenario's short run: its traffic, time or size keys at a fraction of their defaults.
SHORT = {
    "link-basic": {"traffic.packets": 2000},
    "phy-loopback": {"traffic.frames": 2000},
    "phy-fec-curve": {"curve.points": 2, "curve.failures": 20},
    "link-llr": {"traffic.frames": 2000},
    "link-cbfc": {"traffic.frames": 2000},
    "switch-latency": {},
    "switch-uniform": {"uniform.points": 2, "uniform.warmup_cycles": 500, "uniform.measure_cycles": 2000},
    "switch-ecmp": {"ecmp.packets": 200},
    "switch-allreduce": {},
    "switch-incast": {"incast.warmup_us": 5, "incast.measure_us": 10},
    "olink-latency": {"olink.loads": 4},
    "olink-fast": {"fast.bytes_per_gpu": 262144, "fast.loads": 4},
    "olink-alltoall": {"alltoall.bytes_per_gpu": 65536},
    "olink-message": {},
    "lingyun-fec-llr": {"traffic.us": 5, "traffic.warmup_us": 1},
    "lingyun-incast": {"incast.warmup_us": 1, "incast.measure_us": 2},
    "lingyun-deadlock": {"deadlock.traffic_us": 10, "deadlock.drain_us": 20},
    "nic-incast": {"incast.senders": 8, "incast.message_kib": 1024},
    "nic-spray": {"spray.messages": 2, "spray.message_kib": 64},
    "nic-balance": {"balance.message_kib": 2048},
    "nic-failover": {},
    "nic-alltoall": {"alltoall.endpoints": 8, "alltoall.message_kib": 128},
    "across-300km": {"across.gpus_per_site": 2, "across.leaves": 1, "across.oversubscription": 2,
                     "across.gradient_mib": 0.25, "across.compute_us": 20, "across.iterations": 1},
    "nic-psn-wrap": {"wrap.wraps": 1, "wrap.lead": 20000, "wrap.loss": 1e-3},
}

# Scenarios whose listing changes with a key (a topology brings its ports' keys): each variant's
# listing is checked too, under the name scenario@key=value, with that key set in every run.
VARIANTS = {"switch-uniform": [{"topology": "leaf-spine"}]}

# (scenario glob, key glob) -> the second value of the key, where the generic rule does not give
# one that matters. The first match wins.
VALUE = [
    # Limits a finished run never reaches: at the low end of their range they end the run.
    ("*", "sim.max_time_us", 1),
    ("*", "sim.watchdog_us", 0.001),
    # Errors that FEC corrects and LLR replays, rather than a dead lane.
    ("*", "*.errors.ber", 1e-5),
    ("*", "*.errors.p_good_to_bad", 1e-5),
    ("*", "*.errors.dfe_propagation", 0.5),
    ("*", "*.link_down_at_us", 2),
    ("*", "*.am_period", 64),
    ("*", "*.am_ns", 10),
    ("link-llr", "link.flap_at_us", 5),
    ("*", "llr.seq_bits", 4),
    ("*", "llr.max_replay_buffer_bytes", 1024),
    ("*", "llr.replay_buffer_bytes", 16384),
    ("*", "cbfc.counter_bits", 8),
    ("*", "cbfc.resync_us", 2),
    ("*", "pfc.buffer_bytes", 1024),
    ("*", "switch.buffer_mib", 0.01),
    # A PCIe switch too small for a bulk segment (refused), and one write in flight a link.
    ("*", "olink.pcie-switch.port_buffer_bytes", 1),
    ("*", "olink.pcie-switch.posted_credits", 1),
    ("*", "switch.dt_alpha", 0.01),
    ("*", "switch.ecn.kmin_bytes", 0),
    ("*", "switch.ecn.kmax_bytes", 2048),
    ("*", "switch.ecn.pmax", 1.0),
    # Room enough for all: at the other end, one at a time.
    ("*", "*.outstanding", 1),
    ("switch-allreduce", "allreduce.window", 1),
    ("switch-allreduce", "reduce.slots", 1),
    ("switch-*", "cbfc.buffer_credits", 16),
    ("*", "cbfc.credit_bytes", 4096),
    ("*", "port.max_frame_bytes", 64),
    ("*", "switch.ports", 2),
    ("*", "switch.iterations", 1),
    ("link-llr", "e2e.rto_us", 16),
    # lingyun-incast runs max(switch.vcs, 2) VCs: 2 is what it runs by default.
    ("lingyun-incast", "switch.vcs", 4),
    # nic-*: a floor that binds; a retransmit timeout of 4 us fires under PFC pauses, and no
    # retry at all fails a QP at its first timeout.
    ("nic-*", "nic.dcqcn.min_rate_mbps", 200000),
    ("nic-*", "nic.timeout_exp", 0),
    ("across-300km", "nic.timeout_exp", 8),  # 1 ms: below the 2.94 ms round trip
    ("across-300km", "across.iterations", 2),
    ("across-300km", "nic.dcqcn.min_rate_mbps", 200000),
    ("nic-*", "nic.retry_count", 0),
    ("nic-incast", "nic.reorder.window", 64),
    # nic-spray: a window that spraying overruns; a hole timeout shorter than the paths' spread.
    ("nic-spray", "nic.reorder.window", 8),
    ("nic-spray", "nic.reorder.timeout_us", 0.5),
    ("nic-balance", "nic.reorder.window", 8),
    ("nic-balance", "nic.reorder.timeout_us", 0.5),
    ("nic-balance", "nic.iglb.age_us", 0.5),
    ("nic-balance", "nic.rx_buffer_kib", 32),
]

# (scenario glob, key glob) -> keys set in both runs, so that the key matters. The first match wins.
# PFC at 128 KiB a priority (headroom for the 10 m spine links), so that a 4 MiB switch buffer
# backs it: what lingyun-incast's shared-buffer keys need to act.
PFC_128K = {"pfc.buffer_bytes": 131072, "pfc.headroom_bytes": 81920, "pfc.xoff_bytes": 49152, "pfc.xon_bytes": 32768}

# across-300km: 4 GPUs a site at 4:1 and 2 MiB of gradient, where its short run's 2 GPUs a
# site barely meet: queues at the leaves and at the line across.
ACROSS_BIG = {"across.gpus_per_site": 4, "across.oversubscription": 4, "across.gradient_mib": 2}

PAIRING = [
    # across-300km first: its ECN is fixed by its designs, its links lossy by default.
    ("across-300km", "switch.arbiter", ACROSS_BIG),
    ("across-300km", "switch.iterations", ACROSS_BIG),
    ("across-300km", "switch.dt_alpha", {**ACROSS_BIG, "switch.buffer_mib": 0.1}),
    ("across-300km", "switch.when_full", {**ACROSS_BIG, "switch.buffer_mib": 0.05}),
    ("across-300km", "switch.ecn.kmin_bytes", ACROSS_BIG),
    ("across-300km", "switch.ecn.*", {**ACROSS_BIG, "switch.ecn.kmin_bytes": 0}),
    ("across-300km", "ipcn.*", ACROSS_BIG),
    ("across-300km", "port.rs272.*", {"port.fec": "rs272"}),
    ("across-300km", "port.none.*", {"port.fec": "none"}),
    ("across-300km", "port.codec", {"across.km": 1}),
    ("across-300km", "cbfc.*", {**ACROSS_BIG, "port.fc": "cbfc"}),
    ("across-300km", "llr.ack_timer_ns", {"llr.ack_every": 64}),
    ("across-300km", "llr.*", {"across.compute_us": 0, "port.link_down_at_us": 2, "port.link_down_us": 30,
                               "sim.watchdog_us": 50}),
    ("across-300km", "nic.pcie.*", {"nic.host": "pcie"}),
    ("across-300km", "nic.rx_buffer_kib", {**ACROSS_BIG, "nic.host": "pcie", "nic.pcie.lanes": 4}),
    ("across-300km", "nic.retry_count", {"nic.timeout_exp": 6}),  # 262 us: timeouts before the ACK's round trip
    ("across-300km", "nic.dcqcn.rhai_mbps", {**ACROSS_BIG, "switch.ecn.kmin_bytes": 0, "switch.ecn.kmax_bytes": 20000,
                                             "nic.dcqcn.rate_on_first_cnp": 0.01, "nic.dcqcn.fast_recovery_steps": 1,
                                             "nic.dcqcn.increase_period_us": 2, "nic.dcqcn.byte_counter": 20000}),
    ("across-300km", "nic.dcqcn.*", {**ACROSS_BIG, "switch.ecn.kmin_bytes": 0, "switch.ecn.kmax_bytes": 20000,
                                     "nic.dcqcn.alpha_period_us": 5, "nic.dcqcn.increase_period_us": 5,
                                     "nic.dcqcn.cnp_interval_us": 5, "nic.dcqcn.byte_counter": 100000}),
    # A FEC's own latencies with that FEC.
    ("phy-loopback", "phy.rs272.*", {"phy.fec": "rs272"}),
    ("phy-loopback", "phy.none.*", {"phy.fec": "none"}),
    ("olink-message", "port.rs272.*", {"message.fabric": "olink-rs272"}),
    ("lingyun-incast", "port.rs272.*", {"port.fec": "rs272"}),
    ("lingyun-incast", "port.none.*", {"port.fec": "none"}),
    ("nic-*", "port.rs272.*", {"port.fec": "rs272"}),
    ("nic-*", "port.none.*", {"port.fec": "none"}),
    ("nic-*", "nic.pcie.*", {"nic.host": "pcie"}),
    ("nic-spray", "nic.encc.*", {"nic.cc": "encc"}),
    # Back-to-back cuts (CNPs faster than increases), where R_T's clamp shows.
    ("nic-balance", "nic.dcqcn.clamp_target", {"nic.dcqcn.cnp_interval_us": 1, "nic.dcqcn.increase_period_us": 20}),
    # ENCC slows the short run (cut to its floor at first): 512 KiB.
    ("nic-balance", "nic.encc.*", {"nic.cc": "encc", "balance.message_kib": 512}),
    # DCQCN's increase steps show over its 8 MiB elephants.
    ("nic-balance", "nic.dcqcn.*", {"balance.message_kib": 8192, "nic.dcqcn.alpha_period_us": 5,
                                    "nic.dcqcn.increase_period_us": 5, "nic.dcqcn.cnp_interval_us": 5,
                                    "nic.dcqcn.byte_counter": 100000}),
    ("nic-balance", "nic.rx_buffer_kib", {"nic.host": "pcie", "nic.pcie.lanes": 4, "port.fc": "none"}),
    ("nic-balance", "nic.retry_count", {"nic.timeout_exp": 0}),
    ("nic-failover", "nic.rx_buffer_kib", {"nic.host": "pcie", "nic.pcie.lanes": 4, "port.fc": "none"}),
    ("nic-failover", "nic.retry_count", {"nic.timeout_exp": 0}),
    # The retransmit timer finds a dead path only where no path timer does.
    ("nic-failover", "nic.timeout_exp", {"nic.failover.path_timeout_us": 0}),
    # The all-to-all's queues stay under the ECN threshold (DCQCN gets no mark) and its short
    # messages fit in ENCC's first window: messages of 512 KiB, and for DCQCN marking from the
    # first byte.
    # A QP's share of its sender's line is 1/15: DCQCN's limit binds, and hyper increase shows,
    # once the first CNP cuts far below it.
    ("nic-alltoall", "nic.dcqcn.rhai_mbps", {"alltoall.message_kib": 512, "switch.ecn.kmin_bytes": 0,
                                             "switch.ecn.kmax_bytes": 20000, "nic.dcqcn.rate_on_first_cnp": 0.01,
                                             "nic.dcqcn.fast_recovery_steps": 1, "nic.dcqcn.increase_period_us": 2,
                                             "nic.dcqcn.byte_counter": 20000}),
    # Fast recovery and additive increase act once a cut far below the limit leaves room to climb.
    ("nic-alltoall", "nic.dcqcn.fast_recovery_steps", {"alltoall.message_kib": 512, "switch.ecn.kmin_bytes": 0,
                                                       "switch.ecn.kmax_bytes": 20000, "nic.dcqcn.rate_on_first_cnp": 0.01,
                                                       "nic.dcqcn.increase_period_us": 2, "nic.dcqcn.byte_counter": 20000}),
    ("nic-alltoall", "nic.dcqcn.rai_mbps", {"alltoall.message_kib": 512, "switch.ecn.kmin_bytes": 0,
                                            "switch.ecn.kmax_bytes": 20000, "nic.dcqcn.rate_on_first_cnp": 0.01,
                                            "nic.dcqcn.increase_period_us": 2, "nic.dcqcn.byte_counter": 20000}),
    ("nic-alltoall", "nic.dcqcn.*", {"alltoall.message_kib": 512, "switch.ecn.kmin_bytes": 0, "switch.ecn.kmax_bytes": 20000,
                                     "nic.dcqcn.alpha_period_us": 5, "nic.dcqcn.increase_period_us": 5,
                                     "nic.dcqcn.cnp_interval_us": 5, "nic.dcqcn.byte_counter": 100000}),
    # ENCC's floor binds where its target is low.
    ("nic-alltoall", "nic.encc.min_rate_mbps", {"alltoall.message_kib": 512, "nic.encc.eta": 0.05}),
    ("nic-alltoall", "nic.encc.*", {"alltoall.message_kib": 512}),
    ("nic-alltoall", "nic.reorder.*", {"nic.entropy": "packet"}),
    ("nic-alltoall", "nic.retry_count", {"nic.timeout_exp": 0}),
    ("nic-alltoall", "nic.iglb.*", {"nic.entropy": "iglb"}),
    ("nic-alltoall", "llr.window", {"alltoall.message_kib": 16}),
    ("nic-balance", "nic.retransmit", {"nic.reorder.window": 8}),
    ("nic-balance", "switch.dt_alpha", {"port.fc": "none", "switch.buffer_mib": 1}),
    ("nic-balance", "port.codec", {"balance.message_kib": 256}),
    ("nic-spray", "port.codec", {"spray.message_kib": 16}),  # the exact codec decodes every codeword
    ("nic-balance", "llr.window", {"balance.message_kib": 256}),
    # Hyper increase, after the first CNP cuts far below the limit.
    ("nic-incast", "nic.dcqcn.rhai_mbps", {"nic.dcqcn.rate_on_first_cnp": 0.01, "nic.dcqcn.fast_recovery_steps": 1,
                                           "nic.dcqcn.increase_period_us": 2, "nic.dcqcn.byte_counter": 20000}),
    # ENCC's floor is reached by 16 senders' first round trip, not by the short run's 8.
    ("nic-incast", "nic.encc.min_rate_mbps", {"incast.senders": 16}),
    # The NIC's own buffer fills behind a slow host, and holds only where no link flow control does.
    ("nic-spray", "nic.rx_buffer_kib", {"nic.host": "pcie", "nic.pcie.lanes": 4, "port.fc": "none"}),
    ("nic-*", "nic.rx_buffer_kib", {"nic.host": "pcie", "nic.pcie.lanes": 4}),
    # nic-spray's short run is over in 13 us: DCQCN's increase stages act in the whole one, and
    # the retransmit timer fires at 4 us.
    # Back-to-back cuts (CNPs faster than increases), where R_T's clamp shows.
    ("nic-spray", "nic.dcqcn.clamp_target", {"spray.messages": 8, "spray.message_kib": 128,
                                             "nic.dcqcn.cnp_interval_us": 1, "nic.dcqcn.increase_period_us": 20}),
    ("nic-spray", "nic.dcqcn.*", {"spray.messages": 8, "spray.message_kib": 128, "nic.dcqcn.alpha_period_us": 5,
                                  "nic.dcqcn.increase_period_us": 5, "nic.dcqcn.cnp_interval_us": 5,
                                  "nic.dcqcn.byte_counter": 100000}),
    ("nic-spray", "nic.retry_count", {"nic.timeout_exp": 0}),
    # Timeouts need a lost NAK or a lost last packet: at 5 % loss the short soak has them.
    ("nic-psn-wrap", "nic.retry_count", {"nic.timeout_exp": 0, "wrap.loss": 0.05}),
    ("nic-psn-wrap", "nic.timeout_exp", {"wrap.loss": 0.05}),
    # A second wrap is 2^24 more PSNs: one QP, nothing lost, so that it takes seconds.
    ("nic-psn-wrap", "wrap.wraps", {"wrap.qps": 1, "wrap.loss": 0}),
    # DCQCN's timers (55 us) outlast the short run's flows: at 5 us they act within it.
    ("nic-*", "nic.dcqcn.*", {"nic.dcqcn.alpha_period_us": 5, "nic.dcqcn.increase_period_us": 5,
                              "nic.dcqcn.cnp_interval_us": 5, "nic.dcqcn.byte_counter": 100000}),
    ("nic-*", "nic.retry_count", {"nic.timeout_exp": 2}),
    # nic-spray's buffers fill only without link flow control (the switches drop then).
    ("nic-spray", "switch.dt_alpha", {"port.fc": "none", "switch.buffer_mib": 1}),
    # A reorder window matters where packets overtake: sprayed.
    ("nic-incast", "nic.reorder.*", {"nic.entropy": "packet"}),
    ("nic-incast", "nic.iglb.*", {"nic.entropy": "iglb"}),
    # Keys that make the short run slow (every codeword encoded and decoded; one frame in flight
    # a hop), on 128 KiB messages.
    ("nic-incast", "port.codec", {"incast.message_kib": 128}),
    ("nic-incast", "llr.window", {"incast.message_kib": 128}),
    ("nic-incast", "switch.dwrr_quantum_bytes", {"incast.victim_vc": "own", "switch.egress_scheduler": "dwrr"}),
    ("lingyun-deadlock", "port.rs272.*", {"port.fec": "rs272"}),
    ("lingyun-deadlock", "port.none.*", {"port.fec": "none"}),
    ("switch-uniform@*", "port.rs272.*", {"port.fec": "rs272"}),
    # The exact RS codec encodes every codeword of 16 ports: one short load.
    ("switch-uniform@*", "port.codec", {"uniform.points": 1, "uniform.measure_cycles": 500}),
    ("switch-uniform@*", "port.none.*", {"port.fec": "none"}),
    # A flap's start with a flap; alignment markers' period with markers that take time, and
    # their time with markers often enough to fall in a short run.
    ("*", "phy.link_down_at_us", {"phy.link_down_us": 3}),
    ("*", "port.link_down_at_us", {"port.link_down_us": 3}),
    ("link-llr", "link.flap_at_us", {"link.flap_us": 3}),
    ("*", "phy.am_period", {"phy.am_ns": 10}),
    ("*", "port.am_period", {"port.am_ns": 10}),
    ("*", "phy.am_ns", {"phy.am_period": 64}),
    ("*", "port.am_ns", {"port.am_period": 64}),
    # Bursts' and DFE's figures with bursts and errors to shape.
    ("*", "phy.errors.p_bad_to_good", {"phy.errors.p_good_to_bad": 1e-5}),
    ("*", "phy.errors.ber_bad", {"phy.errors.p_good_to_bad": 1e-5}),
    ("*", "phy.errors.dfe_propagation", {"phy.errors.ber": 1e-5}),
    ("*", "port.errors.p_bad_to_good", {"port.errors.p_good_to_bad": 1e-5}),
    ("*", "port.errors.ber_bad", {"port.errors.p_good_to_bad": 1e-5}),
    ("*", "port.errors.dfe_propagation", {"port.errors.ber": 1e-5}),
    # LLR's timers and limits with something to recover from: corrupted frames, lost control
    # sets (a replay timer fires when no ACK or NACK arrives), bursts longer than the replays.
    ("link-llr", "llr.replay_timer_ns", {"link.frame_error": 0.01, "link.control_loss": 0.2}),
    ("link-llr", "llr.nack_timer_ns", {"link.frame_error": 0.01, "link.control_loss": 0.2}),
    ("link-llr", "llr.replay_limit", {"link.burst_start": 0.01, "link.burst_frames": 2000}),
    ("link-llr", "llr.data_age_us", {"link.burst_start": 0.01, "link.burst_frames": 2000}),
    ("link-llr", "link.burst_frames", {"link.burst_start": 0.01}),
    # NACKs repair every loss they hear of: the timeout fires when a NACK is lost too.
    ("link-llr", "e2e.rto_us", {"link.recovery": "e2e", "link.frame_error": 0.01, "link.control_loss": 0.2}),
    ("link-llr", "e2e.*", {"link.recovery": "e2e", "link.frame_error": 0.01}),
    # On composed ports: frames the FEC cannot correct (no FEC, or RS(272) near its 1 % point).
    # On composed ports the timers and limits act when the link goes dark for longer than the
    # replay timer (30 us: 4 timer replays without progress, then FLUSH), as in the LLR fault
    # campaign's LongFlap; errors the FEC leaves are repaired by NACKs, which no timer starts.
    ("*", "llr.replay_timer_ns", {"port.link_down_at_us": 2, "port.link_down_us": 30, "sim.watchdog_us": 50}),
    ("*", "llr.nack_timer_ns", {"port.link_down_at_us": 2, "port.link_down_us": 30, "sim.watchdog_us": 50}),
    ("*", "llr.replay_limit", {"port.link_down_at_us": 2, "port.link_down_us": 30, "sim.watchdog_us": 50}),
    ("*", "llr.data_age_us", {"port.link_down_at_us": 2, "port.link_down_us": 30, "sim.watchdog_us": 50}),
    ("lingyun-fec-llr", "e2e.*", {"fec_llr.design": "rs544", "port.errors.ber": 1.5e-3}),
    # Credits a lost frame took come back by the CC_Update.
    ("link-cbfc", "cbfc.resync_us", {"link.frame_loss": 0.01}),
    # A sink buffer short of the credit loop (8 + 1 cycles), so the credits' latency shows.
    ("link-basic", "link.credit_latency_cycles", {"link.credits": 8}),
    # ACKs batched beyond a message's frames: the last of them waits for the ACK timer.
    ("olink-message", "llr.ack_timer_ns", {"llr.ack_every": 64}),
    # An all-to-all's contention at the switch with random destinations (round robin over the
    # others never sends two GPUs to one at once), and its buffer's with a buffer that fills
    # (which, OLink having no retransmission, waits rather than drops).
    ("olink-alltoall", "switch.arbiter", {"alltoall.pattern": "random"}),
    ("olink-alltoall", "switch.iterations", {"alltoall.pattern": "random"}),
    # The presets' switches (OLink's composed ones must back their lossless links' credits).
    ("olink-alltoall", "switch.when_full", {"alltoall.olink": "preset", "alltoall.pattern": "random", "switch.buffer_mib": 0.01}),
    ("olink-alltoall", "switch.cell_bytes", {"alltoall.olink": "preset", "alltoall.pattern": "random", "switch.buffer_mib": 0.01, "switch.when_full": "wait"}),
    ("olink-alltoall", "switch.dt_alpha", {"alltoall.olink": "preset", "alltoall.pattern": "random", "switch.buffer_mib": 0.01, "switch.when_full": "wait"}),
    ("olink-fast", "switch.arbiter", {"fast.pattern": "random"}),
    ("olink-fast", "switch.iterations", {"fast.pattern": "random"}),
    ("olink-fast", "switch.speedup", {"fast.pattern": "random"}),
    ("olink-fast", "switch.ecn.on", {"fast.pattern": "random", "switch.ecn.kmin_bytes": 0}),
    ("olink-fast", "switch.ecn.kmin_bytes", {"fast.pattern": "random", "switch.ecn.on": True}),
    ("olink-fast", "switch.when_full", {"fast.pattern": "random", "switch.buffer_mib": 0.01}),
    ("olink-fast", "switch.cell_bytes", {"fast.pattern": "random", "switch.buffer_mib": 0.01, "switch.when_full": "wait"}),
    ("olink-fast", "switch.dt_alpha", {"fast.pattern": "random", "switch.buffer_mib": 0.01, "switch.when_full": "wait"}),
    # RED/ECN's thresholds and probability with marking on and queues above its start.
    ("*", "switch.ecn.on", {"switch.ecn.kmin_bytes": 0}),
    ("*", "switch.ecn.kmin_bytes", {"switch.ecn.on": True}),
    ("*", "switch.ecn.*", {"switch.ecn.on": True, "switch.ecn.kmin_bytes": 0}),
    # Admission with a buffer small enough to refuse packets.
    # A lossless fabric's buffer must back its credits (else refused), so nothing waits or drops
    # for want of it: admission acts on links without flow control.
    ("switch-uniform@*", "switch.when_full", {"switch.buffer_mib": 0.01, "port.fc": "none"}),
    ("switch-uniform@*", "switch.dt_alpha", {"switch.buffer_mib": 0.1, "port.fc": "none"}),
    ("switch-uniform", "switch.when_full", {"switch.buffer_mib": 0.01, "uniform.flow_control": "none"}),
    ("switch-uniform", "switch.dt_alpha", {"switch.buffer_mib": 0.1, "uniform.flow_control": "none"}),
    ("switch-*", "switch.when_full", {"switch.buffer_mib": 0.01}),
    ("switch-*", "switch.dt_alpha", {"switch.buffer_mib": 0.1}),
    # Its row without flow control: a buffer that backs the CBFC and PFC rows' credits, and no more,
    # and (to wait) an incast long enough to fill it.
    ("lingyun-incast", "switch.when_full", {"switch.buffer_mib": 4, "incast.measure_us": 30, **PFC_128K}),
    ("lingyun-incast", "switch.dt_alpha", {"switch.buffer_mib": 4, **PFC_128K}),
    ("olink-message", "switch.when_full", {"switch.buffer_mib": 0.01, "port.fc": "none"}),
    # Cells count in a buffer that fills with packets smaller than a cell.
    ("switch-incast", "switch.cell_bytes", {"switch.buffer_mib": 0.01, "incast.bytes": 64}),
    # The VC scheduler and its quantum with two VCs that carry traffic.
    ("switch-incast", "switch.egress_scheduler", {"incast.victim_vc": "own"}),
    ("switch-incast", "switch.dwrr_quantum_bytes", {"incast.victim_vc": "own", "switch.egress_scheduler": "dwrr"}),
    ("lingyun-incast", "switch.dwrr_quantum_bytes", {"switch.egress_scheduler": "dwrr"}),
    ("lingyun-deadlock", "switch.dwrr_quantum_bytes", {"switch.egress_scheduler": "dwrr"}),
]

# Implementation choices (xysim params --json marks them "implementation"; results.json leaves them
# out of `config`): results.json must be byte-identical with the other value. Each is listed here
# with why, and a key marked so that is not listed fails the test.
IMPLEMENTATIONS = {
    "phy.codec": "the RS codec: every codeword encoded and decoded, or only those the channel touched",
    "port.codec": "the RS codec of every port: every codeword, or only those the channel touched",
    "llr.impl": "the LLR transmitter and receiver: the C++ models or their RTL twins, cycle for cycle the same",
    "cbfc.impl": "the CBFC sender: the C++ model or its RTL twin, cycle for cycle the same",
    "nic.icrc.impl": "the received ICRC: computed by the C++ model or by its RTL twin, the same value",
}
# The one figure of the codec's own work (the exact codec decodes every codeword, the fast one
# those the channel touched), left out of the codecs' comparison as PhyLink.FastAndExactCodecs-
# GiveIdenticalResults leaves it out: a stat ending so and a summary leaf so named.
CODEC_WORK = "decoded_codewords"


def without_codec_work(node):
    if isinstance(node, dict):
        return {k: without_codec_work(v) for k, v in node.items() if not k.endswith(CODEC_WORK)}
    return node

# A run that takes longer has a value that makes it too big for this test (or hangs).
TIMEOUT_S = 60

INPUTS = ("config", "scenario", "seed", "xysim_version", "schema_version")


USED = set()  # the table rows that matched a key: a row that matches none is stale


def first_match(table, scenario, key):
    for row in table:
        scenario_glob, key_glob, value = row
        if fnmatch.fnmatchcase(scenario, scenario_glob) and fnmatch.fnmatchcase(key, key_glob):
            USED.add((id(table), scenario_glob, key_glob))
            return value
    return None


def as_text(value):
    """A value as --set takes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return repr(value) if isinstance(value, float) else str(value)


def second_value(p, ref):
    """The generic second value of parameter p, whose value in the reference run is ref."""
    kind, default = p["type"], p["default"]
    if kind == "bool":
        return not ref
    if kind in ("choice", "text"):
        for a in p["allowed"] or []:
            if a != ref and a != default and " " not in a:  # "a topology file path" is not a value
                return a
        return None
    lo, hi = p["min"], p["max"]
    as_int = kind == "int"
    candidates = []
    if ref != 0:
        candidates += [ref * 2, (ref + lo) / 2, lo, hi]
    else:
        candidates += [1, hi / 10, hi]
    for c in candidates:
        if as_int:
            c = int(c)
        if lo <= c <= hi and c != ref and c != default:
            return c
    return None


class Runner:
    def __init__(self, xysim, root):
        self.xysim, self.root = xysim, Path(root)
        self.count = 0

    def run(self, scenario, sets, tag):
        out = self.root / tag
        argv = [self.xysim, "run", scenario, "--quiet", "--out", str(out)]
        for k, v in sets.items():
            argv += ["--set", f"{k}={as_text(v)}"]
        start = time.monotonic()
        try:
            r = subprocess.run(argv, capture_output=True, text=True, timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            shutil.rmtree(out, ignore_errors=True)
            return {"argv": argv, "rc": "timeout", "stderr": f"still running after {TIMEOUT_S} s", "results": None,
                    "wall": TIMEOUT_S}
        wall = time.monotonic() - start
        results = out / "results.json"
        data = results.read_bytes() if r.returncode in (0, 1) and results.exists() else None
        shutil.rmtree(out, ignore_errors=True)
        return {"argv": argv, "rc": r.returncode, "stderr": r.stderr.strip(), "results": data, "wall": wall}


def strip_provenance(node):
    """The summary without the figures its provenance objects mark configured or derived."""
    if isinstance(node, dict):
        prov = node.get("provenance")
        out = {}
        for k, v in node.items():
            if k == "provenance":
                continue
            if isinstance(prov, dict) and prov.get(k) in ("configured", "derived"):
                continue
            out[k] = strip_provenance(v)
        return out
    if isinstance(node, list):
        return [strip_provenance(v) for v in node]
    return node


def measured(results_bytes):
    r = json.loads(results_bytes)
    for k in INPUTS:
        r.pop(k, None)
    r["summary"] = strip_provenance(r.get("summary"))
    return r


def command(run):
    return shlex.join(run["argv"][:1] + run["argv"][1:])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("xysim")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", default="", help="only these scenarios, comma-separated")
    ap.add_argument("--key", default="*", help="only keys matching this glob")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    xysim = os.path.abspath(args.xysim)

    listed = subprocess.run([xysim, "scenarios"], capture_output=True, text=True, check=True).stdout
    scenarios = [line.split()[0] for line in listed.splitlines() if line.strip()]
    problems = []
    missing = [s for s in scenarios if s not in SHORT]
    if missing:
        problems.append(f"scenarios without a short run in SHORT: {', '.join(missing)}")
    if args.only:
        scenarios = [s for s in scenarios if s in args.only.split(",")]

    plans = []  # (scenario, param, reference sets, variant sets)
    listings = []  # (name, scenario, sets of every run)
    for s in scenarios:
        listings.append((s, s, {}))
        for v in VARIANTS.get(s, []):
            listings.append((s + "@" + ",".join(f"{k}={as_text(x)}" for k, x in v.items()), s, v))
    for name, s, fixed in listings:
        argv = [xysim, "params", s, "--json"]
        for k, v in fixed.items():
            argv += ["--set", f"{k}={as_text(v)}"]
        params = json.loads(subprocess.run(argv, capture_output=True, text=True, check=True).stdout)
        for p in params:
            key = p["key"]
            if not fnmatch.fnmatchcase(key, args.key):
                continue
            if p.get("implementation") and key not in IMPLEMENTATIONS:
                problems.append(f"{s}: {key} is an implementation choice not in IMPLEMENTATIONS")
            ref = dict(SHORT.get(s, {}))
            ref.update(fixed)
            ref.update(first_match(PAIRING, name, key) or {})
            ref_value = ref.get(key, p["default"])
            value = first_match(VALUE, name, key)
            if value is None:
                value = second_value(p, ref_value)
            if value is None:
                problems.append(f"{name}: {key}: no second value (type {p['type']}, allowed {p['allowed']})")
                continue
            if value == ref_value:
                problems.append(f"{name}: {key}: its second value {value!r} is the reference run's")
                continue
            var = dict(ref)
            var[key] = value
            plans.append((name, s, p, ref, var))

    if not args.only and args.key == "*":
        for name, table in (("VALUE", VALUE), ("PAIRING", PAIRING)):
            for scenario_glob, key_glob, _ in table:
                if (id(table), scenario_glob, key_glob) not in USED:
                    problems.append(f"{name} row ({scenario_glob!r}, {key_glob!r}) matches no key of any scenario")

    root = tempfile.mkdtemp(prefix="inert-keys-")
    runner = Runner(xysim, root)
    refs = {}  # (scenario, sorted sets) -> future
    start = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        jobs = []
        for i, (name, s, p, ref, var) in enumerate(plans):
            rk = (s, tuple(sorted((k, as_text(v)) for k, v in ref.items())))
            if rk not in refs:
                refs[rk] = pool.submit(runner.run, s, ref, f"ref{len(refs)}")
            jobs.append((name, p, refs[rk], pool.submit(runner.run, s, var, f"var{i}"), var[p["key"]]))
        inert = []
        for s, p, ref_f, var_f, value in jobs:
            key = p["key"]
            ref, var = ref_f.result(), var_f.result()
            what = f"{s}: {key}={as_text(value)}"
            if ref["rc"] not in (0, 1) or ref["results"] is None:
                problems.append(f"{what}: the reference run exits {ref['rc']}: {ref['stderr']}\n    {command(ref)}")
                continue
            if var["rc"] not in (0, 1, 2):
                problems.append(f"{what}: exit {var['rc']}: {var['stderr']}\n    {command(var)}")
                continue
            if key in IMPLEMENTATIONS:
                if var["rc"] == 2:  # the twin cannot run this scenario, and says so before it starts
                    if len(var["stderr"].splitlines()) != 1:
                        problems.append(f"{what}: exit 2 without one line on stderr\n    {command(var)}")
                    elif args.verbose:
                        print(f"ok: {what}: refused: {var['stderr']}")
                elif (var["results"] != ref["results"] if not key.endswith(".codec") else
                      without_codec_work(json.loads(var["results"])) != without_codec_work(json.loads(ref["results"]))):
                    problems.append(f"{what}: results.json not byte-identical to the reference's "
                                    f"({IMPLEMENTATIONS[key]})\n    {command(ref)}\n    {command(var)}")
                elif args.verbose:
                    print(f"ok: {what}: identical ({IMPLEMENTATIONS[key]})")
                continue
            if var["rc"] == 2:
                lines = var["stderr"].splitlines()
                if len(lines) != 1:
                    problems.append(f"{what}: exit 2 with {len(lines)} lines on stderr\n    {command(var)}")
                elif args.verbose:
                    print(f"ok: {what}: refused: {lines[0]}")
                continue
            if var["results"] is None:
                problems.append(f"{what}: exit {var['rc']} without results.json\n    {command(var)}")
                continue
            if measured(var["results"]) == measured(ref["results"]):
                a, b = json.loads(var["results"]), json.loads(ref["results"])
                a.pop("config"), b.pop("config")
                moved = "only configured or derived figures move" if a != b else "nothing moves"
                inert.append(f"{what}: {moved}\n    {command(ref)}\n    {command(var)}")
            elif args.verbose:
                print(f"ok: {what}")
    shutil.rmtree(root, ignore_errors=True)
    wall = time.monotonic() - start
    runs = [f.result() for f in refs.values()] + [j[3].result() for j in jobs]
    for r in sorted(runs, key=lambda r: -r["wall"])[:5]:
        print(f"slowest: {r['wall']:.1f} s  {command(r)}")
    for line in inert:
        print(f"INERT {line}")
    for line in problems:
        print(f"FAIL {line}")
    print(f"{len(plans)} keys over {len(scenarios)} scenarios, {len(plans) + len(refs)} runs in {wall:.0f} s "
          f"({args.jobs} at a time): {len(inert)} inert, {len(problems)} other failures")
    return 1 if inert or problems else 0


if __name__ == "__main__":
    sys.exit(main())
