// The NIC's engine on a clock (hw/nic/nic.hpp): two NICs joined by plain channels, stepped by
// hand without SystemC. Completion times against the line arithmetic written here; DCQCN's
// pacing against the rate the reaction point reports, with a relay that marks every frame CE.
#include "hw/nic/nic.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "hw/switch/telemetry.hpp"
#include "kernel/channel.hpp"
#include "kernel/clock.hpp"
#include "tests/kernel/run_until.hpp"

namespace xy::nic {
namespace {

struct VectorMemory : Memory {
  std::vector<std::uint8_t> bytes = std::vector<std::uint8_t>(1 << 22);
  void read(std::uint64_t addr, std::uint8_t* out, std::size_t size) const override {
    std::copy(bytes.begin() + static_cast<long>(addr), bytes.begin() + static_cast<long>(addr + size), out);
  }
  void write(std::uint64_t addr, const std::uint8_t* data, std::size_t size) override {
    std::copy(data, data + size, bytes.begin() + static_cast<long>(addr));
  }
};

// Takes frames from one channel and passes them on, CE-marked if asked, a cycle later; a frame
// that asks for INT is shown to `stamp` (a switch's part).
struct Relay : Core {
  Channel<Packet*>& in;
  Channel<Packet*>& out;
  bool mark;
  std::function<void(Packet&, Time)> stamp;
  Relay(Channel<Packet*>& i, Channel<Packet*>& o, bool m) : Core("relay"), in(i), out(o), mark(m) {}
  void eval() override {
    if (in.can_pop() && out.can_push()) {
      Packet* p = in.pop();
      p->ecn_ce = mark;
      if (stamp && p->telemetry) stamp(*p, clock().time_of(now()));
      out.push(p);
    }
  }
  void commit() override { set_busy(in.ready_by(now() + 1)); }
};

constexpr Time kPeriod = 640 * kPs;  // 1.5625 GHz
constexpr std::uint32_t kWidth = 64;  // bytes a cycle: 800 Gb/s
constexpr Cycle kLatency = 100;

// A port between two channels, with no flow control.
link::PortAttachment plain_port(Channel<Packet*>& out, Channel<Packet*>& in) {
  return link::PortAttachment(out, in, nullptr, nullptr, [](Core&) {});
}

// A -> relay -> B and B -> A, each way kLatency cycles (the relay's cycle included).
struct Bench {
  Clock clock{"clk", kPeriod};
  PacketPool pool;
  Stats stats;
  VectorMemory mem_a, mem_b;
  Channel<Packet*> a_out{"a_out", clock, ChannelSpec{1}}, a_to_b{"a_to_b", clock, ChannelSpec{kLatency - 1}},
      b_to_a{"b_to_a", clock, ChannelSpec{kLatency}};
  Relay relay;
  Nic a, b;
  // `pb`: B's parameters where they differ from A's.
  explicit Bench(const NicParams& p, bool mark = false, const NicParams* pb = nullptr)
      : relay(a_out, a_to_b, mark),
        a("a", 0, p, kWidth, {plain_port(a_out, b_to_a)}, pool, mem_a, stats),
        b("b", 1, pb ? *pb : p, kWidth, {plain_port(b_to_a, a_to_b)}, pool, mem_b, stats) {
    clock.attach(relay);
    clock.attach(a);
    clock.attach(b);
    a_out.connect(&a, &relay);
    a_to_b.connect(&relay, &b);
    b_to_a.connect(&b, &a);
    a.create_qp(1, 1, 2);
    b.create_qp(2, 0, 1);
    for (std::size_t i = 0; i < mem_a.bytes.size(); ++i) mem_a.bytes[i] = static_cast<std::uint8_t>(i * 13 + 5);
  }
};

// Runs the bench to cycle `until` (or until nothing is left to do): the cycles A's frames left.
std::vector<Cycle> departures_from_a(Bench& bench, Cycle until) {
  std::vector<Cycle> departures;
  Cycle seen = 0;
  while (bench.clock.now() < until && bench.clock.has_work()) {
    bench.clock.step();
    if (bench.a_out.pushed() > seen) {
      seen = bench.a_out.pushed();
      departures.push_back(bench.clock.now());
    }
  }
  return departures;
}

// Every departure after the first past `from` follows the one before by `gap` cycles.
void expect_spaced_after(const std::vector<Cycle>& departures, Cycle from, Cycle gap) {
  ASSERT_GT(departures.size(), 10u);
  std::size_t after = 0;
  while (after < departures.size() && departures[after] <= from) ++after;
  ASSERT_LT(after + 5, departures.size());
  for (std::size_t i = after + 1; i < departures.size(); ++i) EXPECT_EQ(departures[i] - departures[i - 1], gap) << i;
}

NicParams no_cc() {
  NicParams p;
  p.dcqcn = false;
  return p;
}

// 1 MiB in 256 WRITE packets of 4096 B: the first 4174 B on the line (Ethernet, IPv4, UDP, BTH,
// RETH, payload, ICRC, FCS), the others 4158 B; 66 and 65 cycles at 64 B a cycle, back to back
// from the cycle after the post. The last leaves at 1 + 66 + 254 x 65, reaches B 100 cycles
// later and is acknowledged at once (its A bit); the ACK is back 100 cycles after that, when the
// WRITE completes.
TEST(Nic, AWriteCompletesWhenTheLineArithmeticSays) {
  Bench bench(no_cc());
  bench.a.post_send(1, {7, Verb::kWrite, 0, 1 << 20, 0, 1 << 20});
  testing::run_until({&bench.clock}, 100 * kUs);
  auto& done = bench.a.qp(1).completions();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].status, WcStatus::kSuccess);
  const Cycle last_leaves = 1 + 66 + 254 * 65;
  EXPECT_EQ(done[0].at, (last_leaves + 2 * kLatency) * kPeriod);
  EXPECT_TRUE(std::equal(bench.mem_a.bytes.begin(), bench.mem_a.bytes.begin() + (1 << 20),
                         bench.mem_b.bytes.begin() + (1 << 20)));
  EXPECT_TRUE(bench.a.idle());
  EXPECT_TRUE(bench.b.idle());
}

