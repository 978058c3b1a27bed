// RoCEv2 packets as real bytes: Ethernet II, IPv4 (its ECN bits, its header checksum), UDP to
// port 4791 (the source port carries the flow's entropy), the InfiniBand BTH, RETH and AETH where
// the opcode has them, the payload padded to 4 bytes (BTH PadCnt), and the ICRC. The MAC adds
// the FCS (hw/link/wire.hpp); Ethernet padding to 60 bytes comes after the ICRC and is not in the
// IP length.
//
// The ICRC is computed as IBTA Annex A17 says and Linux rxe and scapy compute it: CRC-32 (the
// Ethernet polynomial and bit order) over 8 bytes of 0xFF (the masked LRH), the IPv4 header with
// TOS, TTL and header checksum set to all ones, the UDP header with its checksum set to all ones,
// the BTH with byte 4 (FECN, BECN, reserved) set to all ones, then every byte up to the ICRC;
// it goes on the wire least significant byte first. The masked fields are those a switch may
// change (ECN marks, TTL), so the ICRC holds end to end. Checked in tests/hw/nic against frames
// from scapy's RoCE tests (one a ConnectX-4 Lx capture) and a CRC written in the test.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace xy::nic {

inline constexpr std::uint16_t kRoceUdpPort = 4791;
inline constexpr std::uint32_t kEthernetBytes = 14, kIpv4Bytes = 20, kUdpBytes = 8, kBthBytes = 12, kRethBytes = 16,
                               kAethBytes = 4, kIcrcBytes = 4, kCnpPadBytes = 16;
inline constexpr std::uint32_t kMinEthernetBytes = 60;  // before the FCS
// Bytes of a packet around its payload: Ethernet, IPv4, UDP, BTH and ICRC (RETH, AETH extra).
inline constexpr std::uint32_t kRoceOverheadBytes = kEthernetBytes + kIpv4Bytes + kUdpBytes + kBthBytes + kIcrcBytes;

// BTH opcodes: the transport in the top three bits (RC 0x00, UC 0x20), the operation below.
namespace opcode {
inline constexpr std::uint8_t kSendFirst = 0x00, kSendMiddle = 0x01, kSendLast = 0x02, kSendOnly = 0x04,
                              kWriteFirst = 0x06, kWriteMiddle = 0x07, kWriteLast = 0x08, kWriteOnly = 0x0a,
                              kReadRequest = 0x0c, kReadResponseFirst = 0x0d, kReadResponseMiddle = 0x0e,
                              kReadResponseLast = 0x0f, kReadResponseOnly = 0x10, kAcknowledge = 0x11,
                              kCnp = 0x81, kUc = 0x20;
}  // namespace opcode
bool has_reth(std::uint8_t opcode);  // WRITE first and only, READ request
bool has_aeth(std::uint8_t opcode);  // ACK, READ response first, last and only
bool is_known(std::uint8_t opcode);  // one of the RC or UC operations above, or CNP

// ECN codepoints of the IPv4 TOS byte's low two bits (RFC 3168).
enum class Ecn : std::uint8_t { kNotEct = 0, kEct1 = 1, kEct0 = 2, kCe = 3 };

struct Reth {
  std::uint64_t va = 0;
  std::uint32_t rkey = 0, length = 0;  // length: the whole transfer's bytes
};

// AETH: the syndrome's top three bits say ACK (000), RNR NAK (001) or NAK (011, with a code).
struct Aeth {
  std::uint8_t syndrome = 0;
  std::uint32_t msn = 0;  // 24 bits
  static constexpr std::uint8_t kAck = 0x1f;                // ACK, unlimited credits
  static constexpr std::uint8_t kNakPsnSequenceError = 0x60;
  bool ack() const { return (syndrome & 0xe0) == 0x00; }
  bool nak() const { return (syndrome & 0xe0) == 0x60; }
};

