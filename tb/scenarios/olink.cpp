// olink-latency (claim C1): GPU 0 loads 64 B from GPU 1's memory through one switch, one load at
// a time, for four fabrics side by side: OLink with RS(544,514), OLink with the light FEC, an
// NVLink-class fabric and a PCIe-switch fabric. Each load's latency is measured through the
// TLM socket and broken down by stage; the stages add up to the measurement exactly.
#include "tb/scenarios/olink.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <memory>

#include <fmt/format.h>

#include "hw/switch/switch.hpp"
#include "tb/olink/gpu.hpp"
#include "tlm/olink/endpoint.hpp"
#include "tlm/olink/fast_fabric.hpp"
#include "xingyun/clock_domain.hpp"

namespace xy {
namespace {

using olink::Access;
using olink::EndpointParams;
using olink::GpuInitiator;
using olink::OlinkEndpoint;

// The stages of one fabric, in ns, and a GPU's bandwidth into it (estimates from public figures:
// see docs/olink.md). Each clock makes a 64-byte datapath, so that frames use whole beats with
// little padding (the switch forwards whole beats).
struct Preset {
  const char* name;
  double clock_mhz;
  double gpu_gbps;         // one GPU's injection bandwidth (its ports together)
  double egress, ingress;  // the GPU's NIC: packetise, depacketise
  double link;             // one link: SerDes, FEC, MAC/LLR at both ends, and the cable
  double switch_core;      // the switch from parser to egress (its ports' PHY is in `link`)
  double memory;           // HBM at the target
};
constexpr Preset kPresets[] = {
    {"olink-rs544", 6250, 3200, 100, 100, 128, 68, 200},
    {"olink-rs272", 6250, 3200, 100, 100, 97, 68, 200},
    {"nvlink-class", 14062.5, 7200, 20, 20, 30, 40, 120},
    {"pcie-switch", 1000, 512, 300, 300, 60, 150, 200},
};

// A preset's stages in cycles of its clock, as configured (olink.<preset>.*), for N GPUs.
struct Stages {
  std::string name;
  Time period;
  Cycle egress, ingress, link, memory;
  std::uint32_t width;
  sw::SwitchParams sp;

