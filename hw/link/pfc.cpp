#include "hw/link/pfc.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "kernel/config.hpp"

namespace xy::link {
namespace {

constexpr int kQuantumBits = 512;

// Femtoseconds of `quanta` pause quanta: bits / (Gb/s) = ns.
Time quanta_fs(std::uint32_t quanta, double line_gbps) {
  return static_cast<Time>(std::llround(static_cast<double>(quanta) * kQuantumBits * 1e6 / line_gbps));
}

void check_prio(const PfcConfig& c, int prio) {
  if (prio < 0 || prio >= c.priorities)
    throw std::out_of_range(fmt::format("PFC: priority {} outside 0..{}", prio, c.priorities - 1));
}

}  // namespace

PfcConfig PfcConfig::declare(Config& c, int priorities, double line_gbps) {
  PfcConfig p;
  p.priorities = priorities;
  p.line_gbps = line_gbps;
  const auto bytes = [&](const char* key, std::uint32_t def, std::int64_t min, const char* what) {
    return static_cast<std::uint32_t>(c.integer(std::string("pfc.") + key, def, "bytes", min, 1 << 30, what));
  };
  // The headroom covers a composed 800G link's loop up to about 26 m of cable (its MAC/PCS,
  // FEC and PMA pipelines both ways, two largest frames); each such link checks it.
  p.buffer_bytes = bytes("buffer_bytes", 196608, 1024, "ingress buffer per priority");
  p.headroom_bytes = bytes("headroom_bytes", 98304, 0,
                           "above XOFF: what arrives once XOFF is decided (a composed link checks it covers its loop)");
  p.xoff_bytes = bytes("xoff_bytes", 81920, 1, "XOFF threshold");
  p.xon_bytes = bytes("xon_bytes", 65536, 0, "XON threshold");
  p.validate("pfc");
  return p;
}

void PfcConfig::validate(const std::string& prefix) const {
  const std::string& p = prefix;
  if (priorities < 1 || priorities > 8)
    throw ConfigError(fmt::format("{}.priorities = {}: must be in [1, 8]", p, priorities));
  if (!(line_gbps > 0) || !std::isfinite(line_gbps))
    throw ConfigError(fmt::format("{}.line_gbps = {}: must be a rate > 0 Gb/s", p, line_gbps));
  if (buffer_bytes < 1) throw ConfigError(fmt::format("{}.buffer_bytes = 0: must be >= 1 byte", p));
  if (headroom_bytes >= buffer_bytes)
    throw ConfigError(fmt::format("{}.headroom_bytes = {}: must be < buffer_bytes = {}", p, headroom_bytes,
                                  buffer_bytes));
  if (xoff_bytes < 1 || xoff_bytes > buffer_bytes - headroom_bytes)
    throw ConfigError(fmt::format("{}.xoff_bytes = {}: must be in [1, buffer_bytes - headroom_bytes = {}]", p,
                                  xoff_bytes, buffer_bytes - headroom_bytes));
  if (xon_bytes >= xoff_bytes)
    throw ConfigError(fmt::format("{}.xon_bytes = {}: must be < xoff_bytes = {}", p, xon_bytes, xoff_bytes));
  if (pause_quanta < 2)
    throw ConfigError(fmt::format("{}.pause_quanta = {}: must be in [2, 65535] (room for a refresh)", p,
                                  pause_quanta));
  if (refresh_quanta < 1 || refresh_quanta >= pause_quanta)
    throw ConfigError(fmt::format("{}.refresh_quanta = {}: must be in [1, pause_quanta - 1 = {}]", p,
                                  refresh_quanta, pause_quanta - 1));
}

void PfcConfig::check_holds_frame(std::uint32_t max_frame_bytes, const std::string& frame,
                                  const std::string& prefix) const {
  if (buffer_bytes < max_frame_bytes)
    throw ConfigError(fmt::format("{}.buffer_bytes = {}: less than one largest frame ({} = {} B); allowed: at least {}",
                                  prefix, buffer_bytes, frame, max_frame_bytes, max_frame_bytes));
}

Cycle pause_cycles(std::uint32_t quanta, double line_gbps, Time clock_period) {
  return (quanta_fs(quanta, line_gbps) + clock_period - 1) / clock_period;
}

std::uint64_t required_headroom_bytes(double line_gbps, Time round_trip, std::uint32_t max_frame_bytes) {
  const double loop_bytes = line_gbps * static_cast<double>(round_trip) / 8e6;  // Gb/s x fs
  return static_cast<std::uint64_t>(std::ceil(loop_bytes - 1e-9)) + 2 * std::uint64_t{max_frame_bytes} +
         PauseFrame::wire_bytes;
}

// --- receiver ---

PfcReceiver::PfcReceiver(PfcConfig config, Time clock_period) : config_(std::move(config)) {
  config_.validate();
  // Rounded down, so that the refresh never lands later than refresh_quanta, before the pause ends.
  refresh_cycles_ = std::max<Cycle>(1, quanta_fs(config_.refresh_quanta, config_.line_gbps) / clock_period);
  occupancy_.assign(config_.priorities, 0);
  xoff_.assign(config_.priorities, false);
  refresh_at_.assign(config_.priorities, 0);
}

std::uint32_t PfcReceiver::on_receive(int prio, std::uint32_t bytes) {
  check_prio(config_, prio);
  occupancy_[prio] += bytes;
  return occupancy_[prio] > config_.buffer_bytes ? std::min(bytes, occupancy_[prio] - config_.buffer_bytes) : 0;
}

void PfcReceiver::on_drain(int prio, std::uint32_t bytes) {
  check_prio(config_, prio);
  if (bytes > occupancy_[prio])
    throw std::logic_error(
        fmt::format("PFC receiver priority {}: drain of {} bytes with {} buffered", prio, bytes, occupancy_[prio]));
  occupancy_[prio] -= bytes;
}

std::optional<PauseFrame> PfcReceiver::poll(Cycle now) {
  PauseFrame frame;
  for (int p = 0; p < config_.priorities; ++p) {
    const bool start = !xoff_[p] && occupancy_[p] >= config_.xoff_bytes;
    const bool end = xoff_[p] && occupancy_[p] < config_.xon_bytes;
    const bool refresh = xoff_[p] && !end && now >= refresh_at_[p];
    if (!start && !end && !refresh) continue;
    frame.enable_vector |= static_cast<std::uint8_t>(1u << p);
    frame.quanta[p] = end ? 0 : config_.pause_quanta;
    xoff_[p] = !end;
    refresh_at_[p] = now + refresh_cycles_;
  }
  if (frame.enable_vector == 0) return std::nullopt;
  return frame;
}

Cycle PfcReceiver::next_timer() const {
  Cycle next = ~Cycle{0};
  for (int p = 0; p < config_.priorities; ++p) {
    if (xoff_[p] ? occupancy_[p] < config_.xon_bytes : occupancy_[p] >= config_.xoff_bytes) return 0;
    if (xoff_[p]) next = std::min(next, refresh_at_[p]);
  }
  return next;
}

std::string pfc_overflow(const std::string& port, const PfcReceiver& r, int prio, std::uint32_t bytes,
                         std::uint32_t beyond, Cycle now) {
  const PfcConfig& c = r.config();
  return fmt::format("PFC overflow at {} priority {}, cycle {}: a {} B frame found {} of {} B buffered, {} B beyond "
                     "the buffer: the {} B headroom above XOFF ({} B) is too small for the round trip",
                     port, prio, now, bytes, r.occupancy(prio) - bytes, c.buffer_bytes, beyond, c.headroom_bytes,
                     c.xoff_bytes);
}

// --- sender ---

PfcSender::PfcSender(PfcConfig config, Time clock_period)
    : config_(std::move(config)), clock_period_(clock_period) {
  config_.validate();
  paused_until_.assign(config_.priorities, 0);
}

void PfcSender::on_pause(const PauseFrame& frame, Cycle now) {
  for (int p = 0; p < config_.priorities; ++p)
    if (frame.enable_vector & (1u << p))
      paused_until_[p] = now + pause_cycles(frame.quanta[p], config_.line_gbps, clock_period_);
}

}  // namespace xy::link
