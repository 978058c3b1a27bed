// Channel: a point-to-point link between two cores, the only way blocks pass data.
//
// Cycle contract: at most one item enters per source cycle; an item pushed at source cycle t
// can be popped from destination cycle t + latency (same clock), or, across clocks, from the
// destination edge that follows the write by `sync_stages` edges (an async FIFO with a
// synchroniser). With `credits` > 0 the channel is credit-flow-controlled: each pop returns a
// credit that the source sees `credit_latency` cycles later (across clocks: through the same
// synchroniser); valid/ready with a registered ready is credits = latency + 1, credit_latency 1.
// Results never depend on the order in which cores of one cycle are evaluated: nothing pushed
// or popped in cycle t is visible to the other side before cycle t + 1.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

#include "kernel/clock.hpp"
#include "kernel/ring.hpp"

namespace xy {

struct ChannelSpec {
  Cycle latency = 1;          // source cycles, same clock; >= 1
  std::uint32_t credits = 0;  // receive buffer in items; 0 = no back-pressure
  Cycle credit_latency = 1;   // source cycles from pop to credit visible; >= 1
  Cycle sync_stages = 2;      // destination edges of the synchroniser, crossings only; >= 1
};

template <class T>
class alignas(64) Channel {
 public:
  Channel(std::string name, Clock& src, Clock& dst, ChannelSpec spec)
      : src_(&src), dst_(&dst), spec_(spec), name_(std::move(name)) {
    if (spec.latency < 1) throw std::invalid_argument(name_ + ": latency must be >= 1 cycle");
    if (spec.credits && spec.credit_latency < 1)
      throw std::invalid_argument(name_ + ": credit_latency must be >= 1 cycle");
    if (&src != &dst && spec.sync_stages < 1)
      throw std::invalid_argument(name_ + ": sync_stages must be >= 1");
    const Cycle after = crossing() ? spec.sync_stages - 1 : spec.latency;
    if (after > kMaxCycles) throw std::invalid_argument(name_ + ": latency and sync_stages must be below 2^32");
    if (spec.credits >= kUnlimitedWatched) throw std::invalid_argument(name_ + ": credits must be below 2^32 - 2");
    ready_after_ = static_cast<std::uint32_t>(after);
    credits_ = spec.credits ? spec.credits : kUnlimited;
  }
  Channel(std::string name, Clock& clock, ChannelSpec spec) : Channel(std::move(name), clock, clock, spec) {}

  // Cores to wake: the consumer when an item arrives; the producer when a credit returns that it
  // found missing (a producer that did not ask has nothing waiting for it).
  void connect(Core* producer, Core* consumer) { producer_ = producer; consumer_ = consumer; }
  // A channel without credits: wakes `waiter` once, at its first edge after the next pop (a core
  // that keeps a limit of its own on the items in flight, and waits for room).
  void wake_on_pop(Core& waiter) {
    if (spec_.credits) throw std::logic_error(name_ + ": wake_on_pop with credits (a credit wakes the producer)");
    pop_waiter_ = &waiter;
    credits_ = kUnlimitedWatched;
  }

  // A consumer that takes late (LateTaker, on the source's clock): no item wakes it, and a
  // producer that finds no credit has it take what it would have by now first. Null: on time.
  void take_late(LateTaker* taker) {
    if (crossing() || !spec_.credits) throw std::logic_error(name_ + ": a late taker needs credits on one clock");
    late_ = taker;
  }

  // --- source side, at src.now() ---
  bool can_push() {
    if (pushed_at_ == src_->now()) return false;
    if (credits_ >= kUnlimitedWatched) return true;
    collect_credits();
    if (credits_ > 0) return true;
    if (late_) {
      late_->take_in(src_->now());
      collect_credits();
      if (credits_ > 0) return true;
    }
    wait_for_credit();
    return false;
  }
  void push(T item) {
    if (!can_push()) refuse("push without a free slot or credit");
    pushed_at_ = src_->now();
    if (credits_ < kUnlimitedWatched) --credits_;
    const Cycle ready = (crossing() ? dst_->first_edge_after(src_->time_of(src_->now())) : src_->now()) + ready_after_;
    items_.push({ready, std::move(item)});
    // No wake-up for a late taker (only a channel with credits has one: the test reads late_, on a
    // line of its own, only then).
    if (consumer_ && (credits_ >= kUnlimitedWatched || !late_)) consumer_->wake_at(ready);
  }
  std::uint32_t credits_available() {
    if (credits_ >= kUnlimitedWatched) return 0;
    collect_credits();
    return credits_;
  }

