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

}  // namespace xy::link
