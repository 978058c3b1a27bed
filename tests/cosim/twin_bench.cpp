// twin_bench [cycles]: each C++ core against its Verilated twin on the same stimulus, each
// replayed alone: simulated cycles per second of both and their ratio, and the peak memory of the
// process. Exits 1 if a pair disagrees.
#include <verilated.h>

#include "Vxy_cbfc_sender.h"
#include "Vxy_util_delay_line.h"
#include "Vxy_llr_rx.h"
#include "Vxy_llr_tx.h"
#include "Vxy_otn_scrambler.h"
#include "Vxy_reduce_bf16.h"
#include "Vxy_reduce_fp32.h"
#include "Vxy_reduce_int32.h"
#include "Vxy_rs_encoder_rs272.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "hw/link/cbfc.hpp"
#include "hw/link/llr.hpp"
#include "hw/otn/otu4.hpp"
#include "hw/phy/reed_solomon.hpp"
#include "hw/switch/reduce.hpp"
#include "rtl/twin.hpp"
#include "tests/cosim/twin_configs.hpp"
#include "kernel/channel.hpp"
#include "kernel/clock.hpp"
#include "kernel/rng.hpp"

namespace {

struct Inputs {
  bool frame, cf;
  std::uint8_t vc, cf_vc;
  std::uint16_t bytes;
  std::uint32_t counter;
};

template <class F>
double seconds(F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

// The delay line against a Channel of its latency: a beat on 70 % of cycles, random data on all.
bool delay_line(std::uint64_t cycles) {
  constexpr xy::Cycle kDepth = XY_BENCH_DELAY_DEPTH;
  struct Pipe : xy::Core {
    Pipe(xy::Clock& clock, std::uint64_t n)
        : Core("pipe"), channel("bench.delay", clock, xy::ChannelSpec{kDepth}), rng(6, "bench.delay"), cycles(n) {
      clock.attach(*this);
      set_busy(true);
      wake_at(0);
    }
    void eval() override {
      if (channel.can_pop()) sum += channel.pop();
      const bool valid = rng.chance(0.7);
      const std::uint64_t data = rng.next();
      if (valid) channel.push(data);
    }
    void commit() override {
      if (++done == cycles) set_busy(false);
    }
    xy::Channel<std::uint64_t> channel;
    xy::Rng rng;
    std::uint64_t cycles, done = 0, sum = 0;
  };
  std::uint64_t model_sum = 0, rtl_sum = 0;
  const double model_s = seconds([&] {
    xy::Clock clock("bench", xy::kNs);
    Pipe pipe(clock, cycles);
    clock.run();
    model_sum = pipe.sum;
  });
  const double rtl_s = seconds([&] {
    VerilatedContext context;
    Vxy_util_delay_line rtl(&context, "dut");
    xy::cosim::reset(rtl);
    xy::Rng rng(6, "bench.delay");
    for (std::uint64_t t = 0; t < cycles; ++t) {
      if (rtl.m_tvalid) rtl_sum += rtl.m_tdata;
      rtl.s_tvalid = rng.chance(0.7);
      rtl.s_tdata = rng.next();
      xy::cosim::clock_edge(rtl);
    }
    rtl.final();
  });
  fmt::print("  {:<14} {:>14.0f} {:>14.0f} {:>10.2f}   (a Channel of latency {}; same sum of data out)\n",
             "delay line", cycles / model_s, cycles / rtl_s, rtl_s / model_s, kDepth);
  return model_sum == rtl_sum;
}

// The CBFC sender; the stimulus is recorded first, as its CF_Updates depend on the model's state.
bool cbfc_sender(std::uint64_t cycles) {
  xy::Rng rng(1, "bench.cbfc");
  std::vector<Inputs> stim(cycles);
  {
    xy::link::CbfcSender model(xy::cosim::cbfc_twin_config());
    const std::uint32_t mask = model.config().counter_mask();
    for (std::uint64_t t = 0; t < cycles; ++t) {
      Inputs& in = stim[t];
      in.frame = rng.chance(0.7);
      in.cf = rng.chance(0.3);
      in.vc = static_cast<std::uint8_t>(rng.below(4));
      in.cf_vc = static_cast<std::uint8_t>(rng.below(4));
      in.bytes = static_cast<std::uint16_t>(rng.between(1, 4096));
      in.counter = (model.freed(in.cf_vc) + static_cast<std::uint32_t>(rng.between(0, model.in_use(in.cf_vc)))) & mask;
      if (in.cf) model.on_cf_update(in.cf_vc, in.counter);
      if (in.frame && model.can_send(in.vc, in.bytes)) model.on_send(in.vc, in.bytes);
      model.poll(t);
    }
  }
  std::uint64_t model_sent = 0, rtl_sent = 0;
  const double model_s = seconds([&] {
    xy::link::CbfcSender model(xy::cosim::cbfc_twin_config());
    for (std::uint64_t t = 0; t < cycles; ++t) {
      const Inputs& in = stim[t];
      if (in.cf) model.on_cf_update(in.cf_vc, in.counter);
      if (in.frame && model.can_send(in.vc, in.bytes)) {
        model.on_send(in.vc, in.bytes);
        ++model_sent;
      }
      model.poll(t);
    }
  });
  const double rtl_s = seconds([&] {
    VerilatedContext context;
    Vxy_cbfc_sender rtl(&context, "dut");
    xy::cosim::configure_cbfc_sender(rtl, xy::cosim::cbfc_twin_config());
    for (std::uint64_t t = 0; t < cycles; ++t) {
      const Inputs& in = stim[t];
      rtl.frame_valid = in.frame;
      rtl.frame_vc = in.vc;
      rtl.frame_bytes = in.bytes;
      rtl.cf_valid = in.cf;
      rtl.cf_vc = in.cf_vc;
      rtl.cf_counter = in.counter;
      rtl.now = static_cast<std::uint32_t>(t);
      rtl.eval();
      rtl_sent += in.frame && rtl.can_send;
      rtl.cc_taken = rtl.cc_due;
      xy::cosim::clock_edge(rtl);
    }
    rtl.final();
  });
  fmt::print("  {:<14} {:>14.0f} {:>14.0f} {:>10.2f}   ({} frames sent by each)\n", "cbfc sender", cycles / model_s,
             cycles / rtl_s, rtl_s / model_s, model_sent);
  return model_sent == rtl_sent;
}

// The RS(272) encoder: one symbol a cycle in the RTL; the codec encodes whole codewords.
bool rs_encoder(std::uint64_t cycles) {
  const xy::phy::ReedSolomon rs(xy::phy::rs272());
  const int k = rs.k(), n = rs.n();
  const std::uint64_t words = std::max<std::uint64_t>(1, cycles / k);
  xy::Rng rng(2, "bench.rs");
  std::vector<std::uint16_t> messages(words * k);
  for (auto& m : messages) m = static_cast<std::uint16_t>(rng.below(1024));
  std::uint64_t model_check = 0, rtl_check = 0;
  const double model_s = seconds([&] {
    std::vector<std::uint16_t> word(n);
    for (std::uint64_t w = 0; w < words; ++w) {
      std::copy(&messages[w * k], &messages[w * k] + k, word.begin());
      rs.encode(word.data());
      model_check += word[k];  // the first parity symbol
    }
  });
  const double rtl_s = seconds([&] {
    VerilatedContext context;
    Vxy_rs_encoder_rs272 rtl(&context, "dut");
    xy::cosim::reset(rtl, 1);
    rtl.in_valid = 1;
    for (std::uint64_t w = 0; w < words; ++w) {
      for (int i = 0; i < k; ++i) {
        rtl.in_first = i == 0;
        rtl.in_symbol = messages[w * k + i];
        xy::cosim::clock_edge(rtl);
      }
      rtl_check += xy::cosim::bits_of(rtl.parity, 10 * (n - k - 1), 10);  // the first parity symbol
    }
    rtl.final();
  });
  const double symbols = static_cast<double>(words * k);
  fmt::print("  {:<14} {:>14.0f} {:>14.0f} {:>10.2f}   ({} codewords, symbols/s: one a cycle)\n", "rs272 encoder",
             symbols / model_s, symbols / rtl_s, rtl_s / model_s, words);
  return model_check == rtl_check;
}

// The OTU4 scrambler: a byte a cycle in the RTL; the core adds its keystream to a whole frame.
bool otn_scrambler(std::uint64_t cycles) {
  const std::uint64_t frames = std::max<std::uint64_t>(1, cycles / xy::otn::kFrameBytes);
  xy::Rng rng(3, "bench.otn");
  std::vector<xy::otn::Frame> in(frames);
  for (auto& f : in)
    for (auto& b : f) b = static_cast<std::uint8_t>(rng.below(256));
  std::uint64_t model_check = 0, rtl_check = 0;
  const double model_s = seconds([&] {
    for (xy::otn::Frame f : in) {
      xy::otn::scramble(f);
      for (const std::uint8_t b : f) model_check += b;
    }
  });
  const double rtl_s = seconds([&] {
    VerilatedContext context;
    Vxy_otn_scrambler rtl(&context, "dut");
    xy::cosim::reset(rtl, 1);
    rtl.in_valid = 1;
    for (const xy::otn::Frame& f : in)
      for (std::size_t i = 0; i < f.size(); ++i) {
        rtl.in_first = i == 0;
        rtl.in_data = f[i];
        xy::cosim::clock_edge(rtl);
        rtl_check += rtl.out_data;
      }
    rtl.final();
  });
  const double bytes = static_cast<double>(frames * xy::otn::kFrameBytes);
  fmt::print("  {:<14} {:>14.0f} {:>14.0f} {:>10.2f}   ({} frames, bytes/s: one a cycle)\n", "otn scrambler",
             bytes / model_s, bytes / rtl_s, rtl_s / model_s, frames);
  return model_check == rtl_check;
}

// The LLR transmitter and receiver; the stimuli are recorded first, as the sequence numbers in
// them depend on the models' state.
struct LlrTxInputs {
  bool ctl, init_take, replay_take, frame;
  xy::link::LlrControl::Kind kind;
  std::uint8_t seq;
  std::uint16_t bytes;
};
struct LlrRxInputs {
  bool frame, fcs_ok, take;
  std::uint8_t seq;
};

bool llr(std::uint64_t cycles) {
  using xy::link::LlrControl;
  const xy::link::LlrConfig config = xy::cosim::llr_twin_config();
  xy::Rng rng(4, "bench.llr");
  std::vector<LlrTxInputs> tx(cycles);
  std::vector<LlrRxInputs> rx(cycles);
  std::vector<xy::Packet> frames(1024);
  {
    xy::link::LlrTx tx_model(config);
    xy::link::LlrRx rx_model(config);
    std::uint32_t next_seq = 0;
    for (std::uint64_t t = 0; t < cycles; ++t) {
      LlrTxInputs& in = tx[t];
      in = {rng.chance(0.15), rng.chance(0.5), rng.chance(0.7), rng.chance(0.6),
            rng.chance(0.6) ? LlrControl::kAck : LlrControl::kNack,
            static_cast<std::uint8_t>(next_seq - tx_model.kept() + rng.between(0, tx_model.kept())),
            static_cast<std::uint16_t>(rng.between(64, 1500))};
      if (in.ctl) tx_model.on_control({in.kind, in.seq}, t);
      tx_model.tick(t);
      if (in.init_take) tx_model.poll_control();
      if (in.replay_take) tx_model.next_replay(t);
      if (in.frame && tx_model.can_accept(in.bytes))
        next_seq = tx_model.accept(&frames[t % frames.size()], in.bytes, t) + 1;
      tx_model.released().clear();
      LlrRxInputs& r = rx[t];
      r = {rng.chance(0.5), rng.chance(0.95), rng.chance(0.4),
           static_cast<std::uint8_t>(rx_model.expected() + (rng.chance(0.8) ? 0 : rng.between(1, 5)))};
      if (r.frame) rx_model.on_frame(r.seq, r.fcs_ok, t);
      if (r.take) rx_model.poll(t);
    }
  }
  std::uint64_t model_check = 0, rtl_check = 0;  // frames accepted, replayed and delivered
  const double model_s = seconds([&] {
    xy::link::LlrTx tx_model(config);
    xy::link::LlrRx rx_model(config);
    for (std::uint64_t t = 0; t < cycles; ++t) {
      const LlrTxInputs& in = tx[t];
      if (in.ctl) tx_model.on_control({in.kind, in.seq}, t);
      tx_model.tick(t);
      if (in.init_take) tx_model.poll_control();
      if (in.replay_take) model_check += tx_model.next_replay(t).has_value();
      if (in.frame && tx_model.can_accept(in.bytes)) {
        tx_model.accept(&frames[t % frames.size()], in.bytes, t);
        ++model_check;
      }
      tx_model.released().clear();
      const LlrRxInputs& r = rx[t];
      if (r.frame) model_check += rx_model.on_frame(r.seq, r.fcs_ok, t) == xy::link::LlrRx::Verdict::kDeliver;
      if (r.take) rx_model.poll(t);
    }
  });
  const double rtl_s = seconds([&] {
    VerilatedContext context;
    Vxy_llr_tx tx_rtl(&context, "tx");
    Vxy_llr_rx rx_rtl(&context, "rx");
    xy::cosim::configure_llr_tx(tx_rtl, config);
    xy::cosim::configure_llr_rx(rx_rtl, config);
    for (std::uint64_t t = 0; t < cycles; ++t) {
      const LlrTxInputs& in = tx[t];
      tx_rtl.now = rx_rtl.now = static_cast<std::uint32_t>(t);
      tx_rtl.tick = 1;
      tx_rtl.ctl_valid = in.ctl;
      tx_rtl.ctl_kind = in.kind;
      tx_rtl.ctl_seq = in.seq;
      tx_rtl.init_take = in.init_take;
      tx_rtl.replay_take = in.replay_take;
      tx_rtl.frame_valid = in.frame;
      tx_rtl.frame_bytes = in.bytes;
      tx_rtl.eval();
      rtl_check += (in.replay_take && tx_rtl.replay_valid) + (in.frame && tx_rtl.can_accept);
      xy::cosim::clock_edge(tx_rtl);
      const LlrRxInputs& r = rx[t];
      rx_rtl.frame_valid = r.frame;
      rx_rtl.frame_seq = r.seq;
      rx_rtl.frame_fcs_ok = r.fcs_ok;
      rx_rtl.ctl_take = r.take;
      rx_rtl.eval();
      rtl_check += r.frame && rx_rtl.verdict == 0;
      xy::cosim::clock_edge(rx_rtl);
    }
    tx_rtl.final();
    rx_rtl.final();
  });
  fmt::print("  {:<14} {:>14.0f} {:>14.0f} {:>10.2f}   ({} frames accepted, replayed or delivered)\n", "llr tx + rx",
             cycles / model_s, cycles / rtl_s, rtl_s / model_s, model_check);
  return model_check == rtl_check;
}

// A reduce lane group: groups of 4 members, one 16-element beat each per cycle. Float elements
// are on one scale (sums round, none is NaN, whose payload is the implementation's).
template <class Rtl>
bool reduce_lanes(std::uint64_t cycles, xy::sw::ElemType type) {
  constexpr int kLanes = 16, kMembers = 4;
  xy::sw::ReduceConfig config;
  config.type = type;
  config.vector_bytes = xy::sw::elem_bytes(type) * kLanes;
  config.lanes = kLanes;
  xy::Rng rng(3, "bench.reduce");
  constexpr std::uint64_t kPool = 1 << 16;  // random beats, reused in turn
  const std::uint32_t bytes = config.vector_bytes, ebytes = xy::sw::elem_bytes(type);
  std::vector<std::uint8_t> beats(kPool * bytes);
  if (type == xy::sw::ElemType::kInt32) rng.fill(beats.data(), beats.size());
  else
    for (std::size_t i = 0; i < beats.size(); i += ebytes) {
      const auto v = static_cast<std::uint32_t>(rng.below(2) << 31 | rng.between(120, 134) << 23 | rng.below(1 << 23));
      std::memcpy(&beats[i], reinterpret_cast<const std::uint8_t*>(&v) + 4 - ebytes, ebytes);
    }
  const auto beat = [&](std::uint64_t t) { return &beats[(t % kPool) * bytes]; };
  std::uint64_t model_check = 0, rtl_check = 0;
  const double model_s = seconds([&] {
    xy::sw::ReduceTable table(config);
    table.add_group(0, {0, 1, 2, 3});
    for (std::uint64_t t = 0; t < cycles; ++t) {
      const auto done = table.contribute(0, t / kMembers, static_cast<std::uint32_t>(t % kMembers), beat(t), bytes);
      if (done) model_check += done->data[0];
    }
  });
  const double rtl_s = seconds([&] {
    VerilatedContext context;
    Rtl rtl(&context, "dut");
    xy::cosim::reset(rtl);
    rtl.in_valid = 1;
    for (std::uint64_t t = 0; t < cycles; ++t) {
      rtl.in_first = t % kMembers == 0;
      for (std::uint32_t w = 0; w < bytes / 4; ++w) std::memcpy(&rtl.in_data[w], beat(t) + 4 * w, 4);
      xy::cosim::clock_edge(rtl);
      if (t % kMembers == kMembers - 1) rtl_check += rtl.out[0] & 0xff;
    }
    rtl.final();
  });
  const std::string label = fmt::format("reduce {}", xy::sw::to_string(type));
  fmt::print("  {:<14} {:>14.0f} {:>14.0f} {:>10.2f}   ({} sums of 4 x 16 {})\n", label, cycles / model_s,
             cycles / rtl_s, rtl_s / model_s, cycles / kMembers, xy::sw::to_string(type));
  return model_check == rtl_check;
}

int main(int argc, char** argv) {
  const std::pair<const char*, bool (*)(std::uint64_t)> twins[] = {
      {"delay", delay_line},
      {"cbfc", cbfc_sender},
      {"llr", llr},
      {"rs272", rs_encoder},
      {"otn", otn_scrambler},
      {"int32", [](std::uint64_t n) { return reduce_lanes<Vxy_reduce_int32>(n, xy::sw::ElemType::kInt32); }},
      {"fp32", [](std::uint64_t n) { return reduce_lanes<Vxy_reduce_fp32>(n, xy::sw::ElemType::kFp32); }},
      {"bf16", [](std::uint64_t n) { return reduce_lanes<Vxy_reduce_bf16>(n, xy::sw::ElemType::kBf16); }}};
  char* end = nullptr;
  const std::uint64_t cycles = argc > 1 ? std::strtoull(argv[1], &end, 10) : 5'000'000;
  const std::string only = argc > 2 ? argv[2] : "";  // one twin alone, e.g. to profile it
  const bool known = only.empty() || std::any_of(std::begin(twins), std::end(twins), [&](auto& t) { return only == t.first; });
  if (argc > 3 || cycles == 0 || (end && *end) || !known) {
    fmt::print(stderr, "usage: twin_bench [CYCLES > 0] [delay|cbfc|llr|rs272|otn|int32|fp32|bf16]\n");
    return 2;
  }
  fmt::print("RTL twins against their C++ cores, {} cycles each, same stimulus\n", cycles);
  fmt::print("  {:<14} {:>14} {:>14} {:>10}\n", "twin", "core cycles/s", "RTL cycles/s", "core/RTL");
  bool ok = true;
  for (const auto& [name, run] : twins)
    if (only.empty() || only == name) ok &= run(cycles);
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  fmt::print("  peak memory {:.1f} MiB\n", usage.ru_maxrss / 1024.0);
  return ok ? 0 : 1;
}