  // --- destination side, at dst.now() ---
  bool can_pop() const { return !items_.empty() && items_.front().ready <= dst_->now(); }
  const T& peek() const { return items_.front().item; }
  Cycle front_ready() const { return items_.front().ready; }  // the cycle it can be popped from
  T pop() { return pop_at(dst_->now()); }
  // Pops as if at destination cycle `at` (a late taker's, at or after the item was ready).
  T pop_at(Cycle at) {
    if (!ready_by(at)) refuse("pop with nothing ready");
    if (credits_ == kUnlimitedWatched) {
      wake_pop_waiter();
    } else if (credits_ != kUnlimited) {
      const Cycle back = crossing() ? src_->first_edge_after(dst_->time_of(at)) + spec_.sync_stages - 1
                                    : at + spec_.credit_latency;
      returning_.push(back);
      if (producer_waits_) {
        producer_waits_ = false;
        producer_->wake_at(back);
      }
    }
    return items_.pop().item;
  }
  // Will an item be ready by destination cycle `c`? (A consumer's busy() asks this.)
  bool ready_by(Cycle c) const { return !items_.empty() && items_.front().ready <= c; }

  std::size_t in_flight() const { return items_.size(); }
  std::uint64_t pushed() const { return items_.popped() + items_.size(); }
  std::uint64_t popped() const { return items_.popped(); }
  const std::string& name() const { return name_; }
  const ChannelSpec& spec() const { return spec_; }
  bool crossing() const { return src_ != dst_; }

 private:
  struct Slot { Cycle ready; T item; };
  static constexpr std::uint32_t kUnlimited = ~std::uint32_t{0};  // credits_ without back-pressure
  static constexpr std::uint32_t kUnlimitedWatched = kUnlimited - 1;  // the same, a core waiting for a pop
  static constexpr Cycle kMaxCycles = ~std::uint32_t{0};
  // The error path, out of line: a push or pop inlined into a core's eval stays small.
  [[noreturn, gnu::cold, gnu::noinline]] void refuse(const char* what) const {
    throw std::logic_error(name_ + ": " + what);
  }
  [[gnu::noinline]] void wake_pop_waiter() {
    credits_ = kUnlimited;
    Core* w = std::exchange(pop_waiter_, nullptr);
    w->wake_at(w->clock().first_edge_after(dst_->time_of(dst_->now())));
  }
  // The producer found no credit: woken when the next one is back.
  void wait_for_credit() {
    if (!producer_) return;
    if (!returning_.empty()) producer_->wake_at(returning_.front());
    else producer_waits_ = true;
  }
  void collect_credits() {
    while (!returning_.empty() && returning_.front() <= src_->now()) {
      returning_.pop();
      ++credits_;
    }
  }
  // What can_pop(), can_push(), push() and pop() read is the first cache line: the ring of items
  // (which counts the pops), the clocks, the consumer, the last push, the delay, the credits. The
  // rest is read when credits are on or rarely.
  Ring<Slot> items_;
  Clock* src_;
  Clock* dst_;
  Core* consumer_ = nullptr;
  Cycle pushed_at_ = ~Cycle{0};  // the source cycle of the last push (none yet: never a cycle)
  std::uint32_t ready_after_;    // cycles from the push (or the destination's edge after it) to ready
  std::uint32_t credits_;        // free slots at the destination, or kUnlimited(Watched)
  bool producer_waits_ = false;  // for a credit, none on its way back
  ChannelSpec spec_;
  Ring<Cycle> returning_;
  Core* producer_ = nullptr;
  Core* pop_waiter_ = nullptr;
  LateTaker* late_ = nullptr;
  std::string name_;
};

}  // namespace xy