  Cycle switch_cycles() const {
    const auto& l = sp.lat;
    return l.rx_mac + l.parse + l.lookup + l.enqueue + l.arbiter + l.crossbar + l.egress + l.tx_mac;
  }
  // The fast fabric with the same stages, for `gpus` GPUs; `data` false: timing only.
  olink::FastParams fast(std::uint32_t gpus, bool data) const {
    olink::FastParams fp;
    fp.period = period;
    fp.link = link;
    fp.switch_core = switch_cycles();
    fp.switch_width = width;
    fp.data = data;
    fp.endpoint.gpus = gpus;
    fp.endpoint.width = width;
    fp.endpoint.egress = egress;
    fp.endpoint.ingress = ingress;
    fp.endpoint.memory = memory;
    fp.endpoint.memory_width = width;
    return fp;
  }
};

// One cycle-level fabric of N GPUs on one switch.
struct Fabric : Stages {
  std::unique_ptr<ClockDomain> domain;
  std::vector<std::unique_ptr<Channel<Packet*>>> channels;
  std::unique_ptr<sw::Switch> sw;
  std::vector<std::unique_ptr<OlinkEndpoint>> endpoints;
};

// Declares a preset's parameters (olink.<preset>.*) and returns its stages for `gpus` GPUs.
Stages declare_stages(const Preset& pr, int gpus, const sw::SwitchParams& base, Config& c) {
  const std::string k = std::string("olink.") + pr.name + ".";
  Stages f;
  f.name = pr.name;
  f.period = period_from_mhz(pr.clock_mhz);
  const auto cycles = [&](const char* key, double def, const char* what) {
    const double ns = c.real(k + key, def, "ns", 0, 1e6, what);
    return static_cast<Cycle>(std::llround(ns * kNs / static_cast<double>(f.period)));
  };
  f.egress = cycles("egress_ns", pr.egress, "GPU NIC: transaction to frame on the line");
  f.ingress = cycles("ingress_ns", pr.ingress, "GPU NIC: frame in to transaction");
  f.link = std::max<Cycle>(1, cycles("link_ns", pr.link, "one link: SerDes, FEC, MAC/LLR both ends, cable"));
  f.memory = cycles("memory_ns", pr.memory, "HBM access at the target");
  const Cycle core = std::max<Cycle>(6, cycles("switch_ns", pr.switch_core, "the switch, parser to egress"));
  const double gbps = c.real(k + "gpu_gbps", pr.gpu_gbps, "Gb/s", 1, 1e6, "one GPU's bandwidth into the fabric");
  const double width = gbps / 8 * 1000 / pr.clock_mhz;
  if (std::abs(width - std::round(width)) > 1e-9)
    throw ConfigError(fmt::format("{}gpu_gbps = {}: at {} MHz this is {:.3f} bytes per cycle, must be whole", k, gbps,
                                  pr.clock_mhz, width));
  f.width = static_cast<std::uint32_t>(std::llround(width));
  // The switch's own stage split, scaled to this fabric's total; its PHY is in `link`.
  f.sp = base;
  f.sp.ports = gpus;
  f.sp.clock_mhz = pr.clock_mhz;
  f.sp.port_gbps = gbps;
  auto& l = f.sp.lat;
  const double scale =
      static_cast<double>(core) / static_cast<double>(l.parse + l.lookup + l.enqueue + l.arbiter + l.crossbar + l.egress);
  l.rx_mac = l.tx_mac = 0;
  l.lookup = static_cast<Cycle>(std::llround(l.lookup * scale));
  l.enqueue = std::max<Cycle>(1, static_cast<Cycle>(std::llround(l.enqueue * scale)));
  l.arbiter = static_cast<Cycle>(std::llround(l.arbiter * scale));
  l.crossbar = std::max<Cycle>(1, static_cast<Cycle>(std::llround(l.crossbar * scale)));  // the switch needs one
  l.egress = static_cast<Cycle>(std::llround(l.egress * scale));
  // When one stage dominates the split (switch.lat.egress=1e6), rounding and the least cycles of
  // enqueue and crossbar take the others past the total: the excess comes off the largest (parse
  // wrapped below zero, a wake 2^64 cycles away).
  Cycle rest = l.lookup + l.enqueue + l.arbiter + l.crossbar + l.egress;
  Cycle* stages[] = {&l.egress, &l.crossbar, &l.arbiter, &l.lookup, &l.enqueue};
  std::stable_sort(std::begin(stages), std::end(stages), [](const Cycle* a, const Cycle* b) { return *a > *b; });
  for (Cycle* stage : stages) {
    const Cycle least = stage == &l.enqueue || stage == &l.crossbar ? 1 : 0;
    const Cycle cut = std::min(rest - std::min(rest, core), *stage - least);
    *stage -= cut;
    rest -= cut;
  }
  l.parse = core - rest;
  return f;
}

// Declares a preset's parameters and builds its cycle-level fabric of `gpus` GPUs, named after
// the preset unless `name` is given.
std::unique_ptr<Fabric> make_fabric(const Preset& pr, int gpus, const sw::SwitchParams& base, PacketPool& pool,
                                    RunContext& ctx, const std::string& name = "") {
  auto f = std::make_unique<Fabric>();
  static_cast<Stages&>(*f) = declare_stages(pr, gpus, base, ctx.config);
  if (!name.empty()) f->name = name;
  f->domain = std::make_unique<ClockDomain>(("olink_" + f->name).c_str(), f->period);
  Clock& clock = f->domain->clock();
  EndpointParams ep;
  ep.gpus = static_cast<std::uint32_t>(gpus);
  ep.width = f->width;
  ep.egress = f->egress;
  ep.ingress = f->ingress;
  ep.memory = f->memory;
  ep.memory_width = f->width;
  std::vector<Channel<Packet*>*> in(gpus), out(gpus);
  for (int g = 0; g < gpus; ++g) {
    f->channels.push_back(std::make_unique<Channel<Packet*>>(fmt::format("top.{}.up{}", f->name, g), clock,
                                                             ChannelSpec{f->link, 0, 1, 2}));
    in[g] = f->channels.back().get();
    f->channels.push_back(std::make_unique<Channel<Packet*>>(fmt::format("top.{}.down{}", f->name, g), clock,
                                                             ChannelSpec{f->link, 0, 1, 2}));
    out[g] = f->channels.back().get();
  }
  f->sw = std::make_unique<sw::Switch>("top." + f->name + ".sw", f->sp, clock, ctx.stats, in, out,
                                       [](const Packet& p) { return static_cast<int>(p.dst); }, ctx.seed);
  for (int g = 0; g < gpus; ++g) {
    f->endpoints.push_back(std::make_unique<OlinkEndpoint>(fmt::format("{}_gpu{}", f->name, g).c_str(), g, ep, clock,
                                                           *in[g], *out[g], pool, ctx.stats));
    in[g]->connect(&f->endpoints.back()->core(), &f->sw->ingress_core(g));
    out[g]->connect(&f->sw->egress_core(g), &f->endpoints.back()->core());
  }
  return f;
}

// Declares an all-to-all's parameters (<prefix>.gpus, bytes, bytes_per_gpu, outstanding, pattern).
olink::StreamSpec declare_streams(Config& c, const std::string& prefix, std::int64_t bytes_per_gpu,
                                  std::uint64_t seed, std::int64_t bytes = 256) {
  const std::string k = prefix + ".";
  olink::StreamSpec spec;
  spec.gpus = static_cast<std::uint32_t>(c.integer(k + "gpus", 8, "GPUs", 2, 512, "GPUs on the switch"));
  spec.bytes = static_cast<std::uint32_t>(
      c.integer(k + "bytes", bytes, "bytes", 8, 1 << 20, "bytes per write: a Store up to 256, an RDMA-style bulk write above"));
  const auto per_gpu = static_cast<std::uint64_t>(c.integer(k + "bytes_per_gpu", bytes_per_gpu, "bytes", 256, 1ll << 34,
                                                            "what each GPU sends, spread over the others"));
  if (per_gpu < spec.bytes)
    throw ConfigError(fmt::format("{}bytes_per_gpu = {}: less than one write ({}bytes = {}); allowed: at least {}", k,
                                  per_gpu, k, spec.bytes, spec.bytes));
  spec.count = static_cast<std::uint32_t>(per_gpu / spec.bytes);
  spec.outstanding = static_cast<std::uint32_t>(c.integer(k + "outstanding", 4096, "writes", 1, 65536,
                                                          "writes a GPU keeps in flight"));
  const std::string pattern = c.choice(k + "pattern", "alltoall", olink::kPatternNames,
                                       "destinations: round robin over the others, random, or the next on a ring");
  spec.pattern = static_cast<olink::Pattern>(std::find(olink::kPatternNames.begin(), olink::kPatternNames.end(), pattern) -
                                             olink::kPatternNames.begin());
  spec.seed = seed;
  return spec;
}

class OlinkLatency : public Testbench {
 public:
  explicit OlinkLatency(RunContext& ctx) : stats_(ctx.stats) {
    Config& c = ctx.config;
    bytes_ = static_cast<std::uint32_t>(c.integer("olink.bytes", 64, "bytes", 8, 256, "bytes per load"));
    loads_ = static_cast<int>(c.integer("olink.loads", 20, "loads", 1, 100000, "loads per fabric, one at a time"));
    const sw::SwitchParams base = sw::SwitchParams::declare(c, "switch");
    for (const Preset& pr : kPresets) {
      Measured m;
      m.fabric = make_fabric(pr, 2, base, pool_, ctx);
      Fabric& f = *m.fabric;
      std::vector<Access> program;
      for (int i = 0; i < loads_; ++i) program.push_back({Access::kLoad, olink::uva(1, 4096 + 64 * i), bytes_, 0});
      // One load at a time, each issued when the last has returned: every one sees an idle
      // fabric. The first starts on a clock edge, as every later one does. GPU 1 only serves.
      m.gpu = std::make_unique<GpuInitiator>(fmt::format("{}_initiator", f.name).c_str(), program,
                                             to_sc_time(1000 * f.period));
      m.gpu->socket.bind(f.endpoints[0]->socket);
      m.idle = std::make_unique<GpuInitiator>(fmt::format("{}_gpu1_initiator", f.name).c_str(), std::vector<Access>{},
                                              sc_core::SC_ZERO_TIME);
      m.idle->socket.bind(f.endpoints[1]->socket);
      runs_.push_back(std::move(m));
    }
  }

