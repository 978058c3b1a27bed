// RC queue pairs (hw/nic/queue_pair.hpp) end to end: two QPs joined by a wire that carries the
// packets as bytes (encoded and parsed with roce.hpp, ICRC checked) and loses, delays and
// reorders them. A scoreboard on the memories: every byte a WRITE, SEND or READ was asked to move
// arrives at its address, written exactly once, and every work request completes, in order.
#include "hw/nic/queue_pair.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <stdexcept>
#include <vector>

#include "kernel/config.hpp"
#include "kernel/rng.hpp"

namespace xy::nic {
namespace {

// Host memory that counts the writes to each byte.
struct CountingMemory : Memory {
  std::vector<std::uint8_t> bytes;
  std::vector<std::uint8_t> writes;
  explicit CountingMemory(std::size_t size) : bytes(size), writes(size) {}
  void read(std::uint64_t addr, std::uint8_t* out, std::size_t size) const override {
    if (addr + size > bytes.size()) throw std::out_of_range("read beyond memory");
    std::copy(bytes.begin() + static_cast<long>(addr), bytes.begin() + static_cast<long>(addr + size), out);
  }
  void write(std::uint64_t addr, const std::uint8_t* data, std::size_t size) override {
    if (addr + size > bytes.size()) throw std::out_of_range("write beyond memory");
    for (std::size_t i = 0; i < size; ++i) {
      bytes[addr + i] = data[i];
      ++writes[addr + i];
    }
  }
};

struct WireSpec {
  double loss = 0;       // per packet, each way
  double reorder = 0;    // probability a packet is held back behind the next few
  Time delay = 1 * kUs;  // one way
  Time packet_time = 40 * kNs;  // a 4 KiB packet at ~800 Gb/s
  std::uint32_t blackout_after = ~0u;  // packets per side before the wire goes dead
  std::vector<Time> paths;  // if any: each packet takes one of these one-way delays at random (sprayed)
};

// Two QPs and the wire between them, stepped one packet time at a time.
struct Pair {
  CountingMemory mem[2] = {CountingMemory(1 << 22), CountingMemory(1 << 22)};
  std::vector<QueuePair> qp;
  WireSpec wire;
  Rng rng{11, "wire"};
  struct InFlight {
    Time at;
    std::vector<std::uint8_t> frame;
  };
  std::deque<InFlight> flight[2];  // towards side s
  std::uint32_t sent[2] = {};
  std::uint64_t icrc_failures = 0;
  Time now = 0;

  Pair(const QpConfig& cfg, WireSpec w, std::uint32_t psn0 = 0, std::uint32_t psn1 = 0) : wire(w) {
    qp.emplace_back(0x11, 0x22, cfg, mem[0], psn0, psn1);
    qp.emplace_back(0x22, 0x11, cfg, mem[1], psn1, psn0);
    for (auto& m : mem)
      for (std::size_t i = 0; i < m.bytes.size(); ++i) m.bytes[i] = static_cast<std::uint8_t>(rng.next());
  }

  void send_from(int s) {
    qp[s].tick(now);
    auto o = qp[s].next(now);
    if (!o) return;
    std::vector<std::uint8_t> payload(o->payload_bytes);
    if (o->payload_bytes) mem[s].read(o->payload_addr, payload.data(), payload.size());
    InFlight f{now + wire.delay, {}};
    encode(o->header, payload.data(), payload.size(), f.frame);
    if (++sent[s] > wire.blackout_after || rng.chance(wire.loss)) return;
    auto& q = flight[1 - s];
    if (!wire.paths.empty()) {  // behind whatever arrives no later
      f.at = now + wire.paths[rng.below(wire.paths.size())];
      const auto at = std::find_if(q.begin(), q.end(), [&](const InFlight& x) { return x.at > f.at; });
      q.insert(at, std::move(f));
    } else if (!q.empty() && rng.chance(wire.reorder)) {
      f.at = q.back().at;
      q.insert(q.end() - 1, std::move(f));  // overtakes the one before it
    } else {
      q.push_back(std::move(f));
    }
  }

  void deliver_to(int s) {
    while (!flight[s].empty() && flight[s].front().at <= now) {
      const std::vector<std::uint8_t> frame = std::move(flight[s].front().frame);
      flight[s].pop_front();
      const auto p = parse(frame.data(), frame.size());
      ASSERT_TRUE(p);
      if (!p->icrc_ok) {
        ++icrc_failures;
        continue;
      }
      ASSERT_EQ(p->header.dest_qp, qp[s].qpn());
      qp[s].receive(p->header, frame.data() + p->payload_offset, static_cast<std::uint32_t>(p->payload_size), now);
    }
  }

