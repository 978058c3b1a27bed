#include "sys/lingyun/port.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "rtl/link/cbfc_sender_twin.hpp"
#include "rtl/link/drop_in.hpp"
#include "rtl/link/llr_twins.hpp"

namespace xy::lingyun {

PortParams PortParams::declare(Config& c, int vcs) {
  PortParams p;
  p.phy = phy::PhyParams::declare(c, "port", 8, phy::PhyParams::Cable::kPerLink);  // cables: the topology's
  // The MAC and PCS pipelines, without FEC and SerDes. Defaults: the one MAC+PCS latency
  // published with its parts apart that we found, AMD's 40G/50G Ethernet subsystem (PG211,
  // "Latency", 50G MAC+PCS, low-latency design, no GT): TX 25.6 ns, RX 58.8 ns, at 390.625 MHz
  // 10 and 23 cycles. An 800G ASIC's are not published (docs/phy.md).
  const Time phy_period = p.phy.period();
  p.phy.mac_pcs_tx = cycles_for(from_ns(c.real("port.mac_pcs.tx_ns", 25.6, "ns", 0, 100000,
                                               "MAC, RS and PCS transmit pipeline, FEC apart (AMD PG211's 50G)")),
                                phy_period);
  p.phy.mac_pcs_rx = cycles_for(from_ns(c.real("port.mac_pcs.rx_ns", 58.8, "ns", 0, 100000,
                                               "PCS, RS and MAC receive pipeline, FEC apart (AMD PG211's 50G)")),
                                phy_period);
  p.llr = c.flag("port.llr", true, "LLR on every hop: frames with a bad FCS are replayed by the sender port");
  p.fc = link::declare_fc_mode(c, "port.fc", "cbfc", "link flow control of every port");
  p.llr_params = link::LlrParams::declare(c, phy_period);
  const link::LlrConfig& l = p.llr_params.config;
  if (p.llr_rtl()) {  // what the twins are built for; each link's replay buffer in reach_problem()
    link::LlrConfig k = l;
    k.replay_buffer_bytes = 64;
    rtl::check_llr_twins(k);
  }
  p.max_frame_bytes = static_cast<std::uint32_t>(c.integer("port.max_frame_bytes", 9216, "bytes", 64, 9216,
                                                           "largest frame the ports carry (sizes buffers)"));
  p.cbfc = link::CbfcParams::declare(c, vcs);
  if (p.cbfc.rtl && p.fc != link::FcMode::kCbfc)
    throw ConfigError(fmt::format("cbfc.impl = 'rtl' with port.fc = '{}': the twin is a CBFC engine; allowed with "
                                  "port.fc=cbfc only", link::fc_mode_name(p.fc)));
  if (p.cbfc.rtl) {  // every VC's buffer is the same size (for_link), so only the build parameters count
    link::CbfcConfig k = p.cbfc.config;
    k.buffer_credits.assign(vcs, 1);
    rtl::CbfcSenderTwin::check(k);
  }
  p.pfc = link::PfcConfig::declare(c, vcs, p.line_gbps());
  return p;
}

// A frame of `bytes` from one MAC to the other at zero load: serialisation (the line takes
// 5 bytes a lane a cycle, with 24 bytes of preamble, FCS and gap), encoder, path, two codeword
// groups (the frame's and the gathering at the RX), decoder.
Time PortParams::one_way(double cable_m, std::uint32_t bytes) const {
  phy::PhyParams q = phy;
  q.set_cable(cable_m);
  const Cycle frame = (bytes + 24 + 5 * q.lanes - 1) / (5 * q.lanes);
  return (frame + q.group_cycles() + q.fixed_cycles()) * q.period();
}

// The credit or ACK loop: a largest frame out, a control message back, the MACs and FIFOs at
// both ends (a few cycles each, counted as 20 ns).
Time PortParams::loop(double cable_m) const {
  return one_way(cable_m, max_frame_bytes) + one_way(cable_m, 64) + 20 * kNs;
}

std::uint64_t PortParams::replay_buffer_bytes(double cable_m) const {
  const Time t = loop(cable_m) + llr_params.config.ack_timer_cycles * phy.period();
  return static_cast<std::uint64_t>(std::ceil(line_gbps() / 8 * static_cast<double>(t) / kNs)) + 2ull * max_frame_bytes;
}

std::string PortParams::reach_problem(double cable_m) const {
  if (llr && !llr_params.replay_buffer_bytes && replay_buffer_bytes(cable_m) > llr_params.max_replay_buffer_bytes)
    return fmt::format("LLR over {} m needs a {:.2f} MB replay buffer (line rate x loop + 2 frames), above "
                       "llr.max_replay_buffer_bytes = {}",
                       cable_m, replay_buffer_bytes(cable_m) / 1e6, llr_params.max_replay_buffer_bytes);
  if (fc == link::FcMode::kCbfc) {
    const link::CbfcConfig& cb = cbfc.config;
    const std::uint64_t need = link::required_buffer_credits(cb, line_gbps(), loop(cable_m), max_frame_bytes);
    const std::uint32_t given = cbfc.buffer_credits;
    if (given ? need > given : 2 * need >= (std::uint64_t{1} << (cb.counter_bits - 1)))
      return fmt::format("CBFC over {} m needs {} credits of {} B per VC for the credit loop, {}", cable_m, need,
                         cb.credit_bytes,
                         given ? fmt::format("above cbfc.buffer_credits = {}", given) : "beyond what its counters can track");
  }
  if (fc == link::FcMode::kPfc) {
    const std::uint64_t need = link::required_headroom_bytes(line_gbps(), loop(cable_m), max_frame_bytes);
    if (need > pfc.headroom_bytes)
      return fmt::format("PFC over {} m needs {} B of headroom above XOFF (line rate x loop + 2 largest frames + a "
                         "pause frame), above pfc.headroom_bytes = {}",
                         cable_m, need, pfc.headroom_bytes);
  }
  if (llr && llr_rtl()) {
    link::LlrConfig k = llr_params.config;
    k.replay_buffer_bytes = replay_buffer_bytes(cable_m);
    try {
      rtl::check_llr_twins(k);
    } catch (const ConfigError& e) {
      return fmt::format("LLR over {} m needs a {} B replay buffer (line rate x loop + 2 frames), beyond the RTL "
                         "twins (llr.impl=rtl), whose check of this link's LLR says: {}; use llr.impl=model or a "
                         "shorter cable",
                         cable_m, k.replay_buffer_bytes, e.what());
    }
  }
  if (llr) {
    const Cycle nack_loop = cycles_for(loop(cable_m), phy.period());
    try {
      llr_params.check_timers(phy.period(), nack_loop + llr_params.config.ack_timer_cycles, nack_loop,
                                     fmt::format("a largest frame out and a control frame back over {} m", cable_m));
    } catch (const ConfigError& e) {
      return e.what();
    }
  }
  return "";
}

PortParams PortParams::for_link(double cable_m) const {
  PortParams p = *this;
  p.phy.set_cable(cable_m);
  if (p.otn) p.otn->km = cable_m / 1000;
  p.llr_params.config.replay_buffer_bytes = llr_params.replay_buffer_for(replay_buffer_bytes(cable_m));
  // Sized for the loop only where CBFC runs: a link without it keeps cbfc.* as declared (valid
  // at any length), not a buffer its counters cannot track.
  if (fc == link::FcMode::kCbfc) {
    const std::uint64_t need = link::required_buffer_credits(cbfc.config, line_gbps(), loop(cable_m), max_frame_bytes);
    p.cbfc.config.buffer_credits.assign(cbfc.config.vcs, cbfc.sized_for(need));
  }
  return p;
}

void PortParams::check_frame(std::uint32_t bytes, const std::string& what) const {
  if (bytes > max_frame_bytes)
    throw ConfigError(fmt::format("port.max_frame_bytes = {}: below {}, {} bytes; allowed: at least {}",
                                  max_frame_bytes, what, bytes, bytes));
}

// --- PortLink ---

struct PortLink::Side {
  std::unique_ptr<Channel<Packet*>> tx, rx;
  std::unique_ptr<Channel<link::FcMessage>> fc_out, fc_in;
  std::unique_ptr<link::PortFc> fc;
  std::unique_ptr<link::Mac> mac;
};

PortLink::PortLink(const std::string (&side_names)[2], const PortParams& params, double cable_m, Clock& phy_clock,
                   Clock& core0, Clock& core1, Stats& stats, std::uint64_t seed, PacketPool& pool)
    : name_(side_names[0] + " - " + side_names[1]), side_names_{side_names[0], side_names[1]},
      p_(params.for_link(cable_m)) {
  Clock* cores[2] = {&core0, &core1};
  const ChannelSpec phy_channel{1, 2, 1, 2};
  for (int s = 0; s < 2; ++s) {
    to_phy_[s] = std::make_unique<Channel<Packet*>>(side_names[s] + ".to_phy", phy_clock, phy_channel);
    from_phy_[s] = std::make_unique<Channel<Packet*>>(side_names[s] + ".from_phy", phy_clock, ChannelSpec{});
  }
  for (int s = 0; s < 2; ++s) {
    const std::string& side = side_names[s];
    auto& x = sides_[s] = std::make_unique<Side>();
    Clock& core = *cores[s];
    // Its credits are there to wake the feeder as the MAC takes frames; the gate keeps fifo_frames
    // in it, and the slack above covers frames a switch egress scheduled before it asked.
    x->tx = std::make_unique<Channel<Packet*>>(side + ".tx_fifo", core, phy_clock,
                                               ChannelSpec{});
    x->rx = std::make_unique<Channel<Packet*>>(side + ".rx_fifo", phy_clock, core, ChannelSpec{1, 0, 1, 2});
    x->fc_out = std::make_unique<Channel<link::FcMessage>>(side + ".fc_out", core, phy_clock, ChannelSpec{});
    x->fc_in = std::make_unique<Channel<link::FcMessage>>(side + ".fc_in", phy_clock, core, ChannelSpec{});
    const link::CbfcConfig cbfc = p_.cbfc.on_clock(core.period());
    x->fc = std::make_unique<link::PortFc>(side + ".fc", p_.fc, cbfc, p_.pfc, core, stats, *x->fc_out, *x->fc_in,
                                           link::PortFcOptions{link::CreditRelease::kDeparture, false, x->tx.get(),
                                                               p_.fifo_frames},
                                           rtl::credit_sender(p_.cbfc.rtl, cbfc, core));  // a twin keeps this side's clock
    core.attach(*x->fc);
    // Side s sends on PHY direction s and receives on direction 1 - s.
    // The LLR ends: the RTL twins with llr.impl=rtl (the transmitter's on the PHY clock), else the
    // models; without LLR the transmitter's model only lets frames through.
    const bool twins = p_.llr && p_.llr_rtl();
    link::LlrEnds ends{rtl::llr_transmitter(twins, p_.llr_params.config, phy_clock),
                       rtl::llr_receiver(twins, p_.llr_params.config)};
    x->mac = std::make_unique<link::Mac>(side + ".mac", link::MacConfig{p_.llr, p_.llr_params.config}, std::move(ends),
                                         *x->tx, *x->rx, x->fc_out.get(), x->fc_in.get(), *to_phy_[s], *from_phy_[1 - s], pool,
                                         stats);
    x->mac->set_stages({kStageMacTx, kStageCrossing});
    phy_clock.attach(*x->mac);
  }
  for (int s = 0; s < 2; ++s) {
    if (p_.otn) {  // its whole time in one stage: the line's cable
      otn_[s] = std::make_unique<otn::Line>(side_names[s] + ".otn", *p_.otn, phy_clock, stats, seed, *to_phy_[s],
                                            *from_phy_[s]);
      otn_[s]->set_stages(kStagePmaCable, kStageMacRx);
      to_phy_[s]->connect(sides_[s]->mac.get(), otn_[s].get());
      from_phy_[s]->connect(otn_[s].get(), sides_[1 - s]->mac.get());
      continue;
    }
    phy_[s] = std::make_unique<phy::PhyLink>(side_names[s] + ".phy", p_.phy, phy_clock, stats, seed,
                                              side_names[s] + ".phy", to_phy_[s].get(), from_phy_[s].get(), pool);
    phy_[s]->set_stages({kStageSerialize, kStageMacPcsTx, kStageFecEncode, kStagePmaCable, kStageFecAccumulate,
                         kStageFecDecode, kStageMacPcsRx, kStageMacRx});
    to_phy_[s]->connect(sides_[s]->mac.get(), &phy_[s]->tx_core());
    phy_[s]->take_late();
    from_phy_[s]->connect(&phy_[s]->rx_core(), sides_[1 - s]->mac.get());
  }
  for (int s = 0; s < 2; ++s) {
    Side& x = *sides_[s];
    x.fc_out->connect(x.fc.get(), x.mac.get());
    x.fc_in->connect(x.mac.get(), x.fc.get());
  }
}

PortLink::~PortLink() = default;

double PortLink::memory_bytes(const PortParams& params, double cable_m, double load) {
  const PortParams p = params.for_link(cable_m);
  // Both sides' MACs, LLR ends, flow control, FIFOs and counters, and their share of the results:
  // measured, peak RSS of switch-uniform on single, dual-plane and leaf-spine fabrics of 64 to
  // 1024 endpoints at 1 % load, less the PHYs' groups (within 7 % of every one of them).
  constexpr double kLinkBytes = 106e3;
  double bytes = kLinkBytes;
  if (p.otn) {
    // Frames on the fibre at `load`, each direction: a packet (about 300 bytes with its bytes owed)
    // for every frame of about 1000 bytes in flight.
    constexpr double kPacketShare = 0.3;
    return bytes + 2 * load * kPacketShare * p.line_gbps() / 8 * to_ns(p.otn->fibre());
  }
  bytes += 2 * phy::PhyLink::memory_bytes(p.phy);
  // At line rate, per side: LLR's replay buffer, 62 % full of frames (their packets and wire
  // bytes) on average, and 23.5 KB of frames on their way through the MAC and PHY. Measured at
  // load 1 against the same runs with port.llr=false; CBFC's buffers add nothing of their own
  // (port.fc=none holds as much: the frames they admit are the switch's). Taken in proportion
  // to the load.
  constexpr double kReplayShare = 0.62, kSideBytes = 23.5e3;
  const double replay = p.llr ? static_cast<double>(p.llr_params.config.replay_buffer_bytes) : 0;
  bytes += 2 * load * (kReplayShare * replay + kSideBytes);
  return bytes;
}

void PortLink::probe(Waves& waves) const {
  for (int s = 0; s < 2; ++s) {
    sides_[s]->mac->probe(waves);
    sides_[s]->fc->probe(waves);
    if (phy_[s]) phy_[s]->probe(waves);
  }
}

void PortLink::attach(int side, Core* feeder, Core* taker) {
  Side& x = *sides_[side];
  x.tx->connect(feeder, x.mac.get());
  x.rx->connect(x.mac.get(), taker);
  x.fc->set_upstream(feeder);
}

Channel<Packet*>& PortLink::tx(int side) { return *sides_[side]->tx; }
Channel<Packet*>& PortLink::rx(int side) { return *sides_[side]->rx; }
link::PortFc& PortLink::fc(int side) { return *sides_[side]->fc; }
const link::PortFc& PortLink::fc(int side) const { return *sides_[side]->fc; }
link::Mac& PortLink::mac(int side) { return *sides_[side]->mac; }
const link::Mac& PortLink::mac(int side) const { return *sides_[side]->mac; }
phy::PhyLink& PortLink::phy(int from_side) {
  if (!phy_[from_side]) throw std::logic_error(name_ + ": an OTN line, not a PHY");
  return *phy_[from_side];
}
const phy::PhyLink& PortLink::phy(int from_side) const { return const_cast<PortLink*>(this)->phy(from_side); }
const otn::Line& PortLink::otn_line(int from_side) const {
  if (!otn_[from_side]) throw std::logic_error(name_ + ": a PHY, not an OTN line");
  return *otn_[from_side];
}

std::uint64_t PortLink::codewords(int from_side) const {
  return otn() ? otn_line(from_side).counts().otu_frames.value() * otn::kCodewordsPerFrame : phy(from_side).codewords();
}
std::uint64_t PortLink::codewords_sent(int from_side) const {
  return otn() ? codewords(from_side) : phy(from_side).codewords_sent();
}
std::uint64_t PortLink::uncorrectable(int from_side) const {
  return otn() ? otn_line(from_side).counts().uncorrectable_codewords.value() : phy(from_side).uncorrectable();
}

Time PortLink::fixed_latency() const {
  if (otn()) return p_.otn->fibre() + 2 * otn::frame_period();
  return p_.phy.fixed_cycles() * p_.phy.period();
}

}  // namespace xy::lingyun
