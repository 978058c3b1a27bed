#include "hw/link/fc_link.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "hw/link/crc32.hpp"
#include "hw/link/llr_port.hpp"  // kFrameOverheadBytes

namespace xy::link {
namespace {
constexpr std::uint64_t kPauseLineBytes = PauseFrame::wire_bytes + 8 + 12;  // + preamble and gap
}

FcSender::FcSender(std::string name, FcMode fc, const CbfcConfig& cbfc, const PfcConfig& pfc, Time period,
                   const FcFaults& faults, Rng rng, SerialLine<FcItem>& out, SerialLine<FcItem>& in,
                   Channel<Packet*>& from_host, Stats& stats, std::unique_ptr<CreditSender> credits)
    : Core(std::move(name)), fc_(fc), cbfc_(credits ? std::move(credits) : std::make_unique<CbfcSender>(cbfc)),
      pfc_(pfc, period), faults_(faults), rng_(rng), out_(out), in_(in),
      from_host_(from_host), queues_(static_cast<std::size_t>(std::max(cbfc.vcs, pfc.priorities))),
      frames_sent_(stats.counter(this->name() + ".frames_sent", "frames", "frames put on the line")),
      frames_lost_(stats.counter(this->name() + ".line.lost_frames", "frames", "frames the line lost")),
      stall_cycles_(stats.counter(this->name() + ".stall_cycles", "cycles",
                                  "cycles with frames waiting and the line free, but no VC allowed to send")),
      cc_updates_(stats.counter(this->name() + ".cbfc.cc_updates", "updates", "CC_Updates sent")),
      updates_lost_(stats.counter(this->name() + ".line.lost_updates", "updates", "CC_Updates the line lost")),
      stale_updates_(stats.counter(this->name() + ".cbfc.stale_cf_updates", "updates", "CF_Updates ignored as stale")) {}

void FcSender::eval() {
  while (in_.can_receive()) {
    FcItem item = in_.receive();
    if (item.lost) continue;
    if (item.credit && !cbfc_->on_cf_update(item.credit->vc, item.credit->counters[0])) stale_updates_.add();
    if (item.pause) pfc_.on_pause(*item.pause, now());
  }
  while (from_host_.can_pop()) {
    const int vc = from_host_.peek()->vc % static_cast<int>(queues_.size());
    if (queues_[vc].size() >= 4) break;  // the host's queue blocks behind a full VC queue
    queues_[vc].push_back(from_host_.pop());
  }
  if (fc_ == FcMode::kCbfc)
    if (auto cc = cbfc_->poll(now())) {
      FcItem item;
      item.lost = faults_.update_loss > 0 && rng_.chance(faults_.update_loss);
      if (item.lost) updates_lost_.add();
      cc_updates_.add();
      const std::uint64_t bytes = cc->wire_bytes + 8 + 12;
      item.credit = std::move(cc);
      out_.send(std::move(item), bytes);
    }
  bool waiting = false;
  held_by_flow_control_ = false;
  while (out_.has_room()) {
    int chosen = -1;
    for (std::size_t i = 0; i < queues_.size() && chosen < 0; ++i) {
      const int vc = static_cast<int>((next_vc_ + i) % queues_.size());
      if (queues_[vc].empty()) continue;
      waiting = true;
      const std::uint32_t bytes = queues_[vc].front()->bytes;
      const bool allowed = fc_ == FcMode::kCbfc  ? cbfc_->can_send(vc, bytes)
                           : fc_ == FcMode::kPfc ? !pfc_.paused(vc, now())
                                                      : true;
      if (allowed) chosen = vc;
    }
    if (chosen < 0) {
      if (waiting) stall_cycles_.add();
      held_by_flow_control_ = waiting;
      break;
    }
    next_vc_ = (chosen + 1) % static_cast<int>(queues_.size());
    Packet* f = queues_[chosen].front();
    queues_[chosen].pop_front();
    if (fc_ == FcMode::kCbfc) cbfc_->on_send(chosen, f->bytes);
    // Checked every frame: never more credits in use than the receiver's buffer.
    if (fc_ == FcMode::kCbfc && cbfc_->in_use(chosen) > cbfc_->config().buffer_credits[chosen])
      throw std::logic_error(name() + ": credits in use exceed the receiver buffer");
    f->injected = clock().time_of(now());
    FcItem item;
    item.frame = f;
    item.lost = faults_.frame_loss > 0 && rng_.chance(faults_.frame_loss);
    if (item.lost) frames_lost_.add();
    frames_sent_.add();
    if (pcap_) {
      scratch_.assign(f->payload.begin(), f->payload.end());
      append_fcs(scratch_);
      pcap_->write(clock().time_of(now()), scratch_.data(), scratch_.size());
    }
    out_.send(std::move(item), f->bytes + kFrameOverheadBytes);
  }
}

void FcSender::commit() {
  bool queued = false;
  for (const auto& q : queues_) queued = queued || !q.empty();
  Cycle next = fc_ == FcMode::kCbfc ? cbfc_->next_timer() : ~Cycle{0};
  if (fc_ == FcMode::kPfc)
    for (std::size_t p = 0; p < queues_.size(); ++p)
      if (!queues_[p].empty() && pfc_.paused(static_cast<int>(p), now())) next = std::min(next, pfc_.paused_until(static_cast<int>(p)));
  if (next != ~Cycle{0}) wake_at(std::max(next, now() + 1));
  // Busy while frames wait for the line; frames held by flow control wait for a credit update
  // (its arrival wakes this core) or the end of a pause (the timer above).
  set_busy(from_host_.ready_by(now() + 1) || (queued && !held_by_flow_control_));
}

bool FcSender::idle() const {
  for (const auto& q : queues_)
    if (!q.empty()) return false;
  return !from_host_.in_flight();
}

std::string FcSender::held_back() const {
  std::string out;
  for (std::size_t q = 0; q < queues_.size(); ++q) {
    if (queues_[q].empty()) continue;
    const int vc = static_cast<int>(q);
    const std::uint32_t bytes = queues_[q].front()->bytes;
    std::string why;
    if (fc_ == FcMode::kCbfc && !cbfc_->can_send(vc, bytes))
      why = fmt::format("{} VC {}: a {} B frame needs {} credits, {} of {} available ({} in use)", name(), vc, bytes,
                        cbfc_->config().credits_for(bytes), cbfc_->credits_available(vc),
                        cbfc_->config().buffer_credits[q], cbfc_->in_use(vc));
    if (fc_ == FcMode::kPfc && pfc_.paused(vc, now()))
      why = fmt::format("{} priority {}: paused until cycle {}", name(), vc, pfc_.paused_until(vc));
    if (!why.empty()) out += (out.empty() ? "" : "; ") + why;
  }
  return out;
}

FcReceiver::FcReceiver(std::string name, FcMode fc, const CbfcConfig& cbfc, const PfcConfig& pfc, Time period,
                       double drain_bytes_per_cycle, const FcFaults& faults, Rng rng, SerialLine<FcItem>& in,
                       SerialLine<FcItem>& out, Channel<Packet*>& to_host, PacketPool& pool, Stats& stats)
    : Core(std::move(name)), fc_(fc), cbfc_(cbfc), pfc_(pfc, period), drain_per_cycle_(drain_bytes_per_cycle),
      faults_(faults), rng_(rng), in_(in), out_(out), to_host_(to_host), pool_(pool),
      queues_(static_cast<std::size_t>(std::max(cbfc.vcs, pfc.priorities))), occupancy_(queues_.size(), 0),
      peak_(queues_.size(), 0),
      frames_received_(stats.counter(this->name() + ".frames_received", "frames", "frames that arrived")),
      frames_lost_(stats.counter(this->name() + ".lost_frames_released", "frames", "lost frames returned to the pool")),
      cf_updates_(stats.counter(this->name() + ".cbfc.cf_updates", "updates", "CF_Updates sent")),
      pauses_(stats.counter(this->name() + ".pfc.pause_frames", "frames", "PFC pause frames sent (XOFF and XON)")),
      updates_lost_(stats.counter(this->name() + ".line.lost_updates", "updates", "CF_Updates or pauses the line lost")) {}

void FcReceiver::eval() {
  while (in_.can_receive()) {
    FcItem item = in_.receive();
    if (item.lost) {
      if (item.frame) {
        frames_lost_.add();
        ++frames_lost_total_;
        pool_.release(item.frame);
      }
      continue;
    }
    if (item.credit) {  // CC_Update: every VC's consumed counter
      for (std::size_t vc = 0; vc < item.credit->counters.size(); ++vc)
        cbfc_.on_cc_update(static_cast<int>(vc), item.credit->counters[vc]);
      continue;
    }
    Packet* f = item.frame;
    const int vc = f->vc % static_cast<int>(queues_.size());
    frames_received_.add();
    if (fc_ == FcMode::kCbfc) {
      if (const std::uint32_t beyond = cbfc_.on_receive(vc, f->bytes))
        overflow_.record(beyond, "credits", [&] { return cbfc_overflow(name(), cbfc_, vc, f->bytes, beyond, now()); });
    }
    if (fc_ == FcMode::kPfc) {
      if (const std::uint32_t beyond = pfc_.on_receive(vc, f->bytes))
        overflow_.record(beyond, "B", [&] { return pfc_overflow(name(), pfc_, vc, f->bytes, beyond, now()); });
    }
    occupancy_[vc] += f->bytes;
    peak_[vc] = std::max(peak_[vc], occupancy_[vc]);
    queues_[vc].push_back(f);
  }
  // The slow consumer: a token bucket of `drain` bytes per cycle, one frame per cycle.
  tokens_ = std::min(tokens_ + drain_per_cycle_, drain_per_cycle_ + 16384.0);
  for (std::size_t i = 0; i < queues_.size(); ++i) {
    const int vc = static_cast<int>((next_vc_ + i) % queues_.size());
    if (queues_[vc].empty()) continue;
    Packet* f = queues_[vc].front();
    if (tokens_ < f->bytes || !to_host_.can_push()) break;
    tokens_ -= f->bytes;
    queues_[vc].pop_front();
    occupancy_[vc] -= f->bytes;
    if (fc_ == FcMode::kCbfc) cbfc_.on_drain(vc, f->bytes);
    if (fc_ == FcMode::kPfc) pfc_.on_drain(vc, f->bytes);
    to_host_.push(f);
    next_vc_ = (vc + 1) % static_cast<int>(queues_.size());
    break;
  }
  FcItem update;
  std::uint64_t bytes = 0;
  if (fc_ == FcMode::kCbfc) {
    if (auto cf = cbfc_.poll(now())) {
      cf_updates_.add();
      bytes = cf->wire_bytes;
      update.credit = std::move(cf);
    }
  } else if (fc_ == FcMode::kPfc) {
    if (auto pause = pfc_.poll(now())) {
      pauses_.add();
      bytes = kPauseLineBytes;
      update.pause = pause;
    }
  }
  if (bytes) {
    update.lost = faults_.update_loss > 0 && rng_.chance(faults_.update_loss);
    if (update.lost) updates_lost_.add();
    out_.send(std::move(update), bytes);
  }
}

void FcReceiver::commit() {
  bool queued = false;
  for (const auto& q : queues_) queued = queued || !q.empty();
  const Cycle next = fc_ == FcMode::kCbfc ? cbfc_.next_timer()
                     : fc_ == FcMode::kPfc ? pfc_.next_timer()
                                                : ~Cycle{0};
  if (next != ~Cycle{0}) wake_at(std::max(next, now() + 1));
  set_busy(queued);
}

bool FcReceiver::idle() const {
  for (const auto& q : queues_)
    if (!q.empty()) return false;
  return true;
}

}  // namespace xy::link
