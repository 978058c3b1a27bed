// The median of a benchmark's repeated figures (the upper one of an even count).
#pragma once
#include <algorithm>
#include <vector>

namespace xy {

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

}  // namespace xy
