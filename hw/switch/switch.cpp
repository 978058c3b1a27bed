#include "hw/switch/switch.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <queue>
#include <stdexcept>
#include <unordered_map>

#include <fmt/format.h>

#include "hw/switch/telemetry.hpp"

namespace xy::sw {

std::uint32_t SwitchParams::port_bytes_per_cycle() const {
  return static_cast<std::uint32_t>(std::llround(port_gbps / 8 * 1000 / clock_mhz));
}
Time SwitchParams::period() const { return period_from_mhz(clock_mhz); }

void SwitchParams::check_lossless(const std::vector<std::uint64_t>& port_cells, const std::string& where,
                                  const std::string& fc) const {
  if (wait_when_full || port_cells.empty()) return;
  std::uint64_t sum = 0, most = 0;
  for (std::uint64_t c : port_cells) {
    if (c == 0) return;
    sum += c;
    most = std::max(most, c);
  }
  // The last cell of the fullest port comes in with every other port full: it is admitted if
  // the port's cells stay within dt_alpha x the cells then free.
  const auto need = sum - 1 + static_cast<std::uint64_t>(std::ceil(static_cast<double>(most) / dt_alpha));
  if (need <= buffer_cells) return;
  throw ConfigError(fmt::format(
      "switch.buffer_mib = {:g} ({} B) cannot back the {} of {}'s {} lossless ports: they let in up to {} B at once "
      "({} cells of {} B), {} B with the dynamic threshold's share (switch.dt_alpha = {:g}); allowed: at least {:.4f} "
      "MiB, or switch.when_full=wait",
      buffer_mib, buffer_cells * cell_bytes, fc, where, port_cells.size(), sum * cell_bytes, sum, cell_bytes,
      need * cell_bytes, dt_alpha, std::ceil(static_cast<double>(need * cell_bytes) / (1 << 20) * 1e4) / 1e4));
}

SwitchParams SwitchParams::declare(Config& c, const std::string& prefix) {
  const std::string k = prefix + ".";
  SwitchParams p;
  p.ports = static_cast<int>(c.integer(k + "ports", 64, "ports", 2, 512, "radix"));
  p.port_gbps = c.real(k + "port_gbps", 800, "Gb/s", 1, 100000, "port speed");
  p.clock_mhz = c.real(k + "clock_mhz", 1562.5, "MHz", 1, 100000, "core clock");
  const double bytes = p.port_gbps / 8 * 1000 / p.clock_mhz;
  if (std::abs(bytes - std::round(bytes)) > 1e-9 || bytes < 1)
    throw ConfigError(fmt::format("{}port_gbps = {} at {}clock_mhz = {} gives {:.3f} bytes per cycle: must be a whole "
                                  "number (e.g. 800 Gb/s at 1562.5 MHz = 64)",
                                  k, p.port_gbps, k, p.clock_mhz, bytes));
  p.cell_bytes = static_cast<std::uint32_t>(c.integer(k + "cell_bytes", 256, "bytes", 16, 16384, "shared-buffer cell"));
  const double buffer_mib = c.real(k + "buffer_mib", 64, "MiB", 0.01, 1e6, "shared packet buffer");
  p.buffer_mib = buffer_mib;
  p.buffer_cells = static_cast<std::uint64_t>(buffer_mib * (1 << 20) / p.cell_bytes);
  p.cut_through = c.choice(k + "forwarding", "cut-through", {"cut-through", "store-and-forward"},
                           "start forwarding on the header, or only once the whole packet is in") == "cut-through";
  p.arbiter = c.choice(k + "arbiter", "islip", {"islip", "round-robin"}, "crossbar arbiter") == "islip"
                  ? ArbiterKind::kIslip
                  : ArbiterKind::kRoundRobin;
  p.iterations = static_cast<int>(c.integer(k + "iterations", 2, "iterations", 1, 16, "iSLIP iterations per cycle"));
  p.speedup = static_cast<int>(c.integer(k + "speedup", 1, "x", 1, 4, "crossbar bandwidth over port bandwidth"));
  p.vcs = static_cast<int>(c.integer(k + "vcs", 1, "VCs", 1, 8, "virtual channels (priorities)"));
  p.dt_alpha = c.real(k + "dt_alpha", 1, "x", 0.01, 64, "dynamic threshold: a port may hold alpha x free cells");
  p.wait_when_full = c.choice(k + "when_full", "drop", {"drop", "wait"},
                              "a packet the buffer cannot admit: drop it, or hold the port until it can (lossless)") == "wait";
  p.dwrr = c.choice(k + "egress_scheduler", "strict", {"strict", "dwrr"},
                    "across VCs: strict priority (VC 0 first) or deficit round robin") == "dwrr";
  p.dwrr_quantum = static_cast<std::uint32_t>(c.integer(k + "dwrr_quantum_bytes", 1500, "bytes", 64, 1 << 20, "DWRR quantum per VC"));
  p.ecn.on = c.flag(k + "ecn.on", false, "RED/ECN marking at the egress");
  p.ecn.kmin = static_cast<std::uint64_t>(c.integer(k + "ecn.kmin_bytes", 100 * 1024, "bytes", 0, 1ll << 40, "marking starts"));
  p.ecn.kmax = static_cast<std::uint64_t>(c.integer(k + "ecn.kmax_bytes", 400 * 1024, "bytes", 1, 1ll << 40, "marking reaches pmax"));
  p.ecn.pmax = c.real(k + "ecn.pmax", 0.2, "probability", 0, 1, "marking probability at kmax");
  if (p.ecn.kmin >= p.ecn.kmax)
    throw ConfigError(fmt::format("{}ecn.kmin_bytes = {} is not below {}ecn.kmax_bytes = {}", k, p.ecn.kmin, k, p.ecn.kmax));
  // Stage latencies; the defaults add up to about 250 ns port to port (check: vendor figures).
  const auto stage = [&](const char* name, std::int64_t def, const char* what) {
    return static_cast<Cycle>(c.integer(k + "lat." + name, def, "cycles", 0, 1000000, what));
  };
  p.lat.rx_mac = stage("rx_mac", 120, "RX PCS/FEC/MAC, first byte in to header at the parser");
  p.lat.parse = stage("parse", 20, "parser (Ethernet, OLink or RoCEv2 headers)");
  p.lat.lookup = stage("lookup", 30, "forwarding lookup, ECMP or spraying choice");
  p.lat.enqueue = static_cast<Cycle>(
      c.integer(k + "lat.enqueue", 10, "cycles", 1, 1000000, "buffer admission and VOQ write (at least the write's cycle)"));
  p.lat.arbiter = stage("arbiter", 6, "crossbar request to transfer start");
  p.lat.crossbar = stage("crossbar", 20, "crossbar traversal");
  p.lat.egress = stage("egress", 20, "egress scheduling and buffer read");
  p.lat.tx_mac = stage("tx_mac", 120, "TX MAC/FEC/PCS to the first byte on the wire");
  // The egress core takes a packet from the crossbar in a later cycle at the earliest (with both
  // 0 the crossbar woke it for the cycle it was in: "wake ... is not in the future").
  if (p.lat.arbiter + p.lat.crossbar == 0)
    throw ConfigError(fmt::format("{}lat.arbiter + {}lat.crossbar = 0: must be at least 1 cycle, crossbar to egress", k, k));
  return p;
}

IpcnParams IpcnParams::declare(Config& c, const std::string& prefix, Time period) {
  IpcnParams p;
  const std::string k = prefix + ".";
  const auto cycles = [&](const char* key, double def, const char* what) {
    return cycles_for(from_ns(c.real(k + key, def, "ns", 1, 1e7, what)), period);
  };
  p.on = true;
  p.window = cycles("window_ns", 1000, "backlog growth measured over this window (our choice: no public figure)");
  p.horizon = cycles("horizon_ns", 10000, "backlog predicted this far ahead (our choice)");
  p.interval = cycles("interval_ns", 5000, "least time between notifications of one flow (our choice)");
  p.threshold_bytes = static_cast<std::uint64_t>(
      c.integer(k + "threshold_bytes", 400 * 1024, "bytes", 1, 1ll << 40, "predicted backlog that notifies (our choice)"));
  return p;
}

namespace {

// A packet inside the switch.
struct Entry {
  Packet* packet;     // not to be touched once it has left (the receiver owns it)
  int in, out;
  std::uint32_t bytes;
  std::uint8_t vc;
  std::uint32_t cells;
  Cycle beats;        // cycles on a port
  Cycle head;         // first byte at the ingress pin
  Cycle ready;        // may request the crossbar from here
  Cycle first_at = 0;  // first bytes at the egress
  Cycle tx_at = 0;     // first byte on the output wire
  std::uint32_t next = 0;  // the entry behind it in its FIFO
  bool notice = false;     // made by the switch (IPCN), not from the port's link
};

// Packets inside the switch live in one pool and move from FIFO to FIFO by index (ingress
// pipeline, VOQ, egress queue, waiting for the wire, releasing its cells): a FIFO is two
// indices, so 64 x 64 VOQs take 32 KiB and stay in cache, and nothing is copied or allocated
// on a packet's way through (freed entries are reused, last freed first).
using EntryId = std::uint32_t;
constexpr EntryId kNoEntry = ~EntryId{0};

struct Fifo {
  EntryId head = kNoEntry, tail = kNoEntry;
  bool empty() const { return head == kNoEntry; }
};

class EntryPool {
 public:
  EntryId add(const Entry& e) {
    if (free_.empty()) {
      entries_.push_back(e);
      return static_cast<EntryId>(entries_.size() - 1);
    }
    const EntryId id = free_.back();
    free_.pop_back();
    entries_[id] = e;
    return id;
  }
  void remove(EntryId id) { free_.push_back(id); }
  // References stay valid until the next add().
  Entry& operator[](EntryId id) { return entries_[id]; }
  Entry& front(const Fifo& f) { return entries_[f.head]; }
  const Entry& front(const Fifo& f) const { return entries_[f.head]; }

