// One direction of a PHY link: TX PCS and FEC encoder, the SerDes lanes with their error
// models, RX FEC decoder and PCS, on the port's datapath clock.
//
// Cycle contract. The datapath clock runs at lane_gbps / 40 (2.65625 GHz for 106.25 Gb/s
// lanes) and moves 40 bits per lane per cycle, so a group of `interleave` codewords takes
// C = interleave * n * m / (40 * lanes) cycles on the line. The TX sends one group every C
// cycles from link-up (CDR lock) on, plus an alignment-marker gap every am_period groups. A
// group sent at cycle t has its first bit at the RX at t + E + P and its last at
// t + M + E + P + C - 1 (M: the MAC/PCS transmit pipeline; E: encoder pipeline; P: PMA TX +
// cable + PMA RX + lane deskew), is decoded D cycles after it is complete, and its frames leave
// the RX from t + M + E + P + C + D + R (R: the PCS/MAC receive pipeline), one per cycle. FEC
// latency = C (accumulation) + D (decoder pipeline), exactly. M and R are fixed pipelines: their
// order among the other fixed stages changes no time.
// Exact: every bit of frames and idles (64b/66b, scrambler, 256b/257b, RS codewords, lane
// distribution, Gray-coded PAM4 symbol errors) and the decoder's outcome. A link flap loses
// every codeword sent from going down until the CDR has locked again. Abstracted: lane
// skew only adds its worst case as latency; alignment markers cost their time but carry no
// bits; the line is never idle (idles are sent), so the TX wakes every C cycles.
// Codecs. `exact` makes every word's bits, scrambles, encodes and decodes it. `fast` gives the
// same outcome bit for bit (tests/hw/phy) and makes bits only where the channel left an error:
// RS codes and the scrambler are linear, so it decodes the error pattern alone, and a word's
// received blocks are its sent blocks XOR the descrambled residual error.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hw/phy/bit_errors.hpp"
#include "hw/phy/pcs.hpp"
#include "hw/phy/reed_solomon.hpp"
#include "kernel/channel.hpp"
#include "kernel/config.hpp"
#include "kernel/packet.hpp"
#include "kernel/stats.hpp"
#include "kernel/waves.hpp"

namespace xy::phy {

struct PhyParams {
  std::string fec;  // rs544 | rs272 | none
  int lanes = 4;
  int interleave = 1;
  double lane_gbps = 106.25;
  bool fast = true;  // the fast codec: bits only for the codewords the channel touched
  struct Pipeline {
    Cycle encoder = 0, decoder = 0;
  };
  Pipeline rs544, rs272, none;  // per FEC mode, so that one declaration serves every mode
  // MAC, RS and PCS (without FEC) pipelines, M and R above; set by a port (PortParams), 0 for a
  // PHY on its own.
  Cycle mac_pcs_tx = 0, mac_pcs_rx = 0;
  Cycle path_cycles = 0, cdr_lock_cycles = 0;
  Cycle down_from = 0, down_until = 0;  // a link flap: dark, then CDR relock; empty = none
  static constexpr Cycle kForever = Cycle{1} << 40;  // down_until of a link cut for good: beyond any run
  bool flaps() const { return down_until > down_from; }
  // A flap began by `now`; and `now` is within it (dark, or the CDR relocking).
  bool flap_began(Time now) const { return flaps() && now >= down_from * period(); }
  bool flapping_at(Time now) const { return flap_began(now) && now < down_until * period(); }
  Cycle am_period_groups = 0, am_cycles = 0;
  ErrorModelSpec errors;
  double max_skew_ns = 0, pma_tx_ns = 0, pma_rx_ns = 0, cable_m = 0;

