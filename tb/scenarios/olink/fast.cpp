// olink-fast: calibrates the fast fabric against the cycle-level one on the same preset: a load's
// latency (one at a time, GPU 0 from GPU 1) and an all-to-all's bandwidth. Three models run one
// after the other, so that a stopwatch can time each: the fast fabric timing only, the fast
// fabric with data, and the cycle-level fabric — simulated time per wall-second for all three,
// in the same run. The default all-to-all is of 64 KiB bulk writes, the way an MoE dispatch
// moves its tokens, 16 MiB per GPU so that the fast model runs long enough to time;
// `fast.bytes=256` makes it one of Stores.
#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "tb/lib/figure.hpp"
#include "tb/lib/gpu.hpp"
#include "tb/lib/memory.hpp"
#include "tb/scenarios/olink/presets.hpp"
#include "tb/scenarios/olink/streams.hpp"

namespace xy::olink_tb {
namespace {

using olink::Access;
using olink::GpuInitiator;

class OlinkFast : public Testbench {
 public:
  explicit OlinkFast(RunContext& ctx) {
    Config& c = ctx.config;
    std::vector<std::string> names;
    for (const Preset& pr : kPresets) names.push_back(pr.name);
    const std::string preset = c.choice("fast.fabric", "olink-rs544", names, "the preset the models run");
    const olink::StreamSpec spec = declare_streams(c, "fast", 16777216, ctx.seed, 65536);
    const int gpus = static_cast<int>(spec.gpus);
    // The cycle-level GPUs' slots and writes, the fast models' writes, and the bytes the GPUs write
    // (kept by the cycle-level and the fast data fabric: each source wraps in a 16 MiB region of
    // each target).
    olink::StreamSpec timed = spec, loose = spec;
    loose.loosely_timed = true;
    const double written = std::min<double>(static_cast<double>(spec.count) * spec.bytes, (gpus - 1) * 16777216.0);
    check_memory(gpus * (stream_memory_bytes(timed) + 2 * stream_memory_bytes(loose) + 2 * written),
                 fmt::format("fast.gpus = {} x fast.outstanding = {} (a slot for each write a GPU keeps in flight, "
                             "made up front) and x fast.bytes_per_gpu = {} (the bytes written, kept by two models)",
                             gpus, spec.outstanding, static_cast<std::uint64_t>(spec.count) * spec.bytes),
                 ctx.force_memory);
    bytes_ = spec.bytes;
    const int loads = static_cast<int>(c.integer("fast.loads", 20, "loads", 1, 100000, "64-byte loads, one at a time"));
    const sw::SwitchParams base = sw::SwitchParams::declare(c, "switch");
    fix_preset_switch_keys(c, "olink-fast, whose OLink preset sets the switch's ports, rate, clock and latency "
                              "(olink.<preset>.gpu_gbps, switch_ns)");
    for (const char* key : {"switch.vcs", "switch.dwrr_quantum_bytes"})
      c.fix(key, "olink-fast, whose GPUs send on VC 0 only: there is nothing to schedule between VCs");
    const Preset& pr = *std::find_if(std::begin(kPresets), std::end(kPresets),
                                     [&](const Preset& p) { return preset == p.name; });
    name_ = pr.name;
    std::vector<Access> program;
    for (int i = 0; i < loads; ++i) program.push_back({Access::kLoad, olink::uva(1, 4096 + 64 * i), 64, 0});
    // The cycle-level fabrics (one for the loads, one for the all-to-all) first: the fast ones take their stages.
    Model& cycle = models_[kCycle];
    cycle.cycle_latency = make_preset_fabric(pr, 2, base, pool_, ctx, name_ + "-loads");
    cycle.cycle_alltoall = make_preset_fabric(pr, gpus, base, pool_, ctx, name_ + "-alltoall");
    const PresetFabric& f = *cycle.cycle_latency;
    for (int i = 0; i < kModels; ++i) {
      Model& m = models_[i];
      m.key = kKeys[i];
      std::function<tlm::tlm_target_socket<>&(int)> latency, alltoall;  // each fabric's GPU sockets
      if (i == kCycle) {
        latency = [&m](int g) -> tlm::tlm_target_socket<>& { return m.cycle_latency->endpoints[g]->socket; };
        alltoall = [&m](int g) -> tlm::tlm_target_socket<>& { return m.cycle_alltoall->endpoints[g]->socket; };
      } else {
        m.fast_latency = std::make_unique<olink::FastFabric>((m.key + "_latency").c_str(), f.fast(2, i == kFastData));
        m.fast_alltoall = std::make_unique<olink::FastFabric>((m.key + "_alltoall").c_str(),
                                                              f.fast(static_cast<std::uint32_t>(gpus), i == kFastData));
        latency = [&m](int g) -> tlm::tlm_target_socket<>& { return m.fast_latency->socket(g); };
        alltoall = [&m](int g) -> tlm::tlm_target_socket<>& { return m.fast_alltoall->socket(g); };
      }
      m.loads = std::make_unique<GpuInitiator>((m.key + "_loads").c_str(), program,
                                               to_sc_time(1000 * f.period), &m.go_loads);
      m.loads->socket.bind(latency(0));
      // GPU 1 only serves the loads, but a target socket must be bound.
      m.idle = std::make_unique<GpuInitiator>((m.key + "_gpu1").c_str(), std::vector<Access>{}, sc_core::SC_ZERO_TIME);
      m.idle->socket.bind(latency(1));
      olink::StreamSpec model_spec = spec;
      model_spec.loosely_timed = i != kCycle;  // the cycle-level GPUs use the AT protocol
      for (int g = 0; g < gpus; ++g) {
        m.streams.push_back(std::make_unique<olink::StoreStreamer>(fmt::format("{}_stream{}", m.key, g).c_str(), g,
                                                                   model_spec, &m.go_streams));
        m.streams.back()->socket.bind(alltoall(g));
      }
    }
    stopwatch_ = std::make_unique<Stopwatch>("stopwatch", *this);
  }

