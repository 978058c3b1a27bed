#include "hw/switch/reduce.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <type_traits>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "kernel/config.hpp"

namespace xy::sw {
namespace {

constexpr int kMaxSlots = 65536;
constexpr int kMaxLanes = 4096;
constexpr std::uint32_t kMaxVectorBytes = 1u << 20;

constexpr ElemType kElemTypes[] = {ElemType::kInt8, ElemType::kUint8, ElemType::kInt32,
                                   ElemType::kFp16, ElemType::kBf16,  ElemType::kFp32};
constexpr AccumWidth kAccumWidths[] = {AccumWidth::k32, AccumWidth::k64};
constexpr ReduceOrder kReduceOrders[] = {ReduceOrder::kArrival, ReduceOrder::kMember};

template <class Enum, std::size_t N>
Enum parse_name(const std::string& text, const Enum (&values)[N], const char* what) {
  std::string allowed;
  for (Enum v : values) {
    if (text == to_string(v)) return v;
    allowed += allowed.empty() ? "" : ", ";
    allowed += to_string(v);
  }
  throw std::invalid_argument(fmt::format("reduce: unknown {} '{}': must be one of {}", what, text, allowed));
}

// --- IEEE binary formats on bit patterns ---

struct Format {
  int exp_bits, man_bits;
};
constexpr Format kF64{11, 52}, kF32{8, 23}, kF16{5, 10}, kBf16{8, 7};

// Rounds the value with bits `x` in format `s` to the narrower format `d`: nearest, ties to even.
std::uint64_t narrow(std::uint64_t x, Format s, Format d) {
  const std::uint64_t sign = (x >> (s.exp_bits + s.man_bits)) & 1;
  const int s_exp_max = (1 << s.exp_bits) - 1;
  const int exp = static_cast<int>((x >> s.man_bits) & static_cast<std::uint64_t>(s_exp_max));
  const std::uint64_t man = x & ((std::uint64_t{1} << s.man_bits) - 1);
  const std::uint64_t d_sign = sign << (d.exp_bits + d.man_bits);
  const std::uint64_t d_inf = static_cast<std::uint64_t>((1 << d.exp_bits) - 1) << d.man_bits;
  if (exp == s_exp_max) {
    if (man == 0) return d_sign | d_inf;
    std::uint64_t payload = man >> (s.man_bits - d.man_bits);
    if (payload == 0) payload = std::uint64_t{1} << (d.man_bits - 1);  // the quiet NaN
    return d_sign | d_inf | payload;
  }
  if (exp == 0 && man == 0) return d_sign;
  // The value is sig x 2^e, with its leading one at bit `top` of sig.
  const std::uint64_t sig = exp != 0 ? man | (std::uint64_t{1} << s.man_bits) : man;
  const int e = (exp != 0 ? exp : 1) - ((1 << (s.exp_bits - 1)) - 1) - s.man_bits;
  const int top = 63 - __builtin_clzll(sig);
  // Quantum of the result: d.man_bits below the leading one, but no finer than the subnormals'.
  const int d_min_quantum = 1 - ((1 << (d.exp_bits - 1)) - 1) - d.man_bits;
  const int quantum = std::max(e + top - d.man_bits, d_min_quantum);
  const int shift = quantum - e;  // > 0: d is narrower, so bits are dropped
  std::uint64_t q = 0;            // the value in quanta, rounded
  if (shift < 64) {
    q = sig >> shift;
    const std::uint64_t rest = sig & ((std::uint64_t{1} << shift) - 1);
    const std::uint64_t half = std::uint64_t{1} << (shift - 1);
    if (rest > half || (rest == half && (q & 1) != 0)) ++q;
  }  // else the value is below half the smallest subnormal (sig < 2^53): it rounds to zero
  // With the implicit bit counted in q, exponent field and mantissa are one sum; a carry out of
  // the mantissa raises the exponent, and past the largest finite value it reaches infinity.
  const std::uint64_t encoded =
      (static_cast<std::uint64_t>(quantum - d_min_quantum) << d.man_bits) + q;
  return d_sign | std::min(encoded, d_inf);
}

std::uint64_t double_bits(double d) {
  std::uint64_t b;
  std::memcpy(&b, &d, sizeof b);
  return b;
}

// --- element types: little-endian bytes in the payload ---

// Whole words at once (a byte loop here costs the lanes several instructions an element): the
// host is little-endian like the payload.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "payload elements are loaded as host words");
template <int N>
std::uint32_t load_le(const std::uint8_t* p) {
  if constexpr (N == 1) {
    return p[0];
  } else {
    std::conditional_t<N == 2, std::uint16_t, std::uint32_t> v;
    std::memcpy(&v, p, N);
    return v;
  }
}
template <int N>
void store_le(std::uint32_t v, std::uint8_t* p) {
  if constexpr (N == 1) {
    p[0] = static_cast<std::uint8_t>(v);
  } else {
    const auto w = static_cast<std::conditional_t<N == 2, std::uint16_t, std::uint32_t>>(v);
    std::memcpy(p, &w, N);
  }
}

struct Int8 {
  static constexpr int kBytes = 1;
  static constexpr std::int64_t kMin = -128, kMax = 127;
  static std::int64_t load(const std::uint8_t* p) { return static_cast<std::int8_t>(p[0]); }
};
struct Uint8 {
  static constexpr int kBytes = 1;
  static constexpr std::int64_t kMin = 0, kMax = 255;
  static std::int64_t load(const std::uint8_t* p) { return p[0]; }
};
struct Int32 {
  static constexpr int kBytes = 4;
  static constexpr std::int64_t kMin = INT32_MIN, kMax = INT32_MAX;
  static std::int64_t load(const std::uint8_t* p) { return static_cast<std::int32_t>(load_le<4>(p)); }
};
struct Fp32 {
  static constexpr int kBytes = 4;
  static float load(const std::uint8_t* p) { return float_of(load_le<4>(p)); }
  static void store(float v, std::uint8_t* p) { store_le<4>(float_bits(v), p); }
  static void store(double v, std::uint8_t* p) { store(double_to_float(v), p); }
};
struct Fp16 {
  static constexpr int kBytes = 2;
  static float load(const std::uint8_t* p) { return half_to_float(static_cast<std::uint16_t>(load_le<2>(p))); }
  static void store(float v, std::uint8_t* p) { store_le<2>(float_to_half(v), p); }
  static void store(double v, std::uint8_t* p) { store_le<2>(double_to_half(v), p); }
};
struct Bf16 {
  static constexpr int kBytes = 2;
  static float load(const std::uint8_t* p) { return bf16_to_float(static_cast<std::uint16_t>(load_le<2>(p))); }
  static void store(float v, std::uint8_t* p) { store_le<2>(float_to_bf16(v), p); }
  static void store(double v, std::uint8_t* p) { store_le<2>(double_to_bf16(v), p); }
};

// --- accumulators ---

// fp32 or fp64: elements are converted exactly, sums rounded by IEEE addition.
template <class A>
struct FloatAcc {
  using Acc = A;
  template <class E>
  static A from(const std::uint8_t* p) { return static_cast<A>(E::load(p)); }
  static A add(A a, A b) { return a + b; }
  template <class E>
  static void store(A a, std::uint8_t* p) { E::store(a, p); }
};
// int32 wrapping: arithmetic modulo 2^32, narrowed by keeping the low bytes.
struct WrapAcc {
  using Acc = std::uint32_t;
  template <class E>
  static std::uint32_t from(const std::uint8_t* p) { return static_cast<std::uint32_t>(E::load(p)); }
  static std::uint32_t add(std::uint32_t a, std::uint32_t b) { return a + b; }
  template <class E>
  static void store(std::uint32_t a, std::uint8_t* p) { store_le<E::kBytes>(a, p); }
};
// int64: the exact sum, saturated to the element's range.
struct SatAcc {
  using Acc = std::int64_t;
  template <class E>
  static std::int64_t from(const std::uint8_t* p) { return E::load(p); }
  static std::int64_t add(std::int64_t a, std::int64_t b) { return a + b; }
  template <class E>
  static void store(std::int64_t a, std::uint8_t* p) {
    store_le<E::kBytes>(static_cast<std::uint32_t>(std::clamp(a, E::kMin, E::kMax)), p);
  }
};

template <class E, class P>
struct Ops {
  using Acc = typename P::Acc;
  static Acc get(const std::uint8_t* acc, std::size_t i) {
    Acc a;
    std::memcpy(&a, acc + i * sizeof(Acc), sizeof(Acc));
    return a;
  }
  static void put(std::uint8_t* acc, std::size_t i, Acc a) { std::memcpy(acc + i * sizeof(Acc), &a, sizeof(Acc)); }

