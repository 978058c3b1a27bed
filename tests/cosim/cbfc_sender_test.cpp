// Co-simulation: the CBFC sender twin (rtl/link/xy_cbfc_sender.v, verilated --cc) beside
// xy::link::CbfcSender on one seeded stimulus — frames of random size on random VCs, CF_Updates
// that are plausible, stale or bogus, idle stretches — compared every cycle: can_send, whether a
// CF_Update is accepted, whether a CC_Update is due, and one VC's counters.
//
// Alignment: at kernel cycle t the inputs are driven and the combinational outputs read before
// rising edge t (evaluated in commit()); the probed counters are those left by edge t-1, which
// is the model's state before cycle t's calls.
#include <verilated.h>  // before SystemC's headers (see delay_line_test.cpp)

#include "Vxy_cbfc_sender.h"
#include "Vxy_cbfc_sender_overhead_bug.h"

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <systemc>

#include "hw/link/cbfc.hpp"
#include "tests/cosim/mismatch_dump.hpp"
#include "tests/cosim/twin_configs.hpp"
#include "rtl/twin.hpp"
#include "kernel/clock_domain.hpp"
#include "kernel/rng.hpp"

namespace xy {
namespace {

constexpr Time kPeriod = kNs;

template <class Rtl>
class Lockstep : public Core {
 public:
  Lockstep(Clock& clock, Cycle cycles, std::uint64_t seed)
      : Core("lockstep"), cycles_(cycles), rng_(seed, "cosim.cbfc"), model_(cosim::cbfc_twin_config()),
        context_(std::make_unique<VerilatedContext>()), rtl_(std::make_unique<Rtl>(context_.get(), "dut")) {
    clock.attach(*this);
    cosim::configure_cbfc_sender(*rtl_, model_.config());
    set_busy(true);
    wake_at(0);
  }
  ~Lockstep() override { rtl_->final(); }

  void eval() override {
    if (now() != done_) throw std::logic_error(fmt::format("lockstep skipped to cycle {}", now()));
    const int vcs = model_.config().vcs;
    // The counters left by the last edge.
    const int probe = static_cast<int>(rng_.below(vcs));
    rtl_->now = static_cast<std::uint32_t>(now());
    rtl_->probe_vc = probe;
    rtl_->eval();
    const std::uint32_t model_consumed = model_.consumed(probe), model_freed = model_.freed(probe);
    check("probe_consumed", rtl_->probe_consumed, model_consumed);
    check("probe_freed", rtl_->probe_freed, model_freed);

    // This cycle's stimulus: idle stretches, frames, and CF_Updates of three kinds.
    bool frame = false, cf = false;
    if (idle_left_) {
      --idle_left_;
    } else if (rng_.chance(0.002)) {
      idle_left_ = rng_.between(10, 300);
    } else {
      frame = rng_.chance(0.7);
      cf = rng_.chance(0.3);
    }
    const int vc = static_cast<int>(rng_.below(vcs));
    const auto bytes = static_cast<std::uint32_t>(rng_.between(1, 4096));
    const int cf_vc = static_cast<int>(rng_.below(vcs));
    std::uint32_t counter = 0;
    const std::uint32_t mask = model_.config().counter_mask();
    const double kind = rng_.uniform();
    if (kind < 0.8)  // the receiver frees part of what is in use
      counter = (model_.freed(cf_vc) + static_cast<std::uint32_t>(rng_.between(0, model_.in_use(cf_vc)))) & mask;
    else if (kind < 0.9)  // a stale (older) counter
      counter = (model_.freed(cf_vc) - static_cast<std::uint32_t>(rng_.between(1, 20))) & mask;
    else  // anything
      counter = static_cast<std::uint32_t>(rng_.below(mask + 1));
    rtl_->frame_valid = frame;
    rtl_->frame_vc = vc;
    rtl_->frame_bytes = bytes;
    rtl_->cf_valid = cf;
    rtl_->cf_vc = cf_vc;
    rtl_->cf_counter = counter;
    rtl_->eval();

    // The model, in the order the RTL documents: CF_Update, frame, CC timer.
    const bool accepted = cf && model_.on_cf_update(cf_vc, counter);
    const bool can = model_.can_send(vc, bytes);
    if (frame && can) {
      model_.on_send(vc, bytes);
      ++frames_;
    }
    const bool due = model_.poll(now()).has_value();
    rtl_->cc_taken = rtl_->cc_due;  // the CC_Update goes when due, as the model's poll() sends it
    if (cf) check("cf_accepted", rtl_->cf_accepted, accepted);
    check("can_send", rtl_->can_send, can);
    check("cc_due", rtl_->cc_due, due);
    dump_.record(now(), {frame, static_cast<std::uint64_t>(vc), bytes, cf, static_cast<std::uint64_t>(cf_vc), counter,
                         static_cast<std::uint64_t>(probe), rtl_->can_send, rtl_->cf_accepted, rtl_->cc_due,
                         rtl_->probe_consumed, rtl_->probe_freed, can, accepted, due, model_consumed, model_freed});
    if (accepted) ++accepted_;
    if (cf && !accepted) ++rejected_;
    if (frame && !can) ++blocked_;
    if (due) ++cc_updates_;
  }
  void commit() override {
    cosim::clock_edge(*rtl_);
    if (++done_ == cycles_) set_busy(false);
  }