// Every frame CE-marked: B owes a CNP for the first and then at most one per 50 us; A's rate
// halves on the first (alpha starts at 1) and its packets then leave 8 x 4158 B / 400 Gb/s =
// 83.16 ns apart, the 130 cycles that cover it, as long as no timer has moved the rate.
TEST(Nic, DcqcnPacesAQpAtTheRateItsReactionPointSets) {
  NicParams p;
  p.dcqcn_config = DcqcnConfig::paper(800e9);
  Bench bench(p, true);
  bench.a.post_send(1, {7, Verb::kWrite, 0, 0, 0, 4 << 20});
  const std::vector<Cycle> departures = departures_from_a(bench, 30000);
  const DcqcnReactionPoint* rp = bench.a.rate_limiter(1);
  ASSERT_NE(rp, nullptr);
  // The CNP: B sends it when the first frame arrives (cycle 1 + 66 + 100), A has it 100 cycles later.
  expect_spaced_after(departures, 1 + 66 + 2 * kLatency, 130);
  EXPECT_EQ(bench.stats.find_counter("b.cnps_sent")->value(), 1u);  // 30000 cycles = 19.2 us < 50 us
}

// A READ's responses are its responder's data: B READs 4 MiB from A, every response CE-marked;
// B's CNP slows A, whose responses then leave 130 cycles apart, as its WRITEs would.
TEST(Nic, DcqcnPacesReadResponsesAtTheRespondersRate) {
  NicParams p;
  p.dcqcn_config = DcqcnConfig::paper(800e9);
  Bench bench(p, true);
  bench.b.post_send(2, {7, Verb::kRead, 0, 0, 0, 4 << 20});
  const std::vector<Cycle> departures = departures_from_a(bench, 30000);
  ASSERT_FALSE(departures.empty());
  // A's first response is at B 66 + 100 cycles after it left; B's CNP is at A 100 cycles later.
  expect_spaced_after(departures, departures[0] + 66 + 2 * kLatency, 130);
  EXPECT_EQ(bench.stats.find_counter("b.cnps_sent")->value(), 1u);
  EXPECT_EQ(bench.a.rate_limiter(1)->stats().cnps, 1u);
}