  void push(Fifo& f, EntryId id) {
    entries_[id].next = kNoEntry;
    if (f.empty()) f.head = id;
    else entries_[f.tail].next = id;
    f.tail = id;
  }
  EntryId pop(Fifo& f) {
    const EntryId id = f.head;
    f.head = entries_[id].next;
    if (f.head == kNoEntry) f.tail = kNoEntry;
    return id;
  }
  std::uint64_t cells(const Fifo& f) const {
    std::uint64_t n = 0;
    for (EntryId id = f.head; id != kNoEntry; id = entries_[id].next) n += entries_[id].cells;
    return n;
  }

 private:
  std::vector<Entry> entries_;
  std::vector<EntryId> free_;
};

// Events by cycle: a bucket per cycle for the next 256 cycles, a heap for later ones. Taking
// what is due walks the buckets from the first cycle not yet taken, so a near event costs a
// push_back and a visit instead of a heap's log n sift. Events of one cycle come in no
// particular order. Event needs a Cycle `at` and operator>.
template <typename Event>
class Calendar {
 public:
  // `e.at` must not be before the first cycle not yet taken (later than any take_due's `now`).
  void push(const Event& e) {
    if (e.at >= next_ && e.at - next_ < kBuckets) {
      buckets_[e.at % kBuckets].push_back(e);
      ++near_;
    } else {
      far_.push(e);
    }
  }
  // Calls f(event) for every event due at or before `now`, and removes them.
  template <typename F>
  void take_due(Cycle now, F f) {
    for (; near_ > 0 && next_ <= now; ++next_) {
      std::vector<Event>& bucket = buckets_[next_ % kBuckets];  // all of them due at next_
      near_ -= bucket.size();
      for (const Event& e : bucket) f(e);
      bucket.clear();
    }
    next_ = std::max(next_, now + 1);
    while (!far_.empty() && far_.top().at <= now) {
      f(far_.top());
      far_.pop();
    }
  }