  Cycle done() const { return done_; }
  const MismatchDump& dump() const { return dump_; }
  std::uint64_t mismatches() const { return log_.count(); }
  const Mismatch& first() const { return log_.first(); }
  std::uint64_t frames() const { return frames_; }
  std::uint64_t blocked() const { return blocked_; }
  std::uint64_t accepted() const { return accepted_; }
  std::uint64_t rejected() const { return rejected_; }
  std::uint64_t cc_updates() const { return cc_updates_; }

 private:
  void check(const char* signal, std::uint64_t rtl, std::uint64_t model) {
    if (log_.check(now(), signal, rtl, model)) dump_.mismatch(now());
  }

  Cycle cycles_, done_ = 0;
  Rng rng_;
  link::CbfcSender model_;
  std::unique_ptr<VerilatedContext> context_;
  std::unique_ptr<Rtl> rtl_;
  std::uint64_t idle_left_ = 0;
  std::uint64_t frames_ = 0, blocked_ = 0, accepted_ = 0, rejected_ = 0, cc_updates_ = 0;
  MismatchLog log_;
  MismatchDump dump_{{{"cbfc.in.frame_valid", 1}, {"cbfc.in.frame_vc", 2}, {"cbfc.in.frame_bytes", 14},
                      {"cbfc.in.cf_valid", 1}, {"cbfc.in.cf_vc", 2}, {"cbfc.in.cf_counter", 8}, {"cbfc.in.probe_vc", 2},
                      {"cbfc.rtl.can_send", 1}, {"cbfc.rtl.cf_accepted", 1}, {"cbfc.rtl.cc_due", 1},
                      {"cbfc.rtl.probe_consumed", 8}, {"cbfc.rtl.probe_freed", 8},
                      {"cbfc.model.can_send", 1}, {"cbfc.model.cf_accepted", 1}, {"cbfc.model.cc_due", 1},
                      {"cbfc.model.probe_consumed", 8}, {"cbfc.model.probe_freed", 8}}};
};

template <class Rtl>
void run(Lockstep<Rtl>& lockstep, Cycle cycles) {
  sc_core::sc_start(to_sc_time((cycles + 16) * kPeriod));
  ASSERT_EQ(lockstep.done(), cycles);
}

// XY_LONG=1 runs 10^7 cycles instead of 2·10^5.
TEST(CbfcSenderCosim, MatchesTheModelEveryCycleWithWrapsStaleUpdatesAndBackPressure) {
  const Cycle kCycles = std::getenv("XY_LONG") ? 10'000'000 : 200'000;
  ClockDomain domain("cosim_clk", kPeriod);
  Lockstep<Vxy_cbfc_sender> lockstep(domain.clock(), kCycles, 20261129);
  run(lockstep, kCycles);
  EXPECT_EQ(lockstep.mismatches(), 0u) << "first mismatch at " << lockstep.first().text();
  // The stimulus must reach the interesting cases, or agreement proves little.
  EXPECT_GT(lockstep.frames(), 10'000u);   // ~ 40 wraps of an 8-bit counter per VC at least
  EXPECT_GT(lockstep.blocked(), 10'000u);  // back-pressure: frames refused for want of credits
  EXPECT_GT(lockstep.rejected(), 1'000u);  // stale and bogus CF_Updates
  EXPECT_EQ(lockstep.cc_updates(), kCycles / 1000 - 1);  // at cycles 1000, 2000, …, 199000
  RecordProperty("frames", std::to_string(lockstep.frames()));
  RecordProperty("blocked", std::to_string(lockstep.blocked()));
  RecordProperty("rejected", std::to_string(lockstep.rejected()));
}

// A twin built with the wrong per-frame overhead (25 bytes, the model's 24) must be caught: the
// first frame whose size crosses a credit boundary differently.
TEST(CbfcSenderCosim, CatchesATwinWithTheWrongOverhead) {
  constexpr Cycle kCycles = 20'000;
  ClockDomain domain("cosim_clk", kPeriod);
  Lockstep<Vxy_cbfc_sender_overhead_bug> lockstep(domain.clock(), kCycles, 7);
  run(lockstep, kCycles);
  ASSERT_GT(lockstep.mismatches(), 0u);
  const std::string s = lockstep.first().signal;
  EXPECT_TRUE(s == "can_send" || s == "probe_consumed") << lockstep.first().text();
  // The window around it, RTL and model side by side, for gtkwave.
  ASSERT_TRUE(lockstep.dump().complete());
  // XY_MISMATCH_DIR keeps it for gtkwave_test.sh, which opens it in gtkwave.
  const char* dir = std::getenv("XY_MISMATCH_DIR");
  const std::string fst = (dir ? std::string(dir) + "/" : ::testing::TempDir()) + "cbfc_mismatch.fst";
  lockstep.dump().write(fst, kPeriod);
  std::ifstream dump(fst, std::ios::binary | std::ios::ate);
  EXPECT_GT(static_cast<long>(dump.tellg()), 0);
  std::ifstream gtkw(fst.substr(0, fst.size() - 4) + ".gtkw");
  const std::string save((std::istreambuf_iterator<char>(gtkw)), std::istreambuf_iterator<char>());
  EXPECT_NE(save.find("cbfc.rtl.can_send"), std::string::npos) << save;
  EXPECT_NE(save.find("cbfc.model.can_send"), std::string::npos) << save;
}

}  // namespace
}  // namespace xy
