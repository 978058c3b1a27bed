// Transactions every OLink target must serve alike, whatever fabric carries them (the endpoints on
// a cycle-level switch, tlm/olink/endpoint.hpp, and the fast fabric, tlm/olink/fast_fabric.hpp):
// each runs GpuInitiators (tb/lib/gpu.hpp) against the sockets it is given. One simulation per
// process.
#pragma once
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <memory>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "tb/lib/gpu.hpp"
#include "tlm/olink/olink.hpp"

namespace xy::olink::testing {

// kGpus GPUs each fetch-add 1 to one word kEach times: the word ends at kGpus·kEach and every
// old value 0 … kGpus·kEach−1 comes back exactly once.
inline void expect_atomic_fetch_adds(const std::function<tlm::tlm_target_socket<>&(int)>& socket_of,
                                     const std::function<std::uint64_t()>& final_value) {
  constexpr int kGpus = 4, kEach = 50;
  std::vector<std::unique_ptr<GpuInitiator>> gpus;
  for (int g = 0; g < kGpus; ++g) {
    std::vector<Access> program(kEach, Access{Access::kFetchAdd, uva(0, 4096), 8, 1});
    gpus.push_back(std::make_unique<GpuInitiator>(("init" + std::to_string(g)).c_str(), program, sc_core::SC_ZERO_TIME));
    gpus.back()->socket.bind(socket_of(g));
  }
  sc_core::sc_start(to_sc_time(kMs));
  std::set<std::uint64_t> olds;
  for (const auto& g : gpus) {
    ASSERT_TRUE(g->done());
    for (const auto& r : g->results()) {
      EXPECT_EQ(r.status, tlm::TLM_OK_RESPONSE);
      olds.insert(r.value);
    }
  }
  EXPECT_EQ(final_value(), static_cast<std::uint64_t>(kGpus * kEach));
  EXPECT_EQ(olds.size(), static_cast<std::size_t>(kGpus * kEach));
  EXPECT_EQ(*olds.rbegin(), static_cast<std::uint64_t>(kGpus * kEach - 1));
}

// GPU 0 bulk-writes 64 KiB into GPU 1 (dual mode: 16 Stores of 4 KiB), loads the last 64 bytes
// back, and tries a write over the bulk limit: data intact, the bulk write takes at least its
// serialisation on a 64-byte-per-ns line, the oversize write is refused.
inline void expect_bulk_write(const std::function<tlm::tlm_target_socket<>&(int)>& socket_of,
                              const std::function<void(std::uint64_t, std::uint8_t*, std::uint32_t)>& peek) {
  constexpr std::uint32_t kBulk = 65536;
  const std::vector<Access> program = {{Access::kStore, uva(1, 8192), kBulk, 0},
                                       {Access::kLoad, uva(1, 8192 + kBulk - 64), 64, 0},
                                       {Access::kStore, uva(1, 0), (1u << 20) + 1, 0}};
  GpuInitiator gpu("bulk", program, sc_core::SC_ZERO_TIME);
  gpu.socket.bind(socket_of(0));
  GpuInitiator idle("idle", {}, sc_core::SC_ZERO_TIME);
  idle.socket.bind(socket_of(1));
  sc_core::sc_start(to_sc_time(kMs));
  ASSERT_TRUE(gpu.done());
  const auto& r = gpu.results();
  EXPECT_EQ(r[0].status, tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(r[1].status, tlm::TLM_OK_RESPONSE);
  EXPECT_EQ(r[2].status, tlm::TLM_GENERIC_ERROR_RESPONSE);
  const double serialise_ns = 16.0 * (4096 + 58 + 20) / 64;
  EXPECT_GE(r[0].latency.to_seconds() * 1e9, serialise_ns);
  EXPECT_LT(r[0].latency.to_seconds() * 1e9, serialise_ns + 2000);
  std::vector<std::uint8_t> stored(kBulk);
  peek(8192, stored.data(), kBulk);
  for (std::uint32_t i = 0; i < kBulk; ++i) ASSERT_EQ(stored[i], i % 251) << "byte " << i;
  std::uint64_t expected = 0;
  std::memcpy(&expected, stored.data() + kBulk - 64, 8);
  EXPECT_EQ(r[1].value, expected);
}

// Timing only: the same transactions take the same time as with data, but nothing is kept —
// the load after the bulk write reads zeros, and the owner's memory stays empty. `with_data` and
// `timing_only` give GPU g's socket of two fabrics; `peek` reads GPU 1's memory in the second.
inline void expect_timing_only(const std::function<tlm::tlm_target_socket<>&(int)>& with_data,
                               const std::function<tlm::tlm_target_socket<>&(int)>& timing_only,
                               const std::function<void(std::uint64_t, std::uint8_t*, std::uint32_t)>& peek) {
  const std::vector<Access> program = {{Access::kStore, uva(1, 8192), 65536, 0},
                                       {Access::kLoad, uva(1, 8192), 64, 0},
                                       {Access::kFetchAdd, uva(1, 0), 8, 5},
                                       {Access::kStore, uva(1, 64), 256, 0}};
  std::vector<std::unique_ptr<GpuInitiator>> gpus;
  int n = 0;
  for (const auto* socket_of : {&with_data, &timing_only}) {
    gpus.push_back(std::make_unique<GpuInitiator>(fmt::format("init{}", n++).c_str(), program, sc_core::SC_ZERO_TIME));
    gpus.back()->socket.bind((*socket_of)(0));
    gpus.push_back(std::make_unique<GpuInitiator>(fmt::format("init{}", n++).c_str(), std::vector<Access>{},
                                                  sc_core::SC_ZERO_TIME));
    gpus.back()->socket.bind((*socket_of)(1));
  }
  sc_core::sc_start(to_sc_time(kMs));
  const auto& data = gpus[0]->results();
  const auto& timing = gpus[2]->results();
  ASSERT_TRUE(gpus[0]->done() && gpus[2]->done());
  for (std::size_t i = 0; i < program.size(); ++i) {
    EXPECT_EQ(timing[i].status, tlm::TLM_OK_RESPONSE) << i;
    EXPECT_EQ(timing[i].latency, data[i].latency) << i;
  }
  EXPECT_EQ(data[1].value, 0x0706050403020100u);  // the pattern the bulk write stored
  EXPECT_EQ(timing[1].value, 0u);
  EXPECT_EQ(timing[2].value, 0u);
  std::uint8_t byte = 0xFF;
  peek(8192, &byte, 1);
  EXPECT_EQ(byte, 0);
}

}  // namespace xy::olink::testing
