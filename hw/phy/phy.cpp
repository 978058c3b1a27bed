#include "hw/phy/phy.hpp"

#include <algorithm>
#include <cmath>
#include <deque>

#include <boost/math/distributions/binomial.hpp>
#include <fmt/format.h>

namespace xy::phy {
namespace {

constexpr int kSymbolBits = 10;     // every code here is over GF(2^10)
constexpr int kLaneBitsPerCycle = 40;

// As in 200G/400GBASE-R (802.3 clause 119), 257b blocks are scrambled after transcoding; the
// model scrambles bits 1..256 of each (the header bit stays in the clear).
void scramble_block(Scrambler& s, std::uint8_t* bits, std::uint64_t at, bool descramble) {
  for (int w = 0; w < 4; ++w) {
    const std::uint64_t pos = at + 1 + 64 * w;
    const std::uint64_t v = get_bits(bits, pos, 64);
    put_bits(bits, pos, 64, descramble ? s.descramble(v) : s.scramble(v));
  }
}

Cycle ns_to_cycles(double ns, Time period) { return cycles_for(from_ns(ns), period); }

// A codec's tables (about 160 KB for RS(544,514): encoding, syndromes, Chien search) are its
// code's alone, never written after construction: every PHY of a code shares one, rather than a
// fabric holding a copy per direction of every link (most of a composed link's memory).
const ReedSolomon& shared_codec(const std::string& fec) {
  static const ReedSolomon kp4(rs544()), low_latency(rs272());
  return fec == "rs272" ? low_latency : kp4;
}

}  // namespace

PhyParams PhyParams::declare(Config& c, const std::string& prefix, int default_lanes, Cable cable) {
  PhyParams p;
  const std::string k = prefix + ".";
  p.fec = c.choice(k + "fec", "rs544", {"rs544", "rs272", "none"},
                   "FEC: KP4 RS(544,514), low-latency RS(272,257+1), or none (CRC only)");
  p.lanes = static_cast<int>(c.integer(k + "lanes", default_lanes, "lanes", 1, 8, "SerDes lanes of the port: 1, 2, 4 or 8"));
  if (p.lanes != 1 && p.lanes != 2 && p.lanes != 4 && p.lanes != 8)
    throw ConfigError(fmt::format("{}lanes = {}: must be 1, 2, 4 or 8", k, p.lanes));
  p.lane_gbps = c.real(k + "lane_gbps", 106.25, "Gb/s", 1, 1000, "line rate of one lane (53.125 GBd PAM4)");
  p.interleave = static_cast<int>(c.integer(k + "interleave", p.with_fec(p.fec).interleave, "codewords", 1, 4,
                                            "codewords interleaved symbol by symbol over the lanes; by default "
                                            "802.3's for the port's rate (PhyParams::with_fec)"));
  p.fast = c.implementation(k + "codec", {"fast", "exact"},
                            "exact: encode and decode every codeword; fast: only those the channel touched (same "
                            "results)") == "fast";
  const Time period = p.period();
  struct { const char* mode; double enc, dec; Pipeline* pipeline; } defaults[] = {
      {"rs544", 5, 50, &p.rs544}, {"rs272", 3, 25, &p.rs272}, {"none", 0, 1, &p.none}};
  for (const auto& d : defaults) {
    d.pipeline->encoder = ns_to_cycles(c.real(k + d.mode + ".encoder_ns", d.enc, "ns", 0, 100000, "encoder pipeline"), period);
    d.pipeline->decoder = ns_to_cycles(
        c.real(k + d.mode + ".decoder_ns", d.dec, "ns", 0, 100000, "decoder pipeline after the codeword is complete"),
        period);
  }
  p.pma_tx_ns = c.real(k + "pma_tx_ns", 10, "ns", 0, 100000, "TX PMA/SerDes latency (check)");
  p.pma_rx_ns = c.real(k + "pma_rx_ns", 10, "ns", 0, 100000, "RX PMA/SerDes latency incl. DSP (check)");
  p.max_skew_ns = c.real(k + "max_skew_ns", 1, "ns", 0, 1000, "worst skew between lanes, removed by the deskew buffer");
  p.set_cable(cable == Cable::kPerLink ? 0 : c.real(k + "cable_m", 2, "m", 0, 1000, "cable length; 5 ns per metre"));
  p.cdr_lock_cycles = ns_to_cycles(c.real(k + "cdr_lock_us", 1, "us", 0, 1e6, "link-up time: CDR lock") * 1000, period);
  const double down_at = c.real(k + "link_down_at_us", 0, "us", 0, 1e9, "link flap: when the link goes down");
  const double down_for = c.real(k + "link_down_us", 0, "us", 0, 1e9, "link flap: how long it stays down; 0 = no flap");
  if (down_for > 0) {
    p.down_from = ns_to_cycles(down_at * 1000, period);
    p.down_until = ns_to_cycles((down_at + down_for) * 1000, period) + p.cdr_lock_cycles;
  }
  p.am_period_groups = static_cast<Cycle>(
      c.integer(k + "am_period", 8192, "codeword groups", 0, 1 << 24, "alignment markers every this many; 0 = none"));
  p.am_cycles = ns_to_cycles(c.real(k + "am_ns", 0, "ns", 0, 1000, "line time of one alignment-marker group") ,
                             period);
  if (p.am_cycles == 0 && p.am_period_groups)
    p.am_cycles = (1920 + kLaneBitsPerCycle * p.lanes - 1) / (kLaneBitsPerCycle * p.lanes);  // 16 x 120-bit AMs
  p.errors.ber = c.real(k + "errors.ber", 0, "ratio", 0, 0.49, "random bit error ratio per lane (pre-FEC)");
  p.errors.p_good_to_bad = c.real(k + "errors.p_good_to_bad", 0, "per symbol", 0, 1,
                                  "Gilbert-Elliott: chance per symbol of entering a burst; 0 = no bursts");
  p.errors.p_bad_to_good =
      c.real(k + "errors.p_bad_to_good", 0.1, "per symbol", 1e-12, 1, "Gilbert-Elliott: chance per symbol of leaving it");
  p.errors.ber_bad = c.real(k + "errors.ber_bad", 0.01, "ratio", 0, 0.49, "bit error ratio inside a burst");
  p.errors.dfe_propagation = c.real(k + "errors.dfe_propagation", 0, "probability", 0, 0.99,
                                    "chance that a symbol error is followed by another (DFE)");
  if (p.n() * p.interleave * kSymbolBits % (kLaneBitsPerCycle * p.lanes) != 0 && p.fec != "none")
    throw ConfigError(fmt::format("{}lanes = {} with {}fec = {} and {}interleave = {}: a codeword group must fill "
                                  "whole cycles of {} bits; use {}interleave = 2",
                                  k, p.lanes, k, p.fec, k, p.interleave, kLaneBitsPerCycle * p.lanes, k));
  return p;
}

Time PhyParams::period() const { return period_from_mhz(lane_gbps * 1000 / kLaneBitsPerCycle); }
// RS(544,514) as 802.3 lays it out for the port's rate: up to 100G one codeword at a time
// (clause 91); 200G and 400G two interleaved (clause 119); 800G two 400G flows of two each
// (clause 172, 802.3df), whose four codewords share the lanes. The light RS(272) has no such
// standard at these rates: the fewest codewords whose group fills whole cycles (2 on 8 lanes).
PhyParams PhyParams::with_fec(const std::string& mode) const {
  PhyParams q = *this;
  q.fec = mode;
  const double named_gbps = lanes * lane_gbps / 1.0625;  // 106.25 Gb/s lanes make 100G, 53.125 make 50G
  if (mode == "rs544") q.interleave = named_gbps > 400.5 ? 4 : named_gbps > 100.5 ? 2 : 1;
  else q.interleave = mode == "rs272" && 2720 % (kLaneBitsPerCycle * lanes) ? 2 : 1;
  return q;
}

void PhyParams::set_cable(double metres) {
  cable_m = metres;
  path_cycles = ns_to_cycles(pma_tx_ns + 5 * cable_m + pma_rx_ns + max_skew_ns, period());
}
int PhyParams::n() const { return fec == "rs544" ? 544 : fec == "rs272" ? 272 : 514; }
int PhyParams::k() const { return fec == "rs544" ? 514 : fec == "rs272" ? 258 : 514; }
int PhyParams::t() const { return fec == "rs544" ? 15 : fec == "rs272" ? 7 : 0; }
int PhyParams::blocks_per_codeword() const { return fec == "rs272" ? 40 : 80; }  // 257b blocks x 4
Cycle PhyParams::group_cycles() const {
  const int bits = n() * interleave * kSymbolBits, per_cycle = kLaneBitsPerCycle * lanes;
  return static_cast<Cycle>((bits + per_cycle - 1) / per_cycle);  // `none` pads its last beat
}

double codeword_error_ratio(const PhyParams& p, double ber) {
  // A PAM4 symbol errs with 2*ber and flips one bit; an m-bit FEC symbol spans m/2 of them.
  const double symbol_ok = std::pow(1 - 2 * ber, kSymbolBits / 2);
  const boost::math::binomial_distribution<double> errors(p.n(), 1 - symbol_ok);
  return boost::math::cdf(boost::math::complement(errors, static_cast<double>(p.t())));
}

struct PhyLink::Impl {
  Impl(const std::string& name, const PhyParams& p, Clock& clock, Stats& stats, std::uint64_t seed,
       const std::string& stream, Channel<Packet*>* in, Channel<Packet*>* out, PacketPool& pool);

