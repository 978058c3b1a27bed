// olink-alltoall (claim C11): every GPU streams Stores to every other (an MoE all-to-all) with
// many in flight, on each fabric side by side; bandwidth per GPU. On the PCIe fabric all GPUs
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
#include "tb/scenarios/olink/presets.hpp"
#include "tb/scenarios/olink/streams.hpp"

namespace xy::olink_tb {
namespace {

class OlinkAlltoall : public Testbench {
 public:
  explicit OlinkAlltoall(RunContext& ctx) {
    Config& c = ctx.config;
    olink::StreamSpec spec = declare_streams(c, "alltoall", 1048576, ctx.seed);
    const bool fast = c.choice("alltoall.model", "cycle", {"cycle", "fast"},
                               "the cycle-level fabric, or the fast one (timing only, see olink-fast)") == "fast";
    spec.loosely_timed = fast;
    const int gpus = static_cast<int>(spec.gpus);
    check_memory(static_cast<double>(std::size(kPresets)) * gpus * stream_memory_bytes(spec),
                 fmt::format("alltoall.gpus = {} x alltoall.outstanding = {} (a slot for each write a GPU keeps in "
                             "flight, made up front, in each of {} fabrics)",
                             gpus, spec.outstanding, std::size(kPresets)),
                 ctx.force_memory);
    const sw::SwitchParams base = sw::SwitchParams::declare(c, "switch");
    fix_preset_switch_keys(c, "olink-alltoall, whose OLink presets set the switch's ports, rate, clock and latency "
                              "(olink.<preset>.gpu_gbps, switch_ns)");
    for (const char* key : {"switch.vcs", "switch.egress_scheduler", "switch.dwrr_quantum_bytes"})
      c.fix(key, "olink-alltoall, whose GPUs send on VC 0 only: there is nothing to schedule between VCs");
    for (const Preset& pr : kPresets) {
      Run run;
      std::function<tlm::tlm_target_socket<>&(int)> socket;
      if (fast) {
        run.stages = declare_stages(pr, gpus, base, c);
        run.fast = std::make_unique<olink::FastFabric>(pr.name, run.stages.fast(spec.gpus, false));
        socket = [&run](int g) -> tlm::tlm_target_socket<>& { return run.fast->socket(g); };
      } else {
        run.fabric = make_preset_fabric(pr, gpus, base, pool_, ctx, "", false);  // nothing reads the Stores back
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
      for (const auto& g : r.gpus)
        if (g->errors()) throw CheckFailure(r.stages.name + ": writes failed");
    }
  }
  nlohmann::json summary() const override {
    nlohmann::json s;
    for (const auto& r : runs_) {
      double worst = 0, sum = 0;
      for (std::size_t i = 0; i < r.gpus.size(); ++i) {
        // A run stopped early: what a GPU still writing moved until then.
        const auto& g = r.gpus[i];
        const double s_end = (g->done() ? g->finished_at() : sc_core::sc_time_stamp()).to_seconds();
        const double gbs = s_end > 0 ? static_cast<double>(g->bytes_moved()) / (s_end * 1e9) : 0;
        worst = i == 0 ? gbs : std::min(worst, gbs);
        sum += gbs;
      }
      const double link = static_cast<double>(r.stages.width) / to_ns(r.stages.period);
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
    std::unique_ptr<olink::FastFabric> fast;    // or fast
    std::vector<std::unique_ptr<olink::StoreStreamer>> gpus;
  };
  PacketPool pool_;
  std::vector<Run> runs_;
};

}  // namespace

XY_TESTBENCH(OlinkAlltoall, 520, "olink-alltoall",
             "8 GPUs (or more) on one switch, MoE all-to-all of Stores: bandwidth per GPU per fabric (claim C11)")

}  // namespace xy::olink_tb
