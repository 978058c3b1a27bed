// QueuePair: one RC queue pair of the RDMA engine, both halves (requester and responder), as a
// plain C++ core driven by packets and time. It decides what to send and what a received
// packet means; the NIC around it moves the bytes (reads payload from host memory, encodes
// packets with roce.hpp, schedules QPs, paces them) and owns the clock.
//
// Requester: work requests (SEND, WRITE, READ) are cut into packets of the path MTU, each with
// the next 24-bit PSN (a READ request takes one PSN per response packet it asks for); the last
// packet of a message and every `ack_req_every`-th packet ask for an ACK (BTH A bit); at most
// `max_reads` READs are outstanding, and the send queue waits in order behind a READ that would
// exceed it. A
// cumulative ACK retires what it covers; a NAK (PSN sequence error) retires what lies before its
// PSN and sends everything from there again (Go-Back-N); so does the retransmit timer, 4.096 µs ×
// 2^timeout_exp after the last progress while anything is unacknowledged. Each timeout counts
// against `retry_count` (≤ 7, as the 3-bit field of IB); one too many ends the QP in the named
// error kRetryExceeded, every outstanding work request completed with that status. READ responses
// are acknowledgements too; a gap in them sends the READ again from the missing PSN, for the
// bytes not yet received. Completions come in order.
//
// Selective repeat (an option): a NAK sends again only the PSN it names, not everything after
// it (a timeout still goes back to the oldest unacknowledged). It needs a receiver that keeps
// what follows a hole (a reorder window), which NAKs the hole behind a NAKed one as soon as that
// fills. An IB NAK names one PSN and acknowledges all before it, so a burst of losses is
// recovered one round trip a packet.
//
// Responder: packets in PSN order are executed (payload placed by address for WRITE, into the
// posted receive buffer for SEND; a READ request queues its responses) and acknowledged when
// they ask; a duplicate is acknowledged again (a duplicate READ request is answered again from
// its PSN). A packet ahead of the expected PSN:
//  - without a reorder window, is dropped and answered by one NAK per hole;
//  - with one (`reorder_window` packets past the expected PSN), is kept: WRITE payload is placed
//    at its address at once when its message's first packet (whose RETH gives the address and
//    length) has arrived, in order or not, and kept until then otherwise; SEND payload and READ
//    requests wait for their turn. As the hole fills, what was kept is executed in PSN order, so
//    messages are delivered (on_delivery) and completed in order. A hole is taken for a loss and
//    NAKed when it is `reorder_timeout` old or a packet falls beyond the window (dropped).
//
// Not modelled: UC/UD, atomics, immediates, RNR (a SEND without a posted receive is a
// logic_error, the testbench's mistake), memory keys (RETH's R_Key is carried, not checked).
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "hw/nic/roce.hpp"
#include "kernel/stats.hpp"
#include "kernel/units.hpp"

namespace xy::nic {

// Host memory as the RDMA engine sees it through DMA.
class Memory {
 public:
  virtual ~Memory() = default;
  virtual void read(std::uint64_t addr, std::uint8_t* out, std::size_t size) const = 0;
  virtual void write(std::uint64_t addr, const std::uint8_t* data, std::size_t size) = 0;
};

struct QpConfig {
  std::uint32_t mtu = 4096;          // path MTU, payload bytes a packet: 256, 512, 1024, 2048 or 4096
  int timeout_exp = 5;               // retransmit timeout 4.096 µs × 2^timeout_exp (IB's Local ACK Timeout)
  int retry_count = 7;               // timeouts without progress before kRetryExceeded; ≤ 7
  std::uint32_t ack_req_every = 16;  // the A bit on every n-th packet, and on each message's last
  std::uint32_t max_outstanding = 1u << 16;  // PSNs sent and not acknowledged
  std::uint32_t max_reads = 16;      // READ requests outstanding (IB's initiator depth, max_rd_atomic)
  std::uint32_t reorder_window = 0;  // packets kept past a hole; 0: none (dropped and NAKed)
  Time reorder_timeout = 8 * kUs;    // a hole this old is NAKed
  bool selective_repeat = false;     // resend only what a NAK or timeout names (needs a reorder window)
  void validate(const std::string& prefix) const;  // throws ConfigError naming prefix.key
  Time retransmit_timeout() const { return (4096 * kNs) << timeout_exp; }
};

enum class Verb : std::uint8_t { kSend, kWrite, kRead, kRecv };
enum class WcStatus : std::uint8_t { kSuccess, kRetryExceeded, kFlushed };
const char* to_string(WcStatus s);

struct WorkRequest {
  std::uint64_t id = 0;
  Verb verb = Verb::kWrite;
  std::uint64_t local_addr = 0;   // SEND, WRITE: source; READ: destination
  std::uint64_t remote_addr = 0;  // WRITE, READ
  std::uint32_t rkey = 0;
  std::uint32_t length = 0;
};

struct Completion {
  std::uint64_t id = 0;
  Verb verb = Verb::kWrite;
  WcStatus status = WcStatus::kSuccess;
  std::uint32_t bytes = 0;
  Time at = 0;
};

// A packet the QP wants sent: its header (addresses and ports left for the NIC to fill) and
// where its payload is in local memory.
struct Outgoing {
  RoceHeader header;
  std::uint64_t payload_addr = 0;
  std::uint32_t payload_bytes = 0;
};

struct QpStats {
  std::uint64_t packets_sent = 0, retransmitted_packets = 0, retransmitted_bytes = 0, naks_sent = 0,
                naks_received = 0, timeouts = 0, duplicates = 0, out_of_order = 0, acks_sent = 0;
  std::uint64_t reordered = 0, placed_early = 0;  // kept past a hole; of them, WRITE payload placed at once
  std::uint32_t reorder_peak = 0;    // packets kept at once
};

// Where the payload of the packet a QP sends next is in local memory, and the message it is
// part of (a WRITE's or SEND's source, a READ's data at the responder).
struct PayloadRef {
  static constexpr Time kNotRead = ~Time{0};
  std::uint64_t addr = 0;
  std::uint32_t bytes = 0;
  std::uint64_t message_addr = 0;
  std::uint32_t message_bytes = 0;
  Time message_at = kNotRead;  // when the message's last byte is at the NIC, if it has been read
};

// A message the responder has received whole, in order: what the application may now read.
struct Delivery {
  Verb verb = Verb::kWrite;  // kWrite or kRecv (a SEND)
  std::uint64_t addr = 0;    // where its bytes are
  std::uint32_t bytes = 0;
  Time at = 0;
};

class QueuePair {
 public:
  QueuePair(std::uint32_t qpn, std::uint32_t remote_qpn, const QpConfig& config, Memory& memory,
            std::uint32_t first_psn = 0, std::uint32_t remote_first_psn = 0);

