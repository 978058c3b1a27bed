#include "tb/xysim/sweep.hpp"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "tb/scenario.hpp"
#include "tb/xysim/processes.hpp"
#include "tb/xysim/results.hpp"
#include "xingyun/config.hpp"

namespace xy {
namespace {

namespace fs = std::filesystem;

struct Point {
  std::size_t index = 0;
  std::uint64_t seed = 1;
  Params params;
  fs::path dir;
  int exit_code = -1;  // -1: not run (skipped: done before)
};

struct Sweep {
  std::string scenario;
  std::vector<std::uint64_t> seeds{1};
  std::vector<Params> combos;  // parameter sets, before seeds
};

std::string at(const std::string& path, const YAML::Node& n) { return fmt::format("{}:{}", path, n.Mark().line + 1); }

Params scalars(const std::string& path, const YAML::Node& map, const char* what) {
  if (!map.IsMap()) throw ConfigError(fmt::format("{}: {} must be a map of key: value", at(path, map), what));
  Params out;
  for (const auto& kv : map) {
    if (!kv.second.IsScalar())
      throw ConfigError(fmt::format("{}: {}.{} must be a single value", at(path, kv.second), what, kv.first.Scalar()));
    out.emplace_back(kv.first.Scalar(), kv.second.Scalar());
  }
  return out;
}

Sweep load(const std::string& path) {
  YAML::Node root;
  try {
    if (!fs::is_regular_file(path)) throw ConfigError(fmt::format("sweep file {}: no such file", path));
    root = YAML::LoadFile(path);
  } catch (const YAML::ParserException& e) {
    throw ConfigError(fmt::format("{}:{}:{}: YAML syntax error: {}", path, e.mark.line + 1, e.mark.column + 1, e.msg));
  }
  if (!root.IsMap()) throw ConfigError(fmt::format("{}: a sweep file is a map (scenario, seeds, set, grid, points)", path));
  Sweep s;
  Params fixed;
  std::vector<std::pair<std::string, std::vector<std::string>>> grid;
  std::vector<Params> points;
  for (const auto& kv : root) {
    const std::string key = kv.first.Scalar();
    const YAML::Node& v = kv.second;
    if (key == "scenario") {
      s.scenario = v.Scalar();
      if (!find_scenario(s.scenario))
        throw ConfigError(fmt::format("{}: scenario = '{}': no such scenario ('xysim scenarios' lists them)", at(path, v),
                                      s.scenario));
    } else if (key == "seeds") {
      if (!v.IsSequence() || v.size() == 0) throw ConfigError(fmt::format("{}: seeds must be a list of seeds", at(path, v)));
      s.seeds.clear();
      for (const auto& seed : v) s.seeds.push_back(parse_seed(seed.Scalar(), at(path, seed) + ": seeds"));
    } else if (key == "set") {
      fixed = scalars(path, v, "set");
    } else if (key == "grid") {
      if (!v.IsMap()) throw ConfigError(fmt::format("{}: grid must be a map of key: [values]", at(path, v)));
      for (const auto& g : v) {
        if (!g.second.IsSequence() || g.second.size() == 0)
          throw ConfigError(fmt::format("{}: grid.{} must be a list of at least one value", at(path, g.second), g.first.Scalar()));
        std::vector<std::string> values;
        for (const auto& x : g.second) values.push_back(x.Scalar());
        grid.emplace_back(g.first.Scalar(), values);
      }
    } else if (key == "points") {
      if (!v.IsSequence()) throw ConfigError(fmt::format("{}: points must be a list of maps", at(path, v)));
      for (const auto& p : v) points.push_back(scalars(path, p, "points[]"));
    } else {
      throw ConfigError(fmt::format("{}: unknown key '{}': allowed are scenario, seeds, set, grid, points", at(path, kv.first),
                                    key));
    }
  }
  if (s.scenario.empty()) throw ConfigError(fmt::format("{}: 'scenario' missing", path));
  // Every combination of the grid (the last key fastest), then the listed points.
  if (!grid.empty()) {
    std::vector<std::size_t> at_value(grid.size(), 0);
    for (;;) {
      Params p = fixed;
      for (std::size_t k = 0; k < grid.size(); ++k) p.emplace_back(grid[k].first, grid[k].second[at_value[k]]);
      s.combos.push_back(p);
      std::size_t k = grid.size();
      while (k > 0 && ++at_value[k - 1] == grid[k - 1].second.size()) at_value[--k] = 0;
      if (k == 0) break;
    }
  }
  for (const Params& point : points) {
    Params p = fixed;
    p.insert(p.end(), point.begin(), point.end());
    s.combos.push_back(p);
  }
  if (s.combos.empty()) s.combos.push_back(fixed);
  return s;
}

std::vector<std::string> command(const char* self, const std::string& scenario, const Point& p) {
  return run_args(self, scenario, p.seed, p.params, p.dir);
}

nlohmann::json describe(const std::string& scenario, const Point& p) {
  nlohmann::json params = nlohmann::json::object();
  for (const auto& [k, v] : p.params) params[k] = v;
  return {{"scenario", scenario}, {"seed", p.seed}, {"params", params}};
}

std::string csv_cell(const nlohmann::json& v) {
  std::string s = v.is_string() ? v.get<std::string>() : v.is_null() ? "" : v.dump();
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

}  // namespace

int sweep_command(const char* self, const SweepOptions& o) {
  const Sweep s = load(o.file);
  const fs::path out = o.out_dir;
  std::vector<Point> points;
  for (const Params& combo : s.combos)
    for (std::uint64_t seed : s.seeds) {
      Point p;
      p.index = points.size();
      p.seed = seed;
      p.params = combo;
      p.dir = out / "points" / fmt::format("{:04}", p.index);
      points.push_back(p);
    }
  if (o.backend == "print") {
    for (const Point& p : points) {
      std::string line;
      for (const auto& a : command(self, s.scenario, p)) line += (line.empty() ? "" : " ") + a;
      std::cout << line << "\n";
    }
    return 0;
  }
  std::error_code ec;
  fs::create_directories(out / "points", ec);
  if (ec) throw ConfigError(fmt::format("--out '{}': cannot create it: {}", o.out_dir, ec.message()));

  // Points done before with the same description are skipped.
  std::vector<Point*> todo;
  std::size_t skipped = 0;
  for (Point& p : points) {
    const nlohmann::json d = describe(s.scenario, p);
    std::ifstream old(p.dir / "point.json");
    nlohmann::json before;
    if (old && fs::exists(p.dir / "results.json")) before = nlohmann::json::parse(old, nullptr, false);
    if (before == d) {
      ++skipped;
      continue;
    }
    fs::create_directories(p.dir);
    fs::remove(p.dir / "results.json", ec);
    std::ofstream(p.dir / "point.json") << d.dump(2) << "\n";
    todo.push_back(&p);
  }
  std::vector<Process> processes;
  for (const Point* p : todo) processes.push_back({command(self, s.scenario, *p), p->dir / "log.txt"});
  std::size_t done = 0, failed = 0;
  const auto start = std::chrono::steady_clock::now();
  auto last_progress = start;
  run_processes(processes, o.jobs, [&](std::size_t i, int exit_code) {
    Point* p = todo[i];
    p->exit_code = exit_code;
    ++done;
    if (p->exit_code != 0) {
      ++failed;
      std::cerr << fmt::format("[sweep] point {} failed (exit {}): {} ({})\n", p->index, p->exit_code,
                               last_line(p->dir / "log.txt"), (p->dir / "log.txt").string());
    }
    const auto now = std::chrono::steady_clock::now();
    if (done == todo.size() || now - last_progress >= std::chrono::seconds(2)) {  // a line every 2 s at most
      last_progress = now;
      const double elapsed = std::chrono::duration<double>(now - start).count();
      std::cerr << fmt::format("[sweep] {} of {} run, {} failed, {} skipped (done before), ETA {:.0f} s\n", done,
                               todo.size(), failed, skipped, elapsed / done * (todo.size() - done));
    }
  });

  // Merge: every point's parameters, seed and summary leaves.
  nlohmann::json merged = nlohmann::json::array();
  std::vector<std::map<std::string, nlohmann::json>> rows;
  std::set<std::string> param_keys, leaf_keys;
  for (const Point& p : points) {
    nlohmann::json entry = describe(s.scenario, p);
    entry["point"] = p.index;
    std::ifstream in(p.dir / "results.json");
    const nlohmann::json r = in ? nlohmann::json::parse(in, nullptr, false) : nlohmann::json();
    entry["passed"] = r.is_object() && r.value("passed", false);
    entry["failure"] = r.is_object() ? r.value("failure", "") : last_line(p.dir / "log.txt");
    entry["summary"] = r.is_object() && r.contains("summary") ? r["summary"] : nlohmann::json::object();
    if (!entry["passed"].get<bool>()) failed += p.exit_code == -1;  // skipped, but failed before
    merged.push_back(entry);
    std::map<std::string, nlohmann::json> row;
    for (const auto& [k, v] : p.params) {
      row["param." + k] = v;
      param_keys.insert("param." + k);
    }
    for (const auto& [k, v] : leaves(entry["summary"])) {
      row[k] = v;
      leaf_keys.insert(k);
    }
    row["point"] = p.index;
    row["seed"] = p.seed;
    row["passed"] = entry["passed"];
    rows.push_back(row);
  }
  std::ofstream(out / "sweep.json") << merged.dump(2) << "\n";
  std::ofstream csv(out / "sweep.csv");
  std::vector<std::string> columns{"point", "seed"};
  columns.insert(columns.end(), param_keys.begin(), param_keys.end());
  columns.push_back("passed");
  columns.insert(columns.end(), leaf_keys.begin(), leaf_keys.end());
  for (std::size_t c = 0; c < columns.size(); ++c) csv << (c ? "," : "") << csv_cell(columns[c]);
  csv << "\n";
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < columns.size(); ++c) {
      const auto it = row.find(columns[c]);
      csv << (c ? "," : "") << (it == row.end() ? "" : csv_cell(it->second));
    }
    csv << "\n";
  }
  std::cout << fmt::format("sweep of {}: {} points, {} run, {} skipped, {} failed\n  {}\n  {}\n", s.scenario,
                           points.size(), todo.size(), skipped, failed, (out / "sweep.csv").string(),
                           (out / "sweep.json").string());
  return failed ? 1 : 0;
}

}  // namespace xy
