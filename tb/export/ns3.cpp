// ns-3 HPCC's inputs (simulation/scratch/third.cc of alibaba-edu/High-Precision-Congestion-Control):
// config.txt, "KEY value" pairs matched one whitespace-separated word at a time, and the topology
// file: "nodes switches links", the switch ids, then "src dst rate delay error_rate" per link, the
// rate and delay parsed by ns-3's DataRate and Time, the error rate a per-packet drop probability.
// Neither format has comments: where each value comes from goes to a README beside them.
// third.cc keeps one link per node pair: the graph it routes on (nbr2if[src][dst] in main, read by
// CalculateRoute and SetRoutingEntries) holds the last link read between two nodes, so parallel
// links are written as one link of their summed rate.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "tb/export/fabrics.hpp"
#include "tb/export/formats.hpp"

namespace xy::exports {
namespace {

// HPCC's packet payload (PACKET_PAYLOAD_SIZE of its sample config), the frame the error rate is for.
constexpr int kPayloadBytes = 1000;

long long bps(double gbps) { return std::llround(gbps * 1e9); }

// ns-3's DataRate: whole Gb/s when they are, else bits per second.
std::string rate(long long bps) {
  return bps % 1000000000 ? fmt::format("{}bps", bps) : fmt::format("{}Gbps", bps / 1000000000);
}

bool random_errors_only(const phy::PhyParams& q) {
  return q.errors.p_good_to_bad == 0 && q.errors.dfe_propagation == 0;
}

// The share of frames of kPayloadBytes an uncorrectable codeword hits at the configured pre-FEC BER
// (random errors): a frame spans k + 1 or k + 2 codewords at a random offset (k = whole codewords
// of data in it), each failing with the binomial codeword error ratio.
double frame_errors(const phy::PhyParams& q) {
  const double codewords = kPayloadBytes * 8.0 / (64.0 * q.blocks_per_codeword());
  const double k = std::floor(codewords), straddle = codewords - k;
  const double log_ok = std::log1p(-phy::codeword_error_ratio(q, q.errors.ber));
  return -(1 - straddle) * std::expm1((k + 1) * log_ok) - straddle * std::expm1((k + 2) * log_ok);
}

// What the link loses to the layer above: nothing with LLR (it replays, at a cost in latency this
// format cannot carry), else the frames with errors.
double packet_loss(const lingyun::PortParams& p) {
  if (p.llr) return 0;
  if (!random_errors_only(p.phy))
    throw ConfigError("port.errors.p_good_to_bad or port.errors.dfe_propagation set on a link without LLR: its frame "
                      "loss is computed for random errors only (port.errors.ber)");
  return frame_errors(p.phy);
}

// The links between one pair of nodes, written as one link of their summed rate.
struct Bundle {
  int a = 0, b = 0;
  std::vector<std::size_t> links;  // indices into the topology's links, in its order
  long long bps = 0;
  long delay_ns = 0;
  double loss = 0;
};

// One Bundle a node pair, in the order pairs first appear. Throws ConfigError for parallel links
// of different delays or losses: one link of HPCC cannot hold both.
std::vector<Bundle> bundles(const FabricDescription& f) {
  const auto& t = f.topology;
  std::vector<Bundle> out;
  for (std::size_t i = 0; i < t.links.size(); ++i) {
    const auto& l = t.links[i];
    const long delay = std::lround(f.links[i].phy_ns);
    const double loss = packet_loss(f.links[i].ports);
    auto it = std::find_if(out.begin(), out.end(), [&](const Bundle& b) {
      return std::minmax(b.a, b.b) == std::minmax(l.a, l.b);
    });
    if (it == out.end()) {
      out.push_back({l.a, l.b, {}, 0, delay, loss});
      it = out.end() - 1;
    } else if (it->delay_ns != delay || it->loss != loss) {
      const auto& first = t.links[it->links[0]];
      const std::string differ = it->delay_ns != delay
                                     ? fmt::format("delays ({} / {} ns)", it->delay_ns, delay)
                                     : fmt::format("packet losses ({:.6g} / {:.6g})", it->loss, loss);
      throw ConfigError(fmt::format("links {} ({}) and {} ({}) join the same nodes with different {}: HPCC's third.cc "
                                    "keeps one link per node pair, so parallel links are exported as one of their "
                                    "summed rate, which needs them alike",
                                    f.links[it->links[0]].name, first.where, f.links[i].name, l.where, differ));
    }
    it->links.push_back(i);
    it->bps += bps(f.line_gbps);
  }
  return out;
}

std::string topology_txt(const FabricDescription& f) {
  const auto& t = f.topology;
  const std::vector<Bundle> pairs = bundles(f);
  std::string s = fmt::format("{} {} {}\n", t.nodes.size(), t.switches().size(), pairs.size());
  s += fmt::format("{}\n", fmt::join(t.switches(), " "));
  for (const Bundle& b : pairs)
    s += fmt::format("{} {} {} {}ns {:.6g}\n", b.a, b.b, rate(b.bps), b.delay_ns, b.loss);
  return s;
}

// "n rate value ..." of a KMIN_MAP, KMAX_MAP or PMAX_MAP: one entry per link rate (third.cc
// asserts every switch port's rate has one), the thresholds scaled by the links merged, as the
// queue of the merged port holds theirs.
template <class Value>
std::string rate_map(const FabricDescription& f, Value per_link) {
  std::vector<std::pair<long long, std::size_t>> rates;  // rate, links merged
  for (const Bundle& b : bundles(f))
    if (std::find_if(rates.begin(), rates.end(), [&](const auto& r) { return r.first == b.bps; }) == rates.end())
      rates.emplace_back(b.bps, b.links.size());
  std::sort(rates.begin(), rates.end());
  std::string s = std::to_string(rates.size());
  for (const auto& [rate_bps, merged] : rates) s += fmt::format(" {} {}", rate_bps, per_link(merged));
  return s;
}

// Every key third.cc reads, in the order it tests them. Those the run sets: ENABLE_QCN,
// ERROR_RATE_PER_LINK (0: each link has its own), LINK_DOWN, the ECN maps, BUFFER_SIZE, and
// DATA_RATE / LINK_DELAY (read, then unused: the topology sets each link); the rest are HPCC's
// sample config.
std::string config_txt(const FabricDescription& f) {
  const auto& sw = f.switches;
  const auto& phy = f.links[0].ports.phy;  // the flap, if any, is on every port
  if (phy.down_until > 0)
    throw ConfigError("port.link_down_us > 0: a flap of every link, down then up again, has no equivalent in HPCC's "
                      "LINK_DOWN (one link, down for good)");
  const long buffer_mib = std::max(1L, std::lround(f.buffer_mib()));
  double longest = 0;
  for (const auto& l : f.links) longest = std::max(longest, l.phy_ns);
  const std::pair<const char*, std::string> keys[] = {
      {"ENABLE_QCN", sw.ecn.on ? "1" : "0"},
      {"USE_DYNAMIC_PFC_THRESHOLD", "1"},
      {"CLAMP_TARGET_RATE", "0"},
      {"PAUSE_TIME", "5"},
      {"DATA_RATE", rate(bps(f.line_gbps))},
      {"LINK_DELAY", fmt::format("{}ns", std::lround(longest))},
      {"PACKET_PAYLOAD_SIZE", std::to_string(kPayloadBytes)},
      {"L2_CHUNK_SIZE", "4000"},
      {"L2_ACK_INTERVAL", "1"},
      {"L2_BACK_TO_ZERO", "0"},
      {"TOPOLOGY_FILE", "mix/topology.txt"},
      {"FLOW_FILE", "mix/flow.txt"},
      {"TRACE_FILE", "mix/trace.txt"},
      {"TRACE_OUTPUT_FILE", "mix/mix.tr"},
      {"SIMULATOR_STOP_TIME", "4.00"},
      {"ALPHA_RESUME_INTERVAL", "1"},
      {"RP_TIMER", "900"},
      {"EWMA_GAIN", "0.00390625"},
      {"FAST_RECOVERY_TIMES", "1"},
      {"RATE_AI", "50Mb/s"},
      {"RATE_HAI", "100Mb/s"},
      {"ERROR_RATE_PER_LINK", "0"},
      {"CC_MODE", "3"},
      {"RATE_DECREASE_INTERVAL", "4"},
      {"MIN_RATE", "100Mb/s"},
      {"FCT_OUTPUT_FILE", "mix/fct.txt"},
      {"HAS_WIN", "1"},
      {"GLOBAL_T", "1"},
      {"MI_THRESH", "0"},
      {"VAR_WIN", "1"},
      {"FAST_REACT", "1"},
      {"U_TARGET", "0.95"},
      {"INT_MULTI", "1"},
      {"RATE_BOUND", "1"},
      {"ACK_HIGH_PRIO", "0"},
      {"DCTCP_RATE_AI", "1000Mb/s"},
      {"PFC_OUTPUT_FILE", "mix/pfc.txt"},
      {"LINK_DOWN", "0 0 0"},
      {"ENABLE_TRACE", "1"},
      // Thresholds in KB (third.cc multiplies them by 1000).
      {"KMAX_MAP", rate_map(f, [&](std::size_t n) { return std::lround(n * sw.ecn.kmax / 1000.0); })},
      {"KMIN_MAP", rate_map(f, [&](std::size_t n) { return std::lround(n * sw.ecn.kmin / 1000.0); })},
      {"PMAX_MAP", rate_map(f, [&](std::size_t) { return sw.ecn.pmax; })},
      {"BUFFER_SIZE", std::to_string(buffer_mib)},
      {"QLEN_MON_FILE", "mix/qlen.txt"},
      {"QLEN_MON_START", "2000000000"},
      {"QLEN_MON_END", "2010000000"},
      {"MULTI_RATE", "0"},
      {"SAMPLE_FEEDBACK", "0"},
      {"PINT_LOG_BASE", "1.05"},
      {"PINT_PROB", "1.0"},
  };
  std::string s;
  for (const auto& [key, value] : keys) s += fmt::format("{} {}\n", key, value);
  return s;
}

std::string readme(const FabricDescription& f) {
  const auto& t = f.topology;
  std::string s = fmt::format(
      "# ns-3 HPCC inputs exported by xysim {}\n\n"
      "From `{}`: scenario {}, seed {}, fabric {}; topology {}. Copy `config.txt` and `topology.txt` into HPCC's "
      "`simulation/mix/` and run `./waf --run 'scratch/third mix/config.txt'`; the workload (`mix/flow.txt`, "
      "`mix/trace.txt`) is yours to write.\n\n"
      "## topology.txt\n\n"
      "- Node ids are the topology's nodes in order (below); switches are listed on the second line.\n"
      "- Rate: every port's MAC data rate, {:.3f} Gb/s (configured: port.lanes x port.lane_gbps less FEC and "
      "transcoding); N times it for N parallel links between two nodes, written as one (below).\n"
      "- Delay: the link's fixed PHY latency one way, in whole ns (ns-3's default time resolution), rounded to the "
      "nearest: MAC/PCS and FEC encoder pipelines + PMA TX + 5 ns/m of cable + PMA RX and deskew + gathering the "
      "codeword group + FEC decoder and PCS/MAC pipelines, in PHY cycles. Configured, and within a codeword group of the least PHY latency the run measured at "
      "every port (checked on export). A frame's serialisation is not in it (ns-3 adds it from the rate).\n"
      "- Error rate (a per-packet drop probability in third.cc): computed, not measured. 0 on links with LLR (they "
      "replay what the FEC cannot correct: it costs latency, not packets). Without LLR: the share of {}-byte "
      "packets an uncorrectable codeword hits at the configured pre-FEC BER ({:g}, random errors), from the "
      "binomial codeword error ratio the model's `phy-fec-curve` checks, over the codewords a packet spans at a "
      "random offset. Below, each link's binomial codeword error ratio stands beside the uncorrectable codewords the "
      "run counted on it (both directions).\n\n"
      "## config.txt\n\n"
      "Every key third.cc reads, in the order it tests them. From the run: ENABLE_QCN (switch.ecn.on = {}), "
      "KMIN_MAP / KMAX_MAP (switch.ecn.kmin_bytes / kmax_bytes = {} / {} B, in KB rounded to the nearest, N times "
      "them at the rate of N merged links, whose one queue holds what their N did), PMAX_MAP "
      "(switch.ecn.pmax = {:g}), BUFFER_SIZE (switch.buffer_mib, {:g} MiB, in whole MiB), LINK_DOWN 0 0 0 (no flap), "
      "ERROR_RATE_PER_LINK 0 (each link has its own), DATA_RATE and LINK_DELAY (read but unused by third.cc: the "
      "rate and the longest link). The rest (congestion control, workload files, monitoring) are HPCC's sample "
      "`mix/config.txt`.\n\n"
      "## Not carried over\n\n"
      "- The switch pipeline: HPCC's inputs have no switch latency; the run measured at least {:.2f} ns port to port "
      "(`port_to_port` in results.json).\n"
      "- The MAC and clock-crossing stages (a few ns a hop, measured), LLR replays, and the link flow control "
      "(port.fc: CBFC, PFC or none; HPCC runs PFC).\n\n"
      "## Parallel links\n\n"
      "third.cc keeps one link per node pair: the graph it routes on (nbr2if, built in main, read by CalculateRoute "
      "and SetRoutingEntries) holds the last link read between two nodes, and the others would carry nothing. So N "
      "parallel links (alike: the same delay and packet loss, else the export is refused) are one line of N times "
      "the rate, the capacity the run had between those nodes (its routes spread over all N):\n\n",
      f.xysim_version, f.input, f.scenario, f.seed, f.name, t.name, f.line_gbps, kPayloadBytes,
      f.links[0].ports.phy.errors.ber, f.switches.ecn.on, f.switches.ecn.kmin, f.switches.ecn.kmax, f.switches.ecn.pmax,
      f.buffer_mib(), f.least_switch_ns(t.switches()));
  bool merged = false;
  for (const Bundle& b : bundles(f))
    if (b.links.size() > 1) {
      merged = true;
      s += fmt::format("- {} - {} ({} - {}): {} links of {:.3f} Gb/s, written as one of {}\n", b.a, b.b,
                       f.topology.nodes[b.a].name, f.topology.nodes[b.b].name, b.links.size(), f.line_gbps,
                       rate(b.bps));
    }
  if (!merged) s += "- none: one link per node pair\n";
  s += "\n## Links, unrounded\n\n";
  for (std::size_t i = 0; i < t.links.size(); ++i) {
    const FabricDescription::Link& l = f.links[i];
    const phy::PhyParams& q = l.ports.phy;
    const std::string errors =
        random_errors_only(q) ? fmt::format("{:.6g}", frame_errors(q)) : "not computed (bursts or DFE)";
    s += fmt::format("- {} - {} ({}): {} m, {}, LLR {}: {:.3f} ns; codeword errors {:.3g} (binomial), measured {} of "
                     "{}; post-FEC frame errors {}, packet loss {:.6g}\n",
                     t.links[i].a, t.links[i].b, l.name, t.links[i].cable_m, q.fec, l.ports.llr ? "on" : "off",
                     l.phy_ns, phy::codeword_error_ratio(q, q.errors.ber),
                     f.link_count(l, "phy.fec.uncorrectable_codewords"), f.link_count(l, "phy.fec.codewords"), errors,
                     packet_loss(l.ports));
  }
  s += "\n## Node ids\n\n";
  for (std::size_t n = 0; n < t.nodes.size(); ++n)
    s += fmt::format("- {}: {}{}\n", n, t.nodes[n].name, t.nodes[n].is_switch ? " (switch)" : "");
  return s;
}

}  // namespace

std::vector<File> ns3_config(const std::vector<Input>& inputs) {
  std::vector<File> out;
  for (const FabricDescription& f : fabrics_of(inputs))
    naming(f.origin(), [&] {
      f.require_one_link_per_endpoint("HPCC's hosts have one NIC (third.cc addresses the first only)");
      out.push_back({f.dir + "/topology.txt", topology_txt(f)});
      out.push_back({f.dir + "/config.txt", config_txt(f)});
      out.push_back({f.dir + "/README.md", readme(f)});
    });
  return out;
}

}  // namespace xy::exports
