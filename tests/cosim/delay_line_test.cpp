// Co-simulation: the Verilog delay line (rtl/common/xy_util_delay_line.v, verilated --cc) runs
// beside the kernel's Channel of the same latency, on the same random stimulus, inside a Core
// that ClockDomain ticks, and the two are compared every cycle.
//
// Alignment. Kernel cycle t is RTL cycle t: the inputs driven in eval() at cycle t are sampled
// by rising edge t, which commit() evaluates. So when eval() runs at cycle t the RTL outputs
// are those left by edge t-1, i.e. an item driven at cycle t-DEPTH (DEPTH edges: t-DEPTH ..
// t-1), and the Channel offers exactly the item pushed at cycle t-DEPTH (push at t, poppable
// from t+latency). Hence the rule checked each cycle t, before edge t:
//     (m_tvalid, m_tdata) after edge t-1  ==  (can_pop(), pop()) at cycle t
// Comparing after edge t instead would need a channel of latency DEPTH-1.

// Verilator's headers come before SystemC's: seeing SYSTEMC_VERSION, verilated.h would take
// its --sc path (an unqualified sc_time_stamp()), which this --cc model was not built for.
#include <verilated.h>

#include "Vxy_util_delay_line.h"

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <systemc>

#include "rtl/twin.hpp"
#include "tests/cosim/mismatch_dump.hpp"
#include "kernel/channel.hpp"
#include "kernel/clock_domain.hpp"
#include "kernel/rng.hpp"

namespace xy {
namespace {

constexpr Cycle kDepth = XY_COSIM_DELAY_DEPTH;  // also passed to Verilator as -GDEPTH
constexpr Time kPeriod = kNs;

struct LockstepOptions {
  Cycle cycles = 100'000;
  Cycle model_latency = kDepth;  // the C++ side; differs from kDepth only to plant a bug
  std::uint64_t seed = 1;
  double valid_p = 0.85;        // chance of a valid beat outside idle stretches
  double idle_start_p = 0.001;  // chance per cycle that an idle stretch begins
  std::uint64_t idle_min = 8, idle_max = 200;  // stretches longer than DEPTH drain the pipe
  std::uint64_t corrupt_item = ~std::uint64_t{0};  // index of the pushed item the model gets wrong
  int corrupt_bit = 37;
};

class Lockstep : public Core {
 public:
  Lockstep(Clock& clock, const LockstepOptions& opt)
      : Core("lockstep"),
        opt_(opt),
        rng_(opt.seed, "cosim.stim"),
        channel_("cosim.delay", clock, ChannelSpec{opt.model_latency}),
        context_(std::make_unique<VerilatedContext>()),
        rtl_(std::make_unique<Vxy_util_delay_line>(context_.get(), "dut")) {
    // The channel is not connect()ed: this core is busy every cycle anyway, and a delivery
    // wake-up would tick it after the run ends.
    clock.attach(*this);
    reset();
    set_busy(true);  // ticked every cycle from 0 without further wake-ups
    wake_at(0);
  }
  ~Lockstep() override { rtl_->final(); }

  void eval() override {
    // The RTL advances one edge per tick, so a skipped cycle would silently misalign it.
    if (now() != cycles_done_) throw std::logic_error(fmt::format("lockstep skipped to cycle {}", now()));
    compare();
    drive();
  }
  void commit() override {
    edge();
    if (++cycles_done_ == opt_.cycles) set_busy(false);  // the run ends after this cycle
  }

  const Channel<std::uint64_t>& channel() const { return channel_; }
  Cycle cycles_done() const { return cycles_done_; }
  std::uint64_t compared() const { return compared_; }
  std::uint64_t rtl_valid_beats() const { return rtl_valid_beats_; }
  std::uint64_t idle_cycles() const { return idle_cycles_; }
  std::uint64_t mismatches() const { return log_.count(); }
  const Mismatch& first_mismatch() const { return log_.first(); }
  Cycle first_push_cycle() const { return first_push_cycle_; }
  Cycle corrupt_push_cycle() const { return corrupt_push_cycle_; }

 private:
  // Before kernel cycle 0: two edges with rst high leave every valid stage clear.
  void reset() { cosim::reset(*rtl_); }
  void edge() { cosim::clock_edge(*rtl_); }

  void compare() {
    const bool rtl_valid = rtl_->m_tvalid;
    const bool model_valid = channel_.can_pop();
    if (rtl_valid) ++rtl_valid_beats_;
    if (rtl_valid != model_valid) mismatch("m_tvalid", rtl_valid, model_valid);
    if (!model_valid) return;
    const std::uint64_t expected = channel_.pop();
    ++compared_;
    if (rtl_valid && rtl_->m_tdata != expected) mismatch("m_tdata", rtl_->m_tdata, expected);
  }

