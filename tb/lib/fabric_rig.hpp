// A fabric of composed Lingyun ASICs (sys/lingyun/fabric.hpp) with a generic traffic host on every
// endpoint port: the rig of lingyun-fec-llr, switch-uniform on a topology and `bench lingyun`.
// Each host sends to the other endpoints of its plane and checks what it receives (order,
// length, per source); every frame's latency and its stage times are recorded on arrival.
#pragma once
#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "sys/lingyun/fabric.hpp"
#include "tb/lib/e2e_transport.hpp"
#include "tb/lib/fabric_run.hpp"
#include "tb/lib/switch_rig.hpp"
#include "kernel/clock_domain.hpp"

namespace xy {

struct FabricRig {
  std::unique_ptr<ClockDomain> clocks;  // the switch cores' and hosts' clock, and the PHYs'
  std::unique_ptr<lingyun::Fabric> fabric;
  std::vector<std::vector<std::vector<Scoreboard>>> boards;  // per plane (endpoint port), [dst][src]
  Hosts hosts;
  std::vector<std::unique_ptr<E2eTransport>> transports;  // with end-to-end recovery
  std::vector<std::unique_ptr<Channel<Packet*>>> channels;  // between hosts and transports
  LatencyHistogram* latency = nullptr;  // frame created -> arrived, in core cycles
  std::array<Time, lingyun::kStages> stage_time{};
  std::uint64_t arrivals = 0, bytes_arrived = 0;
  Time links_up = 0, last_arrival = 0;  // the PHYs' CDR lock; the latest frame in
  // Latency and goodput count frames made from here on (by default the PHYs' lock; a scenario may
  // wait longer, for LLR's INIT exchange and the first queues to settle).
  Time measure_from = 0;
  std::uint64_t bytes_measured = 0;
  std::function<void(const Packet&, Time)> on_arrival;  // the testbench's, after the rig's own

