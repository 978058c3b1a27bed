#include "hw/link/cbfc.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "kernel/config.hpp"

namespace xy::link {
namespace {

constexpr std::uint32_t kMinSpacing = 800;        // SAI CBFC_CF_MIN_SPACING lower bound
constexpr std::uint32_t kMaxSpacing = 256 * 1024;  // SAI CBFC_CF_MAX_SPACING default

void check_vc(const CbfcConfig& c, int vc) {
  if (vc < 0 || vc >= c.vcs) throw std::out_of_range(fmt::format("CBFC: VC {} outside 0..{}", vc, c.vcs - 1));
}

std::string format_bytes(double bytes) {
  if (bytes >= 1e6) return fmt::format("{:.1f} MB", bytes / 1e6);
  if (bytes >= 1e3) return fmt::format("{:.1f} KB", bytes / 1e3);
  return fmt::format("{:.0f} B", bytes);
}

}  // namespace

CbfcParams CbfcParams::declare(Config& c, int vcs) {
  CbfcParams p;
  CbfcConfig& cb = p.config;
  cb.vcs = vcs;
  cb.credit_bytes = static_cast<std::uint32_t>(c.integer("cbfc.credit_bytes", 128, "bytes", 1, 65535, "buffer bytes per credit"));
  cb.counter_bits = static_cast<std::uint32_t>(c.integer("cbfc.counter_bits", 20, "bits", 8, 32, "wrap-around counter width"));
  p.buffer_credits = static_cast<std::uint32_t>(c.integer(
      "cbfc.buffer_credits", 0, "credits", 0, 1 << 30, "receive buffer per VC; 0 = sized per link: twice the credit loop"));
  cb.update_spacing_bytes = static_cast<std::uint32_t>(c.integer(
      "cbfc.update_spacing_bytes", 6400, "bytes", 800, 256 * 1024, "freed bytes that make a CF_Update due"));
  p.update_timer = from_ns(c.real("cbfc.update_timer_ns", 500, "ns", 1, 1e9, "or a CF_Update this long after credits were freed"));
  p.refresh = from_ns(c.real("cbfc.refresh_ns", 2622, "ns", 1, 1e9, "re-send a VC's counter at least this often (its loss is repaired)"));
  p.resync = from_us(c.real("cbfc.resync_us", 256, "us", 0.001, 1e9, "CC_Update period (frees the credits of lost frames)"));
  p.rtl = c.implementation("cbfc.impl", {"model", "rtl"},
                           "every CBFC port's sending end: the C++ model or its Verilated RTL twin") == "rtl";
  cb.buffer_credits.assign(vcs, std::max<std::uint32_t>(p.buffer_credits, 1));  // each link's: sized_for()
  cb.validate("cbfc");
  return p;
}

CbfcConfig CbfcParams::on_clock(Time period) const {
  CbfcConfig cb = config;
  cb.update_timer_cycles = cycles_for(update_timer, period);
  cb.refresh_cycles = cycles_for(refresh, period);
  cb.resync_period_cycles = cycles_for(resync, period);
  return cb;
}

void CbfcConfig::validate(const std::string& prefix) const {
  const std::string& p = prefix;
  if (vcs < 1 || vcs > 32) throw ConfigError(fmt::format("{}.vcs = {}: must be in [1, 32]", p, vcs));
  if (credit_bytes < 1 || credit_bytes > 65535)
    throw ConfigError(fmt::format("{}.credit_bytes = {}: must be in [1, 65535] bytes", p, credit_bytes));
  if (overhead_bytes < -16 || overhead_bytes > 127)
    throw ConfigError(fmt::format("{}.overhead_bytes = {}: must be in [-16, 127] bytes", p, overhead_bytes));
  if (counter_bits < 8 || counter_bits > 32)
    throw ConfigError(fmt::format("{}.counter_bits = {}: must be in [8, 32]", p, counter_bits));
  if (buffer_credits.size() != static_cast<std::size_t>(vcs))
    throw ConfigError(fmt::format("{}.buffer_credits has {} entries: must have one per VC ({})", p,
                                  buffer_credits.size(), vcs));
  // A stale counter is told from a fresh one only while less than half the range is in flight.
  const std::uint64_t half = std::uint64_t{1} << (counter_bits - 1);
  for (int vc = 0; vc < vcs; ++vc) {
    const std::uint32_t b = buffer_credits[vc];
    if (b == 0)
      throw ConfigError(fmt::format("{}.buffer_credits[{}] = 0: a VC needs at least one credit", p, vc));
    if (b >= half)
      throw ConfigError(fmt::format("{}.buffer_credits[{}] = {}: must be below half the {}-bit counter range "
                                    "({}), or wrapped counters become ambiguous",
                                    p, vc, b, counter_bits, half));
  }
  if (update_spacing_bytes < kMinSpacing || update_spacing_bytes > kMaxSpacing)
    throw ConfigError(fmt::format("{}.update_spacing_bytes = {}: must be in [{}, {}] bytes", p,
                                  update_spacing_bytes, kMinSpacing, kMaxSpacing));
  const std::pair<const char*, Cycle> timers[] = {{"update_timer_cycles", update_timer_cycles},
                                                  {"refresh_cycles", refresh_cycles},
                                                  {"resync_period_cycles", resync_period_cycles}};
  for (const auto& [name, value] : timers)
    if (value < 1) throw ConfigError(fmt::format("{}.{} = {}: must be >= 1 cycle", p, name, value));
  if (cf_update_bytes < 1) throw ConfigError(fmt::format("{}.cf_update_bytes = 0: must be >= 1", p));
  if (cc_update_bytes < 1) throw ConfigError(fmt::format("{}.cc_update_bytes = 0: must be >= 1", p));
}

std::uint32_t CbfcConfig::credits_for(std::uint32_t bytes) const {
  const std::int64_t charged = static_cast<std::int64_t>(bytes) + overhead_bytes;
  if (charged <= 0) return 1;  // a stored frame holds at least one credit's worth of buffer
  return static_cast<std::uint32_t>((charged + credit_bytes - 1) / credit_bytes);
}

void CbfcConfig::check_holds_frame(std::uint32_t max_frame_bytes, const std::string& frame,
                                   const std::string& prefix) const {
  const std::uint32_t need = credits_for(max_frame_bytes);
  for (std::uint32_t buffer : buffer_credits)
    if (buffer < need)
      throw ConfigError(fmt::format("{}.buffer_credits = {}: less than one largest frame ({} = {} takes {} credits of "
                                    "{} B); allowed: at least {}",
                                    prefix, buffer, frame, max_frame_bytes, need, credit_bytes, need));
}

std::uint32_t CbfcConfig::counter_mask() const {
  return static_cast<std::uint32_t>((std::uint64_t{1} << counter_bits) - 1);
}

// --- sender ---

CbfcSender::CbfcSender(CbfcConfig config) : config_(std::move(config)) {
  config_.validate();
  mask_ = config_.counter_mask();
  consumed_.assign(config_.vcs, 0);
  freed_.assign(config_.vcs, 0);
  next_cc_ = config_.resync_period_cycles;
}

bool CbfcSender::can_send(int vc, std::uint32_t bytes) const {
  check_vc(config_, vc);
  return config_.credits_for(bytes) <= credits_available(vc);
}

void CbfcSender::on_send(int vc, std::uint32_t bytes) {
  if (!can_send(vc, bytes))
    throw std::logic_error(fmt::format("CBFC sender VC {}: a {}-byte frame needs {} credits, {} available", vc,
                                       bytes, config_.credits_for(bytes), credits_available(vc)));
  consumed_[vc] = (consumed_[vc] + config_.credits_for(bytes)) & mask_;
}

bool CbfcSender::on_cf_update(int vc, std::uint32_t freed_counter) {
  check_vc(config_, vc);
  // An older counter looks, modulo the range, like freeing almost everything: more than in use.
  if (((freed_counter - freed_[vc]) & mask_) > in_use(vc)) return false;
  freed_[vc] = freed_counter & mask_;
  return true;
}

std::optional<CreditUpdate> CbfcSender::poll(Cycle now) {
  if (now < next_cc_) return std::nullopt;
  next_cc_ = now + config_.resync_period_cycles;
  return CreditUpdate{CreditUpdate::kCc, -1, /*freed=*/0, consumed_, config_.cc_update_bytes};
}

// --- receiver ---

CbfcReceiver::CbfcReceiver(CbfcConfig config) : config_(std::move(config)) {
  config_.validate();
  mask_ = config_.counter_mask();
  spacing_credits_ = (config_.update_spacing_bytes + config_.credit_bytes - 1) / config_.credit_bytes;
  consumed_.assign(config_.vcs, 0);
  freed_.assign(config_.vcs, 0);
  reported_.assign(config_.vcs, 0);
  last_update_.assign(config_.vcs, 0);
}

std::uint32_t CbfcReceiver::on_receive(int vc, std::uint32_t bytes) {
  check_vc(config_, vc);
  const std::uint32_t credits = config_.credits_for(bytes);
  const std::uint64_t after = occupancy(vc) + static_cast<std::uint64_t>(credits);
  consumed_[vc] = (consumed_[vc] + credits) & mask_;
  const std::uint64_t buffer = config_.buffer_credits[vc];
  return after > buffer ? static_cast<std::uint32_t>(std::min<std::uint64_t>(credits, after - buffer)) : 0;
}

void CbfcReceiver::on_drain(int vc, std::uint32_t bytes) {
  check_vc(config_, vc);
  const std::uint32_t credits = config_.credits_for(bytes);
  if (credits > occupancy(vc))
    throw std::logic_error(fmt::format("CBFC receiver VC {}: drain of {} credits with {} buffered", vc, credits,
                                       occupancy(vc)));
  freed_[vc] = (freed_[vc] + credits) & mask_;
  next_timer_stale_ = true;
}

bool CbfcReceiver::on_cc_update(int vc, std::uint32_t consumed_counter) {
  check_vc(config_, vc);
  // Credits of frames that never arrived. The sender never has more than the buffer in use, so
  // more than the free space means a stale (older) counter.
  const std::uint32_t lost = (consumed_counter - consumed_[vc]) & mask_;
  if (std::uint64_t{lost} + occupancy(vc) > config_.buffer_credits[vc]) return false;
  consumed_[vc] = consumed_counter & mask_;
  freed_[vc] = (freed_[vc] + lost) & mask_;
  next_timer_stale_ = true;
  return true;
}

Cycle CbfcReceiver::wait(int vc) const {
  const Cycle refresh = config_.refresh_cycles;
  return unreported(vc) > 0 ? std::min(config_.update_timer_cycles, refresh) : refresh;
}

CreditUpdate CbfcReceiver::cf_update(int vc, Cycle now) {
  reported_[vc] = freed_[vc];
  last_update_[vc] = now;
  next_timer_stale_ = true;
  return CreditUpdate{CreditUpdate::kCf, vc, freed_[vc], /*counters=*/{}, config_.cf_update_bytes};
}

std::optional<CreditUpdate> CbfcReceiver::poll(Cycle now) {
  if (now < next_timer()) return std::nullopt;  // nothing due: the same test, kept
  int best = -1;
  bool best_urgent = false;
  for (int vc = 0; vc < config_.vcs; ++vc) {
    const std::uint32_t u = unreported(vc);
    const bool urgent = u >= spacing_credits_;
    if (!urgent && now < last_update_[vc] + wait(vc)) continue;
    // Urgent first, then most unreported, then the oldest update (round-robin among refreshes).
    const bool better = best < 0 || (urgent && !best_urgent) ||
                        (urgent == best_urgent &&
                         (u > unreported(best) || (u == unreported(best) && last_update_[vc] < last_update_[best])));
    if (better) best = vc, best_urgent = urgent;
  }
  if (best < 0) return std::nullopt;
  return cf_update(best, now);
}

Cycle CbfcReceiver::due_after_drain(int vc, std::uint32_t pending, std::uint32_t credits) const {
  check_vc(config_, vc);
  const std::uint32_t before = unreported(vc) + pending;
  if (before + credits >= spacing_credits_) return 0;
  return before ? ~Cycle{0} : last_update_[vc] + std::min(config_.update_timer_cycles, config_.refresh_cycles);
}

Cycle CbfcReceiver::earliest_update() const {
  Cycle next = ~Cycle{0};
  for (int vc = 0; vc < config_.vcs; ++vc) {
    if (unreported(vc) >= spacing_credits_) return 0;
    next = std::min(next, last_update_[vc] + wait(vc));
  }
  return next;
}

// --- buffer sizing ---

std::uint64_t required_buffer_credits(const CbfcConfig& config, double line_gbps, Time round_trip,
                                      std::uint32_t max_frame_bytes) {
  const double loop_bytes = line_gbps * static_cast<double>(round_trip) / 8e6;  // Gb/s x fs
  const auto loop_credits = static_cast<std::uint64_t>(std::ceil(loop_bytes / config.credit_bytes - 1e-9));
  const std::uint64_t held_back = (config.update_spacing_bytes + config.credit_bytes - 1) / config.credit_bytes;
  return loop_credits + config.credits_for(max_frame_bytes) + held_back;
}

std::string check_buffer(const CbfcConfig& config, double line_gbps, Time round_trip,
                         std::uint32_t max_frame_bytes) {
  config.validate();
  const std::uint64_t need = required_buffer_credits(config, line_gbps, round_trip, max_frame_bytes);
  std::string short_vcs;
  for (int vc = 0; vc < config.vcs; ++vc) {
    if (config.buffer_credits[vc] >= need) continue;
    short_vcs += fmt::format("{}VC {} has {}", short_vcs.empty() ? "" : ", ", vc, config.buffer_credits[vc]);
  }
  if (short_vcs.empty()) return "";
  std::string message = fmt::format(
      "CBFC buffer under-provisioned for a {} round trip at {} Gb/s with {}-byte frames: {} credits; each VC "
      "needs {} credits of {} B ({})",
      format_time(round_trip), line_gbps, max_frame_bytes, short_vcs, need, config.credit_bytes,
      format_bytes(static_cast<double>(need) * config.credit_bytes));
  const std::uint64_t most = (std::uint64_t{1} << (config.counter_bits - 1)) - 1;
  if (need > most)
    message += fmt::format(", more than {}-bit counters can track ({} credits): CBFC is per hop and short reach",
                           config.counter_bits, most);
  return message;
}

std::string cbfc_overflow(const std::string& port, const CbfcReceiver& r, int vc, std::uint32_t bytes,
                          std::uint32_t beyond, Cycle now) {
  const CbfcConfig& c = r.config();
  return fmt::format("CBFC overflow at {} VC {}, cycle {}: a {} B frame ({} credits) found {} of {} credits in use, {} "
                     "beyond the buffer: the sender sent without credits",
                     port, vc, now, bytes, c.credits_for(bytes), r.occupancy(vc) - c.credits_for(bytes),
                     c.buffer_credits[vc], beyond);
}

void CreditSender::probe(Waves& waves, const std::string& prefix) const {
  const unsigned bits = config().counter_bits;
  for (int vc = 0; vc < config().vcs; ++vc) {
    const std::string n = fmt::format("{}.vc{}", prefix, vc);
    waves.probe(n + ".credits", 32, [this, vc] { return credits_available(vc); });
    waves.probe(n + ".consumed", bits, [this, vc] { return consumed(vc); });
    waves.probe(n + ".freed", bits, [this, vc] { return freed(vc); });
  }
}

void CbfcReceiver::probe(Waves& waves, const std::string& prefix) const {
  const unsigned bits = config_.counter_bits;
  for (int vc = 0; vc < config_.vcs; ++vc) {
    const std::string n = fmt::format("{}.vc{}", prefix, vc);
    waves.probe(n + ".occupancy", 32, [this, vc] { return occupancy(vc); });
    waves.probe(n + ".consumed", bits, [this, vc] { return consumed(vc); });
    waves.probe(n + ".freed", bits, [this, vc] { return freed(vc); });
  }
}

}  // namespace xy::link
