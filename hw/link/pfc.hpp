// Priority flow control (IEEE 802.1Qbb), the lossless-Ethernet baseline CBFC is compared with,
// as plain cores (no SystemC): the port shell calls them with its cycle count.
//
// Contract. The receiver keeps an ingress buffer per priority. When a priority's occupancy
// reaches xoff_bytes it sends XOFF (a PFC frame pausing that priority for pause_quanta), re-sends
// it every refresh_quanta while the priority stays paused, and sends XON (quanta 0) once the
// occupancy falls below xon_bytes. What the sender had already sent, or sends before the pause
// reaches it, lands in the headroom above xoff; a frame that does not fit in buffer_bytes is an
// overflow: the headroom was too small for the round trip. The sender pauses a
// priority for quanta x 512 bit times at the line rate from the cycle a PFC frame arrives, rounded
// up to whole cycles; XON ends it at once. One PFC frame carries every priority whose state
// changed or whose refresh fell due, as real MACs do.
//
// Cycle contract: every call takes effect at once; PfcReceiver::poll() returns a frame exactly
// when now >= next_timer(). Exact: thresholds, pause timing in cycles. Abstracted: the frame's
// bytes (only its size), the MAC's wait for the frame in progress (the shell's job), a shared
// buffer pool (each priority has its own buffer here).
#pragma once
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernel/units.hpp"

namespace xy {
class Config;
}

namespace xy::link {

struct PfcConfig {
  int priorities = 8;                      // 1..8
  std::uint32_t buffer_bytes = 131072;     // ingress buffer per priority
  std::uint32_t headroom_bytes = 32768;    // above xoff: what arrives after XOFF is decided
  std::uint32_t xoff_bytes = 98304;        // XOFF when occupancy reaches this; <= buffer - headroom
  std::uint32_t xon_bytes = 79872;         // XON when it falls below this; < xoff
  std::uint16_t pause_quanta = 0xFFFF;     // pause time in XOFF frames; 1 quantum = 512 bit times
  std::uint16_t refresh_quanta = 0x8000;   // re-send XOFF this long after the last one; < pause_quanta
  double line_gbps = 100;

  // Throws ConfigError naming `prefix`.field, the value and what is allowed.
  void validate(const std::string& prefix = "pfc") const;
  // The pfc.* thresholds (buffer_bytes, headroom_bytes, xoff_bytes, xon_bytes), declared once for
  // every port that runs PFC, checked together, for `priorities` on a line of `line_gbps`.
  static PfcConfig declare(Config& c, int priorities, double line_gbps);
  // Throws ConfigError unless buffer_bytes holds a frame of `max_frame_bytes` (`frame` names
  // where that size comes from, e.g. "port.max_frame_bytes"): a larger one always overflows.
  void check_holds_frame(std::uint32_t max_frame_bytes, const std::string& frame,
                         const std::string& prefix = "pfc") const;
};

struct PauseFrame {
  std::uint8_t enable_vector = 0;         // bit p: quanta[p] applies (the field's upper octet is 0)
  std::array<std::uint16_t, 8> quanta{};  // pause time per priority in quanta; 0 = XON
  static constexpr std::uint32_t wire_bytes = 64;  // DA SA type opcode vector 8 times pad FCS
};

// Cycles of a pause of `quanta` x 512 bit times at `line_gbps`, rounded up.
Cycle pause_cycles(std::uint32_t quanta, double line_gbps, Time clock_period);
// Headroom that absorbs everything in flight when XOFF is decided: round trip x bandwidth, the
// frame the sender is in the middle of when the pause arrives, the frame the receiver's MAC is in
// the middle of when it wants to send XOFF, and the PFC frame itself.
std::uint64_t required_headroom_bytes(double line_gbps, Time round_trip, std::uint32_t max_frame_bytes);

// The receiving end of one port: ingress occupancy per priority and the PFC frames it sends.
class PfcReceiver {
 public:
  PfcReceiver(PfcConfig config, Time clock_period);  // validates

  // Counts a frame in; returns the bytes of it beyond buffer_bytes (0 when it fits): an overflow,
  // which the caller reports. They are counted all the same, so that the frame's drain balances.
  std::uint32_t on_receive(int prio, std::uint32_t bytes);
  void on_drain(int prio, std::uint32_t bytes);    // throws std::logic_error if more than buffered
  std::optional<PauseFrame> poll(Cycle now);
  Cycle next_timer() const;  // the earliest cycle poll() would return a frame, or ~0

  std::uint32_t occupancy(int prio) const { return occupancy_[prio]; }
  bool pausing(int prio) const { return xoff_[prio]; }  // between an XOFF and its XON
  const PfcConfig& config() const { return config_; }

 private:
  PfcConfig config_;
  Cycle refresh_cycles_;
  std::vector<std::uint32_t> occupancy_;
  std::vector<bool> xoff_;
  std::vector<Cycle> refresh_at_;
};

// A PFC overflow in words: `port`, the priority, the cycle, how far the headroom was exceeded.
std::string pfc_overflow(const std::string& port, const PfcReceiver& r, int prio, std::uint32_t bytes,
                         std::uint32_t beyond, Cycle now);

// The sending end of one port: which priorities the partner has paused, and until when.
class PfcSender {
 public:
  PfcSender(PfcConfig config, Time clock_period);  // validates

  void on_pause(const PauseFrame& frame, Cycle now);  // the cycle the frame arrived
  bool paused(int prio, Cycle now) const { return now < paused_until_[prio]; }
  Cycle paused_until(int prio) const { return paused_until_[prio]; }

 private:
  PfcConfig config_;
  Time clock_period_;
  std::vector<Cycle> paused_until_;
};

}  // namespace xy::link