 private:
  static constexpr Cycle kBuckets = 256;
  std::array<std::vector<Event>, kBuckets> buckets_;
  std::size_t near_ = 0;  // events in the buckets
  Cycle next_ = 0;        // the first cycle not yet taken
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> far_;
};

}  // namespace

struct Switch::Impl {
  struct Ingress : Core {
    Impl& sw;
    int port;
    Ingress(Impl& s, int p) : Core(fmt::format("{}.in{}", s.name, p)), sw(s), port(p) {}
    void eval() override { sw.ingress_eval(port); }
    void commit() override { sw.ingress_commit(port); }
  };
  // The switch fabric: iSLIP over the VOQs and the crossbar's transfers (fabric_eval).
  struct CrossbarFabric : Core {
    Impl& sw;
    explicit CrossbarFabric(Impl& s) : Core(s.name + ".fabric"), sw(s) {}
    void eval() override { sw.fabric_eval(); }
    void commit() override { sw.fabric_commit(); }
  };
  struct Egress : Core {
    Impl& sw;
    int port;
    Egress(Impl& s, int p) : Core(fmt::format("{}.out{}", s.name, p)), sw(s), port(p) {}
    void eval() override { sw.egress_eval(port); }
    void commit() override { sw.egress_commit(port); }
  };

  Impl(const std::string& name_, const SwitchParams& p_, Clock& clock_, Stats& stats,
       std::vector<Channel<Packet*>*> in_, std::vector<Channel<Packet*>*> out_, RouteFn route_, std::uint64_t seed)
      : name(name_), p(p_), clock(clock_), backlog(p_.ports, 0), tx_bytes(p_.ports, 0),
        deficit(p_.ports, std::vector<std::int64_t>(p_.vcs, 0)), dwrr_next(p_.ports, 0),
        turn_started(p_.ports, false), width(p.port_bytes_per_cycle()), in(std::move(in_)), out(std::move(out_)),
        route(std::move(route_)), fabric(*this), arbiter(p.ports, p.ports, p.iterations, p.arbiter),
        requests(p.ports, p.ports), heads_ready(p.ports, p.ports), free_in(bitmap_of_all(p.ports)),
        free_out(bitmap_of_all(p.ports)), masked(free_out.size()), voq(static_cast<std::size_t>(p.ports) * p.ports),
        in_busy_until(p.ports, 0), out_busy_until(p.ports, 0), port_cells(p.ports, 0), pipelines(p.ports),
        egress_queues(static_cast<std::size_t>(p.ports) * p.vcs), pending_tx(p.ports), releasing(p.ports),
        line_free(p.ports, 0),
        received(stats.counter(name + ".packets_in", "packets", "packets that reached an ingress port")),
        forwarded_(stats.counter(name + ".packets_out", "packets", "packets sent by an egress port")),
        drops_buffer(stats.counter(name + ".drops.buffer", "packets", "dropped: the shared buffer could not admit them")),
        drops_route(stats.counter(name + ".drops.no_route", "packets", "dropped: no route to their destination")),
        transfers(stats.counter(name + ".crossbar.transfers", "packets", "packets through the crossbar")),
        ecn_marked(stats.counter(name + ".egress.ecn_marked", "packets", "packets marked CE by RED")),
        admission_waits(stats.counter(name + ".ingress.admission_waits", "cycles",
                                      "cycles a port's head packet waited for buffer space (lossless)")),
        gate_blocked(stats.counter(name + ".egress.flow_control_blocked", "cycles",
                                   "egress decisions held back by flow control (pause or no credits)")),
        stats(stats),
        latency(stats.histogram(name + ".port_to_port", clock.period(), "first byte in to first byte out")) {
    if (in.size() != static_cast<std::size_t>(p.ports) || out.size() != static_cast<std::size_t>(p.ports))
      throw std::invalid_argument(name + ": need one input and one output channel pointer per port");
    for (int i = 0; i < p.ports; ++i) {
      ingress.push_back(std::make_unique<Ingress>(*this, i));
      egress.push_back(std::make_unique<Egress>(*this, i));
      clock.attach(*ingress.back());
      clock.attach(*egress.back());
    }
    clock.attach(fabric);
    for (int o = 0; o < p.ports; ++o) ecn_rngs.emplace_back(seed, fmt::format("{}.out{}.ecn", name, o));
    gates.assign(p.ports, nullptr);
    monitors.assign(p.ports, nullptr);
    ingress_waiting.assign(p.ports, false);
    notices_made.resize(p.ports);
  }

