// The reduce engine's timing against arithmetic written here: passes of ceil(elements / lanes)
// cycles on a shared pool of ALUs, chained passes into one chunk, and slots held until a chunk's
// result has left the ALU.
#include <gtest/gtest.h>

#include <cstring>
#include <map>

#include "hw/switch/reduce_engine.hpp"
#include "kernel/clock_domain.hpp"

namespace xy {
namespace {

constexpr std::uint32_t kElements = 1024;  // fp32 per chunk: 64 cycles a pass at 16 lanes

// Pushes (cycle, chunk, value) contributions: every element of the chunk holds `value`.
struct Feeder : Core {
  Channel<Packet*>& out;
  PacketPool& pool;
  std::vector<std::tuple<Cycle, std::uint64_t, float>> plan;
  Feeder(std::string name, Channel<Packet*>& o, PacketPool& p) : Core(std::move(name)), out(o), pool(p) {}
  void eval() override {
    if (plan.empty() || std::get<0>(plan.front()) > now()) return;
    const auto [at, chunk, value] = plan.front();
    plan.erase(plan.begin());
    Packet* p = pool.acquire();
    p->id = chunk + 1;
    p->bytes = 4 * kElements;
    p->phantom = false;
    p->payload.resize(p->bytes);
    for (std::uint32_t e = 0; e < kElements; ++e) std::memcpy(p->payload.data() + 4 * e, &value, 4);
    out.push(p);
  }
  void commit() override {
    if (!plan.empty()) wake_at(std::max(std::get<0>(plan.front()), now() + 1));
  }
};

// Notes when each chunk's result arrives, and its first element.
struct Sink : Core {
  Channel<Packet*>& in;
  PacketPool& pool;
  std::map<std::uint64_t, std::pair<Cycle, float>> got;
  Sink(std::string name, Channel<Packet*>& i, PacketPool& p) : Core(std::move(name)), in(i), pool(p) {}
  void eval() override {
    while (in.can_pop()) {
      Packet* p = in.pop();
      float v;
      std::memcpy(&v, p->payload.data(), 4);
      got[p->id - 1] = {now(), v};
      pool.release(p);
    }
  }
};

struct Bench {
  ClockDomain domain{"switch", 640 * kPs};
  PacketPool pool;
  Channel<Packet*> in0{"in0", domain.clock(), {1, 0, 1, 2}}, in1{"in1", domain.clock(), {1, 0, 1, 2}},
      out0{"out0", domain.clock(), {1, 0, 1, 2}}, out1{"out1", domain.clock(), {1, 0, 1, 2}};
  Feeder a{"a", in0, pool}, b{"b", in1, pool};
  Sink sink{"sink", out0, pool}, other{"other", out1, pool};
  std::unique_ptr<sw::ReduceEngine> engine;

  Bench(int alus, int slots) {
    sw::ReduceConfig rc;
    rc.lanes = 16;
    rc.slots = slots;
    engine = std::make_unique<sw::ReduceEngine>("reduce", rc, alus, std::vector<Channel<Packet*>*>{&in0, &in1},
                                                std::vector<Channel<Packet*>*>{&out0, &out1}, pool);
    engine->add_group(0, {0, 1});
    for (Core* core : std::initializer_list<Core*>{&a, &b, &sink, &other}) domain.attach(*core);
    domain.attach(*engine);
    in0.connect(&a, engine.get());
    in1.connect(&b, engine.get());
    out0.connect(engine.get(), &sink);
    out1.connect(engine.get(), &other);
  }
  void run() {
    a.wake_at(0);
    b.wake_at(0);
    ClockDomain::set_run_ahead_limit(5 * kUs);
    sc_core::sc_start(sc_core::sc_time(5, sc_core::SC_US));
  }
};

// Both contributions reach the engine at cycle 1 (a channel of one cycle); one pass is
// 1024 / 16 = 64 cycles; the result arrives a cycle after it is sent.
TEST(ReduceEngine, OneAluAddsTheContributionsOneAfterTheOther) {
  Bench t(1, 4);
  t.a.plan = {{0, 0, 1.5f}};
  t.b.plan = {{0, 0, 2.25f}};
  t.run();
  ASSERT_EQ(t.sink.got.count(0), 1u);
  EXPECT_EQ(t.sink.got[0].first, 1u + 64 + 64 + 1);
  EXPECT_EQ(t.sink.got[0].second, 3.75f);
  EXPECT_EQ(t.other.got[0].first, t.sink.got[0].first);  // multicast to both members' ports
  EXPECT_EQ(t.engine->alu_busy_cycles(), 128u);
  EXPECT_EQ(t.engine->alu_wait_cycles(), 64u);  // the second waited a pass for the ALU
}

TEST(ReduceEngine, TwoAlusChainTheirPassesACycleApart) {
  Bench t(2, 4);
  t.a.plan = {{0, 0, 1.0f}};
  t.b.plan = {{0, 0, 2.0f}};
  t.run();
  EXPECT_EQ(t.sink.got[0].first, 1u + 64 + 1 + 1);
  EXPECT_EQ(t.sink.got[0].second, 3.0f);
}

// One slot: chunk 1 cannot start before chunk 0, waiting for b's late contribution, is done.
TEST(ReduceEngine, AChunkWaitsForASlotUntilTheChunkHoldingItIsReduced) {
  Bench t(2, 1);
  t.a.plan = {{0, 0, 1.0f}, {1, 1, 1.0f}};
  t.b.plan = {{200, 0, 1.0f}, {201, 1, 1.0f}};
  t.run();
  // b's chunk 0 arrives at 201 and ends at 265; chunk 1's passes start then: a's at 265, b's
  // (arrived at 202) too, chained: 265 + 64 + 1, the result a cycle later.
  EXPECT_EQ(t.sink.got[0].first, 201u + 64 + 1);
  EXPECT_EQ(t.sink.got[1].first, 265u + 64 + 1 + 1);
  EXPECT_GT(t.engine->slot_wait_cycles(), 0u);
  EXPECT_EQ(t.engine->peak_slots(), 1);
}

}  // namespace
}  // namespace xy