  // `name`: the rig's prefix (top, top.rs544...); `domain`: a unique suffix for its clocks;
  // `e2e`: end-to-end recovery between the hosts with these Go-Back-N settings, or none.
  FabricRig(const std::string& name, const std::string& domain, const lingyun::Topology& t,
            const sw::SwitchParams& sp, const lingyun::PortParams& pp, const Host::Traffic& traffic, Stats& stats,
            PacketPool& pool, RunContext& ctx, bool spray = false, const link::LlrConfig* e2e = nullptr)
      : FabricRig(name, domain, t, sp, pp, std::vector<Host::Traffic>(t.endpoints().size(), traffic), stats, pool, ctx,
                  spray, e2e) {}
  // The memory a rig takes, estimated before it is built (tb/lib/memory.hpp holds it against the
  // machine's): the fabric with its links at the traffic's load, a host on every endpoint port
  // with the frames it has in flight, and a scoreboard for every source and sink of a plane
  // (N x N), each with a lane once a packet is expected on it: the pairs `traffic` reaches, at
  // random over the others, in the packets it makes until it stops.
  static double memory_bytes(const lingyun::Topology& t, const sw::SwitchParams& sp, const lingyun::PortParams& pp,
                             const Host::Traffic& traffic) {
    const std::vector<int> ends = t.endpoints();
    const double n = static_cast<double>(ends.size());
    double hosts = 0, planes = 0;
    for (int e : ends) {
      hosts += t.nodes[e].ports;
      planes = std::max<double>(planes, t.nodes[e].ports);
    }
    const double width = sp.port_bytes_per_cycle();
    const double beats = (std::ceil(traffic.min_bytes / width) + std::ceil(traffic.max_bytes / width)) / 2;
    const double packets = traffic.load * static_cast<double>(traffic.stop_at) / beats;  // a host's, at most
    const double pairs = traffic.load <= 0  ? 0
                         : traffic.dst >= 0 ? 1
                                            : (n - 1) * -std::expm1(packets * std::log1p(-1 / (n - 1)));
    // A host, its clock's share, its channels and counters, at 1 % load; and at line rate the
    // frames queued for and in the switches (their packets and wire bytes), in proportion to the
    // load. Measured, peak RSS, with PortLink::memory_bytes (64 to 1500 B frames).
    constexpr double kHostBytes = 10e3, kHostFramesBytes = 159e3;
    return lingyun::Fabric::memory_bytes(t, pp, traffic.load) +
           hosts * (kHostBytes + traffic.load * kHostFramesBytes) +
           planes * n * (n * sizeof(Scoreboard) + sizeof(std::vector<Scoreboard>)) +
           hosts * pairs * Scoreboard::lane_heap_bytes();
  }
  // The same with each endpoint's own traffic (its hosts on every port send alike).
  FabricRig(const std::string& name, const std::string& domain, const lingyun::Topology& t,
            const sw::SwitchParams& sp, const lingyun::PortParams& pp, const std::vector<Host::Traffic>& traffic,
            Stats& stats, PacketPool& pool, RunContext& ctx, bool spray = false,
            const link::LlrConfig* e2e = nullptr) {
    clocks = fabric_clocks("clocks_" + domain, sp.period(), pp.phy.period());
    Clock& clock = core();
    fabric = std::make_unique<lingyun::Fabric>(name, t, sp, pp, clock, phy(), clock, stats, ctx.seed, pool, spray);
    offer_fabric(ctx, *fabric, clock, phy());
    latency = &stats.histogram(name + ".latency", clock.period(),
                               "frame made at the host to frame at its destination, once the links are up");
    links_up = measure_from = pp.phy.cdr_lock_cycles * pp.phy.period();
    const int n = fabric->endpoints();
    int planes = 0;
    for (int e = 0; e < n; ++e) planes = std::max(planes, fabric->ports_of(e));
    // Plane by plane: a whole plane as the value to copy would hold a second N x N for a while
    // (1 GiB of peak memory at 4096 endpoints).
    boards.resize(planes);
    for (auto& plane : boards) plane.assign(n, std::vector<Scoreboard>(n));
    for (int e = 0; e < n; ++e)
      for (int k = 0; k < fabric->ports_of(e); ++k) {
        const std::string host = fmt::format("{}.{}.host{}", name, t.nodes[t.endpoints()[e]].name, k);
        link::PortAttachment port = fabric->port(e, k);
        if (e2e) {  // host <-> transport <-> port
          const std::string tn = fmt::format("{}.{}.e2e{}", name, t.nodes[t.endpoints()[e]].name, k);
          channels.push_back(std::make_unique<Channel<Packet*>>(tn + ".from_host", clock, ChannelSpec{}));
          Channel<Packet*>& from_host = *channels.back();
          channels.push_back(std::make_unique<Channel<Packet*>>(tn + ".to_host", clock, ChannelSpec{}));
          Channel<Packet*>& to_host = *channels.back();
          transports.push_back(std::make_unique<E2eTransport>(tn, e, n, *e2e, sp.port_bytes_per_cycle(), from_host,
                                                              to_host, port, pool, stats));
          E2eTransport* transport = transports.back().get();
          clock.attach(*transport);
          port = transport->host_port();
        }
        hosts.push_back(std::make_unique<Host>(host, e, n, sp.port_bytes_per_cycle(), traffic[e], ctx.rng(host), port,
                                               pool, boards[k]));
        Host& h = *hosts.back();
        clock.attach(h);
        if (traffic[e].load > 0) h.wake_at(0);
        h.on_arrival = [this, &clock](const Packet& p, Time now) {
          // Frames made before the links were up waited for them: not the fabric's latency.
          if (p.created >= measure_from) {
            latency->record((now - p.created) / clock.period());
            bytes_measured += p.bytes;
          }
          for (int s = 0; s < lingyun::kStages; ++s) stage_time[s] += p.stage_time[s];
          ++arrivals;
          bytes_arrived += p.bytes;
          last_arrival = now;
          if (on_arrival) on_arrival(p, now);
        };
      }
  }
  // Bytes of the frames made from measure_from on, per host, over the time from then to the last
  // arrival, in Gb/s.
  double goodput_per_host_gbps() const {
    return last_arrival > measure_from ? bytes_measured * 8.0 / static_cast<double>(hosts.size()) /
                                             (static_cast<double>(last_arrival - measure_from) / kNs)
                                       : 0.0;
  }
  Clock& core() const { return clocks->clock(0); }
  Clock& phy() const { return clocks->clock(1); }
  std::uint64_t sent() const { return hosts.sent(); }
  std::uint64_t received() const { return hosts.received(); }
  std::string error() const {
    const std::string e = hosts.error();
    return e.empty() ? fabric->overflow() : e;
  }
  // Frames missing at their destination: lost on links without LLR, flushed by LLR or dropped by
  // a switch.
  std::uint64_t missing() const {
    return over_boards([](const Scoreboard& b) { return b.outstanding() + b.lost(); });
  }
  // Frames the destinations know are lost: a later one of their source arrived first.
  std::uint64_t lost_at_hosts() const {
    return over_boards([](const Scoreboard& b) { return b.lost(); });
  }
  template <class F>
  std::uint64_t over_boards(F count) const {
    std::uint64_t n = 0;
    for (const auto& plane : boards)
      for (const auto& row : plane)
        for (const auto& b : row) n += count(b);
    return n;
  }
  std::uint64_t peak_buffer_cells() const {  // the fullest switch's
    std::uint64_t peak = 0;
    for (const auto& s : fabric->switches()) peak = std::max(peak, s->peak_buffer_cells());
    return peak;
  }
  // Sums of a counter over every port (`suffix` after top.<node>.port<k>).
  std::uint64_t port_sum(const Stats& stats, const std::string& suffix) const {
    std::uint64_t n = 0;
    for (const auto& l : fabric->links())
      for (int side = 0; side < 2; ++side)
        if (const Counter* c = stats.find_counter(l->side_name(side) + suffix)) n += c->value();
    return n;
  }
};

}  // namespace xy