  static void init(std::uint8_t* acc, const std::uint8_t* data, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) put(acc, i, P::template from<E>(data + i * E::kBytes));
  }
  static void add(std::uint8_t* acc, const std::uint8_t* data, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) put(acc, i, P::add(get(acc, i), P::template from<E>(data + i * E::kBytes)));
  }
  static void finish(const std::uint8_t* acc, std::uint8_t* out, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) P::template store<E>(get(acc, i), out + i * E::kBytes);
  }
};

}  // namespace

// --- names ---

const char* to_string(ElemType type) {
  switch (type) {
    case ElemType::kInt8: return "int8";
    case ElemType::kUint8: return "uint8";
    case ElemType::kInt32: return "int32";
    case ElemType::kFp16: return "fp16";
    case ElemType::kBf16: return "bf16";
    case ElemType::kFp32: return "fp32";
  }
  return "?";
}

const char* to_string(AccumWidth width) { return width == AccumWidth::k64 ? "64" : "32"; }

const char* to_string(ReduceOrder order) { return order == ReduceOrder::kMember ? "member" : "arrival"; }

ElemType parse_elem_type(const std::string& text) { return parse_name(text, kElemTypes, "element type"); }
AccumWidth parse_accum_width(const std::string& text) { return parse_name(text, kAccumWidths, "accumulator width"); }
ReduceOrder parse_reduce_order(const std::string& text) { return parse_name(text, kReduceOrders, "order"); }

