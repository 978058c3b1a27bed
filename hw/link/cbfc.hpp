// Credit-based flow control (CBFC) of the OLink/UEC link layer, as plain cores (no SystemC): the
// port shell calls them with its cycle count and carries their messages.
//
// Public anchor: UEC 1.0 §5.2, as summarised by the OCP SAI CBFC proposal
// (opencomputeproject/SAI, doc/CBFC/SAI-Credit_Based_Flow_Control.md). Per virtual channel both
// ends keep wrap-around counters (counter_bits wide) of credits, one credit = credit_bytes of
// receive buffer, a frame costing ceil((bytes + overhead) / credit_bytes):
//  - the sender counts credits consumed (S_CC) as it sends and learns credits freed (S_CF) from
//    the receiver; credits in use = S_CC - S_CF never exceed the VC's buffer (the credit limit);
//  - the receiver counts credits consumed (R_CC) as frames arrive and freed (R_CF) as they leave
//    its buffer; R_CC - R_CF is its occupancy.
// Messages, both carrying absolute counters, so a lost one is repaired by any later one:
//  - CF_Update, receiver -> sender, an 8-byte control ordered set with R_CF of one VC. Sent when
//    a VC has update_spacing_bytes of freed credits unreported, or some freed credits unreported
//    for update_timer_cycles since its last CF_Update, and re-sent unchanged every refresh_cycles
//    (the CF max spacing) so that a lost one is replaced even when nothing more is freed;
//  - CC_Update, sender -> receiver, a 64-byte packet with S_CC of every VC, every
//    resync_period_cycles. The receiver sets R_CF += S_CC - R_CC and R_CC = S_CC: credits of data
//    frames lost on the wire (FEC/FCS drops) never reached the buffer and are freed here, which
//    nothing else would do. It must travel in order with the data frames of the link.
// Updates that would move a counter backwards (stale, reordered, or implausible: more than could
// be outstanding) are ignored; this is unambiguous because a buffer is below half the counter
// range, which validate() enforces.
//
// VC numbers are checked (std::out_of_range) by the calls that change state and by can_send();
// the read-only accessors trust them.
//
// Cycle contract: every call takes effect at once; poll() returns at most one message per call,
// and returns one exactly when now >= next_timer(). Exact: credit arithmetic,
// counter wrap, message scheduling. Abstracted: message encodings (only their wire sizes), shared
// credit pools and per-port limits (each VC has its own buffer here).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernel/config.hpp"
#include "kernel/units.hpp"
#include "kernel/waves.hpp"

namespace xy::link {

// Defaults from the SAI proposal unless marked "model": credit size, overhead, counter width,
// CF min/max spacing, CC timer, message sizes. Cycle counts assume a 1 GHz clock.
struct CbfcConfig {
  int vcs = 8;                                // virtual channels, 1..32
  std::uint32_t credit_bytes = 128;           // buffer bytes per credit, 1..65535
  std::int32_t overhead_bytes = 0;            // added to every frame's size, -16..127
  std::uint32_t counter_bits = 20;            // width of the wrap-around counters, 8..32
  // Receive buffer per VC, which is also the sender's credit limit (model: 128 KiB each).
  std::vector<std::uint32_t> buffer_credits = std::vector<std::uint32_t>(8, 1024);
  std::uint32_t update_spacing_bytes = 6400;  // freed bytes that make a CF_Update due, 800..256 KiB
  Cycle update_timer_cycles = 500;            // model: how long fewer freed bytes may wait
  Cycle refresh_cycles = 2622;                // CF max spacing, 256 KiB, as line time at 800 Gb/s
  Cycle resync_period_cycles = 256000;        // CC_Update timer, 256 us
  std::uint32_t cf_update_bytes = 8;          // a control ordered set
  std::uint32_t cc_update_bytes = 64;         // a minimum-size packet

