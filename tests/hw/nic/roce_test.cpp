// RoCEv2 packets (hw/nic/roce.hpp) against bytes from outside the project: the frames of scapy's
// RoCE tests (secdev/scapy, test/contrib/roce.uts), one of them a CNP captured from a ConnectX-4
// Lx, rebuilt here from their fields; and an ICRC computed in this file with zlib's CRC-32 over a
// masked copy made here, as IBTA Annex A17 describes it.
#include "hw/nic/roce.hpp"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <string>
#include <vector>

namespace xy::nic {
namespace {

std::vector<std::uint8_t> from_hex(const std::string& hex) {
  std::vector<std::uint8_t> out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) out.push_back(static_cast<std::uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return out;
}

std::uint32_t ipv4(int a, int b, int c, int d) {
  return static_cast<std::uint32_t>(a << 24 | b << 16 | c << 8 | d);
}

// The ICRC as the annex says, written independently: 8 bytes of 0xFF, then IPv4 (TOS, TTL,
// checksum masked), UDP (checksum masked), BTH (byte 4 masked) and the rest, up to the ICRC.
std::uint32_t reference_icrc(std::vector<std::uint8_t> frame) {
  const std::size_t ip = 14, ip_length = frame[ip + 2] << 8 | frame[ip + 3];
  frame[ip + 1] = 0xff;
  frame[ip + 8] = 0xff;
  frame[ip + 10] = frame[ip + 11] = 0xff;
  frame[ip + 20 + 6] = frame[ip + 20 + 7] = 0xff;
  frame[ip + 28 + 4] = 0xff;
  std::vector<std::uint8_t> input(8, 0xff);
  input.insert(input.end(), frame.begin() + ip, frame.begin() + ip + ip_length - 4);
  return static_cast<std::uint32_t>(crc32(0, input.data(), static_cast<uInt>(input.size())));
}

// scapy's "RoCE layer" test: UC SEND_ONLY, 18 bytes of data and 2 of pad, UDP checksum set.
TEST(Roce, ScapyUcSendOnlyFrameIsRebuiltByteForByte) {
  const std::vector<std::uint8_t> expected = from_hex(
      "248a07a8fa22248a07a8fa22080045010040047840004011b4d5c0a80007c0a80007c00012b7002caca22460ffff000000d300cf17"
      "104630818be28935d90e9a95505401be885e50000078f353f3");
  RoceHeader h;
  h.dst_mac = h.src_mac = {0x24, 0x8a, 0x07, 0xa8, 0xfa, 0x22};
  h.src_ip = h.dst_ip = ipv4(192, 168, 0, 7);
  h.dscp = 0;
  h.ecn = Ecn::kEct1;  // tos 0x01
  h.ip_id = 1144;
  h.ttl = 64;
  h.src_port = 49152;
  h.udp_checksum = true;
  h.opcode = opcode::kUc | opcode::kSendOnly;
  h.migreq = true;
  h.dest_qp = 211;
  h.psn = 13571856;
  const std::vector<std::uint8_t> data = from_hex("4630818be28935d90e9a95505401be885e50");  // 18 bytes
  std::vector<std::uint8_t> frame;
  encode(h, data.data(), data.size(), frame);
  EXPECT_EQ(frame, expected);
  // The ICRC's wire bytes are 78 f3 53 f3: the CRC 0xf353f378, least significant byte first.
  EXPECT_EQ(icrc(frame.data(), frame.size()), 0xf353f378u);
  EXPECT_EQ(reference_icrc(frame), 0xf353f378u);

  std::string why;
  const auto parsed = parse(frame.data(), frame.size(), &why);
  ASSERT_TRUE(parsed) << why;
  EXPECT_TRUE(parsed->icrc_ok);
  EXPECT_EQ(parsed->header.pad, 2);
  EXPECT_EQ(parsed->payload_size, 18u);
  EXPECT_EQ(parsed->header.psn, 13571856u);
  EXPECT_EQ(parsed->header.dest_qp, 211u);
  EXPECT_EQ(std::vector<std::uint8_t>(frame.begin() + static_cast<long>(parsed->payload_offset),
                                      frame.begin() + static_cast<long>(parsed->payload_offset + 18)),
            data);
}

// A CNP a ConnectX-4 Lx sent (scapy's "RoCE CNP packet from capture"): source port 0, UDP
// checksum 0, BECN set, DSCP 48 with ECT(0).
TEST(Roce, ConnectX4LxCnpCaptureIsRebuiltByteForByte) {
  const std::vector<std::uint8_t> capture = from_hex(
      "e41d2dab2bc27cfe90643b32080045c2003c718c4000401191610a0011010a001201000012b700280000"
      "8100ffff40000118" "0000000000000000000000000000000000000000" "82fd002a");
  RoceHeader h = cnp_header(0x118);
  h.dst_mac = {0xe4, 0x1d, 0x2d, 0xab, 0x2b, 0xc2};
  h.src_mac = {0x7c, 0xfe, 0x90, 0x64, 0x3b, 0x32};
  h.src_ip = ipv4(10, 0, 17, 1);
  h.dst_ip = ipv4(10, 0, 18, 1);
  h.dscp = 48;
  h.ecn = Ecn::kEct0;
  h.ip_id = 0x718c;
  h.src_port = 0;
  const std::vector<std::uint8_t> reserved(kCnpPadBytes, 0);
  std::vector<std::uint8_t> frame;
  encode(h, reserved.data(), reserved.size(), frame);
  EXPECT_EQ(frame, capture);
  EXPECT_EQ(reference_icrc(capture), 0x2a00fd82u);  // wire bytes 82 fd 00 2a
  const auto parsed = parse(capture.data(), capture.size());
  ASSERT_TRUE(parsed);
  EXPECT_TRUE(parsed->icrc_ok);
  EXPECT_EQ(parsed->header.opcode, opcode::kCnp);
  EXPECT_TRUE(parsed->header.becn);
}

// A switch marking CE or lowering the TTL leaves the ICRC valid; a flipped payload bit does not.
TEST(Roce, IcrcIgnoresWhatSwitchesRewriteAndCatchesPayloadDamage) {
  RoceHeader h;
  h.src_ip = ipv4(10, 0, 0, 1);
  h.dst_ip = ipv4(10, 0, 0, 2);
  h.ecn = Ecn::kEct0;
  h.src_port = 0xc123;
  h.opcode = opcode::kWriteFirst;
  h.reth = Reth{0x1122334455667788ull, 0xabcdef01, 1 << 20};
  h.dest_qp = 0x123456;
  h.psn = kPsnMask;
  std::vector<std::uint8_t> payload(1024);
  for (std::size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<std::uint8_t>(i * 7);
  std::vector<std::uint8_t> frame;
  encode(h, payload.data(), payload.size(), frame);
  ASSERT_EQ(frame.size(), kRoceOverheadBytes + kRethBytes + 1024);
  EXPECT_EQ(icrc(frame.data(), frame.size()), reference_icrc(frame));

  std::vector<std::uint8_t> marked = frame;
  marked[14 + 1] |= 3;  // CE
  marked[14 + 8] -= 1;  // one hop
  marked[14 + 28 + 4] |= 0x80;  // FECN
  auto parsed = parse(marked.data(), marked.size());
  ASSERT_TRUE(parsed);
  EXPECT_TRUE(parsed->icrc_ok);
  EXPECT_EQ(parsed->header.ecn, Ecn::kCe);
  ASSERT_TRUE(parsed->header.reth);
  EXPECT_EQ(parsed->header.reth->va, 0x1122334455667788ull);
  EXPECT_EQ(parsed->header.reth->length, 1u << 20);

  std::vector<std::uint8_t> damaged = frame;
  damaged[100] ^= 0x10;
  parsed = parse(damaged.data(), damaged.size());
  ASSERT_TRUE(parsed);
  EXPECT_FALSE(parsed->icrc_ok);
}

TEST(Roce, ShortPacketsArePaddedToTheEthernetMinimumOutsideTheIpLength) {
  RoceHeader h;
  h.opcode = opcode::kAcknowledge;
  h.aeth = Aeth{Aeth::kNakPsnSequenceError, 77};
  std::vector<std::uint8_t> frame;
  encode(h, nullptr, 0, frame);
  EXPECT_EQ(frame.size(), 62u);  // 14 + 20 + 8 + 12 + 4 + 4: no padding
  h.aeth.reset();
  h.opcode = opcode::kSendOnly;
  encode(h, nullptr, 0, frame);  // 58 bytes of packet
  ASSERT_EQ(frame.size(), kMinEthernetBytes);
  EXPECT_EQ(frame[16] << 8 | frame[17], 44);  // IP total length: 20 + 8 + 12 + 4
  const auto parsed = parse(frame.data(), frame.size());
  ASSERT_TRUE(parsed);
  EXPECT_TRUE(parsed->icrc_ok);
  EXPECT_EQ(parsed->payload_size, 0u);
}

TEST(Roce, HeadersThatDoNotMatchTheOpcodeAreRefused) {
  RoceHeader h;
  h.opcode = opcode::kWriteOnly;  // needs a RETH
  std::vector<std::uint8_t> frame;
  EXPECT_THROW(encode(h, nullptr, 0, frame), std::logic_error);
  h.opcode = opcode::kSendOnly;
  h.psn = 1u << 24;
  EXPECT_THROW(encode(h, nullptr, 0, frame), std::logic_error);
  h.psn = 0;
  encode(h, nullptr, 0, frame);
  frame[14 + 28] = 0x13;  // an atomic, not modelled
  std::string why;
  EXPECT_FALSE(parse(frame.data(), frame.size(), &why));
  EXPECT_EQ(why, "unknown BTH opcode");
  frame[14 + 23] = 0xb8;  // UDP port 4792
  EXPECT_FALSE(parse(frame.data(), frame.size(), &why));
  EXPECT_EQ(why, "UDP destination port is not 4791");
}

TEST(Roce, PsnArithmeticWrapsAt24Bits) {
  EXPECT_EQ(psn_add(kPsnMask, 1), 0u);
  EXPECT_EQ(psn_add(kPsnMask - 2, 5), 2u);
  EXPECT_EQ(psn_diff(2, kPsnMask - 2), 5);
  EXPECT_EQ(psn_diff(kPsnMask - 2, 2), -5);
  EXPECT_EQ(psn_diff(0x800000, 0), 0x800000);  // half the space: counted as ahead
  EXPECT_EQ(psn_diff(0x800001, 0), -0x7fffff);
}

}  // namespace
}  // namespace xy::nic