// The host side over PCIe Gen5 x4 (65536/1040/4 bytes a ns each way, slower than the 100 bytes a
// ns of the line), arithmetic written here: 24 bytes of framing, header and LCRC a request TLP,
// 20 a completion, TLPs of 256 bytes of payload.
double x4_wire_ns(double bytes) { return bytes * 1040.0 * 4 / 65536.0; }
constexpr double kPcieLatencyNs = 250, kMemoryNs = 100;
NicParams over_x4() {
  NicParams p = no_cc();
  p.pcie = true;
  p.pcie_config.lanes = 4;
  return p;
}
Cycle cycle_at_or_after(double ns) { return static_cast<Cycle>(std::ceil(ns * kNs / kPeriod - 1e-9)); }

// A 1 MiB WRITE from a host behind PCIe x4: the doorbell, the WQE read, then the payload read as
// one DMA read whose completions (4096 of 256 + 20 bytes) bound the packets; the last goes the
// cycle its last byte is in, and the completion is in the CQ once its CQE is written.
TEST(Nic, OverPcieAWriteWaitsForTheDoorbellTheWqeAndItsPayload) {
  Bench bench(over_x4());
  bench.a.post_send(1, {7, Verb::kWrite, 0, 1 << 20, 0, 1 << 20});
  testing::run_until({&bench.clock}, 200 * kUs);
  const auto& done = bench.a.qp(1).completions();
  ASSERT_EQ(done.size(), 1u);
  const double doorbell = x4_wire_ns(8 + 24) + kPcieLatencyNs;
  const double wqe = doorbell + x4_wire_ns(24) + kPcieLatencyNs + kMemoryNs + x4_wire_ns(64 + 20) + kPcieLatencyNs;
  const double read_at = cycle_at_or_after(wqe) * to_ns(kPeriod);  // the engine's cycle
  const double last_byte = read_at + x4_wire_ns(24) + kPcieLatencyNs + kMemoryNs + x4_wire_ns(4096 * 276.0) +
                           kPcieLatencyNs;
  const double acked = (cycle_at_or_after(last_byte) + 2 * kLatency) * to_ns(kPeriod);
  EXPECT_NEAR(to_ns(done[0].at), acked + x4_wire_ns(64 + 24) + kPcieLatencyNs, 0.01);
  EXPECT_TRUE(std::equal(bench.mem_a.bytes.begin(), bench.mem_a.bytes.begin() + (1 << 20),
                         bench.mem_b.bytes.begin() + (1 << 20)));
}

// A 1 MiB SEND from an ideal host into one behind PCIe x4: the packets come faster than B can
// write them (4096 + 16 x 24 bytes each), so the writes queue from the first arrival on, and the
// receive completes once they and its CQE are in host memory.
TEST(Nic, OverPcieAReceiveCompletesWhenItsPayloadAndCqeAreWritten) {
  const NicParams ideal = no_cc();
  NicParams host = over_x4();
  host.rx_buffer_bytes = 2 << 20;  // the whole message fits: nothing dropped
  Bench bench(ideal, false, &host);
  bench.b.post_recv(2, 9, 0, 1 << 20);
  bench.a.post_send(1, {7, Verb::kSend, 0, 0, 0, 1 << 20});
  testing::run_until({&bench.clock}, 200 * kUs);
  const auto& done = bench.b.qp(2).completions();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].verb, Verb::kRecv);
  const double first_arrival = (1 + kLatency) * to_ns(kPeriod);
  const double payload_written = first_arrival + x4_wire_ns(256 * (4096 + 16 * 24.0)) + kPcieLatencyNs;
  // The CQE follows the payload up the link: it lands one CQE's wire time after the payload's last.
  EXPECT_NEAR(to_ns(done[0].at), payload_written + x4_wire_ns(64 + 24), 0.01);
}

