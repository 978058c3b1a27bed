// OLink endpoints on a switch (tlm/olink/endpoint.hpp): TLM-2.0 rules, atomics, errors, bulk
// writes, timing-only memories, responses in turn with requests. One simulation per process.
#include "tlm/olink/endpoint.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <set>

#include <fmt/format.h>

#include <tlm_utils/simple_initiator_socket.h>

#include "hw/switch/switch.hpp"
#include "tb/lib/gpu.hpp"
#include "tests/tlm/olink/transactions.hpp"
#include "kernel/clock_domain.hpp"

namespace xy::olink {
namespace {

using testing::expect_atomic_fetch_adds;
using testing::expect_bulk_write;
using testing::expect_timing_only;

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
      Channel<Packet*>* to = in[g];
      Channel<Packet*>* from = out[g];
      const auto bind = [to, from, s = sw.get(), g](Core& nic) {
        to->connect(&nic, &s->ingress_core(g));
        from->connect(&s->egress_core(g), &nic);
      };
      endpoints.push_back(std::make_unique<OlinkEndpoint>((name + "_gpu" + std::to_string(g)).c_str(), g, ep, domain.clock(),
                                                          std::vector{link::PortAttachment(*to, *from, nullptr, nullptr, bind)},
                                                          pool, stats));
    }
  }
};

TEST(OlinkBulk, A64KiBWriteArrivesWholeAndTakesItsSerialisation) {
  System sys(2);
  expect_bulk_write([&](int g) -> tlm::tlm_target_socket<>& { return sys.endpoints[g]->socket; },
                    [&](std::uint64_t o, std::uint8_t* d, std::uint32_t n) { sys.endpoints[1]->peek(o, d, n); });
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
}  // namespace
}  // namespace xy::olink
