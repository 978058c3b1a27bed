// GMP, the generic mapping procedure of G.709 (clause 19.4.3.2, Annex D), for a 100GBASE-R client
// (its 64B/66B bit stream, 103.125 Gb/s +-100 ppm, not transcoded) into OPU4 (clause 17.7.5), as
// cores: a mapper that takes the client's bytes as they come and fills each frame's payload, and
// a de-mapper that takes them out again using nothing but what the frames carry.
//
// The payload (columns 17-3824) is 190 words of 80 bytes (m = 640 bits) row by row over columns
// 17-3816; columns 3817-3824 are fixed stuff. Word j (1..190) of a frame carries client bytes iff
// (j Cm) mod 190 < Cm, else zeros. The JC bytes of frame t announce the Cm of frame t + 1:
//  - JC1, JC2: C1-C14 (C1 the MSB), then II and DI; JC3: CRC-8 x^8 + x^3 + x^2 + 1 over JC1, JC2.
//    A change of +1/+2 is sent as the previous Cm with a pattern of its bits inverted and II set,
//    -1/-2 likewise with DI; no change as the value with neither; any other as the new value with
//    both.
//  - JC4, JC5 (bits 4-8): D1-D10, the sum of CnD: client bytes (n = 8 bits) the mapper holds
//    beyond whole words, 0-79; JC6 (bits 4-8): CRC-5 x^5 + x + 1 over D1-D10.
// The mapper's Cm for frame t + 1 is the whole words in its FIFO once frame t's are taken (what
// arrived during a frame and the remainder before, G.709's Cm(t) = floor(Cn(t) n / m) with the
// CnD carried), so the FIFO holds at most about two frames of client bytes.
//
// Not here: the sink's hunt for a pattern when it does not know the Cm before (Figures D.7-D.8;
// it waits for a JC with II = DI instead), the client's clock recovery from CnD (the de-mapper
// reports Cn per frame, which is what that recovery would filter), the replacement signal.
//
// Cycle contract: none; frames, not cycles (like hw/otn/otu4.hpp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "hw/otn/otu4.hpp"

namespace xy::otn {

inline constexpr int kGmpWords = 190, kGmpWordBytes = 80;
inline constexpr int kFixedStuffFirstColumn = 3817;

constexpr bool gmp_data(int word, int cm) { return word * cm % kGmpWords < cm; }

std::uint8_t crc8_jc(std::uint8_t jc1, std::uint8_t jc2);
std::uint8_t crc5_cnd(int d);  // over the 10 bits D1-D10
// The JC bytes announcing a change of Cm from `current` to `next`, with the sum of CnD.
JcBytes announce(int current, int next, int sum_cnd);
// What a sink reads from a frame's JC bytes: the Cm of the next frame (nothing if the CRC-8
// fails, or if the change is sent as a pattern and `current` is unknown or does not fit it).
std::optional<int> read_cm(const JcBytes& jc, std::optional<int> current);
std::optional<int> read_sum_cnd(const JcBytes& jc);  // nothing if the CRC-5 fails
JcBytes jc_of(const Frame& f);

class GmpMapper {
 public:
  void push(const std::uint8_t* client, std::size_t n);
  // The next frame's payload (kPayloadBytes) with its Cm's words from the FIFO, and the JC
  // announcing the next Cm.
  void next(std::uint8_t* payload, JcBytes& jc);
  int cm() const { return cm_; }  // of the frame last made
  std::size_t fifo_bytes() const { return fifo_.size() - head_; }
  std::size_t fifo_peak_bytes() const { return peak_; }

 private:
  std::vector<std::uint8_t> fifo_;
  std::size_t head_ = 0, peak_ = 0;
  int cm_ = 0, next_cm_ = 0;
};

class GmpDemapper {
 public:
  struct Stats {
    std::uint64_t frames = 0, client_bytes = 0;
    std::uint64_t frames_without_cm = 0;  // before a Cm was read, or after one could not be
    std::uint64_t jc_errors = 0;          // CRC-8 failed or the pattern fit no change
    std::int64_t last_cn = -1;            // client bytes the last frame's period carried, from Cm and CnD
  };
  // A frame as the deframer hands it on (descrambled, corrected): its data words, as named by the
  // Cm read from the frame before, appended to `client`; its own JC read for the next.
  void take(const Frame& f, std::vector<std::uint8_t>& client);
  const Stats& stats() const { return stats_; }

 private:
  std::optional<int> cm_;        // of the frame to come
  std::optional<int> sum_cnd_;   // read with it
  Stats stats_;
};

}  // namespace xy::otn
