// What a MAC puts on its line: every data frame and every control message as a frame of
// real bytes with a real CRC-32 FCS, so that an uncorrectable codeword that damages it is caught
// by the MAC's check, whatever it carried.
//
// Layout (little endian): byte 0 the kind; then
//   data:    seq (3 bytes, the LLR sequence number), the frame's bytes without its FCS, FCS;
//   LLR:     seq (3 bytes), FCS                      — ACK, NACK, INIT (8 bytes, an ordered set)
//   CF:      vc, R_CF (4 bytes), FCS                 — CBFC CF_Update
//   CC:      vcs, S_CC per VC (4 bytes each), FCS    — CBFC CC_Update
//   pause:   enable vector, quanta per priority (2 bytes each, 8), FCS — PFC
// Abstracted: UEC carries the LLR sequence number in the preamble; here it costs 4 bytes of the
// frame (the kind and seq), so a data frame is 4 bytes longer on the line than on a plain MAC.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "hw/link/flow_control.hpp"
#include "hw/link/llr.hpp"
#include "kernel/packet.hpp"

namespace xy::link {

enum class WireKind : std::uint8_t { kData = 0xD5, kLlr = 0x4C, kCf = 0xCF, kCc = 0xCC, kPause = 0x9A };
inline constexpr std::uint32_t kDataHeaderBytes = 4;  // kind + seq
inline constexpr std::uint32_t kPhantomEthernetBytes = 14;  // destination, source, EtherType

// Writes the wire bytes of a data frame: its header, its bytes and the FCS. A frame with a
// payload carries it (bytes - 4 of it, without the FCS); a phantom frame a pattern from its id,
// under an Ethernet header naming its endpoints when it is long enough (destination and source
// 02:00:<id, 4 bytes>, EtherType 0x88B5, local experimental). The MAC puts them in the frame's
// payload; `bytes` stays the frame's length until the far MAC unwraps it.
void encode_data(const Packet& frame, std::uint32_t seq, std::vector<std::uint8_t>& out);
// Makes `frame` the wire frame a MAC hands its line: its payload becomes the bytes encode_data
// writes (`scratch` takes its old buffer). A phantom frame's bytes follow from its fields, so
// they are owed instead (Packet::bytes_now makes them from its fields as sealed): a frame
// nobody reads as bytes (delivered intact, no capture) never has them made.
void seal_data(Packet& frame, std::uint32_t seq, std::vector<std::uint8_t>& scratch);
void encode_llr(const LlrControl& c, std::vector<std::uint8_t>& out);
void encode_fc(const FcMessage& m, std::vector<std::uint8_t>& out);
// Makes `frame` (a control frame) carry the message: the bytes encode_* writes, owed (made when
// read, as a phantom data frame's) for an LLR set and a CF_Update, which follow from a few fields.
void seal_control(Packet& frame, const LlrControl& c);
void seal_control(Packet& frame, const FcMessage& m);

// What a received wire frame is, once its FCS has been checked.
struct Received {
  WireKind kind = WireKind::kData;
  bool fcs_ok = false;
  std::uint32_t seq = 0;                  // data, LLR
  std::optional<LlrControl> llr;
  std::optional<FcMessage> fc;
};
// Checks the FCS over `bytes` and, when it holds, parses the rest. A frame too short or of an
// unknown kind is a failed FCS (nothing in it can be trusted). `intact`: the bytes are known to be
// those an encode_* sealed (Packet::intact), so the FCS holds and is not computed: same outcome,
// less work.
Received parse(const std::vector<std::uint8_t>& bytes, bool intact = false);
// The same for a wire frame as a line delivered it (Packet::intact): one whose bytes are owed and
// intact is read from the fields it was sealed with; any other's bytes are made if owed and read.
Received parse(Packet& wire);

namespace detail {
void make_owed_data(Packet& w);  // a phantom data frame's wire bytes, made when read
}
// A data wire frame sealed with its bytes owed and delivered intact (most frames): parse() would
// find its FCS good and its sequence number in `owed_seq`, read here without parsing.
inline bool intact_owed_data(const Packet& w) { return w.intact && w.owe == &detail::make_owed_data; }

// The frame a data wire frame carried, back as it was sent: `bytes` and, unless phantom, its
// payload (the wire's frame bytes).
void unwrap_data(const std::vector<std::uint8_t>& wire, Packet& frame);
// The same in place, for a wire frame whose bytes may be owed.
inline void unwrap_data(Packet& wire) {
  if (wire.owe != &detail::make_owed_data) return unwrap_data(wire.bytes_now(), wire);
  wire.bytes = wire.owed_bytes - kDataHeaderBytes;
  wire.owe = nullptr;
}

}  // namespace xy::link
