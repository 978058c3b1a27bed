// PortFc: the flow control of one side of a link, on that side's core clock — the sending end of
// the outgoing direction (the gate the feeding core asks) and the receiving end of the incoming
// one (the monitor the fed core reports to). Every flow-controlled link of Xingyun has a PortFc
// at each end: composed ports, the switch rigs and link-cbfc.
//
// Cycle contract. Messages (CBFC CF_Updates upstream and CC_Updates downstream, PFC pause frames
// upstream) leave on `out` as soon as the CBFC and PFC cores' timers or thresholds say so, one a
// cycle in order, and take effect in the cycle they are popped from `in`; whatever carries them
// between the two channels (a MAC and PHY, a control path of fixed latency) is the line's
// business. A CC_Update takes effect after every arrival of its cycle; on a line that may deliver
// it ahead of frames it counted (a control path beside the data), only once they have arrived.
// A pause holds from its arrival for its quanta (converted to cycles, rounded up); the feeding
// core is woken when credits come, a message arrives or a pause runs out. The CBFC timers (CF
// update and refresh, CC resync) run from the port's first cycle: the first call or message.
// Calls (arrivals, drains) count from the cycle after them. CBFC's wait, unwoken, for the port's
// next cycle, which comes before any message they could change: a drain wakes the port for the
// cycle its CF_Update falls due, when it moves that.
//
// Back-pressure as the feeding core feels it, per VC (the same measure for CBFC and PFC): a hold
// starts at the first can_send() refused for want of credits or for a pause, and ends at the
// first can_send() that lets that VC go. It is exact as long as the feeder asks again whenever
// it could send (a switch egress asks every cycle its line is free, a host whenever it is woken).
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hw/link/cbfc.hpp"
#include "hw/link/flow_control.hpp"
#include "hw/link/overflow.hpp"
#include "hw/link/pfc.hpp"
#include "kernel/channel.hpp"
#include "kernel/clock.hpp"
#include "kernel/ring.hpp"
#include "kernel/stats.hpp"

namespace xy::link {

// When a CBFC receiver frees a packet's credits: once the core has taken it into its shared
// buffer (credits guard a landing area), or once it has left (credits guard its whole stay).
// PFC always counts a packet from arrival to departure, as port buffer usage.
enum class CreditRelease { kAdmission, kDeparture };

struct PortFcOptions {
  CreditRelease release = CreditRelease::kDeparture;
  // The line carries CC_Updates beside the data, not in order with it (a rig's control path).
  bool cc_may_overtake_frames = false;
  // The FIFO to this side's MAC, if any: the gate also keeps `fifo_frames` or fewer in it.
  Channel<Packet*>* to_mac = nullptr;
  std::size_t fifo_frames = 0;
  // The halves this end runs: a link with data one way has a sending end and a receiving end.
  bool sends = true, receives = true;
};

class PortFc : public Core, public EgressGate, public IngressMonitor {
 public:
  // `cbfc`: in cycles of `clock`. `credits`: the CBFC sending end to use (an RTL twin keeping
  // this clock's time, say); null for link::CbfcSender.
  PortFc(std::string name, FcMode mode, const CbfcConfig& cbfc, const PfcConfig& pfc, const Clock& clock, Stats& stats,
         Channel<FcMessage>& out, Channel<FcMessage>& in, PortFcOptions options = {},
         std::unique_ptr<CreditSender> credits = nullptr);
  void set_upstream(Core* feeder) { upstream_ = feeder; }

  bool can_send(const Packet& p) const override;
  void on_send(const Packet& p) override;
  void on_arrive(const Packet& p) override;
  void on_admit(std::uint32_t bytes, std::uint8_t vc) override;
  void on_depart(std::uint32_t bytes, std::uint8_t vc) override;
  bool holds_back() const override { return mode_ != FcMode::kNone; }
  void eval() override;
  void commit() override;

