// link-llr: two ports joined by two serial lines (one per direction), frames both ways, LLR on
// or off, faults injected on the lines. Checks: every frame delivered exactly once, in order,
// unchanged (LLR on), and every cycle's bookkeeping through the port cores.
#include "tb/lib/scenario.hpp"

#include <cmath>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "hw/link/mac.hpp"
#include "hw/link/port_fc.hpp"
#include "hw/link/serial_line.hpp"
#include "hw/link/wire.hpp"
#include "rtl/link/cbfc_sender_twin.hpp"
#include "rtl/link/drop_in.hpp"
#include "rtl/link/llr_twins.hpp"
#include "tb/lib/e2e_transport.hpp"
#include "tb/lib/frames.hpp"
#include "tb/lib/figure.hpp"
#include "tb/lib/vc_hosts.hpp"
#include "kernel/clock_domain.hpp"

namespace xy {
namespace {

using link::LlrConfig;
using link::Mac;
using link::SerialLine;

// Line bytes of a data frame besides its own: the LLR header (wire.hpp), preamble and gap.
constexpr std::uint32_t kFrameOverheadBytes = link::kDataHeaderBytes + link::kPreambleGapBytes;

// Who recovers a corrupted frame: LLR on this hop; Go-Back-N between the end points, whose ACKs
// and NACKs take `control_delay` more cycles than this hop's (RoCE-style NAK over a path), which
// is LLR with its timers and its control frames' delay set so; both, LLR on the hop and the
// composed hosts' end-to-end transport above it (tb/lib/e2e_transport.hpp), which resends what
// LLR flushes; or nobody (the frame is lost).
enum class Recovery { kLlr, kEndToEnd, kLlrAndEndToEnd, kNone };

// The wire frames between a MAC and its line, each way: a cycle through a FIFO of two.
constexpr ChannelSpec kLineFifo{1, 2, 1, 2};

// The physical link both scenarios run on.
struct LineParams {
  double clock_mhz;
  std::uint32_t width;
  double cable_m;
  Cycle latency;  // one way: PHY + cable
  Time period;
  double phy_ns;
  explicit LineParams(Config& c) {
    clock_mhz = c.real("link.clock_mhz", 1562.5, "MHz", 1, 100000, "MAC clock");
    width = static_cast<std::uint32_t>(c.integer("link.width_bytes", 64, "bytes", 1, 4096, "line bytes per cycle (64 at 1562.5 MHz = 800 Gb/s)"));
    cable_m = c.real("link.cable_m", 2, "m", 0, 1e7, "cable or fibre length; 5 ns per metre");
    phy_ns = c.real("link.phy_latency_ns", 150, "ns", 0, 1e6, "one-way PHY latency (PCS, FEC, PMA, both ends) (check)");
    period = period_from_mhz(clock_mhz);
    latency = std::max<Cycle>(1, cycles(phy_ns + 5 * cable_m));
  }
  Cycle cycles(double ns) const { return cycles_for(from_ns(ns), period); }
  void offer_reach(RunContext& ctx) const {
    ctx.reach_at_least(latency * period,
                       fmt::format("the link (link.phy_latency_ns = {} + link.cable_m = {} at 5 ns/m)", phy_ns, cable_m));
  }
  double gbps() const { return xy::gbps(width, period); }
};

struct LinkParams : LineParams {
  Recovery recovery;
  bool llr;        // LLR on this hop: recovery llr or llr+e2e
  bool transport;  // the end-to-end transport above the MACs: recovery llr+e2e
  Cycle control_delay = 0;
  link::LlrParams llr_params;  // as declared; llr_config: this link's
  LlrConfig llr_config;
  E2eTransport::Settings e2e;  // the end points' Go-Back-N
  bool rtl = false;  // llr.impl=rtl
  link::LineFaults faults;
  std::uint64_t frames;
  std::uint32_t min_bytes, max_bytes;
  double load;
  std::string warning;

