#include <verilated.h>

#include "Vxy_icrc_dropin.h"
#include "rtl/nic/icrc_twin.hpp"

#include <stdexcept>

#include "rtl/twin.hpp"

namespace xy::rtl {

struct IcrcTwin::Rtl {
  VerilatedContext context;
  Vxy_icrc_dropin top{&context, "icrc"};
};

IcrcTwin::IcrcTwin() : rtl_(std::make_unique<Rtl>()) { cosim::reset(rtl_->top); }

IcrcTwin::~IcrcTwin() { rtl_->top.final(); }

std::uint32_t IcrcTwin::icrc(const std::uint8_t* frame, std::size_t size) {
  constexpr std::size_t kIp = nic::kEthernetBytes;
  if (size < kIp + nic::kIpv4Bytes + nic::kUdpBytes + nic::kBthBytes + nic::kIcrcBytes)
    throw std::logic_error("icrc twin: frame too short for RoCEv2");
  const std::size_t end = kIp + (std::size_t{frame[kIp + 2]} << 8 | frame[kIp + 3]) - nic::kIcrcBytes;
  if (end > size - nic::kIcrcBytes) throw std::logic_error("icrc twin: IP length outside the frame");
  Vxy_icrc_dropin& top = rtl_->top;
  for (std::size_t at = kIp; at < end; at += 8) {
    const std::size_t n = std::min<std::size_t>(8, end - at);
    std::uint64_t word = 0;
    for (std::size_t i = 0; i < n; ++i) word |= std::uint64_t{frame[at + i]} << (8 * i);
    top.in_valid = 1;
    top.in_first = at == kIp;
    top.in_data = word;
    top.in_bytes = static_cast<std::uint8_t>(n);
    cosim::clock_edge(top);
  }
  top.in_valid = 0;
  return top.icrc;
}

}  // namespace xy::rtl
