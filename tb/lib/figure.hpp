// A summary's figure as a report prints it: "n/a" where the run measured none (null, e.g. the
// latency of a design that delivered nothing, or a NaN), never a 0 that reads as a measurement.
#pragma once
#include <cmath>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace xy {

inline std::string figure(const nlohmann::json& v, int decimals) {
  return v.is_number() && std::isfinite(v.get<double>()) ? fmt::format("{:.{}f}", v.get<double>(), decimals) : "n/a";
}

}  // namespace xy
