// OTU4 frames (hw/otn/otu4.hpp) against what is independent of them: the scrambler's first
// keystream bytes derived from G.709's polynomial and reset rule and a public VHDL framer's, a
// public RS(255,239) codeword's parity, the overhead positions of G.709 and parities written
// here, and the alignment timers of G.798 counted in frames here.
#include "hw/otn/otu4.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace xy::otn {
namespace {

std::vector<std::uint8_t> pattern(std::size_t n, std::uint32_t seed) {
  std::vector<std::uint8_t> v(n);
  for (auto& b : v) {
    seed = seed * 1664525u + 1013904223u;
    b = static_cast<std::uint8_t>(seed >> 24);
  }
  return v;
}

// The bytes issue 26 derived from G.709 11.2 (1 + x + x^3 + x^12 + x^16, all ones at the MFAS's
// MSB) and from a public VHDL framer (AndreasSvarta/OTN_Project, frm_scramble.vhd).
TEST(Otu4, TheScramblersFirstBytesAreThoseOfG709sPolynomial) {
  const std::vector<std::uint8_t> want = {0xFF, 0xFF, 0x4E, 0x91, 0x05, 0xD2, 0x13, 0x1F,
                                          0x77, 0xE7, 0x41, 0x25, 0x51, 0x80, 0x7B, 0x4B};
  const std::vector<std::uint8_t>& k = scrambler_keystream();
  ASSERT_EQ(k.size(), kFrameBytes - 6);
  EXPECT_TRUE(std::equal(want.begin(), want.end(), k.begin()));
}

TEST(Otu4, ScramblingTwiceIsTheIdentityAndLeavesTheFasAlone) {
  Frame f{};
  const std::vector<std::uint8_t> bytes = pattern(kFrameBytes, 7);
  std::copy(bytes.begin(), bytes.end(), f.begin());
  scramble(f);
  EXPECT_TRUE(std::equal(f.begin(), f.begin() + 6, bytes.begin()));
  EXPECT_FALSE(std::equal(f.begin() + 6, f.end(), bytes.begin() + 6));
  scramble(f);
  EXPECT_TRUE(std::equal(f.begin(), f.end(), bytes.begin()));
}

// ganlubbq/vhdlib, simulation/t_rs_lfsr_encoder.txt: a random 239-byte message and the parity
// MATLAB computed for it with G.709's generator (roots alpha^0..15).
const std::uint8_t kVhdlibCodeword[255] = {
    0x7f, 0xf4, 0x56, 0x95, 0x39, 0xbf, 0x41, 0x81, 0xb2, 0xe3, 0xf4, 0x8b, 0x23, 0x26, 0x41, 0xd6, 0x40, 0xcf, 0x3e,
    0xec, 0x59, 0x32, 0x40, 0x9d, 0x78, 0x59, 0xd3, 0x95, 0x8c, 0xe9, 0x48, 0xc1, 0xc0, 0x61, 0x90, 0x13, 0x0d, 0x87,
    0xc6, 0xee, 0x21, 0x91, 0x77, 0x03, 0x55, 0x29, 0xca, 0x4f, 0x86, 0x2a, 0x99, 0x43, 0xa6, 0xaf, 0xbe, 0x72, 0x15,
    0x3a, 0xe8, 0x26, 0xd2, 0x89, 0xfe, 0x13, 0x70, 0x1b, 0xf5, 0x01, 0xc5, 0xd0, 0xdd, 0x15, 0x65, 0x42, 0xcc, 0x6e,
    0xe8, 0x2e, 0x43, 0x25, 0x22, 0xdd, 0x93, 0x8c, 0x24, 0xd9, 0x9e, 0x59, 0x82, 0x66, 0x13, 0x3d, 0x1f, 0x2e, 0x3d,
    0x6a, 0x0c, 0xe6, 0xf0, 0x7d, 0x7c, 0x56, 0xe5, 0x5e, 0x1c, 0xc6, 0x63, 0x3d, 0x66, 0x18, 0x21, 0xf0, 0xf3, 0x92,
    0x0f, 0x3b, 0x5a, 0xd1, 0x03, 0x0a, 0x2b, 0xa5, 0xba, 0xa5, 0x72, 0x8b, 0x4b, 0xbd, 0x30, 0xaf, 0x2e, 0x5d, 0x9f,
    0xc6, 0x14, 0xec, 0xc5, 0x7c, 0x6f, 0x71, 0x4e, 0x81, 0x82, 0xd0, 0xca, 0xa4, 0x60, 0xce, 0x87, 0x59, 0xef, 0xdf,
    0x8c, 0x9e, 0x95, 0x34, 0x4c, 0x78, 0x3a, 0xd7, 0x31, 0x39, 0x2b, 0x3a, 0x6f, 0x4f, 0xeb, 0x6d, 0x2f, 0xe6, 0xf9,
    0x6f, 0x1c, 0x41, 0x68, 0x97, 0x42, 0x99, 0xb5, 0x38, 0x1d, 0x4b, 0x51, 0x6c, 0x81, 0x15, 0x42, 0xcc, 0x07, 0xec,
    0xba, 0x7c, 0x93, 0x3c, 0x75, 0xf5, 0x8b, 0x84, 0x3b, 0x7c, 0x9f, 0xad, 0x64, 0x5d, 0xfb, 0x09, 0xe1, 0xe8, 0xcb,
    0x19, 0x42, 0x55, 0xad, 0x22, 0xb7, 0x1b, 0xa6, 0x7e, 0xc6, 0xb6, 0xe6, 0xe3, 0x55, 0xb2, 0x32, 0x07, 0xbd, 0x7f,
    0x7a, 0xe6, 0x9b, 0x9d, 0xdb, 0xcd, 0x93, 0x2e, 0x3d, 0xe2, 0x07, 0xf7, 0x51, 0xc3, 0x6c, 0x68, 0xb2, 0x54, 0x7c,
    0x16, 0x21, 0xc2, 0xf7, 0x0d, 0xaa, 0xc6, 0xc8};

// Codeword X of row R: byte X + 16 (i - 1) of the row is its symbol i.
TEST(Otu4, TheGfecParityOfAPublicCodewordIsReproducedByteForByte) {
  for (const int row : {1, 4})
    for (const int x : {1, 16}) {
      Frame f{};
      for (int i = 1; i <= 239; ++i) f[at(row, x + 16 * (i - 1))] = kVhdlibCodeword[i - 1];
      fec_encode(f);
      for (int i = 240; i <= 255; ++i)
        EXPECT_EQ(f[at(row, x + 16 * (i - 1))], kVhdlibCodeword[i - 1]) << row << " " << x << " " << i;
      EXPECT_EQ(x + 16 * 239, kParityFirstColumn + x - 1);  // its parity in columns 3825-4080
    }
}

// Frames as sent, descrambled here: the overhead where G.709 puts it.
std::vector<Frame> frames(Framer& framer, int n, const std::vector<std::uint8_t>& payload) {
  std::vector<Frame> out(static_cast<std::size_t>(n));
  for (Frame& f : out) {
    framer.next(payload.data(), f);
    scramble(f);
  }
  return out;
}

TEST(Otu4, AFrameHasItsOverheadAtG709sPositions) {
  FramerConfig c;
  for (int i = 0; i < 64; ++i) {
    c.sm_tti[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(0x40 + i);
    c.pm_tti[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(0x80 + i);
  }
  Framer framer(c);
  const std::vector<std::uint8_t> payload = pattern(kPayloadBytes, 3);
  const std::vector<Frame> f = frames(framer, 258, payload);
  for (int k : {0, 1, 63, 64, 255, 256, 257}) {
    const Frame& g = f[static_cast<std::size_t>(k)];
    const std::uint8_t mfas = static_cast<std::uint8_t>(k % 256);
    EXPECT_TRUE(std::equal(kFas.begin(), kFas.end(), g.begin())) << k;  // row 1, columns 1-6
    EXPECT_EQ(g[at(1, 7)], mfas);
    EXPECT_EQ(g[at(1, 8)], 0x40 + mfas % 64);  // SM TTI
    EXPECT_EQ(g[at(3, 10)], 0x80 + mfas % 64);  // PM TTI
    EXPECT_EQ(g[at(4, 15)], mfas == 0 ? 0x07 : 0x00);  // PSI: the payload type at MFAS 0
    EXPECT_EQ(g[at(1, 10)], 0x00);  // SM BEI 0, no BDI
    EXPECT_EQ(g[at(2, 1)], 0x00);   // ODU overhead not written: reserved
    for (int r = 1; r <= 4; ++r)
      EXPECT_TRUE(std::equal(payload.begin() + (r - 1) * 3808, payload.begin() + r * 3808, g.begin() + at(r, 17)));
  }
  Framer back;  // what a sink reports goes in the status bytes: BEI in bits 1-4, BDI in bit 5
  Frame b;
  back.next(payload.data(), b, {5, 3, true, false});
  scramble(b);
  EXPECT_EQ(b[at(1, 10)], 0x58);
  EXPECT_EQ(b[at(3, 12)], 0x30);
}

// The even parity of every bit over columns 15-3824 of frame i, in SM (row 1 col 9) and PM
// (row 3 col 11) of frame i + 2.
TEST(Otu4, TheBip8OfFrameIIsInFrameIPlus2) {
  Framer framer;
  std::vector<Frame> f;
  for (int i = 0; i < 6; ++i) {
    const std::vector<std::uint8_t> payload = pattern(kPayloadBytes, static_cast<std::uint32_t>(100 + i));
    Frame g;
    framer.next(payload.data(), g);
    scramble(g);
    f.push_back(g);
  }
  EXPECT_EQ(f[0][at(1, 9)], 0);
  EXPECT_EQ(f[1][at(1, 9)], 0);
  for (std::size_t i = 0; i + 2 < f.size(); ++i) {
    std::uint8_t parity = 0;
    for (int r = 1; r <= 4; ++r)
      for (int col = 15; col <= 3824; ++col) parity ^= f[i][at(r, col)];
    EXPECT_EQ(f[i + 2][at(1, 9)], parity) << i;
    EXPECT_EQ(f[i + 2][at(3, 11)], parity) << i;
    EXPECT_NE(f[i + 2][at(1, 9)], f[i + 1][at(1, 9)]);  // it is that frame's, not any
  }
}

Frame encoded(std::uint32_t seed) {
  Frame f{};
  const std::vector<std::uint8_t> bytes = pattern(kFrameBytes, seed);
  std::copy(bytes.begin(), bytes.end(), f.begin());
  fec_encode(f);
  return f;
}

TEST(Otu4, TheGfecCorrectsEightSymbolErrorsAtEveryPositionAndNamesNine) {
  const Frame clean = encoded(11);
  for (int first = 1; first + 7 <= 255; ++first) {  // symbols first..first+7 of codeword 3 of row 2
    Frame f = clean;
    for (int i = first; i < first + 8; ++i)
      f[at(2, 3 + 16 * (i - 1))] ^= static_cast<std::uint8_t>(1 + i % 255);  // never 0
    const FecCount n = fec_decode(f);
    ASSERT_EQ(n.corrected_symbols, 8) << first;
    ASSERT_EQ(n.uncorrectable_codewords, 0) << first;
    ASSERT_EQ(f, clean) << first;
  }
  Frame f = clean;
  for (int i = 100; i < 109; ++i) f[at(2, 3 + 16 * (i - 1))] ^= 0xA5;
  const Frame received = f;
  const FecCount n = fec_decode(f);
  EXPECT_EQ(n.uncorrectable_codewords, 1);
  EXPECT_EQ(f, received);  // left as received, and said
}

// 128 bytes in a row are 8 symbols of each of its 16 codewords; 129 are 9 of one.
TEST(Otu4, TheInterleaveCorrectsABurstOf128BytesInARow) {
  const Frame clean = encoded(12);
  Frame f = clean;
  for (int col = 1000; col < 1128; ++col) f[at(3, col)] = static_cast<std::uint8_t>(~f[at(3, col)]);
  FecCount n = fec_decode(f);
  EXPECT_EQ(n.corrected_symbols, 128);
  EXPECT_EQ(n.uncorrectable_codewords, 0);
  EXPECT_EQ(f, clean);
  f = clean;
  for (int col = 1000; col < 1129; ++col) f[at(3, col)] = static_cast<std::uint8_t>(~f[at(3, col)]);
  n = fec_decode(f);
  EXPECT_EQ(n.uncorrectable_codewords, 1);
  EXPECT_EQ(n.corrected_symbols, 15 * 8);
}

struct Line {
  Framer framer;
  std::vector<std::uint8_t> payload = pattern(kPayloadBytes, 21);
  Frame next() {
    Frame f;
    framer.next(payload.data(), f);
    return f;
  }
};

TEST(Otu4, TheDeframerFindsTheFramesCorrectsThemAndChecksTheirBip8) {
  Line line;
  Deframer d;
  std::vector<Frame> got;
  std::vector<Backward> reports;
  d.on_frame = [&](const Frame& f, const Backward& b) {
    got.push_back(f);
    reports.push_back(b);
  };
  const std::vector<std::uint8_t> junk = pattern(5000, 1);  // the line before the first frame
  d.push(junk.data(), junk.size());
  for (int i = 0; i < 8; ++i) {
    Frame f = line.next();
    if (i == 3)  // 20 byte errors in row 1, at most 2 a codeword: the FEC's to correct
      for (int col = 100; col < 2000; col += 95) f[at(1, col)] ^= 0x81;
    if (i == 5) f[at(2, 3900)] ^= 0x01;  // a parity byte
    d.push(f.data(), f.size());
  }
  ASSERT_FALSE(d.oof());
  ASSERT_EQ(got.size(), 8u);  // from the first, once the second's FAS confirmed it
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i][at(1, 7)], i);  // MFAS
    EXPECT_TRUE(std::equal(line.payload.begin(), line.payload.begin() + 3808, got[i].begin() + at(1, 17))) << i;
    EXPECT_EQ(reports[i].sm_bei, 0) << i;
  }
  EXPECT_EQ(d.stats().fec_corrected_symbols, 21u);
  EXPECT_EQ(d.stats().fec_uncorrectable_codewords, 0u);
}

