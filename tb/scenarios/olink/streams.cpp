// The OLink all-to-alls' streams (streams.hpp).
#include "tb/scenarios/olink/streams.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace xy::olink_tb {

std::uint64_t delivered(const olink::StoreStreamer& s) {
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  if (now >= s.finished_at() || s.finished_at() <= s.started_at()) return s.bytes_moved();
  return static_cast<std::uint64_t>(static_cast<double>(s.bytes_moved()) * ((now - s.started_at()) / (s.finished_at() - s.started_at())));
}

olink::StreamSpec declare_streams(Config& c, const std::string& prefix, std::int64_t bytes_per_gpu,
                                  std::uint64_t seed, std::int64_t bytes) {
  const std::string k = prefix + ".";
  olink::StreamSpec spec;
  spec.gpus = static_cast<std::uint32_t>(c.integer(k + "gpus", 8, "GPUs", 2, 512, "GPUs on the switch"));
  spec.bytes = static_cast<std::uint32_t>(
      c.integer(k + "bytes", bytes, "bytes", 8, 1 << 20, "bytes per write: a Store up to 256, an RDMA-style bulk write above"));
  const auto per_gpu = static_cast<std::uint64_t>(c.integer(k + "bytes_per_gpu", bytes_per_gpu, "bytes", 256, 1ll << 34,
                                                            "what each GPU sends, spread over the others"));
  if (per_gpu < spec.bytes)
    throw ConfigError(fmt::format("{}bytes_per_gpu = {}: less than one write ({}bytes = {}); allowed: at least {}", k,
                                  per_gpu, k, spec.bytes, spec.bytes));
  spec.count = static_cast<std::uint32_t>(per_gpu / spec.bytes);
  // StreamSpec's 2048: the least power of two that bounds no fabric of olink-alltoall's default
  // (OLink RS(544), 8 GPUs: 133.3 GB/s at 1024, 162.3 at 1536, 169.0 at 2048 and at 4096).
  spec.outstanding = static_cast<std::uint32_t>(c.integer(k + "outstanding", spec.outstanding, "writes", 1, 65536,
                                                          "writes a GPU keeps in flight"));
  const std::string pattern = c.choice(k + "pattern", "alltoall", olink::kPatternNames,
                                       "destinations: round robin over the others, random, or the next on a ring");
  spec.pattern = static_cast<olink::Pattern>(std::find(olink::kPatternNames.begin(), olink::kPatternNames.end(), pattern) -
                                             olink::kPatternNames.begin());
  spec.seed = seed;
  return spec;
}

double stream_memory_bytes(const olink::StreamSpec& spec) {
  const double in_flight = std::min(spec.count, spec.outstanding);
  return spec.loosely_timed ? 16 * in_flight : (200.0 + 256) * in_flight;
}

}  // namespace xy::olink_tb
