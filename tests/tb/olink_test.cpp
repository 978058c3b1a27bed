// OLink endpoints on a switch: TLM-2.0 rules, atomics, errors. One simulation per process.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <set>

#include <fmt/format.h>

#include <tlm_utils/simple_initiator_socket.h>

#include "hw/switch/switch.hpp"
#include "tb/lib/gpu.hpp"
#include "tests/hw/run_quiet.hpp"
#include "tlm/olink/endpoint.hpp"
#include "tlm/olink/fast_fabric.hpp"
#include "kernel/clock_domain.hpp"

namespace xy::olink {
namespace {

// N GPUs on one switch, 1 GHz, 64-byte datapath.
struct System {
  ClockDomain domain;
  PacketPool pool;
  Stats stats;
  std::vector<std::unique_ptr<Channel<Packet*>>> channels;
  std::unique_ptr<sw::Switch> sw;
  std::vector<std::unique_ptr<OlinkEndpoint>> endpoints;
  // `data` false: the GPUs' memories keep nothing; `name` tells two systems in one simulation apart.
  explicit System(int gpus, bool data = true, const std::string& name = "olink") : domain(name.c_str(), kNs) {
    Config c;
    sw::SwitchParams p = sw::SwitchParams::declare(c, "switch");
    p.ports = gpus;
    p.clock_mhz = 1000;
    p.port_gbps = 512;
    EndpointParams ep;
    ep.gpus = static_cast<std::uint32_t>(gpus);
    ep.data = data;
    std::vector<Channel<Packet*>*> in, out;
    for (int g = 0; g < gpus; ++g) {
      channels.push_back(std::make_unique<Channel<Packet*>>("up", domain.clock(), ChannelSpec{20, 0, 1, 2}));
      in.push_back(channels.back().get());
      channels.push_back(std::make_unique<Channel<Packet*>>("down", domain.clock(), ChannelSpec{20, 0, 1, 2}));
      out.push_back(channels.back().get());
    }
    sw = std::make_unique<sw::Switch>("sw", p, domain.clock(), stats, in, out,
                                      [](const Packet& pk) { return static_cast<int>(pk.dst); });
    for (int g = 0; g < gpus; ++g) {
      endpoints.push_back(std::make_unique<OlinkEndpoint>((name + "_gpu" + std::to_string(g)).c_str(), g, ep, domain.clock(),
                                                          *in[g], *out[g], pool, stats));
      in[g]->connect(&endpoints.back()->core(), &sw->ingress_core(g));
      out[g]->connect(&sw->egress_core(g), &endpoints.back()->core());
    }
  }
};

// kGpus GPUs each fetch-add 1 to one word kEach times: the word ends at kGpus·kEach and every
// old value 0 … kGpus·kEach−1 comes back exactly once.
void expect_atomic_fetch_adds(const std::function<tlm::tlm_target_socket<>&(int)>& socket_of,
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
void expect_bulk_write(const std::function<tlm::tlm_target_socket<>&(int)>& socket_of,
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

TEST(OlinkBulk, A64KiBWriteArrivesWholeAndTakesItsSerialisation) {
  System sys(2);
  expect_bulk_write([&](int g) -> tlm::tlm_target_socket<>& { return sys.endpoints[g]->socket; },
                    [&](std::uint64_t o, std::uint8_t* d, std::uint32_t n) { sys.endpoints[1]->peek(o, d, n); });
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
  expect_bulk_write([&](int g) -> tlm::tlm_target_socket<>& { return fabric.socket(g); },
                    [&](std::uint64_t o, std::uint8_t* d, std::uint32_t n) { fabric.memory(1).read(o, d, n); });
}

TEST(OlinkAtomics, FetchAddsFromEveryGpuSumExactlyAndReturnUniqueOldValues) {
  System sys(4);
  expect_atomic_fetch_adds([&](int g) -> tlm::tlm_target_socket<>& { return sys.endpoints[g]->socket; },
                           [&] {
                             std::uint64_t v = 0;
                             sys.endpoints[0]->peek(4096, reinterpret_cast<std::uint8_t*>(&v), 8);
                             return v;
                           });
}

TEST(OlinkFastFabric, FetchAddsFromEveryGpuSumExactlyAndReturnUniqueOldValues) {
  FastFabric fabric("fast", fast_params(4));
  expect_atomic_fetch_adds([&](int g) -> tlm::tlm_target_socket<>& { return fabric.socket(g); },
                           [&] {
                             std::uint64_t v = 0;
                             fabric.memory(0).read(4096, reinterpret_cast<std::uint8_t*>(&v), 8);
                             return v;
                           });
}

// Timing only: the same transactions take the same time as with data, but nothing is kept —
// the load after the bulk write reads zeros, and the owner's memory stays empty. `with_data` and
// `timing_only` give GPU g's socket of two fabrics; `peek` reads GPU 1's memory in the second.
void expect_timing_only(const std::function<tlm::tlm_target_socket<>&(int)>& with_data,
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

TEST(OlinkFastFabric, TimingOnlyTakesTheSameTimesAndKeepsNoData) {
  FastParams p = fast_params(2);
  FastFabric with_data("with_data", p);
  p.data = false;
  FastFabric timing_only("timing_only", p);
  expect_timing_only([&](int g) -> tlm::tlm_target_socket<>& { return with_data.socket(g); },
                     [&](int g) -> tlm::tlm_target_socket<>& { return timing_only.socket(g); },
                     [&](std::uint64_t o, std::uint8_t* d, std::uint32_t b) { timing_only.memory(1).read(o, d, b); });
}

TEST(OlinkEndpoint, TimingOnlyTakesTheSameTimesAndKeepsNoData) {
  System with_data(2, true, "with_data"), timing_only(2, false, "timing_only");
  expect_timing_only([&](int g) -> tlm::tlm_target_socket<>& { return with_data.endpoints[g]->socket; },
                     [&](int g) -> tlm::tlm_target_socket<>& { return timing_only.endpoints[g]->socket; },
                     [&](std::uint64_t o, std::uint8_t* d, std::uint32_t b) { timing_only.endpoints[1]->peek(o, d, b); });
}

// An AT initiator: BEGIN_REQ on the forward path, BEGIN_RESP back on the backward path.
struct AtInitiator : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<AtInitiator> socket;
  std::vector<std::pair<tlm::tlm_phase, sc_core::sc_time>> backward;
  sc_core::sc_event response;
  std::vector<std::string> log;
  bool finished = false;
  SC_HAS_PROCESS(AtInitiator);
  explicit AtInitiator(const sc_core::sc_module_name& n) : sc_core::sc_module(n), socket("socket") {
    socket.register_nb_transport_bw(this, &AtInitiator::nb_transport_bw);
    SC_THREAD(run);
  }
  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload&, tlm::tlm_phase& phase, sc_core::sc_time&) {
    backward.emplace_back(phase, sc_core::sc_time_stamp());
    response.notify();
    phase = tlm::END_RESP;
    return tlm::TLM_COMPLETED;
  }
  void run() {
    std::uint8_t data[8] = {1, 2, 3, 4, 5, 6, 7, 8}, enables[8] = {0xFF, 0, 0xFF, 0, 0xFF, 0, 0xFF, 0};
    tlm::tlm_generic_payload t;
    t.set_command(tlm::TLM_WRITE_COMMAND);
    t.set_address(uva(1, 64));
    t.set_data_ptr(data);
    t.set_data_length(8);
    t.set_streaming_width(8);
    t.set_byte_enable_ptr(enables);
    t.set_byte_enable_length(8);
    t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    tlm::tlm_phase phase = tlm::BEGIN_REQ;
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    const tlm::tlm_sync_enum r = socket->nb_transport_fw(t, phase, delay);
    log.push_back(r == tlm::TLM_UPDATED && phase == tlm::END_REQ ? "fw:UPDATED/END_REQ" : "fw:unexpected");
    sc_core::wait(response);
    log.push_back(t.get_response_status() == tlm::TLM_OK_RESPONSE ? "resp:OK" : "resp:error");
    // Read it back with b_transport: only the enabled bytes were written.
    std::uint8_t back[8] = {};
    tlm::tlm_generic_payload rd;
    rd.set_command(tlm::TLM_READ_COMMAND);
    rd.set_address(uva(1, 64));
    rd.set_data_ptr(back);
    rd.set_data_length(8);
    rd.set_streaming_width(8);
    sc_core::sc_time d = sc_core::SC_ZERO_TIME;
    socket->b_transport(rd, d);
    log.push_back(fmt::format("read:{},{},{},{},{},{},{},{}", back[0], back[1], back[2], back[3], back[4], back[5],
                              back[6], back[7]));
    // Errors: outside the map; an unaligned atomic.
    tlm::tlm_generic_payload bad;
    bad.set_command(tlm::TLM_READ_COMMAND);
    bad.set_address(uva(9, 0));
    bad.set_data_ptr(back);
    bad.set_data_length(8);
    bad.set_streaming_width(8);
    socket->b_transport(bad, d);
    log.push_back(bad.get_response_status() == tlm::TLM_ADDRESS_ERROR_RESPONSE ? "outside:ADDRESS_ERROR" : "outside:?");
    AtomicExtension atomic;
    atomic.operand = 1;
    bad.set_address(uva(1, 3));
    bad.set_command(tlm::TLM_WRITE_COMMAND);
    bad.set_extension(&atomic);
    socket->b_transport(bad, d);
    bad.clear_extension(&atomic);
    log.push_back(bad.get_response_status() == tlm::TLM_GENERIC_ERROR_RESPONSE ? "unaligned:GENERIC_ERROR" : "unaligned:?");
    finished = true;
  }
};

TEST(OlinkTlm, BaseProtocolPhasesStatusAndByteEnables) {
  System sys(2);
  AtInitiator at("at");
  GpuInitiator idle("idle", {}, sc_core::SC_ZERO_TIME);
  at.socket.bind(sys.endpoints[0]->socket);
  idle.socket.bind(sys.endpoints[1]->socket);
  std::uint8_t pattern[8] = {0xA0, 0xA1, 0xA2, 0xA3, 0xA4, 0xA5, 0xA6, 0xA7};
  sys.endpoints[1]->poke(64, pattern, 8);
  sc_core::sc_start(to_sc_time(kMs));
  ASSERT_TRUE(at.finished);
  ASSERT_EQ(at.backward.size(), 1u);
  EXPECT_EQ(at.backward[0].first, tlm::BEGIN_RESP);
  EXPECT_GT(at.backward[0].second, sc_core::SC_ZERO_TIME);  // the response took the round trip
  EXPECT_EQ(at.log, (std::vector<std::string>{"fw:UPDATED/END_REQ", "resp:OK", "read:1,161,3,163,5,165,7,167",
                                              "outside:ADDRESS_ERROR", "unaligned:GENERIC_ERROR"}));
}

// Posts `count` 256-byte Loads from GPU `target` at once (AT) and notes when the last is answered.
struct LoadBurst : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<LoadBurst> socket;
  std::vector<tlm::tlm_generic_payload> loads;
  std::vector<std::uint8_t> data;
  std::size_t answered = 0;
  sc_core::sc_time last;
  LoadBurst(const sc_core::sc_module_name& n, std::uint32_t target, std::size_t count)
      : sc_core::sc_module(n), socket("socket"), loads(count), data(256 * count) {
    socket.register_nb_transport_bw(this, &LoadBurst::nb_transport_bw);
    for (std::size_t i = 0; i < count; ++i) {
      loads[i].set_command(tlm::TLM_READ_COMMAND);
      loads[i].set_address(uva(target, 256 * i));
      loads[i].set_data_ptr(&data[256 * i]);
      loads[i].set_data_length(256);
      loads[i].set_streaming_width(256);
    }
    SC_THREAD(run);
  }
  SC_HAS_PROCESS(LoadBurst);
  void run() {
    for (auto& t : loads) {
      tlm::tlm_phase phase = tlm::BEGIN_REQ;
      sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
      socket->nb_transport_fw(t, phase, delay);
    }
  }
  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload&, tlm::tlm_phase& phase, sc_core::sc_time&) {
    ++answered;
    last = sc_core::sc_time_stamp();
    phase = tlm::END_RESP;
    return tlm::TLM_COMPLETED;
  }
};

// GPU 1 posts 512 Loads from GPU 0 at once: GPU 0's line owes 512 responses of 334 bytes, about
// 2.8 µs of them. A Store GPU 0 issues meanwhile takes the line in turn with them, so it is
// answered long before the last of them, not after.
TEST(OlinkEndpoint, ResponsesOwedDoNotHoldUpTheGpusOwnRequests) {
  System sys(2);
  LoadBurst burst("burst", 0, 512);
  burst.socket.bind(sys.endpoints[1]->socket);
  GpuInitiator store("store", {{Access::kStore, uva(1, 0), 256, 0}}, to_sc_time(kUs));
  store.socket.bind(sys.endpoints[0]->socket);
  sc_core::sc_start(to_sc_time(kMs));
  ASSERT_EQ(burst.answered, 512u);
  ASSERT_TRUE(store.done());
  const sc_core::sc_time store_done = to_sc_time(kUs) + store.results()[0].latency;
  EXPECT_LT(store_done + to_sc_time(kUs), burst.last);
}

TEST(OlinkLatency, BreakdownAddsUpToTheMeasuredLatencyForEveryFabric) {
  const RunResult r = testing::run_quiet("olink-latency", {"olink.loads=5"});
  ASSERT_EQ(r.failure, "");  // the scenario asserts every load against the sum of its stages
  const auto& s = r.results["summary"];
  for (const char* f : {"olink-rs544", "olink-rs272", "nvlink-class", "pcie-switch"}) {
    double sum = 0;
    for (const auto& [stage, ns] : s[f]["breakdown"].items()) sum += ns.get<double>();
    EXPECT_NEAR(sum, s[f]["load_latency_ns"].get<double>(), 1.0) << f;
  }
  EXPECT_LT(s["olink-rs272"]["load_latency_ns"].get<double>(), s["olink-rs544"]["load_latency_ns"].get<double>());
  EXPECT_LT(s["nvlink-class"]["load_latency_ns"].get<double>(), s["olink-rs272"]["load_latency_ns"].get<double>());
  // The comparators' presets, stage by stage (ns; PCIe at 1 GHz, every stage whole cycles). One
  // way on PCIe: NIC 300, link 60, switch 150, uplink to the root complex and back 60 + 150 + 60,
  // switch again 150, link 60, NIC 300 = 1290; the load: two of them, HBM 200 + 1 cycle for 64
  // bytes, the entry edge and the response's tail (122 bytes: 2 beats of 64) 1 each.
  EXPECT_DOUBLE_EQ(s["pcie-switch"]["one_way_ns"].get<double>(), 300 + 60 + 150 + 270 + 150 + 60 + 300);
  EXPECT_DOUBLE_EQ(s["pcie-switch"]["load_latency_ns"].get<double>(), 2 * 1290 + 201 + 1 + 1);
  EXPECT_DOUBLE_EQ(s["pcie-switch"]["breakdown"]["uplink_request_ns"].get<double>(), 270);
  EXPECT_DOUBLE_EQ(s["nvlink-class"]["breakdown"]["uplink_request_ns"].get<double>(), 0);
  // NVLink-class: 2 x (20 + 2 x 30 + 40 + 20) + 120 = 400 ns, give or take rounding to its
  // 7031.25 MHz clock (0.14 ns a cycle).
  EXPECT_NEAR(s["nvlink-class"]["load_latency_ns"].get<double>(), 400, 1);
}

// One switch stage far larger than the others still splits each fabric's switch time exactly:
// arbiter and crossbar rounded to 0, and rounding and enqueue's least cycle took the rest past the
// total, parse wrapping below zero ("wake of top.nvlink-class.sw.out1 at cycle 1705 is not in the
// future").
TEST(OlinkLatency, AStageSplitDominatedByOneStageStillAddsUp) {
  // (The composed fabrics take the 1e6-cycle egress stage as it is: 0.64 ms a hop.)
  const RunResult r = testing::run_quiet("olink-latency",
                                         {"olink.loads=1", "switch.lat.egress=1000000", "sim.watchdog_us=10000"});
  ASSERT_EQ(r.failure, "");  // each load against the sum of its stages
}

// Stopped before the first load is back (the first starts after 1000 cycles, 0.1 us even at
// 10 GHz): the run fails its check, and the summary has no latency (it took back() of the empty
// results: a segfault).
TEST(OlinkLatency, ARunStoppedBeforeTheFirstLoadIsBackHasNoLatency) {
  const RunResult r = testing::run_quiet("olink-latency", {"sim.max_time_us=0.05"});
  EXPECT_NE(r.failure.find("not finished"), std::string::npos) << r.failure;
  for (const char* f : {"olink-rs544", "olink-rs272", "nvlink-class", "pcie-switch"})
    EXPECT_TRUE(r.results["summary"][f]["load_latency_ns"].is_null()) << f;
  EXPECT_NE(r.report.find("load, measured"), std::string::npos) << r.report;
}

}  // namespace
}  // namespace xy::olink

