// The switch datapath on its own: egress scheduling across VCs, RED marking, INT records.
#include <gtest/gtest.h>

#include "hw/switch/switch.hpp"
#include "hw/switch/telemetry.hpp"
#include "kernel/clock_domain.hpp"

namespace xy {
namespace {

// Sends `bytes` packets to port `dst` on `vc` back to back.
struct Blaster : Core {
  Channel<Packet*>& out;
  PacketPool& pool;
  int src, dst;
  std::uint8_t vc;
  std::uint32_t bytes = 1024;
  bool telemetry = false;  // real bytes ending in an empty INT trailer, to be stamped
  Cycle line_free = 0;
  std::uint64_t id = 0;
  Blaster(std::string name, Channel<Packet*>& o, PacketPool& p, int s, int d, std::uint8_t v)
      : Core(std::move(name)), out(o), pool(p), src(s), dst(d), vc(v) {
    set_busy(true);
  }
  void eval() override {
    if (now() < line_free) return;
    Packet* p = pool.acquire();
    p->id = ++id;
    p->src = static_cast<std::uint32_t>(src);
    p->dst = static_cast<std::uint32_t>(dst);
    p->vc = vc;
    p->bytes = bytes;
    if (telemetry) {
      p->phantom = false;
      p->payload.assign(bytes - 4, 0);  // the FCS is the MAC's
      p->telemetry = true;
    }
    out.push(p);
    line_free = now() + bytes / 64;
  }
};

struct Counter2 : Core {
  Channel<Packet*>& in;
  PacketPool& pool;
  std::uint64_t bytes[2] = {0, 0}, marked = 0, packets = 0;
  std::vector<sw::TelemetryRecords> records;  // of each packet that carried a trailer, in order
  Counter2(Channel<Packet*>& i, PacketPool& p) : Core("sink"), in(i), pool(p) {}
  void eval() override {
    while (in.can_pop()) {
      Packet* p = in.pop();
      bytes[p->vc] += p->bytes;
      marked += p->ecn_ce;
      ++packets;
      if (p->telemetry) records.push_back(sw::read_telemetry(p->payload.data(), p->payload.size()));
      pool.release(p);
    }
  }
  void commit() override { set_busy(in.ready_by(now() + 1)); }
};

struct Tally {
  std::uint64_t bytes[2], marked, packets;
  std::vector<sw::TelemetryRecords> records;
};

// Two inputs saturate one output, one on each VC.
Tally run_two_vcs(const std::vector<std::string>& sets, bool telemetry = false) {
  Config c;
  for (const auto& s : sets) c.set_from_assignment(s);
  sw::SwitchParams p = sw::SwitchParams::declare(c, "switch");
  p.ports = 3;
  p.vcs = 2;
  ClockDomain domain("switch", p.period());
  PacketPool pool;
  Stats stats;
  Channel<Packet*> in0("in0", domain.clock(), {1, 0, 1, 2}), in1("in1", domain.clock(), {1, 0, 1, 2}),
      out2("out2", domain.clock(), {1, 0, 1, 2});
  sw::Switch s("sw", p, domain.clock(), stats, {&in0, &in1, nullptr}, {nullptr, nullptr, &out2},
               [](const Packet& pk) { return static_cast<int>(pk.dst); });
  Blaster a("a", in0, pool, 0, 2, 0), b("b", in1, pool, 1, 2, 1);
  a.telemetry = b.telemetry = telemetry;
  Counter2 sink(out2, pool);
  for (Core* core : std::initializer_list<Core*>{&a, &b, &sink}) domain.attach(*core);
  in0.connect(&a, &s.ingress_core(0));
  in1.connect(&b, &s.ingress_core(1));
  out2.connect(&s.egress_core(2), &sink);
  a.wake_at(0);
  b.wake_at(0);
  ClockDomain::set_run_ahead_limit(20 * kUs);
  sc_core::sc_start(to_sc_time(20 * kUs));
  s.check_buffer_accounting();
  return {{sink.bytes[0], sink.bytes[1]}, sink.marked, sink.packets, sink.records};
}

// With a crossbar speedup of 2 the egress queue builds up and its scheduler decides the shares.
// (Without speedup the crossbar's round robin over the inputs decides them: the VOQs are per
// input and output, not per VC.)
TEST(SwitchEgress, StrictPriorityServesVcZeroFirst) {
  const Tally c = run_two_vcs({"switch.speedup=2"});
  EXPECT_GT(c.bytes[0], 10 * c.bytes[1]);
}

TEST(SwitchEgress, DeficitRoundRobinSharesTheOutputEvenly) {
  const Tally c = run_two_vcs({"switch.speedup=2", "switch.egress_scheduler=dwrr"});
  const double share = static_cast<double>(c.bytes[0]) / static_cast<double>(c.bytes[0] + c.bytes[1]);
  EXPECT_NEAR(share, 0.5, 0.02);
}

// Two inputs into one output: the backlog grows without bound, so once it passes kmax every
// packet is marked; with kmin above anything it reaches, none is.
TEST(SwitchEgress, RedMarksEveryPacketOnceTheBacklogPassesKmax) {
  const Tally t = run_two_vcs({"switch.ecn.on=true", "switch.ecn.kmin_bytes=50000", "switch.ecn.kmax_bytes=100000"});
  EXPECT_GT(t.marked, t.packets / 2);
}

TEST(SwitchEgress, RedMarksNothingBelowKmin) {
  const Tally t = run_two_vcs({"switch.ecn.on=true", "switch.ecn.kmin_bytes=100000000", "switch.ecn.kmax_bytes=200000000"});
  EXPECT_GT(t.packets, 1000u);
  EXPECT_EQ(t.marked, 0u);
}

// Two inputs at line rate into one output, every packet asking for INT: each record holds what
// the output had sent before the packet (the sum of the packets ahead of it, in 128-byte units),
// the packets leave back to back (16 cycles of 0.64 ns for 1024 bytes at 64 B a cycle), and the
// backlog behind each grows by one packet per packet sent (two arrive for each that leaves).
TEST(SwitchEgress, IntRecordsTheBytesSentBeforeThePacketTheLineTimeAndTheGrowingBacklog) {
  const Tally t = run_two_vcs({}, true);
  ASSERT_GT(t.records.size(), 300u);
  std::uint64_t sent_before = 0;
  for (std::size_t k = 0; k < t.records.size(); ++k) {
    ASSERT_EQ(t.records[k].hops, 1) << k;
    const sw::TelemetryHop& h = t.records[k].hop[0];
    EXPECT_EQ(h.tx_units, (sent_before / 128) & 0xFFFFF) << k;
    EXPECT_EQ(h.line_gbps(), 800.0);
    if (k > 0) EXPECT_NEAR(h.ns_since(t.records[k - 1].hop[0]), 16 * 0.64, 1.0) << k;
    sent_before += 1024;
  }
  // Over 200 packets from the 50th (past the start, before the buffer fills): 199 packets of growth.
  const sw::TelemetryHop &from = t.records[50].hop[0], &to = t.records[250].hop[0];
  const double growth = static_cast<double>(to.queue_bytes()) - static_cast<double>(from.queue_bytes());
  EXPECT_NEAR(growth / 200, 1024, 1024 * 0.02);
}

// IPCN: inputs 0 and 1 send to output 2 (one of them, or both: 2:1), and each notification
// goes back to its source's port. Windows of 100 ns, a 1 us horizon, 100 KB, one a flow every
// 2 us. At 2:1 the backlog grows by a port's rate, 64 B a cycle: 100 KB in 1 us of horizon, so
// each source hears within the first microseconds and then once an interval; at 1:1 (and with
// a threshold nothing reaches) nobody hears.
struct Notices {
  std::vector<Cycle> at[2];  // the cycles notices reached ports 0 and 1
  std::uint64_t sent = 0;
};
Notices run_ipcn(bool both, std::uint64_t threshold, const char* interval_ns = "2000") {
  Config c;
  sw::SwitchParams p = sw::SwitchParams::declare(c, "switch");
  p.ports = 3;
  c.set("ipcn.window_ns", "100");
  c.set("ipcn.horizon_ns", "1000");
  c.set("ipcn.interval_ns", interval_ns);
  c.set("ipcn.threshold_bytes", std::to_string(threshold));
  const sw::IpcnParams ipcn = sw::IpcnParams::declare(c, "ipcn", p.period());
  ClockDomain domain("switch", p.period());
  PacketPool pool;
  Stats stats;
  const ChannelSpec spec{1, 0, 1, 2};
  Channel<Packet*> in0("in0", domain.clock(), spec), in1("in1", domain.clock(), spec), out0("out0", domain.clock(), spec),
      out1("out1", domain.clock(), spec), out2("out2", domain.clock(), spec);
  sw::Switch s("sw", p, domain.clock(), stats, {&in0, &in1, nullptr}, {&out0, &out1, &out2},
               [](const Packet& pk) { return static_cast<int>(pk.dst); });
  s.set_ipcn(ipcn, [&pool](Packet& data) {
    Packet* n = pool.acquire();
    n->src = data.dst;
    n->dst = data.src;
    n->bytes = 64;
    return n;
  });
  Blaster a("a", in0, pool, 0, 2, 0), b("b", in1, pool, 1, 2, 0);
  Counter2 sink(out2, pool);
  struct Back : Core {
    Channel<Packet*>& in;
    PacketPool& pool;
    std::vector<Cycle>& at;
    Back(std::string n, Channel<Packet*>& i, PacketPool& p, std::vector<Cycle>& a) : Core(std::move(n)), in(i), pool(p), at(a) {}
    void eval() override {
      while (in.can_pop()) {
        pool.release(in.pop());
        at.push_back(now());
      }
    }
  };
  Notices got;
  Back back0("back0", out0, pool, got.at[0]), back1("back1", out1, pool, got.at[1]);
  for (Core* core : std::initializer_list<Core*>{&a, &b, &sink, &back0, &back1}) domain.attach(*core);
  in0.connect(&a, &s.ingress_core(0));
  in1.connect(&b, &s.ingress_core(1));
  out0.connect(&s.egress_core(0), &back0);
  out1.connect(&s.egress_core(1), &back1);
  out2.connect(&s.egress_core(2), &sink);
  a.wake_at(0);
  if (both) b.wake_at(0);
  else b.set_busy(false);
  ClockDomain::set_run_ahead_limit(20 * kUs);
  sc_core::sc_start(to_sc_time(20 * kUs));
  s.check_buffer_accounting();
  got.sent = s.ipcn_notices();
  return got;
}

TEST(SwitchIpcn, ASourceHearsWithinMicrosecondsOfGrowthAndOnceAnIntervalAfter) {
  const Notices n = run_ipcn(true, 100 * 1024);
  const Cycle interval = cycles_for(2 * kUs, sw::SwitchParams{}.period());
  for (int src = 0; src < 2; ++src) {
    ASSERT_FALSE(n.at[src].empty()) << src;
    EXPECT_LT(n.at[src].front(), cycles_for(2 * kUs, sw::SwitchParams{}.period())) << src;
    for (std::size_t k = 1; k < n.at[src].size(); ++k) {
      EXPECT_GE(n.at[src][k] - n.at[src][k - 1], interval) << src << " " << k;
      EXPECT_LT(n.at[src][k] - n.at[src][k - 1], interval + 40) << src << " " << k;  // the next packet's choice
    }
  }
  EXPECT_EQ(n.sent, n.at[0].size() + n.at[1].size());
  EXPECT_GE(n.at[0].size(), 8u);  // 20 us at one an interval, the first within 2 us
}

// A notice for every packet (an interval of 1 ns) while the backlog, and with it the switch's pool
// of packets, grows: each notice is added to the pool as the packet it follows is scheduled, and
// that packet must leave as scheduled (it was left pointing into a moved pool, then pushed twice
// in one cycle). Every data packet sent gets one.
TEST(SwitchIpcn, ANoticeForEveryPacketLeavesThePacketsItFollowsAsScheduled) {
  const Notices n = run_ipcn(true, 1024, "1");
  EXPECT_GT(n.sent, 1000u);
  const std::size_t back = n.at[0].size() + n.at[1].size();
  EXPECT_LE(back, n.sent);
  EXPECT_LE(n.sent - back, 64u);  // on their way when the run stops: a switch's latency of them
}

// (One simulation a test: SystemC elaborates once a process.)
TEST(SwitchIpcn, NoSourceHearsWithoutGrowth) { EXPECT_EQ(run_ipcn(false, 100 * 1024).sent, 0u); }
TEST(SwitchIpcn, NoSourceHearsBelowTheThreshold) { EXPECT_EQ(run_ipcn(true, 1ull << 40).sent, 0u); }

}  // namespace
}  // namespace xy
