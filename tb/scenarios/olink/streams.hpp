// What the OLink all-to-all scenarios share (olink-alltoall, olink-fast): their streams'
// parameters, and the bytes a streamer has delivered, for the watchdog.
#pragma once
#include <cstdint>
#include <string>

#include "kernel/config.hpp"
#include "tb/lib/gpu.hpp"

namespace xy::olink_tb {

// The bytes a streamer has delivered by now, for the watchdog. A loosely timed one (on the fast
// fabric) has each write answered at once with its completion ahead of SystemC's time, up to the
// whole transfer ahead (all 4096 Stores of 1 MiB posted at once, 64 GPUs sharing the PCIe uplink:
// 1.6 ms); its bytes count pro rata over the time from its start to its last answer so far, so
// that the watchdog sees data arriving until then, not a stall.
std::uint64_t delivered(const olink::StoreStreamer& s);

// Declares an all-to-all's parameters (<prefix>.gpus, bytes, bytes_per_gpu, outstanding, pattern).
olink::StreamSpec declare_streams(Config& c, const std::string& prefix, std::int64_t bytes_per_gpu,
                                  std::uint64_t seed, std::int64_t bytes = 256);

// The memory one GPU's streamer takes with `spec`, and its writes in the fabric, about: peak RSS
// of olink-alltoall and olink-fast runs (16 GPUs, 1 to 65536 outstanding) gives about 200 bytes a
// slot (a tlm_generic_payload; the AT protocol makes one for each write it may keep in flight,
// loosely timed one) and about 256 bytes for each write in flight (at most outstanding, at most
// its writes).
double stream_memory_bytes(const olink::StreamSpec& spec);

}  // namespace xy::olink_tb
