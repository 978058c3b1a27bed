#include "hw/nic/queue_pair.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "kernel/config.hpp"

namespace xy::nic {

void QpConfig::validate(const std::string& prefix) const {
  if (mtu != 256 && mtu != 512 && mtu != 1024 && mtu != 2048 && mtu != 4096)
    throw ConfigError(fmt::format("{}.mtu = {}: allowed 256, 512, 1024, 2048, 4096", prefix, mtu));
  if (retry_count < 0 || retry_count > 7)
    throw ConfigError(fmt::format("{}.retry_count = {}: allowed 0..7 (IB's 3-bit field)", prefix, retry_count));
  if (timeout_exp < 0 || timeout_exp > 31)
    throw ConfigError(fmt::format("{}.timeout_exp = {}: allowed 0..31 (4.096 us x 2^t)", prefix, timeout_exp));
  if (ack_req_every < 1) throw ConfigError(fmt::format("{}.ack_req_every = {}: allowed >= 1", prefix, ack_req_every));
  if (max_reads < 1) throw ConfigError(fmt::format("{}.max_reads = {}: allowed >= 1", prefix, max_reads));
  if (max_outstanding < 1 || max_outstanding > (1u << 23))
    throw ConfigError(fmt::format("{}.max_outstanding = {}: allowed 1..2^23 (half the PSN space)", prefix,
                                  max_outstanding));
}

const char* to_string(WcStatus s) {
  switch (s) {
    case WcStatus::kSuccess: return "success";
    case WcStatus::kRetryExceeded: return "retry exceeded";
    case WcStatus::kFlushed: return "flushed";
  }
  return "?";
}

QueuePair::QueuePair(std::uint32_t qpn, std::uint32_t remote_qpn, const QpConfig& config, Memory& memory,
                     std::uint32_t first_psn, std::uint32_t remote_first_psn)
    : qpn_(qpn), remote_qpn_(remote_qpn), cfg_(config), memory_(memory), next_psn_(first_psn & kPsnMask),
      send_psn_(next_psn_), una_psn_(next_psn_), sent_end_(next_psn_), epsn_(remote_first_psn & kPsnMask) {
  cfg_.validate("nic.qp");
}

void QueuePair::post_send(const WorkRequest& wr) {
  if (wr.verb == Verb::kRecv) throw std::logic_error("post_send: a receive goes to post_recv");
  if (failed_) {
    completions_.push_back({wr.id, wr.verb, WcStatus::kFlushed, 0, 0});
    return;
  }
  Request r{wr, next_psn_, packets_for(wr.length)};
  next_psn_ = psn_add(next_psn_, r.packets);
  sq_.push_back(r);
}

void QueuePair::post_recv(std::uint64_t id, std::uint64_t addr, std::uint32_t length) {
  rq_.push_back({id, addr, length, 0});
}

bool QueuePair::has_request() const {
  if (failed_ || send_psn_ == next_psn_ ||
      static_cast<std::uint32_t>(psn_diff(send_psn_, una_psn_)) >= cfg_.max_outstanding)
    return false;
  const Request& r = sq_[index_of(send_psn_)];
  const bool new_read = r.wr.verb == Verb::kRead && psn_diff(sent_end_, r.first_psn) <= 0;
  return !new_read || reads_outstanding_ < cfg_.max_reads;
}

bool QueuePair::idle() const { return sq_.empty() && replies_.empty(); }

std::size_t QueuePair::index_of(std::uint32_t psn) const {
  std::size_t k = 0;
  for (; k < sq_.size(); ++k) {
    const std::int32_t i = psn_diff(psn, sq_[k].first_psn);
    if (i >= 0 && static_cast<std::uint32_t>(i) < sq_[k].packets) break;
  }
  return k;
}

Outgoing QueuePair::request_packet(Request& r, std::uint32_t psn) {
  const auto i = static_cast<std::uint32_t>(psn_diff(psn, r.first_psn));
  const std::uint64_t offset = std::uint64_t{i} * cfg_.mtu;
  Outgoing o;
  RoceHeader& h = o.header;
  h.dest_qp = remote_qpn_;
  h.psn = psn;
  const bool first = i == 0, last = i + 1 == r.packets;
  if (r.wr.verb == Verb::kRead) {  // one request for the rest of the range
    h.opcode = opcode::kReadRequest;
    h.reth = Reth{r.wr.remote_addr + offset, r.wr.rkey, static_cast<std::uint32_t>(r.wr.length - offset)};
    return o;
  }
  const bool send = r.wr.verb == Verb::kSend;
  h.opcode = first && last ? (send ? opcode::kSendOnly : opcode::kWriteOnly)
             : first      ? (send ? opcode::kSendFirst : opcode::kWriteFirst)
             : last       ? (send ? opcode::kSendLast : opcode::kWriteLast)
                          : (send ? opcode::kSendMiddle : opcode::kWriteMiddle);
  if (!send && first) h.reth = Reth{r.wr.remote_addr, r.wr.rkey, r.wr.length};
  h.ack_req = last || ++since_ack_req_ >= cfg_.ack_req_every;
  if (h.ack_req) since_ack_req_ = 0;
  o.payload_addr = r.wr.local_addr + offset;
  o.payload_bytes = static_cast<std::uint32_t>(std::min<std::uint64_t>(cfg_.mtu, r.wr.length - offset));
  return o;
}

Outgoing QueuePair::reply_packet() {
  Reply& y = replies_.front();
  Outgoing o;
  RoceHeader& h = o.header;
  h.dest_qp = remote_qpn_;
  if (!y.read) {
    h.opcode = opcode::kAcknowledge;
    h.psn = y.psn;
    h.aeth = Aeth{y.syndrome, msn_};
    replies_.pop_front();
    return o;
  }
  const std::uint32_t n = packets_for(y.bytes), i = y.sent++;
  h.psn = psn_add(y.psn, i);
  const bool first = i == 0, last = i + 1 == n;
  h.opcode = first && last ? opcode::kReadResponseOnly
             : first      ? opcode::kReadResponseFirst
             : last       ? opcode::kReadResponseLast
                          : opcode::kReadResponseMiddle;
  if (first || last) h.aeth = Aeth{Aeth::kAck, msn_};
  const std::uint64_t offset = std::uint64_t{i} * cfg_.mtu;
  o.payload_addr = y.addr + offset;
  o.payload_bytes = static_cast<std::uint32_t>(std::min<std::uint64_t>(cfg_.mtu, y.bytes - offset));
  if (last) replies_.pop_front();
  return o;
}

std::optional<Outgoing> QueuePair::next(Time now, bool may_send_data) {
  if (!replies_.empty()) {
    ++stats_.packets_sent;
    return reply_packet();
  }
  if (!may_send_data || !has_request()) return std::nullopt;
  Request* r = &sq_[index_of(send_psn_)];
  if (sent_end_ == una_psn_) last_progress_ = now;  // the timer runs while anything is outstanding
  if (r->wr.verb == Verb::kRead && psn_diff(sent_end_, r->first_psn) <= 0) ++reads_outstanding_;
  Outgoing o = request_packet(*r, send_psn_);
  const bool again = psn_diff(send_psn_, sent_end_) < 0;
  send_psn_ = r->wr.verb == Verb::kRead ? psn_add(r->first_psn, r->packets) : psn_add(send_psn_, 1);
  if (psn_diff(send_psn_, sent_end_) > 0) sent_end_ = send_psn_;
  ++stats_.packets_sent;
  if (again) {
    ++stats_.retransmitted_packets;
    stats_.retransmitted_bytes += o.payload_bytes;
  }
  return o;
}

void QueuePair::acknowledge(std::uint32_t psn_after, Time now) {
  if (psn_diff(psn_after, una_psn_) <= 0 || psn_diff(psn_after, sent_end_) > 0) return;  // stale, or not sent
  // A READ is acknowledged by its responses only: an ACK beyond a READ whose responses were lost
  // stops at the first missing one, and the READ goes again from there.
  for (Request& r : sq_) {
    if (psn_diff(r.first_psn, psn_after) >= 0) break;
    if (r.wr.verb == Verb::kRead && r.read_received < r.packets) {
      const std::uint32_t missing = psn_add(r.first_psn, r.read_received);
      if (psn_diff(psn_after, missing) > 0) {
        psn_after = missing;
        ask_read_again(missing);
      }
      break;
    }
  }
  if (psn_diff(psn_after, una_psn_) <= 0) return;
  una_psn_ = psn_after;
  if (psn_diff(send_psn_, una_psn_) < 0) send_psn_ = una_psn_;
  last_progress_ = now;
  retries_ = 0;
  for (Request& r : sq_) {
    if (r.wr.verb != Verb::kRead && psn_diff(psn_after, psn_add(r.first_psn, r.packets)) >= 0) r.acked = true;
    if (r.wr.verb == Verb::kRead && r.read_received == r.packets && !r.acked) {
      r.acked = true;
      --reads_outstanding_;
    }
  }
  complete_in_order(now);
}

void QueuePair::complete_in_order(Time now) {
  while (!sq_.empty() && sq_.front().acked) {
    const WorkRequest& wr = sq_.front().wr;
    completions_.push_back({wr.id, wr.verb, WcStatus::kSuccess, wr.length, now});
    sq_.pop_front();
  }
}

void QueuePair::go_back(std::uint32_t psn) {
  if (psn_diff(psn, una_psn_) < 0 || psn_diff(psn, sent_end_) >= 0) return;
  send_psn_ = psn;
}

void QueuePair::ask_read_again(std::uint32_t psn) {
  if (read_rewind_ == psn) return;
  read_rewind_ = psn;
  go_back(psn);
}

void QueuePair::fail(Time now) {
  failed_ = true;
  bool first = true;
  for (const Request& r : sq_) {
    completions_.push_back({r.wr.id, r.wr.verb, first ? WcStatus::kRetryExceeded : WcStatus::kFlushed, 0, now});
    first = false;
  }
  sq_.clear();
  reads_outstanding_ = 0;
  send_psn_ = una_psn_ = sent_end_ = next_psn_;
}

Time QueuePair::next_timer() const {
  if (failed_ || sent_end_ == una_psn_) return ~Time{0};
  return last_progress_ + cfg_.retransmit_timeout();
}

void QueuePair::tick(Time now) {
  if (now < next_timer()) return;
  ++stats_.timeouts;
  if (++retries_ > cfg_.retry_count) return fail(now);
  go_back(una_psn_);
  read_rewind_ = ~0u;
  last_progress_ = now;
}

void QueuePair::respond(std::uint8_t syndrome, std::uint32_t psn) {
  (syndrome == Aeth::kNakPsnSequenceError ? stats_.naks_sent : stats_.acks_sent)++;
  replies_.push_back({false, psn, syndrome});
}

void QueuePair::receive(const RoceHeader& h, const std::uint8_t* payload, std::uint32_t size, Time now) {
  const std::uint8_t op = h.opcode & 0x1f;
  if (h.opcode == opcode::kCnp) return;  // for the rate limiter, not the transport
  if (op == opcode::kAcknowledge) {
    if (h.aeth->nak()) {
      ++stats_.naks_received;
      acknowledge(h.psn, now);
      go_back(h.psn);
    } else {
      acknowledge(psn_add(h.psn, 1), now);
    }
    return;
  }
  if (op >= opcode::kReadResponseFirst && op <= opcode::kReadResponseOnly) return read_response(h, payload, size, now);

  const std::int32_t d = psn_diff(h.psn, epsn_);
  if (d > 0) {  // a packet before it was lost
    ++stats_.out_of_order;
    if (!nak_pending_gap_) respond(Aeth::kNakPsnSequenceError, epsn_);
    nak_pending_gap_ = true;
    return;
  }
  if (d < 0) {  // sent again after a loss or a timeout; we have it
    ++stats_.duplicates;
    if (op == opcode::kReadRequest) replies_.push_back({true, h.psn, 0, h.reth->va, h.reth->length});
    else if (h.ack_req) respond(Aeth::kAck, psn_add(epsn_, kPsnMask));
    return;
  }
  execute(h, payload, size, now);
  nak_pending_gap_ = false;
  if (op == opcode::kReadRequest) epsn_ = psn_add(epsn_, packets_for(h.reth->length));
  else epsn_ = psn_add(epsn_, 1);
  if (h.ack_req) respond(Aeth::kAck, psn_add(epsn_, kPsnMask));
}

void QueuePair::execute(const RoceHeader& h, const std::uint8_t* payload, std::uint32_t size, Time now) {
  const std::uint8_t op = h.opcode & 0x1f;
  switch (op) {
    case opcode::kSendFirst:
    case opcode::kSendMiddle:
    case opcode::kSendLast:
    case opcode::kSendOnly: {
      if (rq_.empty()) throw std::logic_error(fmt::format("QP {}: a SEND arrived with no receive posted", qpn_));
      Recv& r = rq_.front();
      if (r.placed + size > r.length)
        throw std::logic_error(fmt::format("QP {}: a SEND longer than the receive buffer ({} B)", qpn_, r.length));
      memory_.write(r.addr + r.placed, payload, size);
      r.placed += size;
      if (op == opcode::kSendLast || op == opcode::kSendOnly) {
        completions_.push_back({r.id, Verb::kRecv, WcStatus::kSuccess, r.placed, now});
        rq_.pop_front();
        msn_ = psn_add(msn_, 1);
      }
      return;
    }
    case opcode::kWriteFirst:
    case opcode::kWriteOnly:
      write_addr_ = h.reth->va;
      [[fallthrough]];
    case opcode::kWriteMiddle:
    case opcode::kWriteLast:
      memory_.write(write_addr_, payload, size);
      write_addr_ += size;
      if (op == opcode::kWriteLast || op == opcode::kWriteOnly) msn_ = psn_add(msn_, 1);
      return;
    case opcode::kReadRequest:
      replies_.push_back({true, h.psn, 0, h.reth->va, h.reth->length});
      msn_ = psn_add(msn_, 1);
      return;
    default:
      throw std::logic_error(fmt::format("QP {}: opcode {:#x} is not a request", qpn_, h.opcode));
  }
}

void QueuePair::read_response(const RoceHeader& h, const std::uint8_t* payload, std::uint32_t size, Time now) {
  const std::size_t k = index_of(h.psn);
  if (k == sq_.size() || sq_[k].wr.verb != Verb::kRead) return;  // stale: a READ completed or failed
  Request* r = &sq_[k];
  const std::uint32_t expected = psn_add(r->first_psn, r->read_received);
  const std::int32_t d = psn_diff(h.psn, expected);
  if (d < 0) {
    ++stats_.duplicates;
    return;
  }
  if (d > 0) {  // a response was lost: ask again from it
    ++stats_.out_of_order;
    ask_read_again(expected);
    return;
  }
  memory_.write(r->wr.local_addr + std::uint64_t{r->read_received} * cfg_.mtu, payload, size);
  ++r->read_received;
  acknowledge(psn_add(h.psn, 1), now);
}

}  // namespace xy::nic
