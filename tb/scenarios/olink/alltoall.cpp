// olink-alltoall (claim C11): every GPU streams Stores to every other (an MoE all-to-all) with
// many in flight, on each fabric in turn; bandwidth per GPU. On the PCIe fabric all GPUs
// share the switch's uplink, so each gets about its 1/N (see presets.hpp). `alltoall.pattern`
// swaps the destinations for seeded random ones or a ring (a TP all-gather step); `alltoall.model=fast`
// runs the fast fabric (timing only) instead, for systems too large for cycle accuracy. The GPUs'
// memories keep no data in either (nothing reads the Stores back): at 64 GPUs they would hold
// 256 MiB of it.
#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "tb/lib/gpu.hpp"
#include "tb/lib/memory.hpp"
#include "tb/scenarios/olink/composed.hpp"
#include "tb/scenarios/olink/presets.hpp"
#include "tb/scenarios/olink/streams.hpp"

namespace xy::olink_tb {
namespace {

// Runs the fabrics one after another, in order: each fabric's GPUs start together once its links
// are up (checked every 10 ns) and the fabric before it is done, so that no fabric's figure counts
// its links' bring-up and only one fabric's writes are in flight at a time. A composed fabric's
// clocks halt once its GPUs are done: its figures are final, and its PHYs would otherwise keep
// ticking while the others run. The packets a finished fabric no longer holds are freed.
class OneAfterAnother : public sc_core::sc_module {
 public:
  struct Turn {
    const lingyun::Fabric* links = nullptr;  // composed: up before its GPUs start
    std::vector<const olink::StoreStreamer*> gpus;
    ClockDomain* halt = nullptr;  // the composed fabric's clocks
    sc_core::sc_event go;
  };
  SC_HAS_PROCESS(OneAfterAnother);
  OneAfterAnother(const sc_core::sc_module_name& name, std::size_t fabrics, PacketPool& pool)
      : sc_core::sc_module(name), turns_(fabrics), pool_(pool) {
    SC_THREAD(run);
  }
  Turn& turn(std::size_t i) { return turns_[i]; }