  bool done() const override {
    for (const auto& m : runs_)
      if (!m.gpu->done()) return false;
    return true;
  }
  std::uint64_t progress() const override {
    std::uint64_t n = 0;
    for (const auto& m : runs_) n += m.gpu->results().size();
    return n;
  }
  void check() const override {
    for (const auto& m : runs_)
      for (const auto& r : m.gpu->results()) {
        const Fabric& f = *m.fabric;
        if (r.status != tlm::TLM_OK_RESPONSE) throw CheckFailure(f.name + ": a load failed");
        const Cycle measured = from_sc_time(r.latency) / f.period;
        if (measured != total(f))
          throw CheckFailure(fmt::format("{}: load took {} cycles, the stages add up to {}", f.name, measured, total(f)));
      }
  }
  nlohmann::json summary() const override {
    nlohmann::json s;
    for (const auto& m : runs_) {
      const Fabric& f = *m.fabric;
      const double ns = to_ns(f.period);
      nlohmann::json stages = nlohmann::json::object();
      for (const auto& [name, cycles] : breakdown(f)) stages[name + "_ns"] = cycles * ns;
      // A run stopped before its first load returned has no latency to report.
      const nlohmann::json load = m.gpu->results().empty()
                                      ? nlohmann::json(nullptr)
                                      : nlohmann::json(to_ns(from_sc_time(m.gpu->results().back().latency)));
      s[f.name] = {{"load_latency_ns", load}, {"one_way_ns", one_way(f) * ns}, {"breakdown", stages}};
    }
    return s;
  }
  std::string report() const override {
    const nlohmann::json s = summary();
    std::string out = fmt::format("  {}-byte remote load, one at a time, one switch\n  {:<22}", bytes_, "stage (ns)");
    for (const auto& m : runs_) out += fmt::format(" {:>13}", m.fabric->name);
    out += "\n";
    for (const auto& [name, cycles] : breakdown(*runs_.front().fabric)) {
      out += fmt::format("  {:<22}", name);
      for (const auto& m : runs_) out += fmt::format(" {:>13.1f}", s[m.fabric->name]["breakdown"][name + "_ns"].get<double>());
      out += "\n";
    }
    out += fmt::format("  {:<22}", "load, measured");
    for (const auto& m : runs_) {
      const auto& load = s[m.fabric->name]["load_latency_ns"];
      out += load.is_null() ? fmt::format(" {:>13}", "-") : fmt::format(" {:>13.1f}", load.get<double>());
    }
    out += fmt::format("\n  {:<22}", "one way (request)");
    for (const auto& m : runs_) out += fmt::format(" {:>13.1f}", s[m.fabric->name]["one_way_ns"].get<double>());
    return out + "\n";
  }

