// olink-latency (claim C1): GPU 0 loads 64 B from GPU 1's memory through one switch, one load at
// a time, for four fabrics side by side: OLink with RS(544,514), OLink with the light FEC, an
// NVLink-class fabric and a PCIe-switch fabric. Each load's latency is measured through the
// TLM socket and broken down by stage; the stages add up to the measurement exactly.
// The two comparators are presets from public figures (presets.hpp); the OLink fabrics are
// composed Lingyun ports (composed.hpp).
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "kernel/packet.hpp"
#include "tb/lib/figure.hpp"
#include "tb/lib/gpu.hpp"
#include "tb/lib/memory.hpp"
#include "tb/scenarios/olink/composed.hpp"
#include "tb/scenarios/olink/presets.hpp"

namespace xy::olink_tb {
namespace {

using olink::Access;
using olink::GpuInitiator;
using olink::OlinkEndpoint;

class OlinkLatency : public Testbench {
 public:
  explicit OlinkLatency(RunContext& ctx) {
    Config& c = ctx.config;
    bytes_ = static_cast<std::uint32_t>(c.integer("olink.bytes", 64, "bytes", 8, 256, "bytes per load"));
    loads_ = static_cast<int>(c.integer("olink.loads", 20, "loads", 1, 100000, "loads per fabric, one at a time"));
    const sw::SwitchParams base = sw::SwitchParams::declare(c, "switch");
    // The OLink fabrics are composed Lingyun ports and switches; the comparators stay presets.
    const lingyun::Topology topology = *lingyun::Topology::declare(c, 2);
    const lingyun::PortParams port = lingyun::PortParams::declare(c, base.vcs);
    for (const char* key : {"port.fec", "port.interleave", "port.none.encoder_ns", "port.none.decoder_ns"})
      c.fix(key, "olink-latency, whose OLink presets carry their FEC (olink-rs544, olink-rs272)");
    lingyun::fix_switch_keys_of_composed_ports(c, "olink-latency");
    // One load at a time: no queue forms at a switch, and one frame is in flight each way, so
    // neither LLR's window and ACK batching nor CBFC's credits ever bind.
    for (const char* key : {"switch.arbiter", "switch.buffer_mib", "switch.cell_bytes", "switch.dt_alpha",
                            "switch.dwrr_quantum_bytes", "switch.ecn.kmax_bytes", "switch.ecn.kmin_bytes", "switch.ecn.on",
                            "switch.ecn.pmax", "switch.egress_scheduler", "switch.iterations", "switch.speedup",
                            "switch.when_full", "olink.pcie-switch.port_buffer_bytes", "olink.pcie-switch.posted_credits"})
      c.fix(key, "olink-latency, which sends one load at a time: no queue forms");
    for (const char* key : {"llr.ack_every", "llr.nack_timer_ns", "llr.replay_buffer_bytes", "llr.seq_bits", "llr.window",
                            "cbfc.credit_bytes", "cbfc.update_spacing_bytes", "cbfc.update_timer_ns"})
      c.fix(key, "olink-latency, which sends one load at a time: one frame in flight each way");
    port.check_frame(olink::frame_bytes(bytes_),
                     fmt::format("a load's response frame (olink.bytes = {} and {} bytes of headers and FCS)", bytes_,
                                 olink::kEthernetHeaderBytes + olink::kHeaderBytes + olink::kFcsBytes));
    double composed = 0;  // the presets' fabrics have two GPUs each, whatever the topology
    for (const Preset& pr : kPresets)
      if (std::string(pr.name).rfind("olink-", 0) == 0)
        composed += composed_memory_bytes(topology, port, std::string(pr.name).substr(6));
    check_memory(composed, fmt::format("{}, a fabric for each of olink-rs544 and olink-rs272,", topology.sized_by()),
                 ctx.force_memory);
    for (const Preset& pr : kPresets) {
      Measured m;
      std::string name;
      const std::vector<std::unique_ptr<OlinkEndpoint>>* ends;
      Time period;
      if (std::string(pr.name).rfind("olink-", 0) == 0) {
        m.composed = make_composed(pr, std::string(pr.name).substr(6), topology, base, port, pool_, ctx);
        name = m.composed->name;
        ends = &m.composed->endpoints;
        period = m.composed->period;
        summary_line_ = m.composed->fabric->summary();
      } else {
        // NVLink-class crosses the switches and cables OLink's fabric does; the PCIe fabric's
        // own shape (its uplink) is what it stands for.
        const std::optional<PresetPath> path =
            std::string(pr.name) == "nvlink-class" ? std::optional(PresetPath::between(topology, 0, 1)) : std::nullopt;
        m.fabric = make_preset_fabric(pr, 2, base, pool_, ctx, "", true, path ? &*path : nullptr);
        name = m.fabric->name;
        ends = &m.fabric->endpoints;
        period = m.fabric->period;
      }
      // One load more than measured, first: it waits for the links to come up (CDR lock,
      // port.cdr_lock_us, then LLR's INIT exchange), which is bring-up, not a load's latency.
      if (m.composed) m.composed->unmeasured[0] = m.composed->unmeasured[1] = 1;
      std::vector<Access> program;
      for (int i = 0; i <= loads_; ++i) program.push_back({Access::kLoad, olink::uva(1, 4096 + 64 * i), bytes_, 0});
      // One load at a time, each issued when the last has returned: every one sees an idle
      // fabric. The first starts on a clock edge, as every later one does. GPU 1 only serves.
      m.gpu = std::make_unique<GpuInitiator>(fmt::format("{}_initiator", name).c_str(), program,
                                             to_sc_time(1000 * period));
      m.gpu->socket.bind((*ends)[0]->socket);
      for (std::size_t g = 1; g < ends->size(); ++g) {  // the others only serve (a topology may have more than 2)
        m.idle.push_back(std::make_unique<GpuInitiator>(fmt::format("{}_gpu{}_initiator", name, g).c_str(),
                                                        std::vector<Access>{}, sc_core::SC_ZERO_TIME));
        m.idle.back()->socket.bind((*ends)[g]->socket);
      }
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
  std::string stall() const override {
    for (const auto& m : runs_)
      if (m.composed)
        if (std::string s = olink_tb::stall(*m.composed); !s.empty()) return s;
    return "";
  }
  std::string fault() const override {
    for (const auto& m : runs_)
      if (m.composed)
        if (std::string f = olink_tb::fault(*m.composed); !f.empty()) return f;
    return "";
  }
  // Loads answered of those the fabrics' programs ask (loads + 1 each: the first warms the path).
  double done_fraction() const override {
    return static_cast<double>(progress()) / (static_cast<double>(runs_.size()) * (loads_ + 1));
  }
  void check() const override {
    for (const auto& m : runs_) {
      for (const auto& r : m.gpu->results())
        if (r.status != tlm::TLM_OK_RESPONSE) throw CheckFailure(name(m) + ": a load failed");
      if (m.composed) {
        // Every load crossed the fabric once each way, and its stages fit inside it.
        const ComposedFabric& f = *m.composed;
        const auto loads = measured(m);
        if (f.frames[0] != loads || f.frames[1] != loads)
          throw CheckFailure(fmt::format("{}: {} loads but {} request and {} response frames arrived", f.name, loads,
                                         f.frames[0], f.frames[1]));
        if (loads && mean_load(m) + 1e-9 < sum_path(f, 0) + sum_path(f, 1))
          throw CheckFailure(fmt::format("{}: the stages of the paths add up to more than the load took", f.name));
        continue;
      }
      const PresetFabric& f = *m.fabric;
      for (const auto& r : m.gpu->results()) {
        const Cycle measured = from_sc_time(r.latency) / f.period;
        if (measured != total(f))
          throw CheckFailure(fmt::format("{}: load took {} cycles, the stages add up to {}", f.name, measured, total(f)));
      }
    }
  }
  nlohmann::json summary() const override {
    nlohmann::json s;
    if (!summary_line_.empty()) s["topology"] = summary_line_;
    for (const auto& m : runs_) {
      nlohmann::json stages = nlohmann::json::object(), provenance = nlohmann::json::object();
      for (const auto& st : breakdown(m)) {
        stages[st.name + "_ns"] = st.ns;
        provenance[st.name + "_ns"] = st.provenance;
      }
      // A run stopped before its first load returned has no latency to report.
      const bool none = measured(m) == 0;
      s[name(m)] = {{"load_latency_ns", none ? nlohmann::json(nullptr) : nlohmann::json(mean_load(m))},
                    {"one_way_ns", none ? nlohmann::json(nullptr) : nlohmann::json(one_way(m))},
                    {"breakdown", stages},
                    {"provenance", provenance},
                    {"composed", m.composed != nullptr}};
    }
    // Claim C1: OLink one way about 1.2 us, NVLink-class 0.1-0.2 us, a 10x gap.
    const auto& kp4 = s["olink-rs544"], & nv = s["nvlink-class"];
    if (!kp4["load_latency_ns"].is_null() && !nv["load_latency_ns"].is_null()) {
      const double load = kp4["load_latency_ns"].get<double>(), one = kp4["one_way_ns"].get<double>();
      s["claim_c1"] = {{"seed_one_way_ns", 1200},
                       {"closer_to_seed", std::abs(one - 1200) < std::abs(load - 1200) ? "one_way" : "round_trip"},
                       {"olink_over_nvlink_load", load / nv["load_latency_ns"].get<double>()},
                       {"ten_x_gap_met", load / nv["load_latency_ns"].get<double>() >= 10}};
      add_c1_sensitivity(kp4, nv, s["claim_c1"]);
    }
    return s;
  }

  // Derived from the breakdowns (a load is the sum of its stages, one at a time): how much of
  // OLink's load each provenance holds, and the OLink/NVLink-class ratio with each configured stage
  // taken out (at 0) or doubled, and with the GPU's side (controller and memory) taken out.
  static void add_c1_sensitivity(const nlohmann::json& olink, const nlohmann::json& nvlink, nlohmann::json& c1) {
    std::map<std::string, double> by = {{"configured", 0}, {"derived", 0}, {"measured", 0}, {"residual", 0}};
    for (const auto& [stage, ns] : olink["breakdown"].items()) by[olink["provenance"][stage]] += ns.get<double>();
    c1["olink_load_by_provenance_ns"] = by;
    const auto sum = [](const nlohmann::json& f, std::initializer_list<const char*> stages) {
      double ns = 0;
      for (const char* st : stages) ns += f["breakdown"].value(std::string(st) + "_ns", 0.0);
      return ns;
    };
    const double lo = olink["load_latency_ns"].get<double>(), ln = nvlink["load_latency_ns"].get<double>();
    c1["olink_switch_ns"] = sum(olink, {"request.switch", "response.switch"});
    struct Input { const char* key; std::initializer_list<const char*> olink, nvlink; };
    const Input inputs[] = {
        {"olink.gpu.egress_ns", {"gpu_egress", "gpu_egress_target"}, {"gpu_egress", "gpu_egress_target"}},
        {"olink.gpu.ingress_ns", {"gpu_ingress", "gpu_ingress_target"}, {"gpu_ingress", "gpu_ingress_target"}},
        {"olink.gpu.memory_ns", {"memory"}, {"memory"}},
        {"port.pma_tx_ns, pma_rx_ns, cable", {"request.pma_cable", "response.pma_cable"}, {}},
        {"port.mac_pcs.tx_ns, rx_ns",
         {"request.mac_pcs_tx", "request.mac_pcs_rx", "response.mac_pcs_tx", "response.mac_pcs_rx"}, {}},
        {"port.rs544.encoder_ns", {"request.fec_encode", "response.fec_encode"}, {}},
        {"port.rs544.decoder_ns", {"request.fec_decode", "response.fec_decode"}, {}},
        {"switch.lat.* (OLink's switches)", {"request.switch", "response.switch"}, {}},
        {"olink.nvlink-class.link_ns, cable", {}, {"links_request", "links_response"}},
        {"olink.nvlink-class.switch_ns", {}, {"switch_request", "switch_response"}},
    };
    nlohmann::json sens = nlohmann::json::object();
    for (const Input& in : inputs) {
      const double o = sum(olink, in.olink), n = sum(nvlink, in.nvlink);
      sens[in.key] = {{"olink_ns", o}, {"nvlink_ns", n}, {"ratio_at_zero", (lo - o) / (ln - n)},
                      {"ratio_doubled", (lo + o) / (ln + n)}};
    }
    c1["sensitivity"] = sens;
    const auto gpu = [&](const nlohmann::json& f) {
      return sum(f, {"gpu_egress", "gpu_egress_target", "gpu_ingress", "gpu_ingress_target", "memory"});
    };
    c1["fabric_only_ratio"] = (lo - gpu(olink)) / (ln - gpu(nvlink));
  }
  std::string report() const override {
    const nlohmann::json s = summary();
    std::string out = fmt::format("  {}-byte remote load, one at a time\n", bytes_);
    if (!summary_line_.empty()) out += "  OLink fabrics: " + summary_line_ + "\n";
    // Composed fabrics first (measured), then the comparators (configured presets).
    for (bool composed : {true, false}) {
      const Measured* first = nullptr;
      for (const auto& m : runs_)
        if ((m.composed != nullptr) == composed && !first) first = &m;
      if (!first) continue;
      out += fmt::format("  {:<30}", composed ? "stage (ns), composed ports" : "stage (ns), presets");
      for (const auto& m : runs_)
        if ((m.composed != nullptr) == composed) out += fmt::format(" {:>13}", name(m));
      out += "\n";
      for (const auto& st : breakdown(*first)) {
        out += fmt::format("  {:<30}", st.name + (st.provenance == "measured"   ? ""
                                                  : st.provenance == "residual" ? " +"
                                                                                : " *"));
        for (const auto& m : runs_)
          if ((m.composed != nullptr) == composed)
            out += fmt::format(" {:>13.1f}", s[name(m)]["breakdown"][st.name + "_ns"].get<double>());
        out += "\n";
      }
    }
    out += "  (* configured or derived from configuration; + the load less every other stage; the rest measured from "
           "timestamps)\n";
    for (const char* row : {"load_latency_ns", "one_way_ns"}) {
      out += fmt::format("  {:<30}", row == std::string("load_latency_ns") ? "load, measured (mean)" : "one way (request)");
      for (const auto& m : runs_) {
        out += fmt::format(" {:>13}", figure(s[name(m)][row], 1));
      }
      out += "\n";
    }
    if (s.contains("claim_c1"))
      out += fmt::format("  C1: the seed's 1.2 us is closest to OLink's {}; OLink/NVLink-class load = {:.1f}x: 10x {}\n",
                         s["claim_c1"]["closer_to_seed"].get<std::string>() == "one_way" ? "one-way time" : "round trip",
                         s["claim_c1"]["olink_over_nvlink_load"].get<double>(),
                         s["claim_c1"]["ten_x_gap_met"].get<bool>() ? "met" : "not met");
    if (s.contains("claim_c1")) {
      const auto& c1 = s["claim_c1"];
      const auto& by = c1["olink_load_by_provenance_ns"];
      out += fmt::format("  C1: of OLink's load {:.1f} ns are configured, {:.1f} derived, {:.1f} measured ({:.1f} of it the "
                         "switches, whose stages are configured) and {:.1f} residual; fabric only (no GPU controller "
                         "or memory): {:.2f}x\n",
                         by["configured"].get<double>(), by["derived"].get<double>(), by["measured"].get<double>(),
                         c1["olink_switch_ns"].get<double>(), by["residual"].get<double>(),
                         c1["fabric_only_ratio"].get<double>());
      out += fmt::format("  {:<38} {:>9} {:>9} {:>9} {:>9}\n", "C1 ratio with one input (ns of a load)", "OLink",
                         "NVLink-cl", "at 0", "doubled");
      for (const auto& [key, v] : c1["sensitivity"].items())
        out += fmt::format("  {:<38} {:>9.1f} {:>9.1f} {:>8.2f}x {:>8.2f}x\n", key, v["olink_ns"].get<double>(),
                           v["nvlink_ns"].get<double>(), v["ratio_at_zero"].get<double>(),
                           v["ratio_doubled"].get<double>());
    }
    return out;
  }

 private:
  struct Measured {
    std::unique_ptr<PresetFabric> fabric;       // a preset: constant-delay links
    std::unique_ptr<ComposedFabric> composed;   // composed Lingyun ports
    std::unique_ptr<GpuInitiator> gpu;
    std::vector<std::unique_ptr<GpuInitiator>> idle;
  };
  struct StageNs {
    std::string name;
    double ns;
    // measured | configured | derived (from codeword size and lane rate) | residual (the measured
    // load minus every other stage)
    std::string provenance;
  };
  static std::string name(const Measured& m) { return m.composed ? m.composed->name : m.fabric->name; }
  static Cycle beats(const PresetFabric& f, std::uint32_t payload) {
    return (olink::frame_bytes(payload) + f.width - 1) / f.width - 1;
  }
  // The loads measured: all but the first (the links' bring-up).
  static std::size_t measured(const Measured& m) { return std::max<std::size_t>(m.gpu->results().size(), 1) - 1; }
  double mean_load(const Measured& m) const {
    const auto& all = m.gpu->results();
    double sum = 0;
    for (std::size_t i = 1; i < all.size(); ++i) sum += to_ns(from_sc_time(all[i].latency));
    return measured(m) ? sum / static_cast<double>(measured(m)) : 0;
  }
  static double path_ns(const ComposedFabric& f, int dir, int stage) {
    return f.frames[dir] ? to_ns(f.path[dir][stage]) / static_cast<double>(f.frames[dir]) : 0;
  }
  static double sum_path(const ComposedFabric& f, int dir) {
    double sum = 0;
    for (int st = lingyun::kStageMacTx; st < lingyun::kStages; ++st) sum += path_ns(f, dir, st);
    return sum;
  }
  // The stages of a load, in order, in ns.
  std::vector<StageNs> breakdown(const Measured& m) const {
    std::vector<StageNs> out;
    if (m.composed) {
      const ComposedFabric& f = *m.composed;
      const double ns = to_ns(f.period);
      const Cycle data = (bytes_ + f.ep.width - 1) / f.ep.width;
      double sum = 0;
      const auto add = [&](std::string n, double v, const char* p) {
        out.push_back({std::move(n), v, p});
        sum += v;
      };
      add("gpu_egress", f.ep.egress * ns, "configured");
      for (int st = lingyun::kStageMacTx; st < lingyun::kStages; ++st)
        add(std::string("request.") + lingyun::stage_name(static_cast<Stage>(st)), path_ns(f, 0, st),
            lingyun::stage_provenance(static_cast<Stage>(st)));
      add("gpu_ingress_target", f.ep.ingress * ns, "configured");
      add("memory", (f.ep.memory + data) * ns, "configured");
      add("gpu_egress_target", f.ep.egress * ns, "configured");
      for (int st = lingyun::kStageMacTx; st < lingyun::kStages; ++st)
        add(std::string("response.") + lingyun::stage_name(static_cast<Stage>(st)), path_ns(f, 1, st),
            lingyun::stage_provenance(static_cast<Stage>(st)));
      add("gpu_ingress", f.ep.ingress * ns, "configured");
      // The rest: the clock edge a load starts on, and the NICs waiting for a frame's tail.
      // Not a stage anything measured: what is left of the measured load, so the stages add up
      // to it by construction.
      out.push_back({"endpoint_other", measured(m) == 0 ? 0.0 : mean_load(m) - sum, "residual"});
      return out;
    }
    const double ns = to_ns(m.fabric->period);
    for (const auto& [n, cycles] : preset_stages(*m.fabric)) out.push_back({n, cycles * ns, "configured"});
    return out;
  }
  // A preset fabric's stages of a load, in cycles.
  std::vector<std::pair<const char*, Cycle>> preset_stages(const PresetFabric& f) const {
    const Cycle data = (bytes_ + f.width - 1) / f.width;
    return {{"entry", 1},
            {"gpu_egress", f.egress},
            {"links_request", f.path_link_cycles()},
            {"switch_request", f.path_switches * f.switch_cycles()},
            {"uplink_request", f.uplink},
            {"switch_down_request", f.uplink ? f.switch_cycles() : 0},
            {"frame_tail_request", beats(f, 0)},
            {"gpu_ingress_target", f.ingress},
            {"memory", f.memory + data},
            {"gpu_egress_target", f.egress},
            {"links_response", f.path_link_cycles()},
            {"switch_response", f.path_switches * f.switch_cycles()},
            {"uplink_response", f.uplink},
            {"switch_down_response", f.uplink ? f.switch_cycles() : 0},
            {"frame_tail_response", beats(f, bytes_)},
            {"gpu_ingress", f.ingress}};
  }
  Cycle total(const PresetFabric& f) const {
    Cycle t = 0;
    for (const auto& st : preset_stages(f)) t += st.second;
    return t;
  }
  // GPU 0's NIC to GPU 1's NIC, the NIC pipelines included.
  double one_way(const Measured& m) const {
    if (m.composed) {
      const ComposedFabric& f = *m.composed;
      return (f.ep.egress + f.ep.ingress) * to_ns(f.period) + sum_path(f, 0);
    }
    const PresetFabric& f = *m.fabric;
    const Cycle switches = f.uplink ? 2 * f.switch_cycles() + f.uplink : f.path_switches * f.switch_cycles();
    return to_ns(f.period) * static_cast<double>(f.egress + f.path_link_cycles() + switches + beats(f, 0) + f.ingress);
  }

  std::uint32_t bytes_ = 64;
  int loads_ = 20;
  PacketPool pool_;
  std::vector<Measured> runs_;
  std::string summary_line_;
};

}  // namespace

XY_TESTBENCH(OlinkLatency, 500, "olink-latency",
             "GPU-to-GPU remote load through one switch, per-stage breakdown for four fabrics (claim C1)")

}  // namespace xy::olink_tb
