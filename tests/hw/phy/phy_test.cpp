// The PHY (hw/phy/phy.hpp): its parameters, and the PHY link on a ClockDomain (one simulation per
// process).
#include "hw/phy/phy.hpp"

#include <malloc.h>

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "kernel/clock_domain.hpp"

namespace xy::phy {
namespace {

PhyParams params(std::vector<std::string> sets) {
  Config c;
  for (const auto& s : sets) c.set_from_assignment(s);
  return PhyParams::declare(c, "phy");
}

TEST(PhyParams, CodewordTimingFollowsLanesAndCode) {
  const PhyParams p = params({});
  EXPECT_EQ(p.period(), 376471u);          // 106.25 Gb/s / 40 bits = 2.65625 GHz
  // KP4 as 802.3 lays it out: 400G (4 x 100G lanes) two codewords interleaved, 2 x 5440 bits over
  // 4 lanes x 40 bits (25.6 ns); 100G one (51.2 ns on one lane); 200G two (51.2 ns on two lanes);
  // 800G two 400G flows of two, 4 x 5440 bits over 8 lanes (25.6 ns).
  EXPECT_EQ(p.interleave, 2);
  EXPECT_EQ(p.group_cycles(), 68u);
  EXPECT_EQ(params({"phy.lanes=1"}).group_cycles(), 136u);
  EXPECT_EQ(params({"phy.lanes=2"}).group_cycles(), 136u);
  EXPECT_EQ(params({"phy.lanes=8"}).interleave, 4);
  EXPECT_EQ(params({"phy.lanes=8"}).group_cycles(), 68u);
  EXPECT_EQ(params({"phy.lanes=4", "phy.lane_gbps=53.125"}).interleave, 2);  // 200G
  EXPECT_EQ(params({"phy.lanes=4", "phy.lane_gbps=26.5625"}).interleave, 1);  // 100G on four lanes (clause 91)
  EXPECT_EQ(params({"phy.fec=rs272"}).group_cycles(), 17u);  // one 2720-bit codeword on 4 lanes
  EXPECT_EQ(params({"phy.fec=rs272", "phy.lanes=8"}).interleave, 2);  // two fill whole cycles of 320 bits
  EXPECT_EQ(params({"phy.fec=rs272", "phy.lanes=8"}).group_cycles(), 17u);
}

TEST(PhyParams, LightFecLatencyIsUnderHalfOfKp4WithTheDefaults) {
  const PhyParams kp4 = params({}), light = params({"phy.fec=rs272"});
  const double a = static_cast<double>(kp4.group_cycles() + kp4.decoder_cycles());
  const double b = static_cast<double>(light.group_cycles() + light.decoder_cycles());
  EXPECT_NEAR(b / a, (17.0 + 67) / (68 + 133), 1e-9);  // accumulation + 25 or 50 ns of decoder
}

TEST(PhyParams, BadValuesNameTheKey) {
  EXPECT_THROW(params({"phy.lanes=3"}), ConfigError);
  EXPECT_THROW(params({"phy.errors.ber=1"}), ConfigError);
  EXPECT_THROW(params({"phy.fec=rs999"}), ConfigError);
  try {
    params({"phy.fec=rs272", "phy.lanes=8", "phy.interleave=1"});  // the default there is 2
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("phy.interleave = 2"), std::string::npos);
  }
}

TEST(PhyParams, BinomialCodewordErrorRatio) {
  const PhyParams kp4 = params({});
  EXPECT_DOUBLE_EQ(codeword_error_ratio(kp4, 0), 0.0);
  // KP4's design point: pre-FEC BER 2.4e-4 gives a codeword error ratio far below 1e-10.
  EXPECT_LT(codeword_error_ratio(kp4, 2.4e-4), 1e-10);
  EXPECT_GT(codeword_error_ratio(kp4, 2e-3), 0.01);
  EXPECT_GT(codeword_error_ratio(params({"phy.fec=rs272"}), 2.4e-4), codeword_error_ratio(kp4, 2.4e-4));
}

// Feeds two PHYs the same frames and keeps what each delivers: its bytes and whether it was marked.
class TwinFeeder : public Core {
 public:
  struct Delivered {
    std::uint64_t id;
    bool bad;
    std::vector<std::uint8_t> bytes;
    bool operator==(const Delivered& o) const { return id == o.id && bad == o.bad && bytes == o.bytes; }
  };
  TwinFeeder(Clock& clock, PacketPool& pool) : Core("top.feeder"), pool_(pool) {
    for (int i = 0; i < 2; ++i) {
      in[i] = std::make_unique<Channel<Packet*>>(fmt::format("top.in{}", i), clock, ChannelSpec{1, 4, 1, 2});
      out[i] = std::make_unique<Channel<Packet*>>(fmt::format("top.out{}", i), clock, ChannelSpec{1, 0, 1, 2});
    }
    clock.attach(*this);
    set_busy(true);  // every cycle, from the first
    wake_at(0);
  }
  void eval() override {
    if (in[0]->can_push() && in[1]->can_push()) {
      const auto size = static_cast<std::size_t>(64 + rng_.below(1400));
      std::vector<std::uint8_t> bytes(size);
      rng_.fill(bytes.data(), size);
      ++made_;
      for (auto& ch : in) {
        Packet* f = pool_.acquire();
        f->id = made_;
        f->payload = bytes;
        f->bytes = static_cast<std::uint32_t>(size);
        ch->push(f);
      }
    }
    for (int i = 0; i < 2; ++i)
      while (out[i]->can_pop()) {
        Packet* f = out[i]->pop();
        got[i].push_back({f->id, f->bad, f->payload});
        pool_.release(f);
      }
  }
  std::unique_ptr<Channel<Packet*>> in[2], out[2];
  std::vector<Delivered> got[2];

