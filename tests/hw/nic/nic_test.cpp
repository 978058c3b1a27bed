// The NIC's engine on a clock (hw/nic/nic.hpp): two NICs joined by plain channels, stepped by
// hand without SystemC. Completion times against the line arithmetic written here; DCQCN's
// pacing against the rate the reaction point reports, with a relay that marks every frame CE.
#include "hw/nic/nic.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

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

// Takes frames from one channel and passes them on, CE-marked if asked, a cycle later.
struct Relay : Core {
  Channel<Packet*>& in;
  Channel<Packet*>& out;
  bool mark;
  Relay(Channel<Packet*>& i, Channel<Packet*>& o, bool m) : Core("relay"), in(i), out(o), mark(m) {}
  void eval() override {
    if (in.can_pop() && out.can_push()) {
      Packet* p = in.pop();
      p->ecn_ce = mark;
      out.push(p);
    }
  }
  void commit() override { set_busy(in.ready_by(now() + 1)); }
};

constexpr Time kPeriod = 640 * kPs;  // 1.5625 GHz
constexpr std::uint32_t kWidth = 64;  // bytes a cycle: 800 Gb/s
constexpr Cycle kLatency = 100;

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
  explicit Bench(const NicParams& p, bool mark = false)
      : relay(a_out, a_to_b, mark),
        a("a", 0, p, kWidth, link::PortAttachment(a_out, b_to_a, nullptr, nullptr, [](Core&) {}), pool, mem_a, stats),
        b("b", 1, p, kWidth, link::PortAttachment(b_to_a, a_to_b, nullptr, nullptr, [](Core&) {}), pool, mem_b, stats) {
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

}  // namespace
}  // namespace xy::nic
