#include "tlm/olink/memory.hpp"

#include <algorithm>
#include <cstring>

#include <tlm>

namespace xy::olink {

void Memory::read(std::uint64_t offset, std::uint8_t* out, std::uint32_t bytes) const {
  while (bytes) {  // a page at a time
    const std::uint32_t in_page = static_cast<std::uint32_t>(std::min<std::uint64_t>(bytes, kPage - offset % kPage));
    auto it = pages_.find(offset / kPage);
    if (it == pages_.end()) std::memset(out, 0, in_page);
    else std::memcpy(out, it->second.data() + offset % kPage, in_page);
    offset += in_page, out += in_page, bytes -= in_page;
  }
}

void Memory::write(std::uint64_t offset, const std::uint8_t* in, std::uint32_t bytes) {
  while (keep_data_ && bytes) {
    const std::uint32_t in_page = static_cast<std::uint32_t>(std::min<std::uint64_t>(bytes, kPage - offset % kPage));
    auto& page = pages_[offset / kPage];
    if (page.empty()) page.assign(kPage, 0);
    std::memcpy(page.data() + offset % kPage, in, in_page);
    offset += in_page, in += in_page, bytes -= in_page;
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
      if (!(h.status & Header::kByteEnables)) {
        write(h.address, in, h.bytes);
        return true;
      }
      std::vector<std::uint8_t> merged(h.bytes);
      read(h.address, merged.data(), h.bytes);
      for (unsigned i = 0; i < h.bytes; ++i)
        if (in[h.bytes + i] == TLM_BYTE_ENABLED) merged[i] = in[i];
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