  Fifo& queue(int i, int o) { return voq[static_cast<std::size_t>(i) * p.ports + o]; }
  Fifo& egress_queue(int o, int vc) { return egress_queues[static_cast<std::size_t>(o) * p.vcs + vc]; }
  // The ingress pipeline ends (the output port is known) this long after the first byte.
  Cycle pipeline_cycles() const { return p.lat.rx_mac + p.lat.parse + p.lat.lookup; }
  Cycle beats_of(std::uint32_t bytes) const { return (bytes + width - 1) / width; }

  void ingress_eval(int i) {
    const Cycle now = clock.now();
    if (in[i]) {
      // A held port takes nothing more from its link: the frames behind the head wait there,
      // and a link with credits pushes back to its sender (lossless).
      while (in[i]->can_pop() && !ingress_waiting[i]) {
        Packet* pk = in[i]->pop();
        pk->injected = clock.time_of(now);
        pk->advance(stages.core, pk->injected);
        received.add();
        if (monitors[i]) monitors[i]->on_arrive(*pk);  // (a notice the switch makes is pushed below, not here)
        pool.push(pipelines[i], pool.add({pk, i, -1, pk->bytes, pk->vc,
                                          static_cast<std::uint32_t>((pk->bytes + p.cell_bytes - 1) / p.cell_bytes),
                                          beats_of(pk->bytes), now, 0}));
      }
    }
  }
  // Admission, at commit: the admissions of a cycle go in port order (an admission arbiter's, the
  // order of the ingress commits), after every eval of the cycle, so that no eval sees them.
  void ingress_commit(int i) {
    const Cycle now = clock.now();
    while (!pipelines[i].empty() && pool.front(pipelines[i]).head + pipeline_cycles() <= now) {
      Entry& head = pool.front(pipelines[i]);
      if (head.out < 0) head.out = route(*head.packet);
      if (head.out < 0 || head.out >= p.ports) {
        head.packet->bad = true;
        drops_route.add();
        drop(pool.pop(pipelines[i]));
        continue;
      }
      // Dynamic threshold (Choudhury-Hahne): a port may hold at most alpha x the free cells.
      const std::uint64_t free_cells = p.buffer_cells - used;
      if (head.cells > free_cells ||
          static_cast<double>(port_cells[i] + head.cells) > p.dt_alpha * static_cast<double>(free_cells)) {
        if (static_cast<double>(head.cells) > p.dt_alpha * static_cast<double>(p.buffer_cells))  // not even when empty
          throw std::runtime_error(fmt::format(
              "{} port {}: a {} B packet ({} cells of {} B) can never be admitted: a port may hold switch.dt_alpha = "
              "{:g} x the free cells, {:.2f} of switch.buffer_mib = {:g} ({} cells) even when all are free; allowed: "
              "dt_alpha x buffer cells of at least {}",
              name, i, head.bytes, head.cells, p.cell_bytes, p.dt_alpha, p.dt_alpha * static_cast<double>(p.buffer_cells),
              p.buffer_mib, p.buffer_cells, head.cells));
        if (p.wait_when_full) {  // lossless: hold the port until cells come back
          admission_waits.add();
          ingress_waiting[i] = true;
          break;
        }
        drops_buffer.add();
        drop(pool.pop(pipelines[i]));
        continue;
      }
      ingress_waiting[i] = false;
      const EntryId id = pool.pop(pipelines[i]);
      Entry& e = pool[id];
      if (monitors[i] && !e.notice) monitors[i]->on_admit(e.bytes, e.vc);
      used += e.cells;
      peak = std::max(peak, used);
      used_at_admit.record(used);
      port_cells[i] += e.cells;
      // Into its VOQ now; the crossbar sees it from `ready` on (enqueue >= 1, so never in
      // this cycle, whatever order the cores of a cycle run in).
      e.ready = now + p.lat.enqueue + (p.cut_through ? 0 : e.beats - 1);
      if (queue(i, e.out).empty()) fabric_events.push({e.ready, i, e.out, FabricEvent::kHeadReady});
      pool.push(queue(i, e.out), id);
      ++packets_in_voqs;
      cells_in_voqs += e.cells;
      backlog[e.out] += e.bytes;
      fabric.wake_at(e.ready);
    }
    if (!pipelines[i].empty())
      ingress[i]->wake_at(std::max(pool.front(pipelines[i]).head + pipeline_cycles(), clock.now() + 1));
    // Retry admission every cycle while held; once let go, take what waited on the link.
    ingress[i]->set_busy(ingress_waiting[i] || (p.wait_when_full && in[i] && in[i]->ready_by(clock.now() + 1)));
  }

