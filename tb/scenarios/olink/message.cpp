// olink-message: GPU 0 writes a message of `message.bytes` into the last GPU's memory through
// composed Lingyun ports, `message.count` times, each when the last is acknowledged (an idle
// fabric every time), after one more that is not measured. Per message, measured from
// timestamps: the network's time, from its first frame onto GPU 0's line to its last frame off
// the other GPU's line, and the GPU-to-GPU time, from the write handed to GPU 0's NIC to the
// other NIC handing its last Store to memory. A sweep over message.bytes gives the points that
// `xysim export` fits (scripts/sweeps/olink-message-size.yaml, docs/exports.md).
#include <algorithm>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "tb/lib/figure.hpp"
#include "tb/lib/gpu.hpp"
#include "tb/lib/memory.hpp"
#include "tb/scenarios/olink/composed.hpp"
#include "tb/scenarios/olink/presets.hpp"

namespace xy::olink_tb {
namespace {

using olink::Access;
using olink::GpuInitiator;

class OlinkMessage : public Testbench {
 public:
  explicit OlinkMessage(RunContext& ctx) {
    Config& c = ctx.config;
    bytes_ = static_cast<std::uint32_t>(c.integer("message.bytes", 65536, "bytes", 8, 1 << 20,
                                                  "bytes per message: one Store up to 256, above a bulk write of 4 KiB Stores"));
    count_ = static_cast<int>(c.integer("message.count", 4, "messages", 1, 100000, "messages measured, one after the other (after one that is not)"));
    const std::string fabric = c.choice("message.fabric", "olink-rs544", {"olink-rs544", "olink-rs272"},
                                        "the OLink preset (NIC stages, FEC) on composed ports");
    const sw::SwitchParams base = sw::SwitchParams::declare(c, "switch");
    const lingyun::Topology topology = *lingyun::Topology::declare(c, 2);
    const lingyun::PortParams port = lingyun::PortParams::declare(c, base.vcs);
    for (const char* key : {"port.fec", "port.interleave", "port.none.encoder_ns", "port.none.decoder_ns"})
      c.fix(key, "olink-message, whose OLink preset carries its FEC (message.fabric)");
    lingyun::fix_switch_keys_of_composed_ports(c, "olink-message");
    // One message at a time from one GPU: a switch's output takes one flow at its line rate, so no
    // queue forms for an arbiter, a faster crossbar, the buffer's sharing or ECN to act on.
    for (const char* key : {"switch.arbiter", "switch.iterations", "switch.speedup", "switch.cell_bytes",
                            "switch.dt_alpha", "switch.dwrr_quantum_bytes", "switch.ecn.on", "switch.ecn.kmin_bytes",
                            "switch.ecn.kmax_bytes", "switch.ecn.pmax"})
      c.fix(key, "olink-message, which sends one message at a time from one GPU: no queue forms");
    const Preset& pr = *std::find_if(std::begin(kPresets), std::end(kPresets), [&](const Preset& p) { return fabric == p.name; });
    // A GPU on every endpoint, each a SystemC thread with a stack of its own: more than the
    // process may map end in SystemC's E518, found here rather than after the build. (Their
    // address space is held against ulimit -v after the build, by the run.)
    const std::size_t gpus = topology.endpoints().size();
    check_thread_maps(gpus, fmt::format("{} makes {} GPUs, each a SystemC thread", topology.sized_by(), gpus));
    check_memory(composed_memory_bytes(topology, port, fabric.substr(6)), topology.sized_by(), ctx.force_memory);
    const olink::EndpointParams nic;  // its Store sizes
    const std::uint32_t store = bytes_ > nic.max_bytes ? nic.segment_bytes : bytes_;
    port.check_frame(olink::frame_bytes(store),
                     fmt::format("a message's Store frame ({} bytes of data, and {} of headers and FCS)", store,
                                 olink::kEthernetHeaderBytes + olink::kHeaderBytes + olink::kFcsBytes));
    f_ = make_composed(pr, fabric.substr(6), topology, base, port, pool_, ctx);
    line_gbps_ = port.line_gbps() * f_->fabric->ports_of(0);  // the sender's NIC sprays over its planes
    to_ = f_->ep.gpus - 1;
    f_->endpoints[to_]->on_served([this](Time t) { served_.push_back(t); });
    // One message more than measured, first: it waits for the links to come up (CDR lock, then
    // LLR's INIT exchange, about 190 ns at each end), which is bring-up, not the steady state.
    std::vector<Access> program(count_ + 1, {Access::kStore, olink::uva(to_, 0), bytes_, 0});
    // The first starts on a clock edge, as in olink-latency.
    gpus_.push_back(std::make_unique<GpuInitiator>("message_gpu0", program, to_sc_time(1000 * f_->period)));
    for (std::uint32_t g = 1; g < f_->ep.gpus; ++g)  // the others only serve, but their sockets must be bound
      gpus_.push_back(std::make_unique<GpuInitiator>(fmt::format("message_gpu{}", g).c_str(), std::vector<Access>{},
                                                     sc_core::SC_ZERO_TIME));
    for (std::uint32_t g = 0; g < f_->ep.gpus; ++g) gpus_[g]->socket.bind(f_->endpoints[g]->socket);
  }