  // Throws ConfigError naming `prefix`.field, the value and what is allowed.
  void validate(const std::string& prefix = "cbfc") const;
  // Credits a frame of `bytes` costs: ceil((bytes + overhead) / credit_bytes), at least one.
  std::uint32_t credits_for(std::uint32_t bytes) const;
  std::uint32_t counter_mask() const;  // 2^counter_bits - 1
  // Throws ConfigError unless every VC's buffer holds a frame of `max_frame_bytes` (`frame`
  // names where that size comes from, e.g. "traffic.max_bytes"): a smaller one never sends it.
  void check_holds_frame(std::uint32_t max_frame_bytes, const std::string& frame,
                         const std::string& prefix = "cbfc") const;
};

// The cbfc.* parameters, declared once for every port that runs CBFC.
struct CbfcParams {
  CbfcConfig config;                 // its timers in cycles only through on_clock()
  std::uint32_t buffer_credits = 0;  // per VC; 0: sized per link, twice the credit loop (sized_for)
  Time update_timer = 0, refresh = 0, resync = 0;
  bool rtl = false;                  // cbfc.impl=rtl: the sending end is the RTL twin
  static CbfcParams declare(Config& c, int vcs);
  CbfcConfig on_clock(Time period) const;  // with its timers in cycles of `period`
  // The receive buffer per VC of a link whose credit loop needs `needed` credits.
  std::uint32_t sized_for(std::uint64_t needed) const {
    return buffer_credits ? buffer_credits : static_cast<std::uint32_t>(2 * needed);
  }
};

struct CreditUpdate {
  enum Kind { kCf, kCc };
  Kind kind = kCf;
  int vc = -1;                          // kCf: its VC; kCc: -1 (every VC)
  std::uint32_t freed = 0;              // kCf: its R_CF (one counter: the message allocates nothing)
  std::vector<std::uint32_t> counters;  // kCc: S_CC of VC 0, 1, ...
  std::uint32_t wire_bytes = 0;
};

// The sending end of one port as the port sees it: may a frame go, and what the receiver has
// freed. Two implementations: the C++ model below, and its RTL twin (rtl/link/), which a
// scenario drops in in its place.
class CreditSender {
 public:
  virtual ~CreditSender() = default;
  virtual bool can_send(int vc, std::uint32_t bytes) const = 0;
  virtual void on_send(int vc, std::uint32_t bytes) = 0;  // throws std::logic_error without the credits
  // A CF_Update's freed counter; returns false (and ignores it) when it would move S_CF
  // backwards or free more than is in use.
  virtual bool on_cf_update(int vc, std::uint32_t freed_counter) = 0;
  // A CC_Update when the resync period has run out since the last one.
  virtual std::optional<CreditUpdate> poll(Cycle now) = 0;
  virtual Cycle next_timer() const = 0;
  virtual std::uint32_t consumed(int vc) const = 0;  // S_CC
  virtual std::uint32_t freed(int vc) const = 0;     // S_CF
  virtual const CbfcConfig& config() const = 0;
  std::uint32_t in_use(int vc) const { return (consumed(vc) - freed(vc)) & config().counter_mask(); }
  std::uint32_t credits_available(int vc) const { return config().buffer_credits[vc] - in_use(vc); }
  // Offers per VC `prefix`.vcN.credits (available), .consumed (S_CC) and .freed (S_CF); a twin
  // adds its RTL ports under `prefix`.rtl.
  virtual void probe(Waves& waves, const std::string& prefix) const;
};

class CbfcSender final : public CreditSender {
 public:
  explicit CbfcSender(CbfcConfig config);  // validates

  bool can_send(int vc, std::uint32_t bytes) const override;
  void on_send(int vc, std::uint32_t bytes) override;
  bool on_cf_update(int vc, std::uint32_t freed_counter) override;
  std::optional<CreditUpdate> poll(Cycle now) override;
  Cycle next_timer() const override { return next_cc_; }
  std::uint32_t consumed(int vc) const override { return consumed_[vc]; }
  std::uint32_t freed(int vc) const override { return freed_[vc]; }
  const CbfcConfig& config() const override { return config_; }

 private:
  // What a port's every cycle reads (the timer, the counters) first, the config after.
  Cycle next_cc_;
  std::uint32_t mask_;
  std::vector<std::uint32_t> consumed_, freed_;
  CbfcConfig config_;
};

// The receiving end of one port: buffer occupancy per VC and the CF_Updates that return it.
class CbfcReceiver {
 public:
  explicit CbfcReceiver(CbfcConfig config);  // validates

