// The Lingyun switch datapath: ingress ports, a shared cell buffer with virtual output queues,
// a crossbar scheduled by iSLIP, egress ports.
//
// Cycle contract (all in cycles of the switch clock; W = port bytes per cycle):
// - A packet's first byte reaches ingress port i at cycle h (its last at h + ceil(B/W) - 1).
// - rx_mac + parse + lookup cycles later its output port is known and, if the shared buffer
//   admits it (ceil(B/cell) cells), it joins VOQ[i][o]; `enqueue` cycles later it may request
//   the crossbar (store-and-forward: not before its last byte has arrived).
// - The arbiter matches free inputs to free outputs every cycle (iSLIP, `iterations`); a
//   request at cycle r that wins is transferred from r + `arbiter`: the input and output stay
//   connected for ceil(B / (W * speedup)) cycles (one packet at a time, whole).
// - The first bytes reach the egress `crossbar` cycles after the transfer starts; the egress
//   scheduler (strict priority by VC, round robin within) starts transmission `egress` cycles
//   after that if the port is free (store-and-forward: after the whole packet is in), and the
//   first byte leaves `tx_mac` cycles later. The port then sends for ceil(B/W) cycles.
// - The egress chooses among VCs by strict priority or deficit round robin (equal quanta), and
//   with ECN on marks a packet CE as it is chosen, with probability 0 below kmin bytes of
//   backlog for the port (VOQs and egress queues, as of the cycle before), rising linearly to
//   pmax at kmax, and 1 above (RED, as DCQCN expects; each port draws from its own stream). A packet that collects telemetry (HPCC's INT, kernel/packet.hpp)
//   gets a record there too: the cycle it will start on the line, the bytes the port had
//   started before it, and the port's backlog once it has left the queue.
// - With flow control on a port, the egress only schedules a packet its gate allows (blocked
//   cycles are counted); the ingress monitor hears of each arrival and of its departure.
// - Zero-load cut-through latency, first byte in to first byte out, is therefore
//   rx_mac + parse + lookup + enqueue + arbiter + crossbar + egress + tx_mac exactly.
// - Cells are taken at admission and returned when the packet has left the egress port (in the
//   commit phase: an admission in the same cycle does not see them). Admissions are decided in the
//   ingress's commit phase, those of one cycle in port order, like an admission arbiter's. With `when_full = wait` a packet the
//   buffer cannot admit holds its port until it can, and the port takes nothing more from its
//   link meanwhile (a link with credits then stops its sender); otherwise a
//   packet the buffer cannot admit is dropped and counted (reason "buffer"); with lossless
//   (credit) ingress links nothing arrives that the buffer cannot hold.
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hw/link/flow_control.hpp"
#include "hw/switch/islip.hpp"
#include "kernel/channel.hpp"
#include "kernel/config.hpp"
#include "kernel/packet.hpp"
#include "kernel/rng.hpp"
#include "kernel/stats.hpp"
#include "kernel/waves.hpp"