namespace xy {
namespace {

// First principles for the all-to-all of 256-byte Stores. A Store's frame is 14 + 40 + 256 + 4
// (FCS) = 314 bytes, its acknowledgement 58. On a GPU's line each also takes 20 bytes of preamble
// and gap: 334 + 78 = 412 bytes carry 256 of data, and each GPU's line carries both its Stores and
// the acknowledgements of those it receives, so a GPU moves at most 256/412 of its line. A switch
// port sends whole 64-byte beats, no gap: 5 + 1 beats, 384 bytes per 256. On the PCIe fabric
// every frame crosses the one uplink (64 GB/s each way, 512 Gb/s), so N GPUs share 64 x 256/384
// GB/s of data: each gets at most that over N.
constexpr double kStoreOnLine = 256.0 / 412, kStoreOnUplink = 256.0 / 384;

// 8 GPUs, 256 KiB each; `gpus` 4: the same with half as many sharing the uplink.
void expect_alltoall_shares(int gpus) {
  const RunResult r = testing::run_quiet("olink-alltoall", {"alltoall.bytes_per_gpu=262144",
                                                            fmt::format("alltoall.gpus={}", gpus)});
  ASSERT_EQ(r.failure, "");  // every store acknowledged OK, buffer accounting exact
  const auto& s = r.results["summary"];
  const double pcie = s["pcie-switch"]["bandwidth_per_gpu_GBps"].get<double>();
  const double olink = s["olink-rs544"]["bandwidth_per_gpu_GBps"].get<double>();
  const double nvlink = s["nvlink-class"]["bandwidth_per_gpu_GBps"].get<double>();
  EXPECT_DOUBLE_EQ(s["pcie-switch"]["gpu_link_GBps"].get<double>(), 64);
  EXPECT_DOUBLE_EQ(s["pcie-switch"]["shared_uplink_GBps"].get<double>(), 64);
  EXPECT_TRUE(s["nvlink-class"]["shared_uplink_GBps"].is_null());
  EXPECT_NEAR(s["nvlink-class"]["gpu_link_GBps"].get<double>(), 450, 0.01);  // 3600 Gb/s each way (a cycle in whole fs)
  // PCIe: the uplink's share, less the ramp and the tail (2 MiB or 1 MiB through the uplink,
  // about 50 or 25 us, against a 2.8 us round trip): within 5 %.
  const double share = 64 * kStoreOnUplink / gpus;
  EXPECT_LE(pcie, share);
  EXPECT_GT(pcie, 0.95 * share);
  EXPECT_LE(nvlink, 450 * kStoreOnLine);
  EXPECT_LE(olink, 400 * kStoreOnLine);
  EXPECT_GT(nvlink, olink);
  EXPECT_GT(olink, 10 * pcie);
}

TEST(OlinkAlltoall, EightGpusBehindAPcieSwitchShareItsUplink) { expect_alltoall_shares(8); }
TEST(OlinkAlltoall, FourGpusBehindAPcieSwitchShareItsUplink) { expect_alltoall_shares(4); }

}  // namespace
}  // namespace xy

