#include <gtest/gtest.h>

#include "hw/phy/phy.hpp"

namespace xy::phy {
namespace {

PhyParams params(std::vector<std::string> sets) {
  Config c;
  for (const auto& s : sets) c.set_from_assignment(s);
  return PhyParams::declare(c, "phy");
}

TEST(PhyParams, CodewordTimingFollowsLanesAndCode) {
  const PhyParams p = params({});
  EXPECT_EQ(p.period(), 376471u);          // 106.25 Gb/s / 40 bits = 2.65625 GHz
  EXPECT_EQ(p.group_cycles(), 34u);        // 5440 bits over 4 lanes x 40 bits
  EXPECT_EQ(params({"phy.lanes=1"}).group_cycles(), 136u);  // 51.2 ns per KP4 codeword on one lane
  EXPECT_EQ(params({"phy.fec=rs272"}).group_cycles(), 17u);
  EXPECT_EQ(params({"phy.fec=rs272", "phy.lanes=8", "phy.interleave=2"}).group_cycles(), 17u);
}

TEST(PhyParams, LightFecLatencyIsAboutHalfOfKp4WithTheDefaults) {
  const PhyParams kp4 = params({}), light = params({"phy.fec=rs272"});
  const double a = static_cast<double>(kp4.group_cycles() + kp4.decoder_cycles());
  const double b = static_cast<double>(light.group_cycles() + light.decoder_cycles());
  EXPECT_NEAR(b / a, 0.5, 0.05);
}

TEST(PhyParams, BadValuesNameTheKey) {
  EXPECT_THROW(params({"phy.lanes=3"}), ConfigError);
  EXPECT_THROW(params({"phy.errors.ber=1"}), ConfigError);
  EXPECT_THROW(params({"phy.fec=rs999"}), ConfigError);
  try {
    params({"phy.fec=rs272", "phy.lanes=8", "phy.interleave=1"});  // the default there is 2
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("phy.interleave = 2"), std::string::npos);
  }
}

TEST(PhyParams, BinomialCodewordErrorRatio) {
  const PhyParams kp4 = params({});
  EXPECT_DOUBLE_EQ(codeword_error_ratio(kp4, 0), 0.0);
  // KP4's design point: pre-FEC BER 2.4e-4 gives a codeword error ratio far below 1e-10.
  EXPECT_LT(codeword_error_ratio(kp4, 2.4e-4), 1e-10);
  EXPECT_GT(codeword_error_ratio(kp4, 2e-3), 0.01);
  EXPECT_GT(codeword_error_ratio(params({"phy.fec=rs272"}), 2.4e-4), codeword_error_ratio(kp4, 2.4e-4));
}

}  // namespace
}  // namespace xy::phy
