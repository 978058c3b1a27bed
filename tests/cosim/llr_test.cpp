// Co-simulation: the LLR transmitter and receiver twins (rtl/link/xy_llr_tx.v, xy_llr_rx.v) beside
// xy::link::LlrTx and LlrRx on one seeded stimulus, compared every cycle: the state, buffer and
// counters the last edge left, and this cycle's answers (INIT, replay, can_accept and the new
// frame's number; the verdict on a frame, the ACK or NACK due) and next timer.
//
// The TX sees ACKs and NACKs that are plausible (covering part of what it keeps), stale or
// random, INITs (ignored), and idle stretches long enough for its replay timer, replay limit and
// data age to act; the RX sees frames in order, ahead (a gap), behind (duplicates), with bad FCS
// or random numbers, stretches in which the expected frame keeps being lost, and INITs, and is
// polled at random and at every cycle its next_timer() names. Sequence numbers are 8 bits, so
// both wrap thousands of times.
// A plain loop around the Verilated models (no SystemC kernel): cycle t drives `now` = t.
#include <verilated.h>  // before SystemC's headers (see delay_line_test.cpp)

#include "Vxy_llr_rx.h"
#include "Vxy_llr_rx_ack_slack.h"
#include "Vxy_llr_tx.h"
#include "Vxy_llr_tx_nack_uncounted.h"
#include "Vxy_llr_tx_replay_skip.h"

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hw/link/llr.hpp"
#include "rtl/twin.hpp"
#include "tests/cosim/mismatch_dump.hpp"
#include "tests/cosim/twin_configs.hpp"
#include "kernel/rng.hpp"

