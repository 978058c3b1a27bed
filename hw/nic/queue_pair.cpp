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
  if (reorder_window > (1u << 16))
    throw ConfigError(fmt::format("{}.reorder.window = {}: allowed 0..65536 packets", prefix, reorder_window));
  if (selective_repeat && reorder_window == 0)
    throw ConfigError(fmt::format("{}.retransmit = selective: needs {}.reorder.window > 0 (the receiver must keep what "
                                  "follows a hole)", prefix, prefix));
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
      send_psn_(next_psn_), una_psn_(next_psn_), sent_end_(next_psn_), acked_to_(next_psn_), epsn_(remote_first_psn & kPsnMask),
      window_(config.reorder_window) {
  cfg_.validate("nic.qp");
}

void QueuePair::post_send(const WorkRequest& wr, Time payload_at) {
  if (wr.verb == Verb::kRecv) throw std::logic_error("post_send: a receive goes to post_recv");
  if (failed_) {
    completions_.push_back({wr.id, wr.verb, WcStatus::kFlushed, 0, 0});
    return;
  }
  Request r;
  r.wr = wr;
  r.first_psn = next_psn_;
  r.packets = packets_for(wr.length);
  r.payload_at = payload_at;
  next_psn_ = psn_add(next_psn_, r.packets);
  sq_.push_back(r);
}

void QueuePair::post_recv(std::uint64_t id, std::uint64_t addr, std::uint32_t length) {
  rq_.push_back({id, addr, length, 0});
}

bool QueuePair::has_request() const {
  if (failed_) return false;
  if (!resend_.empty()) return true;
  if (send_psn_ == next_psn_ ||
      static_cast<std::uint32_t>(psn_diff(send_psn_, una_psn_)) >= cfg_.max_outstanding)
    return false;
  const Request& r = sq_[index_of(send_psn_)];
  const bool new_read = r.wr.verb == Verb::kRead && psn_diff(sent_end_, r.first_psn) <= 0;
  return !new_read || reads_outstanding_ < cfg_.max_reads;
}

bool QueuePair::idle() const { return sq_.empty() && replies_.empty(); }

std::size_t QueuePair::index_of(std::uint32_t psn) const {
  // The requests hold consecutive PSN ranges in order: the last one starting at or before psn.
  if (sq_.empty() || psn_diff(psn, sq_.front().first_psn) < 0) return sq_.size();
  const std::uint32_t base = sq_.front().first_psn;
  const auto after = std::upper_bound(sq_.begin(), sq_.end(), psn_diff(psn, base),
                                      [&](std::int32_t d, const Request& r) { return d < psn_diff(r.first_psn, base); });
  const Request& r = *std::prev(after);
  return static_cast<std::uint32_t>(psn_diff(psn, r.first_psn)) < r.packets ? static_cast<std::size_t>(std::prev(after) - sq_.begin())
                                                                           : sq_.size();
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
  if (!resend_.empty()) {  // selective repeat
    const std::uint32_t psn = resend_.front();
    resend_.pop_front();
    Outgoing o = request_packet(sq_[index_of(psn)], psn);
    o.header.ack_req = true;  // alone: whether it arrived is news only an ACK brings
    ++stats_.packets_sent;
    ++stats_.retransmitted_packets;
    stats_.retransmitted_bytes += o.payload_bytes;
    return o;
  }
  Request* r = &sq_[index_of(send_psn_)];
  if (sent_end_ == una_psn_) last_progress_ = last_acked_ = now;  // the timer runs while anything is outstanding
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
  if (psn_diff(psn_after, sent_end_) > 0) return;  // not sent
  // The furthest acknowledgement yet counts: what it covered beyond a READ missing responses is
  // retired once they arrive.
  if (psn_diff(psn_after, acked_to_) > 0) acked_to_ = psn_after;
  psn_after = acked_to_;
  if (psn_diff(psn_after, una_psn_) <= 0) return;  // nothing new
  // A READ is acknowledged by its responses only: an ACK beyond a READ whose responses were lost
  // stops at the first missing one, and the READ goes again from there (with a reorder window
  // they may have been overtaken, not lost: the timer decides).
  for (Request& r : sq_) {
    if (psn_diff(r.first_psn, psn_after) >= 0) break;
    if (r.wr.verb == Verb::kRead && r.read_received < r.packets) {
      const std::uint32_t missing = psn_add(r.first_psn, r.read_received);
      if (psn_diff(psn_after, missing) > 0) {
        psn_after = missing;
        if (!cfg_.reorder_window) ask_read_again(missing);
      }
      break;
    }
  }
  if (psn_diff(psn_after, una_psn_) <= 0) return;
  una_psn_ = psn_after;
  if (psn_diff(send_psn_, una_psn_) < 0) send_psn_ = una_psn_;
  resend_.erase(std::remove_if(resend_.begin(), resend_.end(), [&](std::uint32_t p) { return psn_diff(p, una_psn_) < 0; }),
                resend_.end());
  last_progress_ = last_acked_ = now;
  retries_ = 0;
  for (Request& r : sq_) {  // a READ before psn_after has all its responses
    if (psn_diff(psn_after, psn_add(r.first_psn, r.packets)) < 0) break;
    if (!r.acked && r.wr.verb == Verb::kRead) --reads_outstanding_;
    r.acked = true;
  }
  complete_in_order(now);
}

