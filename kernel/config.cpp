#include "kernel/config.hpp"

#include <algorithm>

#include <cerrno>
#include <cstdlib>
#include <limits>
#include <map>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "kernel/yaml_file.hpp"

namespace xy {
namespace {

constexpr std::size_t kMaxParams = 100000;

// Where a file gave each key: one given twice (nested and dotted, say) is refused.
void note_once(std::map<std::string, std::string>& seen, const std::string& what, const std::string& key,
               const std::string& origin) {
  if (const auto [it, fresh] = seen.emplace(key, origin); !fresh)
    throw ConfigError(fmt::format("{}: {}'{}' given twice (also at {}); allowed: once", origin, what, key, it->second));
}

// `seen`: see note_once.
void flatten(const YAML::Node& node, const std::string& prefix, const std::string& path, Config& cfg,
             std::map<std::string, std::string>& seen) {
  if (node.IsMap()) {
    for (const auto& kv : node) {
      if (!kv.first.IsScalar())
        throw ConfigError(fmt::format("{}: a parameter name must be a plain word", yaml_at(path, kv.first)));
      const std::string key = kv.first.Scalar();
      flatten(kv.second, prefix.empty() ? key : prefix + "." + key, path, cfg, seen);
    }
  } else if (node.IsScalar()) {
    const std::string origin = yaml_at(path, node);
    // Aliases can make a small file expand into billions of parameters: refuse long before.
    if (seen.size() >= kMaxParams)
      throw ConfigError(fmt::format("{}: more than {} parameters (aliases expanding?); allowed: at most {}", path,
                                    kMaxParams, kMaxParams));
    note_once(seen, "parameter ", prefix, origin);
    cfg.set(prefix, node.Scalar(), origin);
  } else {
    throw ConfigError(fmt::format("{}: parameter '{}' must be a single value or a map of parameters",
                                  yaml_at(path, node), prefix));
  }
}

}  // namespace

void Config::set(const std::string& key, const std::string& value, const std::string& origin) {
  if (key.empty()) throw ConfigError(fmt::format("{}: empty parameter name", origin));
  given_[key] = Given{value, origin, false};
}

void Config::default_to(const std::string& key, const std::string& value, const std::string& owner) {
  if (!given_.count(key)) given_[key] = Given{value, owner + "'s default", false, true};
}

void Config::set_from_assignment(const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw ConfigError(fmt::format("--set '{}': expected key=value, e.g. --set link.latency_cycles=20", assignment));
  set(assignment.substr(0, eq), assignment.substr(eq + 1), "--set");
}

std::uint64_t parse_seed(const std::string& text, const std::string& origin) {
  const bool digits = !text.empty() && text.size() <= 20 &&
                      text.find_first_not_of("0123456789") == std::string::npos;
  errno = 0;
  const unsigned long long value = digits ? std::strtoull(text.c_str(), nullptr, 10) : 0;
  if (!digits || errno == ERANGE)
    throw ConfigError(fmt::format("{}: seed = '{}': must be an integer in [0, {}]", origin, text,
                                  std::numeric_limits<std::uint64_t>::max()));
  return value;
}

std::string Config::load_yaml_file(const std::string& path, std::uint64_t* seed) {
  const YAML::Node root = xy::load_yaml_file(path, "scenario file");
  if (!root.IsMap())
    throw ConfigError(fmt::format("{}: a scenario file is a map with keys scenario, seed, params", path));
  std::string scenario;
  std::map<std::string, std::string> seen;
  std::map<std::string, std::string> top_keys;
  for (const auto& kv : root) {
    const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : "";
    if (!key.empty()) note_once(top_keys, "", key, yaml_at(path, kv.first));
    if (key == "scenario" && kv.second.IsScalar()) {
      scenario = kv.second.Scalar();
    } else if (key == "seed" && kv.second.IsScalar()) {
      *seed = parse_seed(kv.second.Scalar(), yaml_at(path, kv.second));
    } else if (key == "params") {
      if (!kv.second.IsNull()) flatten(kv.second, "", path, *this, seen);
    } else if (key != "description") {
      throw ConfigError(fmt::format("{}: unknown key '{}': allowed are scenario, seed, params, description",
                                    yaml_at(path, kv.first), key));
    }
  }
  return scenario;
}

const Config::Given* Config::given(const std::string& key) {
  auto it = given_.find(key);
  if (it == given_.end()) return nullptr;
  it->second.used = true;
  return &it->second;
}

void Config::declare(ParamInfo info) {
  if (const auto g = given_.find(info.key); g != given_.end() && g->second.owner_default) info.default_value = info.value;
  if (const auto f = fixed_.find(info.key); f != fixed_.end()) info.fixed_by = f->second;
  const auto it = index_.find(info.key);
  if (it == index_.end()) {
    index_[info.key] = params_.size();
    params_.push_back(std::move(info));
    return;
  }
  // A second instance of the same block declares the same parameter; anything else is a second
  // owner, whose default or meaning would silently lose to the first.
  const ParamInfo& first = params_[it->second];
  const auto differs = [&](const char* what, const std::string& a, const std::string& b) {
    if (a != b)
      throw std::logic_error(fmt::format("parameter '{}' is declared twice with different {}: '{}' and '{}'; a "
                                         "parameter has one owner",
                                         info.key, what, a, b));
  };
  differs("types", first.type, info.type);
  differs("defaults", first.default_value.dump(), info.default_value.dump());
  differs("units", first.unit, info.unit);
  differs("ranges", first.range, info.range);
  differs("descriptions", first.description, info.description);
}

void Config::fix(const std::string& key, const std::string& owner) {
  if (const auto g = given_.find(key); g != given_.end())
    throw ConfigError(fmt::format("{} = '{}' ({}): set by {}; allowed: leave it unset", key, g->second.value,
                                  g->second.origin, owner));
  fixed_[key] = owner;
  if (const auto it = index_.find(key); it != index_.end()) params_[it->second].fixed_by = owner;
}

std::int64_t Config::integer(const std::string& key, std::int64_t def, const std::string& unit, std::int64_t min,
                             std::int64_t max, const std::string& description) {
  std::int64_t value = def;
  if (const Given* g = given(key)) {
    std::size_t used = 0;
    bool ok = true;
    try {
      value = std::stoll(g->value, &used, 10);  // decimal: "010" is ten, not octal eight
    } catch (const std::exception&) {
      ok = false;
    }
    if (!ok || used != g->value.size() || value < min || value > max)
      throw ConfigError(fmt::format("{} = '{}' ({}): must be an integer in [{}, {}]{}", key, g->value, g->origin,
                                    min, max, unit.empty() ? "" : " " + unit));
  }
  declare({key, "int", unit, fmt::format("[{}, {}]", min, max), description, def, value});
  return value;
}

double Config::real(const std::string& key, double def, const std::string& unit, double min, double max,
                    const std::string& description) {
  double value = def;
  if (const Given* g = given(key)) {
    std::size_t used = 0;
    bool ok = true;
    try {
      value = std::stod(g->value, &used);
    } catch (const std::exception&) {
      ok = false;
    }
    if (!ok || used != g->value.size() || !(value >= min && value <= max))
      throw ConfigError(fmt::format("{} = '{}' ({}): must be a number in [{}, {}]{}", key, g->value, g->origin, min,
                                    max, unit.empty() ? "" : " " + unit));
  }
  declare({key, "real", unit, fmt::format("[{}, {}]", min, max), description, def, value});
  return value;
}

bool Config::flag(const std::string& key, bool def, const std::string& description) {
  bool value = def;
  if (const Given* g = given(key)) {
    const std::string& v = g->value;
    if (v == "true" || v == "1" || v == "yes" || v == "on") value = true;
    else if (v == "false" || v == "0" || v == "no" || v == "off") value = false;
    else throw ConfigError(fmt::format("{} = '{}' ({}): must be true or false", key, v, g->origin));
  }
  declare({key, "bool", "", "true|false", description, def, value});
  return value;
}

std::string Config::choice(const std::string& key, const std::string& def, const std::vector<std::string>& allowed,
                           const std::string& description) {
  std::string value = def;
  if (const Given* g = given(key)) {
    value = g->value;
    bool ok = false;
    for (const auto& a : allowed) ok = ok || a == value;
    if (!ok)
      throw ConfigError(fmt::format("{} = '{}' ({}): must be one of {}", key, value, g->origin,
                                    fmt::join(allowed, ", ")));
  }
  declare({key, "choice", "", fmt::format("{}", fmt::join(allowed, "|")), description, def, value});
  return value;
}

std::string Config::text(const std::string& key, const std::string& def, const std::string& description,
                         const std::string& allowed) {
  std::string value = def;
  if (const Given* g = given(key)) value = g->value;
  if (value.empty()) throw ConfigError(fmt::format("{} = '': must not be empty", key));
  declare({key, "text", "", allowed, description, def, value});
  return value;
}

std::string Config::implementation(const std::string& key, const std::vector<std::string>& allowed,
                                   const std::string& description) {
  const std::string value = choice(key, allowed.at(0), allowed, description);
  params_[index_.at(key)].implementation = true;
  return value;
}

namespace {
// Edits (insert, delete, replace) that turn a into b.
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = up;
    }
  }
  return row[b.size()];
}
}  // namespace

void Config::check_all_used() const {
  for (const auto& [key, g] : given_) {
    if (g.used) continue;
    // The declared key nearest to it, if it is a likely misspelling (a third of it or less wrong).
    std::string nearest;
    std::size_t best = key.size() / 3 + 1;
    for (const auto& p : params_)
      if (const std::size_t d = edit_distance(key, p.key); d < best) {
        best = d;
        nearest = p.key;
      }
    throw ConfigError(fmt::format("unknown parameter '{}' ({}): no block of this scenario declares it; {}'xysim "
                                  "params SCENARIO' lists them",
                                  key, g.origin, nearest.empty() ? "" : fmt::format("did you mean '{}'? ", nearest)));
  }
}

nlohmann::json Config::effective() const {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& p : params_)
    if (!p.implementation) j[p.key] = p.value;
  return j;
}

nlohmann::json Config::implementations() const {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& p : params_)
    if (p.implementation) j[p.key] = p.value;
  return j;
}

}  // namespace xy
