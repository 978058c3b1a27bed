// End-to-end recovery between endpoints: Go-Back-N per pair of endpoints (the LLR engines of
// hw/link/llr.hpp used end to end, as RoCE's go-back-N is), between a host and its port. It
// numbers each host's packets per destination, keeps a copy until the destination acknowledges it,
// and resends from the first one missing on a NACK or a timeout; the receiving side delivers each
// source's packets to its host in order, exactly once. ACKs, NACKs and INITs are 64-byte packets
// through the fabric, lost like any other. What the link layer did not recover (no LLR, a FLUSH)
// is recovered here, so every packet sent arrives.
//
// Cycle contract (the host's clock): each cycle it takes from the fabric what arrived, and, while
// the port's line is free and its flow control allows, sends one packet: a due ACK/NACK/INIT,
// else a resend, else the host's next packet; the line is then busy for the packet's beats. It
// hands the host at most one packet a cycle.
#pragma once
#include <deque>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "hw/link/llr.hpp"
#include "hw/link/attachment.hpp"
#include "kernel/channel.hpp"
#include "kernel/config.hpp"
#include "kernel/stats.hpp"

namespace xy {

class E2eTransport : public Core, public link::EgressGate {
 public:
  // Its settings, e2e.rto_us and e2e.ack_timer_ns, on a clock of `period`: Go-Back-N that never
  // gives up (a packet is resent until it arrives) and keeps its copies in host memory.
  struct Settings {
    link::LlrConfig config;
    double rto_us;  // as declared, for messages
  };
  static Settings declare(Config& c, Time period, double default_rto_us) {
    Settings s;
    link::LlrConfig& e2e = s.config;
    e2e.seq_bits = 22;
    e2e.window = 1u << 21;
    e2e.replay_buffer_bytes = 1ull << 32;
    // Never gives up: every RTO without an ACK counts as a replay, so a limit of 1000 was only
    // 1000 x e2e.rto_us of no progress, after which the frames were dropped uncounted.
    e2e.replay_limit = std::numeric_limits<int>::max();
    s.rto_us = c.real("e2e.rto_us", default_rto_us, "us", 0.5, 1e6,
                      "end-to-end retransmit timeout (a NACK is re-sent after it too)");
    e2e.replay_timer_cycles = e2e.nack_timer_cycles = cycles_for(from_us(s.rto_us), period);
    e2e.ack_timer_cycles = cycles_for(
        from_ns(c.real("e2e.ack_timer_ns", 500, "ns", 1, 1e6, "ACK this long after the first unacknowledged packet")),
        period);
    e2e.validate("e2e");
    return s;
  }

  // `me`: this endpoint; `peers`: every endpoint. The host sends into `from_host` and takes from
  // `to_host` (host_port()); the transport sends and takes on `port`, the fabric's.
  E2eTransport(std::string name, int me, int peers, const link::LlrConfig& config, std::uint32_t width,
               Channel<Packet*>& from_host, Channel<Packet*>& to_host, link::PortAttachment port, PacketPool& pool,
               Stats& stats)
      : Core(std::move(name)), me_(me), width_(width), from_host_(from_host), to_host_(to_host), port_(port),
        pool_(pool),
        resent_(stats.counter(this->name() + ".resent", "packets", "packets sent again end to end")),
        controls_(stats.counter(this->name() + ".controls", "packets", "ACK, NACK and INIT packets sent")),
        duplicates_(stats.counter(this->name() + ".duplicates", "packets", "packets received again, dropped")),
        out_of_order_(stats.counter(this->name() + ".out_of_order", "packets", "packets after a gap, dropped")) {
    for (int p = 0; p < peers; ++p) {
      tx_.push_back(std::make_unique<link::LlrTx>(config));
      rx_.push_back(std::make_unique<link::LlrRx>(config));
      // Connected before the run, as queue pairs are: numbering starts at 0 on both sides with
      // no INIT exchange (which would hold the first packets for a round trip).
      tx_.back()->on_control({link::LlrControl::kAck, 0}, 0);
    }
    port_.bind(*this);
  }
  // The host's port: into this transport, which gates it.
  link::PortAttachment host_port() {
    return link::PortAttachment(from_host_, to_host_, this, nullptr, [this](Core& host) {
      from_host_.connect(&host, this);
      to_host_.connect(this, &host);
      host_ = &host;
    });
  }

  // The host may hand over a packet while fewer than two wait here, counted as the cycle began
  // (a packet taken in this cycle's eval still counts, whichever of the two runs first).
  bool can_send(const Packet&) const override { return from_host_.in_flight() + (took_at_ == now()) < 2; }
  void on_send(const Packet&) override {}