// G.798: OOF when FAS bytes 3-5 are in error at 5 frame starts in a row; IF once a FAS is found
// and found again a frame later.
TEST(Otu4, OutOfFrameAtTheFifthErroredFasNotTheFourthAndInFrameOnceConfirmed) {
  Line line;
  Deframer d;
  const Frame good = line.next();
  Frame bad = good;
  bad[3] ^= 0xFF;  // FAS byte 4
  Frame outside = good;
  outside[0] ^= 0xFF;  // FAS byte 1: not among those watched
  outside[5] ^= 0xFF;  // byte 6
  for (const Frame* f : std::initializer_list<const Frame*>{&good, &good, &outside, &good})
    d.push(f->data(), f->size());
  ASSERT_FALSE(d.oof());
  for (int k = 1; k <= 4; ++k) d.push(bad.data(), bad.size());  // four, then a good one: the count starts again
  d.push(good.data(), good.size());
  for (int k = 1; k <= 5; ++k) {
    d.push(bad.data(), bad.size());
    EXPECT_EQ(d.oof(), k == 5) << k;
  }
  EXPECT_EQ(d.stats().oof_entries, 1u);
  d.push(good.data(), good.size());
  EXPECT_TRUE(d.oof());  // found, not yet confirmed
  d.push(good.data(), 5);
  EXPECT_TRUE(d.oof());
  d.push(good.data() + 5, 1);  // the next frame's FAS whole
  EXPECT_FALSE(d.oof());
}

