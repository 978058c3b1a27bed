// Frame traffic for testbenches: a source of random frames and a sink that checks them.
#pragma once
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <functional>
#include <string>

#include <fmt/format.h>

#include "tb/lib/scoreboard.hpp"
#include "kernel/channel.hpp"
#include "kernel/config.hpp"
#include "kernel/packet.hpp"
#include "kernel/rng.hpp"

namespace xy {

// The sizes of a testbench's frames, uniform between traffic.min_bytes and traffic.max_bytes.
struct FrameSizes {
  std::uint32_t min_bytes = 64, max_bytes = 1500;
  // Declares both, with the scenario's defaults and allowed range [lo, hi], and checks them together.
  static FrameSizes declare(Config& c, FrameSizes defaults, std::uint32_t lo, std::uint32_t hi,
                            const std::string& what = "frame") {
    FrameSizes f;
    f.min_bytes = static_cast<std::uint32_t>(c.integer("traffic.min_bytes", defaults.min_bytes, "bytes", lo, hi, "smallest " + what));
    f.max_bytes = static_cast<std::uint32_t>(c.integer("traffic.max_bytes", defaults.max_bytes, "bytes", lo, hi, "largest " + what));
    if (f.min_bytes > f.max_bytes)
      throw ConfigError(fmt::format("traffic.min_bytes = {} is above traffic.max_bytes = {}: must be <=", f.min_bytes,
                                    f.max_bytes));
    return f;
  }
};

// Frames of random length and random bytes; the gap between frame starts is geometric with mean
// `mean_gap` cycles (0: back to back, as fast as the channel takes them).
class FrameSource : public Core {
  // An Ethernet header (locally administered MACs, EtherType 0x88B5 "local experimental"), so
  // that captures decode as Ethernet; the rest of the frame is random.
  static constexpr std::uint8_t kHeader[14] = {0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01, 0x88, 0xB5};

 public:
  FrameSource(std::string name, Channel<Packet*>& out, PacketPool& pool, Scoreboard& scoreboard, Rng rng,
              std::uint64_t frames, std::uint32_t min_bytes, std::uint32_t max_bytes, double mean_gap)
      : Core(std::move(name)), out_(out), pool_(pool), scoreboard_(scoreboard), rng_(rng), frames_(frames),
        min_(min_bytes), max_(max_bytes), start_probability_(1.0 / (1.0 + mean_gap)) {}
  void eval() override {
    if (made_ == frames_ || now() < resume_at_ || !out_.can_push()) return;
    Packet* f = pool_.acquire();
    f->id = ++made_;
    f->bytes = static_cast<std::uint32_t>(rng_.between(min_, max_));
    f->phantom = false;
    f->created = clock().time_of(now());
    f->vc = static_cast<std::uint8_t>(vcs_ > 1 ? rng_.below(vcs_) : 0);
    f->src = src_;
    f->dst = dst_;
    f->payload.resize(f->bytes - fcs_bytes_);
    rng_.fill(f->payload.data(), f->payload.size());
    if (f->bytes >= sizeof kHeader) std::copy(std::begin(kHeader), std::end(kHeader), f->payload.begin());
    scoreboard_.expect(*f);
    out_.push(f);
    resume_at_ = now() + rng_.geometric(start_probability_);
    if (made_ < frames_) wake_at(resume_at_);
  }
  std::uint64_t made() const { return made_; }
  void spread_over_vcs(int vcs) { vcs_ = vcs; }  // each frame on a random VC in [0, vcs)
  // A frame's `bytes` counts the 4-byte FCS its MAC appends: its payload is 4 bytes shorter.
  void leave_room_for_fcs() { fcs_bytes_ = 4; }
  void address(std::uint32_t src, std::uint32_t dst) { src_ = src, dst_ = dst; }  // of every frame

 private:
  Channel<Packet*>& out_;
  PacketPool& pool_;
  int vcs_ = 1;
  std::uint32_t fcs_bytes_ = 0, src_ = 0, dst_ = 0;
  Scoreboard& scoreboard_;
  Rng rng_;
  std::uint64_t frames_, made_ = 0;
  std::uint32_t min_, max_;
  double start_probability_;
  Cycle resume_at_ = 0;
};

// Takes every frame; a frame marked bad is counted, not compared; one not marked must match.
class FrameSink : public Core {
 public:
  FrameSink(std::string name, Channel<Packet*>& in, PacketPool& pool, Scoreboard& scoreboard)
      : Core(std::move(name)), in_(in), pool_(pool), scoreboard_(scoreboard) {}
  void eval() override {
    if (!in_.can_pop()) return;
    Packet* f = in_.pop();
    if (on_frame_) on_frame_(*f);
    const std::uint64_t corrupted_before = scoreboard_.corrupted();
    const std::string error = scoreboard_.receive(*f);
    if (f->bad) {
      ++bad_;
    } else if (scoreboard_.corrupted() != corrupted_before) {
      ++silent_;  // a miscorrected codeword: the MAC's FCS would catch it
    } else if (!error.empty() && first_error_.empty()) {
      first_error_ = fmt::format("{} at cycle {}: {}", name(), now(), error);
    }
    pool_.release(f);
  }
  void commit() override { set_busy(in_.ready_by(now() + 1)); }
  // Called with every frame as it arrives (latency probes and the like).
  void on_frame(std::function<void(const Packet&)> f) { on_frame_ = std::move(f); }
  std::uint64_t bad() const { return bad_; }
  std::uint64_t silent() const { return silent_; }
  const std::string& first_error() const { return first_error_; }

 private:
  Channel<Packet*>& in_;
  PacketPool& pool_;
  Scoreboard& scoreboard_;
  std::uint64_t bad_ = 0, silent_ = 0;
  std::string first_error_;
  std::function<void(const Packet&)> on_frame_;
};

}  // namespace xy
