#include "tb/bench/kernel_bench.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <systemc>

#include "xingyun/clock_domain.hpp"

namespace xy {
namespace {

// The block both styles run: a 64-bit register ring, out = in + 1, working on one cycle in
// `every` (block i on cycles where cycle % every == i % every).
class RingCore : public Core {
 public:
  RingCore(std::string name, int every) : Core(std::move(name)), every_(every) {
    set_busy(every == 1);
  }
  void set_prev(const RingCore* prev) { prev_ = prev; }
  void eval() override { next_ = prev_->value_ + 1; }
  void commit() override {
    value_ = next_;
    if (every_ > 1) wake_at(now() + every_);
  }
  std::uint64_t value() const { return value_; }

 private:
  const RingCore* prev_ = nullptr;
  int every_;
  std::uint64_t value_ = 0, next_ = 0;
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
  std::uint64_t checksum = 0;
  double wall = 0;
  if (o.style == "domain") {
    ClockDomain domain("domain", period);
    std::vector<std::unique_ptr<RingCore>> cores;
    for (int i = 0; i < o.blocks; ++i) cores.push_back(std::make_unique<RingCore>(fmt::format("b{}", i), every));
    for (int i = 0; i < o.blocks; ++i) {
      cores[i]->set_prev(cores[(i + o.blocks - 1) % o.blocks].get());
      domain.attach(*cores[i]);
      cores[i]->wake_at(i % every);
    }
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
    ClockDomain::set_run_ahead_limit(o.cycles * period);
    const auto t0 = std::chrono::steady_clock::now();
    sc_core::sc_start(to_sc_time(o.cycles * period));
    wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (auto& c : cores) checksum += c->value();
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
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
    const auto t0 = std::chrono::steady_clock::now();
    sc_core::sc_start(to_sc_time(o.cycles * period));
    wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
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
  std::cout << fmt::format("{:>6} {:>8} {:>14} {:>14} {:>7} {:>14} {:>7} {:>9}\n", "blocks", "activity", "ClockDomain",
                           "SC_METHOD", "ratio", "gated METHOD", "ratio", "peak MiB");
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  for (int blocks : {16, 64, 256}) {
    for (int activity : {100, 10}) {
      // Enough cycles for a few tenths of a second per run at the speeds DESIGN.md measured.
      const auto method_cycles = static_cast<std::uint64_t>(o.scale * 12e6 / blocks);
      const auto domain_cycles = method_cycles * (activity == 100 ? 8 : 40);
      std::vector<double> dom, meth, gated;
      long peak = 0;
      for (int r = 0; r < o.repeats; ++r) {  // alternate styles: the machine is noisy
        for (const char* style : {"domain", "method", "method-gated"}) {
          if (activity == 100 && std::string(style) == "method-gated") continue;  // same as method
          const Figures f = run_child(self, style, blocks, activity,
                                      std::string(style) == "domain" ? domain_cycles : method_cycles);
          (std::string(style) == "domain" ? dom : std::string(style) == "method" ? meth : gated).push_back(f.cycles_per_s);
          peak = std::max(peak, f.peak_kib);
        }
      }
      const double d = median(dom), m = median(meth);
      const std::string g = gated.empty() ? "-" : fmt::format("{:.0f}", median(gated));
      const std::string gr = gated.empty() ? "-" : fmt::format("{:.1f}x", d / median(gated));
      std::cout << fmt::format("{:>6} {:>7}% {:>14.0f} {:>14.0f} {:>6.1f}x {:>14} {:>7} {:>9.1f}\n", blocks, activity, d,
                               m, d / m, g, gr, peak / 1024.0);
      std::cout.flush();
    }
  }
  std::cout << fmt::format(
      "simulated cycles per wall second, median of {} alternating runs. SC_METHOD: one method per block computing\n"
      "every cycle (DESIGN.md's reference); gated METHOD: the same, computing only on its active cycles.\n",
      o.repeats);
  return 0;
}

}  // namespace xy