  void drop(EntryId id) {
    const Entry& e = pool[id];
    if (monitors[e.in] && !e.notice) {  // it never entered the buffer and leaves now
      monitors[e.in]->on_admit(e.bytes, e.vc);
      monitors[e.in]->on_depart(e.bytes, e.vc);
    }
    dropped.push_back(e.packet);
    pool.remove(id);
  }

  // The fabric keeps the request matrix up to date instead of rebuilding it: input i requests
  // output o while VOQ[i][o]'s head is ready and both ports are free `arbiter` cycles ahead
  // (requests = heads_ready AND free_in AND free_out). It changes only at events: a head becomes
  // ready (its ready time), a match takes an input and an output (their requests are withdrawn),
  // a transfer's ports free up (the ready heads of that input and that output request again).
  // So a cycle costs its events and the requests the arbiter sees, not a scan of every port.
  //
  // The fabric is woken by every admission and stays busy while packets wait in VOQs: under load
  // it has requests nearly every cycle, and a tick with nothing due costs a few compares (waking
  // it at each of its events instead was measured to cost more).
  void fabric_eval() {
    const Cycle now = clock.now();
    waiting = packets_in_voqs > 0;  // as it stands when the fabric runs, before it takes any
    fabric_events.take_due(now, [this](const FabricEvent& ev) {
      if (ev.what == FabricEvent::kHeadReady) head_ready(ev.in, ev.out);
      else ports_free(ev.in, ev.out);
    });
    if (requests.empty()) return;
    arbiter.match(requests, matches);
    for (const auto& [i, o] : matches) {
      const EntryId id = pool.pop(queue(i, o));
      Entry& e = pool[id];
      --packets_in_voqs;
      const Cycle start = std::max({now + p.lat.arbiter, in_busy_until[i], out_busy_until[o]});
      const Cycle duration = (e.bytes + width * p.speedup - 1) / (width * p.speedup);
      in_busy_until[i] = out_busy_until[o] = start + duration;
      e.first_at = start + p.lat.crossbar;
      cells_in_voqs -= e.cells;
      cells_at_egress += e.cells;
      transfers.add();
      pool.push(egress_queue(o, std::min<int>(e.vc, p.vcs - 1)), id);
      egress[o]->wake_at(e.first_at);
      // Both ports may take part in a request again once they are free `arbiter` cycles ahead.
      bitmap_set(free_in, i, false);
      bitmap_set(free_out, o, false);
      fabric_events.push({start + duration - p.lat.arbiter, i, o, FabricEvent::kPortsFree});
    }
    for (const auto& [i, o] : matches) {
      for_each_bit(requests.row(i), requests.words_per_row(), [&](int out) { requests.reset(i, out); });
      for_each_bit(requests.column(o), requests.words_per_column(), [&](int in) { requests.reset(in, o); });
      // The served VOQ's next head stays ready if it is, else becomes ready at its time.
      const Fifo& q = queue(i, o);
      if (q.empty() || pool.front(q).ready > now) heads_ready.reset(i, o);
      if (!q.empty() && pool.front(q).ready > now)
        fabric_events.push({pool.front(q).ready, i, o, FabricEvent::kHeadReady});
    }
  }
  void fabric_commit() {
    fabric.set_busy(waiting);
    check_conservation();
  }

  void head_ready(int i, int o) {
    heads_ready.set(i, o);
    if (bitmap_test(free_in, i) && bitmap_test(free_out, o)) requests.set(i, o);
  }
  void ports_free(int i, int o) {
    bitmap_set(free_in, i, true);
    bitmap_set(free_out, o, true);
    for (int w = 0; w < heads_ready.words_per_row(); ++w) masked[w] = heads_ready.row(i)[w] & free_out[w];
    for_each_bit(masked.data(), heads_ready.words_per_row(), [&](int out) { requests.set(i, out); });
    for (int w = 0; w < heads_ready.words_per_column(); ++w) masked[w] = heads_ready.column(o)[w] & free_in[w];
    for_each_bit(masked.data(), heads_ready.words_per_column(), [&](int in) { requests.set(in, o); });
  }

  // Every cell the buffer counts as used is in exactly one place: a VOQ, or past the crossbar
  // (egress queue, waiting to be sent, being sent). Checked by every fabric and egress step.
  void check_conservation() const {
    if (cells_in_voqs + cells_at_egress != used)
      throw std::logic_error(fmt::format("{}: buffer accounting at cycle {}: {} cells in VOQs + {} past the crossbar "
                                         "!= {} used",
                                         name, clock.now(), cells_in_voqs, cells_at_egress, used));
  }

