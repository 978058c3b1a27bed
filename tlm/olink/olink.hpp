// OLink: memory semantics (Load, Store, atomics) across the fabric, carried in Ethernet frames.
//
// Address map (UVA): bits 47..40 = the GPU that owns the memory, bits 39..0 = the offset in its
// memory. A transaction travels as a request frame to the owner and a response frame back; both
// carry a 40-byte OLink header (real bytes, little-endian) after the 14-byte Ethernet header:
//   0 op, 1 status (responses) or flags (requests: bit 0 = byte enables follow the data),
//   2..3 source GPU, 4..5 destination GPU, 6..7 data bytes, 8..15 address,
//   16..19 transaction id, 20..27 operand (atomics), 28..35 compare (CAS), 36..39 zero
// followed by the data (stores, load responses, the old value of an atomic) and, for a store
// with byte enables, one enable byte per data byte, then zeros up to Ethernet's least frame (a
// load's request, a Store's completion). The frame also pays 4 bytes of FCS.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include <tlm>

namespace xy::olink {

inline constexpr int kGpuShift = 40;
inline constexpr std::uint64_t kOffsetMask = (std::uint64_t{1} << kGpuShift) - 1;
inline constexpr std::uint32_t kEthernetHeaderBytes = 14, kHeaderBytes = 40, kFcsBytes = 4;
inline constexpr std::uint32_t kPreambleGapBytes = 8 + 12;  // on the line between frames
inline constexpr std::uint32_t kMinFrameBytes = 64;          // Ethernet's least, FCS included

// A frame's bytes with its FCS when it carries `data_bytes` after the headers: padded to 64.
inline constexpr std::uint32_t frame_bytes(std::uint32_t data_bytes) {
  const std::uint32_t b = kEthernetHeaderBytes + kHeaderBytes + data_bytes + kFcsBytes;
  return b < kMinFrameBytes ? kMinFrameBytes : b;
}

inline std::uint64_t uva(std::uint32_t gpu, std::uint64_t offset) {
  return (static_cast<std::uint64_t>(gpu) << kGpuShift) | offset;
}
inline std::uint32_t gpu_of(std::uint64_t address) { return static_cast<std::uint32_t>(address >> kGpuShift); }

enum class Op : std::uint8_t { kLoad = 1, kStore = 2, kFetchAdd = 3, kCompareSwap = 4, kResponse = 0x80 };

// An atomic on a 64-bit word, attached to a tlm_generic_payload (command WRITE for the data path,
// 8-byte data buffer that returns the old value).
struct AtomicExtension : tlm::tlm_extension<AtomicExtension> {
  enum Kind { kFetchAdd, kCompareSwap } kind = kFetchAdd;
  std::uint64_t operand = 0;  // the addend, or the new value for CAS
  std::uint64_t compare = 0;  // CAS: swap only if the word equals this
  tlm::tlm_extension_base* clone() const override { return new AtomicExtension(*this); }
  void copy_from(const tlm::tlm_extension_base& other) override {
    *this = static_cast<const AtomicExtension&>(other);
  }
};

// The header fields, and encoding into / decoding from a frame's bytes.
struct Header {
  Op op = Op::kLoad;
  std::uint8_t status = 0;  // responses: a tlm_response_status; requests: flags (kByteEnables)
  std::uint16_t src = 0, dst = 0;
  std::uint16_t bytes = 0;
  std::uint64_t address = 0;
  std::uint32_t txn = 0;
  std::uint64_t operand = 0;
  std::uint64_t compare = 0;
  static constexpr std::uint8_t kByteEnables = 1;
};

// A GPU's transaction as a request: fills `h` (op, addresses, length, atomic operands, flags)
// and `payload` (a Store's data, then its byte enables if it has any).
void to_request(const tlm::tlm_generic_payload& trans, std::uint16_t src, std::uint32_t txn, Header& h,
                std::vector<std::uint8_t>& payload);

// The data bytes in a transaction's request and response frames when it carries `bytes`: a
// Store's data (and byte enables) out, a Load's data or an atomic's old value back.
std::uint32_t request_data_bytes(const tlm::tlm_generic_payload& trans, std::uint32_t bytes);
std::uint32_t response_data_bytes(const tlm::tlm_generic_payload& trans, std::uint32_t bytes);

// The Stores of a bulk write: segment `index` of `segment_bytes` (the last may be shorter).
std::uint32_t segments_of(const tlm::tlm_generic_payload& trans, std::uint32_t segment_bytes);
void to_segment(const tlm::tlm_generic_payload& trans, std::uint16_t src, std::uint32_t txn, std::uint32_t index,
                std::uint32_t segment_bytes, Header& h, std::vector<std::uint8_t>& payload);

// A whole frame (Ethernet header, OLink header, data), without the FCS, into `frame` (its old
// contents replaced; a reused buffer keeps its capacity, so no allocation and no zero fill).
void encode(const Header& h, const std::uint8_t* data, std::uint32_t data_bytes, std::vector<std::uint8_t>& frame);
// Decodes a frame; nullopt if it is too short or not an OLink frame.
std::optional<Header> decode(const std::vector<std::uint8_t>& frame);
inline const std::uint8_t* payload_of(const std::vector<std::uint8_t>& frame) {
  return frame.data() + kEthernetHeaderBytes + kHeaderBytes;
}

}  // namespace xy::olink
