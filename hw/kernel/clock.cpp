#include "xingyun/clock.hpp"

#include <stdexcept>

#include <fmt/format.h>

namespace xy {

Clock::Clock(std::string name, Time period) : name_(std::move(name)), period_(period) {
  if (period_ == 0) throw std::invalid_argument(name_ + ": clock period must be > 0 fs");
}

void Clock::attach(Core& core) {
  if (core.clock_) throw std::logic_error(core.name() + " is already attached to a clock");
  core.clock_ = this;
  cores_.push_back(&core);
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

Cycle Clock::next_due() const {
  if (!active_.empty()) return now_ + 1;  // busy cores
  Cycle due = ~Cycle{0};
  if (near_count_) {
    const Cycle from = started_ ? now_ + 1 : now_;
    const int offset = first_bucket_from(from);
    if (offset >= 0) due = from + static_cast<Cycle>(offset);
  }
  if (!far_.empty() && far_.top().at < due) due = far_.top().at;
  return due;
}

void Clock::step(Cycle due) {
  now_ = due;
  started_ = true;

  // active_ still holds the cores that stayed busy after the previous step (due now); add this
  // cycle's bucket (a swap when there are none, which keeps both vectors' capacity) and the far
  // wake-ups due now.
  const std::size_t slot = now_ % kWheel;
  std::vector<Core*>& bucket = wheel_[slot];
  near_count_ -= bucket.size();
  if (active_.empty()) {
    active_.swap(bucket);
  } else {
    active_.insert(active_.end(), bucket.begin(), bucket.end());
    bucket.clear();
  }
  occupied_[slot / 64] &= ~(std::uint64_t{1} << (slot % 64));
  while (!far_.empty() && far_.top().at == now_) {
    active_.push_back(far_.top().core);
    far_.pop();
  }

  stepping_ = true;
  // Eval phase. A core due for several reasons stands more than once in active_: tick it once.
  std::size_t n = 0;
  for (Core* core : active_)
    if (core->last_tick_ != now_) {
      core->last_tick_ = now_;
      active_[n++] = core;
      core->eval();
    }
  core_ticks_ += n;
  // Commit phase; the cores that stay busy remain in active_ for the next cycle.
  std::size_t busy = 0;
  for (std::size_t i = 0; i < n; ++i) {
    Core* core = active_[i];
    core->commit();
    if (core->busy_) active_[busy++] = core;
  }
  active_.resize(busy);
  stepping_ = false;
  ++steps_;
  for (auto& f : after_step_) f(time_of(now_));
}

}  // namespace xy
