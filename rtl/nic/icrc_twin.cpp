#include <verilated.h>

#include "Vxy_icrc_dropin.h"
#include "rtl/nic/icrc_twin.hpp"

#include <algorithm>

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
  const std::size_t end = nic::icrc_offset(frame, size);
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
