#include "tb/bench/kernel_bench.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <optional>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <systemc>

#include "kernel/clock_domain.hpp"
#include "tb/bench/median.hpp"

namespace xy {
namespace {

// The block every style runs: a 64-bit register ring, out = in + 1, working on one cycle in
// `every` (block i on cycles where cycle % every == i % every).
class RingCore final : public Core {
 public:
  RingCore(std::string name, int index, int every)
      : Core(std::move(name)), every_(every), countdown_(index % every) {
    set_busy(every == 1);
  }
  void set_prev(const RingCore* prev) { prev_ = prev; }
  // Under a ClockDomain the block is ticked on its working cycles only.
  void eval() override { compute(); }
  void commit() override {
    latch();
    if (every_ > 1) wake_at(now() + every_);
  }
  // Ticked every cycle by a loop that knows nothing of activity, the block counts its own cycles.
  void eval_gated() {
    if (countdown_ == 0) {
      countdown_ = every_;
      compute();
    }
    --countdown_;
  }
  void compute() { next_ = prev_->value_ + 1; }
  void latch() { value_ = next_; }  // a no-op on cycles without compute()
  std::uint64_t value() const { return value_; }

 private:
  const RingCore* prev_ = nullptr;
  int every_, countdown_;
  std::uint64_t value_ = 0, next_ = 0;
};

// A ring of blocks, side by side in memory, the same for every style (optional: a core cannot
// move, so the vector is sized once and each block built in place).
struct BlockRing {
  std::vector<std::optional<RingCore>> cores;
  int every;
  BlockRing(int blocks, int every_) : cores(blocks), every(every_) {
    for (int i = 0; i < blocks; ++i) cores[i].emplace(fmt::format("b{}", i), i, every);
    for (int i = 0; i < blocks; ++i) cores[i]->set_prev(&*cores[(i + blocks - 1) % blocks]);
  }
  // One cycle of every block, eval phase then commit phase, without a clock or due list.
  void tick_all() {
    if (every == 1)
      for (auto& c : cores) c->compute();
    else
      for (auto& c : cores) c->eval_gated();
    for (auto& c : cores) c->latch();
  }
  std::uint64_t checksum() const {
    std::uint64_t sum = 0;
    for (auto& c : cores) sum += c->value();
    return sum;
  }
};

// One SC_METHOD on an sc_clock ticking every block each cycle: the simplest use of one process.
struct TickAllBlock : sc_core::sc_module {
  sc_core::sc_in<bool> clk;
  BlockRing& ring;
  TickAllBlock(const sc_core::sc_module_name& name, BlockRing& r) : sc_core::sc_module(name), ring(r) {
    SC_METHOD(step);
    sensitive << clk.pos();
    dont_initialize();
  }
  SC_HAS_PROCESS(TickAllBlock);
  void step() { ring.tick_all(); }
};

// The usual clocked style: one SC_METHOD per block, woken at every edge. `every` = 1 computes
// every cycle, whatever the activity (the reference of DESIGN.md); the gated variant
// (every = 10) computes only on its active cycles and writes its signal a tenth as often.
struct MethodBlock : sc_core::sc_module {
  sc_core::sc_in<bool> clk;
  sc_core::sc_in<std::uint64_t> in;
  sc_core::sc_out<std::uint64_t> out;
  int phase, every;
  int cycle = 0;
  MethodBlock(const sc_core::sc_module_name& name, int index, int every_)
      : sc_core::sc_module(name), phase(index % every_), every(every_) {
    SC_METHOD(step);
    sensitive << clk.pos();
    dont_initialize();
  }
  SC_HAS_PROCESS(MethodBlock);
  void step() {
    if (cycle == phase) out.write(in.read() + 1);
    if (++cycle == every) cycle = 0;
  }
};

long peak_rss_kib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

struct Figures {
  double cycles_per_s = 0;
  std::uint64_t checksum = 0;
  long peak_kib = 0;
};

Figures run_child(const char* self, const std::string& style, int blocks, int activity, std::uint64_t cycles) {
  const std::string cmd = fmt::format("'{}' bench kernel-one --style {} --blocks {} --activity {} --cycles {}", self,
                                      style, blocks, activity, cycles);
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) throw std::runtime_error("cannot start " + cmd);
  std::string out;
  char buf[512];
  while (fgets(buf, sizeof buf, pipe)) out += buf;
  if (pclose(pipe) != 0) throw std::runtime_error(fmt::format("'{}' failed: {}", cmd, out));
  const auto j = nlohmann::json::parse(out);
  return {j["cycles_per_s"].get<double>(), j["checksum"].get<std::uint64_t>(), j["peak_rss_kib"].get<long>()};
}

}  // namespace

