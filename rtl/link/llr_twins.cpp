#include <verilated.h>  // before SystemC's headers (see tests/cosim/delay_line_test.cpp)

#include "Vxy_llr_rx_dropin.h"
#include "Vxy_llr_tx_dropin.h"

#include "rtl/link/llr_twins.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "rtl/twin.hpp"
#include "kernel/config.hpp"

namespace xy::rtl {

// The twins' build parameters, from rtl/CMakeLists.txt.
constexpr int kSeqBits = XY_LLR_TWIN_SEQ_BITS;
constexpr std::uint32_t kSeqMask = (1u << kSeqBits) - 1;
constexpr std::uint32_t kSlots = 1u << XY_LLR_TWIN_SLOT_BITS;
constexpr std::uint64_t kMaxBufferBytes = (std::uint64_t{1} << XY_LLR_TWIN_BYTES_BITS) - 1;
constexpr std::uint32_t kMinFrameBytes = 64, kMaxFrameBytes = (1u << XY_LLR_TWIN_LEN_BITS) - 1;

void check_llr_twins(const link::LlrConfig& config, const std::string& prefix) {
  config.validate(prefix);
  const auto fail = [&](const std::string& field, auto value, const std::string& allowed) {
    throw ConfigError(fmt::format("{}.{} = {}: the RTL twins ({}.impl=rtl) {}", prefix, field, value, prefix, allowed));
  };
  if (config.seq_bits != kSeqBits) fail("seq_bits", config.seq_bits, fmt::format("are built for {}; allowed: {}", kSeqBits, kSeqBits));
  // The twin keeps kSlots frames; the window may be larger if the buffer holds fewer frames of 64 bytes.
  if (std::min<std::uint64_t>(config.window, config.replay_buffer_bytes / kMinFrameBytes) > kSlots)
    fail("window", config.window, fmt::format("keep at most {} frames: the window, or the replay buffer in 64-byte "
                                              "frames, must not exceed it", kSlots));
  if (config.replay_buffer_bytes > kMaxBufferBytes)
    fail("replay_buffer_bytes", config.replay_buffer_bytes, fmt::format("count up to {} bytes", kMaxBufferBytes));
  if (config.replay_limit > 255) fail("replay_limit", config.replay_limit, "count up to 255 replays");
  if (config.ack_every > 65535) fail("ack_every", config.ack_every, "count up to 65535 frames");
}

// --- transmitter ---

struct LlrTxTwin::Rtl {
  VerilatedContext context;
  Vxy_llr_tx_dropin top{&context, "llr_tx"};
};

LlrTxTwin::LlrTxTwin(const link::LlrConfig& config, const Clock& clock)
    : clock_(clock), rtl_(std::make_unique<Rtl>()), frames_(kSlots, nullptr) {
  check_llr_twins(config);
  auto& top = rtl_->top;
  top.window = static_cast<std::uint16_t>(std::min<std::uint64_t>(config.window, kSlots));
  top.buffer_bytes = static_cast<std::uint32_t>(config.replay_buffer_bytes);
  top.replay_timer = config.replay_timer_cycles;
  top.replay_limit = static_cast<std::uint8_t>(config.replay_limit);
  top.data_age = config.data_age_cycles;
  top.now = 0;
  cosim::reset(top);
}

LlrTxTwin::~LlrTxTwin() { rtl_->top.final(); }

void LlrTxTwin::edge(Cycle now) {
  auto& top = rtl_->top;
  top.now = now;
  const std::uint32_t kept_before = top.kept, base = (top.frame_seq - kept_before) & kSeqMask;  // registers
  cosim::clock_edge(top);
  for (std::uint32_t i = 0; i + top.kept < kept_before; ++i) released_.push_back(frames_[(base + i) % kSlots]);
  top.ctl_valid = top.tick = top.init_take = top.replay_take = top.frame_valid = 0;
}

bool LlrTxTwin::can_accept(std::uint32_t bytes) const {
  if (bytes < kMinFrameBytes || bytes > kMaxFrameBytes)
    throw std::out_of_range(fmt::format("a frame of {} bytes: the LLR twin takes {} to {}", bytes, kMinFrameBytes,
                                        kMaxFrameBytes));
  auto& top = rtl_->top;
  top.frame_bytes = static_cast<std::uint16_t>(bytes);
  top.eval();
  return top.can_accept;
}

std::uint32_t LlrTxTwin::accept(Packet* kept, std::uint32_t bytes, Cycle now) {
  if (!can_accept(bytes)) throw std::logic_error("LLR twin: a frame accepted without room");
  auto& top = rtl_->top;
  const std::uint32_t seq = top.frame_seq;
  frames_[seq % kSlots] = kept;
  top.frame_valid = 1;
  edge(now);
  return seq;
}

std::optional<std::pair<Packet*, std::uint32_t>> LlrTxTwin::next_replay(Cycle now) {
  auto& top = rtl_->top;
  top.replay_take = 1;
  top.now = now;
  top.eval();
  const bool valid = top.replay_valid;
  const std::uint32_t seq = top.replay_seq;
  edge(now);
  if (!valid) return std::nullopt;
  return std::make_pair(frames_[seq % kSlots], seq);
}

std::optional<link::LlrControl> LlrTxTwin::poll_control() {
  auto& top = rtl_->top;
  top.init_take = 1;
  top.now = clock_.now();
  top.eval();
  const bool valid = top.init_valid;
  const std::uint32_t seq = top.init_seq;
  edge(clock_.now());
  if (!valid) return std::nullopt;
  return link::LlrControl{link::LlrControl::kInit, seq};
}

void LlrTxTwin::on_control(const link::LlrControl& c, Cycle now) {
  auto& top = rtl_->top;
  top.ctl_valid = 1;
  top.ctl_kind = c.kind;
  top.ctl_seq = c.seq & kSeqMask;
  edge(now);
}

void LlrTxTwin::tick(Cycle now) {
  rtl_->top.tick = 1;
  edge(now);
}

Cycle LlrTxTwin::next_timer() const {
  rtl_->top.eval();
  return rtl_->top.next_timer;
}

link::LlrTxState LlrTxTwin::state() const { return static_cast<link::LlrTxState>(rtl_->top.state); }
std::uint64_t LlrTxTwin::replays() const { return rtl_->top.replays; }
std::uint64_t LlrTxTwin::replayed_frames() const { return rtl_->top.replayed_frames; }
std::uint64_t LlrTxTwin::flushed_frames() const { return rtl_->top.flushed_frames; }
std::uint64_t LlrTxTwin::timer_replays() const { return rtl_->top.timer_replays; }
std::size_t LlrTxTwin::kept() const { return rtl_->top.kept; }
std::uint64_t LlrTxTwin::kept_bytes() const { return rtl_->top.kept_bytes; }

// The Verilated outputs as they stand after the last edge (or the last input a query set).
void LlrTxTwin::probe(Waves& waves, const std::string& prefix) const {
  LlrTransmitter::probe(waves, prefix);
  const auto& top = rtl_->top;
  const std::string n = prefix + ".rtl.";
  waves.probe(n + "state", 2, [&top] { return top.state; }, link::llr_tx_state_names());
  waves.probe(n + "kept", XY_LLR_TWIN_SLOT_BITS + 1, [&top] { return top.kept; });
  waves.probe(n + "kept_bytes", XY_LLR_TWIN_BYTES_BITS, [&top] { return top.kept_bytes; });
  waves.probe(n + "next_timer", XY_LLR_TWIN_TIME_BITS, [&top] { return top.next_timer; });
  waves.probe(n + "can_accept", 1, [&top] { return top.can_accept; });
  waves.probe(n + "frame_seq", kSeqBits, [&top] { return top.frame_seq; });
  waves.probe(n + "replay_valid", 1, [&top] { return top.replay_valid; });
  waves.probe(n + "replay_seq", kSeqBits, [&top] { return top.replay_seq; });
  waves.probe(n + "init_valid", 1, [&top] { return top.init_valid; });
  waves.probe(n + "replays", 32, [&top] { return top.replays; });
  waves.probe(n + "replayed_frames", 32, [&top] { return top.replayed_frames; });
  waves.probe(n + "flushed_frames", 32, [&top] { return top.flushed_frames; });
  waves.probe(n + "timer_replays", 32, [&top] { return top.timer_replays; });
}

// --- receiver ---

struct LlrRxTwin::Rtl {
  VerilatedContext context;
  Vxy_llr_rx_dropin top{&context, "llr_rx"};
};

LlrRxTwin::LlrRxTwin(const link::LlrConfig& config) : rtl_(std::make_unique<Rtl>()) {
  check_llr_twins(config);
  auto& top = rtl_->top;
  top.ack_every = static_cast<std::uint16_t>(config.ack_every);
  top.ack_timer = config.ack_timer_cycles;
  top.nack_timer = config.nack_timer_cycles;
  top.now = 0;
  cosim::reset(top);
}

LlrRxTwin::~LlrRxTwin() { rtl_->top.final(); }

void LlrRxTwin::edge(Cycle now) {
  auto& top = rtl_->top;
  top.now = now;
  cosim::clock_edge(top);
  top.frame_valid = top.init_valid = top.ctl_take = 0;
}

LlrRxTwin::Verdict LlrRxTwin::on_frame(std::uint32_t seq, bool fcs_ok, Cycle now) {
  auto& top = rtl_->top;
  top.frame_valid = 1;
  top.frame_seq = seq & kSeqMask;
  top.frame_fcs_ok = fcs_ok;
  top.now = now;
  top.eval();
  const auto verdict = static_cast<Verdict>(top.verdict);
  edge(now);
  return verdict;
}

void LlrRxTwin::on_control(const link::LlrControl& c, Cycle now) {
  if (c.kind != link::LlrControl::kInit) return;
  rtl_->top.init_valid = 1;
  rtl_->top.init_seq = c.seq & kSeqMask;
  edge(now);
}

std::optional<link::LlrControl> LlrRxTwin::poll(Cycle now) {
  auto& top = rtl_->top;
  top.ctl_take = 1;
  top.now = now;
  top.eval();
  const bool valid = top.ctl_valid;
  const link::LlrControl c{static_cast<link::LlrControl::Kind>(top.ctl_kind), top.ctl_seq};
  edge(now);
  if (!valid) return std::nullopt;
  return c;
}

Cycle LlrRxTwin::next_timer() const {
  rtl_->top.eval();
  return rtl_->top.next_timer;
}

link::LlrRxState LlrRxTwin::state() const { return static_cast<link::LlrRxState>(rtl_->top.state); }
std::uint32_t LlrRxTwin::expected() const { return rtl_->top.expected; }
std::uint64_t LlrRxTwin::nacks() const { return rtl_->top.nacks; }

void LlrRxTwin::probe(Waves& waves, const std::string& prefix) const {
  LlrReceiver::probe(waves, prefix);
  const auto& top = rtl_->top;
  const std::string n = prefix + ".rtl.";
  waves.probe(n + "state", 2, [&top] { return top.state; }, link::llr_rx_state_names());
  waves.probe(n + "expected", kSeqBits, [&top] { return top.expected; });
  waves.probe(n + "verdict", 2, [&top] { return top.verdict; });
  waves.probe(n + "ctl_valid", 1, [&top] { return top.ctl_valid; });
  waves.probe(n + "ctl_kind", 2, [&top] { return top.ctl_kind; });
  waves.probe(n + "ctl_seq", kSeqBits, [&top] { return top.ctl_seq; });
  waves.probe(n + "next_timer", 64, [&top] { return top.next_timer; });
  waves.probe(n + "nacks", 32, [&top] { return top.nacks; });
}

}  // namespace xy::rtl
