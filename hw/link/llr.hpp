// Link-level retry (LLR): per-hop Go-Back-N between two link partners, as in the UEC 1.0 link
// layer (OCP SAI LLR documents). Plain C++: the port shell calls these with its cycle count.
//
// Contract. The TX numbers every data frame (seq_bits wide, wrapping) and keeps it in the replay
// buffer until a cumulative ACK covers it. The RX delivers frames in order exactly once; a
// frame with a bad FCS or a gap in the sequence makes it send one NACK naming the frame it
// expects, and the TX replays from there (Go-Back-N). While the NACK is outstanding the RX
// stays quiet, unless the sequence visibly restarts (the replay came, but its first frame was
// lost again): then it NACKs again at once; or unless frames still arrive out of order after
// its NACK timer (the NACK was lost). A lost NACK with nothing behind it is the TX's replay
// timer's to repair, so an idle link does not carry NACKs forever. The TX also replays when no ACK has made
// progress for replay_timer cycles — exactly that many after the last progress or the last
// replay's start, never earlier. Every replay counts, NACK-started or timer-started, until an
// ACK or NACK releases a frame (progress); the one that would be the (replay_limit + 1)-th
// without progress FLUSHes instead, as does an oldest frame older than data_age: the frames are
// dropped (end-to-end recovery's job), counted, and an INIT tells the RX where numbering
// restarts. So a lane that stays bad ends in FLUSHes even when NACKs come faster than the
// replay timer. ACKs, NACKs and INITs travel as 8-byte control ordered sets.
#pragma once
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernel/config.hpp"
#include "kernel/packet.hpp"
#include "kernel/ring.hpp"
#include "kernel/units.hpp"
#include "kernel/waves.hpp"

namespace xy::link {

struct LlrConfig {
  int seq_bits = 20;
  std::uint32_t window = 1u << 19;       // frames in flight; <= 2^(seq_bits - 1)
  std::uint64_t replay_buffer_bytes = 1 << 20;
  Cycle replay_timer_cycles = 5000;
  int replay_limit = 3;
  Cycle data_age_cycles = 0;             // 0 = off
  int ack_every = 8;                     // frames per cumulative ACK
  Cycle ack_timer_cycles = 200;          // or this long after the first unacknowledged frame
  Cycle nack_timer_cycles = 2000;        // re-send a NACK if nothing has come in order since
  // Throws ConfigError naming `prefix`.key, the value and what is allowed.
  void validate(const std::string& prefix) const;
};

// The llr.* parameters, declared once for every port that runs LLR.
struct LlrParams {
  LlrConfig config;  // times in cycles of the port's clock; the replay buffer is the link's
  std::uint64_t replay_buffer_bytes = 0;  // 0: sized per link by the rule (rate x loop + 2 frames)
  std::uint64_t max_replay_buffer_bytes = 0;  // the largest a port has: a longer link is refused
  bool rtl = false;  // llr.impl=rtl: the transmitter and receiver are the RTL twins (rtl/link/drop_in.hpp)
  double replay_timer_ns = 0, nack_timer_ns = 0;  // as given, for messages (config has them in cycles)
  static LlrParams declare(Config& c, Time period);
  // A timer that fires before its answer can come back replays frames that were never lost,
  // and every replay without progress counts toward the replay limit: it would FLUSH a working
  // link. Throws ConfigError naming the timer, unless the replay timer is above `ack_loop` (a
  // frame out, its ACK back, the ACK timer included) and the NACK timer above `nack_loop`.
  // `loop_parts` says what the loops are made of, for the message.
  void check_timers(Time period, Cycle ack_loop, Cycle nack_loop, const std::string& loop_parts) const;
  // The replay buffer of a link that needs `needed` bytes by the rule.
  std::uint64_t replay_buffer_for(std::uint64_t needed) const { return replay_buffer_bytes ? replay_buffer_bytes : needed; }
};

struct LlrControl {
  enum Kind : std::uint8_t { kAck, kNack, kInit } kind;
  std::uint32_t seq;  // ACK: next expected (all before it received); NACK: expected; INIT: first
  static constexpr std::uint32_t kWireBytes = 8;  // one control ordered set
};

enum class LlrTxState { kInit, kAdvance, kReplay, kFlush };
enum class LlrRxState { kSendAcks, kSendNack, kNackSent };
const char* to_string(LlrTxState s);
const char* to_string(LlrRxState s);
// Every state's name by its value, for a waves probe's value names (the model's and the RTL
// twin's states are the same numbers).
std::vector<std::string> llr_tx_state_names();
std::vector<std::string> llr_rx_state_names();

// The two ends as a port sees them. Two implementations each: the C++ models below, and their
// RTL twins (rtl/link/), which a scenario drops in in their place.
class LlrTransmitter {
 public:
  virtual ~LlrTransmitter() = default;
  // May a new frame of `bytes` be sent now? (ADVANCE, window and replay buffer have room.)
  virtual bool can_accept(std::uint32_t bytes) const = 0;
  // Numbers a new frame of `bytes` and keeps `kept`, its copy for a replay (written once the
  // number is known: read nothing of it here); returns its sequence number.
  virtual std::uint32_t accept(Packet* kept, std::uint32_t bytes, Cycle now) = 0;
  // In REPLAY: the next kept frame to send again, with its sequence number; none when done.
  virtual std::optional<std::pair<Packet*, std::uint32_t>> next_replay(Cycle now) = 0;
  // A control ordered set the TX must send (INIT), if any.
  virtual std::optional<LlrControl> poll_control() = 0;
  virtual void on_control(const LlrControl& c, Cycle now) = 0;
  // Timers; call every cycle the shell is ticked (and when woken by next_timer()).
  virtual void tick(Cycle now) = 0;
  virtual Cycle next_timer() const = 0;  // the cycle tick() must next run at, or ~0

