// Co-simulation: the ICRC engine twin (rtl/nic/xy_icrc.v) against nic::icrc on random RoCEv2
// packets (every opcode with its headers, payloads of 0 to 4096 bytes, random TOS, TTL, FECN and
// BECN), fed eight bytes an edge with idle cycles between packets; and the drop-in adapter
// (rtl/nic/icrc_twin.hpp) on the same packets. A twin that leaves TOS unmasked must be caught.
#include <verilated.h>  // before SystemC's headers (see delay_line_test.cpp)

#include "Vxy_icrc.h"
#include "Vxy_icrc_tos_unmasked.h"

#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "hw/nic/roce.hpp"
#include "kernel/rng.hpp"
#include "rtl/nic/icrc_twin.hpp"
#include "rtl/twin.hpp"

namespace xy {
namespace {

std::vector<std::uint8_t> random_packet(Rng& rng) {
  static const std::uint8_t kOps[] = {nic::opcode::kSendFirst,    nic::opcode::kSendOnly,       nic::opcode::kWriteFirst,
                                      nic::opcode::kWriteMiddle,  nic::opcode::kWriteOnly,      nic::opcode::kReadRequest,
                                      nic::opcode::kReadResponseFirst, nic::opcode::kReadResponseMiddle,
                                      nic::opcode::kAcknowledge,  nic::opcode::kCnp};
  nic::RoceHeader h;
  h.opcode = kOps[rng.below(std::size(kOps))];
  if (nic::has_reth(h.opcode)) h.reth = nic::Reth{rng.next(), static_cast<std::uint32_t>(rng.next()), 1u << 20};
  if (nic::has_aeth(h.opcode)) h.aeth = nic::Aeth{static_cast<std::uint8_t>(rng.below(256)), static_cast<std::uint32_t>(rng.below(1u << 24))};
  h.src_ip = static_cast<std::uint32_t>(rng.next());
  h.dst_ip = static_cast<std::uint32_t>(rng.next());
  h.dscp = static_cast<std::uint8_t>(rng.below(64));
  h.ecn = static_cast<nic::Ecn>(rng.below(4));
  h.ttl = static_cast<std::uint8_t>(rng.below(256));
  h.ip_id = static_cast<std::uint16_t>(rng.below(65536));
  h.src_port = static_cast<std::uint16_t>(rng.below(65536));
  h.udp_checksum = rng.chance(0.5);
  h.fecn = rng.chance(0.5);
  h.becn = rng.chance(0.5);
  h.dest_qp = static_cast<std::uint32_t>(rng.below(1u << 24));
  h.psn = static_cast<std::uint32_t>(rng.below(1u << 24));
  h.ack_req = rng.chance(0.5);
  std::vector<std::uint8_t> payload(rng.chance(0.2) ? rng.below(64) : rng.below(4097));
  for (auto& b : payload) b = static_cast<std::uint8_t>(rng.next());
  std::vector<std::uint8_t> frame;
  nic::encode(h, payload.data(), payload.size(), frame);
  return frame;
}

struct Result {
  std::uint64_t packets = 0, mismatches = 0, idle = 0;
};

template <class Rtl>
Result run(int packets, std::uint64_t seed) {
  VerilatedContext context;
  Rtl rtl(&context, "dut");
  cosim::reset(rtl, 1);
  Rng rng(seed, "cosim.icrc");
  Result r;
  for (int p = 0; p < packets; ++p) {
    const std::vector<std::uint8_t> f = random_packet(rng);
    const std::size_t end = nic::kEthernetBytes + (std::size_t{f[16]} << 8 | f[17]) - nic::kIcrcBytes;
    for (std::size_t at = nic::kEthernetBytes; at < end;) {
      const bool idle = rng.chance(0.1);  // idle cycles carry bytes the twin must ignore
      const std::size_t n = std::min<std::size_t>(8, end - at);
      std::uint64_t word = rng.next();
      if (!idle) {
        word = 0;
        for (std::size_t i = 0; i < n; ++i) word |= std::uint64_t{f[at + i]} << (8 * i);
      }
      rtl.in_valid = !idle;
      rtl.in_first = at == nic::kEthernetBytes;
      rtl.in_data = word;
      rtl.in_bytes = static_cast<std::uint8_t>(idle ? rng.between(1, 8) : n);
      cosim::clock_edge(rtl);
      if (idle) ++r.idle;
      else at += n;
    }
    ++r.packets;
    if (rtl.icrc != nic::icrc(f.data(), f.size())) ++r.mismatches;
  }
  rtl.final();
  return r;
}

int packets() { return std::getenv("XY_LONG") ? 200000 : 3000; }

TEST(IcrcCosim, TwinMatchesTheModelOnEveryPacket) {
  const Result r = run<Vxy_icrc>(packets(), 1);
  EXPECT_EQ(r.mismatches, 0u);
  EXPECT_EQ(r.packets, static_cast<std::uint64_t>(packets()));
  EXPECT_GT(r.idle, 1000u);
}

// Planted bug: TOS unmasked. Every packet whose TOS byte is not 0xFF gets another CRC.
TEST(IcrcCosim, ATwinThatLeavesTosUnmaskedIsCaught) {
  const Result r = run<Vxy_icrc_tos_unmasked>(200, 2);
  EXPECT_GT(r.mismatches, 190u);
}

// The drop-in adapter computes what the model computes, packet by packet.
TEST(IcrcCosim, TheDropInAgreesWithTheModel) {
  rtl::IcrcTwin twin;
  Rng rng(3, "cosim.icrc.dropin");
  for (int p = 0; p < 500; ++p) {
    const std::vector<std::uint8_t> f = random_packet(rng);
    ASSERT_EQ(twin.icrc(f.data(), f.size()), nic::icrc(f.data(), f.size())) << "packet " << p;
  }
}

}  // namespace
}  // namespace xy
