// A lossless buffer that overflowed (PFC headroom too small for the round trip, CBFC credits
// broken): the first overflow in words, and how far it went. The port counts the frame all the
// same, so that its drain balances and the run goes on to a check that fails with this report.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>

#include <fmt/format.h>

namespace xy::link {

class OverflowLog {
 public:
  // `beyond`: how much of the frame did not fit, in `unit`; `describe()` puts the overflow in
  // words (port, priority or VC, cycle, occupancy, buffer), called for the first one only.
  template <class Describe>
  void record(std::uint64_t beyond, const char* unit, Describe describe) {
    if (frames_++ == 0) first_ = describe(), unit_ = unit;
    worst_ = std::max(worst_, beyond);
  }
  bool empty() const { return frames_ == 0; }
  std::string report() const {
    return empty() ? "" : fmt::format("{}; {} frames overflowed in all, the worst by {} {}", first_, frames_, worst_, unit_);
  }

 private:
  std::string first_;
  const char* unit_ = "";
  std::uint64_t frames_ = 0, worst_ = 0;
};

}  // namespace xy::link
