#include "hw/phy/pcs.hpp"

#include <gtest/gtest.h>

#include "kernel/rng.hpp"

namespace xy::phy {
namespace {

std::vector<std::uint8_t> random_bytes(Rng& rng, std::size_t n) {
  std::vector<std::uint8_t> v(n);
  for (auto& b : v) b = static_cast<std::uint8_t>(rng.next());
  return v;
}

TEST(Pcs, FramesOfEveryLengthRoundTripThroughBlocks) {
  Rng rng(1, "pcs");
  for (std::size_t size = 1; size <= 200; ++size) {
    const auto frame = random_bytes(rng, size);
    std::vector<Block66> blocks;
    encode_frame(frame.data(), frame.size(), blocks);
    ASSERT_EQ(blocks.size(), blocks_for_frame(size));
    EXPECT_EQ(blocks.back(), idle_block());
    std::vector<std::uint8_t> back;
    ASSERT_TRUE(decode_frame(blocks.data(), blocks.size() - 1, back)) << size;
    EXPECT_EQ(back, frame);
  }
}

TEST(Pcs, TerminateBlockTypesFollowTheDataBytesItCarries) {
  std::vector<Block66> blocks;
  const std::uint8_t frame[13] = {};
  encode_frame(frame, 13, blocks);  // start, 1 data block, terminate with 5 bytes, idle
  ASSERT_EQ(blocks.size(), 4u);
  EXPECT_EQ(blocks[0].payload & 0xFF, kBlockStart);
  EXPECT_EQ(blocks[1].sync, kSyncData);
  EXPECT_EQ(blocks[2].payload & 0xFF, 0xD2u);
}

TEST(Pcs, CorruptedBlocksDoNotDecodeAsAFrame) {
  std::vector<Block66> blocks;
  const std::uint8_t frame[64] = {};
  encode_frame(frame, 64, blocks);
  std::vector<std::uint8_t> back;
  auto bad = blocks;
  bad[3].sync = 3;  // invalid sync header
  EXPECT_FALSE(decode_frame(bad.data(), bad.size() - 1, back));
  bad = blocks;
  bad[0].payload ^= 1 << 9;  // damaged preamble
  EXPECT_FALSE(decode_frame(bad.data(), bad.size() - 1, back));
}

// Bit-serial reference of 1 + x^39 + x^58, written straight from the polynomial.
struct SerialScrambler {
  std::uint64_t history = 0;  // bit j = output j + 1 bits ago
  std::uint64_t run(std::uint64_t data) {
    std::uint64_t out = 0;
    for (int i = 0; i < 64; ++i) {
      const std::uint64_t bit = ((data >> i) ^ (history >> 38) ^ (history >> 57)) & 1;
      history = (history << 1) | bit;
      out |= bit << i;
    }
    return out;
  }
};

TEST(Pcs, ScramblerMatchesABitSerialReferenceAndDescrambles) {
  Rng rng(2, "scr");
  Scrambler tx, rx;
  SerialScrambler ref;
  for (int i = 0; i < 10000; ++i) {
    const std::uint64_t d = rng.next();
    const std::uint64_t s = tx.scramble(d);
    ASSERT_EQ(s, ref.run(d)) << i;
    ASSERT_EQ(rx.descramble(s), d) << i;
  }
}

TEST(Pcs, ScramblerSelfSynchronisesAndMultipliesALineErrorByThree) {
  Rng rng(3, "scr");
  Scrambler tx, rx;
  for (int i = 0; i < 5; ++i) rx.descramble(rng.next());  // rx starts out of step
  std::vector<std::uint64_t> data, line;
  for (int i = 0; i < 20; ++i) {
    data.push_back(rng.next());
    line.push_back(tx.scramble(data.back()));
  }
  for (int i = 0; i < 2; ++i) rx.descramble(line[i]);  // after 58 bits the state is the line's
  line[5] ^= std::uint64_t{1} << 10;                    // one bit error on the line
  int wrong = 0;
  for (int i = 2; i < 20; ++i) wrong += __builtin_popcountll(rx.descramble(line[i]) ^ data[i]);
  EXPECT_EQ(wrong, 3);
}

TEST(Pcs, TranscodingRoundTripsEveryMixOfDataAndControlBlocks) {
  Rng rng(4, "xc");
  const std::uint8_t types[] = {kBlockIdle, kBlockStart, 0x87, 0x99, 0xAA, 0xB4, 0xCC, 0xD2, 0xE1, 0xFF, 0x4B, 0x2D, 0x33, 0x66, 0x55};
  for (int mask = 0; mask < 16; ++mask) {
    for (int rep = 0; rep < 50; ++rep) {
      Block66 in[4], out[4];
      for (int i = 0; i < 4; ++i) {
        if (mask & (1 << i)) {
          in[i] = {kSyncData, rng.next()};
        } else {
          in[i] = {kSyncControl, (rng.next() << 8) | types[rng.below(std::size(types))]};
        }
      }
      std::uint8_t bits[40] = {};
      transcode(in, bits, 3);
      untranscode(bits, 3, out);
      for (int i = 0; i < 4; ++i) ASSERT_EQ(out[i], in[i]) << "mask " << mask << " block " << i;
      EXPECT_EQ(get_bits(bits, 3, 1), mask == 15 ? 1u : 0u);
    }
  }
}

TEST(Pcs, BitFieldsPackLeastSignificantBitFirst) {
  std::uint8_t buf[16] = {};
  put_bits(buf, 5, 64, 0xDEADBEEFCAFEF00DULL);
  EXPECT_EQ(get_bits(buf, 5, 64), 0xDEADBEEFCAFEF00DULL);
  EXPECT_EQ(buf[0], static_cast<std::uint8_t>(0x0D << 5));
  put_bits(buf, 1, 3, 0b101);
  EXPECT_EQ(get_bits(buf, 1, 3), 0b101u);
  EXPECT_EQ(get_bits(buf, 5, 64), 0xDEADBEEFCAFEF00DULL);
}

}  // namespace
}  // namespace xy::phy
