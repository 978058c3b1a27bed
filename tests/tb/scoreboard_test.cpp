#include "tb/lib/scoreboard.hpp"

#include <gtest/gtest.h>

#include "kernel/rng.hpp"

namespace xy {
namespace {

Packet random_frame(Rng& rng, std::uint64_t id, std::uint32_t bytes) {
  Packet p;
  p.id = id;
  p.bytes = bytes;
  p.phantom = false;
  p.payload.resize(bytes);
  rng.fill(p.payload.data(), bytes);
  return p;
}

// Every byte of frames of every length up to a few words, and of long ones, changed to another
// value, changes the digest; so does the length alone.
TEST(Scoreboard, DigestChangesWithAnyOneByteOrTheLength) {
  Rng rng(1, "scoreboard_test");
  for (std::uint32_t bytes : {1u, 2u, 7u, 8u, 9u, 15u, 16u, 17u, 31u, 64u, 1500u, 9000u}) {
    Packet p = random_frame(rng, 1, bytes);
    const std::uint64_t d = Scoreboard::digest(p);
    for (std::uint32_t i = 0; i < bytes; ++i) {
      const std::uint8_t was = p.payload[i];
      p.payload[i] = static_cast<std::uint8_t>(was + 1 + rng.below(255));
      ASSERT_NE(Scoreboard::digest(p), d) << bytes << " bytes, byte " << i;
      p.payload[i] = was;
    }
    ASSERT_EQ(Scoreboard::digest(p), d);
    ++p.bytes;
    EXPECT_NE(Scoreboard::digest(p), d);
  }
}

TEST(Scoreboard, CountsAFrameWithOtherBytesAsCorrupted) {
  Rng rng(2, "scoreboard_test");
  Scoreboard sb;
  Packet a = random_frame(rng, 1, 300), b = random_frame(rng, 2, 300);
  sb.expect(a);
  sb.expect(b);
  EXPECT_EQ(sb.receive(a), "");
  b.payload[299] ^= 0x10;
  EXPECT_NE(sb.receive(b), "");
  EXPECT_EQ(sb.corrupted(), 1u);
  EXPECT_EQ(sb.received(), 2u);
}

}  // namespace
}  // namespace xy
