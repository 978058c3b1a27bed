// OTU4 frames of ITU-T G.709 as plain cores (no SystemC): the frame with its overhead at G.709's
// byte positions, the GFEC, the frame-synchronous scrambler, BIP-8, a framer that builds the
// frames of one direction and a deframer that finds them in the bytes of the line and keeps
// their alignment.
//
// A frame is 4 rows of 4080 columns, sent row by row; byte (row, column), both from 1, is at
// at(row, column). Row 1: FAS F6 F6 F6 28 28 28 in columns 1-6, MFAS (the frame's number mod 256)
// in 7, the OTU's section monitoring SM (TTI 8, BIP-8 9, BEI/BIAE|BDI|IAE 10), GCC0 11-12.
// Rows 2-4, columns 1-14: the ODU's overhead, of which path monitoring PM in row 3 (TTI 10,
// BIP-8 11, BEI|BDI|STAT 12). Columns 15-16: the OPU's (JC1-JC3 in column 16 and JC4-JC6 in
// column 15 of rows 1-3, PSI in row 4 column 15). Columns 17-3824: the OPU4 payload;
// 3825-4080: the GFEC's parity.
//  - GFEC: RS(255,239) over GF(2^8) (hw/phy/reed_solomon.hpp's rs255), 16 codewords a row
//    byte-interleaved: byte X + 16 (i - 1) of a row is symbol i of codeword X (X, i from 1).
//  - Scrambler: 1 + x + x^3 + x^12 + x^16, reset to all ones at the MFAS byte's first bit, over
//    every byte of the frame but the six of FAS, after the FEC, MSB first.
//  - BIP-8: the even parity of each bit position over the OPU (columns 15-3824) of frame i,
//    carried in SM and PM of frame i + 2.
//
// Cycle contract: none yet; frames, not cycles. The framer makes a frame at a call, the
// deframer takes bytes as they come; time is in frames of frame_period() (the line rate
// 255/227 x 99.5328 Gb/s); on a clock, the frames a port sends are carried by hw/otn/line.hpp. Not
// modelled: TCMs, GCC contents, IAE/BIAE.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "hw/phy/reed_solomon.hpp"
#include "kernel/units.hpp"

namespace xy::otn {

inline constexpr int kRows = 4, kColumns = 4080;
inline constexpr std::size_t kFrameBytes = std::size_t{kRows} * kColumns;
inline constexpr int kOpuFirstColumn = 15, kPayloadFirstColumn = 17, kPayloadLastColumn = 3824;
inline constexpr int kParityFirstColumn = 3825;
inline constexpr int kCodewordsPerFrame = 64;  // RS(255,239), 16 a row
inline constexpr std::size_t kPayloadBytes = std::size_t{kRows} * (kPayloadLastColumn - kPayloadFirstColumn + 1);
inline constexpr std::array<std::uint8_t, 6> kFas = {0xF6, 0xF6, 0xF6, 0x28, 0x28, 0x28};
inline constexpr double kLineBps = 255.0 / 227.0 * 99.5328e9;  // OTU4
// A frame's time on the line: 16320 bytes at kLineBps, about 1.168 us.
Time frame_period();

using Frame = std::array<std::uint8_t, kFrameBytes>;
constexpr std::size_t at(int row, int column) {
  return static_cast<std::size_t>(row - 1) * kColumns + static_cast<std::size_t>(column - 1);
}
// The overhead bytes the framer writes.
inline constexpr std::size_t kMfas = at(1, 7), kSmTti = at(1, 8), kSmBip8 = at(1, 9), kSmStatus = at(1, 10),
                             kPmTti = at(3, 10), kPmBip8 = at(3, 11), kPmStatus = at(3, 12), kPsi = at(4, 15);
// GMP's justification control JC1-JC6 (hw/otn/gmp.hpp): JC1-JC3 in column 16 and JC4-JC6 in column
// 15 of rows 1-3.
using JcBytes = std::array<std::uint8_t, 6>;
inline constexpr std::array<std::size_t, 6> kJc = {at(1, 16), at(2, 16), at(3, 16), at(1, 15), at(2, 15), at(3, 15)};

// The keystream the scrambler adds to a frame's bytes from the MFAS on (the same every frame).
const std::vector<std::uint8_t>& scrambler_keystream();
void scramble(Frame& f);  // its own inverse
std::uint8_t bip8(const Frame& f);  // over the OPU of an unscrambled frame

struct FecCount {
  int corrected_symbols = 0;
  int uncorrectable_codewords = 0;  // left as received
};
const phy::ReedSolomon& gfec();  // RS(255,239) of G.709 Annex A
void fec_encode(Frame& f);      // the parity columns from the rest
FecCount fec_decode(Frame& f);  // in place, codeword by codeword

// What a sink reports back to the source of the other direction: BIP-8 violations it counted in
// a frame (BEI, 0-8) and whether it has a defect (BDI), for SM and for PM.
struct Backward {
  std::uint8_t sm_bei = 0, pm_bei = 0;
  bool sm_bdi = false, pm_bdi = false;
};

struct FramerConfig {
  std::array<std::uint8_t, 64> sm_tti{}, pm_tti{};  // trail trace identifiers, a byte a frame
  std::uint8_t payload_type = 0x07;  // PSI[0]: PCS codeword transparent Ethernet (100GBASE-R into OPU4)
};

class Framer {
 public:
  explicit Framer(FramerConfig config = {}) : config_(config) {}
  // The next frame as sent: `payload`, kPayloadBytes row by row, into columns 17-3824, `jc` into
  // the OPU's overhead; the rest of the overhead, the FEC and the scrambler around them.
  void next(const std::uint8_t* payload, Frame& out, const Backward& backward = {}, const JcBytes& jc = {});
  std::uint8_t next_mfas() const { return mfas_; }