  virtual LlrTxState state() const = 0;
  virtual std::uint64_t replays() const = 0;
  virtual std::uint64_t replayed_frames() const = 0;
  virtual std::uint64_t flushed_frames() const = 0;
  virtual std::uint64_t timer_replays() const = 0;
  virtual std::size_t kept() const = 0;
  virtual std::uint64_t kept_bytes() const = 0;
  // Frames released by ACKs (or a FLUSH) since the last call (the shell returns them to their pool).
  virtual std::vector<Packet*>& released() = 0;
  // Offers its state to the waves: `prefix`.state (by name), .kept, .replays; a twin adds its
  // RTL ports under `prefix`.rtl.
  virtual void probe(Waves& waves, const std::string& prefix) const;
};

class LlrReceiver {
 public:
  virtual ~LlrReceiver() = default;
  enum class Verdict { kDeliver, kDuplicate, kOutOfOrder, kBadFcs };
  // A data frame arrived with sequence number `seq`; deliver it only on kDeliver.
  virtual Verdict on_frame(std::uint32_t seq, bool fcs_ok, Cycle now) = 0;
  virtual void on_control(const LlrControl& c, Cycle now) = 0;  // INIT from the partner's TX
  // The next control ordered set to send (NACK first, then ACK), if one is due at `now`.
  virtual std::optional<LlrControl> poll(Cycle now) = 0;
  virtual Cycle next_timer() const = 0;  // when poll() may next have something without new input, or ~0

  virtual LlrRxState state() const = 0;
  virtual std::uint32_t expected() const = 0;
  virtual std::uint64_t nacks() const = 0;
  // `prefix`.state (by name), .expected, .nacks; a twin adds its RTL ports under `prefix`.rtl.
  virtual void probe(Waves& waves, const std::string& prefix) const;
};

class LlrTx final : public LlrTransmitter {
 public:
  explicit LlrTx(LlrConfig config);

  bool can_accept(std::uint32_t bytes) const override;
  std::uint32_t accept(Packet* kept, std::uint32_t bytes, Cycle now) override;
  std::optional<std::pair<Packet*, std::uint32_t>> next_replay(Cycle now) override;
  std::optional<LlrControl> poll_control() override;
  void on_control(const LlrControl& c, Cycle now) override;
  void tick(Cycle now) override;
  Cycle next_timer() const override;

  LlrTxState state() const override { return state_; }
  std::uint64_t replays() const override { return replays_; }
  std::uint64_t replayed_frames() const override { return replayed_frames_; }
  std::uint64_t flushed_frames() const override { return flushed_frames_; }
  std::uint64_t timer_replays() const override { return timer_replays_; }
  std::size_t kept() const override { return buffer_.size(); }
  std::uint64_t kept_bytes() const override { return buffer_bytes_; }
  std::vector<Packet*>& released() override { return released_; }
  bool init_pending() const { return init_pending_; }  // poll_control() has an INIT