void QueuePair::complete(Completion c) {
  if (on_complete) on_complete(c);
  completions_.push_back(c);
}

std::optional<PayloadRef> QueuePair::next_payload() const {
  if (!replies_.empty()) {
    const Reply& y = replies_.front();
    if (!y.read) return std::nullopt;
    const std::uint64_t offset = std::uint64_t{y.sent} * cfg_.mtu;
    return PayloadRef{y.addr + offset, static_cast<std::uint32_t>(std::min<std::uint64_t>(cfg_.mtu, y.bytes - offset)),
                      y.addr, y.bytes, y.data_at};
  }
  if (!has_request()) return std::nullopt;
  const std::uint32_t psn = resend_.empty() ? send_psn_ : resend_.front();
  const Request& r = sq_[index_of(psn)];
  if (r.wr.verb == Verb::kRead) return std::nullopt;
  const std::uint64_t offset = std::uint64_t(psn_diff(psn, r.first_psn)) * cfg_.mtu;
  return PayloadRef{r.wr.local_addr + offset,
                    static_cast<std::uint32_t>(std::min<std::uint64_t>(cfg_.mtu, r.wr.length - offset)),
                    r.wr.local_addr, r.wr.length, r.payload_at};
}

void QueuePair::read_response_data_at(Time at) {
  if (replies_.empty() || !replies_.front().read) throw std::logic_error("read_response_data_at: no READ response next");
  replies_.front().data_at = at;
}

void QueuePair::complete_in_order(Time now) {
  while (!sq_.empty() && sq_.front().acked) {
    const WorkRequest& wr = sq_.front().wr;
    complete({wr.id, wr.verb, WcStatus::kSuccess, wr.length, now});
    sq_.pop_front();
  }
}

void QueuePair::go_back(std::uint32_t psn) {
  if (psn_diff(psn, una_psn_) < 0 || psn_diff(psn, sent_end_) >= 0) return;
  send_psn_ = psn;
}

void QueuePair::resend(std::uint32_t psn) {
  if (!cfg_.selective_repeat) return go_back(psn);
  if (psn_diff(psn, una_psn_) < 0 || psn_diff(psn, sent_end_) >= 0) return;
  if (std::find(resend_.begin(), resend_.end(), psn) == resend_.end()) resend_.push_back(psn);
}

void QueuePair::ask_read_again(std::uint32_t psn) {
  if (read_rewind_ == psn) return;
  read_rewind_ = psn;
  resend(psn);
}

void QueuePair::path_changed(Time now) {
  if (failed_) return;
  resend_.clear();
  go_back(una_psn_);
  read_rewind_ = ~0u;
  last_progress_ = now;
}

void QueuePair::fail(Time now) {
  failed_ = true;
  bool first = true;
  for (const Request& r : sq_) {
    complete({r.wr.id, r.wr.verb, first ? WcStatus::kRetryExceeded : WcStatus::kFlushed, 0, now});
    first = false;
  }
  sq_.clear();
  resend_.clear();
  reads_outstanding_ = 0;
  send_psn_ = una_psn_ = sent_end_ = acked_to_ = next_psn_;
}

