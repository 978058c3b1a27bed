// Scoreboard: what a sink must receive, in order, and what it did receive.
#pragma once
#include <cstdint>
#include <deque>
#include <string>

#include "xingyun/packet.hpp"

namespace xy {

class Scoreboard {
 public:
  // The source sent `p` (call before it can arrive).
  void expect(const Packet& p) { expected_.push_back({p.id, p.bytes, digest(p)}); }
  // A packet arrived; returns "" or what was wrong with it (also counted).
  std::string receive(const Packet& p);

  std::uint64_t received() const { return received_; }
  std::uint64_t lost() const { return lost_; }
  std::uint64_t duplicated() const { return duplicated_; }
  std::uint64_t reordered() const { return reordered_; }
  std::uint64_t corrupted() const { return corrupted_; }
  std::uint64_t outstanding() const { return expected_.size(); }
  static std::uint64_t digest(const Packet& p);  // FNV-1a of length and payload

 private:
  struct Expected {
    std::uint64_t id;
    std::uint32_t bytes;
    std::uint64_t digest;
  };
  std::deque<Expected> expected_;
  std::uint64_t highest_id_ = 0;
  std::uint64_t received_ = 0, lost_ = 0, duplicated_ = 0, reordered_ = 0, corrupted_ = 0;
};

inline std::uint64_t Scoreboard::digest(const Packet& p) {
  std::uint64_t h = 0xcbf29ce484222325ULL ^ p.bytes;
  for (std::uint8_t b : p.payload) h = (h ^ b) * 0x100000001b3ULL;
  return h;
}

inline std::string Scoreboard::receive(const Packet& p) {
  ++received_;
  if (p.id <= highest_id_) {
    ++duplicated_;
    return "packet " + std::to_string(p.id) + " received again";
  }
  highest_id_ = p.id;
  std::string error;
  while (!expected_.empty() && expected_.front().id < p.id) {
    ++lost_;
    if (error.empty()) error = "packet " + std::to_string(expected_.front().id) + " lost";
    expected_.pop_front();
  }
  if (expected_.empty() || expected_.front().id != p.id) {
    ++reordered_;
    return "packet " + std::to_string(p.id) + " was not expected";
  }
  if (expected_.front().bytes != p.bytes || (!p.phantom && expected_.front().digest != digest(p))) {
    ++corrupted_;
    if (error.empty()) error = "packet " + std::to_string(p.id) + " arrived with other bytes than were sent";
  }
  expected_.pop_front();
  return error;
}

}  // namespace xy