  explicit LinkParams(Config& c) : LineParams(c) {
    const std::string recovery_name =
        c.choice("link.recovery", "llr", {"llr", "e2e", "llr+e2e", "none"},
                 "llr: Go-Back-N on this hop; e2e: Go-Back-N between end points over e2e.rtt_us; llr+e2e: both, the "
                 "end points resend what LLR flushes; none: corrupted frames are lost");
    recovery = recovery_name == "llr"       ? Recovery::kLlr
               : recovery_name == "e2e"     ? Recovery::kEndToEnd
               : recovery_name == "llr+e2e" ? Recovery::kLlrAndEndToEnd
                                            : Recovery::kNone;
    llr = recovery == Recovery::kLlr || recovery == Recovery::kLlrAndEndToEnd;
    transport = recovery == Recovery::kLlrAndEndToEnd;
    const double e2e_rtt = c.real("e2e.rtt_us", 8, "us", 0, 1e6, "end-to-end round trip of the path (recovery = e2e)");
    e2e = E2eTransport::declare(c, period, 32);
    llr_params = link::LlrParams::declare(c, period);
    LlrConfig& l = llr_config = llr_params.config;
    if (recovery == Recovery::kEndToEnd) {  // the e2e.* timers replace the llr.* ones
      const Cycle rtt = cycles_for(from_us(e2e_rtt), period);
      control_delay = rtt > 2 * latency ? rtt - 2 * latency : 0;
      l.replay_timer_cycles = l.nack_timer_cycles = e2e.config.replay_timer_cycles;  // a NACK re-sent after a timeout
      l.ack_timer_cycles = e2e.config.ack_timer_cycles;
    }
    const FrameSizes sizes = FrameSizes::declare(c, {64, 1500}, 64, 9216);
    min_bytes = sizes.min_bytes;
    max_bytes = sizes.max_bytes;
    // Replay buffer: line rate x loop time + two jumbo frames (SPEC 2.3).
    const double loop_cycles = 2.0 * latency + static_cast<double>(control_delay) + 2.0 * (9216 + 24) / width +
                               static_cast<double>(l.ack_timer_cycles);
    const auto needed = static_cast<std::uint64_t>(std::ceil(loop_cycles * width)) + 2 * 9216;
    const std::uint64_t given = llr_params.replay_buffer_bytes, max_buffer = llr_params.max_replay_buffer_bytes;
    if (llr && needed > max_buffer && given == 0)  // end points keep their copies in host memory
      throw ConfigError(fmt::format(
          "link.cable_m = {}: LLR over this link needs a {:.1f} MB replay buffer (line rate x loop time of {:.2f} us + 2 "
          "jumbo frames), above llr.max_replay_buffer_bytes = {}; LLR is for short reach: set link.recovery=e2e or none",
          cable_m, needed / 1e6, loop_cycles * static_cast<double>(period) / kUs, max_buffer));
    l.replay_buffer_bytes = llr_params.replay_buffer_for(needed);
    l.validate("llr");
    if (llr && given && given < needed)
      warning = fmt::format("llr.replay_buffer_bytes = {} is below the {} the sizing rule asks for: the link will stall "
                            "waiting for ACKs", given, needed);
    if (recovery != Recovery::kNone) check_timers();
    rtl = llr_params.rtl;
    if (rtl) rtl::check_llr_twins(l);
    faults.frame_error = c.real("link.frame_error", 0, "probability", 0, 1, "chance a frame is corrupted (one bit flipped); 1 = a dead lane");
    faults.burst_start = c.real("link.burst_start", 0, "probability", 0, 0.5, "chance per frame that a burst of corrupted frames starts");
    faults.burst_frames = static_cast<std::uint32_t>(c.integer("link.burst_frames", 100, "frames", 1, 1 << 20, "frames per burst"));
    faults.control_loss = c.real("link.control_loss", 0, "probability", 0, 0.5, "chance a control ordered set is lost");
    const double flap_at = c.real("link.flap_at_us", 0, "us", 0, 1e9, "a link flap starts here");
    const double flap_us = c.real("link.flap_us", 0, "us", 0, 1e9, "and lasts this long; 0 = none");
    if (flap_us > 0) {
      faults.dark_from = cycles(flap_at * 1000);
      faults.dark_until = cycles((flap_at + flap_us) * 1000);
    }
    frames = static_cast<std::uint64_t>(c.integer("traffic.frames", 20000, "frames", 1, 1ll << 40, "frames each way"));
    load = c.real("traffic.load", 1, "fraction", 0.0001, 1, "offered load each way, fraction of line rate");
  }

