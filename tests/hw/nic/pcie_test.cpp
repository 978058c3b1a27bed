// The NIC's PCIe link (hw/nic/pcie.hpp) against the arithmetic of the PCIe wire, written here:
// Gen5 x16 carries 16 x 32 GT/s x 128/130 = 65536/1040 bytes a ns each way; a memory write TLP
// adds 24 bytes (4 STP, 16 header, 4 LCRC) to at most 256 of payload, a completion 20.
#include "hw/nic/pcie.hpp"

#include <gtest/gtest.h>

#include "kernel/config.hpp"

namespace xy::nic {
namespace {

// Time to put `bytes` on a Gen5 x16 direction, and a time in ns, as doubles.
double wire(double bytes) { return bytes * 1040.0 / 65536.0 * kNs; }
double ns(double t) { return t * kNs; }
constexpr double kTolerance = 2 * kPs;

TEST(Pcie, Gen5x16CarriesSixtyThreeGigabytesASecondEachWay) {
  PcieConfig c;
  EXPECT_DOUBLE_EQ(c.bytes_per_ns(), 65536.0 / 1040.0);
  c.lanes = 4;
  EXPECT_DOUBLE_EQ(c.bytes_per_ns(), 65536.0 / 1040.0 / 4);
}

// 1 MiB in 4096 TLPs of 256 + 24 bytes: 1 146 880 bytes, 18.2 us exactly, then the latency.
TEST(Pcie, APostedWriteTakesItsTlpsOnTheWireThenTheLatency) {
  PcieLink link{PcieConfig{}};
  const Time done = link.write(1 << 20, 0);
  EXPECT_NEAR(static_cast<double>(done), ns(18200 + 250), kTolerance);
  EXPECT_EQ(link.upstream_bytes(), 1146880u);
  // The next write waits for the first to leave: 18.2 us more.
  EXPECT_NEAR(static_cast<double>(link.write(1 << 20, 0)), ns(2 * 18200 + 250), kTolerance);
  EXPECT_NEAR(static_cast<double>(link.upstream_peak_wait()), ns(18200), kTolerance);
  EXPECT_EQ(link.downstream_peak_wait(), 0u);
}

// A 64-byte WQE fetched: a 24-byte request up, the latency, the memory's, 64 + 20 bytes down,
// the latency again.
TEST(Pcie, AReadIsARoundTripAndItsCompletions) {
  PcieLink link{PcieConfig{}};
  const double expected = wire(24) + ns(250 + 100) + wire(84) + ns(250);
  EXPECT_NEAR(static_cast<double>(link.read(64, 0)), expected, kTolerance);
  // 1 MiB: 2048 requests of 512 bytes up, 4096 completions of 256 + 20 down after the first arrived.
  PcieLink big{PcieConfig{}};
  const double big_expected = wire(24) + ns(350) + wire(4096 * 276.0) + ns(250);
  EXPECT_NEAR(static_cast<double>(big.read(1 << 20, 0)), big_expected, kTolerance);
  EXPECT_EQ(big.upstream_bytes(), 2048u * 24);
  EXPECT_EQ(big.downstream_bytes(), 4096u * 276);
}

// The directions are independent; each is first come, first served: a doorbell rung while a
// read's completions come down waits for them; a write up waits for the read's 2048 requests
// (49 152 bytes), not for its completions.
TEST(Pcie, EachDirectionServesInOrderAndTheyAreIndependent) {
  PcieLink link{PcieConfig{}};
  const Time read_done = link.read(1 << 20, 0);
  const double completions_end = static_cast<double>(read_done) - ns(250);
  EXPECT_NEAR(static_cast<double>(link.doorbell(400 * kNs)), completions_end + wire(32) + ns(250), kTolerance);
  EXPECT_NEAR(static_cast<double>(link.write(64, 400 * kNs)), wire(2048 * 24) + wire(88) + ns(250), kTolerance);
}

// A read's completions are booked for when its data comes back: a doorbell rung meanwhile goes
// in the idle stretch before them, as it would on the wire, not behind them.
TEST(Pcie, ATransferBookedForLaterDoesNotHoldBackOneThatFitsBefore) {
  PcieLink link{PcieConfig{}};
  link.read(64, 0);
  EXPECT_NEAR(static_cast<double>(link.doorbell(0)), wire(32) + ns(250), kTolerance);
  EXPECT_EQ(link.downstream_peak_wait(), 0u);
}

TEST(Pcie, BadConfigurationIsRefusedByName) {
  PcieConfig c;
  c.lanes = 3;
  try {
    c.validate("nic.pcie");
    FAIL() << "lanes = 3 accepted";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "nic.pcie.lanes = 3: allowed 1, 2, 4, 8, 16");
  }
  c.lanes = 16;
  c.max_payload = 300;
  EXPECT_THROW(c.validate("nic.pcie"), ConfigError);
}

}  // namespace
}  // namespace xy::nic