  // Runs until both QPs are idle and the wire is empty, or `limit` passes.
  void run(Time limit) {
    while (now < limit) {
      for (int s = 0; s < 2; ++s) send_from(s);
      for (int s = 0; s < 2; ++s) deliver_to(s);
      if (qp[0].idle() && qp[1].idle() && flight[0].empty() && flight[1].empty()) return;
      now += wire.packet_time;
    }
  }
};

// A mix of WRITEs, SENDs and READs from side 0, of sizes around the MTU, at distinct addresses.
struct Transfer {
  WorkRequest wr;
  std::uint64_t src, dst;  // where the bytes start and where they must end up
  int src_side, dst_side;
};
std::vector<Transfer> post_mix(Pair& pair, int count, std::uint32_t mtu) {
  std::vector<Transfer> t;
  std::uint64_t local = 0, remote = 0;
  const std::uint32_t sizes[] = {1, mtu - 1, mtu, mtu + 1, 5 * mtu + 17, 0, 3 * mtu};
  for (int i = 0; i < count; ++i) {
    WorkRequest wr;
    wr.id = static_cast<std::uint64_t>(i);
    wr.verb = i % 3 == 0 ? Verb::kWrite : i % 3 == 1 ? Verb::kSend : Verb::kRead;
    wr.length = sizes[i % 7];
    wr.local_addr = local;
    wr.remote_addr = remote;
    if (wr.verb == Verb::kSend) pair.qp[1].post_recv(1000 + static_cast<std::uint64_t>(i), remote, wr.length);
    pair.qp[0].post_send(wr);
    if (wr.verb == Verb::kRead) t.push_back({wr, remote, local, 1, 0});
    else t.push_back({wr, local, remote, 0, 1});
    local += wr.length + 64;
    remote += wr.length + 64;
  }
  return t;
}

// The source bytes of every transfer, taken before the run (a READ's source is side 1's memory).
std::vector<std::vector<std::uint8_t>> sources(const Pair& pair, const std::vector<Transfer>& t) {
  std::vector<std::vector<std::uint8_t>> out;
  for (const Transfer& x : t) {
    const auto& m = pair.mem[x.src_side].bytes;
    out.emplace_back(m.begin() + static_cast<long>(x.src), m.begin() + static_cast<long>(x.src + x.wr.length));
  }
  return out;
}

void expect_delivered_exactly_once(Pair& pair, const std::vector<Transfer>& t,
                                   const std::vector<std::vector<std::uint8_t>>& src) {
  for (std::size_t i = 0; i < t.size(); ++i) {
    const auto& m = pair.mem[t[i].dst_side];
    const std::vector<std::uint8_t> got(m.bytes.begin() + static_cast<long>(t[i].dst),
                                        m.bytes.begin() + static_cast<long>(t[i].dst + t[i].wr.length));
    ASSERT_EQ(got, src[i]) << "transfer " << i;
    for (std::uint64_t b = t[i].dst; b < t[i].dst + t[i].wr.length; ++b)
      ASSERT_EQ(m.writes[b], 1) << "transfer " << i << " byte " << b - t[i].dst << " written more than once";
  }
  // Nothing written outside the transfers: each write is one of theirs.
  std::uint64_t written[2] = {}, asked[2] = {};
  for (int s = 0; s < 2; ++s)
    for (auto w : pair.mem[s].writes) written[s] += w;
  for (const Transfer& x : t) asked[x.dst_side] += x.wr.length;
  EXPECT_EQ(written[0], asked[0]);
  EXPECT_EQ(written[1], asked[1]);
  // Every request completed successfully, in order; every SEND's receive too.
  const auto& done = pair.qp[0].completions();
  ASSERT_EQ(done.size(), t.size());
  for (std::size_t i = 0; i < t.size(); ++i) {
    EXPECT_EQ(done[i].id, t[i].wr.id);
    EXPECT_EQ(done[i].status, WcStatus::kSuccess);
  }
}

// What the responder's application sees: each message delivered once, in the order posted, and
// every one of its bytes in memory when it is.
struct DeliveryCheck {
  std::vector<Delivery> seen;
  std::uint64_t incomplete_bytes = 0;
  void watch(Pair& pair) {
    pair.qp[1].on_delivery = [this, &pair](const Delivery& d) {
      seen.push_back(d);
      for (std::uint64_t b = d.addr; b < d.addr + d.bytes; ++b) incomplete_bytes += pair.mem[1].writes[b] != 1;
    };
  }
  // The WRITEs and SENDs of `t`, in posting order.
  void expect_in_order(const std::vector<Transfer>& t) const {
    std::vector<std::uint64_t> want, got;
    for (const Transfer& x : t)
      if (x.wr.verb != Verb::kRead) want.push_back(x.dst);
    for (const Delivery& d : seen) got.push_back(d.addr);
    EXPECT_EQ(got, want);
    EXPECT_EQ(incomplete_bytes, 0u);
  }
};

// Posts `count` mixed requests, runs the pair to its end and checks every byte and delivery.
void run_mix(Pair& pair, int count, std::uint32_t mtu) {
  DeliveryCheck check;
  check.watch(pair);
  const auto t = post_mix(pair, count, mtu);
  const auto src = sources(pair, t);
  pair.run(100 * kMs);
  pair.qp[1].on_delivery = nullptr;
  expect_delivered_exactly_once(pair, t, src);
  check.expect_in_order(t);
}

TEST(QueuePair, WritesSendsAndReadsArriveOnceWithoutLoss) {
  QpConfig cfg;
  cfg.mtu = 1024;
  Pair pair(cfg, WireSpec{});
  const auto t = post_mix(pair, 60, cfg.mtu);
  const auto src = sources(pair, t);
  pair.run(10 * kMs);
  expect_delivered_exactly_once(pair, t, src);
  EXPECT_EQ(pair.qp[0].stats().retransmitted_packets, 0u);
  EXPECT_EQ(pair.qp[1].stats().naks_sent, 0u);
  std::size_t recvs = 0;
  for (const Completion& c : pair.qp[1].completions()) recvs += c.verb == Verb::kRecv;
  EXPECT_EQ(recvs, 20u);
}

// The fault campaign: loss from 1e-6 to 1e-2 per packet (and 5 %) each way, for each receiver
// and wire: no reorder window on a wire that keeps order or reorders now and then (2 %), and a
// window of 32 under spraying over paths of unequal delay, with Go-Back-N and selective repeat.
TEST(QueuePair, EveryByteArrivesOnceUnderLossAndReordering) {
  struct Case {
    const char* name;
    double reorder;
    bool sprayed;
    std::uint32_t window;
    bool selective;
  };
  const Case cases[] = {{"in order", 0, false, 0, false},
                        {"reordered 2 %", 0.02, false, 0, false},
                        {"sprayed, window, go-back-n", 0, true, 32, false},
                        {"sprayed, window, selective repeat", 0, true, 32, true}};
  for (const Case& k : cases) {
    for (double loss : {1e-6, 1e-4, 1e-3, 1e-2, 5e-2}) {
      QpConfig cfg;
      cfg.mtu = 512;
      cfg.timeout_exp = 2;  // 16.4 us: a few round trips of this wire
      cfg.reorder_window = k.window;
      cfg.reorder_timeout = 2 * kUs;
      cfg.selective_repeat = k.selective;
      WireSpec w;
      w.loss = loss;
      w.reorder = k.reorder;
      if (k.sprayed) w.paths = {1 * kUs, 1100 * kNs, 1250 * kNs, 1400 * kNs};
      Pair pair(cfg, w);
      SCOPED_TRACE(testing::Message() << k.name << ", loss " << loss);
      run_mix(pair, 300, cfg.mtu);
      EXPECT_FALSE(pair.qp[0].failed());
      if (loss >= 1e-2) {
        EXPECT_GT(pair.qp[0].stats().retransmitted_packets, 0u);
      }
    }
  }
}

TEST(QueuePair, PsnsWrapAt24BitsUnderLoss) {
  QpConfig cfg;
  cfg.mtu = 256;
  cfg.timeout_exp = 2;
  WireSpec w;
  w.loss = 1e-2;
  Pair pair(cfg, w, kPsnMask - 40, kPsnMask - 3);
  const auto t = post_mix(pair, 120, cfg.mtu);
  const auto src = sources(pair, t);
  pair.run(100 * kMs);
  expect_delivered_exactly_once(pair, t, src);
  EXPECT_LT(pair.qp[0].next_psn(), 1000u);  // wrapped past 0
}

// A dead wire: each timeout (4.096 us x 2^t) sends again, and the 8th without progress (retry
// count 7) ends the QP: the first request fails by name, the rest are flushed.
TEST(QueuePair, RetriesExhaustedEndInANamedFailureAtTheTimeTheTimersSay) {
  QpConfig cfg;
  cfg.timeout_exp = 2;
  WireSpec w;
  w.blackout_after = 0;  // nothing gets through
  w.packet_time = 8 * kNs;
  Pair pair(cfg, w);
  post_mix(pair, 3, cfg.mtu);
  pair.run(10 * kMs);
  ASSERT_TRUE(pair.qp[0].failed());
  const auto& done = pair.qp[0].completions();
  ASSERT_EQ(done.size(), 3u);
  EXPECT_EQ(done[0].status, WcStatus::kRetryExceeded);
  EXPECT_EQ(done[1].status, WcStatus::kFlushed);
  EXPECT_EQ(done[2].status, WcStatus::kFlushed);
  // The first packet left at 0; eight timeouts of 16.384 us each, on the 8 ns steps that cover them.
  const Time timeout = 4096 * kNs * 4;
  EXPECT_GE(done[0].at, 8 * timeout);
  EXPECT_LT(done[0].at, 8 * (timeout + w.packet_time));
  EXPECT_EQ(pair.qp[0].stats().timeouts, 8u);
}

// With max_reads = 2, the third READ request waits until a READ completes, and what was posted
// behind it waits in order.
TEST(QueuePair, AtMostMaxReadsReadsAreOutstanding) {
  QpConfig cfg;
  cfg.max_reads = 2;
  CountingMemory m(1 << 16);
  QueuePair qp(1, 2, cfg, m);
  for (std::uint64_t i = 0; i < 3; ++i) qp.post_send({i, Verb::kRead, i * 100, i * 100, 0, 10});
  qp.post_send({3, Verb::kWrite, 400, 400, 0, 10});
  std::vector<std::uint32_t> psns;
  while (auto o = qp.next(0)) psns.push_back(o->header.psn);
  EXPECT_EQ(psns, (std::vector<std::uint32_t>{0, 1}));
  RoceHeader r;
  r.opcode = opcode::kReadResponseOnly;
  r.aeth = Aeth{Aeth::kAck, 1};
  r.dest_qp = 1;
  const std::uint8_t data[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  qp.receive(r, data, sizeof data, 100 * kNs);
  ASSERT_EQ(qp.completions().size(), 1u);
  psns.clear();
  while (auto o = qp.next(100 * kNs)) psns.push_back(o->header.psn);
  EXPECT_EQ(psns, (std::vector<std::uint32_t>{2, 3}));  // the third READ, and the WRITE behind it
  EXPECT_EQ(std::vector<std::uint8_t>(m.bytes.begin(), m.bytes.begin() + 10), std::vector<std::uint8_t>(data, data + 10));
}

// Spraying over paths of unequal delay reorders most packets. With a reorder window the
// receiver keeps them: no NAK, nothing sent twice, WRITE payload placed on arrival, messages
// delivered in order. Without one, every overtaking packet is dropped and NAKed: Go-Back-N
// resends many times the bytes (the contrast is the point of the window).
TEST(QueuePair, AReorderWindowTakesSprayedPacketsWithoutResending) {
  WireSpec w;
  w.paths = {1 * kUs, 1100 * kNs, 1250 * kNs, 1400 * kNs};  // up to 10 packet times apart
  std::uint64_t resent[2] = {};
  for (std::uint32_t window : {0u, 64u}) {
    QpConfig cfg;
    cfg.mtu = 512;
    cfg.reorder_window = window;
    Pair pair(cfg, w);
    SCOPED_TRACE(testing::Message() << "window " << window);
    run_mix(pair, 300, cfg.mtu);
    resent[window > 0] = pair.qp[0].stats().retransmitted_packets;
    if (window) {
      const QpStats& r = pair.qp[1].stats();
      EXPECT_GT(r.reordered, 100u);
      EXPECT_GT(r.placed_early, 10u);
      EXPECT_EQ(r.naks_sent, 0u);
      EXPECT_GT(pair.qp[1].reorder_occupancy(0.99), 0u);
      EXPECT_LE(r.reorder_peak, window);
    }
  }
  EXPECT_EQ(resent[1], 0u);
  EXPECT_GT(resent[0], 300u);
}

// One 4-packet WRITE, its packets handed over by hand: 0, then 2 and 3 (1 is late). 2 and 3 are
// kept and placed at once (0's RETH gave the address); nothing is delivered until 1 arrives, and
// the hole is NAKed when it is reorder_timeout old.
TEST(QueuePair, KeptWritePayloadIsPlacedAtOnceAndTheHoleNakedOnTime) {
  QpConfig cfg;
  cfg.mtu = 256;
  cfg.reorder_window = 8;
  cfg.reorder_timeout = 3 * kUs;
  CountingMemory src(4096), dst(4096);
  for (std::size_t i = 0; i < src.bytes.size(); ++i) src.bytes[i] = static_cast<std::uint8_t>(i * 7 + 1);
  QueuePair a(1, 2, cfg, src), b(2, 1, cfg, dst);
  std::vector<Delivery> delivered;
  b.on_delivery = [&](const Delivery& d) { delivered.push_back(d); };
  a.post_send({7, Verb::kWrite, 0, 1000, 0, 1024});
  std::vector<Outgoing> packets;
  while (auto o = a.next(0)) packets.push_back(*o);
  ASSERT_EQ(packets.size(), 4u);
  const auto give = [&](int k, Time at) {
    const Outgoing& o = packets[static_cast<std::size_t>(k)];
    b.receive(o.header, &src.bytes[o.payload_addr], o.payload_bytes, at);
  };
  const auto written = [&](std::uint64_t from, std::uint64_t to) {
    int n = 0;
    for (std::uint64_t i = from; i < to; ++i) n += dst.writes[i];
    return n;
  };
  give(0, 0);
  give(2, 10 * kNs);
  give(3, 20 * kNs);
  EXPECT_EQ(b.stats().placed_early, 2u);
  EXPECT_EQ(written(1000, 1256), 256);   // packet 0, in order
  EXPECT_EQ(written(1256, 1512), 0);     // packet 1 not here
  EXPECT_EQ(written(1512, 2024), 512);   // packets 2 and 3, placed on arrival
  EXPECT_TRUE(delivered.empty());
  EXPECT_FALSE(b.has_response());        // no NAK yet: it may be reordering
  EXPECT_EQ(b.next_timer(), 10 * kNs + 3 * kUs);  // the hole, first seen with packet 2
  b.tick(10 * kNs + 3 * kUs);
  auto nak = b.next(10 * kNs + 3 * kUs);
  ASSERT_TRUE(nak && nak->header.aeth);
  EXPECT_TRUE(nak->header.aeth->nak());
  EXPECT_EQ(nak->header.psn, 1u);
  give(1, 4 * kUs);
  ASSERT_EQ(delivered.size(), 1u);
  EXPECT_EQ(delivered[0].addr, 1000u);
  EXPECT_EQ(delivered[0].bytes, 1024u);
  EXPECT_EQ(written(1000, 2024), 1024);  // each byte once
  EXPECT_TRUE(std::equal(dst.bytes.begin() + 1000, dst.bytes.begin() + 2024, src.bytes.begin()));
  auto ack = b.next(4 * kUs);
  ASSERT_TRUE(ack && ack->header.aeth);
  EXPECT_FALSE(ack->header.aeth->nak());
  EXPECT_EQ(ack->header.psn, 3u);  // all four
}

// After a NAK for PSN 3 of 8 sent: Go-Back-N sends 3..7 again, selective repeat 3 alone.
TEST(QueuePair, SelectiveRepeatResendsOnlyWhatTheNakNames) {
  for (bool selective : {false, true}) {
    QpConfig cfg;
    cfg.mtu = 256;
    cfg.reorder_window = selective ? 16 : 0;
    cfg.selective_repeat = selective;
    CountingMemory m(1 << 14);
    QueuePair qp(1, 2, cfg, m);
    qp.post_send({1, Verb::kWrite, 0, 0, 0, 8 * 256});
    while (qp.next(0)) {
    }
    RoceHeader nak;
    nak.opcode = opcode::kAcknowledge;
    nak.dest_qp = 1;
    nak.psn = 3;
    nak.aeth = Aeth{Aeth::kNakPsnSequenceError, 0};
    qp.receive(nak, nullptr, 0, 1 * kUs);
    std::vector<std::uint32_t> psns;
    while (auto o = qp.next(1 * kUs)) psns.push_back(o->header.psn);
    const std::vector<std::uint32_t> want = selective ? std::vector<std::uint32_t>{3} : std::vector<std::uint32_t>{3, 4, 5, 6, 7};
    EXPECT_EQ(psns, want);
  }
}

TEST(QueuePair, BadConfigurationIsRefusedByName) {
  QpConfig cfg;
  cfg.mtu = 1500;
  EXPECT_THROW(cfg.validate("nic.qp"), ConfigError);
  try {
    cfg.validate("nic.qp");
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "nic.qp.mtu = 1500: allowed 256, 512, 1024, 2048, 4096");
  }
  cfg.mtu = 4096;
  cfg.retry_count = 8;
  EXPECT_THROW(cfg.validate("nic.qp"), ConfigError);
  cfg.retry_count = 7;
  cfg.selective_repeat = true;  // with no reorder window to keep what follows a hole
  EXPECT_THROW(cfg.validate("nic.qp"), ConfigError);
}

}  // namespace
}  // namespace xy::nic