  // An ACK comes back after the loop: both ways, the control delay, the largest frame and the
  // ACK timer; a NACK's replay without the ACK timer (LlrParams::check_timers says why).
  void check_timers() const {
    const Cycle largest_frame = (max_bytes + kFrameOverheadBytes + width - 1) / width;
    const Cycle nack_loop = 2 * latency + control_delay + largest_frame;
    const Cycle ack_loop = nack_loop + llr_config.ack_timer_cycles;
    const double ns = to_ns(period);
    const std::string parts = fmt::format("2 x {:.2f} ns one way + {:.2f} ns control delay + {:.2f} ns for the "
                                          "largest frame", latency * ns, control_delay * ns, largest_frame * ns);
    if (llr) llr_params.check_timers(period, ack_loop, nack_loop, parts);
    if (recovery == Recovery::kLlr) return;
    // The end points' ACK: the hop's loop with their own ACK timer (and LLR's, for one above it).
    const Cycle e2e_loop = nack_loop + e2e.config.ack_timer_cycles + (transport ? llr_config.ack_timer_cycles : 0);
    if (e2e.config.replay_timer_cycles <= e2e_loop)  // both timers are e2e.rto_us
      throw ConfigError(fmt::format("e2e.rto_us = {}: must be above {:.2f} us, the time an ACK takes to come back ({} + "
                                    "{:.2f} ns e2e.ack_timer_ns{})",
                                    e2e.rto_us, e2e_loop * ns / 1000, parts,
                                    e2e.config.ack_timer_cycles * ns,
                                    transport ? fmt::format(" + {:.2f} ns llr.ack_timer_ns", llr_config.ack_timer_cycles * ns) : ""));
  }
};

// One direction's traffic: a source at one port, a sink at the other.
struct Direction {
  Scoreboard scoreboard;
  std::unique_ptr<Channel<Packet*>> from_host, to_host;  // into the sending MAC, out of the receiving one
  // With the end-to-end transport: from the source into the sending end's, out of the receiving end's to the sink.
  std::unique_ptr<Channel<Packet*>> to_transport, from_transport;
  std::unique_ptr<FrameSource> source;
  std::unique_ptr<FrameSink> sink;
};

class LinkLlr : public Testbench {
 public:
  explicit LinkLlr(RunContext& ctx) : p_(ctx.config), stats_(ctx.stats), domain_("link", period_from_mhz(p_.clock_mhz)) {
    Clock& clock = domain_.clock();
    p_.offer_reach(ctx);
    const double mean_frame = (p_.min_bytes + p_.max_bytes) / 2.0 + kFrameOverheadBytes;
    // Load 1 saturates: the source keeps the port's queue full.
    const double mean_gap = p_.load >= 1 ? 0.0 : std::max(0.0, mean_frame / p_.width / p_.load - 1);
    for (int d = 0; d < 2; ++d) {
      Direction& dir = dirs_[d];
      const std::string from = d == 0 ? "a" : "b", to = d == 0 ? "b" : "a";
      dir.from_host = std::make_unique<Channel<Packet*>>("top." + from + ".host_tx", clock, ChannelSpec{1, 4, 1, 2});
      dir.to_host = std::make_unique<Channel<Packet*>>("top." + to + ".host_rx", clock, ChannelSpec{1, 0, 1, 2});
      if (p_.transport) {
        dir.to_transport = std::make_unique<Channel<Packet*>>("top." + from + ".to_e2e", clock, ChannelSpec{1, 4, 1, 2});
        dir.from_transport = std::make_unique<Channel<Packet*>>("top." + to + ".from_e2e", clock, ChannelSpec{1, 0, 1, 2});
      }
      dir.source = std::make_unique<FrameSource>(
          "top." + from + ".source", p_.transport ? *dir.to_transport : *dir.from_host, pool_, dir.scoreboard,
          ctx.rng("top." + from + ".source"), p_.frames, p_.min_bytes, p_.max_bytes, mean_gap);
      dir.source->leave_room_for_fcs();
      dir.source->address(d, 1 - d);
      dir.sink = std::make_unique<FrameSink>("top." + to + ".sink", p_.transport ? *dir.from_transport : *dir.to_host,
                                             pool_, dir.scoreboard);
      domain_.attach(*dir.source);
      domain_.attach(*dir.sink);
      dir.source->wake_at(0);
      latency_[d] = &ctx.stats.histogram("top." + to + ".frame_latency", clock.period(),
                                         "frame accepted by the sending MAC to handed to the host");
    }
    // Port s sends direction s on its line and receives direction 1 - s from the other's.
    const char* names[2] = {"top.a", "top.b"};
    for (int s = 0; s < 2; ++s) {
      to_line_[s] = std::make_unique<Channel<Packet*>>(std::string(names[s]) + ".to_line", clock, kLineFifo);
      from_line_[s] = std::make_unique<Channel<Packet*>>(std::string(names[s]) + ".from_line", clock, ChannelSpec{});
    }
    // Go-Back-N between end points starts connected (queue pairs are, before traffic): no INIT
    // over the end-to-end loop.
    const link::MacConfig mac{p_.recovery != Recovery::kNone, p_.llr_config, p_.recovery == Recovery::kEndToEnd};
    for (int s = 0; s < 2; ++s) {
      const std::string n = names[s];
      link::LlrEnds ends{rtl::llr_transmitter(p_.rtl, p_.llr_config, clock), rtl::llr_receiver(p_.rtl, p_.llr_config)};
      macs_[s] = std::make_unique<Mac>(n + ".mac", mac, std::move(ends), *dirs_[s].from_host, *dirs_[1 - s].to_host,
                                       nullptr, nullptr, *to_line_[s], *from_line_[s], pool_, ctx.stats);
      macs_[s]->set_stages({1, 2});  // this link's two: in the MACs, then handed on to the host
      lines_[s] = std::make_unique<SerialLine>(n + ".line", p_.width, p_.latency, p_.control_delay, p_.faults,
                                               ctx.rng(n + ".line"), *to_line_[s], *from_line_[1 - s], pool_, ctx.stats);
      lines_[s]->capture_to(ctx.capture.for_link(n));
      domain_.attach(*macs_[s]);
      domain_.attach(*lines_[s]);
      macs_[s]->wake_at(0);
    }
    for (int s = 0; s < 2; ++s) {
      if (p_.transport) {  // port s's end points: its source and the sink of the other direction
        const std::string n = std::string(names[s]) + ".e2e";
        link::PortAttachment port(*dirs_[s].from_host, *dirs_[1 - s].to_host, nullptr, nullptr, [this, s](Core& t) {
          dirs_[s].from_host->connect(&t, macs_[s].get());
          dirs_[1 - s].to_host->connect(macs_[s].get(), &t);
        });
        transports_[s] = std::make_unique<E2eTransport>(n, s, 2, p_.e2e.config, p_.width, *dirs_[s].to_transport,
                                                        *dirs_[1 - s].from_transport, port, pool_, ctx.stats);
        dirs_[s].to_transport->connect(dirs_[s].source.get(), transports_[s].get());
        dirs_[1 - s].from_transport->connect(transports_[s].get(), dirs_[1 - s].sink.get());
        domain_.attach(*transports_[s]);
      } else {
        dirs_[s].from_host->connect(dirs_[s].source.get(), macs_[s].get());
        dirs_[s].to_host->connect(macs_[1 - s].get(), dirs_[s].sink.get());
      }
      to_line_[s]->connect(macs_[s].get(), lines_[s].get());
      from_line_[1 - s]->connect(lines_[s].get(), macs_[1 - s].get());
    }
    for (int d = 0; d < 2; ++d)
      dirs_[d].sink->on_frame([this, d](const Packet& f) {
        const Clock& clk = domain_.clock();
        const Time now = clk.time_of(clk.now());
        Time since_accepted = now - f.stage_since;  // the stages the MACs opened: accepted to handed on
        for (Time t : f.stage_time) since_accepted += t;
        latency_[d]->record(since_accepted / clk.period());
        delivered_bytes_ += f.bytes;
        last_delivery_ = clk.now();
      });
    if (!p_.warning.empty()) ctx.warnings.push_back(p_.warning);
    for (const auto& mac : macs_) mac->probe(ctx.waves);
    ctx.waves.watch(clock);
  }

