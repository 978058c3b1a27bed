// GMP (hw/otn/gmp.hpp) against what is independent of it: the JC CRCs by polynomial long division
// written here, the inversion patterns from G.709's lists of bits, the data/stuff positions and
// the Cm range worked out here from G.709's formulas and rates, and a client stream compared
// byte for byte after the framer, the line and the deframer.
#include "hw/otn/gmp.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace xy::otn {
namespace {

// The remainder of (bits of `value`, MSB first) x^deg divided by `poly` (every term, x^deg's
// included), one bit of the dividend at a time.
int long_division(std::uint32_t value, int bits, std::uint32_t poly, int deg) {
  std::uint64_t r = static_cast<std::uint64_t>(value) << deg;
  for (int i = bits + deg - 1; i >= deg; --i)
    if (r >> i & 1) r ^= static_cast<std::uint64_t>(poly) << (i - deg);
  return static_cast<int>(r);
}

TEST(Gmp, JcCrcsAreTheRemaindersOfG709sPolynomials) {
  for (int v = 0; v < 1 << 16; v += 37) {
    const auto jc1 = static_cast<std::uint8_t>(v >> 8), jc2 = static_cast<std::uint8_t>(v);
    ASSERT_EQ(crc8_jc(jc1, jc2), long_division(static_cast<std::uint32_t>(v), 16, 0b1'0000'1101, 8));  // x^8+x^3+x^2+1
    // The sink's check: JC1-JC3 together divide exactly.
    ASSERT_EQ(long_division(static_cast<std::uint32_t>(v << 8 | crc8_jc(jc1, jc2)), 24, 0b1'0000'1101, 8), 0);
  }
  for (int d = 0; d < 1024; ++d) ASSERT_EQ(crc5_cnd(d), long_division(static_cast<std::uint32_t>(d), 10, 0b10'0011, 5));
  // Worked by hand from the layouts: Cm 188 is C1-C14 = 00000010111100.
  EXPECT_EQ(announce(188, 188, 26), (JcBytes{0x02, 0xF0, 0x26, 0x00, 0x1A, 0x0D}));
  EXPECT_EQ(announce(189, 189, 79), (JcBytes{0x02, 0xF4, 0x12, 0x02, 0x0F, 0x1B}));
}

// G.709's patterns: +1 inverts C1, C3, ..., C13 of the previous Cm; -1 C2, ..., C14; +2 C2, C3,
// C6, C7, C10, C11, C14; -2 C1, C4, C5, C8, C9, C12, C13. C1 is the MSB of 14 bits.
int inverted(int cm, std::vector<int> bits) {
  for (int c : bits) cm ^= 1 << (14 - c);
  return cm;
}

TEST(Gmp, ChangesAreSentAsG709sInversionPatternsAndReadBack) {
  struct Case {
    int change;
    std::vector<int> bits;
    bool ii, di;
  };
  const std::vector<Case> cases = {{0, {}, false, false},
                                   {+1, {1, 3, 5, 7, 9, 11, 13}, true, false},
                                   {-1, {2, 4, 6, 8, 10, 12, 14}, false, true},
                                   {+2, {2, 3, 6, 7, 10, 11, 14}, true, false},
                                   {-2, {1, 4, 5, 8, 9, 12, 13}, false, true}};
  for (int cm : {0, 2, 188, 189, 5000, 16381})
    for (const Case& c : cases) {
      if (cm + c.change < 0) continue;
      const JcBytes jc = announce(cm, cm + c.change, 0);
      EXPECT_EQ(jc[0] << 6 | jc[1] >> 2, inverted(cm, c.bits)) << cm << " " << c.change;
      EXPECT_EQ(bool(jc[1] & 2), c.ii);
      EXPECT_EQ(bool(jc[1] & 1), c.di);
      EXPECT_EQ(read_cm(jc, cm), cm + c.change);
      if (c.change) {
        EXPECT_FALSE(read_cm(jc, std::nullopt)) << "a pattern needs the Cm before";
      }
    }
  const JcBytes big = announce(188, 100, 0);  // any other change: the new value, II and DI set
  EXPECT_EQ(big[0] << 6 | big[1] >> 2, 100);
  EXPECT_EQ(big[1] & 3, 3);
  EXPECT_EQ(read_cm(big, std::nullopt), 100);
  JcBytes broken = announce(188, 189, 0);
  broken[1] ^= 0x80;
  EXPECT_FALSE(read_cm(broken, 188)) << "CRC-8 fails";
  EXPECT_FALSE(read_cm(announce(188, 189, 0), 150)) << "a pattern that fits no change from the Cm known";
}

// The 100GBASE-R client (103.125 Gb/s) and the OPU4's GMP area (238/227 x 99.5328 Gb/s of payload
// columns 17-3824, of which 3800 of 3808 columns are GMP's), G.709's equations 17-2 to 17-6.
constexpr double kClientBps = 103.125e9;
const double kGmpAreaBps = 238.0 / 227.0 * 99.5328e9 * 3800 / 3808;

double client_bytes_per_frame(double client_ppm, double server_ppm) {
  const double frame_s = 16320.0 * 8 / (255.0 / 227.0 * 99.5328e9 * (1 + server_ppm * 1e-6));
  return kClientBps * (1 + client_ppm * 1e-6) / 8 * frame_s;
}

TEST(Gmp, TheCmRangeOf100GbaseRIs188To189) {
  const double nominal = 190 * kClientBps / kGmpAreaBps;
  EXPECT_NEAR(nominal, 188.154, 0.001);
  EXPECT_EQ(std::floor(nominal * (1 - 100e-6) / (1 + 20e-6)), 188);
  EXPECT_EQ(std::ceil(nominal * (1 + 100e-6) / (1 - 20e-6)), 189);
  int words = 0;
  for (int j = 1; j <= kGmpWords; ++j) words += gmp_data(j, 188);
  EXPECT_EQ(words, 188);
  // (188 j) mod 190 = (-2 j) mod 190 reaches 188 only at j = 1 and 96: the two stuff words.
  for (int j = 1; j <= kGmpWords; ++j) EXPECT_EQ(gmp_data(j, 188), j != 1 && j != 96) << j;
  for (int cm = 0; cm <= kGmpWords; ++cm) {
    int n = 0;
    for (int j = 1; j <= kGmpWords; ++j) n += gmp_data(j, cm);
    ASSERT_EQ(n, cm);
  }
}

std::uint8_t client_byte(std::uint64_t i) { return static_cast<std::uint8_t>((i * 2654435761u) >> 13); }

// A client at `client_ppm` mapped into frames at `server_ppm`, through the framer, the line and the
// deframer, de-mapped: what each frame carried.
struct Link {
  double client_ppm, server_ppm;
  GmpMapper mapper;
  Framer framer;
  Deframer deframer;
  GmpDemapper demapper;
  std::vector<std::uint8_t> out, payload = std::vector<std::uint8_t>(kPayloadBytes);
  std::uint64_t sent = 0;
  std::vector<std::int64_t> arrived;  // client bytes per frame period
  std::vector<int> cm;                // of each frame made
  std::vector<std::int64_t> cn_read;  // what the de-mapper made of each period's client bytes

  Link(double c, double s) : client_ppm(c), server_ppm(s) {
    deframer.on_frame = [this](const Frame& f, const Backward&) {
      demapper.take(f, out);
      cn_read.push_back(demapper.stats().last_cn);
    };
  }
  // A frame period of client bytes into the mapper, then the frame out to the line.
  void frame(Frame& f) {
    const double per_frame = client_bytes_per_frame(client_ppm, server_ppm);
    const auto total = static_cast<std::uint64_t>(std::floor(per_frame * static_cast<double>(arrived.size() + 1)));
    std::vector<std::uint8_t> bytes;
    for (; sent < total; ++sent) bytes.push_back(client_byte(sent));
    arrived.push_back(static_cast<std::int64_t>(bytes.size()));
    mapper.push(bytes.data(), bytes.size());
    JcBytes jc;
    mapper.next(payload.data(), jc);
    cm.push_back(mapper.cm());
    framer.next(payload.data(), f, {}, jc);
  }
  void run(int frames) {
    Frame f;
    for (int i = 0; i < frames; ++i) {
      frame(f);
      deframer.push(f.data(), f.size());
    }
  }
};

TEST(Gmp, EveryClientByteArrivesOverA100PpmSweepWithCmInRangeAndTheFifoBounded) {
  for (double server : {-20.0, 20.0})
    for (double client : {-100.0, -50.0, 0.0, 50.0, 100.0}) {
      Link link(client, server);
      link.run(300);
      SCOPED_TRACE(::testing::Message() << "client " << client << " ppm, server " << server << " ppm");
      const GmpDemapper::Stats& s = link.demapper.stats();
      EXPECT_EQ(s.jc_errors, 0u);
      EXPECT_EQ(s.frames_without_cm, 1u) << "only the first frame, before any JC";
      // Every byte taken out is the client's, in order, and all but those the mapper still holds.
      ASSERT_EQ(link.out.size() + link.mapper.fifo_bytes(), link.sent);
      for (std::size_t i = 0; i < link.out.size(); ++i) ASSERT_EQ(link.out[i], client_byte(i)) << i;
      for (std::size_t t = 2; t < link.cm.size(); ++t) ASSERT_TRUE(link.cm[t] == 188 || link.cm[t] == 189) << t;
      // The FIFO holds what came in a frame period and the one before, and less than a word more.
      const auto per_frame = static_cast<std::size_t>(std::ceil(client_bytes_per_frame(client, server)));
      EXPECT_LE(link.mapper.fifo_peak_bytes(), 2 * per_frame + kGmpWordBytes - 1);
      // Cm and the sum of CnD in frame t give the client bytes of period t exactly.
      for (std::size_t t = 2; t < link.cn_read.size(); ++t) ASSERT_EQ(link.cn_read[t], link.arrived[t]) << t;
    }
}

TEST(Gmp, DataWordsSitWhereG709NumbersThemAndStuffIsZero) {
  GmpMapper mapper;
  std::vector<std::uint8_t> client(2 * kGmpWords * kGmpWordBytes);
  for (std::size_t i = 0; i < client.size(); ++i) client[i] = static_cast<std::uint8_t>(1 + i % 251);
  mapper.push(client.data(), 188 * kGmpWordBytes);  // the first frame then has Cm 0, the second 188
  std::vector<std::uint8_t> payload(kPayloadBytes);
  JcBytes jc;
  mapper.next(payload.data(), jc);
  EXPECT_TRUE(std::all_of(payload.begin(), payload.end(), [](std::uint8_t b) { return b == 0; }));
  mapper.next(payload.data(), jc);
  Frame f;
  Framer().next(payload.data(), f, {}, jc);
  scramble(f);
  // Word j is bytes 80 (j - 1) .. 80 j - 1 of the 3800-byte rows (columns 17-3816); stuff words 1, 96.
  auto byte = [&f](int word, int k) {
    const int i = (word - 1) * 80 + k;
    return f[at(1 + i / 3800, 17 + i % 3800)];
  };
  std::size_t next = 0;
  for (int j = 1; j <= kGmpWords; ++j)
    for (int k = 0; k < 80; ++k) ASSERT_EQ(byte(j, k), j == 1 || j == 96 ? 0 : client[next++]) << j << " " << k;
  for (int r = 1; r <= 4; ++r)
    for (int c = 3817; c <= 3824; ++c) ASSERT_EQ(f[at(r, c)], 0) << "fixed stuff";
  // Word 48 runs over a row's end: 40 bytes in columns 3777-3816 of row 1, 40 in 17-56 of row 2.
  EXPECT_EQ(f[at(1, 3816)], client[46 * 80 + 39]);
  EXPECT_EQ(f[at(2, 17)], client[46 * 80 + 40]);
  EXPECT_EQ(jc_of(f), jc);
}

TEST(Gmp, TheDemapperPlacesDataFromTheReceivedCmOnly) {
  Link link(0, 0);
  link.run(20);
  const std::size_t good = link.out.size();
  Frame f;
  link.frame(f);                      // announces the Cm of the frame after
  scramble(f);
  const JcBytes jc = jc_of(f);
  const int announced = *read_cm(jc, link.cm.back());
  const JcBytes lie = announce(link.cm.back(), announced == 188 ? 189 : 188, *read_sum_cnd(jc));
  for (std::size_t i = 0; i < 6; ++i) f[kJc[i]] = lie[i];
  link.demapper.take(f, link.out);
  link.frame(f);  // the frame whose words the lie names
  scramble(f);
  link.demapper.take(f, link.out);
  EXPECT_EQ(link.demapper.stats().jc_errors, 0u);
  bool differs = false;
  for (std::size_t i = good; i < link.out.size(); ++i) differs |= link.out[i] != client_byte(i);
  EXPECT_TRUE(differs) << "a wrong Cm in the JC must misplace the data: the de-mapper reads no other";

  Link broken(0, 0);
  broken.run(20);
  const std::size_t before = broken.out.size();
  broken.frame(f);
  scramble(f);
  f[kJc[2]] ^= 1;  // CRC-8 fails: the next frame's Cm is unknown; its words are not guessed
  broken.demapper.take(f, broken.out);
  broken.frame(f);
  scramble(f);
  broken.demapper.take(f, broken.out);
  EXPECT_EQ(broken.demapper.stats().jc_errors, 1u);
  EXPECT_EQ(broken.demapper.stats().frames_without_cm, 2u);
  for (std::size_t i = 0; i < broken.out.size(); ++i) ASSERT_EQ(broken.out[i], client_byte(i));
  EXPECT_EQ(broken.out.size() - before, static_cast<std::size_t>(broken.cm[broken.cm.size() - 2]) * 80);
}

}  // namespace
}  // namespace xy::otn
