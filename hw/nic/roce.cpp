#include "hw/nic/roce.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "hw/link/crc32.hpp"

namespace xy::nic {
namespace {

constexpr std::uint16_t kEtherTypeIpv4 = 0x0800;
constexpr std::uint8_t kProtocolUdp = 17;
constexpr std::size_t kIp = kEthernetBytes, kUdp = kIp + kIpv4Bytes, kBth = kUdp + kUdpBytes;

void put16(std::uint8_t* p, std::uint32_t v) {
  p[0] = static_cast<std::uint8_t>(v >> 8);
  p[1] = static_cast<std::uint8_t>(v);
}
void put24(std::uint8_t* p, std::uint32_t v) {
  p[0] = static_cast<std::uint8_t>(v >> 16);
  put16(p + 1, v);
}
void put32(std::uint8_t* p, std::uint32_t v) {
  put16(p, v >> 16);
  put16(p + 2, v);
}
std::uint32_t get16(const std::uint8_t* p) { return std::uint32_t{p[0]} << 8 | p[1]; }
std::uint32_t get24(const std::uint8_t* p) { return std::uint32_t{p[0]} << 16 | get16(p + 1); }
std::uint32_t get32(const std::uint8_t* p) { return get16(p) << 16 | get16(p + 2); }

// The ones' complement sum of RFC 1071, folded, not yet complemented.
std::uint32_t ones_sum(const std::uint8_t* p, std::size_t n, std::uint32_t sum = 0) {
  for (std::size_t i = 0; i + 1 < n; i += 2) sum += get16(p + i);
  if (n % 2) sum += std::uint32_t{p[n - 1]} << 8;
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return sum;
}

std::size_t extensions_bytes(std::uint8_t op) { return (has_reth(op) ? kRethBytes : 0) + (has_aeth(op) ? kAethBytes : 0); }

}  // namespace

bool has_reth(std::uint8_t op) {
  if (op == opcode::kCnp) return false;
  op &= 0x1f;
  return op == opcode::kWriteFirst || op == opcode::kWriteOnly || op == opcode::kReadRequest;
}

bool has_aeth(std::uint8_t op) {
  if (op == opcode::kCnp) return false;
  op &= 0x1f;
  return op == opcode::kAcknowledge || op == opcode::kReadResponseFirst || op == opcode::kReadResponseLast ||
         op == opcode::kReadResponseOnly;
}

bool is_known(std::uint8_t op) {
  if (op == opcode::kCnp) return true;
  const std::uint8_t transport = op & 0xe0, operation = op & 0x1f;
  return (transport == 0x00 && operation <= opcode::kAcknowledge && operation != 0x03 && operation != 0x05 &&
          operation != 0x09 && operation != 0x0b) ||
         (transport == opcode::kUc && operation <= opcode::kWriteOnly);
}

std::size_t icrc_offset(const std::uint8_t* frame, std::size_t size) {
  if (size < kBth + kBthBytes + kIcrcBytes) throw std::logic_error("icrc: frame too short for RoCEv2");
  const std::size_t end = kIp + get16(frame + kIp + 2) - kIcrcBytes;
  if (end > size - kIcrcBytes || end < kBth + kBthBytes) throw std::logic_error("icrc: IP length outside the frame");
  return end;
}

std::uint32_t icrc(const std::uint8_t* frame, std::size_t size) {
  const std::size_t end = icrc_offset(frame, size);
  std::uint8_t masked[8 + kIpv4Bytes + kUdpBytes + kBthBytes];
  std::memset(masked, 0xff, 8);
  std::memcpy(masked + 8, frame + kIp, kIpv4Bytes + kUdpBytes + kBthBytes);
  std::uint8_t* ip = masked + 8;
  ip[1] = 0xff;                   // TOS: DSCP and ECN, which switches rewrite
  ip[8] = 0xff;                   // TTL
  ip[10] = ip[11] = 0xff;         // header checksum
  ip[kIpv4Bytes + 6] = ip[kIpv4Bytes + 7] = 0xff;  // UDP checksum
  ip[kIpv4Bytes + kUdpBytes + 4] = 0xff;           // BTH FECN, BECN, reserved
  std::uint32_t reg = link::crc32_update(link::kCrc32Preset, masked, sizeof masked);
  reg = link::crc32_update(reg, frame + kBth + kBthBytes, end - (kBth + kBthBytes));
  return ~reg;
}

void encode(const RoceHeader& h, const std::uint8_t* payload, std::size_t size, std::vector<std::uint8_t>& out) {
  if (!is_known(h.opcode)) throw std::logic_error("RoCE encode: unknown opcode");
  if (h.reth.has_value() != has_reth(h.opcode) || h.aeth.has_value() != has_aeth(h.opcode))
    throw std::logic_error("RoCE encode: RETH/AETH do not match the opcode");
  if (h.dest_qp > kPsnMask || h.psn > kPsnMask || (h.aeth && h.aeth->msn > kPsnMask) || h.dscp > 63)
    throw std::logic_error("RoCE encode: a field does not fit (QP, PSN, MSN: 24 bits; DSCP: 6)");
  const std::size_t pad = (4 - size % 4) % 4;
  const std::size_t udp_length = kUdpBytes + kBthBytes + extensions_bytes(h.opcode) + size + pad + kIcrcBytes;
  const std::size_t ip_length = kIpv4Bytes + udp_length;
  if (ip_length > 0xffff) throw std::logic_error("RoCE encode: payload beyond an IPv4 packet");
  out.assign(std::max<std::size_t>(kIp + ip_length, kMinEthernetBytes), 0);
  std::uint8_t* p = out.data();

  std::memcpy(p, h.dst_mac.data(), 6);
  std::memcpy(p + 6, h.src_mac.data(), 6);
  put16(p + 12, kEtherTypeIpv4);

  std::uint8_t* ip = p + kIp;
  ip[0] = 0x45;  // version 4, 5 words
  ip[1] = static_cast<std::uint8_t>(h.dscp << 2 | static_cast<std::uint8_t>(h.ecn));
  put16(ip + 2, static_cast<std::uint32_t>(ip_length));
  put16(ip + 4, h.ip_id);
  put16(ip + 6, h.dont_fragment ? 0x4000 : 0);
  ip[8] = h.ttl;
  ip[9] = kProtocolUdp;
  put32(ip + 12, h.src_ip);
  put32(ip + 16, h.dst_ip);
  put16(ip + 10, ~ones_sum(ip, kIpv4Bytes) & 0xffff);

  std::uint8_t* udp = p + kUdp;
  put16(udp, h.src_port);
  put16(udp + 2, kRoceUdpPort);
  put16(udp + 4, static_cast<std::uint32_t>(udp_length));

  std::uint8_t* bth = p + kBth;
  bth[0] = h.opcode;
  bth[1] = static_cast<std::uint8_t>(h.solicited << 7 | h.migreq << 6 | pad << 4);  // TVer 0
  put16(bth + 2, h.pkey);
  bth[4] = static_cast<std::uint8_t>(h.fecn << 7 | h.becn << 6);
  put24(bth + 5, h.dest_qp);
  bth[8] = static_cast<std::uint8_t>(h.ack_req << 7);
  put24(bth + 9, h.psn);

  std::uint8_t* q = bth + kBthBytes;
  if (h.reth) {
    put32(q, static_cast<std::uint32_t>(h.reth->va >> 32));
    put32(q + 4, static_cast<std::uint32_t>(h.reth->va));
    put32(q + 8, h.reth->rkey);
    put32(q + 12, h.reth->length);
    q += kRethBytes;
  }
  if (h.aeth) {
    q[0] = h.aeth->syndrome;
    put24(q + 1, h.aeth->msn);
    q += kAethBytes;
  }
  if (size) std::memcpy(q, payload, size);
  q += size + pad;  // the pad bytes are zero

  const std::uint32_t crc = icrc(p, out.size());
  for (int i = 0; i < 4; ++i) q[i] = static_cast<std::uint8_t>(crc >> (8 * i));  // least significant byte first
  if (h.udp_checksum) {
    std::uint8_t pseudo[12];
    put32(pseudo, h.src_ip);
    put32(pseudo + 4, h.dst_ip);
    pseudo[8] = 0;
    pseudo[9] = kProtocolUdp;
    put16(pseudo + 10, static_cast<std::uint32_t>(udp_length));
    // The pseudo header and the UDP datagram each have an even length: their sums add.
    const std::uint32_t sum = ones_sum(udp, udp_length, ones_sum(pseudo, sizeof pseudo));
    const std::uint32_t check = ~sum & 0xffff;
    put16(udp + 6, check ? check : 0xffff);  // 0 means "no checksum"
  }
}

void mark_ce(std::vector<std::uint8_t>& frame) {
  if (frame.size() < kUdp || get16(frame.data() + 12) != kEtherTypeIpv4) return;
  std::uint8_t* ip = frame.data() + kIp;
  if ((ip[1] & 3) == static_cast<std::uint8_t>(Ecn::kNotEct)) return;
  ip[1] |= static_cast<std::uint8_t>(Ecn::kCe);
  put16(ip + 10, 0);
  put16(ip + 10, ~ones_sum(ip, kIpv4Bytes) & 0xffff);
}

RoceHeader cnp_header(std::uint32_t dest_qp) {
  RoceHeader h;
  h.opcode = opcode::kCnp;
  h.becn = true;  // as ConnectX NICs send it
  h.dest_qp = dest_qp;
  return h;
}

std::optional<Parsed> parse(const std::uint8_t* frame, std::size_t size, std::string* why, bool check_icrc) {
  auto fail = [why](const char* what) -> std::optional<Parsed> {
    if (why) *why = what;
    return std::nullopt;
  };
  if (size < kBth + kBthBytes + kIcrcBytes) return fail("shorter than Ethernet, IPv4, UDP, BTH and ICRC");
  if (get16(frame + 12) != kEtherTypeIpv4) return fail("EtherType is not IPv4");
  const std::uint8_t* ip = frame + kIp;
  if (ip[0] != 0x45) return fail("not IPv4 with a 20-byte header");
  if (ip[9] != kProtocolUdp) return fail("IP protocol is not UDP");
  const std::uint8_t* udp = frame + kUdp;
  if (get16(udp + 2) != kRoceUdpPort) return fail("UDP destination port is not 4791");
  const std::size_t ip_length = get16(ip + 2), udp_length = get16(udp + 4);
  if (kIp + ip_length > size || udp_length + kIpv4Bytes != ip_length) return fail("IP and UDP lengths disagree");
  const std::uint8_t* bth = frame + kBth;
  Parsed r;
  RoceHeader& h = r.header;
  std::memcpy(h.dst_mac.data(), frame, 6);
  std::memcpy(h.src_mac.data(), frame + 6, 6);
  h.dscp = ip[1] >> 2;
  h.ecn = static_cast<Ecn>(ip[1] & 3);
  h.ip_id = static_cast<std::uint16_t>(get16(ip + 4));
  h.dont_fragment = ip[6] & 0x40;
  h.ttl = ip[8];
  h.src_ip = get32(ip + 12);
  h.dst_ip = get32(ip + 16);
  h.src_port = static_cast<std::uint16_t>(get16(udp));
  h.udp_checksum = get16(udp + 6) != 0;
  h.opcode = bth[0];
  if (!is_known(h.opcode)) return fail("unknown BTH opcode");
  h.solicited = bth[1] & 0x80;
  h.migreq = bth[1] & 0x40;
  h.pad = (bth[1] >> 4) & 3;
  h.pkey = static_cast<std::uint16_t>(get16(bth + 2));
  h.fecn = bth[4] & 0x80;
  h.becn = bth[4] & 0x40;
  h.dest_qp = get24(bth + 5);
  h.ack_req = bth[8] & 0x80;
  h.psn = get24(bth + 9);
  std::size_t at = kBth + kBthBytes;
  const std::size_t end = kIp + ip_length - kIcrcBytes;
  if (at + extensions_bytes(h.opcode) + h.pad > end) return fail("packet shorter than its opcode's headers");
  if (has_reth(h.opcode)) {
    h.reth = Reth{std::uint64_t{get32(frame + at)} << 32 | get32(frame + at + 4), get32(frame + at + 8),
                  get32(frame + at + 12)};
    at += kRethBytes;
  }
  if (has_aeth(h.opcode)) {
    h.aeth = Aeth{frame[at], get24(frame + at + 1)};
    at += kAethBytes;
  }
  r.payload_offset = at;
  r.payload_size = end - at - h.pad;
  const std::uint8_t* wire = frame + end;
  r.icrc_on_wire = std::uint32_t{wire[0]} | std::uint32_t{wire[1]} << 8 | std::uint32_t{wire[2]} << 16 |
                   std::uint32_t{wire[3]} << 24;
  r.icrc_ok = check_icrc && r.icrc_on_wire == icrc(frame, size);
  return r;
}

}  // namespace xy::nic