 private:
  void take_control(const LlrControl& c, Cycle now);  // on_control but the reckoning
  void run_timers(Cycle now);                         // tick but the reckoning
  void reckon();  // after every change: when the timers next expire
  struct Kept {
    Packet* frame;
    std::uint32_t seq;
    std::uint32_t bytes;  // the frame's, so that an ACK releases it without reading it
    Cycle sent;
  };
  // Replays from `from`, or FLUSHes if that would be one replay without progress too many;
  // true if it replayed.
  bool replay_or_flush(std::uint32_t from, Cycle now);
  // In REPLAY: the next kept frame, or back to ADVANCE when none is left.
  std::optional<std::pair<Packet*, std::uint32_t>> take_replay();
  void flush(Cycle now);
  std::uint32_t mask(std::uint64_t v) const { return static_cast<std::uint32_t>(v & seq_mask_); }

  // What a MAC's every cycle reads (tick, next_timer, poll_control) comes first, the config after.
  Cycle timer_at_;
  LlrTxState state_ = LlrTxState::kInit;
  bool init_pending_ = true;
  int replays_without_progress_ = 0;
  Cycle last_progress_ = 0;
  Ring<Kept> buffer_;             // unacknowledged, oldest first
  std::vector<Packet*> released_;
  std::uint64_t buffer_bytes_ = 0;
  std::size_t replay_pos_ = 0;    // index in buffer_ of the next frame to replay
  std::uint32_t seq_mask_;
  std::uint32_t next_seq_ = 0;
  LlrConfig c_;
  std::uint64_t replays_ = 0, replayed_frames_ = 0, flushed_frames_ = 0, timer_replays_ = 0;
};

class LlrRx final : public LlrReceiver {
 public:
  explicit LlrRx(LlrConfig config);

  Verdict on_frame(std::uint32_t seq, bool fcs_ok, Cycle now) override;
  void on_control(const LlrControl& c, Cycle now) override;
  std::optional<LlrControl> poll(Cycle now) override;
  Cycle next_timer() const override;

  LlrRxState state() const override { return state_; }
  std::uint32_t expected() const override { return expected_; }
  std::uint64_t nacks() const override { return nacks_; }
  bool control_due(Cycle now) const { return now >= control_at_; }  // poll(now) would return a control

 private:
  Verdict take(std::uint32_t seq, bool fcs_ok, Cycle now);  // on_frame but the reckoning
  // After every change: the first cycle poll() has a control for (0: at once) and the timer's.
  void reckon();
  bool nack_due(Cycle now) const;

