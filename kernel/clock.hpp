// Core and Clock: the plain-C++ half of the simulation kernel (no SystemC here).
//
// A Core is a block's behaviour, stepped in two phases each cycle it is active: eval() reads
// the current state and inputs and computes the next state; commit() makes it current (the
// _reg/_next of RTL). A Clock ticks only the cores that are due: a core is due because it
// asked (wake_at), because a channel delivers to it, or because it is busy (set_busy: tick me
// every cycle until I say otherwise). Idle cycles cost nothing; the SystemC shell
// (ClockDomain) jumps over them.
//
// The cores due in a step are ticked in one fixed order, whatever woke them and when: by kind
// (in the order each kind was first attached), then in the order of attaching. So how a core is
// woken (the wheel or the far heap, once or twice) never changes a result, and consecutive due
// cores of one concrete type form one run, ticked by one loop that calls that type's
// eval/commit directly (inlined where visible) instead of a virtual call each. The due list is
// a bitmap by that order: a woken core sets its bit (a core due twice is one bit), busy cores
// keep theirs, and the commit loop clears the bit of a core that is no longer busy (the eval loop,
// for a kind with no commit).
//
// Results must not depend on that order. With XY_REVERSE_EVAL=1 in the environment every step
// evaluates its due cores last to first (commits keep their order): `tests/golden/check --reversed`
// runs the golden set so and names the runs whose results move.
#pragma once
#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstdint>
#include <functional>
#include <queue>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <vector>

#include "kernel/units.hpp"

namespace xy {

class Clock;
class Core;

// Wake-ups fewer than this many cycles ahead go to a bucket per cycle; later ones to a heap.
inline constexpr Cycle kWakeWheel = 1024;

// How a clock ticks cores of one concrete type: eval and commit are each one loop over due cores
// of that kind, `bits` of the due list's word `word`, calling T's directly.
struct CoreKind {
  void (*eval)(Clock& clock, std::size_t word, std::uint64_t bits);
  void (*commit)(Clock& clock, std::size_t word, std::uint64_t bits);
  bool commits;  // has a commit of its own; if not, eval lets go of the cores no longer busy
  // Steps cycle after cycle while these busy cores are the whole due list (see Clock::run).
  void (*run_busy)(Clock& clock, Cycle last, std::size_t word, std::uint64_t bits);
};

// A core that takes a channel's items by a rule it can apply late, all it would have taken by then
// whenever it runs (a PHY's TX takes frames one a cycle while it has room, and runs when a codeword
// group goes): the channel wakes it for none (Channel::take_late). Whenever its clock's domain
// stops running, the domain has it take what it would have by the edges it stepped, so that what
// it took is current whenever anything outside the domain looks (a testbench, the stats, another
// domain); and wakes the domain for the next one it would take.
class LateTaker {
 public:
  virtual void take_in(Cycle upto) = 0;  // every item it would have taken by cycle `upto`
  virtual Cycle next_take() const = 0;   // the cycle it would take the next one, or ~0
 protected:
  ~LateTaker() = default;
};

class Core {
 public:
  explicit Core(std::string name) : name_(std::move(name)) {}
  virtual ~Core() = default;
  Core(const Core&) = delete;
  Core& operator=(const Core&) = delete;

  virtual void eval() = 0;
  virtual void commit() {}

  // While busy, the core is ticked every cycle without being woken. Whether it stays due is
  // read after its commit, or its eval if it has no commit (a core says so for itself only).
  void set_busy(bool busy) { busy_ = busy; }
  bool busy() const { return busy_; }

  const std::string& name() const { return name_; }
  Clock& clock() const { return *clock_; }
  Cycle now() const;
  void wake_at(Cycle at);
  void wake_next();

 private:
  friend class Clock;
  std::string name_;
  Clock* clock_ = nullptr;
  const CoreKind* kind_ = nullptr;
  bool busy_ = false;
  // Its place in the order of ticks, and its bit in the due list and in the wheel's slots (until
  // the clock ranks its cores, its place in the order of attaching).
  std::uint32_t rank_ = 0;
  Cycle last_wake_ = ~Cycle{0};  // the last cycle a wake-up was queued for
  // The last far wake-up queued. A core re-arming a far timer on every tick (a CBFC update timer)
  // would otherwise push the same entry again each time, and its duplicates are never first.
  Cycle last_far_wake_ = ~Cycle{0};
};

class Clock {
 public:
  friend class Core;
  Clock(std::string name, Time period);
  Clock(const Clock&) = delete;
  Clock& operator=(const Clock&) = delete;