  bool done() const override { return gpus_[0]->done(); }
  std::uint64_t progress() const override { return served_.size(); }
  std::string stall() const override { return olink_tb::stall(*f_); }
  std::string fault() const override { return olink_tb::fault(*f_); }
  double done_fraction() const override {
    return static_cast<double>(served_.size()) / static_cast<double>((count_ + 1) * frames_per_message());
  }
  Work work() const override {  // every message's bytes back to back at line rate
    const double bits = static_cast<double>(count_ + 1) * bytes_ * 8;
    return {static_cast<Time>(bits / line_gbps_ * kNs),
            fmt::format("message.count + 1 = {} messages of message.bytes = {} at {:.0f} Gb/s", count_ + 1,
                        bytes_, line_gbps_)};
  }
  void check() const override {
    for (const auto& r : gpus_[0]->results())
      if (r.status != tlm::TLM_OK_RESPONSE) throw CheckFailure("a message's write failed");
    const auto frames = gpus_[0]->results().size() * frames_per_message();
    if (served_.size() != frames || f_->arrivals[0].size() != frames)
      throw CheckFailure(fmt::format("{} messages of {} frames, but {} frames arrived and {} were served",
                                     gpus_[0]->results().size(), frames_per_message(), f_->arrivals[0].size(), served_.size()));
  }
  nlohmann::json summary() const override {
    std::vector<double> transfer, delivered, write;
    const auto& results = gpus_[0]->results();
    const auto& arrivals = f_->arrivals[0];  // in time order, as served_
    std::size_t a = 0, d = 0;                 // the first arrival and the first service not yet looked at
    for (std::size_t i = 1; i < results.size(); ++i) {  // the first is the start-up's
      // A message's frames all arrive before its write is acknowledged, so before the next is issued:
      // one pass over the arrivals and the services, a message's window at a time.
      const Time from = from_sc_time(results[i].issued), to = from + from_sc_time(results[i].latency);
      Time sent = ~Time{0}, arrived = 0, served = 0;
      for (; a < arrivals.size() && arrivals[a].second <= to; ++a)
        if (arrivals[a].second >= from) {
          sent = std::min(sent, arrivals[a].first);
          arrived = std::max(arrived, arrivals[a].second);
        }
      for (; d < served_.size() && served_[d] <= to; ++d)
        if (served_[d] >= from) served = std::max(served, served_[d]);
      transfer.push_back(to_ns(arrived - sent));
      delivered.push_back(to_ns(served - from));
      write.push_back(to_ns(to - from));
    }
    const auto mean = [](const std::vector<double>& v) {
      return v.empty() ? nlohmann::json(nullptr) : nlohmann::json(std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size()));
    };
    const auto spread = [](const std::vector<double>& v) {
      return v.empty() ? nlohmann::json(nullptr)
                       : nlohmann::json(*std::max_element(v.begin(), v.end()) - *std::min_element(v.begin(), v.end()));
    };
    const double ns = to_ns(f_->period);
    return {{"fabric", f_->name},
            {"topology", f_->fabric->summary()},
            {"gpus", f_->ep.gpus},
            {"from_gpu", 0},
            {"to_gpu", to_},
            {"message_bytes", bytes_},
            {"messages", transfer.size()},
            {"frames_per_message", frames_per_message()},
            {"transfer_ns", mean(transfer)},
            {"transfer_spread_ns", spread(transfer)},
            {"delivered_ns", mean(delivered)},
            {"write_ns", mean(write)},
            {"line_GBps", line_gbps_ / 8},
            {"nic_egress_ns", f_->ep.egress * ns},
            {"nic_ingress_ns", f_->ep.ingress * ns},
            {"provenance",
             {{"transfer_ns", "measured: first frame onto GPU 0's line to last frame off the other GPU's line, mean over messages"},
              {"transfer_spread_ns", "measured: largest less smallest transfer_ns"},
              {"delivered_ns", "measured: write handed to GPU 0's NIC to the other NIC handing its last Store to memory, mean"},
              {"write_ns", "measured: write handed to GPU 0's NIC to its last acknowledgement back, mean"},
              {"line_GBps", "derived: port lanes x lane rate less FEC and transcoding (configured port.*), times the "
                            "sender's ports (one per plane)"},
              {"nic_egress_ns", "configured: olink.gpu.egress_ns"},
              {"nic_ingress_ns", "configured: olink.gpu.ingress_ns"},
              {"message_bytes", "configured: message.bytes"}}}};
  }
  std::string report() const override {
    const nlohmann::json s = summary();
    const auto ns = [&](const char* key) { return figure(s[key], 1); };
    return fmt::format("  {} bytes from GPU 0 to GPU {} on {} ({}), {} messages of {} frames\n"
                       "  network, first frame on the line to last frame off it  {:>10} ns (spread {} ns)\n"
                       "  GPU to GPU, write to last Store handed to memory      {:>10} ns\n"
                       "  write to its last acknowledgement                     {:>10} ns\n",
                       bytes_, to_, f_->name, s["topology"].get<std::string>(), s["messages"].get<std::size_t>(),
                       frames_per_message(), ns("transfer_ns"), ns("transfer_spread_ns"), ns("delivered_ns"), ns("write_ns"));
  }

 private:
  std::size_t frames_per_message() const {
    return bytes_ > f_->ep.max_bytes ? (bytes_ + f_->ep.segment_bytes - 1) / f_->ep.segment_bytes : 1;
  }
  std::uint32_t bytes_ = 0, to_ = 1;
  int count_ = 1;
  double line_gbps_ = 0;
  PacketPool pool_;
  std::unique_ptr<ComposedFabric> f_;
  std::vector<std::unique_ptr<GpuInitiator>> gpus_;
  std::vector<Time> served_;  // at the receiving GPU: when each Store was handed to its memory
};

}  // namespace

XY_TESTBENCH(OlinkMessage, 530, "olink-message",
             "one message of message.bytes from GPU to GPU through composed OLink ports: network and GPU-to-GPU time")

}  // namespace xy::olink_tb