// A 1 MiB WRITE into a host behind PCIe x4 whose NIC has a 64 KiB receive buffer and no link
// flow control: a frame stays in the buffer until its payload's write has left, 4096 + 16 x 24
// bytes a packet at x4, while frames arrive every 65 cycles. The first that does not fit is
// dropped; Go-Back-N sends it again, and every byte lands once.
TEST(Nic, OverPcieAFullReceiveBufferDropsWhatDoesNotFitAndGoBackNRecoversIt) {
  NicParams host = over_x4();
  host.rx_buffer_bytes = 64 * 1024;
  Bench bench(no_cc(), false, &host);
  bench.a.post_send(1, {7, Verb::kWrite, 0, 1 << 20, 0, 1 << 20});
  // Frame 0 (4174 B) goes at cycle 1 and arrives at 101, frame k > 0 (4158 B) at 101 + 66 +
  // 65 (k - 1); the write of frame j has left at the first arrival + (j + 1) writes' wire time.
  // The first frame that finds no room:
  const double write_ns = x4_wire_ns(4096 + 16 * 24.0), first_ns = 101 * to_ns(kPeriod);
  std::uint64_t first_dropped = 0;
  for (std::uint64_t k = 0;; ++k) {
    const double at = (k ? 167 + 65 * (k - 1) : 101) * to_ns(kPeriod);
    std::uint64_t held = 0;
    for (std::uint64_t j = 0; j < k; ++j)
      if (first_ns + (j + 1) * write_ns > at) held += j ? 4158 : 4174;
    if (held + 4158 > host.rx_buffer_bytes) {
      first_dropped = k;
      break;
    }
  }
  while (bench.b.rx_dropped() == 0 && bench.clock.now() < 100000) bench.clock.step();
  EXPECT_EQ(bench.stats.find_counter("b.frames_received")->value(), first_dropped);
  testing::run_until({&bench.clock}, 2000 * kUs);
  const auto& done = bench.a.qp(1).completions();
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].status, WcStatus::kSuccess);
  EXPECT_GT(bench.a.qp(1).stats().retransmitted_bytes, 0u);
  EXPECT_LE(bench.b.rx_buffer_peak_bytes(), host.rx_buffer_bytes);
  EXPECT_TRUE(std::equal(bench.mem_a.bytes.begin(), bench.mem_a.bytes.begin() + (1 << 20),
                         bench.mem_b.bytes.begin() + (1 << 20)));
}

// Two QPs report into one CQ: a 64 KiB WRITE and, posted after it, a 4 KiB one, whose single
// packet goes second in the round robin and asks for an ACK, so it completes first.
TEST(Nic, PollingACompletionQueueGivesItsCompletionsOldestFirst) {
  Bench bench(no_cc());
  const std::uint32_t cq = bench.a.create_cq(4);
  bench.a.create_qp(3, 1, 4, 0, 0, cq);
  bench.b.create_qp(4, 0, 3);
  bench.a.create_qp(5, 1, 6, 0, 0, cq);
  bench.b.create_qp(6, 0, 5);
  bench.a.post_send(3, {30, Verb::kWrite, 0, 1 << 20, 0, 64 << 10});
  bench.a.post_send(5, {50, Verb::kWrite, 0, 2 << 20, 0, 4 << 10});
  EXPECT_TRUE(bench.a.poll_cq(cq, 4).empty());
  testing::run_until({&bench.clock}, 200 * kUs);
  const auto first = bench.a.poll_cq(cq, 1);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].qpn, 5u);
  EXPECT_EQ(first[0].completion.id, 50u);
  const auto rest = bench.a.poll_cq(cq, 4);
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(rest[0].qpn, 3u);
  EXPECT_LT(first[0].completion.at, rest[0].completion.at);
  EXPECT_TRUE(bench.a.poll_cq(cq, 4).empty());
}