 private:
  struct Measured {
    std::unique_ptr<Fabric> fabric;
    std::unique_ptr<GpuInitiator> gpu, idle;
  };
  static Cycle beats(const Fabric& f, std::uint32_t payload) {
    return (olink::kEthernetHeaderBytes + olink::kHeaderBytes + payload + olink::kFcsBytes + f.width - 1) / f.width - 1;
  }
  // The stages of a load in cycles, in order.
  std::vector<std::pair<std::string, Cycle>> breakdown(const Fabric& f) const {
    const Cycle data = (bytes_ + f.width - 1) / f.width;
    return {{"entry", 1},
            {"gpu_egress", f.egress},
            {"links_request", 2 * f.link},
            {"switch_request", f.switch_cycles()},
            {"frame_tail_request", beats(f, 0)},
            {"gpu_ingress_target", f.ingress},
            {"memory", f.memory + data},
            {"gpu_egress_target", f.egress},
            {"links_response", 2 * f.link},
            {"switch_response", f.switch_cycles()},
            {"frame_tail_response", beats(f, bytes_)},
            {"gpu_ingress", f.ingress}};
  }
  Cycle total(const Fabric& f) const {
    Cycle t = 0;
    for (const auto& [name, cycles] : breakdown(f)) t += cycles;
    return t;
  }
  Cycle one_way(const Fabric& f) const { return f.egress + 2 * f.link + f.switch_cycles() + beats(f, 0) + f.ingress; }