struct RoceHeader {
  std::array<std::uint8_t, 6> dst_mac{}, src_mac{};
  std::uint32_t src_ip = 0, dst_ip = 0;
  std::uint8_t dscp = 0;
  Ecn ecn = Ecn::kNotEct;
  std::uint16_t ip_id = 0;
  std::uint8_t ttl = 64;
  bool dont_fragment = true;
  std::uint16_t src_port = 0;   // the flow's entropy, which ECMP hashes
  bool udp_checksum = false;    // RoCEv2 senders may leave it 0; computed when set
  std::uint8_t opcode = 0;
  bool solicited = false, migreq = false;
  std::uint8_t pad = 0;         // PadCnt: set by encode from the payload's length
  std::uint16_t pkey = 0xffff;
  bool fecn = false, becn = false;
  std::uint32_t dest_qp = 0;    // 24 bits
  bool ack_req = false;
  std::uint32_t psn = 0;        // 24 bits
  std::optional<Reth> reth;     // present iff has_reth(opcode)
  std::optional<Aeth> aeth;     // present iff has_aeth(opcode)
};

// Appends the packet's bytes to `out` (cleared first): headers, payload, pad, ICRC, and Ethernet
// padding to 60 bytes. Throws std::logic_error for a header whose extensions do not match its
// opcode or whose fields do not fit.
void encode(const RoceHeader& h, const std::uint8_t* payload, std::size_t size, std::vector<std::uint8_t>& out);
// A CNP (opcode 0x81, 16 reserved bytes of zero) telling the sender of `dest_qp` to slow down.
RoceHeader cnp_header(std::uint32_t dest_qp);

// Marks an ECN-capable IPv4 frame Congestion Experienced as a switch does, its header checksum
// updated; a frame that is not ECN-capable is left as it is.
void mark_ce(std::vector<std::uint8_t>& frame);

// Where a frame's ICRC sits, from its IP total length: the offset of its first byte. Throws
// std::logic_error for a frame too short for RoCEv2 or an IP length outside it.
std::size_t icrc_offset(const std::uint8_t* frame, std::size_t size);
// The ICRC of a frame, Ethernet header included: the CRC over the masked fields and every byte
// from the IP header up to the ICRC.
std::uint32_t icrc(const std::uint8_t* frame, std::size_t size);

struct Parsed {
  RoceHeader header;
  std::size_t payload_offset = 0, payload_size = 0;  // without the pad
  std::uint32_t icrc_on_wire = 0;  // as read, least significant byte first
  bool icrc_ok = false;            // icrc_on_wire is the frame's ICRC (when asked to check)
};
// Reads a frame (without its FCS). Nothing, with `why` said, for a frame that is not RoCEv2 over
// IPv4 (EtherType, version, protocol, port), is truncated, or whose lengths disagree.
// `check_icrc` false leaves the ICRC to someone else (an RTL twin): icrc_ok is then false.
std::optional<Parsed> parse(const std::uint8_t* frame, std::size_t size, std::string* why = nullptr,
                            bool check_icrc = true);

// Who computes a received frame's ICRC: the model (icrc above) unless a twin is dropped in.
class IcrcChecker {
 public:
  virtual ~IcrcChecker() = default;
  virtual std::uint32_t icrc(const std::uint8_t* frame, std::size_t size) = 0;
};

// PSN arithmetic modulo 2^24.
inline constexpr std::uint32_t kPsnMask = 0xFFFFFF;
inline std::uint32_t psn_add(std::uint32_t psn, std::uint32_t n) { return (psn + n) & kPsnMask; }
// b - a as a signed distance in (-2^23, 2^23]: positive when b is after a.
inline std::int32_t psn_diff(std::uint32_t b, std::uint32_t a) {
  const std::uint32_t d = (b - a) & kPsnMask;
  return d > 0x800000 ? static_cast<std::int32_t>(d) - 0x1000000 : static_cast<std::int32_t>(d);
}

}  // namespace xy::nic