  // Each side schedules itself at the end of its eval, from its own state and its input channel
  // (whose items wake it): nothing to commit.
  // --- TX: frames to 66b blocks; every C cycles a codeword group onto the line ---
  struct Tx : Core, LateTaker {
    static constexpr std::size_t kHotBytes = 512;  // itself, the Rx and the link's state after them
    Impl& link;
    explicit Tx(Impl& l, std::string name) : Core(std::move(name)), link(l) {}
    void eval() override {
      link.tx_eval();
      link.tx_schedule();
    }
    void take_in(Cycle upto) override { link.take_in(upto); }
    Cycle next_take() const override { return link.next_take(); }
  };
  // --- RX: a group decoded D cycles after it is complete; its frames out one per cycle ---
  struct Rx : Core {
    static constexpr std::size_t kHotBytes = 512;  // itself and the link's state after it
    Impl& link;
    explicit Rx(Impl& l, std::string name) : Core(std::move(name)), link(l) {}
    void eval() override {
      link.rx_eval();
      set_busy(!link.rx_out.empty());
    }
  };

  void tx_eval();
  void tx_schedule();
  void take_in(Cycle upto);
  Cycle next_take() const;
  bool room() const { return tx_block_end - tx_block_base < tx_room; }  // for a frame's blocks
  void rx_eval();
  CodewordGroup* make_group();
  void make_symbols(CodewordGroup::Word& w);
  void distribute_errors(CodewordGroup& g);
  std::pair<int, std::uint32_t> lane_symbol(int lane, std::uint64_t q) const;
  void decode(CodewordGroup& g);
  bool fec_decode(CodewordGroup::Word& w, int symbol_errors);
  void deliver_blocks_fast(CodewordGroup::Word& w, bool failed, bool decoded_word);
  void deliver_frames(Cycle group_sent, Cycle group_arrived);
  void sent_blocks(std::uint64_t first, std::vector<Block66>& out) const;
  std::uint8_t* message_bits_of(const std::vector<std::uint16_t>& symbols);

