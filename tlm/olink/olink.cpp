#include "tlm/olink/olink.hpp"

#include <algorithm>
#include <iterator>

namespace xy::olink {
namespace {

constexpr std::uint16_t kEtherType = 0x88B5;  // IEEE local experimental (OLink has no public one)

template <class T>
void put(std::uint8_t* at, T v) {
  for (std::size_t i = 0; i < sizeof(T); ++i) at[i] = static_cast<std::uint8_t>(static_cast<std::uint64_t>(v) >> (8 * i));
}
template <class T>
T get(const std::uint8_t* at) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) v |= static_cast<std::uint64_t>(at[i]) << (8 * i);
  return static_cast<T>(v);
}

}  // namespace

void to_request(const tlm::tlm_generic_payload& trans, std::uint16_t src, std::uint32_t txn, Header& h,
                std::vector<std::uint8_t>& payload) {
  h = Header{};
  h.src = src;
  h.dst = static_cast<std::uint16_t>(gpu_of(trans.get_address()));
  h.address = trans.get_address() & kOffsetMask;
  h.txn = txn;
  h.bytes = static_cast<std::uint16_t>(trans.get_data_length());
  payload.clear();
  if (auto* atomic = trans.get_extension<AtomicExtension>()) {
    h.op = atomic->kind == AtomicExtension::kFetchAdd ? Op::kFetchAdd : Op::kCompareSwap;
    h.operand = atomic->operand;
    h.compare = atomic->compare;
  } else if (trans.is_write()) {
    h.op = Op::kStore;
    payload.assign(trans.get_data_ptr(), trans.get_data_ptr() + trans.get_data_length());
    if (trans.get_byte_enable_ptr()) {
      h.status = Header::kByteEnables;
      for (unsigned i = 0; i < trans.get_data_length(); ++i)
        payload.push_back(trans.get_byte_enable_ptr()[i % trans.get_byte_enable_length()]);
    }
  } else {
    h.op = Op::kLoad;
  }
}

std::uint32_t request_data_bytes(const tlm::tlm_generic_payload& trans, std::uint32_t bytes) {
  if (!trans.is_write() || trans.get_extension<AtomicExtension>()) return 0;
  return trans.get_byte_enable_ptr() ? 2 * bytes : bytes;
}

std::uint32_t response_data_bytes(const tlm::tlm_generic_payload& trans, std::uint32_t bytes) {
  if (trans.get_extension<AtomicExtension>()) return 8;
  return trans.is_read() ? bytes : 0;
}

std::uint32_t segments_of(const tlm::tlm_generic_payload& trans, std::uint32_t segment_bytes) {
  return (trans.get_data_length() + segment_bytes - 1) / segment_bytes;
}

void to_segment(const tlm::tlm_generic_payload& trans, std::uint16_t src, std::uint32_t txn, std::uint32_t index,
                std::uint32_t segment_bytes, Header& h, std::vector<std::uint8_t>& payload) {
  const std::uint32_t offset = index * segment_bytes;
  const std::uint32_t bytes = std::min(segment_bytes, trans.get_data_length() - offset);
  h = Header{};
  h.op = Op::kStore;
  h.src = src;
  h.dst = static_cast<std::uint16_t>(gpu_of(trans.get_address()));
  h.address = (trans.get_address() & kOffsetMask) + offset;
  h.txn = txn;
  h.bytes = static_cast<std::uint16_t>(bytes);
  payload.assign(trans.get_data_ptr() + offset, trans.get_data_ptr() + offset + bytes);
}

void encode(const Header& h, const std::uint8_t* data, std::uint32_t data_bytes, std::vector<std::uint8_t>& frame) {
  std::uint8_t head[kEthernetHeaderBytes + kHeaderBytes] = {};
  // Locally administered MACs that name the GPUs.
  head[0] = 0x02;
  put<std::uint16_t>(&head[4], h.dst);
  head[6] = 0x02;
  put<std::uint16_t>(&head[10], h.src);
  head[12] = static_cast<std::uint8_t>(kEtherType >> 8);
  head[13] = static_cast<std::uint8_t>(kEtherType);
  std::uint8_t* o = &head[kEthernetHeaderBytes];
  o[0] = static_cast<std::uint8_t>(h.op);
  o[1] = h.status;
  put<std::uint16_t>(o + 2, h.src);
  put<std::uint16_t>(o + 4, h.dst);
  put<std::uint16_t>(o + 6, h.bytes);
  put<std::uint64_t>(o + 8, h.address);
  put<std::uint32_t>(o + 16, h.txn);
  put<std::uint64_t>(o + 20, h.operand);
  put<std::uint64_t>(o + 28, h.compare);
  frame.assign(std::begin(head), std::end(head));
  frame.insert(frame.end(), data, data + data_bytes);
  frame.resize(frame_bytes(data_bytes) - kFcsBytes, 0);  // the pad
}

std::optional<Header> decode(const std::vector<std::uint8_t>& f) {
  if (f.size() < kMinFrameBytes - kFcsBytes || f[12] != (kEtherType >> 8) || f[13] != (kEtherType & 0xFF))
    return std::nullopt;
  const std::uint8_t* o = &f[kEthernetHeaderBytes];
  Header h;
  h.op = static_cast<Op>(o[0]);
  h.status = o[1];
  h.src = get<std::uint16_t>(o + 2);
  h.dst = get<std::uint16_t>(o + 4);
  h.bytes = get<std::uint16_t>(o + 6);
  h.address = get<std::uint64_t>(o + 8);
  h.txn = get<std::uint32_t>(o + 16);
  h.operand = get<std::uint64_t>(o + 20);
  h.compare = get<std::uint64_t>(o + 28);
  return h;
}

}  // namespace xy::olink
