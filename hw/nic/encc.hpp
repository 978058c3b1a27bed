// ENCC, the Tianyi NIC's congestion control from in-band telemetry, taken to be HPCC (Li et al.,
// "HPCC: High Precision Congestion Control", SIGCOMM'19) as its authors' ns-3 code runs it
// (alibaba-edu/High-Precision-Congestion-Control, rdma-hw.cc: HandleAckHp, UpdateRateHp): the
// public mechanism closest to what the seed describes (rates from the switches' own queue and
// link measurements, carried in the packets). A plain C++ core of one flow, driven by ACKs; the
// NIC paces the flow at rate(), keeps at most window_bytes() unacknowledged, and carries the
// telemetry.
//
// Per ACK carrying the records of the data packet it answers (one per switch hop), for each
// hop i against the record the previous ACK carried for it:
//   u_i = txRate_i / B_i + min(qlen_i, qlen_i_before) / (B_i T),  txRate_i = Δbytes / Δt,
// U = the largest u_i, its Δt the τ of the update; the estimate u ← (u (T − τ) + U τ) / T with
// τ capped at T. Then, from the reference rate R_c:
//   R = R_c / (u / η) + R_AI  when u ≥ η or `max_stage` additive steps have passed,
//   R = R_c + R_AI            otherwise (a stage counted),
// clamped to [min_rate, line rate]. R_c (and the stage) are committed only once a round trip,
// by the first ACK beyond what had been sent at the last commit; the ACKs between react at once
// from the committed R_c (fast reaction) without committing. The window is B_nic T R / B_nic,
// the bytes the rate keeps in flight over the base round trip. The flow's first ACK only
// stores its records: the flow starts at line rate.
//
// Records are compared hop by hop, which assumes the flow keeps its path (ECMP per flow).
//
// Exact: the arithmetic above on the records as the trailer carries them
// (hw/switch/telemetry.hpp: 128-byte and 80-byte units, as ns-3's with INT_MULTI 1).
// Abstracted: the sampling and multi-rate variants (off in the authors' runs).
#pragma once
#include <array>
#include <cstdint>
#include <string>

#include "hw/switch/telemetry.hpp"
#include "kernel/units.hpp"

namespace xy::nic {

struct EnccConfig {
  double line_bps = 100e9;      // the NIC's rate: the ceiling, and the rate before feedback
  Time base_rtt = 4 * kUs;      // T: the fabric's longest zero-load round trip
  double eta = 0.95;            // target utilisation η
  int max_stage = 0;            // additive steps before a multiplicative one (0: HPCC's runs)
  double rai_bps = 40e6;        // R_AI = W_AI / T
  double min_rate_bps = 1e9;    // the floor
  bool fast_react = true;       // react on every ACK, committing once a round trip
  // The HPCC authors' settings for a line of `line_bps` (run.py --cc hp): R_AI 10 Mb/s per
  // 25 Gb/s of line, a floor of 1 Gb/s, η 0.95, no additive stages.
  static EnccConfig hpcc(double line_bps, Time base_rtt);
  double window_bytes_at_line() const { return line_bps * to_ns(base_rtt) / 8e9; }  // B T
  void validate(const std::string& prefix) const;  // throws ConfigError naming prefix.key
};

// HPCC's u of one hop between two of its records (a later `now`, an earlier `before`, apart in
// time): txRate / B + min(qlen, qlen before) / (B T).
double hop_utilisation(const sw::TelemetryHop& now, const sw::TelemetryHop& before, double base_rtt_ns);

struct EnccStats {
  std::uint64_t acks = 0;       // ACKs whose records were used
  std::uint64_t commits = 0;    // once-a-round-trip updates
  std::uint64_t skipped = 0;    // ACKs with no records, or more hops than kept
};

class EnccController {
 public:
  explicit EnccController(const EnccConfig& config);

  // An ACK (or NAK) acknowledging everything before `acked_psn` arrived with telemetry `t`;
  // `next_psn` is the PSN the flow puts on the wire next (what the next commit waits to see
  // acknowledged: HPCC's snd_nxt).
  void on_ack(const sw::TelemetryRecords& t, std::uint32_t acked_psn, std::uint32_t next_psn);

  double rate() const { return rate_; }
  double committed_rate() const { return committed_; }
  double lowest_rate() const { return lowest_; }  // the lowest it has set
  double utilisation() const { return u_; }  // the estimate u
  // Bytes the flow may have unacknowledged: B T R / B, at least one byte.
  double window_bytes() const;
  const EnccStats& stats() const { return stats_; }

 private:
  EnccConfig cfg_;
  double rate_, committed_, lowest_;
  double u_ = 1;
  int stage_ = 0;
  bool started_ = false;
  std::uint32_t last_update_psn_ = 0;
  int hops_ = 0;
  std::array<sw::TelemetryHop, sw::kTelemetryMaxHops> last_{};
  EnccStats stats_;
};

}  // namespace xy::nic