  // What a TX or RX evaluation reads comes first, its core among it (the kernel prefetches a core's
  // first lines while the one before it runs), then the parameters (their per-group fields near
  // the top of PhyParams), then what damaged codewords and the set-up use.
  Tx tx;
  Rx rx;
  Clock& clock;
  Channel<Packet*>* in;
  Channel<Packet*>* out;
  // TX state. Blocks are numbered from the first one sent, idles included; a frame's are made
  // from its bytes when a codeword's bits are (sent_blocks), never queued.
  std::uint64_t tx_block_base = 0;  // the next block to send
  std::uint64_t tx_block_end = 0;   // one past the last block of the frames taken in
  Cycle next_send = 0;
  Cycle send_wake = 0;  // the group's wake-up queued last (a frame's wakes the TX in between)
  Cycle take_from = 0;  // the first cycle the next frame may be taken in at
  std::uint64_t groups_sent = 0;
  // Groups ahead in which no lane has an error or a change of state, and groups sent since the
  // lanes' positions last moved (they move by those groups' bits before the next draw).
  std::uint64_t quiet_groups = 0, skipped_groups = 0;
  std::uint64_t group_bits = 0;  // on all lanes
  const std::uint64_t tx_room;   // blocks taken in ahead of the line: two groups' worth
  const Cycle group_cycles, encoder_cycles, decoder_cycles, to_rx_cycles;  // of p, cached: asked per frame or group
  const int n, k, t, blocks_per_codeword;  // and these per symbol
  const bool no_fec;
  bool stopped = false;
  bool stop_set = false;    // stop_after() was called
  bool rx_in_sync = true;   // the descrambler has seen exactly the bits the scrambler made
  std::vector<CodewordGroup*> free_groups;
  Ring<FrameRecord> frames;  // taken in by the TX, not yet delivered
  Ring<Packet*> rx_out;
  Stages stages;
  // RX state
  std::uint64_t rx_words_decoded = 0;
  Scrambler error_descrambler;  // fast codec: the descrambler run over the channel's error alone
  Cycle last_fec_latency = 0;
  struct RxWord {
    std::uint64_t index;          // words are numbered from the first one sent
    bool failed;                  // flagged uncorrectable, or lost
    bool exact;                   // its bits arrived as sent (no residual error in it or just before)
    std::vector<Block66> blocks;  // as received; only when not exact
  };
  // Decoded words that failed or did not arrive exact, in order, from the first one a frame not
  // yet delivered may need; every other word arrived as sent and is only counted.
  std::deque<RxWord> rx_words;
  RxWord* note_word(bool failed, bool exact);
  const RxWord* kept_word(std::uint64_t index) const;
  Counter &codewords, &lost_codewords, &corrected_codewords, &corrected_symbols, &uncorrectable, &miscorrected, &beyond_t,
      &decoder_failures,
      &line_bits, &pre_fec_bit_errors, &message_bits, &post_fec_bit_errors, &frames_in, &frames_out, &frames_bad,
      &decoded;
  LatencyHistogram& frame_latency;

