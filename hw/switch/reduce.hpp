// The in-network reduce engine of the Lingyun switch (SHARP-like aggregation), as a plain core
// (no SystemC): the switch shell feeds it the payloads of reduce packets and multicasts what it
// returns.
//
// Model. A reduction group is a list of members (ports or endpoints) registered with
// add_group(). Each member sends its contribution to a chunk of the reduction (a vector of up to
// vector_bytes of elements, little-endian); the table keys an aggregation slot by (group, chunk),
// takes one when the first contribution arrives and frees it when the last member's arrives,
// returning the reduced vector. There are `slots` slots: a chunk that needs a new one when none is
// free must wait (can_accept() is false) — back-pressure, never a drop.
//
// Arithmetic (sum), exact to the bit:
//  - floats (fp32, bf16, fp16): each element is converted exactly to fp32 and added in the
//    accumulator, fp32 or fp64 (`accumulate`), with IEEE round-to-nearest-even on every addition;
//    the result is rounded once, to nearest even, from the accumulator to the element type
//    (fp64 -> bf16/fp16 directly, never through fp32, so there is no double rounding). NaN and
//    infinities propagate as IEEE addition makes them; NaN payloads are kept by the conversions
//    (the fp32 -> fp64 widening of the fp64 accumulator quiets a signalling NaN, as IEEE does).
//  - integers (int8, uint8, int32): with a 32-bit accumulator, two's-complement arithmetic
//    modulo 2^32 and a final narrowing that keeps the low bits: the result is the sum modulo
//    2^width, as the element type's own wrapping addition gives it. With a 64-bit accumulator
//    the sum is exact (a group has at most kMaxGroupSize members, so int64 cannot overflow) and
//    the final narrowing saturates to the element type's range. Integer sums do not depend on
//    the order of arrival in either mode.
// Order of additions (`order`), which matters for floats only:
//  - arrival: the first contribution to arrive initialises the slot's accumulator and each later
//    one is added as it arrives. The slot holds one accumulator vector; the result may depend on
//    the order in which the members' packets reached the switch.
//  - member: each contribution is kept, and when the last arrives they are added in the order of
//    the group's member list. The result is the same bits whatever the arrival order, at every
//    run; the slot holds group_size contributions (ReduceConfig::slot_bytes).
// Additions use the host's IEEE binary32/binary64 addition (SSE on x86-64, or AArch64; never built
// with -ffast-math), so the bits are the same on every such host and run. A group of one
// completes on its single contribution, which still takes a slot for that moment.
// Every receiver gets the same returned bytes (the switch multicasts one result), so results are
// bit-identical at every receiver in either order.
//
// Cycle contract: every call takes effect at once. An ALU adds `lanes` elements per cycle, so a
// contribution of n elements occupies it cycles_for(bytes) = ceil(n / lanes) cycles; the clocked
// engine (reduce_engine.hpp) charges that time, and in member order group_size x
// cycles_for(bytes) at the last arrival, where the deferred additions happen. Exact: the arithmetic and its order, slot occupancy and
// back-pressure. Abstracted: the operation is always a sum (no min/max), the table lookup is
// associative (any free slot serves any key), and the packet format (only payload bytes).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kernel/units.hpp"

namespace xy::sw {

enum class ElemType { kInt8, kUint8, kInt32, kFp16, kBf16, kFp32 };
enum class AccumWidth { k32, k64 };  // fp32 / int32 (wrapping), or fp64 / int64 (saturating)
enum class ReduceOrder { kArrival, kMember };

// "int8", "uint8", "int32", "fp16", "bf16", "fp32"; "32", "64"; "arrival", "member".
const char* to_string(ElemType type);
const char* to_string(AccumWidth width);
const char* to_string(ReduceOrder order);
// Inverses of to_string; throw std::invalid_argument naming the text and the allowed names.
ElemType parse_elem_type(const std::string& text);
AccumWidth parse_accum_width(const std::string& text);
ReduceOrder parse_reduce_order(const std::string& text);

std::uint32_t elem_bytes(ElemType type);  // 1, 1, 4, 2, 2, 4

// Exact IEEE conversions on bit patterns, independent of the host's floating-point environment.
// Widening is exact; narrowing rounds to nearest, ties to even, overflows to infinity, rounds
// into subnormals and to signed zero; a NaN keeps its sign and the top bits of its payload
// (becoming the quiet NaN if none are left), so every fp16 and bf16 value, NaNs included,
// survives the round trip through fp32 unchanged.
std::uint32_t float_bits(float value);  // an fp32's bit pattern, and back
float float_of(std::uint32_t bits);
float half_to_float(std::uint16_t bits);
float bf16_to_float(std::uint16_t bits);
std::uint16_t float_to_half(float value);
std::uint16_t double_to_half(double value);
std::uint16_t float_to_bf16(float value);
std::uint16_t double_to_bf16(double value);
float double_to_float(double value);

struct ReduceConfig {
  ElemType type = ElemType::kFp32;
  AccumWidth accumulate = AccumWidth::k32;
  ReduceOrder order = ReduceOrder::kArrival;
  int slots = 64;                     // aggregation slots, 1..65536
  std::uint32_t vector_bytes = 4096;  // max payload per contribution, a whole number of elements, <= 1 MiB
  int lanes = 16;                     // elements added per cycle, 1..4096

