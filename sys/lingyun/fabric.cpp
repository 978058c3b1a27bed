#include "sys/lingyun/fabric.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include <fmt/format.h>

#include "hw/link/flow_control.hpp"
#include "hw/switch/forwarding.hpp"

namespace xy::lingyun {
namespace {

// ECMP among a route's ports: the flow's CRC-32 5-tuple hash (endpoint ids as addresses, the
// packet's entropy as the UDP source port, RoCEv2's destination port).
int ecmp(const std::vector<int>& ports, std::uint32_t src, std::uint32_t dst, std::uint16_t entropy) {
  const std::uint32_t h =
      sw::hash_crc32({0x0A000000u + src, 0x0A000000u + dst, entropy, sw::kRoceV2UdpPort, sw::kIpProtoUdp});
  return ports[h % ports.size()];
}

}  // namespace

void fix_switch_keys_of_composed_ports(Config& c, const std::string& scenario) {
  c.fix("switch.ports", scenario + ", whose topology gives each switch its ports");
  for (const char* key : {"switch.lat.rx_mac", "switch.lat.tx_mac"})
    c.fix(key, scenario + ", whose composed ports model the PHY and MAC (port.*, llr.*)");
}

PortParams link_ports(const PortParams& common, const Topology::Link& l) {
  PortParams pp = common;
  if (l.fec) pp.phy = common.phy.with_fec(*l.fec);
  if (l.llr) pp.llr = *l.llr;
  if (l.fc) pp.fc = link::fc_mode(*l.fc);
  if (l.otn) {  // no LLR, and no flow control unless the link sets it
    pp.otn = *l.otn;
    if (!pp.otn->channels) pp.otn->channels = pp.phy.lanes;
    if (!l.llr) pp.llr = false;
    if (!l.fc) pp.fc = link::FcMode::kNone;
    if (l.dark_until > l.dark_from)
      throw ConfigError(fmt::format("{}: a planted failure on an OTN line: not modelled; allowed on a PHY's links",
                                    l.where));
  }
  if (l.dark_until > l.dark_from) {
    const Time period = pp.phy.period();
    pp.phy.down_from = l.dark_from / period;
    pp.phy.down_until = l.dark_until == Topology::Link::kForever
                            ? phy::PhyParams::kForever
                            : (l.dark_until + period - 1) / period + pp.phy.cdr_lock_cycles;
  }
  if (pp.fc == link::FcMode::kPfc) {
    pp.pfc.validate("pfc");
    pp.pfc.check_holds_frame(pp.max_frame_bytes, "port.max_frame_bytes");
  }
  return pp;
}

Fabric::Fabric(const std::string& prefix, const Topology& topology, const sw::SwitchParams& switch_params,
               const PortParams& port_params, Clock& core, Clock& phy, Clock& endpoint_clock, Stats& stats,
               std::uint64_t seed, PacketPool& pool, bool spray)
    : t_(topology), routes_(t_), prefix_(prefix), port_gbps_(port_params.line_gbps()) {
  if (std::abs(switch_params.port_gbps - port_params.line_gbps()) > 1e-6)
    throw ConfigError(fmt::format("switch.port_gbps = {} but the ports carry {} Gb/s (port.lanes = {} x {} Gb/s less "
                                  "FEC and transcoding): set them to agree",
                                  switch_params.port_gbps, port_params.line_gbps(), port_params.phy.lanes,
                                  port_params.phy.lane_gbps));
  std::vector<PortParams> link_params;
  for (const auto& l : t_.links) {
    const PortParams pp = link_ports(port_params, l);
    if (std::string why = pp.reach_problem(l.cable_m); !why.empty())
      throw ConfigError(fmt::format("{}: link {} - {}: {}", l.where, t_.nodes[l.a].name, t_.nodes[l.b].name, why));
    link_params.push_back(pp);
  }
  const std::vector<int> ends = t_.endpoints();
  std::vector<int> endpoint_of(t_.nodes.size(), -1);
  for (std::size_t e = 0; e < ends.size(); ++e) endpoint_of[ends[e]] = static_cast<int>(e);
  endpoint_ports_.resize(ends.size());
  nlohmann::json links = nlohmann::json::array();
  std::vector<nlohmann::json> endpoint_links(ends.size(), nlohmann::json::array());
  // Links first (their channels), then each switch on its ports' channels.
  std::vector<std::vector<std::pair<PortLink*, int>>> at_switch(t_.nodes.size());
  for (std::size_t i = 0; i < t_.links.size(); ++i) {
    const auto& l = t_.links[i];
    const int node[2] = {l.a, l.b};
    std::string side_name[2];
    Clock* clocks[2];
    for (int s = 0; s < 2; ++s) {
      const auto& n = t_.nodes[node[s]];
      const int port = n.is_switch ? routes_.port_of[i][s] : static_cast<int>(endpoint_ports_[endpoint_of[node[s]]].size());
      side_name[s] = fmt::format("{}.{}.port{}", prefix, n.name, port);
      clocks[s] = n.is_switch ? &core : &endpoint_clock;
      if (!n.is_switch) {
        endpoint_ports_[endpoint_of[node[s]]].push_back({nullptr, s});
        endpoint_links[endpoint_of[node[s]]].push_back(i);
      }
    }
    const PortParams& pp = link_params[i];
    links.push_back({{"a", l.a},
                     {"b", l.b},
                     {"cable_m", l.cable_m},
                     {"where", l.where},
                     {"fec", pp.phy.fec},
                     {"llr", pp.llr},
                     {"fc", link::fc_mode_name(pp.fc)},
                     {"ports", {side_name[0], side_name[1]}}});
    if (pp.otn)
      links.back()["otn"] = {{"wavelengths", pp.otn->channels},       {"ber", pp.otn->ber},
                             {"fibre_ns_per_km", pp.otn->fibre_ns_per_km}, {"decoder_ns", pp.otn->decoder_ns},
                             {"client_ppm", pp.otn->client_ppm},         {"server_ppm", pp.otn->server_ppm},
                             {"codec", pp.otn->exact ? "exact" : "fast"}};
    try {  // what its blocks refuse of this link's parameters, naming the link
      links_.push_back(std::make_unique<PortLink>(side_name, link_params[i], l.cable_m, phy, *clocks[0], *clocks[1],
                                                  stats, seed, pool));
    } catch (const ConfigError& e) {
      throw ConfigError(fmt::format("{}: link {} - {}: {}", l.where, t_.nodes[l.a].name, t_.nodes[l.b].name, e.what()));
    }
    for (int s = 0; s < 2; ++s) {
      if (t_.nodes[node[s]].is_switch) at_switch[node[s]].push_back({links_.back().get(), s});
      else endpoint_ports_[endpoint_of[node[s]]].back().link = links_.back().get();
    }
  }
  for (int n : t_.switches()) {
    sw::SwitchParams sp = switch_params;
    sp.ports = t_.nodes[n].ports;
    if (t_.nodes[n].buffer_mib > 0) {  // its own
      sp.buffer_mib = t_.nodes[n].buffer_mib;
      sp.buffer_cells = static_cast<std::uint64_t>(sp.buffer_mib * (1 << 20) / sp.cell_bytes);
    }
    sp.lat.rx_mac = sp.lat.tx_mac = 0;  // the ports' MACs are modelled, not a switch stage
    // Lossless ports promise not to drop: the shared buffer must hold all their credits or PFC
    // buffers let in, frames from Ethernet's least (64 B) to the ports' largest.
    std::vector<std::uint64_t> lossless;
    bool cbfc = false, pfc = false;
    for (auto [link, side] : at_switch[n]) {
      const PortParams& lp = link->params();
      lossless.push_back(link::lossless_cells(lp.fc, lp.cbfc.config, lp.pfc, sp.cell_bytes, 64, lp.max_frame_bytes));
      (lp.fc == link::FcMode::kCbfc ? cbfc : pfc) |= lp.fc != link::FcMode::kNone;
    }
    sp.check_lossless(lossless, fmt::format("{}.{}", prefix, t_.nodes[n].name),
                      cbfc && pfc ? "CBFC credits and PFC buffers" : cbfc ? "CBFC credits" : "PFC buffers");
    std::vector<Channel<Packet*>*> in(sp.ports, nullptr), out(sp.ports, nullptr);
    for (int p = 0; p < static_cast<int>(at_switch[n].size()); ++p) {
      auto [link, side] = at_switch[n][p];
      in[p] = &link->rx(side);
      out[p] = &link->tx(side);
    }
    const auto* next = &routes_.next[n];
    sw::RouteFn route = [next, spray](const Packet& pk) {
      const auto& set = (*next)[pk.dst];
      if (set.size() == 1) return set[0];
      // Spraying: every packet its own choice; else ECMP.
      return spray ? set[static_cast<std::uint32_t>(pk.id * 0x9E3779B1u) % set.size()]
                   : ecmp(set, pk.src, pk.dst, pk.entropy);
    };
    switches_.push_back(std::make_unique<sw::Switch>(fmt::format("{}.{}", prefix, t_.nodes[n].name), sp, core, stats,
                                                     in, out, route, seed));
    sw::Switch& s = *switches_.back();
    s.set_stages({kStageSwitch, kStageCrossing});
    for (int p = 0; p < static_cast<int>(at_switch[n].size()); ++p) {
      auto [link, side] = at_switch[n][p];
      link->attach(side, &s.egress_core(p), &s.ingress_core(p));
      s.set_egress_gate(p, &link->fc(side));
      s.set_ingress_monitor(p, &link->fc(side));
    }
  }
  nlohmann::json nodes = nlohmann::json::array();
  for (std::size_t n = 0; n < t_.nodes.size(); ++n) {
    const auto& node = t_.nodes[n];
    nodes.push_back({{"name", node.name}, {"switch", node.is_switch}, {"ports", node.ports}});
    if (node.buffer_mib > 0) nodes.back()["buffer_mib"] = node.buffer_mib;
    if (!node.is_switch) nodes.back()["links"] = endpoint_links[endpoint_of[n]];
  }
  description_ = {{"prefix", prefix}, {"topology", t_.name}, {"nodes", nodes}, {"links", links}};
  last_delivery_.resize(links_.size());
}

Fabric::~Fabric() = default;

double Fabric::memory_bytes(const Topology& t, const PortParams& port_params, double load) {
  double bytes = 0;
  std::vector<int> links_at(t.nodes.size(), 0);
  for (const auto& l : t.links) {
    bytes += PortLink::memory_bytes(link_ports(port_params, l), l.cable_m, load);
    ++links_at[l.a];
    ++links_at[l.b];
  }
  // Routes: a set of next ports per switch and endpoint, each its own allocation, at most every
  // port the switch has a link on (ECMP over all of them).
  const double ends = static_cast<double>(t.endpoints().size());
  for (int s : t.switches())
    bytes += sw::Switch::memory_bytes(t.nodes[s].ports) +
             ends * (sizeof(std::vector<int>) + 16 + links_at[s] * sizeof(int));
  return bytes;
}

int Fabric::route(int sw, std::uint32_t src, std::uint32_t dst, std::uint16_t entropy) const {
  const auto& set = routes_.next.at(static_cast<std::size_t>(sw)).at(dst);
  return set.size() == 1 ? set[0] : ecmp(set, src, dst, entropy);
}

link::PortAttachment Fabric::port(int e, int k) {
  const End x = endpoint_ports_[e][k];
  link::PortFc& fc = x.link->fc(x.side);
  link::PortAttachment a(x.link->tx(x.side), x.link->rx(x.side), &fc, &fc,
                         [x](Core& endpoint) { x.link->attach(x.side, &endpoint, &endpoint); });
  // The endpoint's PCS is locked while the PHY towards it is: after its first CDR lock, outside
  // a flap or a planted failure.
  const phy::PhyParams& in = x.link->phy(1 - x.side).params();
  a.watch_line({[&in](Time t) { return t >= in.cdr_lock_cycles * in.period() && !in.flapping_at(t); },
                [&in](Time t) {
                  Time next = link::PortAttachment::Line::kNoChange;
                  for (const Cycle c : {in.cdr_lock_cycles, in.down_from, in.down_until})
                    if (c < phy::PhyParams::kForever && c * in.period() > t && (c != in.down_from || in.flaps()))
                      next = std::min(next, c * in.period());
                  return next;
                }});
  return a;
}

void Fabric::probe(Waves& waves, Clock& core, Clock& phy) const {
  for (const auto& l : links_) l->probe(waves);
  for (const auto& s : switches_) s->probe(waves);
  waves.watch(core);
  waves.watch(phy);
}

void Fabric::capture(const std::function<link::PcapWriter*(const std::string& port)>& writer_for) {
  for (auto& l : links_)
    for (int side = 0; side < 2; ++side) l->mac(side).capture_to(writer_for(l->side_name(side)));
}

std::string Fabric::summary() const {
  int ports = 0;
  for (int n : t_.switches()) ports += t_.nodes[n].ports;
  return fmt::format("topology {}: {} switches ({} ports), {} endpoints, {} links, bisection {:.1f} Tb/s, up to {} "
                     "switch hops",
                     t_.name, switches_.size(), ports, endpoint_ports_.size(), links_.size(),
                     t_.bisection_links() * port_gbps_ / 1000, routes_.max_switch_hops);
}

std::string Fabric::overflow() const {
  for (const auto& l : links_)
    for (int s = 0; s < 2; ++s) {
      if (std::string o = l->fc(s).overflow(); !o.empty()) return o;
      if (std::string o = l->fc(s).counted_beyond(l->fc(1 - s)); !o.empty()) return o;
    }
  return "";
}

std::string Fabric::stall() const {
  std::string down;
  for (const auto& l : links_)
    for (int s = 0; s < 2; ++s) {
      const link::LlrTransmitter& tx = l->mac(s).llr_tx();
      if (tx.state() != link::LlrTxState::kInit && tx.state() != link::LlrTxState::kFlush) continue;
      down += fmt::format("{}{} (its LLR TX in {}, {} frames flushed; {} of {} codewords it sent uncorrectable)",
                          down.empty() ? "" : ", ", l->side_name(s), link::to_string(tx.state()), tx.flushed_frames(),
                          l->uncorrectable(s), l->codewords_sent(s));
    }
  if (!down.empty()) return "link down at " + down;
  if (std::string cycle = deadlock(); !cycle.empty()) return "deadlock: a cycle of held ports, " + cycle;
  return credits_held();
}

std::string Fabric::deadlock() const {
  // Nodes of the wait-for graph: (link, sending side, VC), held.
  const int vcs = links_.empty() ? 0 : links_.front()->fc(0).vcs();
  const auto id = [vcs](std::size_t link, int side, int vc) { return (static_cast<int>(link) * 2 + side) * vcs + vc; };
  std::vector<int> switch_of(t_.nodes.size(), -1);  // node -> index in switches_
  for (std::size_t n = 0, k = 0; n < t_.nodes.size(); ++n)
    if (t_.nodes[n].is_switch) switch_of[n] = static_cast<int>(k++);
  std::map<std::pair<int, int>, std::pair<std::size_t, int>> sender_at;  // (node, port) -> (link, side)
  for (std::size_t i = 0; i < links_.size(); ++i)
    for (int side = 0; side < 2; ++side) {
      const int node = side == 0 ? t_.links[i].a : t_.links[i].b;
      if (t_.nodes[node].is_switch) sender_at[{node, routes_.port_of[i][side]}] = {i, side};
    }
  const int nodes = static_cast<int>(links_.size()) * 2 * vcs;
  std::vector<std::vector<int>> next(nodes);
  for (std::size_t i = 0; i < links_.size(); ++i)
    for (int side = 0; side < 2; ++side)
      for (int vc = 0; vc < vcs; ++vc) {
        if (links_[i]->fc(side).holding(vc).empty()) continue;
        const int into = side == 0 ? t_.links[i].b : t_.links[i].a;
        if (switch_of[into] < 0) continue;  // an endpoint takes what comes
        const int input = routes_.port_of[i][1 - side];
        for (int o : switches_[switch_of[into]]->outputs_waited_for(input, vc)) {
          const auto [link, s] = sender_at.at({into, o});
          if (!links_[link]->fc(s).holding(vc).empty()) next[id(i, side, vc)].push_back(id(link, s, vc));
        }
      }
  // Depth-first search for a cycle; the path on the stack names it.
  std::vector<int> state(nodes, 0), stack;  // 0 unseen, 1 on the stack, 2 done
  std::vector<int> cycle;
  std::function<bool(int)> visit = [&](int v) {
    state[v] = 1;
    stack.push_back(v);
    for (int w : next[v]) {
      if (state[w] == 1) {
        cycle.assign(std::find(stack.begin(), stack.end(), w), stack.end());
        cycle.push_back(w);
        return true;
      }
      if (state[w] == 0 && visit(w)) return true;
    }
    stack.pop_back();
    state[v] = 2;
    return false;
  };
  for (int v = 0; v < nodes && cycle.empty(); ++v)
    if (state[v] == 0 && !next[v].empty()) visit(v);
  std::string named;
  for (int v : cycle) {
    const int vc = v % vcs, side = v / vcs % 2;
    named += fmt::format("{}{} VC {}", named.empty() ? "" : " -> ", links_[v / vcs / 2]->side_name(side), vc);
  }
  return named;
}

// Where the credits a held sender lacks are, from both ends' counters: S_CC - R_CC for frames
// the receiver never counted in (lost on the hop, or on their way), R_CF - S_CF freed but not
// yet reported, R_CC - R_CF still in the receiver's buffer; together exactly its credits in use.
std::string Fabric::credits_held() const {
  std::string first;
  bool first_lacks = false;  // its credits are missing, not just in a full buffer further on
  int held = 0;
  for (const auto& l : links_)
    for (int s = 0; s < 2; ++s) {
      const link::PortFc& fc = l->fc(s);
      for (int vc = 0; vc < fc.vcs(); ++vc) {
        const std::string why = fc.holding(vc);
        if (why.empty()) continue;
        ++held;
        if (fc.mode() != link::FcMode::kCbfc) {
          if (first.empty()) first = "paused at " + why;
          continue;
        }
        const link::CreditSender& tx = fc.cbfc_sender();
        const link::PortFc& far = l->fc(1 - s);
        const link::CbfcReceiver rx = far.cbfc_receiver_with_calls();
        const std::uint32_t mask = tx.config().counter_mask();
        const std::uint32_t unreceived = (tx.consumed(vc) - rx.consumed(vc)) & mask;
        const std::uint32_t unreported = (rx.freed(vc) - tx.freed(vc)) & mask;
        const std::uint32_t buffered = rx.occupancy(vc);
        const bool lacks = unreceived + unreported > 0;
        if (!first.empty() && (first_lacks || !lacks)) continue;
        std::string where;
        if (unreceived) {
          const link::LlrTransmitter& llr = l->mac(s).llr_tx();
          const std::string lost =
              l->params().llr ? fmt::format("its LLR delivered {} frames there and flushed {} (after llr.replay_limit = "
                                            "{} replays without progress)",
                                            l->mac(1 - s).delivered(), llr.flushed_frames(),
                                            l->params().llr_params.config.replay_limit)
                              : fmt::format("{} frames lost there with a bad FCS", l->mac(1 - s).frames_lost());
          where += fmt::format("{} for frames {} never received: {}, {} of the {} codewords it sent uncorrectable; only a "
                               "CC_Update returns them (cbfc.resync_us = {}: {} sent, {} arrived)",
                               unreceived, l->side_name(1 - s), lost, l->uncorrectable(s), l->codewords(s),
                               to_us(l->params().cbfc.resync), fc.cc_updates_sent(), far.cc_updates_arrived());
        }
        if (unreported)
          where += fmt::format("{}{} freed by {} but not yet reported back (CF_Updates lost or on their way)",
                               where.empty() ? "" : "; ", unreported, l->side_name(1 - s));
        if (buffered)
          where += fmt::format("{}{} in the buffer of {} (its core has not taken them on)", where.empty() ? "" : "; ",
                               buffered, l->side_name(1 - s));
        first = fmt::format("credits held at {}; of those in use, {}", why, where);
        first_lacks = lacks;
      }
    }
  if (held > 1) first += fmt::format(" (and {} more held by flow control)", held - 1);
  return first;
}

std::string Fabric::link_fault(Time now) {
  for (std::size_t i = 0; i < links_.size(); ++i)
    if (std::string f = cannot_initialise(*links_[i], now); !f.empty()) return f;
  for (std::size_t i = 0; i < links_.size(); ++i) {
    const PortLink& l = *links_[i];
    for (int s = 0; s < 2; ++s) {  // side s sends on its line to the MAC of side 1 - s
      LastDelivery& last = last_delivery_[i][s];
      const std::uint64_t delivered = l.mac(1 - s).delivered(), codewords = l.codewords(s);
      // A configured flap's dark time and relock count as no window: the link comes back.
      const bool flapping = !l.otn() && l.phy(s).params().flapping_at(now);
      if (delivered != last.delivered || flapping || codewords < last.codewords)  // or the warm-up's reset
        last = {delivered, codewords, l.uncorrectable(s)};
      const std::uint64_t words = codewords - last.codewords, bad = l.uncorrectable(s) - last.uncorrectable;
      if (words >= kDeadWindowCodewords && 2 * bad >= words)
        return fmt::format("link {} is dead: no frame came through to {} over its last {} codewords, {} of them "
                           "uncorrectable (at least half over {} codewords: 802.3's RS-FEC failure, hi_ser)",
                           l.side_name(s), l.side_name(1 - s), words, bad, kDeadWindowCodewords);
    }
  }
  return "";
}

bool Fabric::flapping(Time now) const {
  for (const auto& l : links_)
    for (int s = 0; s < 2; ++s)
      if (!l->otn() && l->phy(s).params().flapping_at(now)) return true;
  return false;
}

bool Fabric::up(Time now) const {
  for (const auto& l : links_)
    for (int s = 0; s < 2 && !l->otn(); ++s) {  // an OTN line carries frames from the start
      const phy::PhyParams& p = l->phy(s).params();
      if (now < p.cdr_lock_cycles * p.period() || p.flapping_at(now)) return false;
    }
  return true;
}

std::string Fabric::cannot_initialise(const PortLink& l, Time now) {
  if (!l.params().llr) return "";
  const link::LlrParams& llr = l.params().llr_params;
  // The PHYs of both directions locked since `up`; none while a flap keeps one dark.
  Time up = 0;
  for (int d = 0; d < 2; ++d) {
    const phy::PhyParams& p = l.phy(d).params();
    Time locked = p.cdr_lock_cycles * p.period();
    if (p.flap_began(now)) locked = p.down_until * p.period();
    up = std::max(up, locked);
  }
  const Time tries = static_cast<Time>(llr.config.replay_limit + 1) * from_ns(llr.replay_timer_ns);
  if (now < up + tries) return "";
  for (int s = 0; s < 2; ++s) {
    const link::LlrTransmitter& tx = l.mac(s).llr_tx();
    if (tx.state() != link::LlrTxState::kInit || tx.flushed_frames() != 0) continue;  // up once
    const phy::PhyLink &out = l.phy(s), &back = l.phy(1 - s);
    const auto failing = [](const phy::PhyLink& line) { return 2 * line.uncorrectable() >= line.codewords(); };
    if (!failing(out) && !failing(back)) continue;
    return fmt::format("link {} cannot initialise: its LLR TX is still in INIT {} after its PHYs locked, "
                       "llr.replay_limit + 1 = {} replay timers of llr.replay_timer_ns = {} without an answer; {} of "
                       "{} codewords it sent and {} of {} it received uncorrectable",
                       l.side_name(s), format_time(now - up), llr.config.replay_limit + 1, llr.replay_timer_ns,
                       out.uncorrectable(), out.codewords(), back.uncorrectable(), back.codewords());
  }
  return "";
}

std::string Fabric::losses() const {
  std::string ports, flap;
  std::uint64_t total = 0;
  for (const auto& l : links_)
    for (int s = 0; s < 2; ++s) {
      const std::uint64_t flushed = l->mac(s).llr_tx().flushed_frames(), bad = l->mac(s).frames_lost();
      if (flushed + bad == 0) continue;
      total += flushed + bad;
      ports += fmt::format("{}{}:", ports.empty() ? "" : ", ", l->side_name(s));
      if (flushed) ports += fmt::format(" {} flushed", flushed);
      if (bad) ports += fmt::format(" {} lost (bad FCS, no LLR)", bad);
      const phy::PhyParams& p = l->params().phy;
      if (flap.empty() && !l->otn() && p.flaps())
        flap = fmt::format(" after the link flap at {} (dark until {}, locked again at {})",
                           format_time(p.down_from * p.period()),
                           format_time((p.down_until - p.cdr_lock_cycles) * p.period()),
                           format_time(p.down_until * p.period()));
    }
  if (total == 0) return "";
  return fmt::format("{} frames given up on the links{} (LLR flushes a frame after llr.replay_limit = {} "
                     "replays without progress): {}",
                     total, flap, links_.front()->params().llr_params.config.replay_limit, ports);
}

std::uint64_t Fabric::drops() const {
  std::uint64_t n = 0;
  for (const auto& s : switches_) n += s->drops();
  return n;
}

void Fabric::recycle_drops(PacketPool& pool) {
  for (const auto& s : switches_) {
    for (Packet* p : s->dropped_packets()) pool.release(p);
    s->dropped_packets().clear();
  }
}

std::uint64_t Fabric::frames_lost_on_links() const {
  std::uint64_t n = 0;
  for (const auto& l : links_)
    for (int s = 0; s < 2; ++s) n += l->mac(s).frames_lost() + l->mac(s).llr_tx().flushed_frames();
  return n;
}

}  // namespace xy::lingyun
