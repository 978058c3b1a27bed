// The scenarios' registry (tb/lib/scenario.hpp): each scenario adds itself with XY_SCENARIO, a
// program of one's own with register_scenario.
#include <climits>
#include <stdexcept>
#include <utility>

#include "tb/lib/scenario.hpp"

namespace xy {

namespace {
// The scenarios in listing order, and each one's order key (kCalled: added by register_scenario).
constexpr int kCalled = INT_MAX;
struct Registry {
  std::vector<Scenario> all;
  std::vector<int> order;
};
Registry& registry() {
  static Registry r;  // built at its first use, so that static registrations may come first
  return r;
}

void check(const Scenario& scenario) {
  if (scenario.name.empty() || !scenario.build)
    throw std::invalid_argument("register_scenario: a scenario needs a name and a build function");
  if (find_scenario(scenario.name))
    throw std::invalid_argument("register_scenario: '" + scenario.name + "' is already a scenario; give yours another name");
}
}  // namespace

const std::vector<Scenario>& scenarios() { return registry().all; }

void register_scenario(Scenario scenario) {
  check(scenario);
  Registry& r = registry();
  r.all.push_back(std::move(scenario));
  r.order.push_back(kCalled);
}

RegisterScenario::RegisterScenario(int order, Scenario (*make)()) {
  Scenario scenario = make();
  check(scenario);
  if (order < 0 || order >= kCalled)
    throw std::invalid_argument("XY_SCENARIO: '" + scenario.name + "' needs an order from 0 up, below INT_MAX");
  // Before the first that comes later: a larger key, an equal one with a later name, or one
  // added by register_scenario.
  Registry& r = registry();
  std::size_t at = 0;
  while (at < r.all.size() && r.order[at] != kCalled &&
         (r.order[at] < order || (r.order[at] == order && r.all[at].name < scenario.name)))
    ++at;
  r.all.insert(r.all.begin() + static_cast<std::ptrdiff_t>(at), std::move(scenario));
  r.order.insert(r.order.begin() + static_cast<std::ptrdiff_t>(at), order);
}

const Scenario* find_scenario(const std::string& name) {
  for (const auto& s : scenarios())
    if (s.name == name) return &s;
  return nullptr;
}

}  // namespace xy