Time QueuePair::hole_deadline() const {
  return kept_ && !nak_pending_gap_ ? hole_since_ + cfg_.reorder_timeout : ~Time{0};
}

Time QueuePair::retransmit_deadline() const {
  return failed_ || sent_end_ == una_psn_ ? ~Time{0} : last_progress_ + cfg_.retransmit_timeout();
}

Time QueuePair::next_timer() const { return std::min(retransmit_deadline(), hole_deadline()); }

void QueuePair::tick(Time now) {
  if (now >= hole_deadline()) {  // the hole is a loss, not reordering
    respond(Aeth::kNakPsnSequenceError, epsn_);
    nak_pending_gap_ = true;
  }
  if (now < retransmit_deadline()) return;
  ++stats_.timeouts;
  if (++retries_ > cfg_.retry_count) return fail(now);
  resend_.clear();  // lost track of what arrived: everything from the oldest again, either way
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
      resend(h.psn);
    } else {
      acknowledge(psn_add(h.psn, 1), now);
    }
    return;
  }
  if (op >= opcode::kReadResponseFirst && op <= opcode::kReadResponseOnly) return read_response(h, payload, size, now);

  const std::int32_t d = psn_diff(h.psn, epsn_);
  if (d < 0) {  // sent again after a loss or a timeout; we have it
    ++stats_.duplicates;
    if (op == opcode::kReadRequest) {  // answered again: its responses are resent
      replies_.push_back({true, h.psn, 0, h.reth->va, h.reth->length});
      stats_.retransmitted_packets += packets_for(h.reth->length);
      stats_.retransmitted_bytes += h.reth->length;
    } else if (h.ack_req) {
      respond(Aeth::kAck, psn_add(epsn_, kPsnMask));
    }
    return;
  }
  if (d > 0) {  // reordered, or a packet before it was lost
    ++stats_.out_of_order;
    if (static_cast<std::uint32_t>(d) <= cfg_.reorder_window) {
      keep(h, payload, size, now);
    } else {  // no window, or beyond it: dropped
      if (!nak_pending_gap_) respond(Aeth::kNakPsnSequenceError, epsn_);
      nak_pending_gap_ = true;
    }
    if (cfg_.reorder_window) reorder_samples_.record(kept_);
    return;
  }
  in_order(h, payload, size, now, false);
  bool ack = h.ack_req;
  while (kept_) {  // what the hole held back, in PSN order
    Kept& k = window_[epsn_ % cfg_.reorder_window];
    if (!k.used || k.header.psn != epsn_) break;
    k.used = false;
    --kept_;
    in_order(k.header, k.payload.data(), k.size, now, k.placed);
    ack |= k.header.ack_req;
  }
  hole_since_ = now;  // a hole still open is new
  // Selective repeat: the hole behind one that was NAKed is most likely the same loss burst's.
  nak_pending_gap_ = cfg_.selective_repeat && nak_pending_gap_ && kept_;
  if (nak_pending_gap_) respond(Aeth::kNakPsnSequenceError, epsn_);
  else if (ack) respond(Aeth::kAck, psn_add(epsn_, kPsnMask));
  if (cfg_.reorder_window) reorder_samples_.record(kept_);
}

void QueuePair::in_order(const RoceHeader& h, const std::uint8_t* payload, std::uint32_t size, Time now, bool placed) {
  execute(h, payload, size, now, placed);
  epsn_ = psn_add(epsn_, (h.opcode & 0x1f) == opcode::kReadRequest ? packets_for(h.reth->length) : 1);
  if (!spans_.empty())  // WRITEs now wholly in order need no early placement
    spans_.erase(std::remove_if(spans_.begin(), spans_.end(),
                                [&](const Span& s) { return psn_diff(epsn_, psn_add(s.first_psn, s.packets)) >= 0; }),
                 spans_.end());
}

