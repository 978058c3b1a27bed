#include "hw/link/crc32.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "kernel/rng.hpp"

namespace xy::link {
namespace {

std::vector<std::uint8_t> from_hex(const char* hex) {
  std::vector<std::uint8_t> out;
  for (std::size_t i = 0; hex[i] && hex[i + 1]; i += 2) {
    auto nibble = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
    out.push_back(static_cast<std::uint8_t>(nibble(hex[i]) << 4 | nibble(hex[i + 1])));
  }
  return out;
}

// A 1500-byte random payload behind an Ethernet II header, with its FCS: 1518 bytes.
std::vector<std::uint8_t> random_frame(std::uint64_t seed) {
  std::vector<std::uint8_t> f(14 + 1500);
  Rng(seed, "crc32_test").fill(f.data(), f.size());
  f[12] = 0x88;  // EtherType: local experimental
  f[13] = 0xB5;
  append_fcs(f);
  return f;
}

// Bit i of the frame in transmission order: byte i / 8, least significant bit first.
void flip(std::vector<std::uint8_t>& f, std::size_t bit) {
  f[bit / 8] ^= static_cast<std::uint8_t>(1u << (bit % 8));
}

// Bit-at-a-time CRC straight from the definition, against which the tables are checked.
std::uint32_t crc32_bitwise(const std::uint8_t* data, std::size_t size) {
  std::uint32_t reg = 0xFFFFFFFF;
  for (std::size_t i = 0; i < size; ++i) {
    reg ^= data[i];
    for (int b = 0; b < 8; ++b) reg = (reg & 1) ? (reg >> 1) ^ 0xEDB88320 : reg >> 1;
  }
  return ~reg;
}

TEST(Crc32, CheckValue) {
  const char* text = "123456789";
  EXPECT_EQ(crc32(reinterpret_cast<const std::uint8_t*>(text), std::strlen(text)), 0xCBF43926u);
  EXPECT_EQ(crc32(nullptr, 0), 0u);
}

TEST(Crc32, MatchesBitwiseDefinitionAtEveryLengthAndAlignment) {
  std::vector<std::uint8_t> data(300);
  Rng(1, "crc32_test").fill(data.data(), data.size());
  for (std::size_t start = 0; start < 8; ++start)
    for (std::size_t size = 0; start + size <= data.size(); ++size)
      ASSERT_EQ(crc32(data.data() + start, size), crc32_bitwise(data.data() + start, size))
          << "start " << start << " size " << size;
}

// Jumbo-sized buffers too, at random offsets and from random register values (a frame that
// arrives in pieces), each piece checked against the bit-serial definition.
TEST(Crc32, MatchesBitwiseDefinitionOnRandomBuffersAndPieces) {
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    Rng rng(seed, "crc32_random");
    std::vector<std::uint8_t> data(rng.between(0, 9100) + 16);
    rng.fill(data.data(), data.size());
    const std::size_t start = rng.below(16), size = rng.below(data.size() - start + 1);
    ASSERT_EQ(crc32(data.data() + start, size), crc32_bitwise(data.data() + start, size))
        << "seed " << seed << " start " << start << " size " << size;
    const std::size_t cut = rng.below(size + 1);
    const std::uint32_t reg = crc32_update(kCrc32Preset, data.data() + start, cut);
    ASSERT_EQ(~crc32_update(reg, data.data() + start + cut, size - cut), crc32_bitwise(data.data() + start, size))
        << "seed " << seed << " cut " << cut;
  }
}

TEST(Crc32, IncrementalEqualsOneShot) {
  std::vector<std::uint8_t> data(1000);
  Rng(2, "crc32_test").fill(data.data(), data.size());
  const std::uint32_t whole = crc32(data.data(), data.size());
  for (std::size_t cut : {0u, 1u, 7u, 8u, 9u, 64u, 333u, 999u, 1000u}) {
    std::uint32_t reg = crc32_update(kCrc32Preset, data.data(), cut);
    reg = crc32_update(reg, data.data() + cut, data.size() - cut);
    EXPECT_EQ(~reg, whole) << "cut at " << cut;
  }
}

// A broadcast ARP request (who has 10.51.7.251, tell 10.51.7.250) captured with its FCS,
// padded to the 60-byte minimum: from a StackOverflow question, "CRC32 calculation not working
// out" (the FCS is 0xCAFDF00F, sent as 0f f0 fd ca).
TEST(Crc32, RealArpFrameValidates) {
  const auto frame = from_hex(
      "ffffffffffff0024e8cc96be0806000108000604000100"
      "24e8cc96be0a3307fa0000000000000a3307fb00000000"
      "0000000000000000000000000000"
      "0ff0fdca");
  ASSERT_EQ(frame.size(), 64u);
  EXPECT_EQ(crc32(frame.data(), 60), 0xCAFDF00Fu);
  EXPECT_TRUE(fcs_ok(frame.data(), frame.size()));

  std::vector<std::uint8_t> rebuilt(frame.begin(), frame.begin() + 60);
  append_fcs(rebuilt);
  EXPECT_EQ(rebuilt, frame);
}

TEST(Crc32, ResidueOverFrameAndFcsIsConstant) {
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    std::vector<std::uint8_t> f(46 + seed * 71);
    Rng(seed, "residue").fill(f.data(), f.size());
    append_fcs(f);
    EXPECT_EQ(crc32(f.data(), f.size()), kFcsResidue);
    EXPECT_EQ(crc32_update(kCrc32Preset, f.data(), f.size()), 0xDEBB20E3u);
    EXPECT_TRUE(fcs_ok(f.data(), f.size()));
  }
}