  // Done when every frame was made and nothing is left anywhere on the way.
  bool done() const override {
    for (const auto& d : dirs_)
      if (d.source->made() < p_.frames || d.from_host->in_flight() || d.to_host->in_flight()) return false;
    for (const auto& t : transports_)
      if (t && !t->idle()) return false;
    return macs_[0]->idle() && macs_[1]->idle() && lines_[0]->idle() && lines_[1]->idle();
  }
  double done_fraction() const override {
    double made = 0;
    for (const auto& d : dirs_) made += d.source->made();
    return made / (2.0 * p_.frames);
  }
  // Every frame made: what is left is on its way, or waiting in a replay buffer for its ACK.
  std::string waiting_for() const override {
    for (const auto& d : dirs_)
      if (d.source->made() < p_.frames) return "";
    return fmt::format("frames in flight and unacknowledged in the LLR replay buffers ({} at a, {} at b)",
                       macs_[0]->llr_tx().kept(), macs_[1]->llr_tx().kept());
  }
  // A FLUSH moves the link on too: a lane that stays bad delivers nothing but keeps flushing.
  // Not with the end points above: what LLR flushed comes again; only frames they deliver count.
  std::uint64_t progress() const override {
    if (p_.transport) return dirs_[0].scoreboard.received() + dirs_[1].scoreboard.received();
    return macs_[0]->delivered() + macs_[1]->delivered() + flushed();
  }
  // A TX still waiting for its INIT to be answered has lost its partner: the link is down.
  std::string stall() const override {
    std::string down;
    for (int s = 0; s < 2; ++s) {
      const link::LlrTransmitter& tx = macs_[s]->llr_tx();
      if (tx.state() == link::LlrTxState::kInit || tx.state() == link::LlrTxState::kFlush)
        down += fmt::format("{}{} (its LLR TX in {}, {} frames flushed, INIT unanswered)", down.empty() ? "" : ", ",
                            s == 0 ? "top.a" : "top.b", link::to_string(tx.state()), tx.flushed_frames());
    }
    return down.empty() ? "" : "link down at " + down;
  }
  Work work() const override {
    const double cycles = static_cast<double>(p_.frames) * (p_.min_bytes + kFrameOverheadBytes) / p_.width / p_.load;
    return {static_cast<Time>(cycles * static_cast<double>(p_.period)),
            fmt::format("traffic.frames = {} at {:.0f} Gb/s", p_.frames, p_.gbps() * p_.load)};
  }

  void check() const override {
    for (int i = 0; i < 2; ++i) {
      const Direction& d = dirs_[i];
      if (d.scoreboard.duplicated() || d.scoreboard.reordered() || d.scoreboard.corrupted())
        throw CheckFailure(d.sink->first_error());
      // With recovery nothing may go missing unless its sender FLUSHed it and no layer above
      // resends it; with the end points above, nothing at all.
      const std::uint64_t flushed_here = p_.transport ? 0 : macs_[i]->llr_tx().flushed_frames();
      const std::uint64_t missing = d.source->made() - d.scoreboard.received();
      if (p_.recovery != Recovery::kNone && missing > flushed_here)
        throw CheckFailure(fmt::format("{} lost {} frames {}, flushed {}", p_.transport ? "LLR and the end points" : "LLR",
                                       missing, i == 0 ? "a->b" : "b->a", macs_[i]->llr_tx().flushed_frames()));
    }
  }

  nlohmann::json summary() const override {
    const Time period = domain_.clock().period();
    nlohmann::json s;
    const double line_gbps = gbps(p_.width, period);
    s["line_rate_Gbps"] = line_gbps;
    s["recovery"] = p_.recovery == Recovery::kLlr              ? "llr"
                    : p_.recovery == Recovery::kEndToEnd       ? "e2e"
                    : p_.recovery == Recovery::kLlrAndEndToEnd ? "llr+e2e"
                                                               : "none";
    s["one_way_latency_cycles"] = p_.latency;
    s["replay_buffer_bytes"] = p_.llr_config.replay_buffer_bytes;
    if (!p_.warning.empty()) s["warnings"].push_back(p_.warning);
    if (const std::string gave_up = flush_note(); !gave_up.empty() && !p_.transport) s["warnings"].push_back(gave_up);
    const std::uint64_t delivered_bytes = delivered_bytes_;
    std::uint64_t line_bytes = 0, frames_sent = 0, controls = 0, corrupted = 0;
    for (const std::string n : {"top.a", "top.b"}) {
      frames_sent += counter(n + ".mac.frames_sent");
      controls += counter(n + ".mac.control_frames");
      corrupted += counter(n + ".line.corrupted_frames");
    }
    line_bytes = lines_[0]->bytes_sent() + lines_[1]->bytes_sent();
    // A run stopped before the end ran to now, not to its last delivery.
    const double elapsed = static_cast<double>(done() ? last_delivery_ : domain_.clock().now()) + 1;
    const double goodput = gbps(static_cast<double>(delivered_bytes) / 2 / elapsed, period);
    s["goodput_Gbps"] = goodput;  // per direction
    // The arithmetic of the overheads: what the line carried besides frame bytes.
    const std::uint64_t frame_bytes = delivered_bytes;  // each delivered once; replays cost more line
    // Port a's line while it was sending frames: if the MAC kept it full, its length is exactly
    // the frames' bytes + 24 each + the control sets between them.
    const auto w = lines_[0]->busy_window();
    s["line_a_to_b"] = {{"busy_line_bytes", w.line_bytes},
                        {"frame_line_bytes", w.frame_line_bytes},
                        {"control_bytes", w.control_bytes},
                        {"measured_goodput_Gbps", line_gbps * static_cast<double>(w.frame_bytes) / static_cast<double>(w.line_bytes)},
                        {"accounted_goodput_Gbps", line_gbps * static_cast<double>(w.frame_bytes) /
                                                       static_cast<double>(w.frame_line_bytes + w.control_bytes)}};
    s["overhead"] = {{"frames_sent", frames_sent},
                     {"frame_bytes_delivered", frame_bytes},
                     {"preamble_fcs_gap_bytes", frames_sent * kFrameOverheadBytes},
                     {"control_sets", controls},
                     {"control_bytes", controls * link::LlrControl::kWireBytes},
                     {"line_bytes", line_bytes},
                     {"goodput_at_full_line_Gbps", line_gbps * static_cast<double>(frame_bytes) / static_cast<double>(line_bytes)}};
    const double loss = frames_sent ? static_cast<double>(corrupted) / static_cast<double>(frames_sent) : 0;
    const double mean_frame_cycles =
        ((p_.min_bytes + p_.max_bytes) / 2.0 + kFrameOverheadBytes) / static_cast<double>(p_.width);
    const double recovery =
        static_cast<double>(lines_[0]->mean_recovery_cycles() + lines_[1]->mean_recovery_cycles()) / 2;
    const double frames_per_loop = recovery / mean_frame_cycles;
    s["frame_loss"] = loss;
    s["recovery_loop_cycles"] = recovery;
    s["gbn_efficiency"] = (1 - loss) / (1 - loss + frames_per_loop * loss);
    s["goodput_ratio"] = p_.load >= 1 ? goodput / zero_error_goodput() : 0.0;
    s["replays"] = macs_[0]->llr_tx().replays() + macs_[1]->llr_tx().replays();
    for (int p = 0; p < 2; ++p) {  // where each end stands (useful when a run hangs)
      const link::LlrTransmitter& tx = macs_[p]->llr_tx();
      const link::LlrReceiver& rx = macs_[p]->llr_rx();
      s["ports"][p == 0 ? "top.a" : "top.b"] = {{"tx_state", link::to_string(tx.state())},
                                               {"kept_frames", tx.kept()},
                                               {"flushed_frames", tx.flushed_frames()},
                                               {"rx_state", link::to_string(rx.state())},
                                               {"rx_expected", rx.expected()}};
    }
    s["flushed_frames"] = flushed();
    if (p_.transport) s["e2e_resent"] = transports_[0]->resent() + transports_[1]->resent();
    s["frames_lost"] = lost(dirs_[0]) + lost(dirs_[1]);
    // Only a run stopped early has frames still on their way; they are not lost.
    if (const std::uint64_t left = in_flight(dirs_[0]) + in_flight(dirs_[1])) s["frames_in_flight"] = left;
    const auto lat = latency_[0]->to_json();
    s["latency_p50_ns"] = lat["p50_ns"];
    s["latency_p99_ns"] = lat["p99_ns"];
    s["latency_p999_ns"] = lat["p999_ns"];
    s["latency_max_ns"] = lat["max_ns"];
    return s;
  }