  // XY_REVERSE_EVAL=1: every step evaluates its due cores last to first (see above), and a
  // domain steps clocks with edges at the same time last to first.
  static inline const bool kReverseEval = [] {
    const char* v = std::getenv("XY_REVERSE_EVAL");
    return v && *v && *v != '0';
  }();

  const std::string& name() const { return name_; }
  Time period() const { return period_; }
  Cycle now() const { return now_; }
  Time time_of(Cycle c) const { return c * period_; }
  // First edge of this clock strictly after time t (an edge at t itself would race).
  Cycle first_edge_after(Time t) const { return t / period_ + 1; }

  // Attaches a core; when `T` is its dynamic type the clock calls T's eval/commit directly.
  template <class T>
  void attach(T& core) {
    static_assert(std::is_base_of_v<Core, T>, "attach a Core");
    if constexpr (std::is_abstract_v<T>)
      attach(core, &kKind<Core>);
    else
      attach(core, typeid(core) == typeid(T) ? &kKind<T> : &kKind<Core>);
  }
  // Ticks `core` at cycle `at`; `at` must be in the future once the clock has started.
  void wake(Core& core, Cycle at) {
    if (at <= now_ && (started_ || at < now_)) wake_in_past(core, at);
    if (core.last_wake_ == at) return;  // already due then
    core.last_wake_ = at;
    if (at - now_ < kWheel) {
      const std::size_t slot = at % kWheel;
      std::uint64_t& word = wheel_[slot * wheel_words_ + core.rank_ / 64];
      const std::uint64_t bit = std::uint64_t{1} << (core.rank_ % 64);
      word |= bit;
      std::uint64_t& occupied = occupied_[slot / 64];
      const std::uint64_t slot_bit = std::uint64_t{1} << (slot % 64);
      near_slots_ += !(occupied & slot_bit);
      occupied |= slot_bit;
    } else if (core.last_far_wake_ != at) {
      core.last_far_wake_ = at;
      far_.push({at, far_seq_++, &core});
    }
    if (!stepping_ && !shell_running_ && on_wake_) on_wake_(at);  // after a step the shell re-arms anyway
  }

  bool has_work() const { return listed_count_ || near_slots_ || !far_.empty(); }
  // Forgets every wake-up and busy core, and the memory they held: for a clock that never steps
  // again (ClockDomain::halt).
  void forget_wakeups();
  // Valid when has_work(). Busy cores are due every cycle; the wake-ups are searched otherwise.
  Cycle next_due() const { return listed_count_ ? now_ + 1 : first_wake(); }
  // Advances to cycle `due` (== next_due()) and ticks every due core: all evals, then all commits.
  // Inline, its rare parts out of line: a step of a few busy cores and no wake-up due (a
  // pipeline ticked every cycle) costs little more than their eval and commit.
  void step(Cycle due) {
    now_ = due;
    started_ = true;
    if (!ranked_) rank();
    // The due list still holds the cores that stayed busy after the previous step (due now); add
    // this cycle's bucket and the far wake-ups due now.
    if (wake_due(due)) list_woken(due % kWheel);
    core_ticks_ += listed_count_;
    // Wake-ups during the step go to the wheel, never to the due list.
    stepping_ = true;
    if (kReverseEval)
      eval_in_reverse();
    else
      tick(&CoreKind::eval);
    if (commits_) tick(&CoreKind::commit);
    stepping_ = false;
    ++steps_;
    if (!after_step_.empty()) call_after_step();
  }
  void step() { step(next_due()); }
  // Steps every cycle with work up to cycle `last`: the same ticks as step() after step(), but a
  // stretch in which only busy cores of one kind (within a word of the due list) are due, with no
  // hook after the steps, runs in one loop for that kind (a pipeline run on its own, e.g. against
  // its RTL twin).
  void run(Cycle last = ~Cycle{0}) {
    while (has_work() && next_due() <= last) {
      step(next_due());
      std::size_t word = 0;
      if (const Segment* alone = busy_alone(word)) alone->kind->run_busy(*this, last, word, listed_[word]);
    }
  }