namespace xy {
namespace {

constexpr std::uint32_t kSeqMask = 0xFF;
constexpr std::uint64_t kNoTimer = 0xFFFFFFFF;  // ~0 in the twins' 32-bit time

std::uint64_t timer(Cycle t) { return t == ~Cycle{0} ? kNoTimer : t; }

// Stretches of cycles (idle ones, or ones where a frame keeps being lost), so that timers run out.
struct Stretch {
  std::uint64_t left = 0;
  bool next(Rng& rng, double start, std::uint64_t longest) {
    if (left) return --left, true;
    if (rng.chance(start)) return left = rng.between(20, longest), true;
    return false;
  }
};

struct TxResult {
  MismatchLog log;
  std::uint64_t accepted = 0, refused = 0, replayed = 0, timer_replays = 0, replays = 0, flushed = 0, inits = 0,
                ignored = 0;
  bool dump_complete = false;
};

template <class Rtl>
TxResult run_tx(std::uint64_t cycles, std::uint64_t seed) {
  link::LlrTx model(cosim::llr_twin_config());
  VerilatedContext context;
  Rtl rtl(&context, "dut");
  cosim::configure_llr_tx(rtl, cosim::llr_twin_config());
  Rng rng(seed, "cosim.llr_tx");
  TxResult r;
  MismatchDump dump({{"llr_tx.in.ctl_valid", 1}, {"llr_tx.in.ctl_kind", 2}, {"llr_tx.in.ctl_seq", 8},
                     {"llr_tx.in.replay_take", 1}, {"llr_tx.in.frame_valid", 1}, {"llr_tx.rtl.state", 2},
                     {"llr_tx.rtl.kept", 6}, {"llr_tx.rtl.replay_seq", 8}, {"llr_tx.rtl.can_accept", 1},
                     {"llr_tx.model.state", 2}, {"llr_tx.model.kept", 6}, {"llr_tx.model.replay_seq", 8},
                     {"llr_tx.model.can_accept", 1}});
  std::vector<Packet> frames(1024);  // the frames the model keeps, reused in turn
  std::uint32_t next_seq = 0;
  Stretch idle;
  for (Cycle t = 0; t < cycles; ++t) {
    const auto check = [&](const char* signal, std::uint64_t rtl_value, std::uint64_t model_value) {
      if (r.log.check(t, signal, rtl_value, model_value)) dump.mismatch(t);
    };
    // The state the last edge left.
    check("state", rtl.state, static_cast<std::uint64_t>(model.state()));
    check("kept", rtl.kept, model.kept());
    check("kept_bytes", rtl.kept_bytes, model.kept_bytes());
    check("replays", rtl.replays, model.replays());
    check("replayed_frames", rtl.replayed_frames, model.replayed_frames());
    check("flushed_frames", rtl.flushed_frames, model.flushed_frames());
    check("timer_replays", rtl.timer_replays, model.timer_replays());

    // This cycle's stimulus.
    const bool quiet = idle.next(rng, 0.004, 1500);
    const bool ctl = !quiet && rng.chance(0.15);
    const double kind_draw = rng.uniform();
    const auto kind = kind_draw < 0.6 ? link::LlrControl::kAck : kind_draw < 0.9 ? link::LlrControl::kNack
                                                                                 : link::LlrControl::kInit;
    const std::uint32_t base = (next_seq - static_cast<std::uint32_t>(model.kept())) & kSeqMask;
    const double seq_draw = rng.uniform();
    const std::uint32_t ctl_seq =
        (seq_draw < 0.85   ? base + static_cast<std::uint32_t>(rng.between(0, model.kept()))
         : seq_draw < 0.95 ? base - static_cast<std::uint32_t>(rng.between(1, 5))
                           : static_cast<std::uint32_t>(rng.below(256))) & kSeqMask;
    const bool init_take = !quiet && rng.chance(0.5);
    const bool replay_take = !quiet && rng.chance(0.7);
    const bool frame = !quiet && rng.chance(0.6);
    const auto bytes = static_cast<std::uint32_t>(rng.between(64, 1500));
    rtl.now = static_cast<std::uint32_t>(t);
    rtl.tick = 1;
    rtl.ctl_valid = ctl;
    rtl.ctl_kind = kind;
    rtl.ctl_seq = static_cast<std::uint8_t>(ctl_seq);
    rtl.init_take = init_take;
    rtl.replay_take = replay_take;
    rtl.frame_valid = frame;
    rtl.frame_bytes = static_cast<std::uint16_t>(bytes);
    rtl.eval();

    // The model, in the order the twin documents.
    if (ctl) {
      if (kind != link::LlrControl::kInit && ((ctl_seq - base) & kSeqMask) > model.kept()) ++r.ignored;
      model.on_control({kind, ctl_seq}, t);
    }
    model.tick(t);
    if (init_take) {
      const auto init = model.poll_control();
      check("init_valid", rtl.init_valid, init.has_value());
      if (init) {
        check("init_seq", rtl.init_seq, init->seq);
        ++r.inits;
      }
    }
    std::uint64_t model_replay_seq = 0;
    if (replay_take) {
      const auto replay = model.next_replay(t);
      check("replay_valid", rtl.replay_valid, replay.has_value());
      if (replay) {
        check("replay_seq", rtl.replay_seq, model_replay_seq = replay->second);
        ++r.replayed;
      }
    }
    bool can = false;
    if (frame) {
      can = model.can_accept(bytes);
      check("can_accept", rtl.can_accept, can);
      if (can) {
        const std::uint32_t seq = model.accept(&frames[r.accepted++ % frames.size()], bytes, t);
        check("frame_seq", rtl.frame_seq, seq);
        next_seq = (seq + 1) & kSeqMask;
      } else {
        ++r.refused;
      }
    }
    model.released().clear();
    check("next_timer", rtl.next_timer, timer(model.next_timer()));
    dump.record(t, {ctl, kind, ctl_seq, replay_take, frame, rtl.state, rtl.kept, rtl.replay_seq, rtl.can_accept,
                    static_cast<std::uint64_t>(model.state()), model.kept(), model_replay_seq, can});
    cosim::clock_edge(rtl);
  }
  rtl.final();
  r.timer_replays = model.timer_replays();
  r.replays = model.replays();
  r.flushed = model.flushed_frames();
  r.dump_complete = dump.complete();
  return r;
}

struct RxResult {
  MismatchLog log;
  std::uint64_t delivered = 0, duplicates = 0, out_of_order = 0, bad_fcs = 0, acks = 0, nacks = 0, inits = 0,
                nacks_again = 0;  // by the NACK timer
};

template <class Rtl>
RxResult run_rx(std::uint64_t cycles, std::uint64_t seed) {
  link::LlrRx model(cosim::llr_twin_config());
  VerilatedContext context;
  Rtl rtl(&context, "dut");
  cosim::configure_llr_rx(rtl, cosim::llr_twin_config());
  Rng rng(seed, "cosim.llr_rx");
  RxResult r;
  Stretch idle, gap;
  for (Cycle t = 0; t < cycles; ++t) {
    const auto check = [&](const char* signal, std::uint64_t rtl_value, std::uint64_t model_value) {
      r.log.check(t, signal, rtl_value, model_value);
    };
    check("state", rtl.state, static_cast<std::uint64_t>(model.state()));
    check("expected", rtl.expected, model.expected());
    check("nacks", rtl.nacks, model.nacks());

    const bool quiet = idle.next(rng, 0.004, 600);
    const bool lossy = gap.next(rng, 0.001, 600);  // the expected frame keeps being lost
    const bool frame = !quiet && rng.chance(0.5);
    const bool fcs_ok = rng.chance(0.95);
    const double seq_draw = lossy ? 0.75 : rng.uniform();
    const std::uint32_t seq = (seq_draw < 0.70   ? model.expected()
                               : seq_draw < 0.82 ? model.expected() + static_cast<std::uint32_t>(rng.between(1, 5))
                               : seq_draw < 0.94 ? model.expected() - static_cast<std::uint32_t>(rng.between(1, 5))
                                                 : static_cast<std::uint32_t>(rng.below(256))) & kSeqMask;
    const bool init = !quiet && rng.chance(0.003);
    const auto init_seq = static_cast<std::uint32_t>(rng.below(256));
    // The shell polls when it has room on the line, and when woken by the timer.
    const bool take = (!quiet && rng.chance(0.4)) || t == model.next_timer();
    rtl.now = static_cast<std::uint32_t>(t);
    rtl.frame_valid = frame;
    rtl.frame_seq = static_cast<std::uint8_t>(seq);
    rtl.frame_fcs_ok = fcs_ok;
    rtl.init_valid = init;
    rtl.init_seq = static_cast<std::uint8_t>(init_seq);
    rtl.ctl_take = take;
    rtl.eval();

    if (frame) {
      const auto verdict = model.on_frame(seq, fcs_ok, t);
      check("verdict", rtl.verdict, static_cast<std::uint64_t>(verdict));
      switch (verdict) {
        case link::LlrRx::Verdict::kDeliver: ++r.delivered; break;
        case link::LlrRx::Verdict::kDuplicate: ++r.duplicates; break;
        case link::LlrRx::Verdict::kOutOfOrder: ++r.out_of_order; break;
        case link::LlrRx::Verdict::kBadFcs: ++r.bad_fcs; break;
      }
    }
    if (init) {
      model.on_control({link::LlrControl::kInit, init_seq}, t);
      ++r.inits;
    }
    if (take) {
      const bool waiting = model.state() == link::LlrRxState::kNackSent;
      const auto c = model.poll(t);
      if (c && waiting && c->kind == link::LlrControl::kNack) ++r.nacks_again;
      check("ctl_valid", rtl.ctl_valid, c.has_value());
      if (c) {
        check("ctl_kind", rtl.ctl_kind, c->kind);
        check("ctl_seq", rtl.ctl_seq, c->seq);
        ++(c->kind == link::LlrControl::kAck ? r.acks : r.nacks);
      }
    }
    check("next_timer", rtl.next_timer, timer(model.next_timer()));
    cosim::clock_edge(rtl);
  }
  rtl.final();
  return r;
}

const std::uint64_t kCycles = std::getenv("XY_LONG") ? 10'000'000 : 200'000;

TEST(LlrCosim, TransmitterMatchesTheModelEveryCycleThroughReplaysTimersAndFlushes) {
  const TxResult r = run_tx<Vxy_llr_tx>(kCycles, 20261129);
  EXPECT_EQ(r.log.count(), 0u) << "first mismatch at " << r.log.first().text();
  // The stimulus must reach every path, or agreement proves little.
  EXPECT_GT(r.accepted, 20'000u);      // 8-bit numbers wrap hundreds of times
  EXPECT_GT(r.refused, 3'000u);        // window, buffer bytes, or not in ADVANCE
  EXPECT_GT(r.replays, 1'000u);        // NACKs and timer replays
  EXPECT_GT(r.timer_replays, 100u);
  EXPECT_GT(r.replayed, 3'000u);
  EXPECT_GT(r.flushed, 100u);          // replay limit or data age
  EXPECT_GT(r.inits, 10u);             // after each flush
  EXPECT_GT(r.ignored, 500u);          // stale or bogus ACKs and NACKs
  for (const auto& [key, value] : {std::pair{"accepted", r.accepted}, {"refused", r.refused}, {"replays", r.replays},
                                   {"timer_replays", r.timer_replays}, {"replayed", r.replayed}, {"flushed", r.flushed},
                                   {"inits", r.inits}, {"ignored", r.ignored}})
    RecordProperty(key, std::to_string(value));
}

TEST(LlrCosim, ReceiverMatchesTheModelEveryCycleThroughGapsDuplicatesAndNacks) {
  const RxResult r = run_rx<Vxy_llr_rx>(kCycles, 20261130);
  EXPECT_EQ(r.log.count(), 0u) << "first mismatch at " << r.log.first().text();
  EXPECT_GT(r.delivered, 10'000u);
  EXPECT_GT(r.duplicates, 1'000u);
  EXPECT_GT(r.out_of_order, 1'000u);
  EXPECT_GT(r.bad_fcs, 1'000u);
  EXPECT_GT(r.acks, 1'000u);
  EXPECT_GT(r.nacks, 1'000u);
  EXPECT_GT(r.inits, 100u);
  EXPECT_GT(r.nacks_again, 30u);
  for (const auto& [key, value] : {std::pair{"delivered", r.delivered}, {"duplicates", r.duplicates},
                                   {"out_of_order", r.out_of_order}, {"bad_fcs", r.bad_fcs}, {"acks", r.acks},
                                   {"nacks", r.nacks}, {"nacks_again", r.nacks_again}, {"inits", r.inits}})
    RecordProperty(key, std::to_string(value));
}

// A transmitter that replays from the frame after the one NACKed, and a receiver that ACKs a
// frame early, are caught, with the window around the first mismatch.
TEST(LlrCosim, CatchesATransmitterThatReplaysFromTheWrongFrame) {
  const TxResult r = run_tx<Vxy_llr_tx_replay_skip>(20'000, 7);
  ASSERT_GT(r.log.count(), 0u);
  EXPECT_TRUE(r.dump_complete);
  RecordProperty("first_mismatch", r.log.first().text());
}

// The defect of issue 12 planted back: NACK-started replays left out of the replay limit.
TEST(LlrCosim, CatchesATransmitterWhoseNackReplaysDoNotCountTowardTheLimit) {
  const TxResult r = run_tx<Vxy_llr_tx_nack_uncounted>(20'000, 7);
  ASSERT_GT(r.log.count(), 0u);
  EXPECT_TRUE(r.dump_complete);
  RecordProperty("first_mismatch", r.log.first().text());
}

TEST(LlrCosim, CatchesAReceiverThatAcksEarly) {
  const RxResult r = run_rx<Vxy_llr_rx_ack_slack>(20'000, 8);
  ASSERT_GT(r.log.count(), 0u);
  RecordProperty("first_mismatch", r.log.first().text());
}

}  // namespace
}  // namespace xy
