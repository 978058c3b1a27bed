// SerialLine: one direction of an abstract point-to-point line at byte granularity — the line
// under the MACs of the link-level scenarios (a composed Lingyun port runs its MAC over the PHY
// instead). It carries the MAC's wire frames (wire.hpp) as they are, bytes and FCS.
//
// Cycle contract. Takes wire frames from `in` while the line has room left in the current cycle
// and sends them back to back, `bytes_per_cycle` a cycle: an LLR ordered set costs its 8 bytes,
// every other frame its bytes + 20 (preamble and SFD 8, minimum gap 12); several small items may
// share a cycle. An item whose last byte leaves in cycle e arrives at e + latency (control frames
// `control_delay` later still: they cross the rest of a path, for end-to-end recovery) and is
// handed to `out`, one a cycle, in order of arrival.
// Faults are drawn per item as it is sent: a corrupted data frame has one bit of its Ethernet
// bytes flipped (its FCS then fails at the far MAC); a lost item never arrives; a dark line (a
// link flap) loses everything sent in that time.
#pragma once
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "hw/link/pcap.hpp"
#include "kernel/channel.hpp"
#include "kernel/packet.hpp"
#include "kernel/rng.hpp"
#include "kernel/stats.hpp"

namespace xy::link {

inline constexpr std::uint32_t kPreambleGapBytes = 8 + 12;  // preamble and SFD, minimum gap

struct LineFaults {
  double frame_error = 0;       // chance a data frame is corrupted
  double burst_start = 0;       // chance a burst of corrupted frames starts at a data frame
  std::uint32_t burst_frames = 100;
  double frame_loss = 0;        // chance a data frame vanishes
  double control_loss = 0;      // chance a control frame (LLR, CBFC, PFC) vanishes
  Cycle dark_from = 0, dark_until = 0;  // a link flap: everything sent then is lost
};

class SerialLine : public Core {
 public:
  SerialLine(std::string name, std::uint32_t bytes_per_cycle, Cycle latency, Cycle control_delay,
             const LineFaults& faults, Rng rng, Channel<Packet*>& in, Channel<Packet*>& out, PacketPool& pool,
             Stats& stats);
  void eval() override;
  void commit() override;

  // Writes every data frame as an Ethernet frame with its FCS as it leaves (corruption included;
  // the LLR header, carried in the preamble on a real line, left out).
  void capture_to(PcapWriter* writer) { pcap_ = writer; }
  bool idle() const { return flying_.empty() && delayed_.empty() && !in_.in_flight(); }
  std::uint64_t bytes_sent() const { return bytes_sent_; }
  std::uint32_t bytes_per_cycle() const { return width_; }
  Cycle latency() const { return latency_; }
  // Data frames that never arrived, over the whole run (the stats restart at a warm-up).
  std::uint64_t frames_lost() const { return frames_lost_; }
  // A corrupted data frame's first sending to the next sending of its LLR sequence number (its
  // replay), mean over the frames replayed; 0 if none.
  std::uint64_t mean_recovery_cycles() const { return recoveries_ ? recovery_sum_ / recoveries_ : 0; }

  // The line from the first data frame's first byte to the last one's last byte: its length,
  // and what was sent in it (data frames' own bytes, and with their header, preamble and gap;
  // control frames).
  struct Window {
    std::uint64_t line_bytes = 0, frame_bytes = 0, frame_line_bytes = 0, control_bytes = 0;
  };
  Window busy_window() const;

 private:
  struct Flying {
    Cycle arrival;
    Packet* item;
  };
  void send(Packet* w);
  bool corrupt();
  void capture(const Packet& w, std::int64_t flipped_bit);

  std::uint64_t width_;
  Cycle latency_, control_delay_;
  LineFaults faults_;
  Rng rng_;
  Channel<Packet*>& in_;
  Channel<Packet*>& out_;
  PacketPool& pool_;
  PcapWriter* pcap_ = nullptr;
  std::deque<Flying> flying_, delayed_;  // data and undelayed controls; delayed controls
  std::uint64_t position_ = 0;  // line bytes sent since cycle 0, as a line position
  std::uint64_t bytes_sent_ = 0;
  std::uint32_t burst_left_ = 0;
  std::uint32_t next_new_seq_ = 0;  // LLR sequence number of the next frame not yet sent
  std::uint64_t frames_lost_ = 0;
  std::vector<std::uint8_t> scratch_;
  std::deque<std::pair<std::uint32_t, Cycle>> corrupted_sends_;  // seq, first sent
  std::uint64_t recovery_sum_ = 0, recoveries_ = 0;
  bool sent_a_frame_ = false;
  std::uint64_t first_frame_start_ = 0, last_frame_end_ = 0;
  std::uint64_t frame_bytes_ = 0, frame_line_bytes_ = 0, control_bytes_ = 0, control_bytes_at_last_frame_ = 0;
  Counter &corrupted_, &lost_frames_, &lost_controls_, &dark_;
};

}  // namespace xy::link