  FcMode mode() const { return mode_; }
  std::string overflow() const;  // "" unless the buffer overflowed (calls not yet taken in too)
  // CBFC conservation against the far end's sender: credits this receiver counted in (calls not
  // yet taken in too) that the sender never consumed (a frame counted twice), in words naming the
  // VC; or "".
  std::string counted_beyond(const PortFc& far_sender) const;
  // Cycles the feeder had a frame of `vc` that flow control held back, up to now (a hold still
  // open counts up to now); pauses with a non-zero time this side sent upstream.
  std::uint64_t held_cycles(int vc) const;
  // held_cycles() counts no cycle from `end` on (a testbench's traffic window); the counter
  // .held_cycles counts them all.
  void count_holds_until(Cycle end) { holds_until_ = end; }
  int vcs() const { return static_cast<int>(held_vc_.size()); }
  std::uint64_t xoffs() const { return xoffs_ ? xoffs_->value() : 0; }
  std::uint64_t pause_frames() const { return pause_frames_; }  // XOFF and XON
  // Pause frames sent upstream that paused `priority` (a non-zero time for it).
  std::uint64_t xoffs(int priority) const { return xoffs_by_priority_[static_cast<std::size_t>(priority)]; }
  // Why a frame of `bytes` on `vc` may not go now (credits short, paused), in words; or "".
  std::string held_back(int vc, std::uint32_t bytes) const;
  // While the feeder is held back on `vc` (from a refusal for credits or a pause until it may
  // go): held_back() for the frame it was last refused; "" when it is not held.
  std::string holding(int vc) const;
  // CC_Updates the sending half sent and the receiving half was given (the rest lost on the way
  // or still on it).
  std::uint64_t cc_updates_sent() const { return cc_updates_ ? cc_updates_->value() : 0; }
  std::uint64_t cc_updates_arrived() const { return cc_arrived_; }
  // Offers the halves it runs to the waves under its name: CBFC's .cbfc_tx (the model or its
  // twin) and .cbfc_rx, or PFC's .pfc_tx.prioN.paused and .pfc_rx.prioN.occupancy. With waves
  // on, every call is taken in at the port's next cycle, as the waves show it.
  void probe(Waves& waves);
  const CreditSender& cbfc_sender() const { return *cbfc_tx_; }  // the model or its twin
  // The receiving half as it stands with the calls not yet taken in: what a snapshot, a stall's
  // report, counts.
  CbfcReceiver cbfc_receiver_with_calls() const;
  const PfcReceiver& pfc_receiver() const { return pfc_rx_; }

 private:
  bool cc_due() const;
  bool calls_wait() const;
  void register_drain(std::uint32_t bytes, std::uint8_t vc);
  void apply_registered();
  struct Registered;
  void take(CbfcReceiver& rx, OverflowLog& log, const Registered& r) const;
  CbfcReceiver with_calls(OverflowLog& log) const;  // the receiver with the calls not yet taken in
  [[gnu::cold, gnu::noinline]] void record_overflow(const CbfcReceiver& rx, OverflowLog& log, const Registered& r,
                                                    std::uint32_t beyond) const;

  // What a cycle of the port and the feeder's can_send() read comes first; PFC's halves and the
  // bookkeeping read seldom after.
  FcMode mode_;
  PortFcOptions options_;
  std::unique_ptr<CreditSender> cbfc_tx_;
  Channel<FcMessage>& out_;
  Channel<FcMessage>& in_;
  Core* upstream_ = nullptr;
  // What the cores around called, taken in at this port's next cycle.
  struct Registered {
    Cycle at;
    enum Kind : std::uint8_t { kArrive, kDrain } kind;
    std::uint8_t vc;
    std::uint32_t bytes;
  };
  Ring<Registered> registered_;
  Ring<FcMessage> outbox_;
  std::vector<FcMessage> arrived_;  // from the line this cycle, taken in at commit
  struct ArrivedCc {
    Cycle at;
    FcMessage message;
  };
  Ring<ArrivedCc> arrived_cc_;  // CC_Updates, applied from the cycle after they came, once due
  std::uint64_t frames_sent_ = 0, frames_arrived_ = 0;
  bool timers_armed_ = false;  // from the port's first cycle on
  bool probed_ = false;        // its counters in the waves
  mutable bool fifo_full_ = false;       // the feeder was refused for want of room in the FIFO
  static constexpr Cycle kNotBlocked = ~Cycle{0};
  // Per VC: where the open hold began, and cycles of closed holds. Changed by can_send(), a
  // query, because a refusal is the event that starts a hold.
  mutable std::vector<Cycle> blocked_since_;
  mutable std::vector<std::uint64_t> held_vc_;
  mutable std::vector<std::uint32_t> refused_bytes_;  // per VC: the frame refused last
  std::vector<std::uint32_t> drained_untaken_;        // per VC: CBFC credits of drains not yet taken in
  Counter *xoffs_ = nullptr, *cf_updates_ = nullptr;  // the receiving half's
  Counter *cc_updates_ = nullptr, *held_ = nullptr;   // the sending half's; held_: all VCs
  CbfcReceiver cbfc_rx_;
  PfcSender pfc_tx_;
  PfcReceiver pfc_rx_;
  std::uint64_t pause_frames_ = 0;
  std::array<std::uint64_t, 8> xoffs_by_priority_{};
  std::uint64_t cc_arrived_ = 0;
  Cycle holds_until_ = ~Cycle{0};
  Cycle hold_clip(Cycle c) const { return std::min(c, holds_until_); }
  OverflowLog overflow_;
};

}  // namespace xy::link
