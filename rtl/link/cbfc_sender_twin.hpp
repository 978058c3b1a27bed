// The CBFC sender's RTL twin (xy_cbfc_sender.v, verilated --cc) behind the model's interface, so
// that a port runs the RTL in place of link::CbfcSender: link-cbfc with cbfc.impl=rtl.
//
// Each call that changes state is one rising edge, with its inputs and the port clock's cycle on
// `now`: a second frame or CF_Update within a cycle (which the model allows) is a second edge,
// and idle cycles take none, as the twin keeps time by `now` rather than by counting edges.
// Queries (can_send, consumed, freed, next_timer) read outputs without an edge.
//
// --cc rather than --sc: the port asks can_send() of several VCs and sends several frames within
// one evaluation of its clock domain, which needs the twin's answers at once; a --sc model answers
// through signals, a delta cycle later.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "hw/link/cbfc.hpp"
#include "kernel/clock.hpp"

namespace xy::rtl {

class CbfcSenderTwin final : public link::CreditSender {
 public:
  // Throws ConfigError naming `prefix`.field for a config the twin is not built for.
  static void check(const link::CbfcConfig& config, const std::string& prefix = "cbfc");
  CbfcSenderTwin(const link::CbfcConfig& config, const Clock& clock);  // checks
  ~CbfcSenderTwin() override;

  bool can_send(int vc, std::uint32_t bytes) const override;
  void on_send(int vc, std::uint32_t bytes) override;
  bool on_cf_update(int vc, std::uint32_t freed_counter) override;
  std::optional<link::CreditUpdate> poll(Cycle now) override;
  Cycle next_timer() const override;
  std::uint32_t consumed(int vc) const override;  // the twin's registers, through its probe port
  std::uint32_t freed(int vc) const override;
  const link::CbfcConfig& config() const override { return config_; }
  void probe(Waves& waves, const std::string& prefix) const override;  // the model's, and its ports

 private:
  struct Rtl;
  void check_vc(int vc) const;
  void edge();

  link::CbfcConfig config_;
  const Clock& clock_;
  std::unique_ptr<Rtl> rtl_;
};

}  // namespace xy::rtl
