#include "tb/bench/otn_bench.hpp"

#include <chrono>
#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "hw/otn/gmp.hpp"
#include "hw/otn/otu4.hpp"
#include "kernel/rng.hpp"

namespace xy {
namespace {

using Wall = std::chrono::steady_clock;

struct Row {
  double source_s = 0, sink_s = 0;  // mapper + framer; deframer + de-mapper
  std::uint64_t client_bytes = 0, corrected = 0, uncorrectable = 0;
  bool intact = true;  // every client byte out as it went in
};

Row measure(std::uint64_t frames, double ber) {
  // The client at its nominal rate against the nominal frame period.
  const double client_per_frame = 103.125e9 / 8 * static_cast<double>(otn::frame_period()) * 1e-15;
  const auto client_byte = [](std::uint64_t i) { return static_cast<std::uint8_t>(i * 0x9E3779B1u >> 11); };
  otn::GmpMapper mapper;
  otn::Framer framer;
  otn::Deframer deframer;
  otn::GmpDemapper demapper;
  std::vector<std::uint8_t> client, out, payload(otn::kPayloadBytes);
  Rng rng(1, "bench.otn");
  Row row;
  std::uint64_t sent = 0, checked = 0;
  deframer.on_frame = [&](const otn::Frame& f, const otn::Backward&) { demapper.take(f, out); };
  // In batches, so that the timed loops neither fault pages in nor grow buffers.
  constexpr std::uint64_t kBatch = 32;
  std::vector<otn::Frame> line(kBatch);
  for (std::uint64_t done = 0; done < frames; done += kBatch) {
    const std::uint64_t n = std::min(kBatch, frames - done);
    auto start = Wall::now();
    for (std::uint64_t i = 0; i < n; ++i) {
      const auto total = static_cast<std::uint64_t>(client_per_frame * static_cast<double>(done + i + 1));
      client.clear();
      for (; sent < total; ++sent) client.push_back(client_byte(sent));
      mapper.push(client.data(), client.size());
      otn::JcBytes jc;
      mapper.next(payload.data(), jc);
      framer.next(payload.data(), line[i], {}, jc);
    }
    row.source_s += std::chrono::duration<double>(Wall::now() - start).count();
    if (ber > 0)  // bit errors, each bit with chance `ber`: skip-sampled
      for (std::uint64_t i = 0; i < n; ++i)
        for (std::uint64_t bit = rng.geometric(ber) - 1; bit < otn::kFrameBytes * 8; bit += rng.geometric(ber))
          line[i][bit / 8] ^= static_cast<std::uint8_t>(0x80 >> bit % 8);
    out.clear();
    start = Wall::now();
    for (std::uint64_t i = 0; i < n; ++i) deframer.push(line[i].data(), otn::kFrameBytes);
    row.sink_s += std::chrono::duration<double>(Wall::now() - start).count();
    for (std::uint8_t b : out) row.intact &= b == client_byte(checked++);
  }
  row.client_bytes = checked;
  row.corrected = deframer.stats().fec_corrected_symbols;
  row.uncorrectable = deframer.stats().fec_uncorrectable_codewords;
  return row;
}

}  // namespace

int otn_bench(std::uint64_t frames, double ber) {
  const double real_fps = 1e15 / static_cast<double>(otn::frame_period());
  fmt::print("OTU4 path as cores, one core: 100GBASE-R client -> GMP -> framer (GFEC, scrambler) -> line ->\n"
             "deframer (alignment, GFEC decode, BIP-8) -> de-mapper; {} frames (the line itself: {:.0f} frames/s)\n",
             frames, real_fps);
  fmt::print("  {:<13} {:>10} {:>10} {:>8} {:>11} {:>10} {:>10} {:>13} {:>8}\n", "line", "frames/s", "x realtime",
             "source %", "client Gb/s", "corrected", "uncorr.", "client bytes", "intact");
  bool ok = true;
  for (double b : {0.0, ber}) {
    const Row r = measure(frames, b);
    const double wall = r.source_s + r.sink_s;
    const double fps = static_cast<double>(frames) / wall;
    fmt::print("  {:<13} {:>10.0f} {:>10.4f} {:>8.1f} {:>11.2f} {:>10} {:>10} {:>13} {:>8}\n",
               b > 0 ? fmt::format("BER {:g}", b) : "clean", fps, fps / real_fps, 100 * r.source_s / wall,
               static_cast<double>(r.client_bytes) * 8 / wall / 1e9, r.corrected, r.uncorrectable, r.client_bytes,
               r.intact ? "yes" : "NO");
    ok &= r.intact || r.uncorrectable > 0;
  }
  fmt::print("frames/s: frames through both halves per wall second; x realtime: of the OTU4 line's frame rate;\n"
             "source %: the mapper and framer's share of the time; client Gb/s: client bits de-mapped per wall second.\n");
  return ok ? 0 : 1;
}

}  // namespace xy
