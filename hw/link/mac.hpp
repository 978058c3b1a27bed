// Mac: one end of a link's MAC and LLR, on the clock of its line. Every link of Xingyun that
// carries frames runs a Mac at each end over a line: the composed PHY of a Lingyun port
// (hw/phy/phy.hpp) or the abstract serial line of the link-level scenarios (serial_line.hpp).
//
// Cycle contract. Each cycle the TX hands the line at most one item (when the line's channel
// has room): first a due LLR control frame (NACK, ACK, INIT), then a flow-control message from
// this side's PortFc (a CBFC CC_Update only once every frame it counted is ahead of it for good:
// taken and, with LLR, acknowledged or flushed), then a frame being replayed, then a new frame
// from the core (when LLR has room for it). Every item is a wire frame of real bytes with a real
// CRC-32 (wire.hpp; a phantom frame's, an LLR set's and a CF_Update's are made when something
// reads them: seal_data, seal_control). The RX takes what the line delivers, checks the FCS (a
// frame the line damaged fails it; one the PHY marked intact, delivered as sent, passes without
// the CRC being computed: same outcome, less work), passes control messages on, data frames
// through LLR, and hands data frames to the core in order, one per cycle, with CC_Updates in
// order behind them: store-and-forward (a frame is handed on after its last byte and its FCS
// check). Without LLR a frame with a bad FCS is lost here (counted); the layer above must recover
// it.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hw/link/flow_control.hpp"
#include "hw/link/llr.hpp"
#include "hw/link/pcap.hpp"
#include "kernel/channel.hpp"
#include "kernel/packet.hpp"
#include "kernel/ring.hpp"
#include "kernel/stats.hpp"
#include "kernel/waves.hpp"

namespace xy::link {

struct MacConfig {
  bool llr = true;      // LLR on this hop; without it frames with a bad FCS are lost (counted)
  LlrConfig llr_config;  // in cycles of the MAC's clock
  // LLR starts up, no INIT exchanged: for LLR's state machines run end to end, whose ends are
  // connected before traffic as queue pairs are (an INIT over an end-to-end loop is not sent).
  bool connected = false;
};

// The LLR ends a MAC uses (RTL twins, say: rtl/link/drop_in.hpp); null ones are the C++ models.
struct LlrEnds {
  std::unique_ptr<LlrTransmitter> tx;
  std::unique_ptr<LlrReceiver> rx;
};

class Mac : public Core {
 public:
  // From and to the core: data frames, and flow-control messages (to and from its PortFc; null
  // on a link without flow control); to and from the line: wire frames.
  Mac(std::string name, const MacConfig& config, LlrEnds ends, Channel<Packet*>& from_core, Channel<Packet*>& to_core,
      Channel<FcMessage>* fc_from_core, Channel<FcMessage>* fc_to_core, Channel<Packet*>& to_line,
      Channel<Packet*>& from_line, PacketPool& pool, Stats& stats);
  void eval() override;  // no commit: see schedule()

  // Writes every data frame this MAC hands its line (replays too) as the Ethernet frame it
  // carries, with its FCS (the LLR header, carried in the preamble on a real line, left out).
  void capture_to(PcapWriter* writer) { pcap_ = writer; }
  // The stages a data frame opens here (Packet::advance): on its way to the line, and once
  // delivered, in the FIFO to the core. None unless a system names them.
  struct Stages {
    Stage tx = kNoStage, to_core = kNoStage;
  };
  void set_stages(const Stages& s) { stages_ = s; }
  const LlrTransmitter& llr_tx() const { return *tx_; }  // the models or their twins
  const LlrReceiver& llr_rx() const { return *rx_; }
  std::uint64_t delivered() const { return delivered_.value(); }
  std::uint64_t frames_lost() const { return lost_.value(); }  // bad FCS without LLR
  // Nothing kept for replay, nothing waiting for the core or the line.
  bool idle() const;
  // Offers its state to the waves under its name: the LLR ends' (.llr_tx, .llr_rx, the models'
  // or their twins') and .delivered.
  void probe(Waves& waves) const;

 private:
  // An evaluation with the LLR ends as their types: the models' (LlrTx and LlrRx are final, so
  // every call is direct, the small ones inlined) or the interfaces, when an end is a twin.
  // One function once inlined: a call each would save and restore the registers every cycle.
  template <class Tx, class Rx>
  [[gnu::always_inline]] void step(Tx& tx, Rx& rx);
  [[gnu::noinline]] void eval_twins();  // an end is a twin: out of the models' way
  template <class Tx, class Rx>
  [[gnu::always_inline]] void receive(Tx& tx, Rx& rx);
  template <class Rx>
  [[gnu::always_inline]] void take_data(Rx& rx, Packet* wire, std::uint32_t seq);  // a good data frame
  template <class Tx, class Rx>
  [[gnu::always_inline]] void schedule(Tx& tx, Rx& rx);  // the next cycle it must be ticked at
  template <class Tx, class Rx>
  bool transmit(Tx& tx, Rx& rx);  // true if it handed the line an item
  template <class Message>
  Packet* control_frame(const Message& m);  // a frame carrying the message
  [[gnu::always_inline]] void to_line(Packet* data_frame);  // captured on the way
  void capture(Packet& data_frame);
  bool cc_may_go(std::size_t kept) const;

  // What an evaluation reads comes first, in a few cache lines (the LLR models among them); what
  // it seldom reads after.
  LlrTransmitter* tx_;  // tx_model_ or the twin
  LlrReceiver* rx_;
  Channel<Packet*>& from_core_;
  Channel<Packet*>& to_core_;
  Channel<FcMessage>* fc_from_core_;
  Channel<FcMessage>* fc_to_core_;
  Channel<Packet*>& to_line_;
  Channel<Packet*>& from_line_;
  PacketPool& pool_;
  Ring<Packet*> deliver_;         // data frames for the core and CC_Updates for its PortFc, in order
  std::uint64_t accepted_ = 0;    // data frames taken from the core
  Cycle timer_wake_ = 0;          // the LLR timers' wake-up pending, if after now
  const bool llr_;                // config_.llr
  bool llr_control_sent_ = false;  // this cycle
  bool waiting_for_line_ = false;  // this cycle: no credit for the line
  bool llr_full_ = false;          // this cycle: a frame from the core that LLR has no room for
  bool cc_waiting_ = false;        // held_cc_ holds a CC_Update not yet sent
  Ring<FcMessage> fc_inbox_;       // received messages for the core
  LlrTx tx_model_;
  LlrRx rx_model_;
  LlrEnds twins_;  // when `ends` gave them
  Stages stages_;
  FcMessage held_cc_;  // a CC_Update waiting for the frames it counted, while cc_waiting_
  Counter &sent_, &replayed_, &controls_, &bad_data_, &bad_control_, &lost_, &delivered_;
  PcapWriter* pcap_ = nullptr;
  MacConfig config_;
  std::vector<std::uint8_t> scratch_, captured_;
};

}  // namespace xy::link