int kernel_bench_one(const KernelBenchOptions& o) {
  use_femtosecond_resolution();
  const int every = 100 / o.activity_percent;
  const Time period = kNs;
  // Times the SystemC run of o.cycles edges; elaboration and initialisation stay outside.
  auto run_systemc = [&] {
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
    ClockDomain::set_run_ahead_limit(o.cycles * period);
    const auto t0 = std::chrono::steady_clock::now();
    sc_core::sc_start(to_sc_time(o.cycles * period));
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  std::uint64_t checksum = 0;
  double wall = 0;
  if (o.style == "domain" || o.style == "tick-all" || o.style == "plain") {
    BlockRing ring(o.blocks, every);
    if (o.style == "domain") {
      ClockDomain domain("domain", period);
      for (int i = 0; i < o.blocks; ++i) {
        domain.attach(*ring.cores[i]);
        ring.cores[i]->wake_at(i % every);
      }
      wall = run_systemc();
    } else if (o.style == "tick-all") {
      sc_core::sc_clock clk("clk", to_sc_time(period));
      TickAllBlock top("top", ring);
      top.clk(clk);
      wall = run_systemc();
    } else {
      const auto t0 = std::chrono::steady_clock::now();
      for (std::uint64_t c = 0; c < o.cycles; ++c) ring.tick_all();
      wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    checksum = ring.checksum();
  } else {
    sc_core::sc_clock clk("clk", to_sc_time(period));
    std::vector<std::unique_ptr<sc_core::sc_signal<std::uint64_t>>> sig;
    std::vector<std::unique_ptr<MethodBlock>> blocks;
    for (int i = 0; i < o.blocks; ++i)
      sig.push_back(std::make_unique<sc_core::sc_signal<std::uint64_t>>(fmt::format("s{}", i).c_str()));
    for (int i = 0; i < o.blocks; ++i) {
      blocks.push_back(
          std::make_unique<MethodBlock>(fmt::format("b{}", i).c_str(), i, o.style == "method-gated" ? every : 1));
      blocks[i]->clk(clk);
      blocks[i]->in(*sig[(i + o.blocks - 1) % o.blocks]);
      blocks[i]->out(*sig[i]);
    }
    wall = run_systemc();
    for (auto& s : sig) checksum += s->read();
  }
  std::cout << nlohmann::json{{"style", o.style},
                              {"blocks", o.blocks},
                              {"activity_percent", o.activity_percent},
                              {"cycles", o.cycles},
                              {"wall_s", wall},
                              {"cycles_per_s", o.cycles / wall},
                              {"checksum", checksum},
                              {"peak_rss_kib", peak_rss_kib()}}
                   .dump()
            << "\n";
  return 0;
}

int kernel_bench(const char* self, const KernelBenchOptions& o) {
  struct Style {
    const char* name;
    double cycles_100, cycles_10;  // simulated cycles per run at scale 1, x 1e6 / blocks
  };
  // Enough cycles for a few tenths of a second per run at the speeds measured on this machine kind.
  const Style styles[] = {{"domain", 200, 1000}, {"method", 12, 12}, {"method-gated", 0, 20},
                          {"tick-all", 100, 100}, {"plain", 400, 400}};
  std::cout << fmt::format("{:>6} {:>8} {:>12} {:>12} {:>7} {:>12} {:>7} {:>12} {:>7} {:>12} {:>7} {:>8}\n",
                           "blocks", "activity", "ClockDomain", "METHOD/blk", "dom/x", "gated METH", "dom/x",
                           "tick-all", "dom/x", "plain loop", "x/dom", "peak MiB");
  for (int blocks : {16, 64, 256}) {
    for (int activity : {100, 10}) {
      std::vector<double> speed[std::size(styles)];
      long peak = 0;
      for (int r = 0; r < o.repeats; ++r) {  // alternate styles: the machine is noisy
        for (std::size_t s = 0; s < std::size(styles); ++s) {
          const double per_block = activity == 100 ? styles[s].cycles_100 : styles[s].cycles_10;
          if (per_block == 0) continue;  // gated METHOD at 100 % is METHOD
          const auto cycles = static_cast<std::uint64_t>(o.scale * per_block * 1e6 / blocks);
          const Figures f = run_child(self, styles[s].name, blocks, activity, cycles);
          speed[s].push_back(f.cycles_per_s);
          peak = std::max(peak, f.peak_kib);
        }
      }
      const double domain = median(speed[0]);
      auto column = [&](std::size_t s, bool over_domain) {
        if (speed[s].empty()) return fmt::format("{:>12} {:>7}", "-", "-");
        const double v = median(speed[s]);
        return fmt::format("{:>12.0f} {:>6.2f}x", v, over_domain ? v / domain : domain / v);
      };
      std::cout << fmt::format("{:>6} {:>7}% {:>12.0f} {} {} {} {} {:>8.1f}\n", blocks, activity, domain,
                               column(1, false), column(2, false), column(3, false), column(4, true),
                               peak / 1024.0);
      std::cout.flush();
    }
  }
  std::cout << fmt::format(
      "simulated cycles per wall second, median of {} alternating runs; dom/x: ClockDomain over the column's style,\n"
      "x/dom: the plain loop over ClockDomain. METHOD/blk: one SC_METHOD + sc_signal per block computing every cycle\n"
      "(DESIGN.md's reference); gated METH: the same computing only on its active cycles; tick-all: one SC_METHOD on\n"
      "an sc_clock ticking every block each cycle; plain loop: the same ticks without SystemC. The blocks gate\n"
      "themselves wherever they are ticked every cycle.\n",
      o.repeats);
  return 0;
}

}  // namespace xy