  // Where a PHY's cable length comes from: its own parameter, or each link's (a topology's).
  enum class Cable { kDeclared, kPerLink };
  // Declares the parameters under `prefix` (e.g. "phy") and checks them together.
  static PhyParams declare(Config& config, const std::string& prefix, int default_lanes = 4,
                           Cable cable = Cable::kDeclared);
  Time period() const;           // datapath clock period
  void set_cable(double metres);  // and path_cycles with it (5 ns per metre)
  PhyParams with_fec(const std::string& mode) const;  // another FEC mode, its default interleave
  int n() const;                 // symbols per codeword
  int k() const;                 // message symbols per codeword (with the pad symbol of rs272)
  int blocks_per_codeword() const;  // 66b blocks carried by one codeword
  Cycle group_cycles() const;    // C
  int t() const;                 // correctable symbols (0 for none)
  Cycle encoder_cycles() const { return pipeline().encoder; }
  Cycle decoder_cycles() const { return pipeline().decoder; }
  // A frame's least PHY latency but its serialisation: MAC/PCS and encoder pipelines, line path,
  // gathering its codeword group at the RX, decoder and PCS/MAC pipelines.
  Cycle fixed_cycles() const {
    return mac_pcs_tx + encoder_cycles() + path_cycles + group_cycles() + decoder_cycles() + mac_pcs_rx;
  }
  // From a group's TX cycle to its first bit at the RX: M + E + P.
  Cycle to_rx_cycles() const { return mac_pcs_tx + encoder_cycles() + path_cycles; }
  const Pipeline& pipeline() const { return fec == "rs544" ? rs544 : fec == "rs272" ? rs272 : none; }
};

// A group of codewords on its way through the line, with the truth about it.
struct CodewordGroup {
  std::uint64_t index = 0;
  Cycle sent = 0;     // TX cycle the PCS sent it (into the MAC/PCS and encoder pipelines)
  Cycle arrived = 0;  // RX cycle its last bit was in
  bool lost = false;  // sent while the link was down: nothing usable arrives
  bool clean = true;  // no lane flipped a bit of it (the fast codec: its words hold nothing)
  struct Word {
    std::vector<std::uint8_t> message;    // transcoded, scrambled message bits as sent (exact codec); the
                                          // fast codec's scratch for a damaged word
    std::vector<std::uint16_t> sent;      // message + parity symbols, made when needed
    std::vector<std::uint16_t> received;  // after the channel and the decoder
    std::vector<std::uint32_t> flips;     // bit positions (symbol * m + bit) the lanes flipped
    std::vector<Block66> blocks;          // the 66b blocks it carries, as sent (fast codec: damaged words only)
    bool symbols_valid = false;           // `sent` holds this word (with parity)
  };
  std::vector<Word> words;
};

// What the RX must deliver: a frame the TX took in, with the blocks that carry it.
struct FrameRecord {
  Packet* packet;
  std::uint64_t first_block, end_block;  // [first, end): start .. terminate
  std::uint32_t bytes;                   // as taken in: what an RX that decodes it exactly delivers
};

class PhyLink {
 public:
  // Frames come in on `in` and leave on `out` (marked bad when an uncorrectable codeword carried
  // any part of them; marked intact when every codeword carrying them arrived exact, so their
  // bytes are the bytes sent), with the PHY's stages added to their stage times.
  PhyLink(const std::string& name, const PhyParams& params, Clock& clock, Stats& stats, std::uint64_t seed,
          const std::string& random_stream, Channel<Packet*>* in, Channel<Packet*>* out, PacketPool& pool);
  ~PhyLink();
  // The memory one direction takes for its codeword groups, estimated before it is built: made
  // once and reused, as many as are between the TX and the decoder's output at once.
  static double memory_bytes(const PhyParams& p);

  std::uint64_t codewords() const;       // received
  std::uint64_t codewords_sent() const;
  std::uint64_t uncorrectable() const;
  std::uint64_t decoder_failures() const;  // correctable words not restored: must stay 0
  std::uint64_t frames_in() const;
  std::uint64_t frames_out() const;
  Cycle measured_fec_latency() const;      // RX output minus first bit at RX, last codeword
  std::uint64_t beyond_t() const;          // codewords with more than t symbol errors (truth)
  std::uint64_t failed_codewords() const;  // flagged uncorrectable or miscorrected
  const PhyParams& params() const;
  // The cores a testbench connects its channels to: `in` feeds the TX, `out` is fed by the RX.
  Core& tx_core();
  Core& rx_core();
  // Stop sending codewords once this many have failed or been sent (curve measurements).
  void stop_after(std::uint64_t failed_codewords, std::uint64_t codewords);
  // The stages a frame opens here (Packet::advance), in the order it meets them; the last ends
  // when the MAC takes the frame. None unless a system names them.
  struct Stages {
    Stage serialize = kNoStage, mac_pcs_tx = kNoStage, fec_encode = kNoStage, pma_cable = kNoStage,
          fec_accumulate = kNoStage, fec_decode = kNoStage, mac_pcs_rx = kNoStage, to_mac = kNoStage;
  };
  void set_stages(const Stages& s);
  // The TX takes frames late (LateTaker): not woken for each, it takes them all when it runs (a
  // codeword group goes), when the feeder finds no credit, and when its domain stops running. The
  // same cycles, stamps and counts as woken for each; for `in` with credits, fed on this clock.
  void take_late();
  // Offers .codewords_sent, .uncorrectable and .frames_in to the waves under its name (the TX then
  // takes frames on time, as the waves sample every step).
  void probe(Waves& waves);
  bool stopped() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Probability that a codeword fails (more than t symbol errors; any error without FEC) on
// this model's channel with random errors at `ber`: binomial over n symbols whose error
// probability follows from 2*ber PAM4 symbol errors, m/2 of them per FEC symbol.
double codeword_error_ratio(const PhyParams& params, double ber);

}  // namespace xy::phy