// Over PCIe a completion is in its CQ once its CQE is written: polled before, nothing.
TEST(Nic, OverPcieACompletionIsPolledOnceItsCqeIsWritten) {
  Bench bench(over_x4());
  const std::uint32_t cq = bench.a.create_cq(4);
  bench.a.create_qp(3, 1, 4, 0, 0, cq);
  bench.b.create_qp(4, 0, 3);
  bench.a.post_send(3, {30, Verb::kWrite, 0, 1 << 20, 0, 4096});
  while (bench.a.qp(3).completions().empty() && bench.clock.now() < 100000) bench.clock.step();
  ASSERT_FALSE(bench.a.qp(3).completions().empty());
  const Time cqe_written = bench.a.qp(3).completions()[0].at;
  EXPECT_GT(cqe_written, bench.clock.time_of(bench.clock.now()));
  EXPECT_TRUE(bench.a.poll_cq(cq, 4).empty());
  while (bench.clock.time_of(bench.clock.now()) < cqe_written) bench.clock.step();
  const auto polled = bench.a.poll_cq(cq, 4);
  ASSERT_EQ(polled.size(), 1u);
  EXPECT_EQ(polled[0].completion.id, 30u);
}

// A CQ of one entry that is never polled: the second completion overruns it.
TEST(Nic, ACompletionQueueNeverPolledOverrunsWithAnErrorNamingIt) {
  Bench bench(no_cc());
  const std::uint32_t cq = bench.a.create_cq(1);
  bench.a.create_qp(3, 1, 4, 0, 0, cq);
  bench.b.create_qp(4, 0, 3);
  bench.a.post_send(3, {1, Verb::kWrite, 0, 0, 0, 4096});
  bench.a.post_send(3, {2, Verb::kWrite, 0, 4096, 0, 4096});
  try {
    testing::run_until({&bench.clock}, 100 * kUs);
    FAIL() << "no overrun";
  } catch (const std::logic_error& e) {
    EXPECT_STREQ(e.what(), "a: CQ 0 overrun: 1 completions not polled");
  }
}

// IGLB over 4 paths (UDP source ports) of which the relay reports the second busy: its port
// sent at line rate with 200 KB queued, where the others sent only the packets that crossed them.
// Once the records are back, a packet takes the busy path only when both of its two draws fall
// on it: 1/16 of them, against 1/4 for each path before any record came back.
TEST(Nic, IglbMovesAQpsPacketsOffThePathItsRecordsSayIsBusy) {
  NicParams p = no_cc();
  p.iglb = p.telemetry = true;
  p.iglb_config.paths = 4;
  Bench bench(p);
  const std::uint16_t busy = flow_entropy(2, 1);
  std::map<std::uint16_t, std::uint64_t> sent;  // bytes each port carried
  std::map<std::uint16_t, std::uint64_t> packets_after;  // packets each port carried from 20 µs on
  bench.relay.stamp = [&](Packet& pk, Time now) {
    sent[pk.entropy] += pk.bytes;
    const std::uint64_t tx = pk.entropy == busy ? static_cast<std::uint64_t>(to_ns(now) * 100) : sent[pk.entropy];
    sw::stamp_telemetry(pk.bytes_now(), now, tx, pk.entropy == busy ? 200000 : 0, sw::telemetry_rate_code(800));
    if (now >= 20 * kUs) ++packets_after[pk.entropy];
  };
  bench.a.post_send(1, {7, Verb::kWrite, 0, 0, 0, 4 << 20});
  testing::run_until({&bench.clock}, 1000 * kUs);
  ASSERT_EQ(bench.a.qp(1).completions().size(), 1u);
  EXPECT_EQ(sent.size(), 4u);
  std::uint64_t total = 0;
  for (const auto& [port, n] : packets_after) total += n;
  ASSERT_GT(total, 500u);
  EXPECT_NEAR(static_cast<double>(packets_after[busy]) / static_cast<double>(total), 1.0 / 16, 0.03);
  EXPECT_TRUE(std::equal(bench.mem_a.bytes.begin(), bench.mem_a.bytes.begin() + (4 << 20), bench.mem_b.bytes.begin()));
}

