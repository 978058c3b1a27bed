// Time and units. Simulated time is an unsigned count of femtoseconds, so clock periods of
// real SerDes rates (e.g. 1/1.328125 GHz = 752.941 ps) stay exact to 1e-6 and cycles of
// different domains can be compared without floating point.
#pragma once
#include <cmath>
#include <cstdint>
#include <string>

namespace xy {

using Time = std::uint64_t;   // femtoseconds
using Cycle = std::uint64_t;  // edges of one clock domain, counted from 0

inline constexpr Time kFs = 1;
inline constexpr Time kPs = 1000 * kFs;
inline constexpr Time kNs = 1000 * kPs;
inline constexpr Time kUs = 1000 * kNs;
inline constexpr Time kMs = 1000 * kUs;

// A time given in ns or us (a parameter's value), to the nearest femtosecond.
inline Time from_ns(double ns) { return static_cast<Time>(std::llround(ns * kNs)); }
inline Time from_us(double us) { return static_cast<Time>(std::llround(us * kUs)); }
// The one rule that turns a time into cycles of a clock: the cycles that cover it, rounded up,
// so that a timer or a latency never ends early.
inline constexpr Cycle cycles_for(Time t, Time period) { return (t + period - 1) / period; }

// Period in fs of a clock at `mhz` MHz, rounded to the nearest femtosecond.
Time period_from_mhz(double mhz);

inline double to_ns(Time t) { return static_cast<double>(t) / kNs; }
inline double to_us(Time t) { return static_cast<double>(t) / kUs; }

// Bits per second carried by `bytes_per_cycle` at `period` fs per cycle, in Gb/s.
inline double gbps(double bytes_per_cycle, Time period) {
  return bytes_per_cycle * 8.0 * 1e6 / static_cast<double>(period);
}

// Cycles needed to move `bytes` at `width` bytes per cycle (a partly used last beat counts).
inline constexpr std::uint64_t beats(std::uint64_t bytes, std::uint64_t width) {
  return (bytes + width - 1) / width;
}

// Parses "10us", "250ns", "1.5ms", "0" into fs; throws std::invalid_argument naming the text.
Time parse_time(const std::string& text);
std::string format_time(Time t);

}  // namespace xy
