#include "kernel/clock.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

namespace xy {

Clock::Clock(std::string name, Time period) : name_(std::move(name)), period_(period) {
  if (period_ == 0) throw std::invalid_argument(name_ + ": clock period must be > 0 fs");
}

void Clock::attach(Core& core, const CoreKind* kind) {
  if (core.clock_) throw std::logic_error(core.name() + " is already attached to a clock");
  core.clock_ = this;
  core.kind_ = kind;
  core.rank_ = static_cast<std::uint32_t>(cores_.size());  // last, until ranked
  cores_.push_back(&core);
  ranked_ = false;
  if (cores_.size() > wheel_words_ * 64) {  // a word more per slot, the slots' bits kept
    std::vector<std::uint64_t> wider(kWheel * (wheel_words_ + 1), 0);
    for (std::size_t slot = 0; slot < kWheel; ++slot)
      std::copy_n(wheel_.begin() + static_cast<std::ptrdiff_t>(slot * wheel_words_), wheel_words_,
                  wider.begin() + static_cast<std::ptrdiff_t>(slot * (wheel_words_ + 1)));
    wheel_.swap(wider);
    ++wheel_words_;
  }
}

// The order of ticks: by kind, kinds in the order they were first attached, then by attaching.
// Run before the first step, and again if a core was attached since.
void Clock::rank() {
  std::vector<Core*> listed;
  for (std::uint32_t r = 0; r < by_rank_.size(); ++r)
    if (listed_[r / 64] >> (r % 64) & 1) listed.push_back(by_rank_[r]);
  std::vector<const CoreKind*> kinds;
  for (Core* core : cores_)
    if (std::find(kinds.begin(), kinds.end(), core->kind_) == kinds.end()) kinds.push_back(core->kind_);
  std::vector<std::uint32_t> ranked(wheel_words_ * 64, 0);  // new rank by old
  std::vector<std::uint32_t> old;
  for (Core* core : cores_) old.push_back(core->rank_);
  by_rank_.clear();
  commits_ = std::any_of(kinds.begin(), kinds.end(), [](const CoreKind* kind) { return kind->commits; });
  for (const CoreKind* kind : kinds)
    for (Core* core : cores_)
      if (core->kind_ == kind) {
        core->rank_ = static_cast<std::uint32_t>(by_rank_.size());
        by_rank_.push_back(core);
      }
  for (std::size_t i = 0; i < cores_.size(); ++i) ranked[old[i]] = cores_[i]->rank_;
  // The wake-ups queued move with their cores.
  std::vector<std::uint64_t> wheel(wheel_.size(), 0);
  for (std::size_t at = 0; at < wheel_.size(); ++at)
    for (std::uint64_t bits = wheel_[at]; bits; bits &= bits - 1) {
      const std::uint32_t r = ranked[at % wheel_words_ * 64 + static_cast<std::size_t>(__builtin_ctzll(bits))];
      wheel[at - at % wheel_words_ + r / 64] |= std::uint64_t{1} << (r % 64);
    }
  wheel_.swap(wheel);
  by_rank_.resize((by_rank_.size() + 63) / 64 * 64, nullptr);  // whole words
  listed_.assign(by_rank_.size() / 64, 0);
  segments_.clear();
  segments_in_word_.assign(listed_.size(), 0);
  for (std::size_t r = 0; r < cores_.size(); ++r) {
    const std::uint64_t bit = std::uint64_t{1} << (r % 64);
    if (r % 64 == 0 || by_rank_[r]->kind_ != segments_.back().kind) {
      segments_.push_back({by_rank_[r]->kind_, 0});
      ++segments_in_word_[r / 64];
    }
    segments_.back().mask |= bit;
  }
  listed_count_ = 0;
  for (Core* core : listed) list(core->rank_);
  ranked_ = true;
}

void Clock::wake_in_past(const Core& core, Cycle at) const {
  throw std::logic_error(fmt::format("{}: wake of {} at cycle {} is not in the future (now {})", name_, core.name(), at,
                                     now_));
}

int Clock::first_bucket_from(Cycle from) const {
  // Scan the occupancy bitmap circularly from slot `from % kWheel`.
  const std::size_t start = from % kWheel;
  for (std::size_t scanned = 0; scanned < kWheel;) {
    const std::size_t slot = (start + scanned) % kWheel;
    const std::uint64_t word = occupied_[slot / 64] >> (slot % 64);
    if (word) return static_cast<int>(scanned + __builtin_ctzll(word));
    scanned += 64 - slot % 64;
  }
  return -1;
}

// The first cycle with a wake-up queued, when no core is busy.
Cycle Clock::first_wake() const {
  Cycle due = ~Cycle{0};
  if (near_slots_) {
    const Cycle from = started_ ? now_ + 1 : now_;
    const int offset = first_bucket_from(from);
    if (offset >= 0) due = from + static_cast<Cycle>(offset);
  }
  if (!far_.empty() && far_.top().at < due) due = far_.top().at;
  return due;
}

// Lists the cores of the bucket of `slot` (this cycle's), then the far wake-ups due now.
void Clock::list_woken(std::size_t slot) {
  std::uint64_t* bucket = wheel_.data() + slot * wheel_words_;
  for (std::size_t w = 0; w < wheel_words_; ++w)
    if (const std::uint64_t bits = std::exchange(bucket[w], 0)) {
      listed_count_ += static_cast<std::size_t>(__builtin_popcountll(bits & ~listed_[w]));
      listed_[w] |= bits;
    }
  std::uint64_t& occupied = occupied_[slot / 64];
  const std::uint64_t slot_bit = std::uint64_t{1} << (slot % 64);
  near_slots_ -= (occupied & slot_bit) != 0;
  occupied &= ~slot_bit;
  for (; !far_.empty() && far_.top().at == now_; far_.pop()) list(far_.top().core->rank_);
}

const Clock::Segment* Clock::busy_alone(std::size_t& word) const {
  if (!listed_count_ || !after_step_.empty() || kReverseEval) return nullptr;
  const Segment* segment = segments_.data();
  const Segment* found = nullptr;
  for (std::size_t w = 0; w < listed_.size(); segment += segments_in_word_[w++]) {
    if (!listed_[w]) continue;
    if (found) return nullptr;  // a second word
    for (const Segment* s = segment; s != segment + segments_in_word_[w]; ++s)
      if (listed_[w] & s->mask) {
        if (found || (listed_[w] & ~s->mask)) return nullptr;
        found = s;
      }
    word = w;
  }
  return found;
}

// Every due core's eval, last to first (XY_REVERSE_EVAL).
void Clock::eval_in_reverse() {
  for (std::size_t w = listed_.size(); w-- > 0;)
    for (std::uint64_t bits = listed_[w]; bits; bits &= ~(std::uint64_t{1} << (63 - __builtin_clzll(bits)))) {
      const int bit = 63 - __builtin_clzll(bits);
      Core* core = by_rank_[w * 64 + static_cast<std::size_t>(bit)];
      core->eval();
      if (!core->kind_->commits) let_go_unless_busy(*core, w, bit);
    }
}

void Clock::call_after_step() {
  for (auto& f : after_step_) f(time_of(now_));
}

Time Clock::settle_late(Time before) {
  Time next = ~Time{0};
  for (LateTaker* t : late_) {
    if (before > 0) t->take_in((before - 1) / period_);
    if (const Cycle c = t->next_take(); c != ~Cycle{0}) next = std::min(next, time_of(c));
  }
  return next;
}

void Clock::forget_wakeups() {
  std::fill(wheel_.begin(), wheel_.end(), 0);
  occupied_ = {};
  near_slots_ = 0;
  decltype(far_)().swap(far_);
  listed_.assign(listed_.size(), 0);
  listed_count_ = 0;
}

}  // namespace xy