  PhyParams p;
  std::string name;
  const ReedSolomon& codec;  // shared_codec's
  std::vector<BitErrorModel> lanes;
  std::vector<std::uint64_t> lane_bits;  // a group's bits on each lane
  std::vector<std::uint64_t> lane_flips;
  PacketPool& pool;
  Channel<CodewordGroup*> line;
  Scrambler scrambler;    // exact codec
  Scrambler descrambler;  // exact codec
  std::uint64_t stop_failures = ~0ull, stop_codewords = ~0ull;
  std::vector<std::unique_ptr<CodewordGroup>> group_store;
  std::vector<std::uint8_t> bits;    // one codeword's message bits
  std::vector<std::uint8_t> frame_bytes;
  std::vector<Block66> frame_blocks;
  std::vector<bool> symbol_hit;
};

PhyLink::Impl::Impl(const std::string& name_, const PhyParams& params, Clock& clock_, Stats& stats,
                    std::uint64_t seed, const std::string& stream, Channel<Packet*>* in_, Channel<Packet*>* out_,
                    PacketPool& pool_)
    : tx(*this, name_ + ".tx"), rx(*this, name_ + ".rx"), clock(clock_), in(in_), out(out_),
      tx_room(2ull * params.interleave * params.blocks_per_codeword()), group_cycles(params.group_cycles()),
      encoder_cycles(params.encoder_cycles()), decoder_cycles(params.decoder_cycles()),
      to_rx_cycles(params.to_rx_cycles()), n(params.n()), k(params.k()), t(params.t()),
      blocks_per_codeword(params.blocks_per_codeword()), no_fec(params.fec == "none"),
      codewords(stats.counter(name_ + ".fec.codewords", "codewords", "codewords received")),
      lost_codewords(stats.counter(name_ + ".lost_codewords", "codewords", "codewords sent while the link was down")),
      corrected_codewords(stats.counter(name_ + ".fec.corrected_codewords", "codewords", "codewords with corrected symbols")),
      corrected_symbols(stats.counter(name_ + ".fec.corrected_symbols", "symbols", "symbols corrected")),
      uncorrectable(stats.counter(name_ + ".fec.uncorrectable_codewords", "codewords", "codewords flagged uncorrectable")),
      miscorrected(stats.counter(name_ + ".fec.miscorrected_codewords", "codewords",
                                 "codewords the decoder 'corrected' into another codeword (known from the truth)")),
      beyond_t(stats.counter(name_ + ".fec.beyond_t_codewords", "codewords",
                             "codewords with more symbol errors than the code corrects (from the error log)")),
      decoder_failures(stats.counter(name_ + ".fec.decoder_failures", "codewords",
                                     "correctable codewords not restored: a model bug, must be 0")),
      line_bits(stats.counter(name_ + ".line_bits", "bits", "bits carried by the lanes")),
      pre_fec_bit_errors(stats.counter(name_ + ".pre_fec_bit_errors", "bits", "bits flipped by the channel")),
      message_bits(stats.counter(name_ + ".fec.message_bits", "bits", "message bits after the decoder")),
      post_fec_bit_errors(stats.counter(name_ + ".post_fec_bit_errors", "bits", "message bits still wrong after FEC")),
      frames_in(stats.counter(name_ + ".frames_in", "frames", "frames taken in by the TX")),
      frames_out(stats.counter(name_ + ".frames_out", "frames", "frames delivered by the RX")),
      frames_bad(stats.counter(name_ + ".frames_bad", "frames", "frames delivered marked bad")),
      decoded(stats.counter(name_ + ".fec.decoded_codewords", "codewords", "codewords run through the decoder")),
      frame_latency(stats.histogram(name_ + ".frame_latency", clock.period(), "frame in at TX to frame out at RX")),
      p(params), name(name_), codec(shared_codec(p.fec)),  // `none` never calls the codec
      pool(pool_),
      line(name + ".line", clock,
           ChannelSpec{p.to_rx_cycles() + p.group_cycles() + p.decoder_cycles() + p.mac_pcs_rx, 0, 1, 2}) {
  const std::uint64_t symbols = static_cast<std::uint64_t>(n) * p.interleave;
  for (int l = 0; l < p.lanes; ++l) {
    lanes.emplace_back(p.errors, Rng(seed, fmt::format("{}.lane{}", stream, l)));
    lane_bits.push_back((symbols / p.lanes + (static_cast<std::uint64_t>(l) < symbols % p.lanes)) * kSymbolBits);
    group_bits += lane_bits.back();
  }
  clock.attach(tx);
  clock.attach(rx);
  line.connect(&tx, &rx);
  next_send = send_wake = take_from = p.cdr_lock_cycles;
  tx.wake_at(next_send);
  bits.resize((k * kSymbolBits + 7) / 8 + 8);
}

// At most one frame a cycle, from link-up on, while fewer than two groups of blocks wait: so
// the cycle each is taken in at follows from when it was ready, the one before, and the room,
// which only a group going frees (and a group's evaluation takes in first). A TX that takes late
// (PhyLink::take_late) does it for every frame it would have taken by `upto` at once.
void PhyLink::Impl::take_in(Cycle upto) {
  for (Cycle at; (at = next_take()) <= upto;) {
    Packet* f = in->pop_at(at);
    take_from = at + 1;
    f->injected = clock.time_of(at);
    f->advance(stages.serialize, f->injected);
    const std::uint64_t first = tx_block_end;
    const auto bytes = static_cast<std::uint32_t>(f->size_now());
    tx_block_end += blocks_for_frame(bytes);
    frames.push({f, first, tx_block_end - 1, bytes});  // the trailing idle is not part of the frame
    frames_in.add();
  }
}

Cycle PhyLink::Impl::next_take() const {
  if (!in || !in->in_flight() || !room()) return ~Cycle{0};  // a group first
  return std::max(in->front_ready(), take_from);
}

void PhyLink::Impl::tx_eval() {
  take_in(clock.now());
  if (stop_set && (uncorrectable.value() + miscorrected.value() >= stop_failures ||
                   groups_sent * p.interleave >= stop_codewords))
    stopped = true;
  if (clock.now() == next_send && !stopped) {
    CodewordGroup* g = make_group();
    g->sent = clock.now();
    g->lost = g->sent >= p.down_from && g->sent < p.down_until;
    line.push(g);
    ++groups_sent;
    take_from = std::max(take_from, clock.now() + 1);  // the room it frees is there from the next cycle
    next_send += group_cycles;
    if (p.am_period_groups && groups_sent % p.am_period_groups == 0) next_send += p.am_cycles;
  }
}

void PhyLink::Impl::tx_schedule() {
  if (!stopped && send_wake != next_send) {
    tx.wake_at(next_send);
    send_wake = next_send;
  }
  // Until the CDR has locked nothing goes in (take_from): the wake-up at the first group comes.
  tx.set_busy(next_take() <= clock.now() + 1);
}

double PhyLink::memory_bytes(const PhyParams& p) {
  // A group leaves every C cycles and is free again M + E + P + C + D + R cycles later, plus
  // the one the TX fills and the one whose frames the RX delivers.
  const double groups = std::ceil(static_cast<double>(p.fixed_cycles()) / static_cast<double>(p.group_cycles())) + 2;
  // A codeword: its message bits and 66b blocks, and the symbols as sent and received. The fast
  // codec makes them only for the words the channel touched; the exact one for every word.
  const bool made = !p.fast || p.errors.ber > 0 || p.errors.p_good_to_bad > 0;
  constexpr double kChunk = 16;  // malloc's header and rounding, per vector
  const double word = made ? (p.k() * kSymbolBits + 7) / 8 + 8 + kChunk +
                                 p.blocks_per_codeword() * static_cast<double>(sizeof(Block66)) + kChunk +
                                 2 * (p.n() * static_cast<double>(sizeof(std::uint16_t)) + kChunk)
                           : 0;
  return groups * (sizeof(CodewordGroup) + p.interleave * (sizeof(CodewordGroup::Word) + word));
}

CodewordGroup* PhyLink::Impl::make_group() {
  CodewordGroup* g;
  if (free_groups.empty()) {
    group_store.push_back(std::make_unique<CodewordGroup>());
    g = group_store.back().get();
    g->words.resize(p.interleave);
  } else {
    g = free_groups.back();
    free_groups.pop_back();
  }
  g->index = groups_sent;
  if (p.fast) {  // it makes a word's bits only if the channel leaves an error in them (decode)
    if (!g->clean)
      for (auto& w : g->words) w.flips.clear();
    g->clean = true;
    tx_block_base += static_cast<std::uint64_t>(blocks_per_codeword) * g->words.size();
    tx_block_end = std::max(tx_block_end, tx_block_base);  // idles fill the gap
    distribute_errors(*g);
    return g;
  }
  for (auto& w : g->words) {
    w.symbols_valid = false;
    w.flips.clear();
    sent_blocks(tx_block_base, w.blocks);
    w.message.assign(bits.size(), 0);  // zero: rs272's pad symbol (the "+1") stays zero
    tx_block_base += blocks_per_codeword;
    tx_block_end = std::max(tx_block_end, tx_block_base);  // idles fill the gap
    for (int b = 0; b < blocks_per_codeword; b += 4) {
      const std::uint64_t at = static_cast<std::uint64_t>(b / 4) * 257;
      transcode(&w.blocks[b], w.message.data(), at);
      scramble_block(scrambler, w.message.data(), at, false);
    }
    make_symbols(w);
  }
  g->clean = true;
  distribute_errors(*g);
  return g;
}

// The codeword as symbols: the message cut into m-bit symbols, then the parity. The fast codec
// makes them only for the words the channel touched.
void PhyLink::Impl::make_symbols(CodewordGroup::Word& w) {
  w.sent.assign(n, 0);
  for (int s = 0; s < k; ++s)
    w.sent[s] = static_cast<std::uint16_t>(get_bits(w.message.data(), static_cast<std::uint64_t>(s) * kSymbolBits, kSymbolBits));
  if (!no_fec) codec.encode(w.sent.data());
  w.symbols_valid = true;
}

// Which codeword and symbol the q-th symbol on lane l is. Symbol s of every codeword goes to lane
// s % L, and each lane carries the interleaved codewords' symbols in turn (symbol muxing: 802.3's
// PMA bit-muxes PCS lanes that carry different codewords onto one lane), so that a burst on one
// lane spreads over all of them. Without interleaving, or when the lanes do not divide a codeword,
// symbol j of the group goes to lane j % L.
std::pair<int, std::uint32_t> PhyLink::Impl::lane_symbol(int l, std::uint64_t q) const {
  const auto i = static_cast<std::uint64_t>(p.interleave), lanes_n = static_cast<std::uint64_t>(p.lanes);
  if (i > 1 && n % p.lanes == 0)
    return {static_cast<int>(q % i), static_cast<std::uint32_t>((q / i) * lanes_n + static_cast<std::uint64_t>(l))};
  const std::uint64_t j = q * lanes_n + static_cast<std::uint64_t>(l);
  return {static_cast<int>(j % i), static_cast<std::uint32_t>(j / i)};
}

void PhyLink::Impl::distribute_errors(CodewordGroup& g) {
  line_bits.add(group_bits);
  // A group in which no lane has an event costs nothing per lane: the lanes move on when one has.
  if (quiet_groups) {
    --quiet_groups;
    ++skipped_groups;
    return;
  }
  quiet_groups = ~std::uint64_t{0};
  const std::uint64_t skipped = std::exchange(skipped_groups, 0);
  for (int l = 0; l < p.lanes; ++l) {
    lanes[l].skip(skipped * lane_bits[l]);
    const std::uint64_t base = lanes[l].position();
    lane_flips.clear();
    lanes[l].draw(lane_bits[l], lane_flips);
    for (std::uint64_t pos : lane_flips) {
      const std::uint64_t rel = pos - base;
      const auto [word, symbol] = lane_symbol(l, rel / kSymbolBits);
      g.words[word].flips.push_back(symbol * kSymbolBits + static_cast<std::uint32_t>(rel % kSymbolBits));
    }
    g.clean = g.clean && lane_flips.empty();
    pre_fec_bit_errors.add(lane_flips.size());
    quiet_groups = std::min(quiet_groups, lanes[l].quiet_bits() / lane_bits[l]);
  }
}

void PhyLink::Impl::decode(CodewordGroup& g) {
  // The fast codec's clean group with nothing carried into it: its words arrived as sent.
  if (p.fast && g.clean && !g.lost && error_descrambler.state() == 0) {
    const std::uint64_t words = g.words.size();
    codewords.add(words);
    message_bits.add(words * static_cast<std::uint64_t>(k) * kSymbolBits);
    rx_words_decoded += words;
    return;
  }
  for (auto& w : g.words) {
    codewords.add();
    const bool touched = !w.flips.empty();
    // The truth: how many symbols the channel hit.
    int symbol_errors = 0;
    if (touched) {
      symbol_hit.assign(n, false);
      for (std::uint32_t f : w.flips)
        if (!symbol_hit[f / kSymbolBits]) {
          symbol_hit[f / kSymbolBits] = true;
          ++symbol_errors;
        }
    }
    if (g.lost) {  // the RX had no signal: every symbol is lost, the frames are marked bad
      lost_codewords.add();
      symbol_errors = n;
    }
    if (symbol_errors > t) beyond_t.add();
    // The exact codec decodes every word that arrived; the fast one only those with errors.
    const bool failed = g.lost || ((touched || !p.fast) && fec_decode(w, symbol_errors));
    if (g.lost) uncorrectable.add();
    message_bits.add(static_cast<std::uint64_t>(k) * kSymbolBits);
    if (p.fast) {
      deliver_blocks_fast(w, failed, touched && !g.lost);
      continue;
    }
    // Exact: descramble and transcode back what the decoder left (a lost word's bits are taken
    // as sent and the word marked).
    bool residual = false;  // message bits still wrong after the decoder
    std::uint8_t* rx_message = w.message.data();
    if (touched && !g.lost) {
      residual = !std::equal(w.received.begin(), w.received.begin() + k, w.sent.begin());
      rx_message = message_bits_of(w.received);
    }
    // A residual error reaches the next word's first bits through the descrambler.
    const bool exact = !residual && rx_in_sync;
    RxWord* rw = note_word(failed, exact);
    for (int x = 0; x < blocks_per_codeword / 4; ++x) {
      Block66 four[4];
      const std::uint64_t at = static_cast<std::uint64_t>(x) * 257;
      scramble_block(descrambler, rx_message, at, true);
      untranscode(rx_message, at, four);
      if (!exact) rw->blocks.insert(rw->blocks.end(), four, four + 4);  // else they are the ones sent
    }
    rx_in_sync = !residual;
  }
}

// The channel's flips put into the word's symbols and decoded; true if the word failed. The fast
// codec decodes the error alone (an all-zero word sent): RS codes are linear, so the syndromes,
// the error locator and the corrections are those of the word actually sent, and so is every
// outcome counted here.
bool PhyLink::Impl::fec_decode(CodewordGroup::Word& w, int symbol_errors) {
  if (p.fast) w.sent.assign(n, 0);
  else if (!w.symbols_valid) make_symbols(w);
  w.received = w.sent;
  for (std::uint32_t f : w.flips) w.received[f / kSymbolBits] ^= static_cast<std::uint16_t>(1u << (f % kSymbolBits));
  bool failed = false;
  if (no_fec) {
    failed = !w.flips.empty();  // the CRC sees every error; nothing corrects it
    if (failed) uncorrectable.add();
  } else {
    decoded.add();
    const DecodeResult r = codec.decode(w.received.data());
    const bool restored = std::equal(w.received.begin(), w.received.end(), w.sent.begin());
    if (!r.ok) {
      failed = true;
      uncorrectable.add();
    } else if (!restored) {
      miscorrected.add();
    } else if (r.corrected) {
      corrected_codewords.add();
      corrected_symbols.add(r.corrected);
    }
    if (symbol_errors <= t && !restored) decoder_failures.add();
  }
  for (int s = 0; s < k; ++s) post_fec_bit_errors.add(__builtin_popcount(w.received[s] ^ w.sent[s]));
  return failed;
}

// The fast codec's blocks as received, without the scrambler: the descrambler is linear, so what
// it makes of (sent ^ e) is the sent bits ^ what it makes of e from e's own history. A word with
// no error left in it and none carried from the last word's final bits is its blocks as sent.
void PhyLink::Impl::deliver_blocks_fast(CodewordGroup::Word& w, bool failed, bool decoded_word) {
  bool residual = false;
  if (decoded_word)
    for (int s = 0; s < k && !residual; ++s) residual = w.received[s] != 0;
  if (!residual && error_descrambler.state() == 0) {
    note_word(failed, true);
    return;
  }
  // The error left in the message (the word sent was all zeros), then descrambled.
  if (residual) message_bits_of(w.received);
  else std::fill(bits.begin(), bits.end(), 0);
  w.message.assign(bits.size(), 0);
  sent_blocks(rx_words_decoded * blocks_per_codeword, w.blocks);
  for (int x = 0; x < blocks_per_codeword / 4; ++x) {
    const std::uint64_t at = static_cast<std::uint64_t>(x) * 257;
    scramble_block(error_descrambler, bits.data(), at, true);
    transcode(&w.blocks[4 * x], w.message.data(), at);
  }
  for (std::size_t i = 0; i < bits.size(); ++i) w.message[i] ^= bits[i];
  RxWord& rw = *note_word(failed, false);
  rw.blocks.resize(blocks_per_codeword);
  for (int x = 0; x < blocks_per_codeword / 4; ++x)
    untranscode(w.message.data(), static_cast<std::uint64_t>(x) * 257, &rw.blocks[4 * x]);
}

// Counts a decoded word; keeps it (returned) only if it failed or did not arrive exact.
PhyLink::Impl::RxWord* PhyLink::Impl::note_word(bool failed, bool exact) {
  const std::uint64_t index = rx_words_decoded++;
  if (!failed && exact) return nullptr;
  return &rx_words.emplace_back(RxWord{index, failed, exact, {}});
}

// The kept word `index`, or null if it arrived as sent.
const PhyLink::Impl::RxWord* PhyLink::Impl::kept_word(std::uint64_t index) const {
  const auto it = std::lower_bound(rx_words.begin(), rx_words.end(), index,
                                   [](const RxWord& w, std::uint64_t i) { return w.index < i; });
  return it != rx_words.end() && it->index == index ? &*it : nullptr;
}

// The message symbols of a word as bits, in `bits`.
std::uint8_t* PhyLink::Impl::message_bits_of(const std::vector<std::uint16_t>& symbols) {
  std::fill(bits.begin(), bits.end(), 0);
  for (int s = 0; s < k; ++s) put_bits(bits.data(), static_cast<std::uint64_t>(s) * kSymbolBits, kSymbolBits, symbols[s]);
  return bits.data();
}

// The blocks of the word that begins with block `first`: those of the frames it carries (not yet
// delivered, so still listed), idles between them.
void PhyLink::Impl::sent_blocks(std::uint64_t first, std::vector<Block66>& out) const {
  out.assign(blocks_per_codeword, idle_block());
  const std::uint64_t end = first + blocks_per_codeword;
  for (std::size_t i = 0; i < frames.size(); ++i) {
    const FrameRecord& f = frames[i];
    if (f.first_block >= end) break;
    const std::vector<std::uint8_t>& bytes = f.packet->bytes_now();
    for (std::uint64_t b = std::max(first, f.first_block); b < std::min(end, f.end_block); ++b)
      out[b - first] = frame_block(bytes.data(), bytes.size(), b - f.first_block);
  }
}

void PhyLink::Impl::deliver_frames(Cycle group_sent, Cycle group_arrived) {
  const std::uint64_t have = rx_words_decoded * blocks_per_codeword;
  // A frame's stages from its last codeword group on: sent (the frame leaves the PCS then;
  // advanced here, where the packet is touched anyway, in the same order), through the MAC/PCS
  // pipeline, encoded, through PMA and cable to the RX's first bit, gathered there (arrived),
  // decoded, through the PCS/MAC pipeline (now). The same for every frame the group completes.
  const Cycle encode = group_sent + p.mac_pcs_tx, on_line = encode + encoder_cycles;
  const Stage next_stages[] = {stages.mac_pcs_tx, stages.fec_encode, stages.pma_cable, stages.fec_accumulate,
                               stages.fec_decode, stages.mac_pcs_rx, stages.to_mac};
  const Time stage_starts[] = {clock.time_of(group_sent), clock.time_of(encode), clock.time_of(on_line),
                               clock.time_of(group_sent + to_rx_cycles), clock.time_of(group_arrived),
                               clock.time_of(group_arrived + decoder_cycles), clock.time_of(clock.now())};
  while (!frames.empty() && frames.front().end_block <= have) {
    const FrameRecord f = frames.pop();
    const std::size_t count = f.end_block - f.first_block;
    bool bad = false, exact = true;
    if (!rx_words.empty()) {  // else every word arrived as sent (and no division is due)
      const std::uint64_t first_word = f.first_block / blocks_per_codeword,
                          end_word = (f.end_block - 1) / blocks_per_codeword + 1;
      for (const RxWord& w : rx_words) {
        if (w.index >= end_word) break;
        if (w.index < first_word) continue;
        bad = bad || w.failed;
        exact = exact && w.exact;
      }
    }
    // Blocks that arrived as sent decode into the bytes sent, which the frame still carries.
    bool ok = true;
    if (!exact) {
      f.packet->bytes_now();
      frame_blocks.resize(count);
      for (std::size_t i = 0; i < count; ++i) {
        const std::uint64_t b = f.first_block + i;
        const RxWord* w = kept_word(b / blocks_per_codeword);
        frame_blocks[i] = !w || w->exact ? frame_block(f.packet->payload.data(), f.packet->payload.size(), i)
                                         : w->blocks[b % blocks_per_codeword];
      }
      ok = decode_frame(frame_blocks.data(), count, frame_bytes);
    }
    Packet* o = f.packet;
    if (ok && !exact) o->payload.swap(frame_bytes);  // undecodable: keep the length, mark it
    o->bytes = exact ? f.bytes : static_cast<std::uint32_t>(o->size_now());  // exact: as taken in
    o->bad = bad || !ok;
    o->intact = exact && !o->bad;
    o->advance(next_stages, stage_starts);
    rx_out.push(o);
  }
  // The packets the next group will complete, asked of memory a group ahead: each was last
  // touched when the TX took it in, a flight ago (their first three lines: all but the bytes).
  const std::uint64_t next_have = have + static_cast<std::uint64_t>(p.interleave) * blocks_per_codeword;
  for (std::size_t i = 0; i < frames.size() && frames[i].end_block <= next_have; ++i)
    for (int line = 0; line < 3; ++line) __builtin_prefetch(reinterpret_cast<const char*>(frames[i].packet) + 64 * line);
  // Drop the words no frame still needs.
  const std::uint64_t keep_from = frames.empty() ? have : frames.front().first_block;
  while (!rx_words.empty() && (rx_words.front().index + 1) * blocks_per_codeword <= keep_from) rx_words.pop_front();
}

void PhyLink::Impl::rx_eval() {
  const Cycle now = clock.now();
  // The line delivers a group once decoded and through the PCS/MAC pipeline: one wake-up, not one
  // when its last bit is in and another when it is decoded.
  while (line.can_pop()) {
    CodewordGroup* g = line.pop();
    g->arrived = now - decoder_cycles - p.mac_pcs_rx;
    decode(*g);
    deliver_frames(g->sent, g->arrived);
    last_fec_latency = now - p.mac_pcs_rx - (g->sent + to_rx_cycles);
    free_groups.push_back(g);
  }
  if (!rx_out.empty() && (!out || out->can_push())) {
    Packet* o = rx_out.pop();
    frames_out.add();
    if (o->bad) frames_bad.add();
    frame_latency.record((clock.time_of(now) - o->injected) / clock.period());
    if (out) out->push(o);
    else pool.release(o);
  }
}

PhyLink::PhyLink(const std::string& name, const PhyParams& params, Clock& clock, Stats& stats, std::uint64_t seed,
                 const std::string& random_stream, Channel<Packet*>* in, Channel<Packet*>* out, PacketPool& pool)
    : impl_(std::make_unique<Impl>(name, params, clock, stats, seed, random_stream, in, out, pool)) {}
PhyLink::~PhyLink() = default;

std::uint64_t PhyLink::codewords() const { return impl_->codewords.value(); }
std::uint64_t PhyLink::codewords_sent() const { return impl_->groups_sent * impl_->p.interleave; }
std::uint64_t PhyLink::uncorrectable() const { return impl_->uncorrectable.value(); }
std::uint64_t PhyLink::decoder_failures() const { return impl_->decoder_failures.value(); }
std::uint64_t PhyLink::frames_in() const { return impl_->frames_in.value(); }
std::uint64_t PhyLink::frames_out() const { return impl_->frames_out.value(); }
Cycle PhyLink::measured_fec_latency() const { return impl_->last_fec_latency; }
std::uint64_t PhyLink::beyond_t() const { return impl_->beyond_t.value(); }
std::uint64_t PhyLink::failed_codewords() const {
  return impl_->uncorrectable.value() + impl_->miscorrected.value();
}
const PhyParams& PhyLink::params() const { return impl_->p; }
Core& PhyLink::tx_core() { return impl_->tx; }
Core& PhyLink::rx_core() { return impl_->rx; }
void PhyLink::set_stages(const Stages& s) { impl_->stages = s; }
void PhyLink::take_late() {
  if (!impl_->in) return;  // nothing to take
  impl_->in->take_late(&impl_->tx);
  impl_->clock.attach_late(impl_->tx);
}
void PhyLink::probe(Waves& waves) {
  if (waves.enabled() && impl_->in) impl_->in->take_late(nullptr);  // .frames_in sampled each step: on time
  const std::string& n = impl_->name;
  waves.probe(n + ".codewords_sent", 32, [this] { return codewords_sent(); });
  waves.probe(n + ".uncorrectable", 32, [this] { return uncorrectable(); });
  waves.probe(n + ".frames_in", 32, [this] { return frames_in(); });
}
void PhyLink::stop_after(std::uint64_t failed_codewords, std::uint64_t codewords) {
  impl_->stop_set = true;
  impl_->stop_failures = failed_codewords;
  impl_->stop_codewords = codewords;
}
bool PhyLink::stopped() const { return impl_->stopped; }

}  // namespace xy::phy