namespace xy::sw {

struct SwitchParams {
  int ports = 64;
  double port_gbps = 800, clock_mhz = 1562.5;
  std::uint32_t cell_bytes = 256;
  std::uint64_t buffer_cells = 0;
  double buffer_mib = 0;  // as configured; buffer_cells are the whole cells of it
  bool cut_through = true;
  ArbiterKind arbiter = ArbiterKind::kIslip;
  int iterations = 2;
  int speedup = 1;
  int vcs = 1;
  double dt_alpha = 1.0;  // dynamic threshold: an ingress port may hold alpha x free cells
  bool wait_when_full = false;  // hold the port instead of dropping (lossless links)
  bool dwrr = false;      // egress across VCs: deficit round robin (else strict priority, VC 0 first)
  std::uint32_t dwrr_quantum = 1500;
  struct Ecn {            // RED marking at the egress on the port's queued bytes
    bool on = false;
    std::uint64_t kmin = 0, kmax = 0;
    double pmax = 0;
  } ecn;
  struct Stages {
    Cycle rx_mac, parse, lookup, enqueue, arbiter, crossbar, egress, tx_mac;
    Cycle total() const { return rx_mac + parse + lookup + enqueue + arbiter + crossbar + egress + tx_mac; }
  } lat{};
  std::uint32_t port_bytes_per_cycle() const;
  Time period() const;
  static SwitchParams declare(Config& c, const std::string& prefix);
  // Throws ConfigError unless the shared buffer admits, without a drop, all that lossless ports
  // may let in at once: port i up to port_cells[i] cells (link::lossless_cells; 0: a port without
  // flow control, which promises nothing, so then no check), and the dynamic threshold's room
  // for the last of them. With when_full = wait the switch holds a port rather than drop.
  // `where`: the switch; `fc`: what the ports run ("CBFC credits", "PFC buffers").
  void check_lossless(const std::vector<std::uint64_t>& port_cells, const std::string& where,
                      const std::string& fc) const;
};

// IPCN as modelled here (the vendor's has no public specification): an egress port predicts its
// backlog `horizon` ahead from its growth over the last `window` (the slope between the backlog
// at the window's start and at its end), and while the prediction is above `threshold_bytes`
// each packet it sends has the switch notify that packet's source (one notification per flow
// per `interval`): a packet the system makes (Switch::set_notifier, a CNP for a RoCEv2 flow),
// which enters the switch on the port the data came in by and is forwarded like any other. So
// the source hears in the switch-to-source time, not a round trip. Declared only by the systems
// that run it (ipcn.*).
struct IpcnParams {
  bool on = false;
  Cycle window = 0, horizon = 0, interval = 0;
  std::uint64_t threshold_bytes = 0;
  static IpcnParams declare(Config& c, const std::string& prefix, Time period);
};

// Where a packet goes: its output port, from its destination (a port number here; the
// forwarding table of hw/switch/forwarding maps real addresses to this).
using RouteFn = std::function<int(const Packet&)>;

class Switch {
 public:
  // `in[i]` brings packets to port i (their arrival is the first byte); `out[o]` takes them
  // from port o (pushed when the first byte leaves). Pointers may be null for unused ports.
  Switch(const std::string& name, const SwitchParams& params, Clock& clock, Stats& stats,
         std::vector<Channel<Packet*>*> in, std::vector<Channel<Packet*>*> out, RouteFn route, std::uint64_t seed = 1);
  ~Switch();
  // The memory a switch of `ports` takes for its queues and arbiter, estimated before it is
  // built: a VOQ per input and output pair and the arbiter's request bitmaps grow as ports^2.
  static double memory_bytes(int ports);

  Core& ingress_core(int port);
  Core& egress_core(int port);
  void set_egress_gate(int port, link::EgressGate* gate);          // null: always free to send
  void set_ingress_monitor(int port, link::IngressMonitor* monitor);
  // The stages a packet opens here (Packet::advance): in the core from its arrival, and from
  // its first byte out, in the FIFO to the port. None unless a system names them.
  struct Stages {
    Stage core = kNoStage, to_port = kNoStage;
  };
  void set_stages(const Stages& s);
  // IPCN at every egress port (IpcnParams), its notifications made by `notice` for the source of
  // a data packet (null: none for it).
  using NoticeFn = std::function<Packet*(Packet& data)>;
  void set_ipcn(const IpcnParams& p, NoticeFn notice);
  std::uint64_t ipcn_notices() const;  // notifications sent
  // Offers .buffer_cells (the shared buffer's cells in use) to the waves under its name.
  void probe(Waves& waves) const;
  std::uint64_t buffer_cells_used() const;
  // Telemetry a NIC or a notification engine can read: bytes waiting for an output port (in
  // the VOQs of every input and in its egress queues).
  std::uint64_t output_backlog_bytes(int port) const;
  // The output ports that packets which came in on `input` on `vc` wait for (in a VOQ or an
  // egress queue), in port order: what a held upstream sender's credits or pause wait on, for a
  // deadlock detector's wait-for graph.
  std::vector<int> outputs_waited_for(int input, int vc) const;
  std::uint64_t peak_buffer_cells() const;
  // The shared buffer's cells in use as each packet was admitted (itself included): quantile q.
  std::uint64_t admitted_buffer_cells(double q) const;
  std::uint64_t drops() const;
  std::uint64_t forwarded() const;
  // Packets dropped (counted with their reason); the testbench returns them to its pool.
  std::vector<Packet*>& dropped_packets();
  // Recounts every cell held by a packet anywhere in the switch; throws std::logic_error if it
  // differs from the running count. (Every fabric and egress step also checks that the cells
  // in VOQs and past the crossbar add up to the used count, and throws if not.)
  void check_buffer_accounting() const;
  const SwitchParams& params() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace xy::sw