  void drive() {
    bool valid = false;
    if (idle_left_) {
      --idle_left_;
    } else if (rng_.chance(opt_.idle_start_p)) {
      idle_left_ = rng_.between(opt_.idle_min, opt_.idle_max) - 1;
    } else {
      valid = rng_.chance(opt_.valid_p);
    }
    // Data is random on idle cycles too: the RTL must not let it through as valid.
    const std::uint64_t data = rng_.next();
    rtl_->s_tvalid = valid;
    rtl_->s_tdata = data;
    if (!valid) {
      ++idle_cycles_;
      return;
    }
    if (channel_.pushed() == 0) first_push_cycle_ = now();
    std::uint64_t model = data;
    if (channel_.pushed() == opt_.corrupt_item) {
      model ^= std::uint64_t{1} << opt_.corrupt_bit;
      corrupt_push_cycle_ = now();
    }
    channel_.push(model);
  }

  void mismatch(const char* signal, std::uint64_t rtl, std::uint64_t model) { log_.check(now(), signal, rtl, model); }

  LockstepOptions opt_;
  Rng rng_;
  Channel<std::uint64_t> channel_;
  std::unique_ptr<VerilatedContext> context_;
  std::unique_ptr<Vxy_util_delay_line> rtl_;
  Cycle cycles_done_ = 0;
  std::uint64_t idle_left_ = 0;
  std::uint64_t compared_ = 0, rtl_valid_beats_ = 0, idle_cycles_ = 0;
  MismatchLog log_;
  Cycle first_push_cycle_ = 0, corrupt_push_cycle_ = 0;
};

// Runs the lockstep core to completion inside ClockDomain's SystemC process. The bound on
// simulated time only guards against a hang; the run ends when the core stops being busy.
void run(Lockstep& lockstep, Cycle cycles) {
  sc_core::sc_start(to_sc_time((cycles + 16) * kPeriod));
  ASSERT_EQ(lockstep.cycles_done(), cycles);
}

TEST(DelayLineCosim, MatchesChannelEveryCycle) {
  LockstepOptions opt;
  opt.seed = 20240601;
  ClockDomain domain("cosim_clk", kPeriod);
  Lockstep lockstep(domain.clock(), opt);
  run(lockstep, opt.cycles);

  const auto& ch = lockstep.channel();
  EXPECT_EQ(lockstep.mismatches(), 0u) << "first mismatch at " << lockstep.first_mismatch().text();
  EXPECT_EQ(lockstep.compared(), ch.pushed() - ch.in_flight());
  EXPECT_EQ(lockstep.rtl_valid_beats(), lockstep.compared());
  EXPECT_LE(ch.in_flight(), kDepth);
  // The stimulus must exercise both long bursts and idle stretches, or the check proves little.
  EXPECT_GE(lockstep.idle_cycles(), 2000u);
  EXPECT_GE(ch.pushed(), opt.cycles / 2);
  EXPECT_EQ(domain.clock().steps(), opt.cycles);
  RecordProperty("compared", std::to_string(lockstep.compared()));
  RecordProperty("idle_cycles", std::to_string(lockstep.idle_cycles()));
}

// A model one cycle slower than the RTL must be caught at the very first beat: the RTL shows
// valid DEPTH cycles after the first push, the model not yet.
TEST(DelayLineCosim, CatchesLatencyBug) {
  LockstepOptions opt;
  opt.seed = 7;
  opt.cycles = 20'000;
  opt.model_latency = kDepth + 1;
  ClockDomain domain("cosim_clk", kPeriod);
  Lockstep lockstep(domain.clock(), opt);
  run(lockstep, opt.cycles);

  ASSERT_GT(lockstep.mismatches(), 0u);
  const Mismatch& m = lockstep.first_mismatch();
  EXPECT_EQ(m.cycle, lockstep.first_push_cycle() + kDepth) << m.text();
  EXPECT_EQ(m.signal, "m_tvalid") << m.text();
  EXPECT_EQ(m.rtl, 1u);
  EXPECT_EQ(m.model, 0u);
}

// One flipped bit in one item of the model must be caught as exactly one data mismatch, at the
// cycle that item leaves the pipe, differing in exactly that bit.
TEST(DelayLineCosim, CatchesDataBug) {
  LockstepOptions opt;
  opt.seed = 11;
  opt.cycles = 20'000;
  opt.corrupt_item = 5'000;
  ClockDomain domain("cosim_clk", kPeriod);
  Lockstep lockstep(domain.clock(), opt);
  run(lockstep, opt.cycles);

  ASSERT_GT(lockstep.channel().pushed(), opt.corrupt_item);
  ASSERT_EQ(lockstep.mismatches(), 1u);
  const Mismatch& m = lockstep.first_mismatch();
  EXPECT_EQ(m.cycle, lockstep.corrupt_push_cycle() + kDepth) << m.text();
  EXPECT_EQ(m.signal, "m_tdata") << m.text();
  EXPECT_EQ(m.rtl ^ m.model, std::uint64_t{1} << opt.corrupt_bit) << m.text();
}

}  // namespace
}  // namespace xy