  std::string report() const override {
    const nlohmann::json s = summary();
    std::string out;
    out += fmt::format("  {:<26} {:.1f} Gb/s each way, recovery {}, one-way latency {} cycles\n", "line",
                       s["line_rate_Gbps"].get<double>(), s["recovery"].get<std::string>(), p_.latency);
    out += fmt::format("  {:<26} {:.2f} Gb/s each way (ratio to zero errors {:.4f}; Go-Back-N {:.4f})\n", "goodput",
                       s["goodput_Gbps"].get<double>(), s["goodput_ratio"].get<double>(),
                       s["gbn_efficiency"].get<double>());
    const bool in_flight = s.contains("frames_in_flight");
    out += fmt::format("  {:<26} loss {:.3g}, {} replays, {} flushed, {} lost{}\n", "faults",
                       s["frame_loss"].get<double>(), s["replays"].get<std::uint64_t>(),
                       s["flushed_frames"].get<std::uint64_t>(), s["frames_lost"].get<std::uint64_t>(),
                       in_flight ? fmt::format(", {} still in flight", s["frames_in_flight"].get<std::uint64_t>())
                       : s["frames_lost"].get<std::uint64_t>() == 0 ? " (every frame delivered)" : "");
    if (const std::string gave_up = flush_note(); !gave_up.empty()) out += fmt::format("  {:<26} {}\n", "", gave_up);
    out += fmt::format("  {:<26} p50 {} p99 {} p99.9 {} max {} ns\n", "frame latency a->b", figure(s["latency_p50_ns"], 1),
                       figure(s["latency_p99_ns"], 1), figure(s["latency_p999_ns"], 1), figure(s["latency_max_ns"], 1));
    return out;
  }

 private:
  std::uint64_t counter(const std::string& key) const { return stats_.find_counter(key)->value(); }
  std::uint64_t flushed() const {
    return macs_[0]->llr_tx().flushed_frames() + macs_[1]->llr_tx().flushed_frames();
  }
  // Frames of direction `d` gone for good: none with the end points above (they resend until it
  // arrives); with LLR alone those its sender flushed (LLR gave up); without recovery those the
  // receiving MAC dropped for a bad FCS and those the line lost.
  std::uint64_t lost(const Direction& d) const {
    if (p_.transport) return 0;
    const int s = static_cast<int>(&d - dirs_);
    const std::uint64_t gone = p_.recovery != Recovery::kNone
                                   ? macs_[s]->llr_tx().flushed_frames()
                                   : macs_[1 - s]->frames_lost() + lines_[s]->frames_lost();
    return std::min(gone, d.source->made() - d.scoreboard.received());
  }
  // Frames made and neither received nor lost: on their way when the run stopped.
  std::uint64_t in_flight(const Direction& d) const { return d.source->made() - d.scoreboard.received() - lost(d); }
  // What a FLUSH means here: the sender gave the frames up after llr.replay_limit replays without
  // progress, and no layer above recovers them on this bare link, so they are lost, not late
  // (the composed hosts' end-to-end transport resends them; here nothing does). "" without one.
  std::string flush_note() const {
    if (flushed() == 0) return "";
    if (p_.transport)
      return fmt::format("LLR flushed {} frames after llr.replay_limit = {} replays without progress; the end points' "
                         "Go-Back-N resent {} packets, so none is lost",
                         flushed(), p_.llr_config.replay_limit, transports_[0]->resent() + transports_[1]->resent());
    return fmt::format("{} flushed {} frames after llr.replay_limit = {} replays without progress: no layer above "
                       "recovers them here, so they are among the {} frames lost (not delivered); raise "
                       "llr.replay_limit (up to 1000) for a soak that delivers every frame (docs/link.md)",
                       p_.recovery == Recovery::kEndToEnd ? "The end points' Go-Back-N" : "LLR", flushed(),
                       p_.llr_config.replay_limit, lost(dirs_[0]) + lost(dirs_[1]));
  }
  // Frames of mean size back to back, with the ACKs of the other direction sharing the line.
  double zero_error_goodput() const {
    const double frame = (p_.min_bytes + p_.max_bytes) / 2.0;
    const double line = frame + kFrameOverheadBytes +
                        (p_.recovery != Recovery::kNone
                             ? double(link::LlrControl::kWireBytes) / p_.llr_config.ack_every
                             : 0.0);
    return gbps(p_.width, domain_.clock().period()) * frame / line;
  }

