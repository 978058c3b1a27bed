#include "hw/link/llr.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "kernel/config.hpp"

namespace xy::link {

void LlrConfig::validate(const std::string& prefix) const {
  const std::string k = prefix + ".";
  if (seq_bits < 4 || seq_bits > 32)
    throw ConfigError(fmt::format("{}seq_bits = {}: must be in [4, 32]", k, seq_bits));
  const std::uint64_t half = std::uint64_t{1} << (seq_bits - 1);
  if (window < 1 || window > half)
    throw ConfigError(fmt::format("{}window = {}: must be in [1, 2^(seq_bits - 1) = {}] so that old and new "
                                  "sequence numbers cannot be confused",
                                  k, window, half));
  if (replay_buffer_bytes < 64)
    throw ConfigError(fmt::format("{}replay_buffer_bytes = {}: must be at least one minimum frame (64)", k,
                                  replay_buffer_bytes));
  if (replay_timer_cycles < 1) throw ConfigError(fmt::format("{}replay_timer: must be at least one cycle", k));
  if (ack_every < 1) throw ConfigError(fmt::format("{}ack_every = {}: must be >= 1", k, ack_every));
}

LlrParams LlrParams::declare(Config& c, Time period) {
  LlrParams p;
  LlrConfig& l = p.config;
  l.seq_bits = static_cast<int>(c.integer("llr.seq_bits", 20, "bits", 4, 32, "sequence number width"));
  l.window = static_cast<std::uint32_t>(
      c.integer("llr.window", 0, "frames", 0, 1ll << 31, "frames in flight; 0 = 2^(seq_bits - 1)"));
  if (l.window == 0) l.window = 1u << (l.seq_bits - 1);
  const auto timer_ns = [&](const char* key, double def, const char* meaning) { return c.real(key, def, "ns", 1, 1e9, meaning); };
  p.replay_timer_ns = timer_ns("llr.replay_timer_ns", 5000, "replay when no ACK progress this long");
  p.nack_timer_ns = timer_ns("llr.nack_timer_ns", 2000, "re-send a NACK after this long without progress");
  l.replay_timer_cycles = cycles_for(from_ns(p.replay_timer_ns), period);
  l.nack_timer_cycles = cycles_for(from_ns(p.nack_timer_ns), period);
  l.ack_timer_cycles =
      cycles_for(from_ns(timer_ns("llr.ack_timer_ns", 500, "ACK this long after the first unacknowledged frame")), period);
  l.ack_every = static_cast<int>(c.integer("llr.ack_every", 8, "frames", 1, 1 << 20, "frames per cumulative ACK"));
  l.replay_limit =
      static_cast<int>(c.integer("llr.replay_limit", 3, "replays", 0, 1000, "replays without progress before FLUSH"));
  l.data_age_cycles = cycles_for(
      from_us(c.real("llr.data_age_us", 0, "us", 0, 1e9, "FLUSH frames older than this; 0 = off")), period);
  p.replay_buffer_bytes = static_cast<std::uint64_t>(c.integer(
      "llr.replay_buffer_bytes", 0, "bytes", 0, 1ll << 40, "0 = sized per link by the rule: rate x loop + 2 largest frames"));
  p.max_replay_buffer_bytes = static_cast<std::uint64_t>(c.integer(
      "llr.max_replay_buffer_bytes", 8 << 20, "bytes", 1024, 1ll << 40, "the largest replay buffer a port has"));
  p.rtl = c.implementation("llr.impl", {"model", "rtl"},
                           "every LLR port's transmitter and receiver: the C++ models or their Verilated RTL twins") ==
          "rtl";
  l.validate("llr");
  return p;
}

void LlrParams::check_timers(Time period, Cycle ack_loop, Cycle nack_loop, const std::string& loop_parts) const {
  const double ns = to_ns(period);
  if (config.replay_timer_cycles <= ack_loop)
    throw ConfigError(fmt::format("llr.replay_timer_ns = {}: must be above {:.2f} ns, the time an ACK takes to come "
                                  "back ({} + {:.2f} ns llr.ack_timer_ns)",
                                  replay_timer_ns, ack_loop * ns, loop_parts, config.ack_timer_cycles * ns));
  if (config.nack_timer_cycles <= nack_loop)
    throw ConfigError(fmt::format("llr.nack_timer_ns = {}: must be above {:.2f} ns, the time a NACK's replay takes "
                                  "to come back ({})",
                                  nack_timer_ns, nack_loop * ns, loop_parts));
}

const char* to_string(LlrTxState s) {
  switch (s) {
    case LlrTxState::kInit: return "INIT";
    case LlrTxState::kAdvance: return "ADVANCE";
    case LlrTxState::kReplay: return "REPLAY";
    case LlrTxState::kFlush: return "FLUSH";
  }
  return "?";
}

const char* to_string(LlrRxState s) {
  switch (s) {
    case LlrRxState::kSendAcks: return "SEND_ACKS";
    case LlrRxState::kSendNack: return "SEND_NACK";
    case LlrRxState::kNackSent: return "NACK_SENT";
  }
  return "?";
}

std::vector<std::string> llr_tx_state_names() {
  return {to_string(LlrTxState::kInit), to_string(LlrTxState::kAdvance), to_string(LlrTxState::kReplay),
          to_string(LlrTxState::kFlush)};
}

void LlrTransmitter::probe(Waves& waves, const std::string& prefix) const {
  waves.probe(prefix + ".state", 2, [this] { return static_cast<std::uint64_t>(state()); }, llr_tx_state_names());
  waves.probe(prefix + ".kept", 32, [this] { return kept(); });
  waves.probe(prefix + ".replays", 32, [this] { return replays(); });
}

void LlrReceiver::probe(Waves& waves, const std::string& prefix) const {
  waves.probe(prefix + ".state", 2, [this] { return static_cast<std::uint64_t>(state()); }, llr_rx_state_names());
  waves.probe(prefix + ".expected", 32, [this] { return expected(); });
  waves.probe(prefix + ".nacks", 32, [this] { return nacks(); });
}

std::vector<std::string> llr_rx_state_names() {
  return {to_string(LlrRxState::kSendAcks), to_string(LlrRxState::kSendNack), to_string(LlrRxState::kNackSent)};
}

// ---------------------------------------------------------------------------------------------
// TX

LlrTx::LlrTx(LlrConfig config)
    : seq_mask_(static_cast<std::uint32_t>((std::uint64_t{1} << config.seq_bits) - 1)), c_(config) {
  reckon();
}

std::optional<std::pair<Packet*, std::uint32_t>> LlrTx::take_replay() {
  if (replay_pos_ >= buffer_.size()) {
    state_ = LlrTxState::kAdvance;
    return std::nullopt;
  }
  const Kept& k = buffer_[replay_pos_++];
  ++replayed_frames_;
  if (replay_pos_ == buffer_.size()) state_ = LlrTxState::kAdvance;
  return std::make_pair(k.frame, k.seq);
}

void LlrTx::on_control(const LlrControl& c, Cycle now) {
  take_control(c, now);
  reckon();
}

void LlrTx::take_control(const LlrControl& c, Cycle now) {
  if (c.kind == LlrControl::kInit) return;  // INIT is for the RX
  // Both ACK and NACK say "everything before seq arrived": release it.
  const std::uint32_t base = buffer_.empty() ? next_seq_ : buffer_.front().seq;
  const std::uint32_t acked = mask(std::uint64_t{c.seq} - base);
  if (acked > buffer_.size()) return;  // stale or from before a FLUSH
  for (std::uint32_t i = 0; i < acked; ++i) {
    buffer_bytes_ -= buffer_.front().bytes;
    released_.push_back(buffer_.pop().frame);
  }
  replay_pos_ = replay_pos_ > acked ? replay_pos_ - acked : 0;
  if (acked) {
    last_progress_ = now;
    replays_without_progress_ = 0;
  }
  if (state_ == LlrTxState::kInit || state_ == LlrTxState::kFlush) {
    if (c.kind == LlrControl::kAck && c.seq == next_seq_ && state_ == LlrTxState::kInit) {
      state_ = LlrTxState::kAdvance;
      last_progress_ = now;
    }
    return;
  }
  if (c.kind == LlrControl::kNack && !buffer_.empty()) replay_or_flush(c.seq, now);
  if (state_ == LlrTxState::kReplay && replay_pos_ >= buffer_.size()) state_ = LlrTxState::kAdvance;
}

// Every replay counts, whether a NACK or the timer started it: a receiver that NACKs faster than
// the replay timer must not keep a dead lane replaying forever. (PCIe's REPLAY_NUM counts both
// kinds; UEC's replay count threshold counts replay attempts.) Each replay still restarts the
// timer, as PCIe's does: its frames need a whole loop to be acknowledged, and a timer left
// running from the last progress would start a second replay on top of the NACK's.
bool LlrTx::replay_or_flush(std::uint32_t from, Cycle now) {
  if (++replays_without_progress_ > c_.replay_limit) {
    flush(now);
    return false;
  }
  replay_pos_ = mask(std::uint64_t{from} - buffer_.front().seq);
  if (replay_pos_ >= buffer_.size()) replay_pos_ = 0;
  state_ = LlrTxState::kReplay;
  last_progress_ = now;
  ++replays_;
  return true;
}

void LlrTx::flush(Cycle now) {
  state_ = LlrTxState::kFlush;  // until the INIT goes out
  flushed_frames_ += buffer_.size();
  while (!buffer_.empty()) released_.push_back(buffer_.pop().frame);
  buffer_bytes_ = 0;
  replay_pos_ = 0;
  replays_without_progress_ = 0;
  // Numbering goes on where it is; an INIT tells the RX, and its ACK moves the TX to ADVANCE.
  init_pending_ = true;
  last_progress_ = now;
}

// ---------------------------------------------------------------------------------------------
// RX

LlrRx::LlrRx(LlrConfig config)
    : seq_mask_(static_cast<std::uint32_t>((std::uint64_t{1} << config.seq_bits) - 1)), c_(config) {}

void LlrRx::on_control(const LlrControl& c, Cycle) {
  if (c.kind != LlrControl::kInit) return;
  expected_ = c.seq & seq_mask_;
  state_ = LlrRxState::kSendAcks;
  unacked_ = 0;
  ack_now_ = true;
  reckon();
}

}  // namespace xy::link
