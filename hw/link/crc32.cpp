#include "hw/link/crc32.hpp"

#include <libdeflate.h>

namespace xy::link {

// libdeflate_crc32(), like zlib's crc32(), takes and returns the complemented register.
std::uint32_t crc32_update(std::uint32_t reg, const std::uint8_t* data, std::size_t size) {
  if (size == 0) return reg;
  return ~libdeflate_crc32(~reg, data, size);
}

void append_fcs(std::vector<std::uint8_t>& frame) {
  const std::uint32_t fcs = crc32(frame.data(), frame.size());
  for (std::size_t i = 0; i < kFcsBytes; ++i)
    frame.push_back(static_cast<std::uint8_t>(fcs >> (8 * i)));  // least significant first
}

}  // namespace xy::link