  LinkParams p_;
  Stats& stats_;
  ClockDomain domain_;
  PacketPool pool_;
  Direction dirs_[2];
  std::unique_ptr<Channel<Packet*>> to_line_[2], from_line_[2];  // per port: its MAC's to its line, from the other's
  std::unique_ptr<Mac> macs_[2];
  std::unique_ptr<SerialLine> lines_[2];  // the line each port sends on
  std::unique_ptr<E2eTransport> transports_[2];  // recovery llr+e2e: each port's end point above its MAC
  std::uint64_t delivered_bytes_ = 0;
  LatencyHistogram* latency_[2] = {};
  Cycle last_delivery_ = 0;
};


// link-cbfc: a fast sender and a slow receiver on one link, with CBFC credits, PFC pauses or no
// flow control; credit stalls, buffer occupancy and credit updates.
class LinkCbfc : public Testbench {
 public:
  explicit LinkCbfc(RunContext& ctx) : line_(ctx.config), stats_(ctx.stats), domain_("link", line_.period) {
    line_.offer_reach(ctx);
    Config& c = ctx.config;
    fc_ = link::declare_fc_mode(c, "fc.mode", "cbfc", "flow control on the link");
    const int vcs = static_cast<int>(c.integer("fc.vcs", 4, "VCs", 1, 8, "virtual channels (priorities) in use"));
    const link::CbfcParams cbfc = link::CbfcParams::declare(c, vcs);
    link::CbfcConfig cb = cbfc.on_clock(line_.period);
    const bool rtl = cbfc.rtl;
    if (rtl && fc_ != link::FcMode::kCbfc)
      throw ConfigError(fmt::format("cbfc.impl = 'rtl' with fc.mode = '{}': the twin is a CBFC engine; "
                                    "allowed with fc.mode=cbfc only", link::fc_mode_name(fc_)));
    const link::PfcConfig pf = link::PfcConfig::declare(c, vcs, line_.gbps());
    drain_gbps_ = c.real("rx.drain_gbps", 400, "Gb/s", 0.001, 1e6, "how fast the receiving host takes frames");
    link::LineFaults faults;
    faults.frame_loss = c.real("link.frame_loss", 0, "probability", 0, 0.5, "chance a data frame is lost on the line");
    faults.control_loss = c.real("link.update_loss", 0, "probability", 0, 1, "chance a credit update or pause frame is lost");
    frames_ = static_cast<std::uint64_t>(c.integer("traffic.frames", 20000, "frames", 1, 1ll << 40, "frames to send"));
    const FrameSizes sizes = FrameSizes::declare(c, {64, 1500}, 64, 9216);
    const std::uint32_t min_bytes = min_bytes_ = sizes.min_bytes, max_bytes = sizes.max_bytes;
    const Time round_trip = 2 * line_.latency * line_.period;
    const std::uint64_t needed = link::required_buffer_credits(cb, line_.gbps(), round_trip, max_bytes);
    const std::uint32_t buffer = cbfc.sized_for(needed);
    cb.buffer_credits.assign(vcs, buffer);
    if (fc_ == link::FcMode::kCbfc) cb.check_holds_frame(max_bytes, "traffic.max_bytes");
    if (fc_ == link::FcMode::kCbfc) {
      // A buffer the counters cannot even track is not a configuration, it is the wrong tool.
      if (needed > (cb.counter_mask() + std::uint64_t{1}) / 2)
        throw ConfigError(fmt::format("link.cable_m = {}: CBFC over this link needs {} credits of {} B per VC "
                                      "(round trip x rate), more than {}-bit counters can track; CBFC is per hop "
                                      "and short reach: set fc.mode=none",
                                      line_.cable_m, needed, cb.credit_bytes, cb.counter_bits));
      sizing_ = link::check_buffer(cb, line_.gbps(), round_trip, max_bytes);
      if (rtl) rtl::CbfcSenderTwin::check(cb);
    }
    if (!sizing_.empty()) ctx.warnings.push_back(sizing_);

    // a: source -> sender (a queue per VC, asking a's PortFc) -> MAC -> line -> b's MAC ->
    // receiver (its buffer drains at rx.drain_gbps, telling b's PortFc) -> sink; b's PortFc
    // answers through b's MAC and the line back. No LLR: a frame the line loses is lost.
    Clock& clock = domain_.clock();
    const char* names[2] = {"top.a", "top.b"};
    for (int s = 0; s < 2; ++s) {
      const std::string n = names[s];
      Side& x = sides_[s];
      x.host_to_mac = std::make_unique<Channel<Packet*>>(n + ".tx_fifo", clock, kLineFifo);
      x.mac_to_host = std::make_unique<Channel<Packet*>>(n + ".rx_fifo", clock, ChannelSpec{});
      x.fc_out = std::make_unique<Channel<link::FcMessage>>(n + ".fc_out", clock, ChannelSpec{});
      x.fc_in = std::make_unique<Channel<link::FcMessage>>(n + ".fc_in", clock, ChannelSpec{});
      x.to_line = std::make_unique<Channel<Packet*>>(n + ".to_line", clock, kLineFifo);
      x.from_line = std::make_unique<Channel<Packet*>>(n + ".from_line", clock, ChannelSpec{});
    }
    for (int s = 0; s < 2; ++s) {
      const std::string n = names[s];
      Side& x = sides_[s];
      link::PortFcOptions end;  // data one way: a sends, b receives
      end.sends = s == 0;
      end.receives = s == 1;
      x.fc = std::make_unique<link::PortFc>(n + ".fc", fc_, cb, pf, clock, ctx.stats, *x.fc_out, *x.fc_in, end,
                                            rtl::credit_sender(rtl && s == 0, cb, clock));
      x.mac = std::make_unique<Mac>(n + ".mac", link::MacConfig{false, link::LlrConfig{}}, link::LlrEnds{},
                                    *x.host_to_mac, *x.mac_to_host, x.fc_out.get(), x.fc_in.get(), *x.to_line,
                                    *x.from_line, pool_, ctx.stats);
      x.line = std::make_unique<SerialLine>(n + ".line", line_.width, line_.latency, 0, faults, ctx.rng(n + ".line"),
                                            *x.to_line, *sides_[1 - s].from_line, pool_, ctx.stats);
      for (Core* core : std::initializer_list<Core*>{x.fc.get(), x.mac.get(), x.line.get()}) domain_.attach(*core);
    }
    Side &a = sides_[0], &b = sides_[1];
    from_source_ = std::make_unique<Channel<Packet*>>("top.a.host_tx", clock, ChannelSpec{1, 4, 1, 2});
    to_sink_ = std::make_unique<Channel<Packet*>>("top.b.host_rx", clock, ChannelSpec{1, 0, 1, 2});
    source_ = std::make_unique<FrameSource>("top.a.source", *from_source_, pool_, scoreboard_, ctx.rng("top.a.source"),
                                            frames_, min_bytes, max_bytes, 0.0);
    source_->spread_over_vcs(vcs);
    source_->leave_room_for_fcs();
    sender_ = std::make_unique<VcSender>("top.a.host", vcs, *from_source_, *a.host_to_mac, *a.fc, ctx.stats);
    receiver_ = std::make_unique<DrainingReceiver>("top.b.host", vcs, drain_gbps_ / line_.gbps() * line_.width,
                                                   *b.mac_to_host, *to_sink_, *b.fc);
    sink_ = std::make_unique<FrameSink>("top.b.sink", *to_sink_, pool_, scoreboard_);
    sink_->on_frame([this](const Packet& f) {
      bytes_ += f.bytes;
      last_ = domain_.clock().now();
    });
    a.line->capture_to(ctx.capture.for_link("top.a"));
    for (Core* core : std::initializer_list<Core*>{source_.get(), sink_.get(), sender_.get(), receiver_.get()}) {
      domain_.attach(*core);
      core->wake_at(0);
    }
    a.fc->set_upstream(sender_.get());
    from_source_->connect(source_.get(), sender_.get());
    a.host_to_mac->connect(sender_.get(), a.mac.get());
    b.mac_to_host->connect(b.mac.get(), receiver_.get());
    to_sink_->connect(receiver_.get(), sink_.get());
    for (int s = 0; s < 2; ++s) {
      Side& x = sides_[s];
      x.fc_out->connect(x.fc.get(), x.mac.get());
      x.fc_in->connect(x.mac.get(), x.fc.get());
      x.to_line->connect(x.mac.get(), x.line.get());
      sides_[1 - s].from_line->connect(x.line.get(), sides_[1 - s].mac.get());
    }
    // Both ends' counters: with cbfc.impl=rtl the sender's are the twin's registers (and its
    // ports under top.a.fc.cbfc_tx.rtl), beside the receiver model's in one file.
    for (const Side& x : sides_) x.fc->probe(ctx.waves);
    ctx.waves.watch(clock);
  }

