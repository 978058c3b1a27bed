// Ring (kernel/ring.hpp) against std::deque: the same items in the same order through wrap-arounds
// and growth, and its count of pops.
#include "kernel/ring.hpp"

#include <gtest/gtest.h>

#include <deque>

namespace xy {
namespace {

TEST(Ring, KeepsFifoOrderThroughWrapsAndGrowthAndCountsPops) {
  Ring<int> ring(4);
  std::deque<int> reference;
  int next = 0;
  std::uint64_t pops = 0;
  // Fill by 3 and drain by 2 for a while (wrapping the small ring, then growing it), then drain.
  for (int round = 0; round < 200; ++round) {
    for (int i = 0; i < 3; ++i) {
      ring.push(next);
      reference.push_back(next++);
    }
    for (int i = 0; i < 2; ++i) {
      ASSERT_EQ(ring.front(), reference.front());
      ASSERT_EQ(ring.pop(), reference.front());
      reference.pop_front();
      ++pops;
    }
    ASSERT_EQ(ring.size(), reference.size());
    for (std::size_t i = 0; i < reference.size(); i += 17) ASSERT_EQ(ring[i], reference[i]);
  }
  const Ring<int> copy = ring;
  while (!reference.empty()) {
    ASSERT_EQ(ring.pop(), reference.front());
    reference.pop_front();
    ++pops;
  }
  EXPECT_TRUE(ring.empty());
  EXPECT_EQ(ring.popped(), pops);
  EXPECT_EQ(pops, 600u);
  EXPECT_EQ(copy.size(), 200u);
  EXPECT_EQ(copy.front(), 400);
  EXPECT_EQ(copy.popped(), 400u);
}

}  // namespace
}  // namespace xy
