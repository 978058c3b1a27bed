#include "hw/link/crc32.hpp"

#include <array>

namespace xy::link {
namespace {

constexpr std::uint32_t kPolyReflected = 0xEDB88320;

using Tables = std::array<std::array<std::uint32_t, 256>, 8>;

// table[0][b]: the register after shifting in byte b; table[k][b]: the same byte followed by k
// zero bytes, so eight table lookups advance the register by eight bytes at once.
constexpr Tables make_tables() {
  Tables t{};
  for (std::uint32_t b = 0; b < 256; ++b) {
    std::uint32_t r = b;
    for (int bit = 0; bit < 8; ++bit) r = (r >> 1) ^ (kPolyReflected & (0u - (r & 1u)));
    t[0][b] = r;
  }
  for (std::size_t k = 1; k < 8; ++k)
    for (std::size_t b = 0; b < 256; ++b) t[k][b] = (t[k - 1][b] >> 8) ^ t[0][t[k - 1][b] & 0xFF];
  return t;
}

constexpr Tables kTables = make_tables();

// Little-endian load, whatever the host; compilers turn it into one move on x86 and ARM.
inline std::uint32_t load_le32(const std::uint8_t* p) {
  return std::uint32_t{p[0]} | std::uint32_t{p[1]} << 8 | std::uint32_t{p[2]} << 16 |
         std::uint32_t{p[3]} << 24;
}

}  // namespace

std::uint32_t crc32_update(std::uint32_t reg, const std::uint8_t* data, std::size_t size) {
  const auto& t = kTables;
  for (; size >= 8; data += 8, size -= 8) {
    const std::uint32_t lo = reg ^ load_le32(data);
    const std::uint32_t hi = load_le32(data + 4);
    reg = t[7][lo & 0xFF] ^ t[6][(lo >> 8) & 0xFF] ^ t[5][(lo >> 16) & 0xFF] ^ t[4][lo >> 24] ^
          t[3][hi & 0xFF] ^ t[2][(hi >> 8) & 0xFF] ^ t[1][(hi >> 16) & 0xFF] ^ t[0][hi >> 24];
  }
  for (; size > 0; ++data, --size) reg = (reg >> 8) ^ t[0][(reg ^ *data) & 0xFF];
  return reg;
}

void append_fcs(std::vector<std::uint8_t>& frame) {
  const std::uint32_t fcs = crc32(frame.data(), frame.size());
  for (std::size_t i = 0; i < kFcsBytes; ++i)
    frame.push_back(static_cast<std::uint8_t>(fcs >> (8 * i)));  // least significant first
}

}  // namespace xy::link