std::uint32_t elem_bytes(ElemType type) {
  switch (type) {
    case ElemType::kInt8:
    case ElemType::kUint8: return 1;
    case ElemType::kFp16:
    case ElemType::kBf16: return 2;
    case ElemType::kInt32:
    case ElemType::kFp32: return 4;
  }
  return 0;
}

// --- conversions ---

std::uint32_t float_bits(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}
float float_of(std::uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

float half_to_float(std::uint16_t bits) {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
  const std::uint32_t exp = (bits >> 10) & 0x1Fu;
  const std::uint32_t man = bits & 0x3FFu;
  if (exp == 0x1F) return float_of(sign | 0x7F800000u | man << 13);  // infinity, NaN with its payload
  if (exp != 0) return float_of(sign | (exp + 127 - 15) << 23 | man << 13);
  if (man == 0) return float_of(sign);
  // Subnormal man x 2^-24 with its leading one at bit `top`: a normal fp32 of exponent top - 24.
  const int top = 31 - __builtin_clz(man);
  return float_of(sign | static_cast<std::uint32_t>(top - 24 + 127) << 23 | ((man << (23 - top)) & 0x7FFFFFu));
}

float bf16_to_float(std::uint16_t bits) { return float_of(static_cast<std::uint32_t>(bits) << 16); }

std::uint16_t float_to_half(float value) {
  return static_cast<std::uint16_t>(narrow(float_bits(value), kF32, kF16));
}
std::uint16_t double_to_half(double value) {
  return static_cast<std::uint16_t>(narrow(double_bits(value), kF64, kF16));
}
std::uint16_t float_to_bf16(float value) {
  return static_cast<std::uint16_t>(narrow(float_bits(value), kF32, kBf16));
}
std::uint16_t double_to_bf16(double value) {
  return static_cast<std::uint16_t>(narrow(double_bits(value), kF64, kBf16));
}
float double_to_float(double value) {
  return float_of(static_cast<std::uint32_t>(narrow(double_bits(value), kF64, kF32)));
}

// --- configuration ---

void ReduceConfig::validate(const std::string& prefix) const {
  const std::string& p = prefix;
  const int t = static_cast<int>(type), a = static_cast<int>(accumulate), o = static_cast<int>(order);
  if (t < 0 || t >= static_cast<int>(std::size(kElemTypes)))
    throw ConfigError(fmt::format("{}.type = {}: must be one of int8, uint8, int32, fp16, bf16, fp32", p, t));
  if (a < 0 || a >= static_cast<int>(std::size(kAccumWidths)))
    throw ConfigError(fmt::format("{}.accumulate = {}: must be 32 or 64 (bits)", p, a));
  if (o < 0 || o >= static_cast<int>(std::size(kReduceOrders)))
    throw ConfigError(fmt::format("{}.order = {}: must be arrival or member", p, o));
  if (slots < 1 || slots > kMaxSlots)
    throw ConfigError(fmt::format("{}.slots = {}: must be in [1, {}]", p, slots, kMaxSlots));
  const std::uint32_t size = elem_bytes(type);
  if (vector_bytes < size || vector_bytes > kMaxVectorBytes || vector_bytes % size != 0)
    throw ConfigError(fmt::format("{}.vector_bytes = {}: must be a whole number of {}-byte {} elements in [{}, {}]",
                                  p, vector_bytes, size, to_string(type), size, kMaxVectorBytes));
  if (lanes < 1 || lanes > kMaxLanes)
    throw ConfigError(fmt::format("{}.lanes = {}: must be in [1, {}] elements per cycle", p, lanes, kMaxLanes));
}

std::uint64_t ReduceConfig::slot_bytes(int group_size) const {
  if (order == ReduceOrder::kMember) return static_cast<std::uint64_t>(group_size) * vector_bytes;
  return std::uint64_t{vector_bytes} / elem_bytes(type) * (accumulate == AccumWidth::k64 ? 8 : 4);
}

// --- the table ---

struct ReduceTable::Kernel {
  std::uint32_t acc_bytes;  // accumulator bytes per element
  void (*init)(std::uint8_t* acc, const std::uint8_t* data, std::size_t elements);
  void (*add)(std::uint8_t* acc, const std::uint8_t* data, std::size_t elements);
  void (*finish)(const std::uint8_t* acc, std::uint8_t* out, std::size_t elements);
};

const ReduceTable::Kernel& ReduceTable::kernel_for(const ReduceConfig& config) {
  auto k = [](auto elem, auto acc) {
    using O = Ops<decltype(elem), decltype(acc)>;
    return Kernel{sizeof(typename O::Acc), &O::init, &O::add, &O::finish};
  };
  // Indexed by ElemType, then AccumWidth.
  static const Kernel kernels[6][2] = {
      {k(Int8{}, WrapAcc{}), k(Int8{}, SatAcc{})},
      {k(Uint8{}, WrapAcc{}), k(Uint8{}, SatAcc{})},
      {k(Int32{}, WrapAcc{}), k(Int32{}, SatAcc{})},
      {k(Fp16{}, FloatAcc<float>{}), k(Fp16{}, FloatAcc<double>{})},
      {k(Bf16{}, FloatAcc<float>{}), k(Bf16{}, FloatAcc<double>{})},
      {k(Fp32{}, FloatAcc<float>{}), k(Fp32{}, FloatAcc<double>{})},
  };
  return kernels[static_cast<int>(config.type)][static_cast<int>(config.accumulate)];
}

ReduceTable::ReduceTable(ReduceConfig config) : config_(std::move(config)) {
  config_.validate();
  kernel_ = &kernel_for(config_);
  elem_bytes_ = elem_bytes(config_.type);
  elem_shift_ = static_cast<std::uint32_t>(__builtin_ctz(elem_bytes_));
  std::size_t capacity = 2;
  while (capacity < 2 * static_cast<std::size_t>(config_.slots)) capacity *= 2;
  index_.assign(capacity, kNone);
  mask_ = capacity - 1;
  slots_.resize(config_.slots);
  for (int i = config_.slots - 1; i >= 0; --i) free_.push_back(i);
  done_.data.reserve(config_.vector_bytes);
}

void ReduceTable::add_group(std::uint32_t group, std::vector<std::uint32_t> members) {
  if (groups_.count(group) != 0)
    throw std::invalid_argument(fmt::format("reduce: group {} is already registered", group));
  if (members.empty()) throw std::invalid_argument(fmt::format("reduce: group {} has no members", group));
  if (members.size() > static_cast<std::size_t>(kMaxGroupSize))
    throw std::invalid_argument(
        fmt::format("reduce: group {} has {} members, more than {}", group, members.size(), kMaxGroupSize));
  Group g;
  for (std::size_t i = 0; i < members.size(); ++i) g.by_id.emplace_back(members[i], static_cast<int>(i));
  std::sort(g.by_id.begin(), g.by_id.end());
  const auto twice = std::adjacent_find(g.by_id.begin(), g.by_id.end(),
                                        [](const auto& a, const auto& b) { return a.first == b.first; });
  if (twice != g.by_id.end())
    throw std::invalid_argument(fmt::format("reduce: group {} lists member {} twice", group, twice->first));
  groups_.emplace(group, std::move(g));
}

const ReduceTable::Group& ReduceTable::group_of(std::uint32_t group) const {
  const auto it = groups_.find(group);
  if (it == groups_.end()) throw std::invalid_argument(fmt::format("reduce: unknown group {}", group));
  return it->second;
}

std::size_t ReduceTable::home(std::uint32_t group, std::uint64_t chunk) const {
  std::uint64_t h = chunk * 0x9E3779B97F4A7C15ull ^ (std::uint64_t{group} + 0x632BE59BD9B4E019ull);
  h ^= h >> 29;
  return static_cast<std::size_t>((h * 0xBF58476D1CE4E5B9ull) >> 32) & mask_;
}

std::size_t ReduceTable::find(std::uint32_t group, std::uint64_t chunk) const {
  std::size_t i = home(group, chunk);
  while (index_[i] != kNone) {
    const Slot& s = slots_[index_[i]];
    if (s.chunk == chunk && s.group == group) break;
    i = (i + 1) & mask_;
  }
  return i;
}

// Backward-shift deletion: each later entry of the probe run that may move up into the hole
// does, so every entry stays reachable from its home without tombstones.
void ReduceTable::unindex(std::size_t at) {
  std::size_t hole = at;
  for (std::size_t i = (hole + 1) & mask_; index_[i] != kNone; i = (i + 1) & mask_) {
    const Slot& s = slots_[index_[i]];
    // It may move when its home is not cyclically within (hole, i].
    if (((i - home(s.group, s.chunk)) & mask_) >= ((i - hole) & mask_)) {
      index_[hole] = index_[i];
      hole = i;
    }
  }
  index_[hole] = kNone;
}

bool ReduceTable::can_accept(std::uint32_t group, std::uint64_t chunk) const {
  if (index_[find(group, chunk)] != kNone) return true;
  group_of(group);
  return !free_.empty();
}

const ReduceTable::Completed* ReduceTable::contribute(std::uint32_t group, std::uint64_t chunk,
                                                      std::uint32_t member, const std::uint8_t* data,
                                                      std::uint32_t bytes) {
  const std::size_t at = find(group, chunk);
  const int found = index_[at];
  const Group& g = found != kNone ? *slots_[found].members : group_of(group);
  // Ids sorted and distinct: a member numbered like its place among them (members 0..n-1, the
  // usual numbering) is found without a search.
  const auto& ids = g.by_id;
  const auto m = member < ids.size() && ids[member].first == member
                     ? ids.begin() + member
                     : std::lower_bound(ids.begin(), ids.end(), std::make_pair(member, 0));
  if (m == ids.end() || m->first != member)
    throw std::invalid_argument(fmt::format("reduce: member {} is not in group {}", member, group));
  const int position = m->second;
  if (bytes == 0 || bytes > config_.vector_bytes || (bytes & (elem_bytes_ - 1)) != 0)
    throw std::invalid_argument(fmt::format(
        "reduce: member {} sent {} bytes to group {} chunk {}: must be a whole number of {}-byte {} elements "
        "in [{}, {}] (vector_bytes)",
        member, bytes, group, chunk, elem_bytes_, to_string(config_.type), elem_bytes_, config_.vector_bytes));
  if (data == nullptr)
    throw std::invalid_argument(
        fmt::format("reduce: member {} sent null data to group {} chunk {}", member, group, chunk));

  const std::size_t elements = bytes >> elem_shift_;  // not a division, which costs as much as the lookups
  const int group_size = static_cast<int>(ids.size());
  const bool by_member = config_.order == ReduceOrder::kMember;
  int index = found;
  if (index != kNone) {
    const Slot& s = slots_[index];
    if (s.got[position] != 0)
      throw std::invalid_argument(
          fmt::format("reduce: member {} contributed twice to group {} chunk {}", member, group, chunk));
    if (s.bytes != bytes)
      throw std::invalid_argument(fmt::format(
          "reduce: size mismatch: member {} sent {} bytes to group {} chunk {}, whose contributions are {} bytes",
          member, bytes, group, chunk, s.bytes));
  } else {
    if (free_.empty())
      throw std::logic_error(fmt::format(
          "reduce: no free slot for group {} chunk {} (all {} in use): check can_accept first", group, chunk,
          config_.slots));
    index = free_.back();
    free_.pop_back();
    Slot& s = slots_[index];
    s.group = group;
    s.chunk = chunk;
    s.members = &g;
    s.bytes = bytes;
    s.arrived = 0;
    s.got.assign(group_size, 0);
    s.store.resize(by_member ? static_cast<std::size_t>(group_size) * bytes : elements * kernel_->acc_bytes);
    index_[at] = index;
    peak_ = std::max(peak_, slots_in_use());
  }

  Slot& s = slots_[index];
  if (by_member)
    std::memcpy(s.store.data() + static_cast<std::size_t>(position) * bytes, data, bytes);
  else if (s.arrived == 0)
    kernel_->init(s.store.data(), data, elements);
  else
    kernel_->add(s.store.data(), data, elements);
  s.got[position] = 1;
  ++s.arrived;
  ++contributions_;
  if (s.arrived < group_size) return nullptr;

  done_.group = group;
  done_.chunk = chunk;
  done_.data.resize(bytes);
  if (by_member) {
    scratch_.resize(elements * kernel_->acc_bytes);
    kernel_->init(scratch_.data(), s.store.data(), elements);
    for (int i = 1; i < group_size; ++i)
      kernel_->add(scratch_.data(), s.store.data() + static_cast<std::size_t>(i) * bytes, elements);
    kernel_->finish(scratch_.data(), done_.data.data(), elements);
  } else {
    kernel_->finish(s.store.data(), done_.data.data(), elements);
  }
  unindex(at);
  free_.push_back(index);
  ++completions_;
  return &done_;
}

Cycle ReduceTable::cycles_for(std::uint32_t bytes) const {
  return beats(beats(bytes, elem_bytes_), static_cast<std::uint64_t>(config_.lanes));
}

}  // namespace xy::sw