TEST(Crc32, FcsOkRejectsShortAndWrongFrames) {
  const std::uint8_t three[3] = {1, 2, 3};
  EXPECT_FALSE(fcs_ok(three, 3));
  auto f = random_frame(3);
  f.back() ^= 0x80;
  EXPECT_FALSE(fcs_ok(f.data(), f.size()));
}

TEST(Crc32, DetectsEverySingleBitError) {
  auto f = random_frame(4);
  ASSERT_TRUE(fcs_ok(f.data(), f.size()));
  for (std::size_t bit = 0; bit < f.size() * 8; ++bit) {  // FCS bits included
    flip(f, bit);
    ASSERT_FALSE(fcs_ok(f.data(), f.size())) << "bit " << bit;
    flip(f, bit);
  }
}

// A burst of length n flips its first and last bit and any of the n - 2 between; a CRC with a
// degree-32 generator detects every burst of length <= 32.
TEST(Crc32, DetectsRandomBurstsUpTo32Bits) {
  auto f = random_frame(5);
  const std::size_t bits = f.size() * 8;
  Rng rng(6, "bursts");
  for (int trial = 0; trial < 20000; ++trial) {
    const std::size_t length = rng.between(1, 32);
    const std::size_t start = rng.below(bits - length + 1);
    std::vector<std::size_t> flipped{start};
    for (std::size_t k = 1; k + 1 < length; ++k)
      if (rng.chance(0.5)) flipped.push_back(start + k);
    if (length > 1) flipped.push_back(start + length - 1);
    for (std::size_t b : flipped) flip(f, b);
    ASSERT_FALSE(fcs_ok(f.data(), f.size())) << "burst of " << length << " at bit " << start;
    for (std::size_t b : flipped) flip(f, b);
  }
}

// The check has teeth: a 33-bit burst shaped like the generator itself goes unseen. The first
// bit on the wire is the highest power, so x^d sits 32 - d bits after the burst's start.
TEST(Crc32, MissesABurstEqualToTheGenerator) {
  auto f = random_frame(7);
  const std::size_t powers[] = {32, 26, 23, 22, 16, 12, 11, 10, 8, 7, 5, 4, 2, 1, 0};
  for (std::size_t start : {std::size_t{0}, std::size_t{5}, std::size_t{4000}}) {
    for (std::size_t d : powers) flip(f, start + 32 - d);
    EXPECT_TRUE(fcs_ok(f.data(), f.size())) << "at bit " << start;
    for (std::size_t d : powers) flip(f, start + 32 - d);
  }
}

}  // namespace
}  // namespace xy::link
