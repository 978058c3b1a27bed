#include "kernel/units.hpp"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace xy {

Time period_from_mhz(double mhz) {
  if (!(mhz > 0)) throw std::invalid_argument(fmt::format("clock frequency {} MHz must be > 0", mhz));
  return static_cast<Time>(std::llround(1e9 / mhz));
}

Time parse_time(const std::string& text) {
  static const struct { const char* suffix; double scale; } units[] = {
      {"fs", 1}, {"ps", 1e3}, {"ns", 1e6}, {"us", 1e9}, {"ms", 1e12}, {"s", 1e15}};
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  const std::string suffix = used ? text.substr(used) : "";
  if (used && value >= 0 && std::isfinite(value)) {
    if (suffix.empty() && value == 0) return 0;
    for (const auto& u : units)
      if (suffix == u.suffix) {
        // beyond llround's range the result is unspecified: "1e308us" came out as 2^63 fs
        if (value * u.scale >= 0x1p63)
          throw std::invalid_argument(fmt::format("'{}' is too long a time: at most {:.0f} s", text, 0x1p63 / 1e15));
        return static_cast<Time>(std::llround(value * u.scale));
      }
  }
  throw std::invalid_argument(fmt::format("'{}' is not a time: expected a number >= 0 with a unit fs, ps, ns, us, ms or s", text));
}

std::string format_time(Time t) {
  if (t >= kMs) return fmt::format("{:.3f} ms", static_cast<double>(t) / kMs);
  if (t >= kUs) return fmt::format("{:.3f} us", static_cast<double>(t) / kUs);
  return fmt::format("{:.3f} ns", static_cast<double>(t) / kNs);
}

}  // namespace xy