  void egress_eval(int o) {
    const Cycle now = clock.now();
    // Just in time: choose the next packet when it could leave as the line frees up.
    const Cycle lead = p.lat.egress + p.lat.tx_mac;
    if (now + lead >= line_free[o]) {
      const int vc = choose_vc(o, now);
      if (vc >= 0) {
        const EntryId id = pool.pop(egress_queue(o, vc));
        Entry& e = pool[id];
        if (gates[o]) gates[o]->on_send(*e.packet);
        if (p.ecn.on && mark(o, backlog[o])) {
          e.packet->ecn_ce = true;
          ecn_marked.add();
        }

        backlog[o] -= e.bytes;
        e.tx_at = std::max(now + lead, line_free[o]);
        stamp(*e.packet, o, e.tx_at);
        tx_bytes[o] += e.bytes;
        line_free[o] = e.tx_at + e.beats;
        const bool notice = e.notice;
        pool.push(pending_tx[o], id);
        // Last: a notice IPCN makes adds to the pool, which may move its entries (`e` among them).
        if (ipcn.on && !notice) predict(o, *pool[id].packet, pool[id].in);
      }
    }
    while (!pending_tx[o].empty() && pool.front(pending_tx[o]).tx_at <= now) {
      const EntryId id = pool.pop(pending_tx[o]);
      Entry& e = pool[id];
      latency.record(e.tx_at - e.head);
      forwarded_.add();
      pool.push(releasing[o], id);
      e.packet->advance(stages.to_port, clock.time_of(now));
      if (out[o]) out[o]->push(e.packet);
      else dropped.push_back(e.packet);
    }
  }
  void egress_commit(int o) {
    const Cycle now = clock.now();
    for (const EntryId id : notices_made[o]) {
      const int in = pool[id].in;
      pool.push(pipelines[in], id);
      ingress[in]->wake_at(now + 1 + pipeline_cycles());
    }
    notices_made[o].clear();
    // Packets whose last byte has left give back their cells, in the commit phase so that no
    // admission of this cycle sees them (admissions within a cycle go in port order).
    while (!releasing[o].empty() && released_at(pool.front(releasing[o])) <= now) {
      const EntryId id = pool.pop(releasing[o]);
      const Entry& e = pool[id];
      used -= e.cells;
      cells_at_egress -= e.cells;
      port_cells[e.in] -= e.cells;
      if (monitors[e.in] && !e.notice) monitors[e.in]->on_depart(e.bytes, e.vc);
      pool.remove(id);
    }
    check_conservation();
    Cycle next = ~Cycle{0};
    if (!releasing[o].empty()) next = std::min(next, released_at(pool.front(releasing[o])));
    if (!pending_tx[o].empty()) next = std::min(next, pool.front(pending_tx[o]).tx_at);
    Cycle earliest = ~Cycle{0};
    for (int vc = 0; vc < p.vcs; ++vc)
      if (const Fifo& q = egress_queue(o, vc); !q.empty()) earliest = std::min(earliest, pool.front(q).first_at);
    if (earliest != ~Cycle{0}) {
      const Cycle lead = p.lat.egress + p.lat.tx_mac;
      next = std::min(next, std::max(earliest, line_free[o] > lead ? line_free[o] - lead : 0));
    }
    if (next != ~Cycle{0}) egress[o]->wake_at(std::max(next, now + 1));
  }

  // Its last byte has left the output port: its cells go back to the buffer.
  static Cycle released_at(const Entry& e) { return e.tx_at + e.beats; }

  // The VC whose head packet goes next, or -1: strict priority or DWRR, over the heads that
  // have reached the egress and that the port's flow control lets go.
  int choose_vc(int o, Cycle now) {
    auto sendable = [&](int vc) {
      const Fifo& q = egress_queue(o, vc);
      if (q.empty() || pool.front(q).first_at > now) return false;
      if (gates[o] && !gates[o]->can_send(*pool.front(q).packet)) {
        gate_blocked.add();
        return false;
      }
      return true;
    };
    if (!p.dwrr) {
      for (int vc = 0; vc < p.vcs; ++vc)
        if (sendable(vc)) return vc;
      return -1;
    }
    // Deficit round robin: a VC's turn adds one quantum; it sends while its deficit covers the
    // head packet, then the turn passes on.
    for (int visit = 0; visit < 2 * p.vcs; ++visit) {
      const int vc = dwrr_next[o];
      if (egress_queue(o, vc).empty()) {
        deficit[o][vc] = 0;  // an idle VC saves no credit
      } else if (sendable(vc)) {
        if (!turn_started[o]) {
          deficit[o][vc] += p.dwrr_quantum;
          turn_started[o] = true;
        }
        const auto bytes = static_cast<std::int64_t>(pool.front(egress_queue(o, vc)).bytes);
        if (deficit[o][vc] >= bytes) {
          deficit[o][vc] -= bytes;
          return vc;
        }
      }
      dwrr_next[o] = (vc + 1) % p.vcs;
      turn_started[o] = false;
    }
    return -1;
  }