  // `payload_at`: when its payload is at the NIC to send (the host's DMA read; 0: at once).
  void post_send(const WorkRequest& wr, Time payload_at = 0);
  void post_recv(std::uint64_t id, std::uint64_t addr, std::uint32_t length);

  // The next packet to send at `now`: responses first (ACK/NAK, READ responses), then requests;
  // none when the window is full or nothing waits. `may_send_data` false holds new and resent
  // requests (a rate limiter's verdict) but not responses.
  std::optional<Outgoing> next(Time now, bool may_send_data = true);
  bool has_response() const { return !replies_.empty(); }
  bool response_is_data() const { return !replies_.empty() && replies_.front().read; }  // a READ response next
  bool has_request() const;  // a request packet would go now if paced
  // A packet for this QP arrived with its payload.
  void receive(const RoceHeader& h, const std::uint8_t* payload, std::uint32_t size, Time now);
  // The retransmit timer's deadline, or ~0 when nothing is outstanding.
  Time next_timer() const;
  void tick(Time now);  // fires the timer if due
  Time retransmit_deadline() const;  // the retransmit timer's alone (not the reorder window's)
  // The path changed (a failover): what is unacknowledged is taken for lost and sent again from
  // the oldest, and the timer starts afresh; unlike a timeout, not counted against retry_count.
  void path_changed(Time now);
  // When an ACK last acknowledged something new, or the first packet left with nothing
  // outstanding (the retransmit timer counts from the later of it and the last timeout).
  Time last_acknowledged() const { return last_acked_; }
  bool outstanding() const { return sent_end_ != una_psn_; }  // packets sent and not acknowledged
  std::uint32_t unacknowledged_psn() const { return una_psn_; }  // the oldest
  std::uint32_t sent_end_psn() const { return sent_end_; }        // one past the highest sent

  std::deque<Completion>& completions() { return completions_; }
  const std::deque<Completion>& completions() const { return completions_; }
  bool failed() const { return failed_; }
  std::uint32_t qpn() const { return qpn_; }
  std::uint32_t remote_qpn() const { return remote_qpn_; }
  std::uint32_t expected_psn() const { return epsn_; }
  std::uint32_t next_psn() const { return next_psn_; }  // a new packet's (a whole posted message has its PSNs)
  std::uint32_t send_psn() const { return send_psn_; }  // the next to put on the wire
  // PSNs on the wire and not acknowledged (what a window counts): from the oldest
  // unacknowledged to the next to send.
  std::uint32_t unacknowledged_packets() const { return static_cast<std::uint32_t>(psn_diff(send_psn_, una_psn_)); }
  const QpStats& stats() const { return stats_; }
  bool idle() const;  // nothing to send, nothing outstanding
  // Packets kept in the reorder window, sampled as each request packet arrived (itself counted):
  // quantile q.
  std::uint32_t reorder_occupancy(double q) const { return static_cast<std::uint32_t>(reorder_samples_.quantile(q)); }
  std::function<void(const Delivery&)> on_delivery;  // each message received whole, in order
  // Each completion as it is made, before it is kept in completions(): the NIC's, which sets
  // when it is in the completion queue (its DMA) and reports it to the QP's CQ.
  std::function<void(Completion&)> on_complete;
  // The payload of the data packet next() would give now (a READ response, or a WRITE or SEND
  // packet; none for an ACK, a READ request or nothing to send).
  std::optional<PayloadRef> next_payload() const;
  // The READ whose response is next has its data read from local memory: at the NIC by `at`.
  void read_response_data_at(Time at);

