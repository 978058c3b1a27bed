// Packets (kernel/packet.hpp): the pool recycles them.
#include "kernel/packet.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace xy {
namespace {

TEST(PacketPool, RecyclesPacketsWithoutNewAllocations) {
  PacketPool pool;
  std::vector<Packet*> held;
  for (int round = 0; round < 100; ++round) {
    for (int i = 0; i < 10; ++i) held.push_back(pool.acquire());
    for (Packet* p : held) pool.release(p);
    held.clear();
  }
  EXPECT_EQ(pool.allocated(), 10u);
  EXPECT_EQ(pool.in_use(), 0u);
}

}  // namespace
}  // namespace xy