  // A data frame stored in VC `vc`'s buffer; returns the credits of it beyond the buffer (0 when
  // it fits): an overflow — the sender broke the protocol, or the buffer is smaller than the
  // credits granted — which the caller reports. Counted all the same, so its drain balances.
  std::uint32_t on_receive(int vc, std::uint32_t bytes);
  // A frame of `bytes` left the buffer; throws std::logic_error if more than is buffered.
  void on_drain(int vc, std::uint32_t bytes);
  // A CC_Update's consumed counter; returns false (and ignores it) when it is behind R_CC or
  // claims more lost credits than the buffer could have granted.
  bool on_cc_update(int vc, std::uint32_t consumed_counter);
  // The next CF_Update due: the VC with the most unreported credits once they reach the spacing;
  // else one whose unreported credits have waited update_timer_cycles since its last update;
  // else a refresh of the VC whose last update is oldest, once it is refresh_cycles old.
  std::optional<CreditUpdate> poll(Cycle now);
  // The cycle from which a drain of `credits` on `vc` makes a CF_Update due, `pending` credits
  // drained on it before not yet counted: 0 once it reaches the spacing, the VC's update timer
  // when it is the first unreported, ~0 when it moves no timer (the VC's runs already).
  Cycle due_after_drain(int vc, std::uint32_t pending, std::uint32_t credits) const;
  Cycle next_timer() const {  // the earliest cycle poll() would return something
    if (next_timer_stale_) {
      next_timer_ = earliest_update();
      next_timer_stale_ = false;
    }
    return next_timer_;
  }

  std::uint32_t occupancy(int vc) const { return (consumed_[vc] - freed_[vc]) & mask_; }
  std::uint32_t unreported(int vc) const { return (freed_[vc] - reported_[vc]) & mask_; }
  std::uint32_t consumed(int vc) const { return consumed_[vc]; }  // R_CC
  std::uint32_t freed(int vc) const { return freed_[vc]; }        // R_CF
  // Per VC `prefix`.vcN.occupancy, .consumed (R_CC) and .freed (R_CF).
  void probe(Waves& waves, const std::string& prefix) const;
  const CbfcConfig& config() const { return config_; }

 private:
  // Cycles after its last CF_Update that a VC below the spacing waits for its next one.
  Cycle wait(int vc) const;
  CreditUpdate cf_update(int vc, Cycle now);
  Cycle earliest_update() const;

  // next_timer(), kept until what it depends on (freed, reported, last update) changes: a port
  // asks every cycle it is ticked, and a frame's arrival changes none of them.
  mutable Cycle next_timer_ = 0;
  mutable bool next_timer_stale_ = true;
  std::uint32_t mask_;
  std::uint32_t spacing_credits_;  // unreported credits that make a CF_Update due at once
  std::vector<std::uint32_t> consumed_, freed_, reported_;
  std::vector<Cycle> last_update_;
  CbfcConfig config_;  // after what a port's every cycle reads
};

// A CBFC overflow in words: `port`, the VC, the cycle, how many credits beyond the buffer.
std::string cbfc_overflow(const std::string& port, const CbfcReceiver& r, int vc, std::uint32_t bytes,
                          std::uint32_t beyond, Cycle now);

// Credits one VC needs to keep a line of `line_gbps` busy over a credit loop of `round_trip`
// (wire both ways plus pipelines): round trip x bandwidth, one maximum frame, and the freed
// credits the receiver holds back until the CF spacing is reached. Small frames need more, as
// rounding up to whole credits and the overhead inflate them.
std::uint64_t required_buffer_credits(const CbfcConfig& config, double line_gbps, Time round_trip,
                                      std::uint32_t max_frame_bytes);
// Validates `config`, then "" when every VC's buffer covers required_buffer_credits(); else a
// message naming the under-provisioned VCs and the size needed (and, where that exceeds what the
// counters can track, that CBFC does not reach this far).
std::string check_buffer(const CbfcConfig& config, double line_gbps, Time round_trip,
                         std::uint32_t max_frame_bytes);

}  // namespace xy::link
