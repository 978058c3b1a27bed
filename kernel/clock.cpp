#include "kernel/clock.hpp"

#include <stdexcept>

#include <fmt/format.h>

namespace xy {

Clock::Clock(std::string name, Time period) : name_(std::move(name)), period_(period) {
  if (period_ == 0) throw std::invalid_argument(name_ + ": clock period must be > 0 fs");
}

void Clock::attach(Core& core, const CoreKind* kind) {
  if (core.clock_) throw std::logic_error(core.name() + " is already attached to a clock");
  core.clock_ = this;
  core.kind_ = kind;
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

// The first cycle with a wake-up queued, when no core is busy.
Cycle Clock::first_wake() const {
  Cycle due = ~Cycle{0};
  if (near_count_) {
    const Cycle from = started_ ? now_ + 1 : now_;
    const int offset = first_bucket_from(from);
    if (offset >= 0) due = from + static_cast<Cycle>(offset);
  }
  if (!far_.empty() && far_.top().at < due) due = far_.top().at;
  return due;
}

// Lists the cores of the bucket of `slot` (this cycle's), then the far wake-ups due now.
void Clock::list_woken(std::size_t slot) {
  std::vector<Core*>& bucket = wheel_[slot];
  if (!bucket.empty()) {
    near_count_ -= bucket.size();
    for (Core* core : bucket) core->queued_[slot / 64] &= ~(std::uint64_t{1} << (slot % 64));
    list_due(bucket);
    occupied_[slot / 64] &= ~(std::uint64_t{1} << (slot % 64));
  }
  if (!far_.empty() && far_.top().at == now_) {
    std::vector<Core*>& woken = wheel_[slot];  // empty again: reused
    for (; !far_.empty() && far_.top().at == now_; far_.pop()) woken.push_back(far_.top().core);
    list_due(woken);
  }
}

// All evals, then all commits, one loop per run of cores of one kind.
void Clock::tick_runs(Clock& clock) {
  Core* const* const first = clock.active_.data();
  Core* const* p = first;
  if (kReverseEval)
    eval_run<Core>(first, first + clock.active_.size());
  else
    for (const Run& run : clock.runs_) {
      run.kind->eval(p, p + run.size);
      p += run.size;
    }
  p = first;
  for (const Run& run : clock.runs_) {
    run.kind->commit(p, p + run.size);
    p += run.size;
  }
}

void Clock::call_after_step() {
  for (auto& f : after_step_) f(time_of(now_));
}

// Appends the woken cores that are not listed yet to the due list, in order, extending its
// runs, and empties `woken`.
void Clock::list_due(std::vector<Core*>& woken) {
  bool idle = false;
  Run run = runs_.empty() ? Run{nullptr, 0} : runs_.back();  // the last run, grown here
  if (!runs_.empty()) runs_.pop_back();
  for (Core* core : woken) {
    if (core->listed_) continue;  // due already: busy, or woken twice
    core->listed_ = true;
    idle |= !core->busy_;
    active_.push_back(core);
    if (core->kind_ != run.kind) {
      if (run.size) runs_.push_back(run);
      run = {core->kind_, 0};
    }
    ++run.size;
  }
  if (run.size) runs_.push_back(run);
  runs_changed();
  woken.clear();
  if (idle) may_leave_ = true;
}

// Keeps the cores that stay busy, in order, as the next cycle's due list, and its runs.
void Clock::drop_idle() {
  may_leave_ = false;
  Core** const list = active_.data();
  std::size_t kept = 0;
  Run run{nullptr, 0};
  std::size_t runs = 0;  // runs_ rewritten in place: the kept cores form no more runs than all
  for (std::size_t i = 0, end = active_.size(); i < end; ++i) {
    Core* core = list[i];
    if (!core->busy_) {
      core->listed_ = false;
      continue;
    }
    list[kept++] = core;
    if (core->kind_ != run.kind) {
      if (run.size) runs_[runs++] = run;
      run = {core->kind_, 0};
    }
    ++run.size;
  }
  if (run.size) runs_[runs++] = run;
  active_.resize(kept);
  runs_.resize(runs);
  runs_changed();
}

void Clock::forget_wakeups() {
  for (Core* core : cores_) core->queued_ = {};
  for (auto& bucket : wheel_) std::vector<Core*>().swap(bucket);
  occupied_ = {};
  near_count_ = 0;
  decltype(far_)().swap(far_);
  std::vector<Core*>().swap(active_);
  std::vector<Run>().swap(runs_);
}

}  // namespace xy
