// PCS of a 100G-per-lane Ethernet port: 64b/66b encoding of frames, the self-synchronous
// scrambler 1 + x^39 + x^58, and 256b/257b transcoding (IEEE 802.3 clauses 82 and 91).
//
// Cycle contract: none here — these are pure functions; the PHY cores (phy.hpp) call them and
// own the timing. What is exact: block types and layouts of start, data, terminate and idle
// blocks; the scrambler; the transcoder's data/control flags and compressed block type.
// What is abstracted: the inter-packet gap is one idle block after each terminate block
// (802.3's deficit idle count keeps the average at 12 bytes; this keeps it at 8 to 15), and
// ordered sets other than idle are not generated.
#pragma once
#include <cstdint>
#include <vector>

namespace xy::phy {

// A 66-bit block: sync header (1 = data "01", 2 = control "10", 0 or 3 invalid) and payload,
// bit 0 first on the wire; a control block's type is payload bits 0..7.
struct Block66 {
  std::uint8_t sync = 2;
  std::uint64_t payload = 0;
  bool operator==(const Block66& o) const { return sync == o.sync && payload == o.payload; }
};

inline constexpr std::uint8_t kSyncData = 1, kSyncControl = 2;
inline constexpr std::uint8_t kBlockIdle = 0x1E, kBlockStart = 0x78;
// Terminate block types by the number of data bytes they carry (0..7).
inline constexpr std::uint8_t kBlockTerminate[8] = {0x87, 0x99, 0xAA, 0xB4, 0xCC, 0xD2, 0xE1, 0xFF};

Block66 idle_block();
// Appends a frame: start block (preamble and SFD), data blocks, a terminate block, one idle.
void encode_frame(const std::uint8_t* bytes, std::size_t size, std::vector<Block66>& out);
// Number of 66b blocks encode_frame() makes for a frame of `size` bytes.
std::size_t blocks_for_frame(std::size_t size);
// Block `i` (< blocks_for_frame(size)) of those, made alone.
Block66 frame_block(const std::uint8_t* bytes, std::size_t size, std::size_t i);

// Decodes the blocks of one frame (start .. terminate); false if any block is not what a
// frame is made of (an invalid sync header, an unknown block type, a misplaced control block).
bool decode_frame(const Block66* blocks, std::size_t count, std::vector<std::uint8_t>& bytes);

// Self-synchronous scrambler over the 64 payload bits of each block; the sync header is sent
// in the clear. `state` holds the last 64 scrambled bits.
class Scrambler {
 public:
  std::uint64_t scramble(std::uint64_t data);
  std::uint64_t descramble(std::uint64_t received);
  // The last 64 scrambled bits: a descrambler that has seen the same bits as the scrambler has
  // the same state (the fast codec hands it over for words the channel did not touch).
  std::uint64_t state() const { return state_; }
  void set_state(std::uint64_t state) { state_ = state; }

 private:
  std::uint64_t state_ = 0;
};

// 256b/257b transcoding of four 66b blocks into 257 bits (written as bits [at, at+257) of
// `bits`, bit i = bit i % 8 of byte i / 8), and back. Transcoding back restores the block type
// of the first control block from its low nibble; an invalid nibble gives an invalid block.
void transcode(const Block66* four, std::uint8_t* bits, std::uint64_t at);
void untranscode(const std::uint8_t* bits, std::uint64_t at, Block66* four);

// Bit access in a byte buffer, bit i = bit i % 8 of byte i / 8. The buffer must extend at least
// 9 bytes past the byte holding bit `at` (fields are moved a 64-bit word at a time).
std::uint64_t get_bits(const std::uint8_t* buf, std::uint64_t at, unsigned count);  // count <= 64
void put_bits(std::uint8_t* buf, std::uint64_t at, unsigned count, std::uint64_t value);

}  // namespace xy::phy
