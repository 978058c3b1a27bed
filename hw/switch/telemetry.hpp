// In-band telemetry (INT) as HPCC carries it, in the frame's bytes. A data frame that asks for
// it (Packet::telemetry, standing for the INT-enabled DSCP a real fabric would match) ends in a
// 42-byte trailer after its ICRC and before the FCS: a 2-byte hop count, then 5 records of 8
// bytes, each written by a switch egress the frame leaves (the Lingyun switch stamps it as it
// schedules the frame, hw/switch/switch.hpp). The receiver copies the trailer into the ACK it
// answers with. Outside the IP length: the ICRC does not cover it, dissectors read it as an
// Ethernet trailer.
//
// A record is HPCC's IntHop (64 bits, big endian here), its line-rate table extended upwards:
//   bits 63-61  line rate: 25, 50, 100, 200, 400, 800, 1600, 3200 Gb/s
//   bits 60-37  time the frame starts on the line, ns modulo 2^24
//   bits 36-17  bytes the port had started before it, in units of 128, modulo 2^20
//   bits 16-0   bytes queued for the port once it left the queue, in units of 80 (saturating;
//               HPCC's wraps)
// Differences between two records of one port are taken modulo the fields' ranges (16.8 ms,
// 128 MiB), as HPCC's are.
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "kernel/units.hpp"

namespace xy::sw {

inline constexpr int kTelemetryMaxHops = 5;
inline constexpr std::uint32_t kTelemetryBytes = 2 + 8 * kTelemetryMaxHops;
inline constexpr std::uint32_t kTelemetryByteUnit = 128, kTelemetryQueueUnit = 80;
inline constexpr std::array<double, 8> kTelemetryRates{25, 50, 100, 200, 400, 800, 1600, 3200};  // Gb/s

struct TelemetryHop {
  std::uint32_t time_ns = 0;   // 24 bits
  std::uint32_t tx_units = 0;  // 20 bits
  std::uint32_t queue_units = 0;
  int rate_code = 0;
  double line_gbps() const { return kTelemetryRates[static_cast<std::size_t>(rate_code)]; }
  std::uint64_t queue_bytes() const { return std::uint64_t{queue_units} * kTelemetryQueueUnit; }
  // Since an earlier record of the same port.
  std::uint32_t ns_since(const TelemetryHop& before) const { return (time_ns - before.time_ns) & 0xFFFFFFu; }
  std::uint64_t bytes_since(const TelemetryHop& before) const {
    return std::uint64_t{(tx_units - before.tx_units) & 0xFFFFFu} * kTelemetryByteUnit;
  }
};

struct TelemetryRecords {
  int hops = 0;  // stamped, however many were kept
  std::array<TelemetryHop, kTelemetryMaxHops> hop{};
};

inline int telemetry_rate_code(double line_gbps) {
  for (std::size_t i = 0; i < kTelemetryRates.size(); ++i)
    if (std::abs(kTelemetryRates[i] - line_gbps) < 1e-6 * line_gbps) return static_cast<int>(i);
  throw std::logic_error(fmt::format("INT: a port of {:g} Gb/s has no line-rate code (25 to 3200 Gb/s by doubling)",
                                     line_gbps));
}

// Appends an empty trailer to a frame's bytes (FCS not included).
inline void append_telemetry(std::vector<std::uint8_t>& frame) { frame.insert(frame.end(), kTelemetryBytes, 0); }

// Writes the next record into the trailer at the end of `frame`.
inline void stamp_telemetry(std::vector<std::uint8_t>& frame, Time at, std::uint64_t tx_bytes,
                            std::uint64_t queue_bytes, int rate_code) {
  if (frame.size() < kTelemetryBytes) throw std::logic_error("INT: a frame too short for its trailer");
  std::uint8_t* t = frame.data() + frame.size() - kTelemetryBytes;
  const unsigned hops = static_cast<unsigned>(t[0]) << 8 | t[1];
  if (hops < static_cast<unsigned>(kTelemetryMaxHops)) {
    const std::uint64_t ns = static_cast<std::uint64_t>(at / kNs) & 0xFFFFFF;
    const std::uint64_t units = (tx_bytes / kTelemetryByteUnit) & 0xFFFFF;
    const std::uint64_t queue = std::min<std::uint64_t>(queue_bytes / kTelemetryQueueUnit, 0x1FFFF);
    const std::uint64_t word = std::uint64_t(rate_code) << 61 | ns << 37 | units << 17 | queue;
    for (int b = 0; b < 8; ++b) t[2 + 8 * hops + b] = static_cast<std::uint8_t>(word >> (56 - 8 * b));
  }
  const unsigned next = std::min(hops + 1, 0xFFFFu);
  t[0] = static_cast<std::uint8_t>(next >> 8);
  t[1] = static_cast<std::uint8_t>(next);
}

// The records of the trailer at the end of a frame of `size` bytes (FCS not included).
inline TelemetryRecords read_telemetry(const std::uint8_t* frame, std::size_t size) {
  TelemetryRecords r;
  if (size < kTelemetryBytes) return r;
  const std::uint8_t* t = frame + size - kTelemetryBytes;
  r.hops = t[0] << 8 | t[1];
  for (int i = 0; i < std::min(r.hops, kTelemetryMaxHops); ++i) {
    std::uint64_t w = 0;
    for (int b = 0; b < 8; ++b) w = w << 8 | t[2 + 8 * i + b];
    r.hop[i] = {static_cast<std::uint32_t>(w >> 37 & 0xFFFFFF), static_cast<std::uint32_t>(w >> 17 & 0xFFFFF),
                static_cast<std::uint32_t>(w & 0x1FFFF), static_cast<int>(w >> 61)};
  }
  return r;
}

}  // namespace xy::sw
