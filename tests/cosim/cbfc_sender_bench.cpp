// cbfc_sender_bench [cycles]: the CBFC sender's C++ core against its Verilated twin on the same
// stimulus, each replayed alone: simulated cycles per second of both and their ratio, and the
// peak memory of the process. The stimulus is recorded first (it depends on the model's state).
#include <verilated.h>

#include "Vxy_cbfc_sender.h"

#include <sys/resource.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include <fmt/format.h>

#include "hw/link/cbfc.hpp"
#include "xingyun/rng.hpp"

namespace {

struct Inputs {
  bool frame, cf;
  std::uint8_t vc, cf_vc;
  std::uint16_t bytes;
  std::uint32_t counter;
};

xy::link::CbfcConfig twin_config() {  // as in cbfc_sender_test.cpp and the -G arguments
  xy::link::CbfcConfig c;
  c.vcs = 4;
  c.overhead_bytes = 24;
  c.counter_bits = 8;
  c.buffer_credits = std::vector<std::uint32_t>(4, 96);
  c.resync_period_cycles = 1000;
  return c;
}

template <class F>
double seconds(F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  const std::uint64_t cycles = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 5'000'000;
  xy::Rng rng(1, "bench.cbfc");
  std::vector<Inputs> stim(cycles);
  {
    xy::link::CbfcSender model(twin_config());
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
    xy::link::CbfcSender model(twin_config());
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
    const auto edge = [&] {
      rtl.clk = 0;
      rtl.eval();
      rtl.clk = 1;
      rtl.eval();
    };
    rtl.rst = 1;
    edge();
    edge();
    rtl.rst = 0;
    for (std::uint64_t t = 0; t < cycles; ++t) {
      const Inputs& in = stim[t];
      rtl.frame_valid = in.frame;
      rtl.frame_vc = in.vc;
      rtl.frame_bytes = in.bytes;
      rtl.cf_valid = in.cf;
      rtl.cf_vc = in.cf_vc;
      rtl.cf_counter = in.counter;
      rtl.eval();
      rtl_sent += in.frame && rtl.can_send;
      edge();
    }
    rtl.final();
  });
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  fmt::print("cbfc sender, {} cycles, same stimulus\n", cycles);
  fmt::print("  C++ core        {:>14.0f} cycles/s  ({} frames sent)\n", cycles / model_s, model_sent);
  fmt::print("  Verilated RTL   {:>14.0f} cycles/s  ({} frames sent)\n", cycles / rtl_s, rtl_sent);
  fmt::print("  core / RTL      {:>14.2f}\n", rtl_s / model_s);
  fmt::print("  peak memory     {:>14.1f} MiB\n", usage.ru_maxrss / 1024.0);
  return model_sent == rtl_sent ? 0 : 1;
}