  // HPCC's INT record at the egress: when the packet starts on the line, the port's bytes sent
  // before it, and what stays queued for the port behind it.
  void stamp(Packet& pk, int o, Cycle tx_at) {
    if (!pk.telemetry) return;
    if (telemetry_rate < 0) telemetry_rate = telemetry_rate_code(p.port_bytes_per_cycle() * 8.0 / to_ns(p.period()));
    stamp_telemetry(pk.bytes_now(), clock.time_of(tx_at), tx_bytes[o], backlog[o], telemetry_rate);
  }
  // IPCN (IpcnParams): the port's backlog `horizon` ahead, from its slope over the last window;
  // above the threshold the packet's source is notified, once a flow per interval.
  void predict(int o, Packet& data, int in) {
    const Cycle now = clock.now();
    Slope& w = slopes[o];
    if (now >= w.since + ipcn.window) {
      w.per_cycle = (static_cast<double>(backlog[o]) - static_cast<double>(w.backlog)) / static_cast<double>(now - w.since);
      w.since = now;
      w.backlog = backlog[o];
    }
    const double ahead = static_cast<double>(backlog[o]) + w.per_cycle * static_cast<double>(ipcn.horizon);
    if (ahead <= static_cast<double>(ipcn.threshold_bytes) || data.control) return;
    const std::uint64_t flow = (std::uint64_t{data.src} << 40) ^ (std::uint64_t{data.dst} << 16) ^ data.entropy;
    auto [last, fresh] = notified.try_emplace(flow, now);
    if (!fresh && now < last->second + ipcn.interval) return;
    last->second = now;
    Packet* n = notice ? notice(data) : nullptr;
    if (!n) return;
    // In by the port the data came in on, from the next cycle, as if it had arrived there.
    ipcn_notices->add();
    n->injected = clock.time_of(now + 1);
    EntryId id = pool.add({n, in, -1, n->bytes, n->vc, static_cast<std::uint32_t>((n->bytes + p.cell_bytes - 1) / p.cell_bytes),
                           beats_of(n->bytes), now + 1, 0});
    pool[id].notice = true;
    notices_made[o].push_back(id);  // into the pipeline at commit, behind the frames that came in this cycle
  }
  bool mark(int o, std::uint64_t queued) {
    if (queued < p.ecn.kmin) return false;
    if (queued >= p.ecn.kmax) return true;
    const double prob = p.ecn.pmax * static_cast<double>(queued - p.ecn.kmin) / static_cast<double>(p.ecn.kmax - p.ecn.kmin);
    return ecn_rngs[o].chance(prob);
  }

  std::uint64_t recount() const {
    std::uint64_t cells = 0;
    for (const Fifo& q : voq) cells += pool.cells(q);
    for (const Fifo& q : egress_queues) cells += pool.cells(q);
    for (int o = 0; o < p.ports; ++o) cells += pool.cells(pending_tx[o]) + pool.cells(releasing[o]);
    return cells;
  }

