#include "sys/lingyun/port.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "rtl/link/cbfc_sender_twin.hpp"
#include "rtl/link/drop_in.hpp"
#include "rtl/link/llr_twins.hpp"

namespace xy::lingyun {
namespace {

// The LLR ends of a MAC: the RTL twins with llr.impl=rtl (the transmitter's on the PHY clock),
// else the models. Without LLR only the transmitter's model is used (it lets frames through).
std::unique_ptr<link::LlrTransmitter> llr_transmitter(const PortParams& p, const Clock& phy_clock) {
  return rtl::llr_transmitter(p.llr && p.llr_rtl(), p.llr_params.config, phy_clock);
}

std::unique_ptr<link::LlrReceiver> llr_receiver(const PortParams& p) {
  return rtl::llr_receiver(p.llr && p.llr_rtl(), p.llr_params.config);
}

}  // namespace

PortParams PortParams::declare(Config& c, int vcs) {
  PortParams p;
  p.phy = phy::PhyParams::declare(c, "port", 8, phy::PhyParams::Cable::kPerLink);  // cables: the topology's
  p.llr = c.flag("port.llr", true, "LLR on every hop: frames with a bad FCS are replayed by the sender port");
  p.fc = link::declare_fc_mode(c, "port.fc", "cbfc", "link flow control of every port");
  const Time phy_period = p.phy.period();
  p.llr_params = link::LlrParams::declare(c, phy_period);
  const link::LlrConfig& l = p.llr_params.config;
  if (p.llr_rtl()) {  // what the twins are built for; each link's replay buffer in reach_problem()
    link::LlrConfig k = l;
    k.replay_buffer_bytes = 64;
    rtl::check_llr_twins(k);
  }
  p.max_frame_bytes = static_cast<std::uint32_t>(c.integer("port.max_frame_bytes", 9216, "bytes", 64, 9216,
                                                           "largest frame the ports carry (sizes buffers)"));
  p.cbfc = link::CbfcParams::declare(c, vcs);
  if (p.cbfc.rtl && p.fc != link::FcMode::kCbfc)
    throw ConfigError(fmt::format("cbfc.impl = 'rtl' with port.fc = '{}': the twin is a CBFC engine; allowed with "
                                  "port.fc=cbfc only", link::fc_mode_name(p.fc)));
  if (p.cbfc.rtl) {  // every VC's buffer is the same size (for_link), so only the build parameters count
    link::CbfcConfig k = p.cbfc.config;
    k.buffer_credits.assign(vcs, 1);
    rtl::CbfcSenderTwin::check(k);
  }
  p.pfc = link::PfcConfig::declare(c, vcs, p.line_gbps());
  return p;
}

// A frame of `bytes` from one MAC to the other at zero load: serialisation (the line takes
// 5 bytes a lane a cycle, with 24 bytes of preamble, FCS and gap), encoder, path, two codeword
// groups (the frame's and the gathering at the RX), decoder.
Time PortParams::one_way(double cable_m, std::uint32_t bytes) const {
  phy::PhyParams q = phy;
  q.set_cable(cable_m);
  const Cycle frame = (bytes + 24 + 5 * q.lanes - 1) / (5 * q.lanes);
  return (frame + q.group_cycles() + q.fixed_cycles()) * q.period();
}

// The credit or ACK loop: a largest frame out, a control message back, the MACs and FIFOs at
// both ends (a few cycles each, counted as 20 ns).
Time PortParams::loop(double cable_m) const {
  return one_way(cable_m, max_frame_bytes) + one_way(cable_m, 64) + 20 * kNs;
}

std::uint64_t PortParams::replay_buffer_bytes(double cable_m) const {
  const Time t = loop(cable_m) + llr_params.config.ack_timer_cycles * phy.period();
  return static_cast<std::uint64_t>(std::ceil(line_gbps() / 8 * static_cast<double>(t) / kNs)) + 2ull * max_frame_bytes;
}

std::string PortParams::reach_problem(double cable_m) const {
  if (llr && !llr_params.replay_buffer_bytes && replay_buffer_bytes(cable_m) > llr_params.max_replay_buffer_bytes)
    return fmt::format("LLR over {} m needs a {:.2f} MB replay buffer (line rate x loop + 2 frames), above "
                       "llr.max_replay_buffer_bytes = {}",
                       cable_m, replay_buffer_bytes(cable_m) / 1e6, llr_params.max_replay_buffer_bytes);
  if (fc == link::FcMode::kCbfc) {
    const link::CbfcConfig& cb = cbfc.config;
    const std::uint64_t need = link::required_buffer_credits(cb, line_gbps(), loop(cable_m), max_frame_bytes);
    const std::uint32_t given = cbfc.buffer_credits;
    if (given ? need > given : 2 * need >= (std::uint64_t{1} << (cb.counter_bits - 1)))
      return fmt::format("CBFC over {} m needs {} credits of {} B per VC for the credit loop, {}", cable_m, need,
                         cb.credit_bytes,
                         given ? fmt::format("above cbfc.buffer_credits = {}", given) : "beyond what its counters can track");
  }
  if (llr && llr_rtl()) {
    link::LlrConfig k = llr_params.config;
    k.replay_buffer_bytes = replay_buffer_bytes(cable_m);
    try {
      rtl::check_llr_twins(k);
    } catch (const ConfigError& e) {
      return fmt::format("LLR over {} m needs a {} B replay buffer (line rate x loop + 2 frames), beyond the RTL "
                         "twins (llr.impl=rtl), whose check of this link's LLR says: {}; use llr.impl=model or a "
                         "shorter cable",
                         cable_m, k.replay_buffer_bytes, e.what());
    }
  }
  if (llr) {
    const Cycle nack_loop = cycles_for(loop(cable_m), phy.period());
    try {
      llr_params.check_timers(phy.period(), nack_loop + llr_params.config.ack_timer_cycles, nack_loop,
                                     fmt::format("a largest frame out and a control frame back over {} m", cable_m));
    } catch (const ConfigError& e) {
      return e.what();
    }
  }
  return "";
}

PortParams PortParams::for_link(double cable_m) const {
  PortParams p = *this;
  p.phy.set_cable(cable_m);
  p.llr_params.config.replay_buffer_bytes = llr_params.replay_buffer_for(replay_buffer_bytes(cable_m));
  const std::uint64_t need = link::required_buffer_credits(cbfc.config, line_gbps(), loop(cable_m), max_frame_bytes);
  p.cbfc.config.buffer_credits.assign(cbfc.config.vcs, cbfc.sized_for(need));
  return p;
}

// --- PortFc ---

PortFc::PortFc(std::string name, const PortParams& p, const Clock& core, Stats& stats, const Channel<Packet*>& to_mac,
               Channel<FcMessage>& out, Channel<FcMessage>& in)
    : Core(std::move(name)), mode_(p.fc), fifo_frames_(p.fifo_frames),
      cbfc_tx_([&]() -> std::unique_ptr<link::CreditSender> {
        const link::CbfcConfig cb = p.cbfc.on_clock(core.period());
        return rtl::credit_sender(p.cbfc.rtl, cb, core);  // a twin keeps this side's core clock
      }()),
      cbfc_rx_(cbfc_tx_->config()), pfc_tx_(p.pfc, core.period()), pfc_rx_(p.pfc, core.period()), to_mac_(to_mac),
      out_(out), in_(in), blocked_since_(p.cbfc.config.vcs, kNotBlocked), held_vc_(p.cbfc.config.vcs, 0),
      xoffs_(stats.counter(this->name() + ".pfc.xoff", "frames", "pause frames with a non-zero pause time sent upstream")),
      cf_updates_(stats.counter(this->name() + ".cbfc.cf_updates", "updates", "CF_Updates sent upstream")),
      cc_updates_(stats.counter(this->name() + ".cbfc.cc_updates", "updates", "CC_Updates sent downstream")),
      held_(stats.counter(this->name() + ".held_cycles", "cycles",
                          "cycles the core feeding this port had a frame that flow control held back")) {}

bool PortFc::can_send(const Packet& p) const {
  bool fc_ok = true;
  if (mode_ == link::FcMode::kCbfc) fc_ok = cbfc_tx_->can_send(p.vc, p.bytes);
  if (mode_ == link::FcMode::kPfc) fc_ok = !pfc_tx_.paused(p.vc, now());
  // Held from the first refusal until the feeder asks again and may go (it is woken when credits
  // come or a pause ends).
  Cycle& since = blocked_since_.at(p.vc);
  if (!fc_ok && since == kNotBlocked) since = now();
  if (fc_ok && since != kNotBlocked) {
    held_vc_[p.vc] += now() - since;
    held_.add(now() - since);
    since = kNotBlocked;
  }
  // Room in the FIFO to the MAC; a switch egress may have a frame or two scheduled beyond it
  // (its egress and tx_mac lead), which the FIFO holds: a soft limit, never a loss.
  const bool room = to_mac_.in_flight() < fifo_frames_;
  if (fc_ok && !room && !fifo_full_) {
    fifo_full_ = true;  // eval() wakes the feeder when the MAC has taken a frame
    const_cast<PortFc*>(this)->wake_next();
  }
  return fc_ok && room;
}

void PortFc::on_send(const Packet& p) {
  if (mode_ == link::FcMode::kCbfc) cbfc_tx_->on_send(p.vc, p.bytes);
  ++frames_sent_;
}

void PortFc::on_arrive(const Packet& p) {
  if (mode_ == link::FcMode::kCbfc) {
    if (const std::uint32_t beyond = cbfc_rx_.on_receive(p.vc, p.bytes))
      overflow_.record(beyond, "credits", [&] { return link::cbfc_overflow(name(), cbfc_rx_, p.vc, p.bytes, beyond, now()); });
  } else if (mode_ == link::FcMode::kPfc) {
    if (const std::uint32_t beyond = pfc_rx_.on_receive(p.vc, p.bytes))
      overflow_.record(beyond, "B", [&] { return link::pfc_overflow(name(), pfc_rx_, p.vc, p.bytes, beyond, now()); });
  }
  wake_next();
}

void PortFc::on_depart(std::uint32_t bytes, std::uint8_t vc) {
  if (mode_ == link::FcMode::kCbfc) cbfc_rx_.on_drain(vc, bytes);
  if (mode_ == link::FcMode::kPfc) pfc_rx_.on_drain(vc, bytes);
  wake_next();
}

std::uint64_t PortFc::held_cycles(int vc) const {
  return held_vc_.at(vc) + (blocked_since_[vc] == kNotBlocked ? 0 : now() - blocked_since_[vc]);
}

std::string PortFc::counted_beyond(const PortFc& far) const {
  if (mode_ != link::FcMode::kCbfc) return "";
  const std::uint32_t mask = cbfc_rx_.config().counter_bits >= 32 ? ~0u : (1u << cbfc_rx_.config().counter_bits) - 1;
  for (int vc = 0; vc < cbfc_rx_.config().vcs; ++vc) {
    // Sent minus counted is what is on its way or lost: never negative (it would wrap).
    const std::uint32_t ahead = (far.cbfc_tx_->consumed(vc) - cbfc_rx_.consumed(vc)) & mask;
    if (ahead > cbfc_rx_.config().buffer_credits[vc])
      return fmt::format("{} VC {}: counted {} credits in, its sender consumed {}: frames counted twice", name(), vc,
                         cbfc_rx_.consumed(vc), far.cbfc_tx_->consumed(vc));
  }
  return "";
}

void PortFc::eval() {
  bool woke_upstream = false;
  if (fifo_full_ && to_mac_.in_flight() < fifo_frames_) {
    fifo_full_ = false;
    woke_upstream = true;
  }
  while (in_.can_pop()) {
    const FcMessage m = in_.pop();
    if (m.credit && m.credit->kind == link::CreditUpdate::kCf) cbfc_tx_->on_cf_update(m.credit->vc, m.credit->counters[0]);
    if (m.credit && m.credit->kind == link::CreditUpdate::kCc) arrived_cc_ = m.credit;
    if (m.pause) pfc_tx_.on_pause(*m.pause, now());
    woke_upstream = true;
  }
  if (woke_upstream && upstream_) upstream_->wake_next();
  if (mode_ == link::FcMode::kCbfc) {
    while (auto cf = cbfc_rx_.poll(now())) {
      cf_updates_.add();
      outbox_.push_back({std::move(cf), std::nullopt});
    }
    if (auto cc = cbfc_tx_->poll(now())) {
      cc_updates_.add();
      outbox_.push_back({std::move(cc), std::nullopt, frames_sent_});
    }
  } else if (mode_ == link::FcMode::kPfc) {
    while (auto pause = pfc_rx_.poll(now())) {
      if (pause->quanta[0] || pause->enable_vector > 1) xoffs_.add();
      outbox_.push_back({std::nullopt, pause});
    }
  }
  if (!outbox_.empty() && out_.can_push()) {
    out_.push(std::move(outbox_.front()));
    outbox_.pop_front();
  }
}

void PortFc::commit() {
  // A CC_Update takes effect after every arrival of its cycle: the frames ahead of it on the
  // line reached the core (which reports them to on_arrive) no later than it reached us.
  if (arrived_cc_) {
    for (std::size_t vc = 0; vc < arrived_cc_->counters.size() && vc < static_cast<std::size_t>(cbfc_rx_.config().vcs); ++vc)
      cbfc_rx_.on_cc_update(static_cast<int>(vc), arrived_cc_->counters[vc]);
    arrived_cc_.reset();
  }
  Cycle next = ~Cycle{0};
  if (mode_ == link::FcMode::kCbfc) next = std::min(cbfc_rx_.next_timer(), cbfc_tx_->next_timer());
  if (mode_ == link::FcMode::kPfc) {
    next = pfc_rx_.next_timer();
    for (int prio = 0; prio < pfc_rx_.config().priorities; ++prio)
      if (pfc_tx_.paused(prio, now()) && upstream_) upstream_->wake_at(pfc_tx_.paused_until(prio));
  }
  if (next != ~Cycle{0}) wake_at(std::max(next, now() + 1));
  set_busy(!outbox_.empty() || fifo_full_);
}

// --- PortMac ---

PortMac::PortMac(std::string name, const PortParams& params, const Clock& phy_clock, Channel<Packet*>& from_core,
                 Channel<Packet*>& to_core, Channel<FcMessage>& fc_from_core, Channel<FcMessage>& fc_to_core,
                 Channel<Packet*>& to_phy, Channel<Packet*>& from_phy, PacketPool& pool, Stats& stats)
    : Core(std::move(name)), p_(params),
      tx_(llr_transmitter(params, phy_clock)), rx_(llr_receiver(params)),
      from_core_(from_core), to_core_(to_core),
      fc_from_core_(fc_from_core), fc_to_core_(fc_to_core), to_phy_(to_phy), from_phy_(from_phy), pool_(pool),
      sent_(stats.counter(this->name() + ".frames_sent", "frames", "data frames handed to the PHY, replays included")),
      replayed_(stats.counter(this->name() + ".llr.replayed_frames", "frames", "frames sent again by LLR")),
      controls_(stats.counter(this->name() + ".control_frames", "frames", "LLR and flow-control messages sent")),
      bad_data_(stats.counter(this->name() + ".rx.bad_fcs_data", "frames", "data frames received with a bad FCS")),
      bad_control_(stats.counter(this->name() + ".rx.bad_fcs_control", "frames", "control frames received with a bad FCS")),
      lost_(stats.counter(this->name() + ".rx.lost", "frames", "data frames with a bad FCS and no LLR: lost on this hop")),
      delivered_(stats.counter(this->name() + ".rx.delivered", "frames", "data frames handed to the core")) {
  if (!p_.llr) tx_->on_control({link::LlrControl::kAck, 0}, 0);  // straight to ADVANCE, nothing kept
}

Packet* PortMac::control_frame() {
  Packet* c = pool_.acquire();
  c->control = true;
  c->phantom = false;
  c->payload.swap(scratch_);
  c->bytes = static_cast<std::uint32_t>(c->payload.size());
  controls_.add();
  return c;
}

Packet* PortMac::copy_of(const Packet* kept) {
  Packet* c = pool_.acquire();
  *c = *kept;
  return c;
}

bool PortMac::transmit() {
  if (!to_phy_.can_push()) return false;
  std::optional<link::LlrControl> control = p_.llr ? rx_->poll(now()) : std::nullopt;
  if (!control && p_.llr) control = tx_->poll_control();
  if (control) {
    encode_llr(*control, scratch_);
    to_phy_.push(control_frame());
    return true;
  }
  while (fc_from_core_.can_pop() && fc_from_core_.peek().credit && fc_from_core_.peek().credit->kind == link::CreditUpdate::kCc)
    held_cc_ = fc_from_core_.pop();  // a later one supersedes it: its counters are absolute
  if (fc_from_core_.can_pop()) {
    encode_fc(fc_from_core_.pop(), scratch_);
    to_phy_.push(control_frame());
    return true;
  }
  // A CC_Update once every frame it counted is ahead of it for good: sent, and with LLR
  // acknowledged (a replay would come after it) or flushed (lost: what the update repairs).
  if (held_cc_ && cc_may_go()) {
    encode_fc(*held_cc_, scratch_);
    to_phy_.push(control_frame());
    held_cc_.reset();
    return true;
  }
  if (auto replay = p_.llr ? tx_->next_replay(now()) : std::nullopt) {
    replayed_.add();
    sent_.add();
    to_phy_.push(copy_of(replay->first));
    return true;
  }
  if (from_core_.can_pop() && tx_->can_accept(from_core_.peek()->bytes)) {
    Packet* frame = from_core_.pop();
    frame->advance(kStageMacTx, clock().time_of(now()));
    const std::uint32_t seq = p_.llr ? tx_->accept(frame, now()) : 0;  // LLR keeps it until ACKed
    ++accepted_;
    encode_data(*frame, seq, scratch_);
    frame->payload.swap(scratch_);  // from here on the frame as the line carries it
    sent_.add();
    to_phy_.push(p_.llr ? copy_of(frame) : frame);
    return true;
  }
  return false;
}

bool PortMac::cc_may_go() const { return accepted_ - tx_->kept() >= held_cc_->after_frames; }

void PortMac::receive() {
  while (from_phy_.can_pop()) {
    Packet* w = from_phy_.pop();
    const Received r = parse(w->payload);
    const bool ok = r.fcs_ok && !w->bad;  // a frame an uncorrectable codeword carried arrives damaged
    if (!ok) {
      // Unreadable; counted by what it was (the model's truth, which the MAC could not know).
      (w->control ? bad_control_ : bad_data_).add();
      if (!w->control && p_.llr) rx_->on_frame(0, false, now());
      else if (!w->control) lost_.add();
      pool_.release(w);
      continue;
    }
    if (r.kind == WireKind::kCc) {  // behind the frames that came before it
      deliver_.push_back(w);
      continue;
    }
    if (r.kind != WireKind::kData) {
      if (r.llr) {
        if (r.llr->kind == link::LlrControl::kInit) rx_->on_control(*r.llr, now());
        else tx_->on_control(*r.llr, now());
      }
      if (r.fc) fc_inbox_.push_back(*r.fc);
      pool_.release(w);
      continue;
    }
    const auto verdict = p_.llr ? rx_->on_frame(r.seq, true, now()) : link::LlrReceiver::Verdict::kDeliver;
    if (verdict == link::LlrReceiver::Verdict::kDeliver) {
      unwrap_data(w->payload, *w);
      deliver_.push_back(w);
    } else {
      pool_.release(w);
    }
  }
}

void PortMac::eval() {
  receive();
  if (p_.llr) tx_->tick(now());
  transmit();
  for (Packet* k : tx_->released()) pool_.release(k);
  tx_->released().clear();
  if (!deliver_.empty() && deliver_.front()->control && fc_to_core_.can_push()) {
    fc_to_core_.push(*parse(deliver_.front()->payload).fc);  // a CC_Update, behind the frames it counted
    pool_.release(deliver_.front());
    deliver_.pop_front();
  } else if (!deliver_.empty() && !deliver_.front()->control && to_core_.can_push()) {
    Packet* f = deliver_.front();
    deliver_.pop_front();
    delivered_.add();
    f->advance(kStageCrossing, clock().time_of(now()));
    to_core_.push(f);
  }
  if (!fc_inbox_.empty() && fc_to_core_.can_push()) {
    fc_to_core_.push(std::move(fc_inbox_.front()));
    fc_inbox_.pop_front();
  }
}

void PortMac::commit() {
  Cycle next = p_.llr ? std::min(tx_->next_timer(), rx_->next_timer()) : ~Cycle{0};
  if (next != ~Cycle{0}) wake_at(std::max(next, now() + 1));
  const bool more = tx_->state() == link::LlrTxState::kReplay || from_core_.ready_by(now() + 1) ||
                    fc_from_core_.ready_by(now() + 1) || (held_cc_ && cc_may_go());
  set_busy(!deliver_.empty() || !fc_inbox_.empty() || more);
}


// --- PortLink ---

struct PortLink::Side {
  std::unique_ptr<Channel<Packet*>> tx, rx;
  std::unique_ptr<Channel<FcMessage>> fc_out, fc_in;
  std::unique_ptr<PortFc> fc;
  std::unique_ptr<PortMac> mac;
};

PortLink::PortLink(const std::string (&side_names)[2], const PortParams& params, double cable_m, Clock& phy_clock,
                   Clock& core0, Clock& core1, Stats& stats, std::uint64_t seed, PacketPool& pool)
    : name_(side_names[0] + " - " + side_names[1]), side_names_{side_names[0], side_names[1]},
      p_(params.for_link(cable_m)) {
  Clock* cores[2] = {&core0, &core1};
  const ChannelSpec phy_channel{1, 2, 1, 2};
  for (int s = 0; s < 2; ++s) {
    to_phy_[s] = std::make_unique<Channel<Packet*>>(side_names[s] + ".to_phy", phy_clock, phy_channel);
    from_phy_[s] = std::make_unique<Channel<Packet*>>(side_names[s] + ".from_phy", phy_clock, ChannelSpec{});
  }
  for (int s = 0; s < 2; ++s) {
    const std::string& side = side_names[s];
    auto& x = sides_[s] = std::make_unique<Side>();
    Clock& core = *cores[s];
    // Its credits are there to wake the feeder as the MAC takes frames; the gate keeps fifo_frames
    // in it, and the slack above covers frames a switch egress scheduled before it asked.
    x->tx = std::make_unique<Channel<Packet*>>(side + ".tx_fifo", core, phy_clock,
                                               ChannelSpec{});
    x->rx = std::make_unique<Channel<Packet*>>(side + ".rx_fifo", phy_clock, core, ChannelSpec{1, 0, 1, 2});
    x->fc_out = std::make_unique<Channel<FcMessage>>(side + ".fc_out", core, phy_clock, ChannelSpec{});
    x->fc_in = std::make_unique<Channel<FcMessage>>(side + ".fc_in", phy_clock, core, ChannelSpec{});
    x->fc = std::make_unique<PortFc>(side + ".fc", p_, core, stats, *x->tx, *x->fc_out, *x->fc_in);
    core.attach(*x->fc);
    // Side s sends on PHY direction s and receives on direction 1 - s.
    x->mac = std::make_unique<PortMac>(side + ".mac", p_, phy_clock, *x->tx, *x->rx, *x->fc_out, *x->fc_in,
                                       *to_phy_[s], *from_phy_[1 - s], pool, stats);
    phy_clock.attach(*x->mac);
  }
  for (int s = 0; s < 2; ++s) {
    phy_[s] = std::make_unique<phy::PhyLink>(side_names[s] + ".phy", p_.phy, phy_clock, stats, seed,
                                              side_names[s] + ".phy", to_phy_[s].get(), from_phy_[s].get(), pool);
    to_phy_[s]->connect(sides_[s]->mac.get(), &phy_[s]->tx_core());
    from_phy_[s]->connect(&phy_[s]->rx_core(), sides_[1 - s]->mac.get());
  }
  for (int s = 0; s < 2; ++s) {
    Side& x = *sides_[s];
    x.fc_out->connect(x.fc.get(), x.mac.get());
    x.fc_in->connect(x.mac.get(), x.fc.get());
  }
}

PortLink::~PortLink() = default;

void PortLink::attach(int side, Core* feeder, Core* taker) {
  Side& x = *sides_[side];
  x.tx->connect(feeder, x.mac.get());
  x.rx->connect(x.mac.get(), taker);
  x.fc->set_upstream(feeder);
}

Channel<Packet*>& PortLink::tx(int side) { return *sides_[side]->tx; }
Channel<Packet*>& PortLink::rx(int side) { return *sides_[side]->rx; }
PortFc& PortLink::fc(int side) { return *sides_[side]->fc; }
const PortFc& PortLink::fc(int side) const { return *sides_[side]->fc; }
PortMac& PortLink::mac(int side) { return *sides_[side]->mac; }
const PortMac& PortLink::mac(int side) const { return *sides_[side]->mac; }
phy::PhyLink& PortLink::phy(int from_side) { return *phy_[from_side]; }
const phy::PhyLink& PortLink::phy(int from_side) const { return *phy_[from_side]; }

}  // namespace xy::lingyun
