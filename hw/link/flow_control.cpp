#include "hw/link/flow_control.hpp"

#include <algorithm>
#include <stdexcept>

namespace xy::link {

const std::string& fc_mode_name(FcMode mode) { return fc_mode_names().at(static_cast<std::size_t>(mode)); }

FcMode fc_mode(const std::string& name) {
  const auto& names = fc_mode_names();
  const auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end()) throw std::invalid_argument("not a flow-control mode: " + name);
  return static_cast<FcMode>(it - names.begin());
}

FcMode declare_fc_mode(Config& c, const std::string& key, const std::string& def, const std::string& meaning,
                       const std::vector<std::string>& allowed) {
  return fc_mode(c.choice(key, def, allowed, meaning));
}

std::uint64_t lossless_cells(FcMode mode, const CbfcConfig& cbfc, const PfcConfig& pfc, std::uint32_t cell_bytes,
                             std::uint32_t min_bytes, std::uint32_t max_bytes) {
  if (mode == FcMode::kNone) return 0;
  // Frames of k cells cost least at the smallest size with k cells, so only those sizes count.
  const auto most = [&](std::uint64_t room, auto cost) {
    std::uint64_t best = 0;
    for (std::uint64_t k = (min_bytes + cell_bytes - 1) / cell_bytes; k <= (max_bytes + cell_bytes - 1) / cell_bytes;
         ++k) {
      const auto bytes = static_cast<std::uint32_t>(std::max<std::uint64_t>(min_bytes, (k - 1) * cell_bytes + 1));
      best = std::max(best, room / cost(bytes) * k);
    }
    return best;
  };
  std::uint64_t cells = 0;
  if (mode == FcMode::kCbfc)
    for (int vc = 0; vc < cbfc.vcs; ++vc)
      cells += most(cbfc.buffer_credits.at(vc), [&](std::uint32_t b) { return std::uint64_t{cbfc.credits_for(b)}; });
  else
    cells += pfc.priorities * most(pfc.buffer_bytes, [](std::uint32_t b) { return std::uint64_t{b}; });
  return cells;
}

}  // namespace xy::link
