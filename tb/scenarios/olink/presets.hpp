// The OLink scenarios' fabric presets and the cycle-level fabric built from one: a preset gives a
// fabric's stages in ns and a GPU's bandwidth into it, Stages those in cycles of its clock as
// configured (olink.<preset>.*), and a PresetFabric is N GPUs on one switch over constant-delay
// links.
//
// The two comparators are presets from public figures (docs/olink.md): NVLink-class gives each
// GPU 450 GB/s each way (3600 Gb/s; NVLink 4's 900 GB/s counts both directions). In the PCIe
// fabric every GPU has its own Gen5 x16 port (512 Gb/s, 64 GB/s each way) on a PCIe switch, but
// the switch does not join the GPUs itself: every frame goes up its one uplink (Gen5 x16 too) to
// the root complex and back down (claim C11's mechanism: the GPUs behind a PCIe switch share its
// uplink). In the cycle-level fabric that is the switch's two directions as two switches: the up
// one takes every GPU's frames to its one uplink port, which a channel of `uplink_ns` (the links
// there and back and the root's turnaround) brings to the down one, which sends them to their
// GPUs. All of the GPUs' traffic crosses that one 512 Gb/s port, each direction of the uplink
// carrying all of it once, so in an all-to-all N GPUs get about 1/N of it each. The fast fabric
// books the same uplink on one calendar (tlm/olink/fast_fabric.hpp).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hw/switch/switch.hpp"
#include "kernel/clock_domain.hpp"
#include "sys/lingyun/topology.hpp"
#include "tb/lib/scenario.hpp"
#include "tlm/olink/endpoint.hpp"
#include "tlm/olink/fast_fabric.hpp"

namespace xy::olink_tb {

// The stages of one fabric, in ns, and a GPU's bandwidth into it (estimates from public figures:
// see docs/olink.md). Each clock makes a 64-byte datapath, so that frames use whole beats with
// little padding (the switch forwards whole beats). The GPU's own stages are not a fabric's: see
// GpuSide.
struct Preset {
  const char* name;
  double clock_mhz;
  double gpu_gbps;         // one GPU's injection bandwidth each way (its ports together)
  double dma_egress, dma_ingress;  // > 0: the GPUs reach the fabric through DMA engines of these
                                   // stages (PCIe); 0: through their own controller (GpuSide)
  double link;             // one link: SerDes, FEC, MAC/LLR at both ends, and 1 m of cable
  double switch_core;      // the switch from parser to egress (its ports' PHY is in `link`)
  double uplink;           // 0: the switch joins the GPUs; > 0: every frame goes up one uplink all
                           // GPUs share and back (ns: the links there and back, the root's turnaround)
};

// The GPU's side of every fabric, declared once (olink.gpu.*) so that the fabrics are compared
// with the same GPU: the memory a remote access reaches (HBM), and the GPU's fabric controller
// (transaction to frame, frame to transaction), which OLink and NVLink-class alike put on the GPU.
// A preset with DMA engines (PCIe) has its own instead (olink.<preset>.egress_ns, ingress_ns).
struct GpuSide {
  double egress_ns, ingress_ns, memory_ns;
  static GpuSide declare(const Preset& pr, Config& c);
};
// NVLink-class: 450 GB/s each way per GPU (NVLink 4: 18 links of 25 GB/s each way; the 900 GB/s
// quoted is both ways), 64 bytes a cycle at 7031.25 MHz. PCIe: a Gen5 x16 port per GPU, 32 GT/s
// x 16 = 512 Gb/s each way (64 GB/s; 63 after 128b/130b, not modelled: the frames here are
// OLink's), and the switch's one Gen5 x16 uplink, 60 ns of link each way and 150 ns of root
// complex turnaround.
inline constexpr Preset kPresets[] = {
    {"olink-rs544", 6250, 3200, 0, 0, 128, 68, 0},
    {"olink-rs272", 6250, 3200, 0, 0, 97, 68, 0},
    {"nvlink-class", 7031.25, 3600, 0, 0, 30, 40, 0},
    {"pcie-switch", 1000, 512, 300, 300, 60, 150, 60 + 150 + 60},
};

// The way from GPU 0 to GPU 1 a two-GPU preset fabric takes, when it follows another fabric's
// (olink-latency's NVLink-class follows the OLink fabric's topology): the cable of each link on
// it, GPU 0's first; one switch between each two links.
struct PresetPath {
  std::vector<double> cable_m;
  int switches() const { return static_cast<int>(cable_m.size()) - 1; }
  // GPU `from`'s first link, then the first port of each switch's route toward GPU `to`.
  static PresetPath between(const lingyun::Topology& t, int from, int to);
};

// A preset's stages in cycles of its clock, as configured (olink.<preset>.*), for N GPUs.
struct Stages {
  std::string name;
  Time period;
  Cycle egress, ingress, link, memory;
  Cycle uplink = 0;  // 0: no shared uplink; else the uplink from the switch and back, cycles
  std::uint32_t width;
  sw::SwitchParams sp;
  // GPU 0 to GPU 1: each link's cycles and the switches between them (one switch, two links of
  // `link`, unless the fabric follows a PresetPath).
  std::vector<Cycle> path_links;
  int path_switches = 1;
  Cycle path_link_cycles() const {
    Cycle sum = 0;
    for (Cycle l : path_links) sum += l;
    return sum;
  }

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
    fp.uplink = uplink;
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

// One cycle-level fabric of N GPUs on one switch. With a shared uplink the switch is two: `sw`
// takes the GPUs' frames up to its uplink port, `down` brings them from the uplink to the GPUs.
struct PresetFabric : Stages {
  std::unique_ptr<ClockDomain> domain;
  std::vector<std::unique_ptr<Channel<Packet*>>> channels;
  std::unique_ptr<sw::Switch> sw, down;
  std::vector<std::unique_ptr<sw::Switch>> chain;  // a PresetPath's switches after `sw`
  std::vector<std::unique_ptr<olink::OlinkEndpoint>> endpoints;

  void check_buffer_accounting() const {
    sw->check_buffer_accounting();
    if (down) down->check_buffer_accounting();
    for (const auto& s : chain) s->check_buffer_accounting();
  }
};

// Declares a preset's parameters (olink.<preset>.*) and returns its stages for `gpus` GPUs.
Stages declare_stages(const Preset& pr, int gpus, const sw::SwitchParams& base, Config& c);

// What declare_stages takes from the preset, not from switch.*: the switch's ports, their rate, its
// clock and its latency (olink.<preset>.switch_ns, split over the stages in a fixed ratio that no
// figure of a run shows). A scenario whose every switch is a preset's fixes those keys.
void fix_preset_switch_keys(Config& c, const std::string& owner);

// Declares a preset's parameters and builds its cycle-level fabric of `gpus` GPUs, named after
// the preset unless `name` is given; with `data` false the GPUs' memories keep nothing (timing only).
// With a `path` (two GPUs, no uplink), a chain of its switches over its cables: each link the
// preset's link_ns, which holds 1 m of cable, plus 5 ns for every metre more.
std::unique_ptr<PresetFabric> make_preset_fabric(const Preset& pr, int gpus, const sw::SwitchParams& base,
                                                PacketPool& pool, RunContext& ctx, const std::string& name = "", bool data = true,
                                                const PresetPath* path = nullptr);

}  // namespace xy::olink_tb
