// Packets and flits. A Packet carries its header fields and, when bits matter (FEC, CRC,
// reduce ALUs, OTN), its real payload bytes; otherwise it is "phantom": only its length is
// modelled. Flits are small values that point at their packet, so moving one allocates nothing.
// Packets come from a PacketPool that recycles them (payload capacity included).
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <unordered_set>
#include <vector>

#include "kernel/units.hpp"

namespace xy {

// A frame's journey, stage by stage. The system a frame crosses names its stages (Lingyun's:
// sys/lingyun/stages.hpp) and tells each block which stage it opens; Packet::advance closes the
// stage the frame was in and opens the next, so a frame's stage times add up to its journey.
// Stage 0 is none: outside every stage, not counted.
using Stage = std::uint8_t;
constexpr Stage kNoStage = 0;
constexpr int kStageSlots = 12;

struct Packet {
  std::uint64_t id = 0;
  std::uint32_t src = 0, dst = 0;
  std::uint32_t bytes = 0;
  std::uint8_t vc = 0;
  bool phantom = true;               // true: `payload` is unused, only `bytes` counts
  bool bad = false;                  // marked on the way (uncorrectable FEC codeword, bad FCS)
  bool ecn_ce = false;               // ECN "congestion experienced", set by a switch's RED marking
  bool control = false;              // a link's own message (LLR ACK/NACK, credit update, pause)
  bool intact = false;               // a PHY delivered its bytes exactly as sent; the MAC reading them clears it
  std::uint8_t e2e = 0;              // end-to-end transport: 0 data, else an ACK/NACK/INIT (kind + 1)
  std::uint32_t psn = 0;             // end-to-end sequence number (data), or what an ACK/NACK names
  Time created = 0;                  // when the generator made it
  Time injected = 0;                 // when its head entered the first channel
  std::vector<std::uint8_t> payload; // `bytes` long when !phantom
  std::array<Time, kStageSlots> stage_time{};  // per stage, summed over the hops crossed
  Time stage_since = 0;
  Stage stage = kNoStage;

  void advance(Stage next, Time now) {
    if (stage != kNoStage) stage_time[stage] += now - stage_since;
    stage = next;
    stage_since = now;
  }
};

struct Flit {
  Packet* packet = nullptr;
  std::uint32_t index = 0;  // beat number within the packet
  std::uint16_t bytes = 0;  // bytes of the packet in this beat (the last may be partial)
  bool head = false, tail = false;
};

class PacketPool {
 public:
  Packet* acquire() {
    if (free_.empty()) {
      store_.push_back(std::make_unique<Packet>());
      return store_.back().get();
    }
    Packet* p = free_.back();
    free_.pop_back();
    return p;
  }
  void release(Packet* p) {
    p->payload.clear();  // keeps capacity
    p->bad = false;
    p->ecn_ce = false;
    p->control = false;
    p->intact = false;
    p->e2e = 0;
    p->stage_time = {};
    p->stage = kNoStage;
    free_.push_back(p);
  }
  // Frees the packets not in use: for a testbench whose phases need many packets one after
  // another, so that a later phase's other allocations reuse their memory.
  void trim() {
    const std::unordered_set<const Packet*> unused(free_.begin(), free_.end());
    store_.erase(std::remove_if(store_.begin(), store_.end(), [&](const auto& p) { return unused.count(p.get()) > 0; }),
                 store_.end());
    store_.shrink_to_fit();
    std::vector<Packet*>().swap(free_);
  }
  std::size_t allocated() const { return store_.size(); }
  std::size_t in_use() const { return store_.size() - free_.size(); }

 private:
  std::vector<std::unique_ptr<Packet>> store_;
  std::vector<Packet*> free_;
};

}  // namespace xy