std::vector<std::uint8_t> junk_without_fas() {
  std::vector<std::uint8_t> j = pattern(kFrameBytes, 5);
  std::vector<std::uint8_t> twice = j;
  twice.insert(twice.end(), j.begin(), j.end());
  EXPECT_EQ(std::search(twice.begin(), twice.end(), kFas.begin(), kFas.end()), twice.end());
  return j;
}

// LOF once OOF has lasted 3 ms: 3 ms / (16320 x 8 bits / (255/227 x 99.5328 Gb/s)) = 2569.2
// frames, so at the 2570th; cleared by 3 ms in frame, counted from the confirmation.
TEST(Otu4, LossOfFrameAt3msOutOfFrameNotAFrameEarlierAndClearedBy3msInFrame) {
  EXPECT_NEAR(to_ns(frame_period()), 16320.0 * 8 / (255.0 / 227 * 99.5328), 1e-6);
  ASSERT_EQ(Deframer::kThreeMsFrames, 2570u);
  const std::vector<std::uint8_t> junk = junk_without_fas();
  Deframer d;
  for (int k = 1; k <= 2569; ++k) d.push(junk.data(), junk.size());
  EXPECT_TRUE(d.oof());
  EXPECT_FALSE(d.lof());
  d.push(junk.data(), junk.size());
  EXPECT_TRUE(d.lof());
  EXPECT_EQ(d.stats().lof_entries, 1u);
  Line line;
  const Frame good = line.next();
  d.push(good.data(), good.size());  // found; its frame's time still out of frame
  for (int k = 1; k <= 2569; ++k) d.push(good.data(), good.size());
  EXPECT_FALSE(d.oof());
  EXPECT_TRUE(d.lof());
  d.push(good.data(), good.size());
  EXPECT_FALSE(d.lof());
}