// Drops every frame that reaches it from cycle `cut` on (a line gone dark), passes the others on
// a cycle later.
struct Cutter : Core {
  Channel<Packet*>& in;
  Channel<Packet*>& out;
  PacketPool& pool;
  Cycle cut;
  Cutter(Channel<Packet*>& i, Channel<Packet*>& o, PacketPool& p, Cycle c)
      : Core("cutter"), in(i), out(o), pool(p), cut(c) {}
  void eval() override {
    if (!in.can_pop() || !out.can_push()) return;
    Packet* p = in.pop();
    if (now() >= cut) pool.release(p);
    else out.push(p);
  }
  void commit() override { set_busy(in.ready_by(now() + 1)); }
};

// Two NICs with a port on each of two planes, each way kLatency cycles; plane 0 goes dark at
// cycle `cut` both ways, and if `lose_lock`, both ports there lose lock then (else the fault is
// beyond them: only missing ACKs tell). A's QP 1 to B's QP 2 starts on plane 0.
struct TwoPlanes {
  Clock clock{"clk", kPeriod};
  PacketPool pool;
  Stats stats;
  VectorMemory mem_a, mem_b;
  Channel<Packet*> a0_out{"a0_out", clock, ChannelSpec{1}}, a0_to_b{"a0_to_b", clock, ChannelSpec{kLatency - 1}},
      b0_out{"b0_out", clock, ChannelSpec{1}}, b0_to_a{"b0_to_a", clock, ChannelSpec{kLatency - 1}},
      a1_to_b{"a1_to_b", clock, ChannelSpec{kLatency}}, b1_to_a{"b1_to_a", clock, ChannelSpec{kLatency}};
  Cutter ab, ba;
  Nic a, b;
  TwoPlanes(Cycle cut, bool lose_lock)
      : ab(a0_out, a0_to_b, pool, cut),
        ba(b0_out, b0_to_a, pool, cut),
        a("a", 0, no_cc(), kWidth, ports(a0_out, b0_to_a, a1_to_b, b1_to_a, cut, lose_lock), pool, mem_a, stats),
        b("b", 1, no_cc(), kWidth, ports(b0_out, a0_to_b, b1_to_a, a1_to_b, cut, lose_lock), pool, mem_b, stats) {
    for (std::size_t i = 0; i < mem_a.bytes.size(); ++i) mem_a.bytes[i] = static_cast<std::uint8_t>(i * 7 + 3);
    for (Core* c : std::initializer_list<Core*>{&ab, &ba, &a, &b}) clock.attach(*c);
    a0_out.connect(&a, &ab);
    a0_to_b.connect(&ab, &b);
    b0_out.connect(&b, &ba);
    b0_to_a.connect(&ba, &a);
    a1_to_b.connect(&a, &b);
    b1_to_a.connect(&b, &a);
    a.create_qp(1, 1, 2);
    b.create_qp(2, 0, 1);
  }
  static std::vector<link::PortAttachment> ports(Channel<Packet*>& out0, Channel<Packet*>& in0, Channel<Packet*>& out1,
                                                 Channel<Packet*>& in1, Cycle cut, bool lose_lock) {
    std::vector<link::PortAttachment> v{plain_port(out0, in0), plain_port(out1, in1)};
    const Time dark = cut * kPeriod;
    if (lose_lock)
      v[0].watch_line({[dark](Time t) { return t < dark; },
                       [dark](Time t) { return t < dark ? dark : link::PortAttachment::Line::kNoChange; }});
    return v;
  }
  // Every byte of A's first `bytes` once at B, the WRITE completed.
  void expect_delivered(std::uint32_t bytes) {
    ASSERT_EQ(a.qp(1).completions().size(), 1u);
    EXPECT_EQ(a.qp(1).completions()[0].status, WcStatus::kSuccess);
    EXPECT_TRUE(std::equal(mem_a.bytes.begin(), mem_a.bytes.begin() + bytes, mem_b.bytes.begin()));
    EXPECT_EQ(a.plane_of(1), 1);
    EXPECT_TRUE(a.idle());
  }
};

