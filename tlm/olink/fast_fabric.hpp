// FastFabric: an approximately timed OLink fabric — N GPUs on one switch — for systems too large
// for the cycle-level one. No per-cycle work: a transaction's completion time is computed once,
// when it is issued, from the stages of the cycle-level fabric (NIC egress and ingress, links,
// switch core, HBM) and three kinds of shared resource booked on calendars: each GPU's line
// (frame, FCS, preamble and gap at `width` bytes a cycle), each switch output (whole beats of
// `switch_width`), each GPU's memory (`memory_width` bytes a cycle). A bulk write is booked as one
// train of frames, not frame by frame: its cost does not grow with its length. With `uplink`
// every frame also crosses one uplink all GPUs share (a fourth resource, whole beats of
// `switch_width`), `uplink` cycles there and back, and the switch again (the PCIe-switch preset).
//
// Cycle contract: NOT cycle-accurate. Calendars count bytes in buckets of 64 cycles and are fluid
// inside a bucket, so a transfer may end up to a bucket early or late; a train occupies each
// resource as one block; requests are served at the owner in issue order, and the memory effect
// of a request (stores, atomics) happens when it is issued. Calibrated against the cycle-level
// fabric by `olink-fast`: a load's latency is exact at zero load, an all-to-all's bandwidth
// within 2 % (Stores or bulk writes, posted at once or a few at a time, 8 to 64 GPUs, round
// robin, ring or random destinations; docs/olink.md) — but up to 10 % high for random bulk
// writes with few in flight: transfers that meet at an output are served one after the other,
// not interleaved — so, on a shared uplink, which all transfers meet at, 1 % high for 4 GPUs with
// 16 bulk writes each and 13 % for 2 GPUs with one each (0.1 % with 256 each, docs/olink.md).
// No backpressure: a congested output does not hold up the lines feeding it.
// Timing only (`data = false`): the same times, but no memory: Stores write nothing, Loads and
// atomics read zeros — for sweeps that need the timing and not the bytes, whose copying would
// cost more than the timing (see docs/olink.md).
// The error rules are the OlinkEndpoint's; b_transport is loosely timed (returns at once, the
// completion in the annotated delay), AT as the endpoint's.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include <systemc>
#include <tlm>

#include "tlm/olink/endpoint.hpp"
#include "tlm/olink/memory.hpp"
#include "kernel/units.hpp"

namespace xy::olink {

struct FastParams {
  EndpointParams endpoint;
  Time period = 0;
  Cycle link = 1;                 // one link, cycles
  Cycle switch_core = 0;          // the switch, parser to egress, cycles
  std::uint32_t switch_width = 64;  // switch beat, bytes
  Cycle uplink = 0;               // 0: none; else the shared uplink from the switch and back, cycles
  bool data = true;               // false: timing only, no memory
};

// Books transfers on a resource of `rate` bytes a cycle.
class Calendar {
 public:
  explicit Calendar(std::uint32_t rate) : rate_(rate) {}
  // Books `bytes` from cycle `ready` on; returns the cycle of the last byte. `now` lets old
  // buckets go.
  Cycle book(Cycle ready, std::uint64_t bytes, Cycle now);

 private:
  static constexpr Cycle kBucket = 64;  // a power of 2; coarser is faster; 1, 4, 64 give the same bandwidth within 0.1 %
  std::uint64_t& used(Cycle bucket);   // bytes booked in a bucket at or after `first_`

  std::uint64_t rate_;
  std::vector<std::uint64_t> ring_ = std::vector<std::uint64_t>(64);  // bucket b at b % size; size a power of 2
  Cycle first_ = 0, end_ = 0;  // buckets [first_, end_) may hold bookings
  Cycle full_from_ = 0, full_until_ = 0;  // a run of full buckets, to skip
};

class FastFabric : public sc_core::sc_module {
 public:
  FastFabric(const sc_core::sc_module_name& name, const FastParams& params);
  ~FastFabric() override;
  tlm::tlm_target_socket<>& socket(std::uint32_t gpu);
  Memory& memory(std::uint32_t gpu);

 private:
  struct Port;
  // Frames sent back to back: `frames` of `bytes` (Ethernet and OLink headers and data, no FCS),
  // the last of `last_bytes`.
  struct Train {
    std::uint32_t frames, bytes, last_bytes;
  };
  struct Span {
    Cycle first, last;
  };
  struct Arrivals {
    Cycle first, next_to_last, last;  // next_to_last: a train of one has none
  };
  // Runs the transaction and returns when (in fs) its response is back.
  Time carry(std::uint32_t src, tlm::tlm_generic_payload& trans, Time issued);
  // The memory effect of a transaction, at its owner.
  void execute(std::uint32_t src, tlm::tlm_generic_payload& trans);
  // Books a train from one GPU to another, its first frame ready to leave at `ready.first`, its
  // last no earlier than `ready.last`; returns the cycles the receiving NIC hands on its first,
  // next-to-last and last frame.
  Arrivals send(std::uint32_t src, std::uint32_t dst, const Train& train, Span ready, Cycle now);

  FastParams params_;
  std::vector<std::unique_ptr<Port>> ports_;
  std::vector<Calendar> lines_, outputs_, memories_;
  Calendar uplink_;  // booked only with params_.uplink
  std::vector<Memory> memory_;
  std::vector<std::uint8_t> payload_, data_;  // reused by every transaction
  std::uint32_t next_txn_ = 1;
};

}  // namespace xy::olink