// The LOF timer integrates: a brief return to IF does not reset it.
TEST(Otu4, BriefInFramePeriodsDoNotResetTheLossOfFrameTimer) {
  const std::vector<std::uint8_t> junk = junk_without_fas();
  Line line;
  const Frame good = line.next();
  Frame bad = good;
  bad[2] ^= 0xFF;  // FAS byte 3
  Deframer d;
  for (int k = 0; k < 2000; ++k) d.push(junk.data(), junk.size());      // 2000 frames OOF
  for (int k = 0; k < 100; ++k) d.push(good.data(), good.size());       // 1 more, then 99 IF
  for (int k = 0; k < 5; ++k) d.push(bad.data(), bad.size());           // 4 IF, then OOF: 2002
  ASSERT_TRUE(d.oof());
  for (int k = 0; k < 567; ++k) d.push(junk.data(), junk.size());
  EXPECT_FALSE(d.lof());
  d.push(junk.data(), junk.size());  // 2570 in all
  EXPECT_TRUE(d.lof());
}

// A frame as sent, but carrying `mfas`: its FEC made again, so the deframer sees that MFAS.
Frame with_mfas(Frame f, std::uint8_t mfas) {
  scramble(f);
  f[kMfas] = mfas;
  fec_encode(f);
  scramble(f);
  return f;
}