  // Called for a wake requested outside step() and outside the shell's run, e.g. by a core of
  // another domain or a testbench (the shell re-arms its edge if the wake is earlier than the one
  // it waits for).
  void on_wake(std::function<void(Cycle)> f) { on_wake_ = std::move(f); }
  // While the shell steps this clock's domain it looks at every clock again after each step: a
  // wake-up then calls nothing (a core of one clock wakes one of another at most edges).
  void set_shell_running(bool running) { shell_running_ = running; }
  // Called after every step's commit phase with the step's time (waves sample here).
  void after_step(std::function<void(Time)> f) { after_step_.push_back(std::move(f)); }

  std::uint64_t steps() const { return steps_; }
  std::uint64_t core_ticks() const { return core_ticks_; }

  void attach_late(LateTaker& taker) { late_.push_back(&taker); }
  bool has_late() const { return !late_.empty(); }
  // Has its late takers take what they would have by its edges before time `before`; returns the
  // time of the edge at which one would take its next, or ~0.
  Time settle_late(Time before);

 private:
  static constexpr Cycle kWheel = kWakeWheel;
  struct Far {
    Cycle at;
    std::uint64_t seq;
    Core* core;
    bool operator>(const Far& o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };
  // One phase over the due list: each word's due cores kind by kind.
  void tick(void (*CoreKind::*phase)(Clock&, std::size_t, std::uint64_t)) {
    const Segment* segment = segments_.data();
    for (std::size_t w = 0, words = listed_.size(); w < words; ++w) {
      const std::uint64_t due = listed_[w];
      for (const Segment* end = segment + segments_in_word_[w]; segment != end; ++segment)
        if (const std::uint64_t bits = due & segment->mask) (segment->kind->*phase)(*this, w, bits);
    }
  }
  // A core's first lines, asked of memory while the core before it runs: a system of many ports
  // outgrows the cache, and each evaluation would otherwise begin with its core's misses. A core
  // whose state lies after it in a larger object (a PHY direction's TX and RX) says how many bytes
  // from its start an evaluation reads first: T::kHotBytes.
  template <class T, class = void>
  struct HotBytes : std::integral_constant<std::size_t, std::is_same_v<T, Core> ? 128 : sizeof(T)> {};
  template <class T>
  struct HotBytes<T, std::void_t<decltype(T::kHotBytes)>> : std::integral_constant<std::size_t, T::kHotBytes> {};
  template <class T>
  static void prefetch_next(Core* const* cores, std::uint64_t bits) {
    if (const std::uint64_t rest = bits & (bits - 1)) {
      const char* next = reinterpret_cast<const char*>(cores[__builtin_ctzll(rest)]);
      constexpr std::size_t kLines = std::min<std::size_t>(8, (HotBytes<T>::value + 63) / 64);
      for (std::size_t line = 0; line < kLines; ++line) __builtin_prefetch(next + 64 * line);
    }
  }
  // A type whose commit is Core's (nothing) has no commit phase: whether it stays busy is known
  // once it has evaluated (only a core itself says so).
  template <class T>
  static constexpr bool kCommits = std::is_same_v<T, Core> || !std::is_same_v<decltype(&T::commit), void (Core::*)()>;
  template <class T>
  static void eval_kind(Clock& clock, std::size_t word, std::uint64_t bits) {
    for (Core* const* cores = clock.by_rank_.data() + word * 64; bits; bits &= bits - 1) {
      const int bit = __builtin_ctzll(bits);
      Core* core = cores[bit];
      prefetch_next<T>(cores, bits);
      if constexpr (std::is_same_v<T, Core>)
        core->eval();  // a core of unknown type: the virtual call
      else
        static_cast<T*>(core)->T::eval();
      if constexpr (!kCommits<T>) clock.let_go_unless_busy(*core, word, bit);
    }
  }
  // Commits, and lets go of the cores that are not busy after their commit.
  template <class T>
  static void commit_kind(Clock& clock, std::size_t word, std::uint64_t bits) {
    if constexpr (kCommits<T>) {
      for (Core* const* cores = clock.by_rank_.data() + word * 64; bits; bits &= bits - 1) {
        const int bit = __builtin_ctzll(bits);
        Core* core = cores[bit];
        prefetch_next<T>(cores, bits);
        if constexpr (std::is_same_v<T, Core>)
          core->commit();
        else
          static_cast<T*>(core)->T::commit();
        clock.let_go_unless_busy(*core, word, bit);
      }
    }
  }
  void let_go_unless_busy(const Core& core, std::size_t word, int bit) {
    if (core.busy_) return;
    listed_[word] &= ~(std::uint64_t{1} << bit);
    --listed_count_;
  }
  template <class T>
  static void run_busy(Clock& clock, Cycle last, std::size_t word, std::uint64_t bits) {
    clock.stepping_ = true;
    const auto n = static_cast<std::uint64_t>(__builtin_popcountll(bits));
    for (Cycle due = clock.now_ + 1; due <= last && !clock.wake_due(due); ++due) {
      clock.now_ = due;
      eval_kind<T>(clock, word, bits);
      commit_kind<T>(clock, word, bits);
      clock.core_ticks_ += n;
      ++clock.steps_;
      if (clock.listed_[word] != bits) break;  // one stopped being busy
    }
    clock.stepping_ = false;
  }
  // Is a wake-up queued for cycle `due` (its wheel slot, or the far heap's first)?
  bool wake_due(Cycle due) const {
    const std::size_t slot = due % kWheel;
    return (occupied_[slot / 64] >> (slot % 64) & 1) || (!far_.empty() && far_.top().at == due);
  }
  template <class T>
  static inline const CoreKind kKind{&eval_kind<T>, &commit_kind<T>, kCommits<T>, &run_busy<T>};

