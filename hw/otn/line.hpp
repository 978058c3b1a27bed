// The long-haul OTN line, one direction, as a core (no SystemC): the frames a port's MAC sends, as
// 100GBASE-R 64b/66b blocks striped block by block over `channels` OTU4s (a DWDM wavelength each,
// their frames in step), GMP-mapped, carried over the fibre and de-mapped at the far end.
//
// Cycle contract, on the clock it is given (the port's). The client stream runs at 103.125 Gb/s x
// (1 + client ppm) a channel, a 66-bit block a channel every 640 ps at nominal, idle blocks
// between frames; a frame taken at time a starts in the first block slot at or after a, and the
// next is taken once the slot of its last block has begun. OTU4 frame k starts at k T (T at the
// server's ppm) and carries Cm(k) words of 80 bytes a channel, Cm(k) decided at the start of frame
// k - 1 from the client bytes arrived by then (otn::GmpMapper's rule). A client byte in row r (0-3)
// of frame k is out of the far end's GFEC decoder at k T + (r + 1) T / 4 + fibre + decoder (the
// decoder needs its row: the codewords are interleaved across it). A frame leaves once the byte
// holding the end of its terminate block is out, in order, one a cycle. So the mapping, framing
// and FEC latencies emerge from G.709's layout and the rates; configured are the fibre (km x
// ns/km) and the decoder pipeline.
// Errors: random bit flips at `ber` on each wavelength. Each codeword's outcome is the RS(255,239)
// decoder's on its error pattern (corrected, uncorrectable, or miscorrected: the code is linear);
// a byte left wrong marks bad the frame whose blocks hold it; a JC left wrong costs what
// otn::GmpDemapper would lose (the next frame's data, until it reads a Cm again). With `exact`,
// every byte is made and carried through the cores (GmpMapper, Framer, Deframer, GmpDemapper) and
// frames are marked by comparing bytes: the same marks (tests/hw/otn/line_test.cpp).
// Not modelled: dispersion and its compensation, skew between wavelengths, the client's own
// 64b/66b scrambler (which would repeat a residual error 39 and 58 bits on), alignment markers,
// and in the fast model the loss of frame alignment (FAS bytes hit in 5 frames in a row).
#pragma once
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernel/channel.hpp"
#include "kernel/clock.hpp"
#include "kernel/packet.hpp"
#include "kernel/rng.hpp"
#include "kernel/stats.hpp"

namespace xy::otn {

struct LineParams {
  int channels = 8;              // wavelengths, an OTU4 each: 100 Gb/s of Ethernet each
  double km = 300;
  double fibre_ns_per_km = 4900;  // group delay of standard single-mode fibre (group index 1.47)
  double ber = 0;                 // pre-FEC bit error ratio of each wavelength, random errors
  double client_ppm = 0, server_ppm = 0;  // against 103.125 Gb/s and the OTU4's 255/227 x 99.5328 Gb/s
  double decoder_ns = 0;          // GFEC decoder pipeline once its row is in
  bool exact = false;             // every byte through the cores, not only the outcome

  Time fibre() const;
  double frame_fs() const;        // the OTU4 frame period at server_ppm, in fs
  double client_bps() const;      // one channel's 64b/66b stream
};

class Line final : public Core {
 public:
  Line(const std::string& name, const LineParams& params, Clock& clock, Stats& stats, std::uint64_t seed,
       Channel<Packet*>& in, Channel<Packet*>& out);
  ~Line() override;
  void eval() override;
  // The stages a frame opens (Packet::advance) when taken and when out; none unless a system names them.
  void set_stages(Stage line, Stage out) { stages_ = {line, out}; }

  // Its counters, registered under its name (.frames_bad ...).
  struct Counts {
    Counts(Stats& stats, const std::string& name);
    Counter &frames_in, &frames_out, &frames_bad;
    Counter& otu_frames;  // settled, over every wavelength
    Counter &corrected_symbols, &uncorrectable_codewords, &miscorrected_codewords;
    Counter& frames_without_cm;  // OTU4 frames whose data the de-mapper could not place
    Counter& frames_unaligned;   // OTU4 frames before the deframer found the frame alignment
  };
  const Counts& counts() const { return counts_; }
  const LatencyHistogram& latency() const { return latency_; }  // frame taken to frame out
  Time last_taken() const { return last_taken_; }  // when the newest frame was taken (0: none yet)
  // The Cm of OTU4 frame k (0 for frame 0): the same on every channel.
  int cm(std::uint64_t k);

 private:
  struct Pending {
    Packet* packet;
    std::uint64_t first, end;  // the frame's blocks in the striped stream, its trailing idle apart
    Cycle out, taken;          // when it leaves, and when it came
  };
  struct Exact;
  // Extends the GMP schedule through frame k: Cm(k) and the bytes a channel carried before it.
  void schedule(std::uint64_t k);
  std::uint64_t arrived_by(std::uint64_t k) const;  // a channel's client bytes by the start of frame k
  std::uint64_t bytes_before(std::uint64_t k);
  // The OTU4 frame and row holding byte `at` of a channel's client stream.
  std::pair<std::uint64_t, int> where(std::uint64_t at);
  void settle_frames_through(Time now);  // errors and the de-mapper, frame by frame
  void settle(std::uint64_t k, int channel);
  void spoil(int channel, std::uint64_t first_byte, std::uint64_t end_byte);  // frames holding these bytes
  Cycle leaves_at(std::uint64_t terminate_block);

  LineParams p_;
  Channel<Packet*>& in_;
  Channel<Packet*>& out_;
  double frame_fs_, block_fs_, bytes_per_fs_;
  std::uint64_t next_block_ = 0;  // the first free slot of the striped stream
  Time free_at_ = 0;              // when the next frame may be taken
  std::deque<Pending> pending_;   // taken, not yet out, in order
  // The GMP schedule from frame base_ on: Cm and the bytes a channel carried before each frame.
  std::uint64_t base_ = 0;
  std::deque<int> cm_;
  std::deque<std::uint64_t> before_;
  std::uint64_t settled_ = 0;  // frames whose errors and JC have been applied
  std::vector<Rng> rng_;       // a stream per wavelength
  std::vector<std::uint64_t> next_flip_;  // bit of the wavelength's line the next error hits
  std::vector<std::optional<int>> known_cm_;  // what each de-mapper holds for the next frame
  std::vector<bool> aligned_;                 // each deframer has found the frame alignment
  std::unique_ptr<Exact> exact_;
  Counts counts_;
  LatencyHistogram& latency_;
  std::pair<Stage, Stage> stages_{kNoStage, kNoStage};
  Time last_taken_ = 0;
};

}  // namespace xy::otn