// G.798: OOM when the MFAS is not the one expected in 5 frames in a row, IM once two frames in a
// row carry consecutive MFAS; LOM after 3 ms of OOM without a break, cleared at IM.
TEST(Otu4, MultiframeAlignmentAndItsLossFollowG798) {
  Line line;
  std::vector<Frame> frames;
  for (int i = 0; i < 20; ++i) frames.push_back(line.next());  // MFAS 0-19
  Deframer d;
  d.push(frames[0].data(), kFrameBytes);
  d.push(frames[1].data(), kFrameBytes);  // confirms frame 0's FAS: frame 0 taken, then 1
  EXPECT_FALSE(d.oom()) << "MFAS 0 then 1";
  // One frame's MFAS hit (its FEC made again so that the hit stays): the count starts again.
  for (int i = 2; i < 6; ++i) {
    const Frame f = i == 3 ? with_mfas(frames[i], 0x55) : frames[i];
    d.push(f.data(), kFrameBytes);
  }
  EXPECT_FALSE(d.oom());
  // Five frames repeating MFAS 5: at the fifth out of multiframe, not the fourth.
  for (int k = 1; k <= 5; ++k) {
    d.push(frames[5].data(), kFrameBytes);
    EXPECT_EQ(d.oom(), k == 5) << k;
  }
  EXPECT_EQ(d.stats().oom_entries, 1u);
  // LOM at 2570 frame times of OOM (the fifth frame's among them), not 2569.
  for (int k = 2; k <= 2569; ++k) d.push(frames[5].data(), kFrameBytes);
  EXPECT_FALSE(d.lom());
  d.push(frames[5].data(), kFrameBytes);
  EXPECT_TRUE(d.lom());
  EXPECT_EQ(d.stats().lom_entries, 1u);
  EXPECT_FALSE(d.oof());
  EXPECT_FALSE(d.lof());
  d.push(frames[6].data(), kFrameBytes);  // 5 then 6: in multiframe, and LOM cleared at once
  EXPECT_FALSE(d.oom());
  EXPECT_FALSE(d.lom());
  d.push(frames[7].data(), kFrameBytes);
  EXPECT_FALSE(d.oom());
}

}  // namespace
}  // namespace xy::otn