  // The cores of one kind within a word of the due list.
  struct Segment {
    const CoreKind* kind;
    std::uint64_t mask;
  };
  void attach(Core& core, const CoreKind* kind);
  void rank();
  Cycle first_wake() const;
  void list(std::uint32_t rank) {
    std::uint64_t& word = listed_[rank / 64];
    const std::uint64_t bit = std::uint64_t{1} << (rank % 64);
    listed_count_ += !(word & bit);
    word |= bit;
  }
  void list_woken(std::size_t slot);
  // The segment holding every listed core, and its word, if one does and nothing else may
  // change a step (no after-step hook, no reversed evaluation); else null.
  const Segment* busy_alone(std::size_t& word) const;
  void eval_in_reverse();
  void call_after_step();
  int first_bucket_from(Cycle from) const;  // cycle offset of first non-empty bucket or -1
  [[noreturn]] void wake_in_past(const Core& core, Cycle at) const;

  std::string name_;
  Time period_;
  Cycle now_ = 0;
  bool started_ = false, stepping_ = false, shell_running_ = false;
  // The wheel: a slot per cycle ahead, each a bitmap by rank of the cores woken then, as the due
  // list is (a core woken twice for a cycle is one bit; listing a slot is an OR, word by word).
  std::vector<std::uint64_t> wheel_;
  std::size_t wheel_words_ = 0;  // per slot
  std::array<std::uint64_t, kWheel / 64> occupied_{};
  std::size_t near_slots_ = 0;  // slots with a wake-up queued
  std::priority_queue<Far, std::vector<Far>, std::greater<Far>> far_;
  std::uint64_t far_seq_ = 0;
  // The due list: a bit per core by rank. During a step the due cores; between steps the busy
  // ones, which stay due without being woken.
  std::vector<std::uint64_t> listed_;
  std::size_t listed_count_ = 0;
  std::vector<Core*> by_rank_;
  std::vector<Segment> segments_;           // word by word, in rank order
  std::vector<std::uint8_t> segments_in_word_;
  bool ranked_ = false;  // no core attached since rank()
  bool commits_ = false;  // a kind of its cores has a commit (else the commit phase is skipped)
  std::vector<Core*> cores_;
  std::vector<LateTaker*> late_;
  std::function<void(Cycle)> on_wake_;
  std::vector<std::function<void(Time)>> after_step_;
  std::uint64_t steps_ = 0, core_ticks_ = 0;
};

inline Cycle Core::now() const { return clock_->now(); }
inline void Core::wake_at(Cycle at) { clock_->wake(*this, at); }
inline void Core::wake_next() { clock_->wake(*this, clock_->now() + 1); }

}  // namespace xy
