// PcieLink: the Tianyi NIC's host side as a timing core without SystemC: one PCIe link, its two
// directions each a serializer of TLPs at the link's data rate, the one-way latency between the
// NIC and the host's memory controller, and the host memory's read latency. The NIC asks it when
// a DMA read's last byte arrives, when a posted write's last byte is in memory, and when a
// doorbell the host rang reaches the NIC.
//
// Cycle contract: none of its own (simulated times). A transfer takes the first idle stretch
// of its direction from the time it is asked for, so one booked for later (a read's
// completions) does not hold back one that fits before it. Exact: the bytes each transfer puts
// on the wire (payload cut into TLPs of at most max_payload, each with its framing token, header
// and LCRC; read requests of at most max_read_request, header only) at lanes x GT/s x 128/130.
// Abstracted: DLLPs (ACKs and flow-control updates, a few per cent of the wire), credits,
// replay, the root complex and IOMMU (within the fixed latency), completions split at
// read-completion boundaries.
#pragma once
#include <cstdint>
#include <map>
#include <string>

#include "kernel/units.hpp"

namespace xy::nic {

struct PcieConfig {
  int lanes = 16;
  double gts = 32;                        // GT/s a lane: Gen5 (Gen3 on: 128b/130b)
  std::uint32_t max_payload = 256;        // MPS: payload bytes a TLP
  // MRRS: bytes a read request asks for. Not a key: the requests only take upstream bytes (24
  // each), and the completions follow the first (none of the NIC's runs feels it).
  std::uint32_t max_read_request = 512;
  Time latency = 250 * kNs;               // one way, NIC to the host's memory controller
  Time memory_latency = 100 * kNs;        // a host memory read, from request to first data
  // Bytes a ns each way, after 128b/130b: 63.0 for Gen5 x16.
  double bytes_per_ns() const { return lanes * gts * 128.0 / 130.0 / 8.0; }
  void validate(const std::string& prefix) const;  // throws ConfigError naming prefix.key
};

// Wire bytes of a TLP besides its payload (PCIe Gen3 and later): a 4-byte framing token (STP,
// with the sequence number) and a 4-byte LCRC around the header: 16 bytes for a memory request
// with a 64-bit address, 12 for a completion.
inline constexpr std::uint32_t kMemoryTlpOverhead = 4 + 16 + 4;
inline constexpr std::uint32_t kCompletionTlpOverhead = 4 + 12 + 4;
inline constexpr std::uint32_t kDoorbellBytes = 8;

class PcieLink {
 public:
  explicit PcieLink(const PcieConfig& config);

  // The NIC reads `bytes` of host memory, asked at `now`: when the last byte is at the NIC. The
  // requests go up back to back; the completions come down once the first has reached memory.
  Time read(std::uint64_t bytes, Time now);
  // The NIC writes `bytes` to host memory (posted), at `now`: when the last byte is in memory.
  Time write(std::uint64_t bytes, Time now);
  // The host rings a doorbell (an 8-byte write to the NIC's BAR) at `now`: when the NIC has it.
  Time doorbell(Time now);

  // How long completions carrying `bytes` of read data hold the downstream direction.
  Time completion_time(std::uint64_t bytes) const;

  // Wire bytes sent so far each way, and the longest a transfer waited for its direction.
  std::uint64_t upstream_bytes() const { return wire_[kUp]; }
  std::uint64_t downstream_bytes() const { return wire_[kDown]; }
  Time upstream_peak_wait() const { return peak_wait_[kUp]; }
  Time downstream_peak_wait() const { return peak_wait_[kDown]; }
  const PcieConfig& config() const { return cfg_; }

 private:
  static constexpr int kUp = 0, kDown = 1;  // NIC to host, host to NIC
  Time wire_time(std::uint64_t bytes) const;
  // `bytes` on direction d, from `at` or when it is free: when the last byte has left.
  Time send(int d, std::uint64_t bytes, Time at);
  PcieConfig cfg_;
  static constexpr Time kForget = kMs;  // busy stretches this far behind a request are dropped
  std::map<Time, Time> busy_[2];        // each direction's booked stretches, start to end, merged
  std::uint64_t wire_[2] = {0, 0};
  Time peak_wait_[2] = {0, 0};
};

}  // namespace xy::nic
