// ENCC's controller (hw/nic/encc.hpp) against HPCC's rule worked by hand here: per hop
// u = txRate / B + min(qlen, qlen before) / (B T), the estimate moved by τ / T, then
// R = R_c / (u / η) + R_AI, committed once a round trip.
#include "hw/nic/encc.hpp"

#include <gtest/gtest.h>

#include <string>

#include "kernel/config.hpp"

namespace xy::nic {
namespace {

constexpr double kLine = 100e9;
constexpr Time kT = 10 * kUs;
constexpr int k100G = 2;  // the INT line-rate code of 100 Gb/s

// One hop's record: at `ns`, `units` of 128 bytes sent, `queue_units` of 80 bytes queued.
sw::TelemetryRecords one_hop(std::uint32_t ns, std::uint32_t units, std::uint32_t queue_units) {
  sw::TelemetryRecords r;
  r.hops = 1;
  r.hop[0] = {ns, units, queue_units, k100G};
  return r;
}

TEST(Encc, TheFirstAckOnlyTakesItsRecordsAsTheBaseline) {
  EnccController c(EnccConfig::hpcc(kLine, kT));
  c.on_ack(one_hop(1000, 0, 5000), 1, 100);
  EXPECT_EQ(c.rate(), kLine);
  EXPECT_EQ(c.stats().commits, 0u);
}

// 5 µs later the hop has sent 488 units (62464 B: 99.94 Gb/s) and holds 100 units (8000 B),
// having held 50 (4000 B): u = 0.99942 + 4000 B / (100 Gb/s x 10 µs) = 1.03142; the estimate
// moves halfway from 1 (τ / T = 0.5), and the rate is R_c / (u / 0.95) + 40 Mb/s.
TEST(Encc, AnAckBeyondTheLastCommitSetsTheRateFromTheHopsUtilisation) {
  const EnccConfig cfg = EnccConfig::hpcc(kLine, kT);
  EXPECT_DOUBLE_EQ(cfg.rai_bps, 40e6);  // 10 Mb/s per 25 Gb/s of line
  EnccController c(cfg);
  c.on_ack(one_hop(1000, 0, 50), 1, 100);
  c.on_ack(one_hop(6000, 488, 100), 101, 300);
  const double u = 488.0 * 128 * 8 / 5000 / 100 + 4000.0 * 8 / (100 * 10000);
  const double estimate = (1.0 * 5000 + u * 5000) / 10000;
  EXPECT_NEAR(c.utilisation(), estimate, 1e-12);
  EXPECT_NEAR(c.rate(), kLine / (estimate / 0.95) + 40e6, 1);
  EXPECT_EQ(c.committed_rate(), c.rate());
  EXPECT_EQ(c.stats().commits, 1u);
  // The window: what the rate keeps in flight over T, 100 Gb/s x 10 µs = 125000 B at line rate.
  EXPECT_NEAR(c.window_bytes(), 125000 * c.rate() / kLine, 1e-6);
}

// An ACK that does not pass the PSN sent at the last commit reacts from the committed rate
// without committing: two such ACKs in a row do not compound.
TEST(Encc, AcksWithinARoundTripReactFromTheCommittedRateWithoutCompounding) {
  EnccController c(EnccConfig::hpcc(kLine, kT));
  c.on_ack(one_hop(1000, 0, 0), 1, 100);
  c.on_ack(one_hop(6000, 488, 0), 101, 300);  // commits
  const double committed = c.committed_rate();
  c.on_ack(one_hop(7000, 488 + 98, 0), 150, 300);  // 98 units in 1 µs: 100.35 Gb/s
  const double first = c.rate();
  const double u1 = c.utilisation();
  EXPECT_NEAR(first, std::min(kLine, committed / (u1 / 0.95) + 40e6), 1);
  EXPECT_EQ(c.committed_rate(), committed);
  c.on_ack(one_hop(8000, 488 + 196, 0), 200, 300);
  EXPECT_NEAR(c.rate(), std::min(kLine, committed / (c.utilisation() / 0.95) + 40e6), 1);
  EXPECT_EQ(c.committed_rate(), committed);
  EXPECT_EQ(c.stats().commits, 1u);
}

// A hop at half load with no queue, τ = T: the estimate becomes U = 0.5 and the rate goes back
// up to the line (0.95 / 0.5 of the committed rate, capped).
TEST(Encc, AHalfLoadedPathTakesTheRateBackToTheLine) {
  EnccController c(EnccConfig::hpcc(kLine, kT));
  c.on_ack(one_hop(1000, 0, 50), 1, 100);
  c.on_ack(one_hop(6000, 488, 100), 101, 300);  // above η: the rate falls below the line
  ASSERT_LT(c.rate(), kLine);
  c.on_ack(one_hop(16000, 488 + 488, 0), 301, 400);  // 62464 B in 10 µs: 50 Gb/s
  EXPECT_NEAR(c.utilisation(), 488.0 * 128 * 8 / 10000 / 100, 1e-12);
  EXPECT_EQ(c.rate(), kLine);
}

TEST(Encc, AnAckWithoutRecordsIsSkipped) {
  EnccController c(EnccConfig::hpcc(kLine, kT));
  c.on_ack(sw::TelemetryRecords{}, 1, 100);
  EXPECT_EQ(c.stats().skipped, 1u);
  EXPECT_EQ(c.rate(), kLine);
}

TEST(Encc, BadConfigurationIsRefusedByName) {
  EnccConfig c = EnccConfig::hpcc(kLine, kT);
  c.eta = 1.5;
  EXPECT_THROW(c.validate("nic.encc"), ConfigError);
  c = EnccConfig::hpcc(kLine, kT);
  c.min_rate_bps = 2 * kLine;
  try {
    c.validate("nic.encc");
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("nic.encc.min_rate_bps"), std::string::npos);
  }
}

}  // namespace
}  // namespace xy::nic
