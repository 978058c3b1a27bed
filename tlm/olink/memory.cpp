#include "tlm/olink/memory.hpp"

#include <tlm>

namespace xy::olink {

void Memory::read(std::uint64_t offset, std::uint8_t* out, std::uint32_t bytes) const {
  for (std::uint32_t i = 0; i < bytes; ++i) {
    auto it = pages_.find((offset + i) / kPage);
    out[i] = it == pages_.end() ? 0 : it->second[(offset + i) % kPage];
  }
}

void Memory::write(std::uint64_t offset, const std::uint8_t* in, std::uint32_t bytes) {
  for (std::uint32_t i = 0; i < bytes; ++i) {
    auto& page = pages_[(offset + i) / kPage];
    if (page.empty()) page.assign(kPage, 0);
    page[(offset + i) % kPage] = in[i];
  }
}

bool Memory::serve(const Header& h, const std::uint8_t* in, std::vector<std::uint8_t>& data) {
  data.clear();
  switch (h.op) {
    case Op::kLoad:
      data.resize(h.bytes);
      read(h.address, data.data(), h.bytes);
      return true;
    case Op::kStore: {
      const bool enables = h.status & Header::kByteEnables;
      std::vector<std::uint8_t> merged(h.bytes);
      read(h.address, merged.data(), h.bytes);
      for (unsigned i = 0; i < h.bytes; ++i)
        if (!enables || in[h.bytes + i] == TLM_BYTE_ENABLED) merged[i] = in[i];
      write(h.address, merged.data(), h.bytes);
      return true;
    }
    case Op::kFetchAdd:
    case Op::kCompareSwap: {
      std::uint64_t word = 0;
      read(h.address, reinterpret_cast<std::uint8_t*>(&word), 8);
      const std::uint64_t old = word;
      if (h.op == Op::kFetchAdd) word += h.operand;
      else if (word == h.compare) word = h.operand;
      write(h.address, reinterpret_cast<const std::uint8_t*>(&word), 8);
      data.assign(reinterpret_cast<const std::uint8_t*>(&old), reinterpret_cast<const std::uint8_t*>(&old) + 8);
      return true;
    }
    default:
      return false;
  }
}

}  // namespace xy::olink