  std::string name;
  SwitchParams p;
  Clock& clock;
  std::vector<Rng> ecn_rngs;  // per output: its draws do not depend on the other ports' evals
  IpcnParams ipcn;
  Switch::NoticeFn notice;
  struct Slope {
    Cycle since = 0;
    std::uint64_t backlog = 0;
    double per_cycle = 0;  // bytes a cycle over the last window
  };
  std::vector<Slope> slopes;                           // per output (IPCN)
  std::vector<std::vector<EntryId>> notices_made;      // per output: this cycle's, for the ingress pipelines
  std::unordered_map<std::uint64_t, Cycle> notified;  // per flow: its last notification
  // Per output: bytes waiting for it anywhere (VOQs of every input and its egress queues); in
  // a VOQ switch the backlog of an output sits mostly at the inputs.
  std::vector<std::uint64_t> backlog;
  std::vector<std::uint64_t> tx_bytes;  // per output: bytes of every packet that has started on its line
  int telemetry_rate = -1;              // the ports' INT line-rate code, once a packet asks
  std::vector<std::vector<std::int64_t>> deficit;   // per output, per VC (DWRR)
  std::vector<int> dwrr_next;
  std::vector<bool> turn_started;
  std::uint32_t width;
  std::vector<Channel<Packet*>*> in, out;
  RouteFn route;
  std::vector<std::unique_ptr<Ingress>> ingress;
  std::vector<std::unique_ptr<Egress>> egress;
  CrossbarFabric fabric;
  Islip arbiter;
  RequestMatrix requests;
  RequestMatrix heads_ready;                    // VOQ heads whose ready time has come
  std::vector<std::uint64_t> free_in, free_out;  // ports free `arbiter` cycles ahead
  std::vector<std::uint64_t> masked;             // scratch: a row or column of ready heads, masked
  EntryPool pool;          // every packet inside the switch; the FIFOs below hold its indices
  std::vector<Fifo> voq;
  std::vector<Cycle> in_busy_until, out_busy_until;
  std::vector<std::uint64_t> port_cells;
  std::vector<Fifo> pipelines;      // per input: arrived, output port not known yet
  std::vector<Fifo> egress_queues;  // per output, per VC
  std::vector<Fifo> pending_tx;     // per output: chosen, first byte not on the wire yet
  std::vector<Fifo> releasing;      // per output: on the wire until their last byte has left
  std::vector<Cycle> line_free;
  std::vector<Islip::Pair> matches;
  // What changes the requests, at the cycle it happens (order within a cycle does not matter).
  struct FabricEvent {
    Cycle at;
    int in, out;
    enum What { kHeadReady, kPortsFree } what;  // VOQ[in][out]'s head; a transfer in -> out ends
    bool operator>(const FabricEvent& o) const { return at > o.at; }
  };
  Calendar<FabricEvent> fabric_events;
  std::uint64_t packets_in_voqs = 0;
  std::vector<Packet*> dropped;  // the testbench returns them to its pool
  std::vector<link::EgressGate*> gates;
  std::vector<link::IngressMonitor*> monitors;
  Stages stages;
  std::vector<bool> ingress_waiting;  // the head packet waits for buffer space (lossless)
  bool waiting = false;  // packets in VOQs when the fabric last ran
  std::uint64_t used = 0, peak = 0;
  LatencyHistogram used_at_admit{1};  // cells, not cycles: one count per admitted packet
  std::uint64_t cells_in_voqs = 0, cells_at_egress = 0;
  Counter &received, &forwarded_, &drops_buffer, &drops_route, &transfers, &ecn_marked, &admission_waits,
      &gate_blocked;
  Stats& stats;
  Counter* ipcn_notices = nullptr;  // with IPCN on (registered then: other runs' stats stay as they were)
  LatencyHistogram& latency;
};

double Switch::memory_bytes(int ports) {
  const double p = ports, words = bitmap_words(ports);
  // The VOQs; the request matrices (requests, heads ready), each by rows and by columns, and the
  // arbiter's grants: a bit per pair, in 64-bit words.
  const double square = p * p * sizeof(Fifo) + 5 * p * words * sizeof(std::uint64_t);
  // Per port: its ingress and egress cores, its queues' heads and the arbiter's pointers. Measured
  // (peak RSS): a switch of 1024 ports with 64 in use against one of 64, less the squares above.
  constexpr double kPortBytes = 420;
  return square + p * kPortBytes;
}

Switch::Switch(const std::string& name, const SwitchParams& params, Clock& clock, Stats& stats,
               std::vector<Channel<Packet*>*> in, std::vector<Channel<Packet*>*> out, RouteFn route, std::uint64_t seed)
    : impl_(std::make_unique<Impl>(name, params, clock, stats, std::move(in), std::move(out), std::move(route), seed)) {}
std::uint64_t Switch::output_backlog_bytes(int port) const { return impl_->backlog.at(port); }
Switch::~Switch() = default;
std::vector<int> Switch::outputs_waited_for(int input, int vc) const {
  Impl& s = *impl_;
  const auto holds = [&](const Fifo& f) {
    for (EntryId id = f.head; id != kNoEntry; id = s.pool[id].next)
      if (s.pool[id].in == input && s.pool[id].vc == vc) return true;
    return false;
  };
  std::vector<int> outputs;
  for (int o = 0; o < s.p.ports; ++o) {
    bool waits = holds(s.queue(input, o));
    for (int v = 0; v < s.p.vcs && !waits; ++v) waits = holds(s.egress_queue(o, v));
    if (waits) outputs.push_back(o);
  }
  return outputs;
}

Core& Switch::ingress_core(int port) { return *impl_->ingress.at(port); }
Core& Switch::egress_core(int port) { return *impl_->egress.at(port); }
void Switch::set_egress_gate(int port, link::EgressGate* gate) { impl_->gates.at(port) = gate; }
void Switch::set_ingress_monitor(int port, link::IngressMonitor* monitor) { impl_->monitors.at(port) = monitor; }
void Switch::set_stages(const Stages& s) { impl_->stages = s; }
void Switch::probe(Waves& waves) const {
  waves.probe(impl_->name + ".buffer_cells", 32, [this] { return buffer_cells_used(); });
}
std::uint64_t Switch::buffer_cells_used() const { return impl_->used; }
std::uint64_t Switch::peak_buffer_cells() const { return impl_->peak; }
std::uint64_t Switch::admitted_buffer_cells(double q) const { return impl_->used_at_admit.quantile(q); }
void Switch::set_ipcn(const IpcnParams& p, NoticeFn notice) {
  if (!impl_->ipcn_notices)
    impl_->ipcn_notices = &impl_->stats.counter(impl_->name + ".ipcn.notices", "packets", "IPCN notifications sent to sources");
  impl_->ipcn = p;
  impl_->notice = std::move(notice);
  impl_->slopes.assign(static_cast<std::size_t>(impl_->p.ports), {});
}
std::uint64_t Switch::ipcn_notices() const { return impl_->ipcn_notices ? impl_->ipcn_notices->value() : 0; }
std::uint64_t Switch::drops() const { return impl_->drops_buffer.value() + impl_->drops_route.value(); }
std::uint64_t Switch::forwarded() const { return impl_->forwarded_.value(); }
const SwitchParams& Switch::params() const { return impl_->p; }
std::vector<Packet*>& Switch::dropped_packets() { return impl_->dropped; }

void Switch::check_buffer_accounting() const {
  const std::uint64_t counted = impl_->recount();
  if (counted != impl_->used)
    throw std::logic_error(fmt::format("{}: buffer accounting: {} cells held by packets, {} counted as used",
                                       impl_->name, counted, impl_->used));
}

}  // namespace xy::sw