  Stats& stats_;
  std::uint32_t bytes_ = 64;
  int loads_ = 20;
  PacketPool pool_;
  std::vector<Measured> runs_;
};

// olink-alltoall (claim C11): every GPU streams Stores to every other (an MoE all-to-all) with
// many in flight, on each fabric side by side; bandwidth per GPU. `alltoall.pattern` swaps the
// destinations for seeded random ones or a ring (a TP all-gather step); `alltoall.model=fast`
// runs the fast fabric (timing only) instead, for systems too large for cycle accuracy.
class OlinkAlltoall : public Testbench {
 public:
  explicit OlinkAlltoall(RunContext& ctx) {
    Config& c = ctx.config;
    olink::StreamSpec spec = declare_streams(c, "alltoall", 1048576, ctx.seed);
    const bool fast = c.choice("alltoall.model", "cycle", {"cycle", "fast"},
                               "the cycle-level fabric, or the fast one (timing only, see olink-fast)") == "fast";
    spec.loosely_timed = fast;
    const int gpus = static_cast<int>(spec.gpus);
    const sw::SwitchParams base = sw::SwitchParams::declare(c, "switch");
    for (const Preset& pr : kPresets) {
      Run run;
      std::function<tlm::tlm_target_socket<>&(int)> socket;
      if (fast) {
        run.stages = declare_stages(pr, gpus, base, c);
        run.fast = std::make_unique<olink::FastFabric>(pr.name, run.stages.fast(spec.gpus, false));
        socket = [&run](int g) -> tlm::tlm_target_socket<>& { return run.fast->socket(g); };
      } else {
        run.fabric = make_fabric(pr, gpus, base, pool_, ctx);
        run.stages = *run.fabric;
        socket = [&run](int g) -> tlm::tlm_target_socket<>& { return run.fabric->endpoints[g]->socket; };
      }
      for (int g = 0; g < gpus; ++g) {
        run.gpus.push_back(std::make_unique<olink::StoreStreamer>(fmt::format("{}_stream{}", pr.name, g).c_str(), g, spec));
        run.gpus.back()->socket.bind(socket(g));
      }
      runs_.push_back(std::move(run));
    }
  }
  bool done() const override {
    for (const auto& r : runs_)
      for (const auto& g : r.gpus)
        if (!g->done()) return false;
    return true;
  }
  std::uint64_t progress() const override {
    std::uint64_t n = 0;
    for (const auto& r : runs_)
      for (const auto& g : r.gpus) n += g->bytes_moved();
    return n;
  }
  void check() const override {
    for (const auto& r : runs_) {
      if (r.fabric) r.fabric->sw->check_buffer_accounting();
      for (const auto& g : r.gpus)
        if (g->errors()) throw CheckFailure(r.stages.name + ": writes failed");
    }
  }
  nlohmann::json summary() const override {
    nlohmann::json s;
    for (const auto& r : runs_) {
      double worst = 1e300, sum = 0;
      for (const auto& g : r.gpus) {
        const double gbs = static_cast<double>(g->bytes_moved()) / (g->finished_at().to_seconds() * 1e9);
        worst = std::min(worst, gbs);
        sum += gbs;
      }
      s[r.stages.name] = {{"gpus", r.gpus.size()},
                          {"gpu_link_GBps", static_cast<double>(r.stages.width) / to_ns(r.stages.period)},
                          {"bandwidth_per_gpu_GBps", sum / static_cast<double>(r.gpus.size())},
                          {"slowest_gpu_GBps", worst}};
    }
    return s;
  }
  std::string report() const override {
    const nlohmann::json s = summary();
    std::string out = fmt::format("  {:<14} {:>6} {:>14} {:>16} {:>14}\n", "fabric", "GPUs", "GPU link GB/s",
                                  "GB/s per GPU", "slowest GB/s");
    for (const auto& r : runs_) {
      const auto& x = s[r.stages.name];
      out += fmt::format("  {:<14} {:>6} {:>14.1f} {:>16.1f} {:>14.1f}\n", r.stages.name, x["gpus"].get<int>(),
                         x["gpu_link_GBps"].get<double>(), x["bandwidth_per_gpu_GBps"].get<double>(),
                         x["slowest_gpu_GBps"].get<double>());
    }
    return out;
  }