  bool done() const override { return models_[kModels - 1].done(); }
  std::uint64_t progress() const override {
    std::uint64_t n = 0;
    for (const auto& m : models_) {
      n += m.loads->results().size();
      for (const auto& s : m.streams) n += delivered(*s);
    }
    return n;
  }
  // All-to-all bytes delivered of those the three models' GPUs send: the models run one after
  // another and the fast ones take their share of the wall time too. The loads, a few 64-byte
  // ones, are left out; no "traffic ended" line, as in olink-alltoall.
  double done_fraction() const override {
    double moved = 0, to_move = 0;
    for (const auto& m : models_)
      for (const auto& s : m.streams) {
        moved += static_cast<double>(delivered(*s));
        to_move += static_cast<double>(s->bytes_to_move());
      }
    return moved / to_move;
  }
  void check() const override {
    models_[kCycle].cycle_alltoall->check_buffer_accounting();
    for (const auto& m : models_) {
      for (const auto& r : m.loads->results())
        if (r.status != tlm::TLM_OK_RESPONSE) throw CheckFailure(m.key + ": a load failed");
      for (const auto& s : m.streams)
        if (s->errors()) throw CheckFailure(m.key + ": writes failed");
    }
    // The fast fabric's times must not depend on whether it carries the data.
    const Model &timing = models_[kFast], &data = models_[kFastData];
    if (timing.latency_ns() != data.latency_ns() || timing.bandwidth() != data.bandwidth())
      throw CheckFailure(fmt::format("the fast fabric times differ with data: {} ns and {} GB/s, {} ns and {} GB/s without",
                                     data.latency_ns(), data.bandwidth(), timing.latency_ns(), timing.bandwidth()));
  }
  nlohmann::json summary() const override {
    nlohmann::json s = {{"fabric", name_}, {"bytes_per_write", bytes_}};
    for (const Model& m : models_)
      s[m.key] = {{"load_latency_ns", m.latency_ns()},
                  {"bandwidth_per_gpu_GBps", m.bandwidth()},
                  {"simulated_us", m.simulated.to_seconds() * 1e6}};
    s["latency_error"] = over_cycle(s, "fast", "load_latency_ns") - 1;
    s["bandwidth_error"] = over_cycle(s, "fast", "bandwidth_per_gpu_GBps") - 1;
    return s;
  }
  // Speed is wall time: run.json's, never results.json's, which the same seed must reproduce.
  nlohmann::json wall_clock() const override {
    nlohmann::json s;
    for (const Model& m : models_)
      s[m.key] = {{"wall_s", m.wall_s}, {"simulated_us_per_wall_s", m.simulated.to_seconds() * 1e6 / m.wall_s}};
    s["speedup"] = over_cycle(s, "fast", "simulated_us_per_wall_s");
    s["speedup_with_data"] = over_cycle(s, "fast_data", "simulated_us_per_wall_s");
    return s;
  }
  std::string report() const override {
    nlohmann::json s = summary();
    s.merge_patch(wall_clock());
    std::string out = fmt::format("  {} ({} GPUs in the all-to-all, {}-byte writes)\n  {:<26} {:>12} {:>12} {:>10} {:>12} {:>10}\n",
                                  name_, models_[0].streams.size(), bytes_, "", "cycle-level", "fast", "fast/cycle",
                                  "fast+data", "/cycle");
    const auto row = [&](const char* label, const char* key) {
      const double c = s["cycle"][key].get<double>(), f = s["fast"][key].get<double>(),
                   d = s["fast_data"][key].get<double>();  // NaN where a model did not finish
      out += fmt::format("  {:<26} {:>12} {:>12} {:>10} {:>12} {:>10}\n", label, figure(c, 1), figure(f, 1),
                         figure(f / c, 3), figure(d, 1), figure(d / c, 3));
    };
    row("load latency, ns", "load_latency_ns");
    row("all-to-all, GB/s per GPU", "bandwidth_per_gpu_GBps");
    row("simulated us", "simulated_us");
    row("simulated us per wall-s", "simulated_us_per_wall_s");
    return out;
  }

