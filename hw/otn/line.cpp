#include "hw/otn/line.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>

#include "hw/otn/gmp.hpp"
#include "hw/otn/otu4.hpp"
#include "hw/phy/pcs.hpp"

namespace xy::otn {
namespace {

constexpr std::uint64_t kFrameBits = kFrameBytes * 8;
constexpr int kMappedRow = kGmpWords * kGmpWordBytes / kRows;  // 3800: columns 17-3816
constexpr std::uint64_t kNever = ~std::uint64_t{0};

// The data words of each Cm: words[cm][n] is the n-th (1-190), before[cm][j] how many come
// before word j.
struct WordTables {
  std::array<std::vector<int>, kGmpWords + 1> words;
  std::array<std::array<int, kGmpWords + 1>, kGmpWords + 1> before{};
  WordTables() {
    for (int cm = 0; cm <= kGmpWords; ++cm)
      for (int j = 1; j <= kGmpWords; ++j) {
        before[cm][j] = static_cast<int>(words[cm].size());
        if (gmp_data(j, cm)) words[cm].push_back(j);
      }
  }
};
const WordTables& tables() {
  static const WordTables t;
  return t;
}

// A byte of a frame left wrong by the GFEC: its offset in the frame and its error.
struct Wrong {
  std::uint32_t at;
  std::uint8_t error;
};

}  // namespace

Time LineParams::fibre() const { return from_ns(km * fibre_ns_per_km); }
double LineParams::frame_fs() const { return kFrameBits / (kLineBps * (1 + server_ppm * 1e-6)) * 1e15; }
double LineParams::client_bps() const { return 103.125e9 * (1 + client_ppm * 1e-6); }

// The cores of every wavelength, for `exact`: the client stream's bytes as made, and what the
// far end's de-mapper gave back.
struct Line::Exact {
  struct Channel {
    GmpMapper mapper;
    Framer framer;
    Deframer deframer;
    GmpDemapper demapper;
    std::vector<std::uint8_t> stream;  // the client bytes made, from byte `base` on
    std::uint64_t base = 0, blocks = 0, pushed = 0;  // blocks made, bytes handed to the mapper
    std::uint64_t bits = 0, acc = 0;                 // bits made; those not yet in a byte
    struct Taken {
      std::vector<std::uint8_t> bytes;
      bool placed;  // the de-mapper knew its Cm
    };
    std::vector<Taken> taken;  // by the de-mapper since the last frame sent
    std::uint64_t next = 0;    // the first frame not yet settled
    bool locked = false;       // the deframer has found the frame alignment
    Deframer::Stats seen;  // the deframer's stats already counted
  };
  std::vector<Channel> channels;
  std::vector<std::uint8_t> payload = std::vector<std::uint8_t>(kPayloadBytes);
  Frame frame{};
};

Line::Counts::Counts(Stats& stats, const std::string& name)
    : frames_in(stats.counter(name + ".frames_in", "frames", "frames taken from the port")),
      frames_out(stats.counter(name + ".frames_out", "frames", "frames out of the far end")),
      frames_bad(stats.counter(name + ".frames_bad", "frames", "frames out with a byte the line left wrong")),
      otu_frames(stats.counter(name + ".otu_frames", "frames", "OTU4 frames over every wavelength")),
      corrected_symbols(stats.counter(name + ".fec.corrected_symbols", "symbols", "GFEC symbols corrected")),
      uncorrectable_codewords(stats.counter(name + ".fec.uncorrectable", "codewords", "GFEC codewords uncorrectable")),
      miscorrected_codewords(stats.counter(name + ".fec.miscorrected", "codewords",
                                           "GFEC codewords decoded to another codeword (the model's truth)")),
      frames_without_cm(stats.counter(name + ".gmp.frames_without_cm", "frames",
                                      "OTU4 frames whose data the de-mapper could not place (its Cm unread)")),
      frames_unaligned(stats.counter(name + ".frames_unaligned", "frames",
                                     "OTU4 frames lost before the deframer found the frame alignment")) {}

Line::Line(const std::string& name, const LineParams& params, Clock& clock, Stats& stats, std::uint64_t seed,
           Channel<Packet*>& in, Channel<Packet*>& out)
    : Core(name), p_(params), in_(in), out_(out), frame_fs_(p_.frame_fs()), block_fs_(66 / p_.client_bps() * 1e15),
      bytes_per_fs_(p_.client_bps() / 8 / 1e15), counts_(stats, name),
      latency_(stats.histogram(name + ".latency", clock.period(), "a frame from taken to out of the far end")) {
  if (p_.channels < 1) throw std::invalid_argument(name + ": an OTN line needs at least one wavelength");
  for (int c = 0; c < p_.channels; ++c) {
    rng_.emplace_back(seed, fmt::format("{}.ch{}", name, c));
    next_flip_.push_back(p_.ber > 0 ? rng_.back().geometric(p_.ber) - 1 : kNever);
  }
  known_cm_.assign(static_cast<std::size_t>(p_.channels), std::nullopt);
  aligned_.assign(static_cast<std::size_t>(p_.channels), false);
  cm_ = {0};
  before_ = {0};
  if (p_.exact) {
    exact_ = std::make_unique<Exact>();
    exact_->channels.resize(static_cast<std::size_t>(p_.channels));
    for (std::size_t c = 0; c < exact_->channels.size(); ++c) {
      Exact::Channel& x = exact_->channels[c];
      x.deframer.on_frame = [&x](const Frame& f, const Backward&) {
        const std::uint64_t unplaced = x.demapper.stats().frames_without_cm;
        x.taken.push_back({{}, false});
        x.demapper.take(f, x.taken.back().bytes);
        x.taken.back().placed = x.demapper.stats().frames_without_cm == unplaced;
      };
    }
  }
  clock.attach(*this);
}

Line::~Line() = default;

void Line::schedule(std::uint64_t k) {
  while (base_ + cm_.size() <= k) {
    // Frame n's Cm is decided at the start of frame n - 1 from the bytes arrived by then.
    const std::uint64_t n = base_ + cm_.size();
    const std::uint64_t arrived = arrived_by(n - 1);
    const std::uint64_t before = before_.back() + std::uint64_t{kGmpWordBytes} * static_cast<std::uint64_t>(cm_.back());
    before_.push_back(before);
    cm_.push_back(static_cast<int>(std::min<std::uint64_t>(kGmpWords, (arrived - before) / kGmpWordBytes)));
  }
}

std::uint64_t Line::arrived_by(std::uint64_t k) const {
  return static_cast<std::uint64_t>(
      std::floor(static_cast<long double>(k) * frame_fs_ * static_cast<long double>(bytes_per_fs_)));
}

int Line::cm(std::uint64_t k) {
  schedule(k);
  return cm_[k - base_];
}

std::uint64_t Line::bytes_before(std::uint64_t k) {
  schedule(k);
  return before_[k - base_];
}

std::pair<std::uint64_t, int> Line::where(std::uint64_t at) {
  for (std::uint64_t k = base_ + before_.size(); bytes_before(k) <= at; ++k) {  // schedule the frames up to it
  }
  const auto after = std::upper_bound(before_.begin(), before_.end(), at);
  const std::uint64_t k = base_ + static_cast<std::uint64_t>(after - before_.begin()) - 1;
  const std::uint64_t q = at - before_[k - base_];
  const int j = tables().words[static_cast<std::size_t>(cm_[k - base_])][q / kGmpWordBytes];
  return {k, static_cast<int>(((j - 1) * kGmpWordBytes + q % kGmpWordBytes) / kMappedRow)};
}

Cycle Line::leaves_at(std::uint64_t terminate_block) {
  const std::uint64_t i = terminate_block / static_cast<std::uint64_t>(p_.channels);
  const auto [k, row] = where((66 * (i + 1) - 1) / 8);
  const double t = static_cast<double>(k) * frame_fs_ + (row + 1) * frame_fs_ / kRows +
                   static_cast<double>(p_.fibre() + from_ns(p_.decoder_ns));
  return cycles_for(static_cast<Time>(std::ceil(t)), clock().period());
}

void Line::spoil(int channel, std::uint64_t first_byte, std::uint64_t end_byte) {
  const auto n = static_cast<std::uint64_t>(p_.channels), c = static_cast<std::uint64_t>(channel);
  const std::uint64_t lo = first_byte * 8 / 66 * n + c, hi = (end_byte * 8 - 1) / 66 * n + c;  // blocks, inclusive
  auto it = std::partition_point(pending_.begin(), pending_.end(), [lo](const Pending& x) { return x.end <= lo; });
  for (; it != pending_.end() && it->first <= hi; ++it) {
    // Its first block on this channel in [lo, hi], if any.
    const std::uint64_t from = std::max(it->first, lo);
    const std::uint64_t g = from + (c + n - from % n) % n;
    if (g < it->end && g <= hi && !it->packet->bad) {
      it->packet->bad = true;
      counts_.frames_bad.add();
    }
  }
}

void Line::settle_frames_through(Time now) {
  const auto due = static_cast<std::uint64_t>(std::floor(static_cast<double>(now) / frame_fs_)) + 1;  // frames begun
  while (settled_ < due) {
    // Nothing can happen in a frame without a bit error while every de-mapper knows its Cm.
    const int cm_now = cm(settled_);
    if (!exact_ && std::all_of(known_cm_.begin(), known_cm_.end(), [cm_now](auto& k) { return k == cm_now; }) &&
        std::all_of(aligned_.begin(), aligned_.end(), [](bool a) { return a; })) {
      const std::uint64_t next_error = *std::min_element(next_flip_.begin(), next_flip_.end()) / kFrameBits;
      const std::uint64_t skip = std::min(due, next_error);
      if (skip > settled_) {
        schedule(skip);
        for (int c = 0; c < p_.channels; ++c) known_cm_[static_cast<std::size_t>(c)] = cm_[skip - base_];
        counts_.otu_frames.add((skip - settled_) * static_cast<std::uint64_t>(p_.channels));
        settled_ = skip;
        continue;
      }
    }
    for (int c = 0; c < p_.channels; ++c) settle(settled_, c);
    ++settled_;
  }
  // The schedule before the oldest frame still needed (by a frame waiting to leave, or to settle).
  std::uint64_t keep = settled_ > 2 ? settled_ - 2 : 0;  // the exact deframer gives a frame out a frame late
  if (!pending_.empty())
    keep = std::min(keep, where(pending_.front().first / static_cast<std::uint64_t>(p_.channels) * 66 / 8).first);
  while (base_ < keep && cm_.size() > 2) {
    cm_.pop_front();
    before_.pop_front();
    ++base_;
  }
}

void Line::settle(std::uint64_t k, int channel) {
  const auto ch = static_cast<std::size_t>(channel);
  schedule(k + 1);
  const int cm_k = cm_[k - base_];
  const std::uint64_t first = before_[k - base_], end = before_[k + 1 - base_];
  counts_.otu_frames.add();
  // The bits of this frame the line flips.
  std::vector<std::uint32_t> flips;
  for (std::uint64_t& b = next_flip_[ch]; b < (k + 1) * kFrameBits; b += rng_[ch].geometric(p_.ber))
    flips.push_back(static_cast<std::uint32_t>(b - k * kFrameBits));

  if (exact_) {
    Exact::Channel& x = exact_->channels[ch];
    // The client stream's bytes arrived by the frame's start, made from the frames in their slots.
    const std::uint64_t arrived = arrived_by(k);
    const auto n = static_cast<std::uint64_t>(p_.channels);
    while (x.base + x.stream.size() < arrived) {
      const std::uint64_t g = x.blocks * n + ch;
      const auto it = std::partition_point(pending_.begin(), pending_.end(), [g](const Pending& y) { return y.end < g; });
      phy::Block66 block = phy::idle_block();  // between frames, and each frame's last block
      if (it != pending_.end() && it->first <= g && g < it->end) {
        const std::vector<std::uint8_t>& bytes = it->packet->bytes_now();
        block = phy::frame_block(bytes.data(), bytes.size(), g - it->first);
      }
      ++x.blocks;
      // 66 bits in the order they are sent (sync header, then payload bit 0 on), MSB first into bytes.
      for (int b = 0; b < 66; ++b) {
        const std::uint64_t bit = b < 2 ? (block.sync >> b) & 1 : (block.payload >> (b - 2)) & 1;
        x.acc = x.acc << 1 | bit;
        if (++x.bits % 8 == 0) x.stream.push_back(static_cast<std::uint8_t>(x.acc));
      }
    }
    x.mapper.push(x.stream.data() + (x.pushed - x.base), arrived - x.pushed);
    x.pushed = arrived;
    JcBytes jc;
    x.mapper.next(exact_->payload.data(), jc);
    if (x.mapper.cm() != cm_k) throw std::logic_error(name() + ": the mapper and the schedule disagree on Cm");
    x.framer.next(exact_->payload.data(), exact_->frame, {}, jc);
    for (std::uint32_t b : flips) exact_->frame[b / 8] ^= static_cast<std::uint8_t>(0x80 >> b % 8);
    x.deframer.push(exact_->frame.data(), kFrameBytes);
    x.locked |= !x.taken.empty();
    if (x.locked && x.deframer.oof())
      throw std::runtime_error(fmt::format("{}: wavelength {} lost frame alignment at OTU4 frame {}", name(), channel, k));
    const Deframer::Stats& s = x.deframer.stats();
    counts_.corrected_symbols.add(s.fec_corrected_symbols - x.seen.fec_corrected_symbols);
    counts_.uncorrectable_codewords.add(s.fec_uncorrectable_codewords - x.seen.fec_uncorrectable_codewords);
    x.seen = s;
    // The frames the deframer handed on, this one the last (the first once a frame later, when
    // its FAS is confirmed), against the bytes sent; those it skipped finding the alignment, lost.
    const std::uint64_t first_taken = k + 1 - x.taken.size();
    for (const std::uint64_t through = x.taken.empty() ? k : k + 1; x.next < through; ++x.next) {  // k may come yet
      const std::uint64_t from = bytes_before(x.next), to = bytes_before(x.next + 1);
      if (x.next < first_taken) {
        counts_.frames_unaligned.add();
        if (to > from) spoil(channel, from, to);
        continue;
      }
      const Exact::Channel::Taken& t = x.taken[x.next - first_taken];
      if (!t.placed) {
        if (to > from) counts_.frames_without_cm.add();
        if (to > from) spoil(channel, from, to);
      } else if (t.bytes.size() != to - from) {
        spoil(channel, from, to);
      } else {
        for (std::uint64_t i = 0; i < t.bytes.size(); ++i)
          if (t.bytes[i] != x.stream[from + i - x.base]) spoil(channel, from + i, from + i + 1);
      }
      if (from - x.base > (1u << 20)) {  // what no frame to come reads
        x.stream.erase(x.stream.begin(), x.stream.begin() + static_cast<long>(from - x.base));
        x.base = from;
      }
    }
    x.taken.clear();
    return;
  }

  // The fast model. Until the deframer has found the frame alignment (a FAS, and another a frame
  // later, both without an error) frames are not handed on; once it has, it keeps it.
  if (!aligned_[ch]) {
    const bool found = (flips.empty() || flips.front() >= 8 * kFas.size()) &&
                       next_flip_[ch] >= (k + 1) * kFrameBits + 8 * kFas.size();
    if (!found) {
      counts_.frames_unaligned.add();
      if (end > first) spoil(channel, first, end);
      return;
    }
    aligned_[ch] = true;
  }
  // What the de-mapper could not place, then the bytes the GFEC left wrong.
  const bool placed = known_cm_[ch] == cm_k;
  if (!placed && end > first) {
    counts_.frames_without_cm.add();
    spoil(channel, first, end);
  }
  std::vector<Wrong> wrong;
  if (!flips.empty()) {
    // Each flipped bit's codeword (row r, X: column mod 16) and symbol (column / 16).
    std::vector<std::tuple<int, int, std::uint8_t>> hits;
    for (std::uint32_t b : flips) {
      const std::uint32_t at = b / 8, column = at % kColumns;
      hits.emplace_back(static_cast<int>(at / kColumns * 16 + column % 16), static_cast<int>(column / 16),
                        static_cast<std::uint8_t>(0x80 >> b % 8));
    }
    std::sort(hits.begin(), hits.end());
    for (std::size_t i = 0; i < hits.size();) {
      const int word = std::get<0>(hits[i]);
      std::array<std::uint16_t, 255> error{};
      int symbols = 0;
      for (; i < hits.size() && std::get<0>(hits[i]) == word; ++i) {
        std::uint16_t& s = error[static_cast<std::size_t>(std::get<1>(hits[i]))];
        symbols += s == 0;
        s ^= std::get<2>(hits[i]);
      }
      if (symbols <= 8) {  // within t: corrected
        counts_.corrected_symbols.add(static_cast<std::uint64_t>(symbols));
        continue;
      }
      const phy::DecodeResult r = gfec().decode(error.data());  // the word's outcome is its error's
      counts_.corrected_symbols.add(static_cast<std::uint64_t>(r.corrected));
      if (!r.ok) counts_.uncorrectable_codewords.add();
      else counts_.miscorrected_codewords.add();
      for (int s = 0; s < 255; ++s)
        if (error[static_cast<std::size_t>(s)])
          wrong.push_back({static_cast<std::uint32_t>(word / 16 * kColumns + word % 16 + 16 * s),
                           static_cast<std::uint8_t>(error[static_cast<std::size_t>(s)])});
    }
  }
  const auto sum_cnd =
      static_cast<int>(arrived_by(k) - end - std::uint64_t{kGmpWordBytes} * static_cast<std::uint64_t>(cm_[k + 1 - base_]));
  JcBytes jc = announce(cm_k, cm_[k + 1 - base_], sum_cnd);
  for (const Wrong& w : wrong) {
    const int row = static_cast<int>(w.at / kColumns), column = static_cast<int>(w.at % kColumns) + 1;
    for (std::size_t i = 0; i < kJc.size(); ++i)
      if (kJc[i] == w.at) jc[i] ^= w.error;
    if (!placed || column < kPayloadFirstColumn || column >= kFixedStuffFirstColumn) continue;
    const int mapped = row * kMappedRow + column - kPayloadFirstColumn;
    const int j = mapped / kGmpWordBytes + 1;
    if (!gmp_data(j, cm_k)) continue;
    const std::uint64_t at = first + static_cast<std::uint64_t>(tables().before[static_cast<std::size_t>(cm_k)][static_cast<std::size_t>(j)]) * kGmpWordBytes +
                             static_cast<std::uint64_t>(mapped % kGmpWordBytes);
    spoil(channel, at, at + 1);
  }
  known_cm_[ch] = read_cm(jc, known_cm_[ch]);
}

void Line::eval() {
  const Time now_t = clock().time_of(now());
  settle_frames_through(now_t);
  if (!pending_.empty() && pending_.front().out <= now() && out_.can_push()) {
    Packet* p = pending_.front().packet;
    latency_.record(now() - pending_.front().taken);
    pending_.pop_front();
    p->intact = !p->bad;  // its bytes are the ones sent unless a wrong byte marked it
    if (stages_.second != kNoStage) p->advance(stages_.second, now_t);
    counts_.frames_out.add();
    out_.push(p);
  }
  const auto n = static_cast<std::uint64_t>(p_.channels);
  if (now_t >= free_at_ && in_.can_pop()) {
    Packet* p = in_.pop();
    if (stages_.first != kNoStage) p->advance(stages_.first, now_t);
    last_taken_ = now_t;
    const std::uint64_t blocks = phy::blocks_for_frame(p->size_now());
    const auto slot = static_cast<std::uint64_t>(std::ceil(static_cast<double>(now_t) / block_fs_));
    const std::uint64_t first = std::max(next_block_, slot * n);
    next_block_ = first + blocks;
    // The next is taken once this one's first slot has begun: it follows without a gap.
    free_at_ = static_cast<Time>(std::ceil(static_cast<double>(first / n) * block_fs_));
    pending_.push_back({p, first, first + blocks - 1, leaves_at(first + blocks - 2), now()});
    counts_.frames_in.add();
  }
  Cycle next = kNever;
  if (!pending_.empty()) next = std::max(pending_.front().out, now() + 1);
  if (in_.in_flight()) next = std::min(next, std::max(cycles_for(free_at_, clock().period()), now() + 1));
  if (next != kNever) wake_at(next);
}

}  // namespace xy::otn