 private:
  PacketPool& pool_;
  Rng rng_{3, "top.feeder"};
  std::uint64_t made_ = 0;
};

// Exact and fast codecs on the same channel draws and the same frames: every statistic identical,
// and every frame delivered with the same bytes and the same mark, the damaged ones included
// (the exact codec scrambles, encodes and decodes every word; the fast one, see decode()).
TEST(PhyLink, FastAndExactCodecsGiveIdenticalResults) {
  Config config;
  config.set("phy.errors.ber", "1.5e-3");
  config.set("phy.errors.p_good_to_bad", "2e-5");
  config.set("phy.errors.dfe_propagation", "0.4");
  config.set("phy.fec", "rs272");
  PhyParams exact = PhyParams::declare(config, "phy"), fast = exact;
  exact.fast = false;
  fast.fast = true;
  ClockDomain domain("phy", exact.period());
  Stats stats;
  PacketPool pool;
  TwinFeeder feeder(domain.clock(), pool);
  PhyLink a("top.exact", exact, domain.clock(), stats, 5, "same", feeder.in[0].get(), feeder.out[0].get(), pool);
  PhyLink b("top.fast", fast, domain.clock(), stats, 5, "same", feeder.in[1].get(), feeder.out[1].get(), pool);
  for (int i = 0; i < 2; ++i) {
    PhyLink& link = i ? b : a;
    feeder.in[i]->connect(&feeder, &link.tx_core());
    feeder.out[i]->connect(&link.rx_core(), &feeder);
  }
  a.stop_after(~0ull, 20000);
  b.stop_after(~0ull, 20000);
  ClockDomain::set_run_ahead_limit(kMs);
  sc_core::sc_start(to_sc_time(kMs));
  ASSERT_EQ(a.codewords(), 20000u);
  const auto j = stats.to_json();
  int compared = 0;
  for (const auto& [key, value] : j.items()) {
    if (key.rfind("top.exact.", 0) != 0 || key == "top.exact.fec.decoded_codewords") continue;
    const std::string twin = "top.fast." + key.substr(std::string("top.exact.").size());
    EXPECT_EQ(value, j[twin]) << key;
    ++compared;
  }
  EXPECT_GE(compared, 10);
  EXPECT_GT(a.failed_codewords(), 100u);
  EXPECT_EQ(stats.find_counter("top.exact.fec.decoded_codewords")->value(), 20000u);
  EXPECT_LT(stats.find_counter("top.fast.fec.decoded_codewords")->value(), 20000u);  // it skipped clean ones
  ASSERT_GT(feeder.got[0].size(), 3000u);
  ASSERT_EQ(feeder.got[0].size(), feeder.got[1].size());
  std::size_t bad = 0;
  for (std::size_t i = 0; i < feeder.got[0].size(); ++i) {
    EXPECT_TRUE(feeder.got[0][i] == feeder.got[1][i]) << "frame " << feeder.got[0][i].id;
    bad += feeder.got[0][i].bad;
  }
  EXPECT_GT(bad, 100u);  // the comparison covers damaged frames, not only clean ones
}

// Bursts against a Monte Carlo written here, with its own generator: per lane a Gilbert–Elliott
// chain over PAM4 symbols (error at 2 x ber of the state, then leave the state with its
// probability), 5 PAM4 symbols to a 10-bit FEC symbol, symbol s of each of the two interleaved
// codewords on lane s % 8, each lane carrying the two in turn. A burst of 10 FEC symbols on one
// lane then costs each codeword 5 (RS(272) corrects 7); without the muxing one codeword would
// take all 10.
int reference_beyond_t(bool muxed, int groups, const ErrorModelSpec& e) {
  constexpr int kLanes = 8, kWords = 2, kN = 272, kT = 7, kPerLane = kWords * kN / kLanes;  // 68
  std::mt19937_64 gen(12345);
  std::uniform_real_distribution<double> u(0, 1);
  bool bad[kLanes] = {};
  int beyond = 0;
  for (int g = 0; g < groups; ++g) {
    bool hit[kWords][kN] = {};
    for (int l = 0; l < kLanes; ++l)
      for (int q = 0; q < kPerLane; ++q) {
        bool err = false;
        for (int pam4 = 0; pam4 < 5; ++pam4) {
          err = u(gen) < 2 * (bad[l] ? e.ber_bad : e.ber) || err;
          if (u(gen) < (bad[l] ? e.p_bad_to_good : e.p_good_to_bad)) bad[l] = !bad[l];
        }
        if (!err) continue;
        // muxed: the lane's q-th symbol is codeword q % 2's symbol (q / 2) * 8 + l; else the
        // group's symbol j = q * 8 + l, codewords alternating along j.
        const int j = q * kLanes + l;
        if (muxed) hit[q % kWords][(q / kWords) * kLanes + l] = true;
        else hit[j % kWords][j / kWords] = true;
      }
    for (auto& word : hit) beyond += std::count(std::begin(word), std::end(word), true) > kT;
  }
  return beyond;
}

TEST(PhyLink, InterleavedCodewordsShareABurstOnALane) {
  Config config;
  config.set("phy.fec", "rs272");
  config.set("phy.lanes", "8");  // interleave 2 by default
  config.set("phy.errors.p_good_to_bad", "5e-5");
  config.set("phy.errors.p_bad_to_good", "0.04");  // bursts of 25 PAM4 symbols, 5 FEC symbols, on average
  config.set("phy.errors.ber_bad", "0.25");
  const PhyParams p = PhyParams::declare(config, "phy");
  ASSERT_EQ(p.interleave, 2);
  ClockDomain domain("phy", p.period());
  Stats stats;
  PacketPool pool;
  PhyLink link("top.burst", p, domain.clock(), stats, 9, "burst", nullptr, nullptr, pool);
  constexpr int kGroups = 20000;
  link.stop_after(~0ull, 2 * kGroups);
  ClockDomain::set_run_ahead_limit(10 * kMs);
  sc_core::sc_start(to_sc_time(10 * kMs));
  ASSERT_EQ(link.codewords(), 2u * kGroups);
  const int muxed = reference_beyond_t(true, kGroups, p.errors), plain = reference_beyond_t(false, kGroups, p.errors);
  ASSERT_GT(plain, 2 * muxed);  // the reference itself tells the two layouts apart
  ASSERT_GT(muxed, 50);
  const auto model = static_cast<double>(link.beyond_t());
  EXPECT_NEAR(model, muxed, 0.25 * muxed) << "without the muxing the reference has " << plain;
  EXPECT_EQ(link.failed_codewords(), link.beyond_t());
}

// Feeds a PHY frames in bursts at one a cycle (more than the line carries, so its room and the
// channel's credits run out) and in a trickle between, from a generator of its own; keeps the
// cycles it pushed at and each frame's intake stamp and delivery cycle.
class BurstFeeder : public Core {
 public:
  struct Delivered {
    std::uint64_t id;
    Time injected;
    Cycle out;
    bool operator==(const Delivered& o) const { return id == o.id && injected == o.injected && out == o.out; }
  };
  BurstFeeder(const std::string& name, Clock& clock, PacketPool& pool)
      : Core(name), in(name + ".in", clock, ChannelSpec{1, 2, 1, 2}), out(name + ".out", clock, ChannelSpec{}),
        pool_(pool) {
    clock.attach(*this);
    set_busy(true);
    wake_at(0);
  }
  void eval() override {
    if (now() % 2000 == 0) bursting_ = rng_.below(2) == 0;
    if (!bursting_ && rng_.below(40) != 0) {
    } else if (!in.can_push()) {
      ++refused;
    } else {
      Packet* f = pool_.acquire();
      f->id = ++made_;
      f->payload.assign(64 + rng_.below(1400), 0x5A);
      f->bytes = static_cast<std::uint32_t>(f->payload.size());
      in.push(f);
      pushed.push_back(now());
    }
    while (out.can_pop()) {
      Packet* f = out.pop();
      got.push_back({f->id, f->injected, now()});
      pool_.release(f);
    }
  }
  Channel<Packet*> in, out;
  std::vector<Cycle> pushed;
  std::vector<Delivered> got;
  std::uint64_t refused = 0;  // cycles it had a frame and the channel no credit