void QueuePair::keep(const RoceHeader& h, const std::uint8_t* payload, std::uint32_t size, Time now) {
  Kept& k = window_[h.psn % cfg_.reorder_window];
  if (k.used) {  // kept already (the window's slots are one PSN each)
    ++stats_.duplicates;
    return;
  }
  if (kept_ == 0) hole_since_ = now;
  k.used = true;
  k.placed = false;
  k.header = h;
  k.size = size;
  k.payload.assign(payload, payload + size);
  ++kept_;
  ++stats_.reordered;
  stats_.reorder_peak = std::max(stats_.reorder_peak, kept_);
  const std::uint8_t op = h.opcode & 0x1f;
  if (op == opcode::kWriteFirst || op == opcode::kWriteOnly) {
    spans_.push_back({h.psn, packets_for(h.reth->length), h.reth->va});
    place_early(h.psn, spans_.back().packets, h.reth->va);
  } else if (op == opcode::kWriteMiddle || op == opcode::kWriteLast) {
    for (const Span& s : spans_) {
      const std::int32_t i = psn_diff(h.psn, s.first_psn);
      if (i > 0 && static_cast<std::uint32_t>(i) < s.packets) {
        place_early(h.psn, 1, s.va + std::uint64_t(i) * cfg_.mtu);
        break;
      }
    }
  }
}

// Places the kept WRITE payload of PSNs first_psn.. (packets of them) from va on, MTU apart.
void QueuePair::place_early(std::uint32_t first_psn, std::uint32_t packets, std::uint64_t va) {
  for (std::uint32_t i = 0; i < packets; ++i) {
    const std::uint32_t psn = psn_add(first_psn, i);
    const std::int32_t d = psn_diff(psn, epsn_);
    if (d <= 0) continue;
    if (static_cast<std::uint32_t>(d) > cfg_.reorder_window) break;
    Kept& k = window_[psn % cfg_.reorder_window];
    if (!k.used || k.placed || k.header.psn != psn) continue;
    memory_.write(va + std::uint64_t{i} * cfg_.mtu, k.payload.data(), k.size);
    k.payload.clear();
    k.placed = true;
    ++stats_.placed_early;
  }
}

void QueuePair::execute(const RoceHeader& h, const std::uint8_t* payload, std::uint32_t size, Time now, bool placed) {
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
        complete({r.id, Verb::kRecv, WcStatus::kSuccess, r.placed, now});
        if (on_delivery) on_delivery({Verb::kRecv, r.addr, r.placed, now});
        rq_.pop_front();
        msn_ = psn_add(msn_, 1);
      }
      return;
    }
    case opcode::kWriteFirst:
    case opcode::kWriteOnly:
      write_addr_ = write_va_ = h.reth->va;
      write_length_ = h.reth->length;
      if (op == opcode::kWriteFirst && cfg_.reorder_window && !placed &&
          std::none_of(spans_.begin(), spans_.end(), [&](const Span& s) { return s.first_psn == h.psn; })) {
        spans_.push_back({h.psn, packets_for(h.reth->length), h.reth->va});  // for its packets that overtake
        if (kept_) place_early(h.psn, spans_.back().packets, h.reth->va);
      }
      [[fallthrough]];
    case opcode::kWriteMiddle:
    case opcode::kWriteLast:
      if (!placed) memory_.write(write_addr_, payload, size);
      write_addr_ += size;
      if (op == opcode::kWriteLast || op == opcode::kWriteOnly) {
        msn_ = psn_add(msn_, 1);
        if (on_delivery) on_delivery({Verb::kWrite, write_va_, write_length_, now});
      }
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
  const std::uint64_t at = r->wr.local_addr + std::uint64_t(psn_diff(h.psn, r->first_psn)) * cfg_.mtu;
  if (d > 0) {
    ++stats_.out_of_order;
    if (static_cast<std::uint32_t>(d) > cfg_.reorder_window) return ask_read_again(expected);  // lost, or too far
    // Reordered: placed now, counted in when the responses before it are (a hole waits for the
    // retransmit timer: the requester sends no NAK).
    r->early.resize(r->packets);
    if (r->early[psn_diff(h.psn, r->first_psn)]) {
      ++stats_.duplicates;
      return;
    }
    r->early[psn_diff(h.psn, r->first_psn)] = true;
    memory_.write(at, payload, size);
    ++stats_.placed_early;
    return;
  }
  memory_.write(at, payload, size);
  ++r->read_received;
  while (r->read_received < r->early.size() && r->early[r->read_received]) ++r->read_received;
  acknowledge(psn_add(r->first_psn, r->read_received), now);
}

}  // namespace xy::nic
