#include <stdexcept>

#include "tb/scenarios/link.hpp"
#include "tb/scenarios/link_basic.hpp"
#include "tb/scenarios/lingyun.hpp"
#include "tb/scenarios/olink.hpp"
#include "tb/scenarios/phy.hpp"
#include "tb/scenarios/switch.hpp"
#include "tb/lib/scenario.hpp"

namespace xy {

namespace {
std::vector<Scenario>& registry() {
  static std::vector<Scenario> all = {
      link_basic_scenario(),
      phy_loopback_scenario(),
      phy_fec_curve_scenario(),
      link_llr_scenario(),
      link_cbfc_scenario(),
      switch_latency_scenario(),
      switch_uniform_scenario(),
      switch_ecmp_scenario(),
      switch_allreduce_scenario(),
      switch_incast_scenario(),
      olink_latency_scenario(),
      olink_fast_scenario(),
      olink_alltoall_scenario(),
      olink_message_scenario(),
      lingyun_fec_llr_scenario(),
      lingyun_incast_scenario(),
  };
  return all;
}
}  // namespace

const std::vector<Scenario>& scenarios() { return registry(); }

void register_scenario(Scenario scenario) {
  if (scenario.name.empty() || !scenario.build)
    throw std::invalid_argument("register_scenario: a scenario needs a name and a build function");
  if (find_scenario(scenario.name))
    throw std::invalid_argument("register_scenario: '" + scenario.name + "' is already a scenario; give yours another name");
  registry().push_back(std::move(scenario));
}

const Scenario* find_scenario(const std::string& name) {
  for (const auto& s : scenarios())
    if (s.name == name) return &s;
  return nullptr;
}

}  // namespace xy