 private:
  struct Run {
    Stages stages;
    std::unique_ptr<Fabric> fabric;             // cycle-level
    std::unique_ptr<olink::FastFabric> fast;    // or fast
    std::vector<std::unique_ptr<olink::StoreStreamer>> gpus;
  };
  PacketPool pool_;
  std::vector<Run> runs_;
};

// olink-fast: calibrates the fast fabric against the cycle-level one on the same preset: a load's
// latency (one at a time, GPU 0 from GPU 1) and an all-to-all's bandwidth. Three models run one
// after the other, so that a stopwatch can time each: the fast fabric timing only, the fast
// fabric with data, and the cycle-level fabric — simulated time per wall-second for all three,
// in the same run. The default all-to-all is of 64 KiB bulk writes, the way an MoE dispatch
// moves its tokens, 16 MiB per GPU so that the fast model runs long enough to time;
// `fast.bytes=256` makes it one of Stores.
class OlinkFast : public Testbench {
 public:
  explicit OlinkFast(RunContext& ctx) {
    Config& c = ctx.config;
    std::vector<std::string> names;
    for (const Preset& pr : kPresets) names.push_back(pr.name);
    const std::string preset = c.choice("fast.fabric", "olink-rs544", names, "the preset the models run");
    const olink::StreamSpec spec = declare_streams(c, "fast", 16777216, ctx.seed, 65536);
    const int gpus = static_cast<int>(spec.gpus);
    bytes_ = spec.bytes;
    const int loads = static_cast<int>(c.integer("fast.loads", 20, "loads", 1, 100000, "64-byte loads, one at a time"));
    const sw::SwitchParams base = sw::SwitchParams::declare(c, "switch");
    const Preset& pr = *std::find_if(std::begin(kPresets), std::end(kPresets),
                                     [&](const Preset& p) { return preset == p.name; });
    name_ = pr.name;
    std::vector<Access> program;
    for (int i = 0; i < loads; ++i) program.push_back({Access::kLoad, olink::uva(1, 4096 + 64 * i), 64, 0});
    // The cycle-level fabrics (one for the loads, one for the all-to-all) first: the fast ones take their stages.
    Model& cycle = models_[kCycle];
    cycle.cycle_latency = make_fabric(pr, 2, base, pool_, ctx, name_ + "-loads");
    cycle.cycle_alltoall = make_fabric(pr, gpus, base, pool_, ctx, name_ + "-alltoall");
    const Fabric& f = *cycle.cycle_latency;
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
      for (const auto& s : m.streams) n += s->bytes_moved();
    }
    return n;
  }
  void check() const override {
    models_[kCycle].cycle_alltoall->sw->check_buffer_accounting();
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
    for (const Model& m : models_) {
      s[m.key] = {{"load_latency_ns", m.latency_ns()},
                  {"bandwidth_per_gpu_GBps", m.bandwidth()},
                  {"simulated_us", m.simulated.to_seconds() * 1e6},
                  {"wall_s", m.wall_s},
                  {"simulated_us_per_wall_s", m.simulated.to_seconds() * 1e6 / m.wall_s}};
    }
    const auto ratio = [&](const char* model, const char* key) {
      return s[model][key].get<double>() / s["cycle"][key].get<double>();
    };
    s["latency_error"] = ratio("fast", "load_latency_ns") - 1;
    s["bandwidth_error"] = ratio("fast", "bandwidth_per_gpu_GBps") - 1;
    s["speedup"] = ratio("fast", "simulated_us_per_wall_s");
    s["speedup_with_data"] = ratio("fast_data", "simulated_us_per_wall_s");
    return s;
  }
  std::string report() const override {
    const nlohmann::json s = summary();
    std::string out = fmt::format("  {} ({} GPUs in the all-to-all, {}-byte writes)\n  {:<26} {:>12} {:>12} {:>10} {:>12} {:>10}\n",
                                  name_, models_[0].streams.size(), bytes_, "", "cycle-level", "fast", "fast/cycle",
                                  "fast+data", "/cycle");
    const auto row = [&](const char* label, const char* key) {
      const double c = s["cycle"][key].get<double>(), f = s["fast"][key].get<double>(),
                   d = s["fast_data"][key].get<double>();
      out += fmt::format("  {:<26} {:>12.1f} {:>12.1f} {:>10.3f} {:>12.1f} {:>10.3f}\n", label, c, f, f / c, d, d / c);
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
  struct Model {
    std::string key;
    std::unique_ptr<Fabric> cycle_latency, cycle_alltoall;                  // the cycle-level model's
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

Scenario olink_latency_scenario() {
  return {"olink-latency", "GPU-to-GPU remote load through one switch, per-stage breakdown for four fabrics (claim C1)",
          [](RunContext& ctx) { return std::make_unique<OlinkLatency>(ctx); }};
}

}  // namespace xy

namespace xy {
Scenario olink_alltoall_scenario() {
  return {"olink-alltoall", "8 GPUs (or more) on one switch, MoE all-to-all of Stores: bandwidth per GPU per fabric (claim C11)",
          [](RunContext& ctx) { return std::make_unique<OlinkAlltoall>(ctx); }};
}

Scenario olink_fast_scenario() {
  return {"olink-fast", "the fast OLink fabric against the cycle-level one: latency, bandwidth, speed",
          [](RunContext& ctx) { return std::make_unique<OlinkFast>(ctx); }};
}
}  // namespace xy