  // Done when every frame is in or lost, and (CBFC) every credit is back where it started.
  bool done() const override {
    if (source_->made() < frames_ || !sender_->idle() || !receiver_->idle() || to_sink_->in_flight()) return false;
    for (const Side& x : sides_)
      if (!x.mac->idle() || !x.line->idle() || x.host_to_mac->in_flight()) return false;
    return credits_restored();
  }
  std::uint64_t progress() const override { return scoreboard_.received() + frames_lost(); }
  double done_fraction() const override { return static_cast<double>(progress()) / frames_; }
  std::string waiting_for() const override {
    if (source_->made() < frames_) return "";
    return fmt::format("the last {} of {} frames, and the credits they hold", frames_ - std::min(frames_, progress()),
                       frames_);
  }
  Work work() const override {  // the slower of the line and the receiving host
    const double rate = std::min(line_.gbps(), drain_gbps_);
    const double bits = static_cast<double>(frames_) * (min_bytes_ + kFrameOverheadBytes) * 8;
    return {static_cast<Time>(bits / rate * kNs), fmt::format("traffic.frames = {} at {:.0f} Gb/s", frames_, rate)};
  }
  std::string stall() const override {
    const std::string held = sender_->held_back();
    if (held.empty()) return "";
    const bool cbfc = fc_ == link::FcMode::kCbfc;
    return fmt::format("{} deadlock at {}; {} of {} {} lost on the line", cbfc ? "credit" : "pause", held,
                       updates_lost(),
                       cbfc ? counter("top.b.fc.cbfc.cf_updates") + counter("top.a.fc.cbfc.cc_updates")
                            : sides_[1].fc->pause_frames(),
                       cbfc ? "credit updates" : "pause frames");
  }
  void check() const override {
    if (std::string o = sides_[1].fc->overflow(); !o.empty()) throw CheckFailure(o);
    if (scoreboard_.duplicated() || scoreboard_.reordered() || scoreboard_.corrupted())
      throw CheckFailure(sink_->first_error());
    if (scoreboard_.received() + frames_lost() != frames_)
      throw CheckFailure(fmt::format("{} frames received and {} lost of {}", scoreboard_.received(), frames_lost(),
                                     frames_));
  }

