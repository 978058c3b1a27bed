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
#include "tb/lib/scenario.hpp"
#include "tlm/olink/endpoint.hpp"
#include "tlm/olink/fast_fabric.hpp"

namespace xy::olink_tb {

// The stages of one fabric, in ns, and a GPU's bandwidth into it (estimates from public figures:
// see docs/olink.md). Each clock makes a 64-byte datapath, so that frames use whole beats with
// little padding (the switch forwards whole beats).
struct Preset {
  const char* name;
  double clock_mhz;
  double gpu_gbps;         // one GPU's injection bandwidth each way (its ports together)
  double egress, ingress;  // the GPU's NIC: packetise, depacketise
  double link;             // one link: SerDes, FEC, MAC/LLR at both ends, and the cable
  double switch_core;      // the switch from parser to egress (its ports' PHY is in `link`)
  double memory;           // HBM at the target
  double uplink;           // 0: the switch joins the GPUs; > 0: every frame goes up one uplink all
                           // GPUs share and back (ns: the links there and back, the root's turnaround)
};
// NVLink-class: 450 GB/s each way per GPU (NVLink 4: 18 links of 25 GB/s each way; the 900 GB/s
// quoted is both ways), 64 bytes a cycle at 7031.25 MHz. PCIe: a Gen5 x16 port per GPU, 32 GT/s
// x 16 = 512 Gb/s each way (64 GB/s; 63 after 128b/130b, not modelled: the frames here are
// OLink's), and the switch's one Gen5 x16 uplink, 60 ns of link each way and 150 ns of root
// complex turnaround.
inline constexpr Preset kPresets[] = {
    {"olink-rs544", 6250, 3200, 100, 100, 128, 68, 200, 0},
    {"olink-rs272", 6250, 3200, 100, 100, 97, 68, 200, 0},
    {"nvlink-class", 7031.25, 3600, 20, 20, 30, 40, 120, 0},
    {"pcie-switch", 1000, 512, 300, 300, 60, 150, 200, 60 + 150 + 60},
};

// A preset's stages in cycles of its clock, as configured (olink.<preset>.*), for N GPUs.
struct Stages {
  std::string name;
  Time period;
  Cycle egress, ingress, link, memory;
  Cycle uplink = 0;  // 0: no shared uplink; else the uplink from the switch and back, cycles
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
  std::vector<std::unique_ptr<olink::OlinkEndpoint>> endpoints;

  void check_buffer_accounting() const {
    sw->check_buffer_accounting();
    if (down) down->check_buffer_accounting();
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
std::unique_ptr<PresetFabric> make_preset_fabric(const Preset& pr, int gpus, const sw::SwitchParams& base,
                                                PacketPool& pool, RunContext& ctx, const std::string& name = "", bool data = true);

}  // namespace xy::olink_tb
