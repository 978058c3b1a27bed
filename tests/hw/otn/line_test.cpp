// The OTN line (hw/otn/line.hpp) against what is independent of it: G.709's layout and rates worked
// out here for when a frame must leave and how fast frames can follow one another, and the line
// with every byte carried through the framer and deframer cores for which frames arrive damaged.
#include "hw/otn/line.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "hw/otn/gmp.hpp"

namespace xy::otn {
namespace {

constexpr Time kPeriod = 1000 * kPs;  // the port's clock in these tests: 1 GHz

// A port's MAC as far as the line sees it: frames of the given sizes, one a cycle while the line
// takes them, and what comes out at the far end.
class Port : public Core {
 public:
  struct Out {
    std::uint64_t id;
    bool bad;
    Cycle at;
    std::vector<std::uint8_t> bytes;
  };
  Port(Clock& clock, std::vector<std::size_t> sizes, const std::string& name)
      : Core(name), in(name + ".in", clock, ChannelSpec{1, 2, 1, 2}), out(name + ".out", clock, ChannelSpec{}),
        sizes_(std::move(sizes)) {
    clock.attach(*this);
    set_busy(true);
    wake_at(0);
  }
  void eval() override {
    if (made_ < sizes_.size() && now() >= start && in.can_push()) {
      Packet* f = pool_.acquire();
      f->id = made_;
      f->payload.resize(sizes_[made_]);
      rng_.fill(f->payload.data(), f->payload.size());
      f->bytes = static_cast<std::uint32_t>(f->payload.size());
      sent.push_back(f->payload);
      in.push(f);
      ++made_;
    }
    while (out.can_pop()) {
      Packet* f = out.pop();
      got.push_back({f->id, f->bad, now(), f->payload});
      pool_.release(f);
    }
    if (got.size() == sizes_.size()) set_busy(false);
  }
  Cycle start = 0;
  Channel<Packet*> in, out;
  std::vector<std::vector<std::uint8_t>> sent;
  std::vector<Out> got;

