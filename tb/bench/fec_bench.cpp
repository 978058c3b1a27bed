#include "tb/bench/fec_bench.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "hw/phy/reed_solomon.hpp"
#include "kernel/rng.hpp"
#include "tb/bench/median.hpp"

namespace xy {
namespace {

using Clock = std::chrono::steady_clock;

// Enough distinct codewords that the timed loop does not replay one cached word, few enough
// that they stay in L2 next to the codec's tables.
constexpr int kWords = 64;

struct Point {
  double gbps = 0;
  double ns_per_word = 0;
};

// Calls `pass` (one sweep over all kWords words) until `seconds` have gone by.
template <typename Pass>
Point measure(const phy::ReedSolomon& rs, double seconds, Pass pass) {
  pass();  // warm the caches and the decoder's per-thread scratch
  std::uint64_t words = 0;
  const auto start = Clock::now();
  double elapsed = 0;
  do {
    pass();
    words += kWords;
    elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  } while (elapsed < seconds);
  const double bits = static_cast<double>(words) * rs.n() * rs.code().m;
  return {bits / elapsed / 1e9, elapsed * 1e9 / static_cast<double>(words)};
}

}  // namespace

int fec_bench(double seconds_per_point) {
  fmt::print("FEC codec throughput, one core, Gb/s of codeword bits ({:.2f} s per point)\n", seconds_per_point);
  fmt::print("{:<7} {:>5} {:>5} {:>3} {:>6} | {:>10} {:>10} | {:>10} {:>10} | {:>10} {:>10}\n", "code", "n", "k", "t",
             "bits", "enc Gb/s", "enc ns", "dec0 Gb/s", "dec0 ns", "decT Gb/s", "decT ns");
  bool all_right = true;
  for (const phy::RsCode& code : {phy::rs544(), phy::rs272(), phy::rs255()}) {
    const phy::ReedSolomon rs(code);
    const int n = rs.n();
    const std::size_t bytes = sizeof(std::uint16_t) * n;
    Rng rng(1, "bench.fec." + code.name);

    std::vector<std::uint16_t> clean(static_cast<std::size_t>(kWords) * n);
    for (int w = 0; w < kWords; ++w) {
      std::uint16_t* word = &clean[static_cast<std::size_t>(w) * n];
      for (int i = 0; i < rs.k(); ++i) word[i] = static_cast<std::uint16_t>(rng.below(rs.field().size()));
      rs.encode(word);
    }
    // Each corrupted word has exactly t symbol errors at distinct positions.
    std::vector<std::uint16_t> corrupted = clean;
    for (int w = 0; w < kWords; ++w) {
      std::uint16_t* word = &corrupted[static_cast<std::size_t>(w) * n];
      std::vector<int> positions;
      while (static_cast<int>(positions.size()) < rs.t()) {
        const int p = static_cast<int>(rng.below(n));
        if (std::find(positions.begin(), positions.end(), p) == positions.end()) positions.push_back(p);
      }
      for (int p : positions) word[p] ^= static_cast<std::uint16_t>(1 + rng.below(rs.field().size() - 1));
    }
    std::vector<std::uint16_t> encode_buf = clean, work(n);

    const Point enc = measure(rs, seconds_per_point, [&] {
      for (int w = 0; w < kWords; ++w) rs.encode(&encode_buf[static_cast<std::size_t>(w) * n]);
    });
    int wrong = 0;
    const Point dec0 = measure(rs, seconds_per_point, [&] {
      for (int w = 0; w < kWords; ++w) {
        const phy::DecodeResult r = rs.decode(&clean[static_cast<std::size_t>(w) * n]);
        wrong += !r.ok || r.corrected != 0;
      }
    });
    // Decoding corrects in place, so each word is copied into `work` first; the copy (n * 2
    // bytes) is inside the timing and is a few tens of ns against microseconds of decoding.
    const Point dec_t = measure(rs, seconds_per_point, [&] {
      for (int w = 0; w < kWords; ++w) {
        std::memcpy(work.data(), &corrupted[static_cast<std::size_t>(w) * n], bytes);
        const phy::DecodeResult r = rs.decode(work.data());
        wrong += !r.ok || r.corrected != rs.t() ||
                 std::memcmp(work.data(), &clean[static_cast<std::size_t>(w) * n], bytes) != 0;
      }
    });
    wrong += encode_buf != clean;
    if (wrong) {
      fmt::print("{}: {} wrong results\n", code.name, wrong);
      all_right = false;
    }
    fmt::print("{:<7} {:>5} {:>5} {:>3} {:>6} | {:>10.2f} {:>10.0f} | {:>10.2f} {:>10.0f} | {:>10.2f} {:>10.0f}\n",
               code.name, n, rs.k(), rs.t(), n * code.m, enc.gbps, enc.ns_per_word, dec0.gbps, dec0.ns_per_word,
               dec_t.gbps, dec_t.ns_per_word);
  }
  return all_right ? 0 : 1;
}

int fec_mode_bench(const char* self, double ber, int repeats) {
  char dir_template[] = "/tmp/xysim-bench-XXXXXX";
  const char* dir = mkdtemp(dir_template);
  if (!dir) throw std::runtime_error("cannot make a temporary folder");
  auto rate = [&](const char* codec) {  // simulated microseconds per wall second
    const std::string out = std::string(dir) + "/" + codec;
    const std::string cmd = fmt::format(
        "'{}' run phy-loopback --quiet --set phy.codec={} --set phy.errors.ber={} --set traffic.frames=100000 "
        "--out '{}' > /dev/null",
        self, codec, ber, out);
    if (std::system(cmd.c_str()) != 0) throw std::runtime_error("failed: " + cmd);
    std::ifstream run(out + "/run.json");
    return nlohmann::json::parse(run)["sim_time_per_wall_s_us"].get<double>();
  };
  std::vector<double> exact, fast;
  for (int r = 0; r < repeats; ++r) {  // alternate: the machine is noisy
    exact.push_back(rate("exact"));
    fast.push_back(rate("fast"));
  }
  const double e = median(exact), f = median(fast);
  std::cout << fmt::format("\nphy-loopback (rs544, 4 lanes, 100000 frames) at pre-FEC BER {:g}, median of {}:\n", ber,
                           repeats)
            << fmt::format("  exact codec  {:>10.1f} simulated us per wall second\n", e)
            << fmt::format("  fast codec   {:>10.1f} simulated us per wall second  ({:.1f}x exact)\n", f, f / e);
  std::filesystem::remove_all(dir);
  return 0;
}

}  // namespace xy