  // Throws ConfigError naming `prefix`.field, the value and what is allowed.
  void validate(const std::string& prefix = "reduce") const;
  // Bytes of storage one slot needs for a group of `group_size` members: the accumulator
  // (vector elements x 4 or 8 bytes) in arrival order, group_size x vector_bytes in member order.
  std::uint64_t slot_bytes(int group_size) const;
};

class ReduceTable {
 public:
  static constexpr int kMaxGroupSize = 65536;

  struct Completed {
    std::uint32_t group = 0;
    std::uint64_t chunk = 0;
    std::vector<std::uint8_t> data;  // the reduced vector, as many bytes as each contribution
  };

  explicit ReduceTable(ReduceConfig config);  // validates

  // Registers a group; members are listed in the order `member` order adds them. Throws
  // std::invalid_argument for a group id already registered, no members, more than
  // kMaxGroupSize, or a member listed twice.
  void add_group(std::uint32_t group, std::vector<std::uint32_t> members);

  // Whether a contribution to (group, chunk) can be taken now: its slot exists, or one is free.
  // Throws std::invalid_argument for an unknown group.
  bool can_accept(std::uint32_t group, std::uint64_t chunk) const;
  // Whether (group, chunk) holds a slot now: it has contributions and is not complete.
  bool holds(std::uint32_t group, std::uint64_t chunk) const { return index_[find(group, chunk)] != kNone; }

  // Adds member `member`'s contribution of `bytes` bytes at `data` to (group, chunk). When it was
  // the last member's, frees the slot and returns the result, which the table holds until the
  // next call to contribute (copy what must outlive it); otherwise returns null. Throws
  // std::invalid_argument (changing nothing) for an unknown group or member, a member
  // contributing twice to a chunk, a size that is not a whole number of elements in
  // 1..vector_bytes or differs from the chunk's first contribution, or null data;
  // std::logic_error when the chunk needs a new slot and none is free (the caller must check
  // can_accept first). Allocates nothing once the slots' storage has grown to the sizes in use.
  const Completed* contribute(std::uint32_t group, std::uint64_t chunk, std::uint32_t member,
                              const std::uint8_t* data, std::uint32_t bytes);

  // ALU cycles one contribution of `bytes` occupies: ceil(elements / lanes).
  Cycle cycles_for(std::uint32_t bytes) const;

  int slots_in_use() const { return config_.slots - static_cast<int>(free_.size()); }
  int peak_slots() const { return peak_; }
  std::uint64_t contributions() const { return contributions_; }
  std::uint64_t completions() const { return completions_; }
  const ReduceConfig& config() const { return config_; }

 private:
  struct Group {
    std::vector<std::pair<std::uint32_t, int>> by_id;  // (member id, position in the list), sorted by id
  };
  struct Slot {
    std::uint32_t group = 0;
    std::uint64_t chunk = 0;
    const Group* members = nullptr;  // the group's, looked up once per chunk
    std::uint32_t bytes = 0;         // size of every contribution to this chunk
    int arrived = 0;
    std::vector<std::uint8_t> got;    // per member position: contributed yet
    std::vector<std::uint8_t> store;  // arrival: the accumulator; member: the contributions
  };

  // The element-wise add of one (element type, accumulator) pair.
  struct Kernel;
  static const Kernel& kernel_for(const ReduceConfig& config);
  const Group& group_of(std::uint32_t group) const;
  // The index_ position holding (group, chunk)'s slot, or the empty position where it would go.
  std::size_t find(std::uint32_t group, std::uint64_t chunk) const;
  std::size_t home(std::uint32_t group, std::uint64_t chunk) const;
  void unindex(std::size_t at);  // empties index_ position `at`

  ReduceConfig config_;
  const Kernel* kernel_;
  std::uint32_t elem_bytes_;  // 1, 2 or 4
  std::uint32_t elem_shift_;  // log2(elem_bytes_)
  std::unordered_map<std::uint32_t, Group> groups_;  // nodes: a slot's Group pointer stays valid
  // The active slots by (group, chunk): open addressing with linear probing, a power of two at
  // least twice `slots` (so a probe ends at an empty position soon), kNone where empty.
  static constexpr int kNone = -1;
  std::vector<int> index_;
  std::size_t mask_;
  std::vector<Slot> slots_;
  std::vector<int> free_;              // free slot indices
  std::vector<std::uint8_t> scratch_;  // member order: the accumulator at completion
  Completed done_;                     // the last result returned
  int peak_ = 0;
  std::uint64_t contributions_ = 0, completions_ = 0;
};

}  // namespace xy::sw
