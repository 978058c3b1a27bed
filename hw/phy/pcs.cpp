#include "hw/phy/pcs.hpp"

#include <cstring>

namespace xy::phy {
namespace {

constexpr std::uint8_t kPreamble[7] = {0x55, 0x55, 0x55, 0x55, 0x55, 0x55, 0xD5};

// The low nibble of every valid control block type is distinct, which is what lets the
// transcoder drop the high nibble of the first control block (802.3 clause 91.5.2.5).
constexpr std::uint8_t kTypeByLowNibble[16] = {0,    0xE1, 0xD2, 0x33, 0xB4, 0x55, 0x66, 0x87,
                                               0x78, 0x99, 0xAA, 0x4B, 0xCC, 0x2D, 0x1E, 0xFF};

std::uint64_t bytes_le(const std::uint8_t* p, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i) v |= std::uint64_t{p[i]} << (8 * i);
  return v;
}

}  // namespace

// Word-at-a-time access (little-endian machines): one unaligned 64-bit load or store, plus the
// ninth byte when the field straddles it.
std::uint64_t get_bits(const std::uint8_t* buf, std::uint64_t at, unsigned count) {
  const std::uint64_t byte = at / 8;
  const unsigned shift = at % 8;
  std::uint64_t word;
  std::memcpy(&word, buf + byte, 8);
  std::uint64_t v = word >> shift;
  if (shift + count > 64) v |= std::uint64_t{buf[byte + 8]} << (64 - shift);
  return count == 64 ? v : v & ((std::uint64_t{1} << count) - 1);
}

void put_bits(std::uint8_t* buf, std::uint64_t at, unsigned count, std::uint64_t value) {
  const std::uint64_t byte = at / 8;
  const unsigned shift = at % 8;
  const std::uint64_t mask = count == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << count) - 1;
  value &= mask;
  std::uint64_t word;
  std::memcpy(&word, buf + byte, 8);
  word = (word & ~(mask << shift)) | (value << shift);
  std::memcpy(buf + byte, &word, 8);
  if (shift + count > 64) {
    const auto high = static_cast<std::uint8_t>((1u << (shift + count - 64)) - 1);
    buf[byte + 8] = static_cast<std::uint8_t>((buf[byte + 8] & ~high) | ((value >> (64 - shift)) & high));
  }
}

Block66 idle_block() { return {kSyncControl, kBlockIdle}; }

std::size_t blocks_for_frame(std::size_t size) { return 1 + size / 8 + 1 + 1; }

Block66 frame_block(const std::uint8_t* bytes, std::size_t size, std::size_t i) {
  const std::size_t data_blocks = size / 8;
  if (i == 0) return {kSyncControl, kBlockStart | (bytes_le(kPreamble, 7) << 8)};
  if (i <= data_blocks) return {kSyncData, bytes_le(bytes + 8 * (i - 1), 8)};
  if (i == data_blocks + 1) {
    const std::size_t tail = size - 8 * data_blocks;
    return {kSyncControl, kBlockTerminate[tail] | (bytes_le(bytes + 8 * data_blocks, tail) << 8)};
  }
  return idle_block();
}

void encode_frame(const std::uint8_t* bytes, std::size_t size, std::vector<Block66>& out) {
  for (std::size_t i = 0; i < blocks_for_frame(size); ++i) out.push_back(frame_block(bytes, size, i));
}

bool decode_frame(const Block66* blocks, std::size_t count, std::vector<std::uint8_t>& bytes) {
  bytes.clear();
  if (count < 2 || !(blocks[0] == Block66{kSyncControl, kBlockStart | (bytes_le(kPreamble, 7) << 8)})) return false;
  for (std::size_t b = 1; b + 1 < count; ++b) {
    if (blocks[b].sync != kSyncData) return false;
    for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<std::uint8_t>(blocks[b].payload >> (8 * i)));
  }
  const Block66& t = blocks[count - 1];
  if (t.sync != kSyncControl) return false;
  const auto type = static_cast<std::uint8_t>(t.payload);
  for (int tail = 0; tail < 8; ++tail) {
    if (type != kBlockTerminate[tail]) continue;
    for (int i = 0; i < tail; ++i) bytes.push_back(static_cast<std::uint8_t>(t.payload >> (8 * (i + 1))));
    return tail == 7 || (t.payload >> (8 * (tail + 1))) == 0;  // idle control characters are zero
  }
  return false;
}

// o_i = d_i ^ o_{i-39} ^ o_{i-58}, 64 bits at a time: first with the taps that reach back into
// the previous block, then with those inside this block (their bits are final by then).
std::uint64_t Scrambler::scramble(std::uint64_t data) {
  std::uint64_t o = data ^ (state_ >> 25) ^ (state_ >> 6);
  o ^= o << 39;
  o ^= o << 58;
  state_ = o;
  return o;
}

std::uint64_t Scrambler::descramble(std::uint64_t r) {
  const std::uint64_t d = r ^ ((r << 39) | (state_ >> 25)) ^ ((r << 58) | (state_ >> 6));
  state_ = r;
  return d;
}

void transcode(const Block66* four, std::uint8_t* bits, std::uint64_t at) {
  bool all_data = true;
  for (int i = 0; i < 4; ++i) all_data = all_data && four[i].sync == kSyncData;
  if (all_data) {
    put_bits(bits, at, 1, 1);
    for (int i = 0; i < 4; ++i) put_bits(bits, at + 1 + 64 * i, 64, four[i].payload);
    return;
  }
  put_bits(bits, at, 1, 0);
  std::uint64_t pos = at + 5;
  bool first_control = true;
  for (int i = 0; i < 4; ++i) {
    put_bits(bits, at + 1 + i, 1, four[i].sync == kSyncData ? 1 : 0);
    if (four[i].sync != kSyncData && first_control) {
      put_bits(bits, pos, 4, four[i].payload & 0xF);  // low nibble of the block type
      put_bits(bits, pos + 4, 56, four[i].payload >> 8);
      pos += 60;
      first_control = false;
    } else {
      put_bits(bits, pos, 64, four[i].payload);
      pos += 64;
    }
  }
}

void untranscode(const std::uint8_t* bits, std::uint64_t at, Block66* four) {
  if (get_bits(bits, at, 1)) {
    for (int i = 0; i < 4; ++i) four[i] = {kSyncData, get_bits(bits, at + 1 + 64 * i, 64)};
    return;
  }
  std::uint64_t pos = at + 5;
  bool first_control = true;
  for (int i = 0; i < 4; ++i) {
    const bool data = get_bits(bits, at + 1 + i, 1);
    if (!data && first_control) {
      const std::uint8_t type = kTypeByLowNibble[get_bits(bits, pos, 4)];
      four[i] = {static_cast<std::uint8_t>(type ? kSyncControl : 0), type | (get_bits(bits, pos + 4, 56) << 8)};
      pos += 60;
      first_control = false;
    } else {
      four[i] = {data ? kSyncData : kSyncControl, get_bits(bits, pos, 64)};
      pos += 64;
    }
  }
  if (first_control) four[0].sync = 0;  // header said "control" but every flag said data
}

}  // namespace xy::phy
