// The MAC's wire format (hw/link/wire.hpp): every message kind's bytes written out
// here by hand from the layout the header states, the FCS checked against a bitwise CRC-32 written
// in this file (the model's runs on libdeflate) and against the published check value; every
// kind parsed back (a control frame's bytes made only when read too); a flipped bit, a cut frame, a
// frame of the wrong length for its kind and garbage refused.
#include "hw/link/wire.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace xy::link {
namespace {

using Bytes = std::vector<std::uint8_t>;

// IEEE 802.3 CRC-32 one bit at a time: reflected polynomial 0xEDB88320, preset all ones, result
// complemented.
std::uint32_t bitwise_crc32(const std::uint8_t* data, std::size_t size) {
  std::uint32_t reg = 0xFFFFFFFF;
  for (std::size_t i = 0; i < size; ++i) {
    reg ^= data[i];
    for (int bit = 0; bit < 8; ++bit) reg = (reg >> 1) ^ (0xEDB88320u & (0u - (reg & 1u)));
  }
  return ~reg;
}

// `body` followed by its FCS, least significant byte first (as the wire carries it).
Bytes sealed(Bytes body) {
  const std::uint32_t fcs = bitwise_crc32(body.data(), body.size());
  for (int i = 0; i < 4; ++i) body.push_back(static_cast<std::uint8_t>(fcs >> (8 * i)));
  return body;
}

TEST(LingyunWire, TheReferenceCrcGivesThePublishedCheckValue) {
  const std::string check = "123456789";
  EXPECT_EQ(bitwise_crc32(reinterpret_cast<const std::uint8_t*>(check.data()), check.size()), 0xCBF43926u);
}

// A data frame of 8 bytes (4 of payload and its FCS, which the port computes): kind 0xD5, the LLR
// sequence number in 3 bytes little endian, the payload, the FCS over all of it: 12 bytes, 4 more
// than the frame.
TEST(LingyunWire, ADataFrameIsKindSequenceNumberPayloadAndFcs) {
  Packet frame;
  frame.phantom = false;
  frame.bytes = 8;
  frame.payload = {0x11, 0x22, 0x33, 0x44};
  Bytes wire;
  encode_data(frame, 0x123456, wire);
  const Bytes expected = {0xD5, 0x56, 0x34, 0x12, 0x11, 0x22, 0x33, 0x44, 0x08, 0xB8, 0xA7, 0xB8};
  EXPECT_EQ(wire, expected);
  EXPECT_EQ(sealed({0xD5, 0x56, 0x34, 0x12, 0x11, 0x22, 0x33, 0x44}), expected);
  EXPECT_EQ(wire.size(), frame.bytes + kDataHeaderBytes);
}

// LLR control sets: kind 0x4C, then the sequence number in the low 22 bits and the kind (ACK 0,
// NACK 1, INIT 2) in the top 2 of 3 bytes: 8 bytes, one ordered set.
TEST(LingyunWire, LlrControlSetsAreKindTwentyTwoBitsOfSequenceTwoOfKindAndFcs) {
  struct Case {
    LlrControl control;
    Bytes expected;
  };
  const Case cases[] = {
      {{LlrControl::kAck, 0x000102}, {0x4C, 0x02, 0x01, 0x00, 0xB6, 0xDD, 0x19, 0xEA}},
      {{LlrControl::kNack, 0x00002A}, {0x4C, 0x2A, 0x00, 0x40, 0x3F, 0xBA, 0x80, 0xB3}},
      {{LlrControl::kInit, 0x3FFFFF}, {0x4C, 0xFF, 0xFF, 0xBF, 0x1B, 0x5F, 0xE4, 0x86}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(static_cast<int>(c.control.kind));
    Bytes wire;
    encode_llr(c.control, wire);
    EXPECT_EQ(wire, c.expected);
    EXPECT_EQ(sealed(Bytes(c.expected.begin(), c.expected.end() - 4)), c.expected);
    EXPECT_EQ(wire.size(), LlrControl::kWireBytes);
  }
}

// CBFC CF_Update: kind 0xCF, the VC, R_CF in 4 bytes little endian.
TEST(LingyunWire, ACfUpdateIsKindVcAndItsCounter) {
  CreditUpdate u;
  u.kind = CreditUpdate::kCf;
  u.vc = 3;
  u.freed = 0xA1B2C3D4;
  Bytes wire;
  encode_fc(FcMessage{u, std::nullopt}, wire);
  const Bytes expected = {0xCF, 0x03, 0xD4, 0xC3, 0xB2, 0xA1, 0x81, 0x2E, 0x21, 0x5B};
  EXPECT_EQ(wire, expected);
  EXPECT_EQ(sealed({0xCF, 0x03, 0xD4, 0xC3, 0xB2, 0xA1}), expected);
}

// CBFC CC_Update: kind 0xCC, the number of VCs, S_CC of each in 4 bytes little endian.
TEST(LingyunWire, ACcUpdateIsKindVcCountAndEveryVcsCounter) {
  CreditUpdate u;
  u.kind = CreditUpdate::kCc;
  u.counters = {1, 0x100, 0xFFFFFFFF};
  Bytes wire;
  encode_fc(FcMessage{u, std::nullopt}, wire);
  const Bytes body = {0xCC, 0x03, 0x01, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF};
  const Bytes expected = {0xCC, 0x03, 0x01, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00,
                          0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 0xFB, 0x27, 0x67};
  EXPECT_EQ(wire, expected);
  EXPECT_EQ(sealed(body), expected);
}

// PFC pause: kind 0x9A, the enable vector, 8 quanta of 2 bytes little endian.
TEST(LingyunWire, APauseIsKindEnableVectorAndEightQuanta) {
  PauseFrame p;
  p.enable_vector = 0x81;
  p.quanta[0] = 0xFFFF;
  p.quanta[7] = 0x0102;
  Bytes wire;
  encode_fc(FcMessage{std::nullopt, p}, wire);
  Bytes body = {0x9A, 0x81, 0xFF, 0xFF};
  body.insert(body.end(), 12, 0x00);  // quanta 1..6
  body.insert(body.end(), {0x02, 0x01});
  const Bytes expected = sealed(body);
  ASSERT_EQ(expected.size(), 22u);
  EXPECT_EQ(Bytes(expected.end() - 4, expected.end()), (Bytes{0xB9, 0x32, 0x6F, 0x9C}));
  EXPECT_EQ(wire, expected);
}

// One of every kind, as a port sends them.
std::vector<Bytes> one_of_every_kind() {
  std::vector<Bytes> all;
  Bytes w;
  Packet data;
  data.phantom = false;
  data.bytes = 9;
  data.payload = {1, 2, 3, 4, 5};
  encode_data(data, 77, w);
  all.push_back(w);
  for (auto kind : {LlrControl::kAck, LlrControl::kNack, LlrControl::kInit}) {
    encode_llr({kind, 1000}, w);
    all.push_back(w);
  }
  CreditUpdate cf;
  cf.kind = CreditUpdate::kCf;
  cf.vc = 1;
  cf.freed = 123456;
  encode_fc(FcMessage{cf, std::nullopt}, w);
  all.push_back(w);
  CreditUpdate cc;
  cc.kind = CreditUpdate::kCc;
  cc.counters = {10, 20, 30, 40};
  encode_fc(FcMessage{cc, std::nullopt}, w);
  all.push_back(w);
  PauseFrame pause;
  pause.enable_vector = 0x0F;
  for (int q = 0; q < 8; ++q) pause.quanta[q] = static_cast<std::uint16_t>(1000 * q + 1);
  encode_fc(FcMessage{std::nullopt, pause}, w);
  all.push_back(w);
  return all;
}

TEST(LingyunWire, EveryKindParsesBackToWhatWasSent) {
  const std::vector<Bytes> all = one_of_every_kind();
  const Received data = parse(all[0]);
  ASSERT_TRUE(data.fcs_ok);
  EXPECT_EQ(data.kind, WireKind::kData);
  EXPECT_EQ(data.seq, 77u);
  EXPECT_FALSE(data.llr || data.fc);
  Packet back;
  back.phantom = false;
  unwrap_data(all[0], back);
  EXPECT_EQ(back.bytes, 9u);
  EXPECT_EQ(back.payload, (Bytes{1, 2, 3, 4, 5}));

  const LlrControl::Kind kinds[] = {LlrControl::kAck, LlrControl::kNack, LlrControl::kInit};
  for (int i = 0; i < 3; ++i) {
    const Received r = parse(all[1 + i]);
    ASSERT_TRUE(r.fcs_ok) << i;
    EXPECT_EQ(r.kind, WireKind::kLlr);
    ASSERT_TRUE(r.llr);
    EXPECT_EQ(r.llr->kind, kinds[i]);
    EXPECT_EQ(r.llr->seq, 1000u);
  }

  const Received cf = parse(all[4]);
  ASSERT_TRUE(cf.fcs_ok && cf.fc && cf.fc->credit);
  EXPECT_EQ(cf.kind, WireKind::kCf);
  EXPECT_EQ(cf.fc->credit->kind, CreditUpdate::kCf);
  EXPECT_EQ(cf.fc->credit->vc, 1);
  EXPECT_EQ(cf.fc->credit->freed, 123456u);
  EXPECT_FALSE(cf.fc->pause);

  const Received cc = parse(all[5]);
  ASSERT_TRUE(cc.fcs_ok && cc.fc && cc.fc->credit);
  EXPECT_EQ(cc.kind, WireKind::kCc);
  EXPECT_EQ(cc.fc->credit->kind, CreditUpdate::kCc);
  EXPECT_EQ(cc.fc->credit->counters, (std::vector<std::uint32_t>{10, 20, 30, 40}));

  const Received pause = parse(all[6]);
  ASSERT_TRUE(pause.fcs_ok && pause.fc && pause.fc->pause);
  EXPECT_EQ(pause.kind, WireKind::kPause);
  EXPECT_FALSE(pause.fc->credit);
  EXPECT_EQ(pause.fc->pause->enable_vector, 0x0F);
  for (int q = 0; q < 8; ++q) EXPECT_EQ(pause.fc->pause->quanta[q], 1000 * q + 1) << q;
}

// A phantom frame (no payload) still goes on the wire at its length, with a valid FCS; unwrapped,
// it is its length again and carries no payload.
TEST(LingyunWire, APhantomFrameGoesOutAtItsLengthAndComesBackWithoutPayload) {
  Packet frame;
  frame.id = 5;
  frame.bytes = 64;
  frame.src = 0x0102;
  frame.dst = 7;
  Bytes wire;
  encode_data(frame, 9, wire);
  ASSERT_EQ(wire.size(), 68u);
  EXPECT_EQ(Bytes(wire.begin(), wire.begin() + 4), (Bytes{0xD5, 0x09, 0x00, 0x00}));
  // An Ethernet header naming the endpoints (so a capture shows them), then 5 x 131 + i.
  EXPECT_EQ(Bytes(wire.begin() + 4, wire.begin() + 18),
            (Bytes{0x02, 0, 0, 0, 0, 7, 0x02, 0, 0, 0, 0x01, 0x02, 0x88, 0xB5}));
  EXPECT_EQ(wire[18], static_cast<std::uint8_t>(5 * 131 + 14));
  EXPECT_EQ(sealed(Bytes(wire.begin(), wire.end() - 4)), wire);
  const Received r = parse(wire);
  EXPECT_TRUE(r.fcs_ok);
  EXPECT_EQ(r.seq, 9u);
  Packet back;
  back.payload = {1, 2, 3};
  unwrap_data(wire, back);
  EXPECT_EQ(back.bytes, 64u);
  EXPECT_TRUE(back.payload.empty());
}

// A control frame sealed for a line (Mac): an LLR set's and a CF_Update's bytes are owed, its
// length known at once, its bytes the ones written out by hand above when read; intact, it parses
// from its fields to what its bytes say; damaged, its bytes are made and checked.
TEST(LingyunWire, AControlFrameCarriesItsMessagesBytesMadeWhenRead) {
  CreditUpdate u;
  u.kind = CreditUpdate::kCf;
  u.vc = 3;
  u.freed = 0xA1B2C3D4;
  Packet ack, cf;
  seal_control(ack, LlrControl{LlrControl::kAck, 0x000102});
  seal_control(cf, FcMessage{u, std::nullopt});
  const Bytes ack_bytes = {0x4C, 0x02, 0x01, 0x00, 0xB6, 0xDD, 0x19, 0xEA};
  const Bytes cf_bytes = {0xCF, 0x03, 0xD4, 0xC3, 0xB2, 0xA1, 0x81, 0x2E, 0x21, 0x5B};
  for (auto [frame, bytes] : {std::pair{&ack, &ack_bytes}, std::pair{&cf, &cf_bytes}}) {
    EXPECT_TRUE(frame->payload.empty());
    EXPECT_EQ(frame->size_now(), bytes->size());
    frame->intact = true;
    const Received from_fields = parse(*frame);
    EXPECT_TRUE(frame->payload.empty());
    Packet copy = *frame;
    EXPECT_EQ(copy.bytes_now(), *bytes);
    const Received from_bytes = parse(*bytes);
    ASSERT_TRUE(from_fields.fcs_ok && from_bytes.fcs_ok);
    EXPECT_EQ(from_fields.kind, from_bytes.kind);
    EXPECT_EQ(from_fields.llr.has_value(), from_bytes.llr.has_value());
    if (from_bytes.llr) {
      EXPECT_EQ(from_fields.llr->kind, from_bytes.llr->kind);
      EXPECT_EQ(from_fields.llr->seq, from_bytes.llr->seq);
    }
    ASSERT_EQ(from_fields.fc.has_value(), from_bytes.fc.has_value());
    if (from_bytes.fc) {
      EXPECT_EQ(from_fields.fc->credit->vc, from_bytes.fc->credit->vc);
      EXPECT_EQ(from_fields.fc->credit->freed, from_bytes.fc->credit->freed);
    }
    frame->intact = false;  // as a damaged codeword delivers it
    frame->bytes_now()[2] ^= 0x10;
    EXPECT_FALSE(parse(*frame).fcs_ok);
  }
  EXPECT_EQ(ack.bytes_now().size(), LlrControl::kWireBytes);

  CreditUpdate cc;  // a CC_Update's bytes (a counter per VC) are written at once
  cc.kind = CreditUpdate::kCc;
  cc.counters = {1, 0x100, 0xFFFFFFFF};
  Packet ccf;
  seal_control(ccf, FcMessage{cc, std::nullopt});
  EXPECT_FALSE(ccf.owe);
  EXPECT_EQ(ccf.payload, sealed({0xCC, 0x03, 0x01, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF}));
}

// CRC-32 catches every single-bit error: each bit of each kind's frame flipped in turn.
TEST(LingyunWire, EveryFlippedBitOfEveryKindIsCaught) {
  int flips = 0;
  for (const Bytes& good : one_of_every_kind())
    for (std::size_t bit = 0; bit < 8 * good.size(); ++bit) {
      Bytes bad = good;
      bad[bit / 8] ^= static_cast<std::uint8_t>(1u << (bit % 8));
      const Received r = parse(bad);
      EXPECT_FALSE(r.fcs_ok) << "kind 0x" << std::hex << int{good[0]} << std::dec << " bit " << bit;
      EXPECT_FALSE(r.llr || r.fc);
      ++flips;
    }
  EXPECT_EQ(flips, 8 * (13 + 3 * 8 + 10 + 22 + 22));
}

TEST(LingyunWire, ACutFrameIsRefused) {
  for (const Bytes& good : one_of_every_kind())
    for (std::size_t n = 0; n < good.size(); ++n)
      EXPECT_FALSE(parse(Bytes(good.begin(), good.begin() + n)).fcs_ok) << "kind " << int{good[0]} << ", " << n << " bytes";
}

// Frames whose FCS holds but whose length or fields do not fit their kind: nothing in them is
// trusted.
TEST(LingyunWire, AFrameWithAGoodFcsButTheWrongShapeForItsKindIsRefused) {
  const std::vector<std::pair<const char*, Bytes>> cases = {
      {"nothing but an FCS", sealed({})},
      {"data without its whole sequence number", sealed({0xD5, 0x01, 0x02})},
      {"LLR one byte short", sealed({0x4C, 0x01, 0x00})},
      {"LLR one byte long", sealed({0x4C, 0x01, 0x00, 0x00, 0x00})},
      {"LLR of kind 3", sealed({0x4C, 0x01, 0x00, 0xC0})},
      {"CF without its counter's last byte", sealed({0xCF, 0x00, 0x01, 0x02, 0x03})},
      {"CC saying 3 VCs with 2 counters", sealed({0xCC, 0x03, 1, 0, 0, 0, 2, 0, 0, 0})},
      {"CC without its VC count", sealed({0xCC})},
      {"pause with 7 quanta", sealed({0x9A, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})},
      {"an unknown kind", sealed({0x00, 0x01, 0x02, 0x03})},
  };
  for (const auto& [what, bytes] : cases) {
    const Received r = parse(bytes);
    EXPECT_FALSE(r.fcs_ok) << what;
    EXPECT_FALSE(r.llr || r.fc) << what;
  }
}

// Bytes from a generator written here (a 64-bit LCG, Knuth's MMIX constants), 1 to 40 bytes long.
TEST(LingyunWire, GarbageIsRefused) {
  std::uint64_t x = 12345;
  for (int i = 0; i < 10000; ++i) {
    Bytes junk(1 + i % 40);
    for (auto& b : junk) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      b = static_cast<std::uint8_t>(x >> 56);
    }
    ASSERT_FALSE(parse(junk).fcs_ok) << "case " << i;
  }
}

TEST(LingyunWire, ADataFrameMustBeLongerThanItsFcsAndCarryAllButItsFcsAsPayload) {
  Packet tiny;
  tiny.bytes = 4;
  Bytes w;
  EXPECT_THROW(encode_data(tiny, 0, w), std::logic_error);
  Packet wrong;
  wrong.phantom = false;
  wrong.bytes = 10;
  wrong.payload = Bytes(10);  // the FCS is the port's: 6 bytes of payload expected
  EXPECT_THROW(encode_data(wrong, 0, w), std::logic_error);
}

}  // namespace
}  // namespace xy::link
