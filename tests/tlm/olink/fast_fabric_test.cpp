// The fast, approximately timed OLink fabric (tlm/olink/fast_fabric.hpp): its calendars, and the
// transactions every OLink target serves (tests/tlm/olink/transactions.hpp).
#include "tlm/olink/fast_fabric.hpp"

#include <gtest/gtest.h>

#include "tests/tlm/olink/transactions.hpp"

namespace xy::olink {
namespace {

TEST(Calendar, AnIdleResourceTakesOnlyTheTransfersOwnTime) {
  Calendar line(64);
  EXPECT_EQ(line.book(1000, 64, 0), 1000u);       // one cycle
  EXPECT_EQ(line.book(5000, 334, 0), 5000u + 5);  // ceil(334 / 64) = 6 cycles
}

TEST(Calendar, BackToBackTransfersQueueAndCapacityIsNeverExceeded) {
  Calendar line(64);
  Cycle last = 0;
  for (int i = 0; i < 1000; ++i) last = line.book(0, 640, 0);  // 10 cycles each, all ready at 0
  EXPECT_EQ(last, 10000u - 1);
  // A transfer booked later for an earlier time still finds the line full until then.
  EXPECT_GE(line.book(100, 64, 0), 10000u);
}

TEST(Calendar, BucketsLeftBehindByTimeAreFreeWhenReused) {
  Calendar line(1);  // one byte a cycle: a bucket holds 64
  for (Cycle t = 0; t < 1000000; t += 50) ASSERT_EQ(line.book(t, 40, t), t + 39) << "at " << t;
}


// A fast fabric of `gpus` GPUs, 1 GHz, 20-cycle links.
FastParams fast_params(std::uint32_t gpus) {
  FastParams p;
  p.period = kNs;
  p.link = 20;
  p.endpoint.gpus = gpus;
  return p;
}

TEST(OlinkFastFabric, A64KiBBulkWriteArrivesWholeAndTakesItsSerialisation) {
  FastFabric fabric("fast", fast_params(2));
  testing::expect_bulk_write([&](int g) -> tlm::tlm_target_socket<>& { return fabric.socket(g); },
                    [&](std::uint64_t o, std::uint8_t* d, std::uint32_t n) { fabric.memory(1).read(o, d, n); });
}

TEST(OlinkFastFabric, FetchAddsFromEveryGpuSumExactlyAndReturnUniqueOldValues) {
  FastFabric fabric("fast", fast_params(4));
  testing::expect_atomic_fetch_adds([&](int g) -> tlm::tlm_target_socket<>& { return fabric.socket(g); },
                           [&] {
                             std::uint64_t v = 0;
                             fabric.memory(0).read(4096, reinterpret_cast<std::uint8_t*>(&v), 8);
                             return v;
                           });
}

TEST(OlinkFastFabric, TimingOnlyTakesTheSameTimesAndKeepsNoData) {
  FastParams p = fast_params(2);
  FastFabric with_data("with_data", p);
  p.data = false;
  FastFabric timing_only("timing_only", p);
  testing::expect_timing_only([&](int g) -> tlm::tlm_target_socket<>& { return with_data.socket(g); },
                     [&](int g) -> tlm::tlm_target_socket<>& { return timing_only.socket(g); },
                     [&](std::uint64_t o, std::uint8_t* d, std::uint32_t b) { timing_only.memory(1).read(o, d, b); });
}

}  // namespace
}  // namespace xy::olink