 private:
  static constexpr int kFast = 0, kFastData = 1, kCycle = 2, kModels = 3;  // the order they run in
  static constexpr const char* kKeys[kModels] = {"fast", "fast_data", "cycle"};
  // A model's figure over the cycle-level model's.
  static double over_cycle(const nlohmann::json& s, const char* model, const char* key) {
    return s[model][key].get<double>() / s["cycle"][key].get<double>();
  }
  struct Model {
    std::string key;
    std::unique_ptr<PresetFabric> cycle_latency, cycle_alltoall;            // the cycle-level model's
    std::unique_ptr<olink::FastFabric> fast_latency, fast_alltoall;         // a fast model's
    std::unique_ptr<GpuInitiator> loads, idle;
    std::vector<std::unique_ptr<olink::StoreStreamer>> streams;
    sc_core::sc_event go_loads, go_streams;
    sc_core::sc_time simulated;  // from the first load to the last write
    double wall_s = 0;
    bool done() const {
      if (!loads->done()) return false;
      for (const auto& s : streams)
        if (!s->done()) return false;
      return true;
    }
    double latency_ns() const {
      double sum = 0;
      for (const auto& r : loads->results()) sum += r.latency.to_seconds() * 1e9;
      return sum / static_cast<double>(loads->results().size());
    }
    double bandwidth() const {
      double sum = 0;
      for (const auto& s : streams)
        sum += static_cast<double>(s->bytes_moved()) / ((s->finished_at() - s->started_at()).to_seconds() * 1e9);
      return sum / static_cast<double>(streams.size());
    }
  };
  // Starts each model's loads when the last model is done, then its all-to-all, and times both.
  struct Stopwatch : sc_core::sc_module {
    SC_HAS_PROCESS(Stopwatch);
    Stopwatch(const sc_core::sc_module_name& name, OlinkFast& tb_) : sc_core::sc_module(name), tb(tb_) { SC_THREAD(run); }
    void run() {
      // Each model starts on a multiple of this many cycles, so that the fast fabric's calendar
      // buckets fall on the traffic the same way in both fast models.
      const Time epoch = tb.models_[kCycle].cycle_latency->period << 16;
      for (Model& m : tb.models_) {
        sc_core::wait(to_sc_time(epoch - sim_now() % epoch));
        const auto wall = std::chrono::steady_clock::now();
        const sc_core::sc_time begin = sc_core::sc_time_stamp();
        m.go_loads.notify(sc_core::SC_ZERO_TIME);
        if (!m.loads->done()) sc_core::wait(m.loads->done_event());
        m.go_streams.notify(sc_core::SC_ZERO_TIME);
        for (const auto& s : m.streams)
          if (!s->done()) sc_core::wait(s->done_event());
        sc_core::sc_time last = begin;
        for (const auto& s : m.streams) last = std::max(last, s->finished_at());
        m.simulated = last - begin;
        m.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall).count();
      }
    }
    OlinkFast& tb;
  };

  std::string name_;
  std::uint32_t bytes_ = 0;
  PacketPool pool_;
  Model models_[kModels];
  std::unique_ptr<Stopwatch> stopwatch_;
};

}  // namespace

XY_TESTBENCH(OlinkFast, 510, "olink-fast",
             "the fast OLink fabric against the cycle-level one: latency, bandwidth, speed")

}  // namespace xy::olink_tb
