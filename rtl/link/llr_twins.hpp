// The LLR transmitter's and receiver's RTL twins (xy_llr_tx.v, xy_llr_rx.v, verilated --cc) behind
// the models' interfaces, so that a port runs the RTL in place of link::LlrTx and LlrRx:
// link-llr with llr.impl=rtl.
//
// As for the CBFC twin (cbfc_sender_twin.hpp): each call that changes state is one rising edge
// with its inputs and the port clock's cycle on `now` (the transmitter's timers step only on the
// edge of a tick() call); queries read combinational outputs without an edge. The frames stay
// here, beside the twin, in slots indexed as its own (the low bits of the sequence number).
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hw/link/llr.hpp"
#include "kernel/clock.hpp"

namespace xy::rtl {

// Throws ConfigError naming `prefix`.field for a config the twins are not built for.
void check_llr_twins(const link::LlrConfig& config, const std::string& prefix = "llr");

class LlrTxTwin final : public link::LlrTransmitter {
 public:
  LlrTxTwin(const link::LlrConfig& config, const Clock& clock);  // checks
  ~LlrTxTwin() override;

  bool can_accept(std::uint32_t bytes) const override;
  std::uint32_t accept(Packet* kept, std::uint32_t bytes, Cycle now) override;
  std::optional<std::pair<Packet*, std::uint32_t>> next_replay(Cycle now) override;
  std::optional<link::LlrControl> poll_control() override;
  void on_control(const link::LlrControl& c, Cycle now) override;
  void tick(Cycle now) override;
  Cycle next_timer() const override;

  link::LlrTxState state() const override;
  std::uint64_t replays() const override;
  std::uint64_t replayed_frames() const override;
  std::uint64_t flushed_frames() const override;
  std::uint64_t timer_replays() const override;
  std::size_t kept() const override;
  std::uint64_t kept_bytes() const override;
  std::vector<Packet*>& released() override { return released_; }
  void probe(Waves& waves, const std::string& prefix) const override;  // the model's, and its ports

 private:
  struct Rtl;
  void edge(Cycle now);  // clocks the inputs set, then releases what the edge let go

  const Clock& clock_;
  std::unique_ptr<Rtl> rtl_;
  std::vector<Packet*> frames_;  // by slot
  std::vector<Packet*> released_;
};

class LlrRxTwin final : public link::LlrReceiver {
 public:
  explicit LlrRxTwin(const link::LlrConfig& config);  // checks
  ~LlrRxTwin() override;

  Verdict on_frame(std::uint32_t seq, bool fcs_ok, Cycle now) override;
  void on_control(const link::LlrControl& c, Cycle now) override;
  std::optional<link::LlrControl> poll(Cycle now) override;
  Cycle next_timer() const override;

  link::LlrRxState state() const override;
  std::uint32_t expected() const override;
  std::uint64_t nacks() const override;
  void probe(Waves& waves, const std::string& prefix) const override;  // the model's, and its ports

 private:
  struct Rtl;
  void edge(Cycle now);

  std::unique_ptr<Rtl> rtl_;
};

}  // namespace xy::rtl
