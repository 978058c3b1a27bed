// Scoreboard: what a sink must receive, in order within each virtual channel (frames of
// different VCs may pass each other), and what it did receive.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kernel/packet.hpp"
#include "kernel/ring.hpp"

namespace xy {

class Scoreboard {
 public:
  // The source sent `p` (call before it can arrive).
  void expect(const Packet& p) { lane(p.vc).expected.push({p.id, p.bytes, digest(p)}); }
  // A packet arrived; returns "" or what was wrong with it (also counted).
  std::string receive(const Packet& p);

  std::uint64_t received() const { return received_; }
  std::uint64_t lost() const { return lost_; }
  std::uint64_t duplicated() const { return duplicated_; }
  std::uint64_t reordered() const { return reordered_; }
  std::uint64_t corrupted() const { return corrupted_; }
  std::uint64_t outstanding() const {
    std::uint64_t n = 0;
    for (const auto& l : lanes_) n += l.expected.size();
    return n;
  }
  // FNV-1a of length and payload, a 64-bit word a step (the last one padded with zeros): each
  // step is a bijection of the state for a given word and of the word for a given state, so a
  // frame that differs from another in one word (any bytes of it) always has another digest.
  static std::uint64_t digest(const Packet& p);
  // The heap a scoreboard takes once a packet of one VC is expected: its lane and the lane's
  // ring (malloc's header and rounding for each), for estimates of a rig's memory.
  static std::size_t lane_heap_bytes() { return sizeof(Lane) + kFirstRing * sizeof(Expected) + 2 * 16; }

 private:
  static constexpr std::size_t kFirstRing = 4;  // small: a switch rig has a scoreboard per source and sink
  struct Expected {
    std::uint64_t id;
    std::uint32_t bytes;
    std::uint64_t digest;
  };
  struct Lane {  // one VC: ids increase along it
    Ring<Expected> expected{kFirstRing};
    std::uint64_t highest_id = 0;
  };
  Lane& lane(std::uint8_t vc) {
    if (vc >= lanes_.size()) lanes_.resize(vc + 1u);
    return lanes_[vc];
  }
  std::vector<Lane> lanes_;
  std::uint64_t received_ = 0, lost_ = 0, duplicated_ = 0, reordered_ = 0, corrupted_ = 0;
};

inline std::uint64_t Scoreboard::digest(const Packet& p) {
  constexpr std::uint64_t kPrime = 0x100000001b3ULL;
  std::uint64_t h = 0xcbf29ce484222325ULL ^ p.bytes;
  const std::uint8_t* b = p.payload.data();
  const std::size_t size = p.payload.size(), whole = size / 8 * 8;
  for (std::size_t i = 0; i < whole; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, b + i, 8);
    h = (h ^ w) * kPrime;
  }
  if (size > whole) {
    std::uint64_t w = 0;
    std::memcpy(&w, b + whole, size - whole);
    h = (h ^ w) * kPrime;
  }
  return h;
}

// One string returned from every path, so that it is made in the caller's place (no move).
inline std::string Scoreboard::receive(const Packet& p) {
  ++received_;
  Lane& l = lane(p.vc);
  std::string error;
  if (p.id <= l.highest_id) {
    ++duplicated_;
    error = "packet " + std::to_string(p.id) + " received again";
    return error;
  }
  l.highest_id = p.id;
  while (!l.expected.empty() && l.expected.front().id < p.id) {
    ++lost_;
    if (error.empty()) error = "packet " + std::to_string(l.expected.front().id) + " lost";
    l.expected.pop();
  }
  if (l.expected.empty() || l.expected.front().id != p.id) {
    ++reordered_;
    error = "packet " + std::to_string(p.id) + " was not expected";
    return error;
  }
  if (l.expected.front().bytes != p.bytes || (!p.phantom && l.expected.front().digest != digest(p))) {
    ++corrupted_;
    if (error.empty()) error = "packet " + std::to_string(p.id) + " arrived with other bytes than were sent";
  }
  l.expected.pop();
  return error;
}

}  // namespace xy