 private:
  void run() {
    for (Turn& t : turns_) {
      while (t.links && !t.links->up(static_cast<Time>(sc_core::sc_time_stamp().value())))
        sc_core::wait(10, sc_core::SC_NS);
      t.go.notify(sc_core::SC_ZERO_TIME);
      for (const auto* g : t.gpus)
        while (!g->done()) sc_core::wait(g->done_event());
      if (t.halt) t.halt->halt();
      pool_.trim();
    }
  }
  std::vector<Turn> turns_;
  PacketPool& pool_;
};

class OlinkAlltoall : public Testbench {
 public:
  explicit OlinkAlltoall(RunContext& ctx) {
    Config& c = ctx.config;
    olink::StreamSpec spec = declare_streams(c, "alltoall", 1048576, ctx.seed);
    const bool fast = c.choice("alltoall.model", "cycle", {"cycle", "fast"},
                               "the cycle-level fabric, or the fast one (timing only, see olink-fast)") == "fast";
    spec.loosely_timed = fast;
    const int gpus = static_cast<int>(spec.gpus);
    check_memory(gpus * stream_memory_bytes(spec),
                 fmt::format("alltoall.gpus = {} x alltoall.outstanding = {} (a slot for each write a GPU keeps in "
                             "flight, one fabric at a time)",
                             gpus, spec.outstanding),
                 ctx.force_memory);
    const sw::SwitchParams base = sw::SwitchParams::declare(c, "switch");
    // OLink's two fabrics on composed Lingyun ports, each GPU with a port on each of
    // alltoall.planes single-switch planes; the comparators stay presets.
    const bool composed = c.choice("alltoall.olink", "composed", {"composed", "preset"},
                                   "OLink's fabrics on composed Lingyun ports, or as constant-delay presets "
                                   "(alltoall.model=fast: the fast fabric)") == "composed" && !fast;
    const int planes = static_cast<int>(c.integer("alltoall.planes", 4, "ports", 1, 8,
                                                  "800 Gb/s ports per GPU on OLink's composed fabrics, one per plane "
                                                  "(4: the presets' 3.2 Tb/s)"));
    const double cable_m = c.real("alltoall.cable_m", 2, "m", 0, 100, "GPU to switch cable, OLink's composed fabrics");
    const lingyun::Topology topology = lingyun::Topology::planes(gpus, planes, cable_m);
    const lingyun::PortParams port = lingyun::PortParams::declare(c, base.vcs);
    if (composed) {
      for (const char* key : {"port.fec", "port.interleave", "port.none.encoder_ns", "port.none.decoder_ns"})
        c.fix(key, "olink-alltoall, whose OLink presets carry their FEC (olink-rs544, olink-rs272)");
      lingyun::fix_switch_keys_of_composed_ports(c, "olink-alltoall");
      for (const char* key : {"llr.ack_timer_ns", "cbfc.refresh_ns"})
        c.fix(key, "olink-alltoall, whose links carry frames without a pause: ACKs and credit updates go by count "
                   "(llr.ack_every, cbfc.update_spacing_bytes) long before their timers");
      port.check_frame(olink::frame_bytes(std::min<std::uint32_t>(spec.bytes, olink::EndpointParams{}.max_bytes)),
                       "a Store's frame (alltoall.bytes, or a bulk write's segments)");
      double bytes = 0;
      for (const char* fec : {"rs544", "rs272"}) {  // at full load: every link's frames in flight
        lingyun::PortParams pp = port;
        pp.phy = port.phy.with_fec(fec);
        bytes += lingyun::Fabric::memory_bytes(topology, pp, 1.0);
      }
      check_memory(bytes, fmt::format("alltoall.gpus = {} x alltoall.planes = {} (OLink's two composed fabrics)", gpus,
                                      planes),
                   ctx.force_memory);
    } else {
      fix_preset_switch_keys(c, "olink-alltoall, whose OLink presets set the switch's ports, rate, clock and latency "
                                "(olink.<preset>.gpu_gbps, switch_ns)");
    }
    for (const char* key : {"switch.vcs", "switch.egress_scheduler", "switch.dwrr_quantum_bytes"})
      c.fix(key, "olink-alltoall, whose GPUs send on VC 0 only: there is nothing to schedule between VCs");
    for (const Preset& pr : kPresets) {
      Run run;
      if (composed && std::string(pr.name).rfind("olink-", 0) == 0) {
        run.composed = make_composed(pr, std::string(pr.name).substr(6), topology, base, port, pool_, ctx, true);
        run.stages.name = pr.name;
        run.link_GBps = port.line_gbps() * planes / 8;
      } else if (fast) {
        run.stages = declare_stages(pr, gpus, base, c);
        run.fast = std::make_unique<olink::FastFabric>(pr.name, run.stages.fast(spec.gpus, false));
      } else {
        run.fabric = make_preset_fabric(pr, gpus, base, pool_, ctx, "", false);  // nothing reads the Stores back
        run.stages = *run.fabric;
      }
      runs_.push_back(std::move(run));
    }
    sequence_ = std::make_unique<OneAfterAnother>("one_after_another", runs_.size(), pool_);
    for (std::size_t i = 0; i < runs_.size(); ++i) {
      Run& r = runs_[i];
      OneAfterAnother::Turn& turn = sequence_->turn(i);
      for (int g = 0; g < gpus; ++g) {
        r.gpus.push_back(std::make_unique<olink::StoreStreamer>(fmt::format("{}_stream{}", r.stages.name, g).c_str(), g,
                                                                spec, &turn.go));
        r.gpus.back()->socket.bind(r.socket(g));
        turn.gpus.push_back(r.gpus.back().get());
      }
      if (r.composed) {
        turn.links = r.composed->fabric.get();
        turn.halt = r.composed->clocks.get();
      }
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
      for (const auto& g : r.gpus) n += delivered(*g);
    return n;
  }
  // Bytes delivered of those the GPUs of every fabric send. No "traffic ended" line: a GPU posts
  // its writes as soon as it has room in flight, by default all of them at the start.
  double done_fraction() const override {
    double to_move = 0;
    for (const auto& r : runs_)
      for (const auto& g : r.gpus) to_move += static_cast<double>(g->bytes_to_move());
    return static_cast<double>(progress()) / to_move;
  }
  void check() const override {
    for (const auto& r : runs_) {
      if (r.fabric) r.fabric->check_buffer_accounting();
      if (r.composed)
        for (const auto& sw : r.composed->fabric->switches()) sw->check_buffer_accounting();
      for (const auto& g : r.gpus)
        if (g->errors()) throw CheckFailure(r.stages.name + ": writes failed");
    }
  }
  std::string stall() const override {
    for (const auto& r : runs_)
      if (r.composed)
        if (std::string s = olink_tb::stall(*r.composed); !s.empty()) return s;
    return "";
  }
  std::string fault() const override {
    for (const auto& r : runs_)
      if (r.composed)
        if (std::string f = olink_tb::fault(*r.composed); !f.empty()) return f;
    return "";
  }
  nlohmann::json summary() const override {
    nlohmann::json s;
    for (const auto& r : runs_) {
      double worst = 0, sum = 0;
      for (std::size_t i = 0; i < r.gpus.size(); ++i) {
        // A run stopped early: what a GPU still writing moved until then.
        const auto& g = r.gpus[i];
        const double s_end = ((g->done() ? g->finished_at() : sc_core::sc_time_stamp()) - g->started_at()).to_seconds();
        const double gbs = s_end > 0 ? static_cast<double>(g->bytes_moved()) / (s_end * 1e9) : 0;
        worst = i == 0 ? gbs : std::min(worst, gbs);
        sum += gbs;
      }
      const double link = r.composed ? r.link_GBps : static_cast<double>(r.stages.width) / to_ns(r.stages.period);
      s[r.stages.name] = {{"gpus", r.gpus.size()},
                          {"gpu_link_GBps", link},
                          // all GPUs share it, at their links' rate; null: none
                          {"shared_uplink_GBps", r.stages.uplink ? nlohmann::json(link) : nlohmann::json(nullptr)},
                          {"bandwidth_per_gpu_GBps", sum / static_cast<double>(r.gpus.size())},
                          {"slowest_gpu_GBps", worst}};
    }
    return s;
  }
  std::string report() const override {
    const nlohmann::json s = summary();
    std::string out = fmt::format("  {:<14} {:>6} {:>14} {:>18} {:>16} {:>14}\n", "fabric", "GPUs", "GPU link GB/s",
                                  "shared uplink GB/s", "GB/s per GPU", "slowest GB/s");
    for (const auto& r : runs_) {
      const auto& x = s[r.stages.name];
      const auto& up = x["shared_uplink_GBps"];
      out += fmt::format("  {:<14} {:>6} {:>14.1f} {:>18} {:>16.1f} {:>14.1f}\n", r.stages.name, x["gpus"].get<int>(),
                         x["gpu_link_GBps"].get<double>(), up.is_null() ? "-" : fmt::format("{:.1f}", up.get<double>()),
                         x["bandwidth_per_gpu_GBps"].get<double>(), x["slowest_gpu_GBps"].get<double>());
    }
    return out;
  }

 private:
  struct Run {
    Stages stages;
    std::unique_ptr<PresetFabric> fabric;       // cycle-level
    std::unique_ptr<ComposedFabric> composed;   // or on composed ports
    double link_GBps = 0;                       // of a composed fabric's GPU: its ports together
    std::unique_ptr<olink::FastFabric> fast;    // or fast
    std::vector<std::unique_ptr<olink::StoreStreamer>> gpus;
    tlm::tlm_target_socket<>& socket(int g) {
      if (composed) return composed->endpoints[g]->socket;
      if (fast) return fast->socket(g);
      return fabric->endpoints[g]->socket;
    }
  };
  std::unique_ptr<OneAfterAnother> sequence_;
  PacketPool pool_;
  std::vector<Run> runs_;
};

}  // namespace

XY_TESTBENCH(OlinkAlltoall, 520, "olink-alltoall",
             "8 GPUs (or more) on one switch, MoE all-to-all of Stores: bandwidth per GPU per fabric (claim C11)")

}  // namespace xy::olink_tb
