#include "hw/otn/otu4.hpp"

#include <algorithm>
#include <bitset>
#include <cmath>

namespace xy::otn {
namespace {

// Codeword x (0-15) of row r (1-4): its symbol i (0-254) is column 1 + x + 16 i.
template <typename F>
void for_each_codeword(Frame& f, F&& visit) {
  std::array<std::uint16_t, 255> word{};
  for (int r = 1; r <= kRows; ++r)
    for (int x = 0; x < 16; ++x) {
      for (int i = 0; i < 255; ++i) word[static_cast<std::size_t>(i)] = f[at(r, 1 + x + 16 * i)];
      if (visit(word.data()))  // changed: back into the frame
        for (int i = 0; i < 255; ++i)
          f[at(r, 1 + x + 16 * i)] = static_cast<std::uint8_t>(word[static_cast<std::size_t>(i)]);
    }
}

}  // namespace

const phy::ReedSolomon& gfec() {
  static const phy::ReedSolomon rs(phy::rs255());
  return rs;
}

Time frame_period() { return static_cast<Time>(std::llround(kFrameBytes * 8 / kLineBps * 1e15)); }

const std::vector<std::uint8_t>& scrambler_keystream() {
  static const std::vector<std::uint8_t> stream = [] {
    // b(n) = b(n-1) + b(n-3) + b(n-12) + b(n-16), the first 16 bits ones: 1 + x + x^3 + x^12 + x^16.
    std::vector<std::uint8_t> bytes(kFrameBytes - kFas.size());
    std::uint32_t last16 = 0xFFFF;  // bit k: b(n-1-k)
    for (std::size_t i = 0; i < bytes.size(); ++i)
      for (int bit = 0; bit < 8; ++bit) {
        const std::uint32_t b = i * 8 + static_cast<std::size_t>(bit) < 16
                                    ? 1
                                    : ((last16 >> 0) ^ (last16 >> 2) ^ (last16 >> 11) ^ (last16 >> 15)) & 1;
        if (i * 8 + static_cast<std::size_t>(bit) >= 16) last16 = ((last16 << 1) | b) & 0xFFFF;
        bytes[i] = static_cast<std::uint8_t>(bytes[i] << 1 | b);
      }
    return bytes;
  }();
  return stream;
}

void scramble(Frame& f) {
  const std::vector<std::uint8_t>& k = scrambler_keystream();
  for (std::size_t i = 0; i < k.size(); ++i) f[kFas.size() + i] ^= k[i];
}

std::uint8_t bip8(const Frame& f) {
  std::uint8_t p = 0;
  for (int r = 1; r <= kRows; ++r)
    for (std::size_t i = at(r, kOpuFirstColumn); i <= at(r, kPayloadLastColumn); ++i) p ^= f[i];
  return p;
}

void fec_encode(Frame& f) {
  for_each_codeword(f, [](std::uint16_t* word) {
    gfec().encode(word);
    return true;
  });
}

FecCount fec_decode(Frame& f) {
  FecCount n;
  for_each_codeword(f, [&n](std::uint16_t* word) {
    const phy::DecodeResult r = gfec().decode(word);
    if (!r.ok) ++n.uncorrectable_codewords;
    n.corrected_symbols += r.corrected;
    return r.ok && r.corrected > 0;
  });
  return n;
}

void Framer::next(const std::uint8_t* payload, Frame& f, const Backward& backward, const JcBytes& jc) {
  f.fill(0);
  std::copy(kFas.begin(), kFas.end(), f.begin());
  f[kMfas] = mfas_;
  const auto status = [](std::uint8_t bei, bool bdi) {  // bits 1-4 BEI, bit 5 BDI (bit 1 the MSB)
    return static_cast<std::uint8_t>(std::min<std::uint8_t>(bei, 8) << 4 | (bdi ? 0x08 : 0));
  };
  f[kSmTti] = config_.sm_tti[mfas_ % 64];
  f[kSmBip8] = bip_[0];
  f[kSmStatus] = status(backward.sm_bei, backward.sm_bdi);
  f[kPmTti] = config_.pm_tti[mfas_ % 64];
  f[kPmBip8] = bip_[0];
  f[kPmStatus] = status(backward.pm_bei, backward.pm_bdi);
  f[kPsi] = mfas_ == 0 ? config_.payload_type : 0;  // PSI[0] is the payload type; the rest reserved
  for (std::size_t i = 0; i < jc.size(); ++i) f[kJc[i]] = jc[i];
  constexpr std::size_t kRowPayload = kPayloadBytes / kRows;
  for (int r = 1; r <= kRows; ++r)
    std::copy(payload + (r - 1) * kRowPayload, payload + r * kRowPayload,
              f.begin() + static_cast<long>(at(r, kPayloadFirstColumn)));
  bip_ = {bip_[1], bip8(f)};
  fec_encode(f);
  scramble(f);
  ++mfas_;
}

const std::uint64_t Deframer::kThreeMsFrames =
    static_cast<std::uint64_t>(std::ceil(3e-3 * 1e15 / static_cast<double>(frame_period())));

void Deframer::push(const std::uint8_t* data, std::size_t n) {
  while (n) {  // a frame's time at most at once, so that each ends in the state it ended in
    const std::size_t slice = std::min(n, kFrameBytes - clock_);
    buf_.insert(buf_.end(), data, data + slice);
    data += slice;
    n -= slice;
    clock_ += slice;
    for (;;) {
      if (oof_) {
        search();
        if (oof_) break;
      } else if (buf_.size() >= kFrameBytes) {
        take_frame();
      } else {
        break;
      }
    }
    if (clock_ == kFrameBytes) {
      clock_ = 0;
      elapse_frame(!oof_);
    }
  }
}

void Deframer::search() {
  const auto discard = [this](std::size_t k) { buf_.erase(buf_.begin(), buf_.begin() + static_cast<long>(k)); };
  for (;;) {
    const auto p = std::search(buf_.begin(), buf_.end(), kFas.begin(), kFas.end());
    if (p == buf_.end()) {  // keep what may be the start of one
      discard(buf_.size() - std::min(buf_.size(), kFas.size() - 1));
      return;
    }
    const auto first = static_cast<std::size_t>(p - buf_.begin());
    discard(first);
    if (buf_.size() < kFrameBytes + kFas.size()) return;  // its confirmation has not come yet
    if (std::equal(kFas.begin(), kFas.end(), buf_.begin() + static_cast<long>(kFrameBytes))) {
      oof_ = false;
      errored_ = 0;
      return;
    }
    discard(1);
  }
}

void Deframer::take_frame() {
  if (buf_[2] != kFas[2] || buf_[3] != kFas[3] || buf_[4] != kFas[4]) {  // FAS bytes 3-5
    if (++errored_ == 5) {
      oof_ = true;
      ++stats_.oof_entries;
      bip_known_ = 0;
      last_mfas_.reset();
      return;  // its bytes are searched
    }
  } else {
    errored_ = 0;
  }
  std::copy(buf_.begin(), buf_.begin() + static_cast<long>(kFrameBytes), frame_.begin());
  buf_.erase(buf_.begin(), buf_.begin() + static_cast<long>(kFrameBytes));
  scramble(frame_);
  const FecCount fec = fec_decode(frame_);
  stats_.fec_corrected_symbols += static_cast<std::uint64_t>(fec.corrected_symbols);
  stats_.fec_uncorrectable_codewords += static_cast<std::uint64_t>(fec.uncorrectable_codewords);
  align_multiframe(frame_[kMfas]);
  Backward b;
  if (bip_known_ == 2) {
    b.sm_bei = static_cast<std::uint8_t>(std::bitset<8>(bip_[0] ^ frame_[kSmBip8]).count());
    b.pm_bei = static_cast<std::uint8_t>(std::bitset<8>(bip_[0] ^ frame_[kPmBip8]).count());
    stats_.sm_bip8_errors += b.sm_bei;
    stats_.pm_bip8_errors += b.pm_bei;
  }
  bip_ = {bip_[1], bip8(frame_)};
  bip_known_ = std::min(bip_known_ + 1, 2);
  ++stats_.frames;
  if (on_frame) on_frame(frame_, b);
}

void Deframer::align_multiframe(std::uint8_t mfas) {
  ++expected_mfas_;
  if (!oom_) {
    if (mfas == expected_mfas_)
      mfas_misses_ = 0;
    else if (++mfas_misses_ == 5) {
      oom_ = true;
      ++stats_.oom_entries;
    }
  } else if (last_mfas_ && mfas == static_cast<std::uint8_t>(*last_mfas_ + 1)) {
    oom_ = lom_ = false;
    mfas_misses_ = 0;
    expected_mfas_ = mfas;
  }
  last_mfas_ = mfas;
}

void Deframer::elapse_frame(bool in_frame) {
  oom_frames_ = oom_ ? oom_frames_ + 1 : 0;
  if (oom_frames_ >= kThreeMsFrames && !lom_) {
    lom_ = true;
    ++stats_.lom_entries;
  }
  if (!in_frame) {
    if_frames_ = 0;
    if (++oof_frames_ >= kThreeMsFrames && !lof_) {
      lof_ = true;
      ++stats_.lof_entries;
    }
    return;
  }
  if (++if_frames_ >= kThreeMsFrames) {
    oof_frames_ = 0;
    lof_ = false;
  }
}

}  // namespace xy::otn
