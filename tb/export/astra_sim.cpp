// ASTRA-sim's analytical network backend (astra-network-analytical) models a message of `size`
// bytes between two NPUs of a dimension as hops x latency + size / bandwidth, with a Switch
// dimension counting 2 hops (src -> switch -> dest) and bandwidth in GB/s of 2^30 bytes
// (congestion_unaware/BasicTopology.cpp, Switch.cpp, common/NetworkFunction.cpp). The fit:
// T(size) = a + size / b with the least largest relative residual over the measured network
// times of a message-size sweep (olink-message's); latency = a / 2, bandwidth = b in 2^30-byte GB/s. The file states the
// sizes it holds for (those fitted) and how close ASTRA-sim's time from its written values comes to each
// measured one there: a message below them is not measured, and one that fits no segment barely
// gets faster with its size (the line overstates it).
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "tb/export/formats.hpp"
#include "kernel/config.hpp"

namespace xy::exports {
namespace {

constexpr int kSwitchHops = 2;                       // ASTRA-sim's Switch: src -> switch -> dest
constexpr double kGiB = 1073741824.0;                // ASTRA-sim's GB (bw_GBps_to_Bpns)

struct Fit {
  double latency_ns = 0, bytes_per_ns = 0;  // a and b of T = a + size / b
  double worst_ns = 0, worst_relative = 0;  // the largest residual
};

// The line T = a + c size whose largest relative residual over the messages is least
// (Chebyshev), since ASTRA-sim's time should be close to every measured one, the small messages'
// too. On three sizes the best line equioscillates (+e, -e, +e of each T); over more, it is the
// best line of the triple whose e is largest (de la Vallee Poussin). Two sizes: the line through
// their means.
Fit minimax_relative(const std::vector<Message>& m) {
  double best_a = 0, best_c = 0, best_e = -1;
  for (std::size_t i = 0; i < m.size(); ++i)
    for (std::size_t j = 0; j < m.size(); ++j)
      for (std::size_t k = 0; k < m.size(); ++k) {
        const Message &p = m[i], &q = m[j], &r = m[k];
        if (!(p.bytes < q.bytes && q.bytes < r.bytes)) continue;
        // a + c x - s e y = y with s = +1, -1, +1, by Cramer's rule.
        const double rows[3][4] = {{1, p.bytes, -p.transfer_ns, p.transfer_ns},
                                   {1, q.bytes, q.transfer_ns, q.transfer_ns},
                                   {1, r.bytes, -r.transfer_ns, r.transfer_ns}};
        const auto det = [&](int replaced) {
          double d[3][3];
          for (int row = 0; row < 3; ++row)
            for (int col = 0; col < 3; ++col) d[row][col] = rows[row][col == replaced ? 3 : col];
          return d[0][0] * (d[1][1] * d[2][2] - d[1][2] * d[2][1]) - d[0][1] * (d[1][0] * d[2][2] - d[1][2] * d[2][0]) +
                 d[0][2] * (d[1][0] * d[2][1] - d[1][1] * d[2][0]);
        };
        const double d = det(-1), e = det(2) / d;
        if (std::abs(e) > best_e) best_a = det(0) / d, best_c = det(1) / d, best_e = std::abs(e);
      }
  if (best_e < 0) {  // fewer than three sizes
    const double n = static_cast<double>(m.size());
    double sx = 0, sy = 0;
    for (const auto& p : m) sx += p.bytes, sy += p.transfer_ns;
    const double mx = sx / n, my = sy / n;
    double sxx = 0, sxy = 0;
    for (const auto& p : m) sxx += (p.bytes - mx) * (p.bytes - mx), sxy += (p.bytes - mx) * (p.transfer_ns - my);
    best_c = sxy / sxx;
    best_a = my - best_c * mx;
  }
  Fit f{best_a, 1 / best_c};
  for (const auto& p : m) {
    const double residual = f.latency_ns + p.bytes / f.bytes_per_ns - p.transfer_ns;
    if (std::abs(residual) > std::abs(f.worst_ns)) f.worst_ns = residual;
    f.worst_relative = std::max(f.worst_relative, std::abs(residual) / p.transfer_ns);
  }
  return f;
}

// ASTRA-sim's time for a message from the values as written (truncated, as EventTime), against
// the measured: the largest relative difference over the messages.
double worst_written(const std::vector<Message>& m, const std::string& latency, const std::string& bandwidth) {
  const double hops_ns = kSwitchHops * std::stod(latency), bytes_per_ns = std::stod(bandwidth) * kGiB / 1e9;
  double worst = 0;
  for (const auto& p : m)
    worst = std::max(worst, std::abs(std::floor(hops_ns + p.bytes / bytes_per_ns) / p.transfer_ns - 1));
  return worst;
}

}  // namespace

std::vector<File> astra_sim(const std::vector<Input>& inputs) {
  const MessageSweep s = message_sweep(inputs, 2, "astra-sim");
  const Fit fit = minimax_relative(s.messages);
  if (!(fit.bytes_per_ns > 0) || fit.latency_ns < 0)
    throw ConfigError(fmt::format("{}: the fit T = a + size/b gives a = {:.1f} ns, b = {:.3f} B/ns: ASTRA-sim needs a >= 0 and "
                                  "b > 0 (sweep sizes far enough apart)", s.inputs, fit.latency_ns, fit.bytes_per_ns));
  std::vector<double> sizes;
  double endpoint = 0;  // each end's share of the GPU-to-GPU time the network's does not cover
  for (const auto& m : s.messages) {
    if (std::find(sizes.begin(), sizes.end(), m.bytes) == sizes.end()) sizes.push_back(m.bytes);
    endpoint += (m.delivered_ns - m.transfer_ns) / 2 / static_cast<double>(s.messages.size());
  }
  std::sort(sizes.begin(), sizes.end());
  std::string size_list;
  for (double b : sizes) size_list += fmt::format("{}{:.0f}", size_list.empty() ? "" : ", ", b);
  const std::string bandwidth = fmt::format("{:.6f}", fit.bytes_per_ns * 1e9 / kGiB),
                    latency = fmt::format("{:.3f}", fit.latency_ns / kSwitchHops);
  // In hundredths of a percent, rounded up: the bound holds for every message it covers.
  const double bound_percent = std::ceil(worst_written(s.messages, latency, bandwidth) * 1e4) / 100;

  File network{"network.yml", ""};
  network.text = fmt::format(
      "# ASTRA-sim analytical network (congestion_unaware), written by xysim export astra-sim.\n"
      "# Measured: {scenarios} on {fabric}, {gpus} GPUs ({topology}), from {inputs}.\n"
      "# Fit: T(size) = a + size/b with the least largest relative residual over {n} points, {k} sizes ({sizes} bytes), T = transfer_ns\n"
      "#   (first frame onto the sender's line to last frame off the receiver's, measured):\n"
      "#   a = {a:.3f} ns, b = {b:.6f} B/ns; largest residual {worst:+.3f} ns ({rel:.3f} %).\n"
      "# Valid range: messages of {smallest:.0f} to {largest:.0f} bytes (the sizes fitted): there ASTRA-sim's time from\n"
      "#   the values below ({hops} x latency + size / bandwidth, truncated) is within {bound:.2f} % of every measured one.\n"
      "#   Outside it the line is not measured; below one segment a message's time hardly shrinks with its size,\n"
      "#   and the line overstates a small message's time.\n"
      "# ASTRA-sim: a Switch counts {hops} hops, so latency = a/{hops}; bandwidth in GB/s of 2^30 B = b x 1e9 / 2^30.\n"
      "# The congestion_aware backend charges size/bandwidth on each of the 2 links: use congestion_unaware.\n"
      "topology: [ Switch ]\n"
      "npus_count: [ {gpus} ]  # the measured system's GPUs\n"
      "bandwidth: [ {bw} ]  # GB/s (2^30 B/s), fitted\n"
      "latency: [ {lat} ]  # ns per hop, fitted\n",
      fmt::arg("scenarios", s.scenarios), fmt::arg("fabric", s.fabric), fmt::arg("gpus", s.gpus), fmt::arg("topology", s.topology), fmt::arg("inputs", s.inputs),
      fmt::arg("n", s.messages.size()), fmt::arg("k", sizes.size()), fmt::arg("sizes", size_list),
      fmt::arg("a", fit.latency_ns), fmt::arg("b", fit.bytes_per_ns), fmt::arg("worst", fit.worst_ns),
      fmt::arg("rel", 100 * fit.worst_relative), fmt::arg("smallest", sizes.front()), fmt::arg("largest", sizes.back()),
      fmt::arg("bound", bound_percent), fmt::arg("hops", kSwitchHops), fmt::arg("bw", bandwidth), fmt::arg("lat", latency));

  // Sys::initialize_sys reads these keys (astra-sim/system/Sys.cc); it ignores others, so the
  // provenance travels in the file.
  const nlohmann::json system = {
      {"scheduling-policy", "LIFO"},
      {"endpoint-delay", static_cast<int>(std::lround(endpoint))},
      {"active-chunks-per-dimension", 1},
      {"preferred-dataset-splits", 1},
      {"all-reduce-implementation", {"ring"}},
      {"all-gather-implementation", {"ring"}},
      {"reduce-scatter-implementation", {"ring"}},
      {"all-to-all-implementation", {"ring"}},
      {"collective-optimization", "baseline"},
      {"local-reduction-delay", 1},
      {"xysim-provenance",
       {{"endpoint-delay", fmt::format("half of delivered_ns less transfer_ns, both measured, mean over {} points of {}: "
                                       "{:.1f} ns, rounded (ASTRA-sim reads an integer, ns); most of it is the NICs' "
                                       "configured olink.gpu.egress_ns and ingress_ns",
                                       s.messages.size(), s.inputs, endpoint)},
        {"scheduling-policy", "default: LIFO, as ASTRA-sim's examples"},
        {"active-chunks-per-dimension", "default: 1, ASTRA-sim's own"},
        {"preferred-dataset-splits", "default: 1 (one chunk per collective; ASTRA-sim's own 0 divides by zero)"},
        {"*-implementation", "default: ring, as ASTRA-sim's examples; not measured"},
        {"collective-optimization", "default: baseline"},
        {"local-reduction-delay", "default: 1, ASTRA-sim's own; not measured"}}}};
  return {network, {"system.json", system.dump(2) + "\n"}};
}

}  // namespace xy::exports