 private:
  PacketPool& pool_;
  Rng rng_{11, "top.feeder"};
  bool bursting_ = false;
  std::uint64_t made_ = 0;
};

// A TX that takes frames late (PhyLink::take_late) against one woken for each, in two domains fed
// alike: the same cycles for every push (the credits come back alike), intake stamp and delivery,
// and the same frames_in whenever the run stops, with fewer cores ticked.
TEST(PhyLink, ATxTakingLateTakesEachFrameAtTheCycleOneWokenForEachDoes) {
  const PhyParams p = params({});
  ClockDomain late_domain("late", p.period()), on_time_domain("on_time", p.period());
  Stats stats;
  PacketPool pool;
  BurstFeeder late_feeder("top.late_feeder", late_domain.clock(), pool),
      on_time_feeder("top.on_time_feeder", on_time_domain.clock(), pool);
  PhyLink late("top.late", p, late_domain.clock(), stats, 4, "same", &late_feeder.in, &late_feeder.out, pool);
  PhyLink on_time("top.on_time", p, on_time_domain.clock(), stats, 4, "same", &on_time_feeder.in, &on_time_feeder.out,
                  pool);
  for (auto [feeder, link] : {std::pair{&late_feeder, &late}, std::pair{&on_time_feeder, &on_time}}) {
    feeder->in.connect(feeder, &link->tx_core());
    feeder->out.connect(&link->rx_core(), feeder);
  }
  late.take_late();
  // Slices that end between edges and on one (an edge at the end is stepped in the next).
  const Time slices[] = {from_ns(333.7), 211 * p.period()};
  int compared = 0;
  Time end = 0;
  for (int i = 0; end < from_us(40); ++i) {
    const Time slice = slices[i % 2] - (i % 2 ? end % p.period() : 0);
    end += slice;
    ClockDomain::set_run_ahead_limit(end);
    sc_core::sc_start(to_sc_time(slice));
    ASSERT_EQ(late.frames_in(), on_time.frames_in()) << "at " << to_ns(end) << " ns";
    compared += late.frames_in() > 0;
  }
  EXPECT_GT(compared, 100);
  EXPECT_GT(late.frames_in(), 500u);
  ASSERT_EQ(late_feeder.pushed.size(), on_time_feeder.pushed.size());
  EXPECT_EQ(late_feeder.pushed, on_time_feeder.pushed);
  ASSERT_EQ(late_feeder.got.size(), on_time_feeder.got.size());
  for (std::size_t i = 0; i < late_feeder.got.size(); ++i)
    ASSERT_TRUE(late_feeder.got[i] == on_time_feeder.got[i]) << "frame " << late_feeder.got[i].id;
  EXPECT_GT(on_time_feeder.refused, 1000u);  // the room and the credits ran out, often
  EXPECT_LT(late_domain.clock().core_ticks(), on_time_domain.clock().core_ticks());
}

// A fabric has two PHYs per link. The codec's tables depend on the code alone: the encoder's
// 2^m rows of n-k parity symbols, the 2t syndrome and t Chien tables of 2^m entries, the field's
// exp (2(2^m - 1) symbols) and log (2^m ints), 2-byte symbols. Each further PHY of a code must
// grow the heap by less than one copy of them.
TEST(PhyLink, PhysOfACodeShareItsCodecTables) {
  for (const char* fec : {"rs544", "rs272"}) {
    const PhyParams p = params({std::string("phy.fec=") + fec});
    const std::size_t size = 1u << 10, parity = static_cast<std::size_t>(p.n() - p.k()), t = parity / 2;
    const std::size_t tables = 2 * (size * parity + parity * size + t * size + 2 * (size - 1)) + 4 * size;
    Clock clock("phy", p.period());
    Stats stats;
    PacketPool pool;
    std::vector<std::unique_ptr<PhyLink>> links;
    links.push_back(std::make_unique<PhyLink>("top.first", p, clock, stats, 1, "first", nullptr, nullptr, pool));
    constexpr int kMore = 8;
    const std::size_t before = mallinfo2().uordblks;
    for (int i = 0; i < kMore; ++i)
      links.push_back(std::make_unique<PhyLink>("top.l" + std::to_string(i), p, clock, stats, 1, "l" + std::to_string(i),
                                                nullptr, nullptr, pool));
    const std::size_t each = (mallinfo2().uordblks - before) / kMore;
    EXPECT_LT(each, tables) << fec << ": " << each << " B a PHY, the tables are " << tables << " B";
  }
}

}  // namespace
}  // namespace xy::phy
