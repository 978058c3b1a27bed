#include <verilated.h>  // before SystemC's headers (see tests/cosim/delay_line_test.cpp)

#include "Vxy_cbfc_sender_dropin.h"

#include "rtl/link/cbfc_sender_twin.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "rtl/twin.hpp"
#include "kernel/config.hpp"

namespace xy::rtl {

// The twin's build parameters, from rtl/CMakeLists.txt.
constexpr int kVcs = XY_CBFC_TWIN_VCS;
constexpr std::uint32_t kCounterBits = XY_CBFC_TWIN_COUNTER_BITS;
constexpr std::uint32_t kCreditBytes = 1u << XY_CBFC_TWIN_CREDIT_SHIFT;
constexpr std::int32_t kOverhead = XY_CBFC_TWIN_OVERHEAD;
constexpr std::uint32_t kMaxFrameBytes = (1u << XY_CBFC_TWIN_BYTES_BITS) - 1;

struct CbfcSenderTwin::Rtl {
  VerilatedContext context;
  Vxy_cbfc_sender_dropin top{&context, "cbfc_sender"};
};

void CbfcSenderTwin::check(const link::CbfcConfig& config, const std::string& prefix) {
  config.validate(prefix);
  const auto built_for = [&](const std::string& field, auto value, auto built) {
    if (value != built)
      throw ConfigError(fmt::format("{}.{} = {}: the RTL twin ({}.impl=rtl) is built for {}; allowed: {}", prefix,
                                    field, value, prefix, built, built));
  };
  if (config.vcs > kVcs)
    throw ConfigError(fmt::format("{}.vcs = {}: the RTL twin ({}.impl=rtl) has {} VCs; allowed: 1..{}", prefix,
                                  config.vcs, prefix, kVcs, kVcs));
  built_for("counter_bits", config.counter_bits, kCounterBits);
  built_for("credit_bytes", config.credit_bytes, kCreditBytes);
  built_for("overhead_bytes", config.overhead_bytes, kOverhead);
  const auto& buffers = config.buffer_credits;
  if (std::adjacent_find(buffers.begin(), buffers.end(), std::not_equal_to<>()) != buffers.end())
    throw ConfigError(fmt::format("{}.buffer_credits: the RTL twin ({}.impl=rtl) has one buffer size for every VC",
                                  prefix, prefix));
}

CbfcSenderTwin::CbfcSenderTwin(const link::CbfcConfig& config, const Clock& clock)
    : config_(config), clock_(clock), rtl_(std::make_unique<Rtl>()) {
  check(config_);
  auto& top = rtl_->top;
  top.buffer_credits = config_.buffer_credits[0];
  top.resync_period = config_.resync_period_cycles;
  top.now = 0;
  cosim::reset(top);
}

CbfcSenderTwin::~CbfcSenderTwin() { rtl_->top.final(); }

void CbfcSenderTwin::check_vc(int vc) const {
  if (vc < 0 || vc >= config_.vcs) throw std::out_of_range(fmt::format("CBFC VC {} of {}", vc, config_.vcs));
}

void CbfcSenderTwin::edge() {
  cosim::clock_edge(rtl_->top);
  auto& top = rtl_->top;
  top.frame_valid = 0;
  top.cf_valid = 0;
  top.cc_taken = 0;
}

bool CbfcSenderTwin::can_send(int vc, std::uint32_t bytes) const {
  check_vc(vc);
  if (bytes > kMaxFrameBytes)
    throw std::out_of_range(fmt::format("a frame of {} bytes: the RTL twin takes up to {}", bytes, kMaxFrameBytes));
  auto& top = rtl_->top;
  top.frame_vc = static_cast<std::uint8_t>(vc);
  top.frame_bytes = static_cast<std::uint16_t>(bytes);
  top.eval();
  return top.can_send;
}

void CbfcSenderTwin::on_send(int vc, std::uint32_t bytes) {
  if (!can_send(vc, bytes))
    throw std::logic_error(fmt::format("CBFC VC {}: a frame of {} bytes sent without the credits", vc, bytes));
  auto& top = rtl_->top;
  top.now = clock_.now();
  top.frame_valid = 1;
  edge();
}

bool CbfcSenderTwin::on_cf_update(int vc, std::uint32_t freed_counter) {
  check_vc(vc);
  auto& top = rtl_->top;
  top.now = clock_.now();
  top.cf_valid = 1;
  top.cf_vc = static_cast<std::uint8_t>(vc);
  top.cf_counter = freed_counter;
  top.eval();
  const bool accepted = top.cf_accepted;
  edge();
  return accepted;
}

std::optional<link::CreditUpdate> CbfcSenderTwin::poll(Cycle now) {
  auto& top = rtl_->top;
  top.now = now;
  top.eval();
  if (!top.cc_due) return std::nullopt;
  link::CreditUpdate cc{link::CreditUpdate::kCc, -1, /*freed=*/0, {}, config_.cc_update_bytes};
  for (int vc = 0; vc < config_.vcs; ++vc) cc.counters.push_back(consumed(vc));
  top.cc_taken = 1;
  edge();
  return cc;
}

Cycle CbfcSenderTwin::next_timer() const { return rtl_->top.cc_next; }

void CbfcSenderTwin::probe(Waves& waves, const std::string& prefix) const {
  CreditSender::probe(waves, prefix);
  const auto& top = rtl_->top;
  const std::string n = prefix + ".rtl.";
  waves.probe(n + "can_send", 1, [&top] { return top.can_send; });
  waves.probe(n + "cf_accepted", 1, [&top] { return top.cf_accepted; });
  waves.probe(n + "cc_due", 1, [&top] { return top.cc_due; });
  waves.probe(n + "cc_next", XY_CBFC_TWIN_TIMER_BITS, [&top] { return top.cc_next; });
}

std::uint32_t CbfcSenderTwin::consumed(int vc) const {
  check_vc(vc);
  rtl_->top.probe_vc = static_cast<std::uint8_t>(vc);
  rtl_->top.eval();
  return rtl_->top.probe_consumed;
}

std::uint32_t CbfcSenderTwin::freed(int vc) const {
  check_vc(vc);
  rtl_->top.probe_vc = static_cast<std::uint8_t>(vc);
  rtl_->top.eval();
  return rtl_->top.probe_freed;
}

}  // namespace xy::rtl
