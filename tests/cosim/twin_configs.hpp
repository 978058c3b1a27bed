// The configurations the lockstep tests and twin_bench run the link twins with, and the loading
// of their configuration registers. The RTL's structure (widths, VCs, slots) comes through -G in
// tests/cosim/CMakeLists.txt and must agree with these.
#pragma once
#include <cstdint>
#include <vector>

#include "hw/link/cbfc.hpp"
#include "hw/link/llr.hpp"
#include "rtl/twin.hpp"

namespace xy::cosim {

inline link::CbfcConfig cbfc_twin_config() {
  link::CbfcConfig c;
  c.vcs = 4;
  c.credit_bytes = 128;
  c.overhead_bytes = 24;
  c.counter_bits = 8;  // wraps every 256 credits: thousands of wraps per run
  c.buffer_credits = std::vector<std::uint32_t>(4, 96);
  c.resync_period_cycles = 1000;
  return c;
}

inline link::LlrConfig llr_twin_config() {
  link::LlrConfig c;
  c.seq_bits = 8;  // wraps every 256 frames
  c.window = 32;   // the twin's 2^SLOT_BITS slots
  c.replay_buffer_bytes = 24000;
  c.replay_timer_cycles = 300;
  c.replay_limit = 2;
  c.data_age_cycles = 800;
  c.ack_every = 4;
  c.ack_timer_cycles = 50;
  c.nack_timer_cycles = 200;
  return c;
}

// Configuration registers, then reset.
template <class Rtl>
void configure_cbfc_sender(Rtl& rtl, const link::CbfcConfig& c) {
  rtl.buffer_credits = c.buffer_credits[0];
  rtl.resync_period = static_cast<std::uint32_t>(c.resync_period_cycles);
  rtl.now = 0;
  reset(rtl);
}
template <class Rtl>
void configure_llr_tx(Rtl& rtl, const link::LlrConfig& c) {
  rtl.window = c.window;
  rtl.buffer_bytes = static_cast<std::uint32_t>(c.replay_buffer_bytes);
  rtl.replay_timer = static_cast<std::uint32_t>(c.replay_timer_cycles);
  rtl.replay_limit = static_cast<std::uint8_t>(c.replay_limit);
  rtl.data_age = static_cast<std::uint32_t>(c.data_age_cycles);
  rtl.now = 0;
  reset(rtl);
}
template <class Rtl>
void configure_llr_rx(Rtl& rtl, const link::LlrConfig& c) {
  rtl.ack_every = static_cast<std::uint16_t>(c.ack_every);
  rtl.ack_timer = static_cast<std::uint32_t>(c.ack_timer_cycles);
  rtl.nack_timer = static_cast<std::uint32_t>(c.nack_timer_cycles);
  rtl.now = 0;
  reset(rtl);
}

}  // namespace xy::cosim
