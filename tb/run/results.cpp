#include "tb/run/results.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "kernel/config.hpp"

namespace xy {

nlohmann::json load_json(const std::string& file) {
  std::ifstream in(file);
  if (!in) throw ConfigError(fmt::format("{}: cannot read it", file));
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    // e.what() is "[json.exception.parse_error.101] parse error at line L, column C: ...".
    const std::string what = e.what(), told = what.substr(what.find(']') + 2);
    throw ConfigError(fmt::format("{}: not valid JSON (byte {}): {}", file, e.byte, told));
  }
}

nlohmann::json load_results(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path file = fs::is_directory(path, ec) ? fs::path(path) / "results.json" : fs::path(path);
  if (!fs::is_regular_file(file, ec))
    throw ConfigError(fmt::format("{}: cannot read it; give a results.json or a run's --out directory", file.string()));
  const nlohmann::json doc = load_json(file.string());
  if (!doc.is_object() || !doc.contains("summary") || !doc.contains("scenario"))
    throw ConfigError(fmt::format("{}: not a results.json of xysim run (no 'scenario' and 'summary')", file.string()));
  // The keys xysim reads back, of the types xysim run writes them (docs/results.md).
  const auto check = [&](const char* key, bool (nlohmann::json::*is)() const noexcept, const char* type) {
    if (doc.contains(key) && !(doc[key].*is)())
      throw ConfigError(fmt::format("{}: '{}' is a {}, must be {} (as xysim run writes it)", file.string(), key,
                                    doc[key].type_name(), type));
  };
  check("scenario", &nlohmann::json::is_string, "a scenario's name");
  check("summary", &nlohmann::json::is_object, "an object");
  check("config", &nlohmann::json::is_object, "an object");
  check("seed", &nlohmann::json::is_number_unsigned, "a seed (a whole number >= 0)");
  check("schema_version", &nlohmann::json::is_number_integer, "a whole number");
  check("passed", &nlohmann::json::is_boolean, "true or false");
  check("failure", &nlohmann::json::is_string, "a text");
  return doc;
}

namespace {
void flatten(const nlohmann::json& j, const std::string& prefix, std::map<std::string, nlohmann::json>& out) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) flatten(v, prefix.empty() ? k : prefix + "." + k, out);
  } else if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i) flatten(j[i], prefix + "." + std::to_string(i), out);
  } else {
    out[prefix] = j;
  }
}

std::string show(const nlohmann::json* v) { return v ? v->dump() : "(none)"; }

// "+12.5 %" between two numbers; "" when either is not a number or the first is zero.
std::string relative_change(const nlohmann::json* a, const nlohmann::json* b) {
  if (!a || !b || !a->is_number() || !b->is_number()) return "";
  const double x = a->get<double>(), y = b->get<double>();
  if (x == 0) return "";
  return fmt::format("{:+.3g} %", 100.0 * (y - x) / std::fabs(x));
}

// Differs by more than the relative tolerance (numbers) or at all (anything else).
bool differs(const nlohmann::json* a, const nlohmann::json* b, double tolerance) {
  if (!a || !b) return a != b;
  if (a->is_number() && b->is_number()) {
    const double x = a->get<double>(), y = b->get<double>();
    return std::fabs(y - x) > tolerance * std::max(std::fabs(x), std::fabs(y));
  }
  return *a != *b;
}

// Rows of `key  a  b  change` for every key of either side that differs, columns aligned.
std::vector<std::string> table(const std::map<std::string, nlohmann::json>& a,
                               const std::map<std::string, nlohmann::json>& b, double tolerance) {
  std::set<std::string> keys;
  for (const auto& [k, v] : a) keys.insert(k);
  for (const auto& [k, v] : b) keys.insert(k);
  std::vector<std::array<std::string, 4>> rows;
  for (const auto& k : keys) {
    const auto ia = a.find(k), ib = b.find(k);
    const nlohmann::json* va = ia == a.end() ? nullptr : &ia->second;
    const nlohmann::json* vb = ib == b.end() ? nullptr : &ib->second;
    if (differs(va, vb, tolerance)) rows.push_back({k, show(va), show(vb), relative_change(va, vb)});
  }
  std::array<std::size_t, 3> width{};
  for (const auto& r : rows)
    for (std::size_t c = 0; c < width.size(); ++c) width[c] = std::max(width[c], r[c].size());
  std::vector<std::string> lines;
  for (const auto& r : rows)
    lines.push_back(fmt::format("  {:<{}}  {:>{}}  {:>{}}  {}", r[0], width[0], r[1], width[1], r[2], width[2], r[3]));
  return lines;
}
}  // namespace

std::map<std::string, nlohmann::json> leaves(const nlohmann::json& tree) {
  std::map<std::string, nlohmann::json> out;
  flatten(tree, "", out);
  return out;
}

int compare_command(const std::string& a_path, const std::string& b_path, double tolerance) {
  const nlohmann::json a = load_results(a_path), b = load_results(b_path);
  if (a["scenario"] != b["scenario"])
    std::cout << fmt::format("scenarios differ: {} vs {}; comparing the leaves they share by name\n",
                             a["scenario"].dump(), b["scenario"].dump());
  const auto params = table(leaves(a.value("config", nlohmann::json::object())),
                            leaves(b.value("config", nlohmann::json::object())), 0);
  if (a.value("seed", 0) != b.value("seed", 0)) std::cout << fmt::format("seed: {} vs {}\n", a["seed"].dump(), b["seed"].dump());
  if (!params.empty()) std::cout << "parameters that differ:\n" << fmt::format("{}\n", fmt::join(params, "\n"));
  const auto summary = table(leaves(a["summary"]), leaves(b["summary"]), tolerance);
  if (summary.empty()) {
    std::cout << fmt::format("summary: every leaf the same{}\n",
                             tolerance > 0 ? fmt::format(" within {} relative", tolerance) : "");
    return 0;
  }
  std::cout << fmt::format("summary leaves that differ ({}):\n{}\n", summary.size(), fmt::join(summary, "\n"));
  return 1;
}

}  // namespace xy