namespace xy {
namespace {

// Within 5 % of the cycle-level fabric on latency and bandwidth; the run itself checks that the
// fast fabric's times are the same with and without data.
void expect_fast_agrees(const std::vector<std::string>& settings) {
  std::vector<std::string> all = {"fast.loads=5"};
  all.insert(all.end(), settings.begin(), settings.end());
  const RunResult r = testing::run_quiet("olink-fast", all);
  ASSERT_EQ(r.failure, "");  // every load and write answered OK in all three models
  const auto& s = r.results["summary"];
  EXPECT_LT(std::abs(s["latency_error"].get<double>()), 0.05);
  EXPECT_LT(std::abs(s["bandwidth_error"].get<double>()), 0.05);
  EXPECT_GT(s["cycle"]["bandwidth_per_gpu_GBps"].get<double>(), 0);
}

TEST(OlinkFast, AgreesWithTheCycleLevelFabricOnBulkWrites) { expect_fast_agrees({}); }
TEST(OlinkFast, AgreesWithTheCycleLevelFabricOnStores) {
  expect_fast_agrees({"fast.bytes=256", "fast.bytes_per_gpu=4194304"});
}
// One 70,000-byte write alone (17 segments, the last 368 bytes): its short last frame waits at
// the owner's memory for the one before it, in both models (the fast one was 0.5 % early). On
// the PCIe preset without its shared uplink: through it the two GPUs' writes would meet, and
// the fast fabric serves one whole before the other (docs/olink.md), 13 % apart.
TEST(OlinkFast, ABulkWriteWithAShortLastSegmentTakesTheCycleLevelTime) {
  const RunResult r = testing::run_quiet("olink-fast", {"fast.loads=1", "fast.fabric=pcie-switch", "fast.gpus=2",
                                                        "fast.bytes=70000", "fast.bytes_per_gpu=70000",
                                                        "olink.pcie-switch.uplink_ns=0"});
  ASSERT_EQ(r.failure, "");
  EXPECT_LT(std::abs(r.results["summary"]["bandwidth_error"].get<double>()), 0.001);
}

// The PCIe fabric's shared uplink in both models: 4 GPUs, 4 MiB each in 64 KiB writes. A 4 KiB
// segment's frame is 14 + 40 + 4096 + 4 = 4154 bytes, 65 beats of 64 on the uplink, its
// acknowledgement 1: 4224 bytes per 4096 of data, so each GPU gets 64 x 4096/4224 / 4 GB/s.
// (With 1 MiB each, 16 writes, the fast model is 1.1 % high: it serves each write whole at the
// uplink, the switch interleaves them.)
TEST(OlinkFast, AgreesOnThePcieSwitchsSharedUplink) {
  const RunResult r = testing::run_quiet("olink-fast", {"fast.loads=1", "fast.fabric=pcie-switch", "fast.gpus=4",
                                                        "fast.bytes_per_gpu=4194304"});
  ASSERT_EQ(r.failure, "");
  const auto& s = r.results["summary"];
  const double share = 64.0 * 4096 / 4224 / 4;
  EXPECT_LE(s["cycle"]["bandwidth_per_gpu_GBps"].get<double>(), share);
  EXPECT_GT(s["cycle"]["bandwidth_per_gpu_GBps"].get<double>(), 0.99 * share);
  EXPECT_LT(std::abs(s["bandwidth_error"].get<double>()), 0.005);
  EXPECT_EQ(s["latency_error"].get<double>(), 0);
}

// All 4,096 Stores posted at once: the responses a NIC owes must not wait behind its own
// requests (11 % apart when they shared one FIFO).
TEST(OlinkFast, AgreesWhenEveryStoreIsPostedAtOnce) {
  expect_fast_agrees({"fast.bytes=256", "fast.bytes_per_gpu=1048576"});
}

}  // namespace
}  // namespace xy