 private:
  FramerConfig config_;
  std::uint8_t mfas_ = 0;
  std::array<std::uint8_t, 2> bip_{};  // of the two frames before: [0] the one before the last
};

// The sink side: bytes from the line in any pieces; frames found, descrambled, corrected and
// checked. Frame alignment as G.798 has it for OTUk: out of frame (OOF) at the start and when FAS
// bytes 3-5 are in error at 5 frame starts in a row; in frame (IF) again once a FAS is found and
// found again a frame later. Loss of frame (LOF) once OOF has lasted 3 ms in all (an integrating
// timer, reset only by 3 ms of IF without a break), cleared by 3 ms of IF. Multiframe alignment
// likewise, over the MFAS of the frames taken: out of multiframe (OOM) at the start and when the
// MFAS is not the one expected at 5 frames in a row, in multiframe (IM) once two frames in a row
// carry consecutive MFAS; loss of multiframe (LOM) once OOM has lasted 3 ms without a break,
// cleared at IM. Time is the line's: every kFrameBytes bytes pushed are a frame's time, spent in
// the state the deframer is in once it has taken them; 3 ms is kThreeMsFrames of them.
class Deframer {
 public:
  static const std::uint64_t kThreeMsFrames;  // 3 ms of frames, rounded up: 2570
  struct Stats {
    std::uint64_t frames = 0;        // handed on, in frame
    std::uint64_t oof_entries = 0, lof_entries = 0, oom_entries = 0, lom_entries = 0;
    std::uint64_t fec_corrected_symbols = 0, fec_uncorrectable_codewords = 0;
    std::uint64_t sm_bip8_errors = 0, pm_bip8_errors = 0;  // bits in error, by BIP-8
  };
  // Each frame found, descrambled and corrected, with the BIP-8 violations of its SM and PM
  // (those of the frame two before, which it carries the parity of).
  std::function<void(const Frame&, const Backward&)> on_frame;

  void push(const std::uint8_t* data, std::size_t n);
  bool oof() const { return oof_; }
  bool lof() const { return lof_; }
  bool oom() const { return oom_; }
  bool lom() const { return lom_; }
  const Stats& stats() const { return stats_; }

 private:
  void take_frame();  // buf_ holds a frame where the FAS should be
  void search();      // OOF: look for the FAS in buf_, confirm it a frame later
  void align_multiframe(std::uint8_t mfas);
  void elapse_frame(bool in_frame);  // a frame's time passed, in frame or not: the LOF and LOM timers
  std::vector<std::uint8_t> buf_;  // bytes not yet consumed
  std::size_t clock_ = 0;          // bytes into the current frame's time
  bool oof_ = true, lof_ = false;
  int errored_ = 0;                // frame starts in a row with FAS bytes 3-5 in error
  std::uint64_t oof_frames_ = 0;   // the integrating timer
  std::uint64_t if_frames_ = 0;    // in frame without a break
  bool oom_ = true, lom_ = false;
  int mfas_misses_ = 0;                    // frames in a row whose MFAS was not the one expected
  std::uint8_t expected_mfas_ = 0;
  std::optional<std::uint8_t> last_mfas_;  // of the frame before, if it came in frame
  std::uint64_t oom_frames_ = 0;           // out of multiframe without a break
  std::array<std::uint8_t, 2> bip_{};  // computed over the two frames before
  int bip_known_ = 0;                  // how many of them were received in frame
  Stats stats_;
  Frame frame_{};
};

}  // namespace xy::otn