TEST(Nic, AQpWhosePortLosesLockMovesToTheOtherPlaneAndEveryByteArrivesOnce) {
  constexpr Cycle kCut = 3000;
  TwoPlanes bench(kCut, true);
  Nic& a = bench.a;
  a.post_send(1, {7, Verb::kWrite, 0, 0, 0, 1 << 20});
  testing::run_until({&bench.clock}, 200 * kUs);

  bench.expect_delivered(1 << 20);
  EXPECT_FALSE(a.port_up(0));
  EXPECT_TRUE(a.port_up(1));
  ASSERT_EQ(a.failovers(1).size(), 1u);
  const Nic::Failover& m = a.failovers(1).front();
  EXPECT_EQ(m.by, Nic::FoundBy::kLinkDown);
  EXPECT_EQ(m.from, 0);
  EXPECT_EQ(m.to, 1);
  // Lock lost at cycle 3000; down 1 us (1562.5 cycles) later, at the cycle after; the QP's
  // first packet on plane 1 a switch-over of 1 us after that, again at the cycle after.
  const Cycle found = kCut + 1563;
  EXPECT_EQ(m.found, found * kPeriod);
  EXPECT_EQ(m.resumed, (found + 1563) * kPeriod);
  // What A had sent on plane 0 by then, back to back: packet 0 at cycle 1 (66 cycles), packet
  // k >= 1 at 67 + 65 (k - 1). All of it unacknowledged from the cut on, sent again.
  EXPECT_EQ(m.sent_end, (found - 1 - 67) / 65 + 2);
  EXPECT_NE(m.drained, Nic::kPending);
  EXPECT_GT(m.drained, m.resumed);
  EXPECT_GT(a.qp(1).stats().retransmitted_packets, 0u);
}

// The same fault beyond the ports (they keep their lock): A's QP moves when nothing it sent has
// been acknowledged for the path timeout, counted from its last progress; B's replies follow
// the requests onto plane 1.
TEST(Nic, AQpWhosePathDiesMovesAfterThePathTimeoutFromItsLastAck) {
  constexpr Cycle kCut = 3000;
  TwoPlanes bench(kCut, false);
  Nic& a = bench.a;
  a.post_send(1, {7, Verb::kWrite, 0, 0, 0, 1 << 20});
  testing::run_until({&bench.clock}, (kCut + 4 * kLatency) * kPeriod);  // every ACK from before the cut is in
  ASSERT_TRUE(a.failovers(1).empty());
  const Time last_ack = a.qp(1).last_acknowledged();
  EXPECT_LT(last_ack, kCut * kPeriod + 2 * kLatency * kPeriod);
  testing::run_until({&bench.clock}, 200 * kUs);

  bench.expect_delivered(1 << 20);
  EXPECT_TRUE(a.port_up(0));
  ASSERT_EQ(a.failovers(1).size(), 1u);
  const Nic::Failover& m = a.failovers(1).front();
  EXPECT_EQ(m.by, Nic::FoundBy::kPathTimeout);
  EXPECT_EQ(m.found, cycles_for(last_ack + 16 * kUs, kPeriod) * kPeriod);
  EXPECT_EQ(m.resumed, cycles_for(m.found + 1 * kUs, kPeriod) * kPeriod);
  EXPECT_NE(m.drained, Nic::kPending);
}

}  // namespace
}  // namespace xy::nic