  // What a MAC's every cycle reads (poll, next_timer) comes first, the config after.
  Cycle control_at_ = ~Cycle{0}, timer_at_ = ~Cycle{0};
  LlrRxState state_ = LlrRxState::kSendAcks;
  bool ack_now_ = false;
  bool gap_since_nack_ = false;   // a frame came out of order or damaged since the NACK
  int unacked_ = 0;
  Cycle first_unacked_ = 0, nack_sent_ = 0;
  std::uint32_t expected_ = 0;
  std::uint32_t seq_mask_;
  std::uint32_t last_ahead_ = 0;  // distance of the last out-of-order frame since the NACK
  LlrConfig c_;
  std::uint64_t nacks_ = 0;
};

// Inline, for a shell that holds the models to call them directly (hw/link/mac.hpp): asked on every
// cycle it runs. (An optional returned through a virtual call is built on the stack and read back
// in wider loads than were stored: a stalled store forward each time.)
inline std::optional<LlrControl> LlrTx::poll_control() {
  if (!init_pending_) return std::nullopt;
  init_pending_ = false;
  if (state_ == LlrTxState::kFlush) state_ = LlrTxState::kInit;
  return LlrControl{LlrControl::kInit, next_seq_};
}

inline bool LlrRx::nack_due(Cycle now) const {
  return state_ == LlrRxState::kSendNack ||
         (state_ == LlrRxState::kNackSent && gap_since_nack_ && now >= nack_sent_ + c_.nack_timer_cycles);
}

inline std::optional<LlrControl> LlrRx::poll(Cycle now) {
  if (now < control_at_) return std::nullopt;
  if (nack_due(now)) {
    state_ = LlrRxState::kNackSent;
    nack_sent_ = now;
    last_ahead_ = 0;
    gap_since_nack_ = false;
    ++nacks_;
    unacked_ = 0;  // the NACK acknowledges everything before it
    reckon();
    return LlrControl{LlrControl::kNack, expected_};
  }
  ack_now_ = false;  // control_at_ passed: an ACK is due
  unacked_ = 0;
  reckon();
  return LlrControl{LlrControl::kAck, expected_};
}

inline std::optional<std::pair<Packet*, std::uint32_t>> LlrTx::next_replay(Cycle) {
  if (state_ != LlrTxState::kReplay) return std::nullopt;
  return take_replay();
}

inline std::uint32_t LlrTx::accept(Packet* kept, std::uint32_t bytes, Cycle now) {
  const bool first = buffer_.empty();
  if (first) last_progress_ = now;  // the replay timer runs while anything is unacknowledged
  const std::uint32_t seq = next_seq_;
  next_seq_ = mask(next_seq_ + std::uint64_t{1});
  buffer_.push({kept, seq, bytes, now});
  buffer_bytes_ += bytes;
  if (first) reckon();  // behind the first, a frame moves no timer
  return seq;
}

inline bool LlrTx::can_accept(std::uint32_t bytes) const {
  return state_ == LlrTxState::kAdvance && buffer_.size() < c_.window &&
         buffer_bytes_ + bytes <= c_.replay_buffer_bytes;
}

inline void LlrTx::tick(Cycle now) {
  run_timers(now);
  reckon();
}

inline void LlrTx::run_timers(Cycle now) {
  if (state_ == LlrTxState::kInit || state_ == LlrTxState::kFlush) {
    if (now >= last_progress_ + c_.replay_timer_cycles) {  // INIT or its ACK was lost: again
      init_pending_ = true;
      last_progress_ = now;
    }
    return;
  }
  if (buffer_.empty()) return;
  if (c_.data_age_cycles && now >= buffer_.front().sent + c_.data_age_cycles) return flush(now);
  if (now >= last_progress_ + c_.replay_timer_cycles && replay_or_flush(buffer_.front().seq, now)) ++timer_replays_;
}

inline Cycle LlrTx::next_timer() const { return timer_at_; }

inline void LlrTx::reckon() {
  if (state_ == LlrTxState::kInit || state_ == LlrTxState::kFlush) {
    timer_at_ = last_progress_ + c_.replay_timer_cycles;
  } else if (buffer_.empty()) {
    timer_at_ = ~Cycle{0};
  } else {
    timer_at_ = last_progress_ + c_.replay_timer_cycles;
    if (c_.data_age_cycles) timer_at_ = std::min(timer_at_, buffer_.front().sent + c_.data_age_cycles);
  }
}

inline LlrRx::Verdict LlrRx::on_frame(std::uint32_t seq, bool fcs_ok, Cycle now) {
  const Verdict v = take(seq, fcs_ok, now);
  reckon();
  return v;
}

inline LlrRx::Verdict LlrRx::take(std::uint32_t seq, bool fcs_ok, Cycle now) {
  if (!fcs_ok) {
    if (state_ != LlrRxState::kNackSent) state_ = LlrRxState::kSendNack;
    gap_since_nack_ = true;
    return Verdict::kBadFcs;
  }
  const std::uint32_t ahead = (seq - expected_) & seq_mask_;
  if (ahead == 0) {
    expected_ = (expected_ + 1) & seq_mask_;
    state_ = LlrRxState::kSendAcks;
    if (unacked_++ == 0) first_unacked_ = now;
    return Verdict::kDeliver;
  }
  if (ahead < (seq_mask_ >> 1) + 1) {  // a frame is missing before this one
    if (state_ != LlrRxState::kNackSent || ahead <= last_ahead_) state_ = LlrRxState::kSendNack;
    last_ahead_ = ahead;
    gap_since_nack_ = true;
    return Verdict::kOutOfOrder;
  }
  ack_now_ = true;  // a replayed frame we already have: our ACK may have been lost
  return Verdict::kDuplicate;
}

inline Cycle LlrRx::next_timer() const { return timer_at_; }

inline void LlrRx::reckon() {
  timer_at_ = ~Cycle{0};
  if (state_ == LlrRxState::kNackSent && gap_since_nack_) timer_at_ = nack_sent_ + c_.nack_timer_cycles;
  if (unacked_ > 0) timer_at_ = std::min(timer_at_, first_unacked_ + c_.ack_timer_cycles);
  const bool at_once = state_ == LlrRxState::kSendNack || ack_now_ || unacked_ >= c_.ack_every;
  control_at_ = at_once ? 0 : timer_at_;
}

}  // namespace xy::link
