// Times and rates (kernel/units.hpp): parsing, periods, beats, Gb/s.
#include "kernel/units.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace xy {
namespace {

TEST(Units, ParsesAndFormatsTimes) {
  EXPECT_EQ(parse_time("10us"), 10 * kUs);
  EXPECT_EQ(parse_time("1.5ns"), 1500 * kPs);
  EXPECT_EQ(parse_time("0"), 0u);
  EXPECT_THROW(parse_time("10 parsecs"), std::invalid_argument);
  EXPECT_THROW(parse_time("-1us"), std::invalid_argument);
  EXPECT_THROW(parse_time("infus"), std::invalid_argument);  // stod reads "inf"
  EXPECT_THROW(parse_time("1e308us"), std::invalid_argument);
  EXPECT_THROW(parse_time("9224s"), std::invalid_argument);  // 2^63 fs is 9223.4 s
  EXPECT_EQ(parse_time("9223s"), 9223 * 1000 * kMs);
  EXPECT_EQ(period_from_mhz(1000), kNs);
  EXPECT_EQ(period_from_mhz(1328.125), 752941u);  // 752.941 ps
  EXPECT_EQ(beats(65, 32), 3u);
  EXPECT_DOUBLE_EQ(gbps(32, kNs), 256.0);
}

}  // namespace
}  // namespace xy
