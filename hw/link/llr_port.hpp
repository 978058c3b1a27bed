// LlrPort: one end of a link — MAC with FCS, LLR TX and RX — on the link's clock.
//
// Cycle contract. Each cycle the MAC sends, while the line has room in this cycle: first the
// control ordered sets that are due (NACK, ACK, INIT; 8 bytes each), then frames being replayed,
// then new frames from the host. A frame costs its bytes + 24 on the line (preamble and SFD 8,
// FCS 4, minimum gap 12). The RX checks every frame's FCS (a real CRC-32 over the received bytes)
// and its sequence number, and hands frames to the host in order, one per cycle, as copies
// (the original stays in the replay buffer until acknowledged, and goes back to the pool only
// after every copy of it sent on the line has arrived).
// Faults (LineFaults) are drawn per item at the sender: a corrupted frame carries one flipped
// bit and fails its FCS; a dark line (link flap) loses everything sent in that time.
#pragma once
#include <cstdint>
#include <deque>
#include <memory>
#include <string>

#include "hw/link/llr.hpp"
#include "hw/link/pcap.hpp"
#include "hw/link/serial_line.hpp"
#include "kernel/channel.hpp"
#include "kernel/packet.hpp"
#include "kernel/rng.hpp"
#include "kernel/stats.hpp"

namespace xy::link {

inline constexpr std::uint32_t kFrameOverheadBytes = 8 + 4 + 12;  // preamble+SFD, FCS, gap

// What travels on a line: a data frame (with its sequence number and FCS) or a control set.
struct LineItem {
  Packet* frame = nullptr;  // null: a control ordered set
  std::uint32_t seq = 0;
  std::uint32_t fcs = 0;
  std::int32_t flipped_bit = -1;  // the channel corrupted this bit of the frame
  LlrControl control{LlrControl::kAck, 0};
  bool lost = false;  // never arrives (dark line)
};

struct LineFaults {
  double frame_error = 0;       // chance a frame is corrupted
  double burst_start = 0;       // chance a burst of corrupted frames starts at a frame
  std::uint32_t burst_frames = 100;
  double control_loss = 0;      // chance a control ordered set is lost
  Cycle dark_from = 0, dark_until = 0;  // a link flap: everything sent then is lost
};

// Who recovers a corrupted frame: LLR on this hop; Go-Back-N between the end points, whose
// ACKs and NACKs take `control_delay` more cycles than this hop's (RoCE-style NAK over a path);
// or nobody (the frame is lost).
enum class Recovery { kLlr, kEndToEnd, kNone };

// The LLR ends a port uses (RTL twins, say); null ones are the C++ models.
struct LlrEnds {
  std::unique_ptr<LlrTransmitter> tx;
  std::unique_ptr<LlrReceiver> rx;
};

class LlrPort : public Core {
 public:
  LlrPort(std::string name, const LlrConfig& llr, Recovery recovery, Cycle control_delay, const LineFaults& faults, Rng rng,
          SerialLine<LineItem>& out, SerialLine<LineItem>& in, Channel<Packet*>& from_host,
          Channel<Packet*>& to_host, PacketPool& pool, Stats& stats, LlrEnds ends = {});

  void eval() override;
  void commit() override;

  // Writes every data frame this port sends, as it leaves (corruption included), with its FCS.
  void capture_to(PcapWriter* writer) { pcap_ = writer; }
  const LlrTransmitter& tx() const { return *tx_; }
  const LlrReceiver& rx() const { return *rx_; }
  std::uint64_t delivered() const { return delivered_.value(); }
  // Nothing kept for replay and nothing waiting for the host.
  bool idle() const { return tx_->kept() == 0 && deliver_.empty() && delayed_.empty(); }
  std::uint64_t mean_recovery_cycles() const;  // lost frame first sent -> its replay, mean

  // The line from the first data frame's first byte to the last one's last byte: its length,
  // and what was sent in it (frames with preamble, FCS and gap; control sets).
  struct Window {
    std::uint64_t line_bytes = 0, frame_bytes = 0, frame_line_bytes = 0, control_bytes = 0;
  };
  Window busy_window() const;

 private:
  void receive();
  void handle(const LlrControl& c);
  void transmit();
  void send_frame(Packet* frame, std::uint32_t seq, bool replay);
  bool fault_frame();

  std::unique_ptr<LlrTransmitter> tx_;
  std::unique_ptr<LlrReceiver> rx_;
  Recovery recovery_;
  Cycle control_delay_;
  std::deque<std::pair<Cycle, LlrControl>> delayed_;  // controls still crossing the rest of the path
  LineFaults faults_;
  Rng rng_;
  SerialLine<LineItem>& out_;
  SerialLine<LineItem>& in_;
  Channel<Packet*>& from_host_;
  Channel<Packet*>& to_host_;
  PacketPool& pool_;
  std::deque<Packet*> deliver_;                    // copies for the host
  std::deque<std::pair<Cycle, Packet*>> retired_;  // acknowledged originals, free after the cycle
  Cycle last_arrival_ = 0;                         // of the latest item sent on `out_`
  std::uint32_t burst_left_ = 0;
  std::vector<std::uint8_t> scratch_;
  PcapWriter* pcap_ = nullptr;
  Counter &frames_sent_, &frames_replayed_, &frames_corrupted_, &frames_dark_, &controls_sent_, &controls_lost_,
      &bad_fcs_, &out_of_order_, &duplicates_, &delivered_, &payload_delivered_;
  // Recovery time of corrupted frames: first send of a frame that was corrupted -> its resend.
  std::deque<std::pair<std::uint32_t, Cycle>> corrupted_sends_;
  std::uint64_t recovery_sum_ = 0, recoveries_ = 0;
  bool sent_a_frame_ = false;
  std::uint64_t first_frame_start_ = 0, last_frame_end_ = 0;
  std::uint64_t frame_bytes_ = 0, frame_line_bytes_ = 0, control_bytes_ = 0, control_bytes_at_last_frame_ = 0;
};

}  // namespace xy::link
