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

// A frame kept for replay lends its bytes to the copy on the line: the copy reads them however
// soon the kept one is released, and the kept one goes back to the pool only after that.
TEST(PacketPool, ALentPacketOutlivesItsReleaseUntilItsBytesAreRead) {
  PacketPool pool;
  Packet* kept = pool.acquire();
  kept->phantom = false;
  kept->id = 7;
  kept->payload = {1, 2, 3, 4, 5};
  Packet* line = pool.lend(kept);
  Packet* replay = pool.lend(kept);
  EXPECT_EQ(line->id, 7u);
  EXPECT_TRUE(line->payload.empty());
  EXPECT_EQ(line->size_now(), 5u);
  pool.release(kept);  // acknowledged: but two packets still owe its bytes
  EXPECT_EQ(pool.in_use(), 3u);
  EXPECT_EQ(line->bytes_now(), (std::vector<std::uint8_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(pool.in_use(), 3u);
  pool.release(replay);  // never read: the last borrower lets go, and the kept one is freed
  EXPECT_EQ(pool.in_use(), 1u);
  Packet* next = pool.acquire();  // the kept one or the replay, recycled clean
  EXPECT_TRUE(next->payload.empty());
  EXPECT_EQ(next->lent, 0u);
  EXPECT_EQ(next->lender, nullptr);
  EXPECT_EQ(line->bytes_now(), (std::vector<std::uint8_t>{1, 2, 3, 4, 5}));  // read once, kept
  pool.release(line);
  pool.release(next);
  EXPECT_EQ(pool.in_use(), 0u);
}

// A frame set aside (LLR's copy for a replay) is a copy of it; the frame's bytes move to the copy
// and are lent back: the frame reads them however soon the copy is released, which goes back to
// its own pool only after that.
TEST(PacketPool, AFrameSetAsideBorrowsBackItsBytes) {
  PacketPool pool, aside_pool;
  Packet* frame = pool.acquire();
  frame->phantom = false;
  frame->id = 7;
  frame->vc = 3;
  frame->stage_time[2] = 99;
  frame->payload = {1, 2, 3, 4, 5};
  Packet* kept = aside_pool.take_aside();
  aside_pool.set_aside(kept, frame);
  EXPECT_EQ(kept->id, 7u);
  EXPECT_EQ(kept->vc, 3);
  EXPECT_EQ(kept->stage_time[2], 99u);
  EXPECT_EQ(kept->payload, (std::vector<std::uint8_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(frame->size_now(), 5u);
  aside_pool.release_aside(kept);  // acknowledged before the frame arrived
  EXPECT_EQ(aside_pool.in_use(), 1u);
  EXPECT_EQ(frame->bytes_now(), (std::vector<std::uint8_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(aside_pool.in_use(), 0u);
  pool.release(frame);
  EXPECT_EQ(pool.in_use(), 0u);
}

// A frame whose bytes are owed (made from its fields) is set aside as its fields; a copy of
// either owes them as it does. An aside nothing borrows from is freed at once.
TEST(PacketPool, AnOwedFrameSetAsideOwesItsBytesToo) {
  PacketPool pool, aside_pool;
  Packet* frame = pool.acquire();
  frame->bytes = 3;
  frame->owed_bytes = 3;
  frame->owe = [](Packet& p) { p.payload.assign(p.owed_bytes, 0xAB); };
  Packet* kept = aside_pool.take_aside();
  aside_pool.set_aside(kept, frame);
  Packet* replay = pool.lend(kept);
  EXPECT_EQ(replay->lender, nullptr);
  EXPECT_EQ(replay->bytes_now(), (std::vector<std::uint8_t>(3, 0xAB)));
  EXPECT_EQ(frame->bytes_now(), (std::vector<std::uint8_t>(3, 0xAB)));
  aside_pool.release_aside(kept);
  EXPECT_EQ(aside_pool.in_use(), 0u);
  pool.release(replay);
  pool.release(frame);
  EXPECT_EQ(pool.in_use(), 0u);
}

// A copy takes its own bytes, made first if they were owed.
TEST(PacketPool, ACopyOwnsItsBytes) {
  PacketPool pool;
  Packet* a = pool.acquire();
  a->payload = {9, 8};
  Packet* b = pool.copy(a);
  pool.release(a);
  EXPECT_EQ(b->payload, (std::vector<std::uint8_t>{9, 8}));
  EXPECT_EQ(pool.in_use(), 1u);
  Packet* c = pool.lend(b);
  Packet* d = pool.copy(c);  // reads c's bytes: c no longer owes them
  EXPECT_EQ(c->lender, nullptr);
  EXPECT_EQ(d->payload, (std::vector<std::uint8_t>{9, 8}));
}

}  // namespace
}  // namespace xy