  nlohmann::json summary() const override {
    nlohmann::json s;
    s["flow_control"] = link::fc_mode_name(fc_);
    s["line_rate_Gbps"] = line_.gbps();
    s["frames_received"] = scoreboard_.received();
    s["frames_lost"] = frames_lost();
    s["stall_cycles"] = counter("top.a.host.stall_cycles");
    s["cf_updates"] = counter("top.b.fc.cbfc.cf_updates");
    s["cc_updates"] = counter("top.a.fc.cbfc.cc_updates");
    s["pause_frames"] = sides_[1].fc->pause_frames();
    s["updates_lost"] = updates_lost();
    s["overflow"] = !sides_[1].fc->overflow().empty();
    // A run stopped before the end ran to now, not to its last delivery.
    const Cycle elapsed = (done() ? last_ : domain_.clock().now()) + 1;
    s["goodput_Gbps"] = gbps(static_cast<double>(bytes_) / static_cast<double>(elapsed), line_.period);
    nlohmann::json peak = nlohmann::json::array();
    for (int vc = 0; vc < vcs(); ++vc) peak.push_back(receiver_->peak_occupancy_bytes(vc));
    s["peak_buffer_bytes"] = peak;
    s["credits_restored"] = credits_restored();
    if (!sizing_.empty()) s["warnings"] = {sizing_};
    return s;
  }

  std::string report() const override {
    const nlohmann::json s = summary();
    std::string out;
    out += fmt::format("  {:<24} {}, {:.1f} Gb/s line, one-way latency {} cycles\n", "flow control",
                       s["flow_control"].get<std::string>(), line_.gbps(), line_.latency);
    out += fmt::format("  {:<24} {} received, {} lost, goodput {:.1f} Gb/s, {} stall cycles\n", "frames",
                       s["frames_received"].get<std::uint64_t>(), s["frames_lost"].get<std::uint64_t>(),
                       s["goodput_Gbps"].get<double>(), s["stall_cycles"].get<std::uint64_t>());
    out += fmt::format("  {:<24} {} CF, {} CC, {} pause, {} lost; overflow {}; credits restored {}\n", "updates",
                       s["cf_updates"].get<std::uint64_t>(), s["cc_updates"].get<std::uint64_t>(),
                       s["pause_frames"].get<std::uint64_t>(), s["updates_lost"].get<std::uint64_t>(),
                       s["overflow"].get<bool>() ? "YES" : "no", s["credits_restored"].get<bool>() ? "yes" : "no");
    out += fmt::format("  {:<24} {}\n", "peak buffer bytes per VC", s["peak_buffer_bytes"].dump());
    return out;
  }

 private:
  // One end of the link: its flow control, MAC and the line it sends on, and the FIFOs between.
  struct Side {
    std::unique_ptr<Channel<Packet*>> host_to_mac, mac_to_host, to_line, from_line;
    std::unique_ptr<Channel<link::FcMessage>> fc_out, fc_in;
    std::unique_ptr<link::PortFc> fc;
    std::unique_ptr<Mac> mac;
    std::unique_ptr<SerialLine> line;
  };
  std::uint64_t counter(const std::string& key) const { return stats_.find_counter(key)->value(); }
  int vcs() const { return sides_[0].fc->cbfc_sender().config().vcs; }
  std::uint64_t frames_lost() const { return sides_[0].line->frames_lost(); }
  std::uint64_t updates_lost() const {
    return counter("top.a.line.lost_control_frames") + counter("top.b.line.lost_control_frames");
  }
  bool credits_restored() const {
    const link::CreditSender& credits = sides_[0].fc->cbfc_sender();
    if (fc_ != link::FcMode::kCbfc) return true;
    for (int vc = 0; vc < vcs(); ++vc)
      if (credits.credits_available(vc) != credits.config().buffer_credits[vc]) return false;
    return true;
  }
  LineParams line_;
  Stats& stats_;
  link::FcMode fc_;
  std::uint64_t frames_ = 0;
  std::uint32_t min_bytes_ = 64;
  double drain_gbps_ = 0;
  std::string sizing_;
  ClockDomain domain_;
  PacketPool pool_;
  Scoreboard scoreboard_;
  Side sides_[2];
  std::unique_ptr<Channel<Packet*>> from_source_, to_sink_;
  std::unique_ptr<FrameSource> source_;
  std::unique_ptr<FrameSink> sink_;
  std::unique_ptr<VcSender> sender_;
  std::unique_ptr<DrainingReceiver> receiver_;
  std::uint64_t bytes_ = 0;
  Cycle last_ = 0;
};

}  // namespace

XY_TESTBENCH(LinkLlr, 300, "link-llr",
             "two ports with LLR (Go-Back-N) over lossy lines, frames both ways; goodput, latency, replays")

}  // namespace xy

namespace xy {
XY_TESTBENCH(LinkCbfc, 310, "link-cbfc",
             "a fast sender and a slow receiver with CBFC credits (or PFC, or none): stalls, buffers, updates")
}  // namespace xy
