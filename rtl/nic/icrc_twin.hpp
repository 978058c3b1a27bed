// The ICRC engine's RTL twin (xy_icrc.v, verilated --cc) behind nic::IcrcChecker, so that a NIC
// checks received ICRCs with the RTL in place of the model: nic.icrc.impl=rtl. A frame is fed
// from its IPv4 header to its ICRC, eight bytes an edge.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>

#include "hw/nic/roce.hpp"

namespace xy::rtl {

class IcrcTwin final : public nic::IcrcChecker {
 public:
  IcrcTwin();
  ~IcrcTwin() override;
  std::uint32_t icrc(const std::uint8_t* frame, std::size_t size) override;

 private:
  struct Rtl;
  std::unique_ptr<Rtl> rtl_;
};

}  // namespace xy::rtl
