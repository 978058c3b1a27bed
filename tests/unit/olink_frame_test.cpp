#include <gtest/gtest.h>

#include "tlm/olink/olink.hpp"

namespace xy::olink {
namespace {

TEST(OlinkFrame, EveryHeaderFieldAndTheDataSurviveEncodeAndDecode) {
  Header h;
  h.op = Op::kCompareSwap;
  h.status = Header::kByteEnables;
  h.src = 0x1234;
  h.dst = 0x0BCD;
  h.bytes = 8;
  h.address = uva(0x0B, 0x12'3456'7890);
  h.txn = 0xDEADBEEF;
  h.operand = 0x0102030405060708;
  h.compare = 0xF0E0D0C0B0A09080;
  const std::uint8_t data[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  const auto frame = encode(h, data, sizeof data);
  ASSERT_EQ(frame.size(), kEthernetHeaderBytes + kHeaderBytes + sizeof data);
  EXPECT_EQ(frame[12], 0x88);  // EtherType
  EXPECT_EQ(frame[14], 4);     // op byte leads the OLink header
  EXPECT_EQ(frame[14 + 8], 0x90);  // address, little-endian

  const auto d = decode(frame);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->op, h.op);
  EXPECT_EQ(d->status, h.status);
  EXPECT_EQ(d->src, h.src);
  EXPECT_EQ(d->dst, h.dst);
  EXPECT_EQ(d->bytes, h.bytes);
  EXPECT_EQ(d->address, h.address);
  EXPECT_EQ(gpu_of(d->address), 0x0Bu);
  EXPECT_EQ(d->address & kOffsetMask, 0x12'3456'7890u);
  EXPECT_EQ(d->txn, h.txn);
  EXPECT_EQ(d->operand, h.operand);
  EXPECT_EQ(d->compare, h.compare);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(payload_of(frame)[i], data[i]);
}

TEST(OlinkFrame, ShortOrForeignFramesAreNotDecoded) {
  auto frame = encode(Header{}, nullptr, 0);
  EXPECT_FALSE(decode(std::vector<std::uint8_t>(frame.begin(), frame.end() - 1)).has_value());
  frame[13] ^= 1;  // another EtherType
  EXPECT_FALSE(decode(frame).has_value());
}

}  // namespace
}  // namespace xy::olink