 private:
  std::vector<std::size_t> sizes_;
  std::size_t made_ = 0;
  PacketPool pool_;
  Rng rng_{5, "top.port"};
};

struct Rig {
  Clock clock{"port", kPeriod};
  Stats stats;
  std::unique_ptr<Port> port;
  std::unique_ptr<Line> line;
  Rig(const LineParams& p, std::vector<std::size_t> sizes, Cycle start = 0, std::uint64_t seed = 1) {
    const std::string name = "top";
    port = std::make_unique<Port>(clock, std::move(sizes), name + ".port");
    port->start = start;
    line = std::make_unique<Line>(name + ".otn", p, clock, stats, seed, port->in, port->out);
    port->in.connect(port.get(), line.get());
    port->out.connect(line.get(), port.get());
  }
  void run() { clock.run(); }
};

// G.709's rule, again: Cm of frame k from the client bytes arrived when frame k - 1 began, and the
// bytes a channel carried in the frames before frame k.
struct Schedule {
  double frame_s, client_bytes_per_s;
  std::vector<int> cm{0};
  std::vector<std::uint64_t> before{0};
  Schedule(double client_ppm, double server_ppm)
      : frame_s(16320 * 8 / (255.0 / 227 * 99.5328e9 * (1 + server_ppm * 1e-6))),
        client_bytes_per_s(103.125e9 * (1 + client_ppm * 1e-6) / 8) {}
  void through(std::size_t k) {
    while (cm.size() <= k) {
      const std::size_t n = cm.size();
      const auto arrived = static_cast<std::uint64_t>(std::floor(static_cast<long double>(n - 1) * frame_s * client_bytes_per_s));
      before.push_back(before.back() + 80 * static_cast<std::uint64_t>(cm.back()));
      cm.push_back(static_cast<int>(std::min<std::uint64_t>(190, (arrived - before.back()) / 80)));
    }
  }
  // Frame and row (0-3) of byte `at` of a channel's stream: data words are those with (j Cm) mod
  // 190 < Cm, numbered row by row over 3800 bytes a row.
  std::pair<std::size_t, int> where(std::uint64_t at) {
    std::size_t k = 0;
    for (;; ++k) {
      through(k + 1);
      if (before[k + 1] > at) break;
    }
    std::uint64_t q = at - before[k];
    int j = 0;
    for (std::uint64_t n = 0;; ++j)
      if ((j + 1) * cm[k] % 190 < cm[k] && n++ == q / 80) break;
    return {k, static_cast<int>((j * 80 + q % 80) / 3800)};
  }
};

TEST(OtnLine, AFrameLeavesWhenG709sLayoutSaysItsLastByteIsDecoded) {
  for (double client : {0.0, 100.0, -100.0}) {
    LineParams p;
    p.channels = 8;
    p.km = 300;
    p.decoder_ns = 100;
    p.client_ppm = client;
    p.server_ppm = -20;
    Rig rig(p, {1500}, 40'000);  // 40 us in: frames of the OTU4s already under way
    rig.run();
    ASSERT_EQ(rig.port->got.size(), 1u);
    // Taken at cycle 40000 + 1 (pushed at 40000, a cycle in the channel): its first block in the
    // first slot of 66 bits at the client rate on or after then, on wavelength 0.
    const double taken_s = 40'001 * 1e-9, block_s = 66 / (103.125e9 * (1 + client * 1e-6));
    const auto slot = static_cast<std::uint64_t>(std::ceil(taken_s / block_s));
    // 1500 bytes: a start block, 187 data blocks, a terminate block (4 bytes), an idle.
    const std::uint64_t terminate = slot * 8 + 188;
    const std::uint64_t last_byte = (66 * (terminate / 8 + 1) - 1) / 8;
    Schedule s(client, -20);
    const auto [k, row] = s.where(last_byte);
    const double out_s = k * s.frame_s + (row + 1) * s.frame_s / 4 + 300 * 4.9e-6 + 100e-9;
    // Out of the line at that cycle, popped by the port a cycle later.
    EXPECT_EQ(rig.port->got[0].at, static_cast<Cycle>(std::ceil(out_s * 1e9)) + 1) << client << " ppm";
    EXPECT_FALSE(rig.port->got[0].bad);
    EXPECT_EQ(rig.port->got[0].bytes, rig.port->sent[0]);
  }
}

TEST(OtnLine, BackToBackFramesFollowAtTheClientRate) {
  LineParams p;
  p.channels = 4;
  p.km = 1;
  std::vector<std::size_t> sizes(5000, 1024);
  Rig rig(p, sizes);
  rig.run();
  ASSERT_EQ(rig.port->got.size(), sizes.size());
  // 1024 bytes are 3 + 128 blocks of 66 bits: 4 x 103.125 Gb/s carry one every 131 x 66 / 412.5 ns.
  const double each_ns = 131 * 66 / 412.5;
  const auto& g = rig.port->got;
  const double measured = static_cast<double>(g.back().at - g[1000].at) / static_cast<double>(g.size() - 1001);
  EXPECT_NEAR(measured, each_ns, 0.01 * each_ns);
  for (const auto& f : g) ASSERT_FALSE(f.bad);
  EXPECT_EQ(rig.line->counts().frames_bad.value(), 0u);
}

// The fast model (the outcome of each codeword from its error pattern) and the exact one (every
// byte through GmpMapper, Framer, the line, Deframer and GmpDemapper, compared) on the same error
// draws and the same frames: the same frames damaged, at the same cycles, and the same counts.
TEST(OtnLine, FastAndExactModelsDamageTheSameFrames) {
  // A clean line; errors the GFEC mostly corrects; more, with JCs lost; so many that the deframers
  // take a few frames to find the alignment (seed 2: within 50 frames of it, 5 frame starts in a
  // row hit make the exact deframer lose it, which the fast model does not model).
  struct Case {
    double ber;
    std::uint64_t seed;
  };
  for (const Case c : {Case{0, 1}, Case{1.8e-3, 1}, Case{3e-3, 1}, Case{8e-3, 2}}) {
    LineParams p;
    p.channels = 2;
    p.km = 0.5;
    p.ber = c.ber;
    p.client_ppm = 60;
    p.server_ppm = 15;
    std::vector<std::size_t> sizes;
    Rng rng(9, "sizes");
    for (int i = 0; i < 6000; ++i) sizes.push_back(64 + rng.below(1455));
    Rig fast(p, sizes, 0, c.seed);  // the same names and seed: the same error draws
    p.exact = true;
    Rig exact(p, sizes, 0, c.seed);
    fast.run();
    exact.run();
    SCOPED_TRACE(fmt::format("BER {}", c.ber));
    ASSERT_EQ(fast.port->got.size(), sizes.size());
    ASSERT_EQ(exact.port->got.size(), sizes.size());
    int bad = 0;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      const auto &f = fast.port->got[i], &e = exact.port->got[i];
      ASSERT_EQ(f.id, i);
      ASSERT_EQ(e.id, i);
      ASSERT_EQ(f.at, e.at) << i;
      ASSERT_EQ(f.bad, e.bad) << i;
      if (!e.bad) {
        ASSERT_EQ(e.bytes, exact.port->sent[i]) << i;
      }
      bad += f.bad;
    }
    const Line::Counts &cf = fast.line->counts(), &ce = exact.line->counts();
    EXPECT_EQ(cf.corrected_symbols.value(), ce.corrected_symbols.value());
    EXPECT_EQ(cf.uncorrectable_codewords.value(), ce.uncorrectable_codewords.value());
    EXPECT_EQ(cf.frames_without_cm.value(), ce.frames_without_cm.value());
    EXPECT_EQ(cf.frames_unaligned.value(), ce.frames_unaligned.value());
    EXPECT_EQ(cf.frames_bad.value(), static_cast<std::uint64_t>(bad));
    fmt::print("BER {}: {} frames of {} damaged, {} symbols corrected, {} codewords uncorrectable, {} miscorrected, "
               "{} OTU4 frames without Cm, {} before the alignment\n",
               c.ber, bad, sizes.size(), cf.corrected_symbols.value(), cf.uncorrectable_codewords.value(),
               cf.miscorrected_codewords.value(), cf.frames_without_cm.value(), cf.frames_unaligned.value());
    if (c.ber == 0) {
      EXPECT_EQ(bad, 0);
    } else if (c.ber == 1.8e-3) {
      EXPECT_GT(cf.uncorrectable_codewords.value(), 20u);
      EXPECT_GT(bad, 20);
      EXPECT_LT(bad, static_cast<int>(sizes.size()) / 2);
    } else if (c.ber == 3e-3) {
      EXPECT_GT(cf.frames_without_cm.value(), 0u);
    } else {
      EXPECT_GT(cf.frames_unaligned.value(), 0u);
    }
  }
}

}  // namespace
}  // namespace xy::otn
