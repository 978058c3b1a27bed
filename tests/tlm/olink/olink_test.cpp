#include <gtest/gtest.h>

#include "tlm/olink/memory.hpp"
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
  std::vector<std::uint8_t> frame(500, 0xAA);  // a reused buffer: the old bytes must go
  encode(h, data, sizeof data, frame);
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
  std::vector<std::uint8_t> frame;
  encode(Header{}, nullptr, 0, frame);
  EXPECT_FALSE(decode(std::vector<std::uint8_t>(frame.begin(), frame.end() - 1)).has_value());
  frame[13] ^= 1;  // another EtherType
  EXPECT_FALSE(decode(frame).has_value());
}

// IEEE 802.3's least frame is 64 bytes with its FCS: a frame without data (14 + 40 bytes of
// headers) is padded with zeros to 60, one with data past that is not.
TEST(OlinkFrame, FramesShorterThanEthernetsLeastArePaddedWithZeros) {
  std::vector<std::uint8_t> frame(500, 0xAA);
  Header h;
  h.op = Op::kLoad;
  h.bytes = 64;
  encode(h, nullptr, 0, frame);
  ASSERT_EQ(frame.size() + 4, 64u);
  for (std::size_t i = 14 + 40; i < frame.size(); ++i) EXPECT_EQ(frame[i], 0) << i;
  EXPECT_EQ(decode(frame)->bytes, 64u);  // the header, not the frame, says what the data is
  EXPECT_EQ(frame_bytes(0), 64u);
  const std::uint8_t data[20] = {};
  encode(h, data, 4, frame);
  EXPECT_EQ(frame.size(), 60u);
  encode(h, data, 20, frame);
  EXPECT_EQ(frame.size(), 14 + 40 + 20u);
  EXPECT_EQ(frame_bytes(20), 14 + 40 + 20 + 4u);
}

// The sizes the fast fabric books without building frames are those of the frames themselves:
// the request's payload from to_request, the response's data from the owner's memory.
TEST(OlinkFrame, DataBytesAreThoseOfTheRealRequestAndResponse) {
  std::uint8_t data[64] = {}, enables[4] = {0xFF, 0, 0xFF, 0};
  AtomicExtension atomic;
  const auto payload = [&](tlm::tlm_command command, std::uint32_t bytes, bool with_enables, bool is_atomic) {
    auto t = std::make_unique<tlm::tlm_generic_payload>();
    t->set_command(command);
    t->set_address(uva(1, 64));
    t->set_data_ptr(data);
    t->set_data_length(bytes);
    t->set_streaming_width(bytes);
    if (with_enables) {
      t->set_byte_enable_ptr(enables);
      t->set_byte_enable_length(4);
    }
    if (is_atomic) t->set_extension(&atomic);
    return t;
  };
  std::vector<std::unique_ptr<tlm::tlm_generic_payload>> cases;
  cases.push_back(payload(tlm::TLM_READ_COMMAND, 64, false, false));   // Load
  cases.push_back(payload(tlm::TLM_WRITE_COMMAND, 64, false, false));  // Store
  cases.push_back(payload(tlm::TLM_WRITE_COMMAND, 32, true, false));   // Store with byte enables
  cases.push_back(payload(tlm::TLM_WRITE_COMMAND, 8, false, true));    // fetch-add
  Memory memory;
  for (auto& t : cases) {
    Header h;
    std::vector<std::uint8_t> out, back;
    to_request(*t, 0, 1, h, out);
    ASSERT_TRUE(memory.serve(h, out.data(), back));
    EXPECT_EQ(request_data_bytes(*t, t->get_data_length()), out.size()) << static_cast<int>(h.op);
    EXPECT_EQ(response_data_bytes(*t, t->get_data_length()), back.size()) << static_cast<int>(h.op);
    if (t->get_extension<AtomicExtension>()) t->clear_extension(&atomic);
  }
}

}  // namespace
}  // namespace xy::olink
