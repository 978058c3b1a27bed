#include "hw/otn/gmp.hpp"

#include <algorithm>
#include <array>
#include <cstring>

namespace xy::otn {
namespace {

constexpr int kPayloadRow = kPayloadBytes / kRows;                   // 3808: columns 17-3824
constexpr int kMappedRow = kFixedStuffFirstColumn - kPayloadFirstColumn;  // 3800: columns 17-3816
static_assert(kGmpWords * kGmpWordBytes == kRows * kMappedRow);

// The 14-bit patterns a change is sent with (C1 the MSB), by change -2..+2 (0: none).
constexpr std::array<int, 5> kInverted = {0x2666, 0x1555, 0, 0x2AAA, 0x1999};

// Remainder of the bits of `value` (`bits` of them, MSB first) times x^degree over `poly` (its
// terms below x^degree), as the CRCs of the JC bytes are defined.
int crc(std::uint32_t value, int bits, int poly, int degree) {
  int r = 0;
  for (int i = bits - 1; i >= 0; --i) {
    const int feedback = ((r >> (degree - 1)) & 1) ^ static_cast<int>((value >> i) & 1);
    r = (r << 1) & ((1 << degree) - 1);
    if (feedback) r ^= poly;
  }
  return r;
}

// Calls visit(offset in the payload, bytes) for the runs of word j, in order: one, or two when
// the word runs over a row's end.
template <typename F>
void for_each_run(int word, F&& visit) {
  const int first = (word - 1) * kGmpWordBytes, row = first / kMappedRow, column = first % kMappedRow;
  const int head = std::min(kGmpWordBytes, kMappedRow - column);
  visit(static_cast<std::size_t>(row * kPayloadRow + column), static_cast<std::size_t>(head));
  if (head < kGmpWordBytes)
    visit(static_cast<std::size_t>((row + 1) * kPayloadRow), static_cast<std::size_t>(kGmpWordBytes - head));
}

}  // namespace

std::uint8_t crc8_jc(std::uint8_t jc1, std::uint8_t jc2) {
  return static_cast<std::uint8_t>(crc(static_cast<std::uint32_t>(jc1 << 8 | jc2), 16, 0x0D, 8));
}

std::uint8_t crc5_cnd(int d) { return static_cast<std::uint8_t>(crc(static_cast<std::uint32_t>(d), 10, 0x03, 5)); }

JcBytes announce(int current, int next, int sum_cnd) {
  const int change = next - current;
  int field = next;
  bool ii = true, di = true;
  if (change >= -2 && change <= 2) {
    field = current ^ kInverted[static_cast<std::size_t>(change + 2)];
    ii = change > 0;
    di = change < 0;
  }
  JcBytes jc{};
  jc[0] = static_cast<std::uint8_t>(field >> 6);
  jc[1] = static_cast<std::uint8_t>((field & 0x3F) << 2 | (ii ? 2 : 0) | (di ? 1 : 0));
  jc[2] = crc8_jc(jc[0], jc[1]);
  jc[3] = static_cast<std::uint8_t>(sum_cnd >> 5 & 0x1F);
  jc[4] = static_cast<std::uint8_t>(sum_cnd & 0x1F);
  jc[5] = crc5_cnd(sum_cnd);
  return jc;
}

std::optional<int> read_cm(const JcBytes& jc, std::optional<int> current) {
  if (crc8_jc(jc[0], jc[1]) != jc[2]) return std::nullopt;
  const int field = jc[0] << 6 | jc[1] >> 2;
  const bool ii = jc[1] & 2, di = jc[1] & 1;
  if (ii == di) return field;
  if (!current) return std::nullopt;
  for (int change : ii ? std::array<int, 2>{1, 2} : std::array<int, 2>{-1, -2})
    if ((field ^ kInverted[static_cast<std::size_t>(change + 2)]) == *current) return *current + change;
  return std::nullopt;
}

std::optional<int> read_sum_cnd(const JcBytes& jc) {
  const int d = (jc[3] & 0x1F) << 5 | (jc[4] & 0x1F);
  if (crc5_cnd(d) != (jc[5] & 0x1F)) return std::nullopt;
  return d;
}

JcBytes jc_of(const Frame& f) {
  JcBytes jc{};
  for (std::size_t i = 0; i < jc.size(); ++i) jc[i] = f[kJc[i]];
  return jc;
}

void GmpMapper::push(const std::uint8_t* client, std::size_t n) {
  if (head_ > fifo_.size() / 2) {  // keep the FIFO's storage from growing
    fifo_.erase(fifo_.begin(), fifo_.begin() + static_cast<long>(head_));
    head_ = 0;
  }
  fifo_.insert(fifo_.end(), client, client + n);
  peak_ = std::max(peak_, fifo_bytes());
}

void GmpMapper::next(std::uint8_t* payload, JcBytes& jc) {
  cm_ = next_cm_;
  std::memset(payload, 0, kPayloadBytes);
  for (int j = 1; j <= kGmpWords; ++j)
    if (gmp_data(j, cm_))
      for_each_run(j, [&](std::size_t at, std::size_t n) {
        std::memcpy(payload + at, &fifo_[head_], n);
        head_ += n;
      });
  next_cm_ = std::min(kGmpWords, static_cast<int>(fifo_bytes() / kGmpWordBytes));
  jc = announce(cm_, next_cm_, static_cast<int>(fifo_bytes() - static_cast<std::size_t>(next_cm_) * kGmpWordBytes));
}

void GmpDemapper::take(const Frame& f, std::vector<std::uint8_t>& client) {
  ++stats_.frames;
  if (cm_) {
    for (int j = 1; j <= kGmpWords; ++j)
      if (gmp_data(j, *cm_))
        for_each_run(j, [&](std::size_t at, std::size_t n) {
          const std::uint8_t* p = &f[otn::at(static_cast<int>(at / kPayloadRow) + 1,
                                             kPayloadFirstColumn + static_cast<int>(at % kPayloadRow))];
          client.insert(client.end(), p, p + n);
        });
    stats_.client_bytes += static_cast<std::uint64_t>(*cm_) * kGmpWordBytes;
  } else {
    ++stats_.frames_without_cm;
  }
  const JcBytes jc = jc_of(f);
  const std::optional<int> next = read_cm(jc, cm_);
  if (!next && (cm_ || crc8_jc(jc[0], jc[1]) != jc[2])) ++stats_.jc_errors;
  const std::optional<int> sum = read_sum_cnd(jc);
  stats_.last_cn = next && sum && sum_cnd_ ? *next * kGmpWordBytes + *sum - *sum_cnd_ : -1;
  cm_ = next;
  sum_cnd_ = sum;
}

}  // namespace xy::otn