namespace xy {
namespace {

TEST(OlinkAlltoall, OnTheFastFabricGpusPostingAtOnceGetEqualShares) {
  // Every GPU posts all its 64 KiB writes at t = 0; they take turns, so none is favoured by
  // SystemC's process order.
  const RunResult r = testing::run_quiet("olink-alltoall", {"alltoall.model=fast", "alltoall.bytes=65536",
                                                            "alltoall.bytes_per_gpu=4194304"});
  ASSERT_EQ(r.failure, "");
  for (const auto& [fabric, x] : r.results["summary"].items()) {
    EXPECT_GT(x["slowest_gpu_GBps"].get<double>(), 0.99 * x["bandwidth_per_gpu_GBps"].get<double>()) << fabric;
    EXPECT_LT(x["bandwidth_per_gpu_GBps"].get<double>(), x["gpu_link_GBps"].get<double>()) << fabric;
  }
}

TEST(OlinkAlltoall, RandomDestinationsCollideSoGpusGetUnequalShares) {
  // Round robin gives every GPU the same share (slowest = mean, in olink-alltoall's own runs);
  // seeded random destinations pile up at some outputs.
  const RunResult r = testing::run_quiet("olink-alltoall", {"alltoall.bytes_per_gpu=262144", "alltoall.pattern=random"});
  ASSERT_EQ(r.failure, "");  // every store acknowledged OK
  for (const char* f : {"olink-rs544", "nvlink-class"}) {
    const auto& x = r.results["summary"][f];
    EXPECT_LT(x["slowest_gpu_GBps"].get<double>(), 0.998 * x["bandwidth_per_gpu_GBps"].get<double>()) << f;
  }
}

}  // namespace
}  // namespace xy