 private:
  struct Request {
    WorkRequest wr;
    std::uint32_t first_psn = 0, packets = 0;
    std::uint32_t read_received = 0;  // READ: response packets placed, in order
    std::vector<bool> early;          // READ: responses placed ahead of a hole (reorder window)
    Time payload_at = 0;              // SEND, WRITE: when its payload is at the NIC
    bool acked = false;
  };
  // What the responder sends, in the order of the requests it answers (an ACK of a later PSN
  // must not overtake a READ's responses): an ACK or NAK, or the responses a READ still owes.
  struct Reply {
    bool read = false;
    std::uint32_t psn = 0;
    std::uint8_t syndrome = 0;  // ACK or NAK
    std::uint64_t addr = 0;     // READ: its data
    std::uint32_t bytes = 0, sent = 0;
    Time data_at = PayloadRef::kNotRead;  // READ: when its data is at the NIC
  };
  std::uint32_t packets_for(std::uint32_t bytes) const { return bytes ? (bytes + cfg_.mtu - 1) / cfg_.mtu : 1; }
  std::size_t index_of(std::uint32_t psn) const;  // of the request holding `psn`, or sq_.size()
  Outgoing request_packet(Request& r, std::uint32_t psn);
  void acknowledge(std::uint32_t psn_after, Time now);  // everything before psn_after arrived
  void complete(Completion c);
  void complete_in_order(Time now);
  void go_back(std::uint32_t psn);
  void ask_read_again(std::uint32_t psn);  // once per missing response; the timer covers the rest
  void fail(Time now);
  void respond(std::uint8_t syndrome, std::uint32_t psn);
  void resend(std::uint32_t psn);  // after a NAK or timeout: from psn on (Go-Back-N), or psn alone
  Outgoing reply_packet();
  // `placed`: its WRITE payload is in memory already (the reorder window placed it).
  void execute(const RoceHeader& h, const std::uint8_t* payload, std::uint32_t size, Time now, bool placed = false);
  void in_order(const RoceHeader& h, const std::uint8_t* payload, std::uint32_t size, Time now, bool placed);
  void keep(const RoceHeader& h, const std::uint8_t* payload, std::uint32_t size, Time now);
  void place_early(std::uint32_t first_psn, std::uint32_t packets, std::uint64_t va);
  Time hole_deadline() const;
  void read_response(const RoceHeader& h, const std::uint8_t* payload, std::uint32_t size, Time now);

  std::uint32_t qpn_, remote_qpn_;
  QpConfig cfg_;
  Memory& memory_;
  // Requester.
  std::deque<Request> sq_;  // posted and not completed, in order
  std::uint32_t next_psn_;  // the PSN a new packet gets
  std::uint32_t send_psn_;  // the next PSN to put on the wire (behind next_psn_ after a go-back)
  std::uint32_t una_psn_;   // the oldest PSN not acknowledged
  std::uint32_t sent_end_;  // one past the highest PSN sent
  std::uint32_t acked_to_;  // the furthest PSN an ACK or READ response acknowledged up to
  std::uint32_t read_rewind_ = ~0u;  // the READ response PSN last asked for again
  std::uint32_t reads_outstanding_ = 0;  // READs whose request went out, not yet complete
  std::uint32_t since_ack_req_ = 0;
  Time last_progress_ = 0;
  Time last_acked_ = 0;
  int retries_ = 0;
  bool failed_ = false;
  // Responder.
  std::uint32_t epsn_;
  std::uint32_t msn_ = 0;
  bool nak_pending_gap_ = false;  // a NAK was sent for epsn_; the next one waits for it to arrive
  std::uint64_t write_addr_ = 0;  // where the current WRITE's next packet goes
  struct Recv {
    std::uint64_t id, addr;
    std::uint32_t length, placed;
  };
  std::deque<Recv> rq_;
  std::uint64_t write_va_ = 0;  // the current WRITE's address and length, for its delivery
  std::uint32_t write_length_ = 0;
  // The reorder window: packet psn in slot psn % reorder_window, 1 to reorder_window ahead of epsn_.
  struct Kept {
    bool used = false, placed = false;
    RoceHeader header;
    std::uint32_t size = 0;
    std::vector<std::uint8_t> payload;  // until placed
  };
  std::vector<Kept> window_;
  std::uint32_t kept_ = 0;
  Time hole_since_ = 0;  // when the hole at epsn_ was first seen with packets kept past it
  struct Span {          // a WRITE whose first packet arrived: its PSNs and address
    std::uint32_t first_psn, packets;
    std::uint64_t va;
  };
  std::deque<Span> spans_;
  LatencyHistogram reorder_samples_{1};  // packets kept, not cycles
  std::deque<std::uint32_t> resend_;     // selective repeat: PSNs to send again, in order
  std::deque<Reply> replies_;
  std::deque<Completion> completions_;
  QpStats stats_;
};

}  // namespace xy::nic