  void eval() override {
    receive();
    for (auto& t : tx_) t->tick(now());
    if (now() >= line_free_) transmit();
    for (auto& t : tx_) {
      for (Packet* p : t->released()) pool_.release(p);
      t->released().clear();
    }
    if (!deliver_.empty() && to_host_.can_push()) {
      to_host_.push(deliver_.front());
      deliver_.pop_front();
    }
  }
  void commit() override {
    Cycle next = line_free_ > now() && wants_line() ? line_free_ : ~Cycle{0};
    for (std::size_t p = 0; p < tx_.size(); ++p) next = std::min({next, tx_[p]->next_timer(), rx_[p]->next_timer()});
    if (next != ~Cycle{0}) wake_at(std::max(next, now() + 1));
    set_busy(!deliver_.empty() || (now() + 1 >= line_free_ && wants_line()));
  }

  std::uint64_t resent() const { return resent_.value(); }
  // Every packet the host handed over acknowledged, nothing waiting for the line or the host.
  bool idle() const {
    if (waiting_ || !deliver_.empty() || from_host_.in_flight()) return false;
    for (const auto& t : tx_)
      if (t->kept()) return false;
    return true;
  }

 private:
  Cycle beats(std::uint32_t bytes) const { return (bytes + width_ - 1) / width_; }
  bool wants_line() const {
    if (waiting_ || from_host_.ready_by(now() + 1)) return true;
    for (const auto& t : tx_)
      if (t->state() == link::LlrTxState::kReplay) return true;
    return false;
  }
  void receive() {
    while (port_.can_receive()) {
      Packet* p = port_.receive(clock().time_of(now()));  // the transport takes every packet at once
      const int peer = static_cast<int>(p->src);
      if (p->e2e) {
        const link::LlrControl c{static_cast<link::LlrControl::Kind>(p->e2e - 1), p->psn};
        if (c.kind == link::LlrControl::kInit) rx_[peer]->on_control(c, now());
        else tx_[peer]->on_control(c, now());
        pool_.release(p);
        continue;
      }
      switch (rx_[peer]->on_frame(p->psn, true, now())) {
        case link::LlrReceiver::Verdict::kDeliver: deliver_.push_back(p); continue;
        case link::LlrReceiver::Verdict::kDuplicate: duplicates_.add(); break;
        default: out_of_order_.add(); break;
      }
      pool_.release(p);
    }
  }
  // One packet onto the line, or held (first in line next time) until flow control lets it go.
  void send(Packet* p) {
    if (!port_.can_send(*p)) {
      waiting_ = p;
      return;
    }
    port_.send(p);
    line_free_ = now() + beats(p->bytes);
  }
  void transmit() {
    if (waiting_) {
      Packet* p = waiting_;
      waiting_ = nullptr;
      send(p);
      return;
    }
    for (std::size_t peer = 0; peer < tx_.size(); ++peer) {
      std::optional<link::LlrControl> c = rx_[peer]->poll(now());
      if (!c) c = tx_[peer]->poll_control();
      if (!c) continue;
      Packet* p = pool_.acquire();
      p->src = static_cast<std::uint32_t>(me_);
      p->dst = static_cast<std::uint32_t>(peer);
      p->bytes = 64;
      p->phantom = true;
      p->e2e = static_cast<std::uint8_t>(c->kind + 1);
      p->psn = c->seq;
      controls_.add();
      send(p);
      return;
    }
    for (auto& t : tx_)
      if (auto r = t->next_replay(now())) {
        resent_.add();
        send(pool_.copy(r->first));
        return;
      }
    if (from_host_.can_pop() && tx_[from_host_.peek()->dst]->can_accept(from_host_.peek()->bytes)) {
      Packet* p = from_host_.pop();
      took_at_ = now();
      Packet* kept = pool_.copy(p);
      p->psn = kept->psn = tx_[p->dst]->accept(kept, kept->bytes, now());
      send(p);
      if (host_) host_->wake_next();  // room for the host's next packet
    }
  }

  int me_;
  std::uint32_t width_;
  Channel<Packet*>& from_host_;
  Channel<Packet*>& to_host_;
  link::PortAttachment port_;
  PacketPool& pool_;
  Core* host_ = nullptr;
  std::vector<std::unique_ptr<link::LlrTransmitter>> tx_;
  std::vector<std::unique_ptr<link::LlrReceiver>> rx_;
  std::deque<Packet*> deliver_;
  Packet* waiting_ = nullptr;  // made, held back by the port's flow control
  Cycle took_at_ = ~Cycle{0};  // the cycle it last took a packet from the host
  Cycle line_free_ = 0;
  Counter &resent_, &controls_, &duplicates_, &out_of_order_;
};

}  // namespace xy
