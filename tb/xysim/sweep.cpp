#include "tb/xysim/sweep.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "tb/lib/memory.hpp"
#include "tb/lib/scenario.hpp"
#include "tb/xysim/processes.hpp"
#include "tb/run/results.hpp"
#include "tb/run/run.hpp"
#include "kernel/config.hpp"
#include "kernel/yaml_file.hpp"

namespace xy {
namespace {

namespace fs = std::filesystem;

struct Point {
  std::size_t index = 0;
  std::uint64_t seed = 1;
  Params params;
  fs::path dir;
};

// What --backend slurm adds to sbatch, from the sweep file's `slurm:` map.
struct SlurmOptions {
  std::string partition, time;
  std::vector<std::string> args;  // any other sbatch options, as given
};

struct Sweep {
  std::string scenario;
  std::vector<std::uint64_t> seeds{1};
  std::vector<Params> combos;  // parameter sets, before seeds
  SlurmOptions slurm;
  bool expect_failures = false;  // points meant to fail (finding a limit): counted, exit 0
  std::map<std::string, std::string> origins;  // each parameter's first place in the file (file:line)
  bool force_memory = false;  // --force-memory, given to every point too
};

Params scalars(const std::string& path, const YAML::Node& map, const char* what,
               std::map<std::string, std::string>& origins) {
  if (!map.IsMap()) throw ConfigError(fmt::format("{}: {} must be a map of key: value", yaml_at(path, map), what));
  Params out;
  for (const auto& kv : map) {
    if (!kv.second.IsScalar())
      throw ConfigError(fmt::format("{}: {}.{} must be a single value", yaml_at(path, kv.second), what, kv.first.Scalar()));
    out.emplace_back(kv.first.Scalar(), kv.second.Scalar());
    origins.emplace(kv.first.Scalar(), yaml_at(path, kv.first));
  }
  return out;
}

SlurmOptions slurm_options(const std::string& path, const YAML::Node& map) {
  if (!map.IsMap()) throw ConfigError(fmt::format("{}: slurm must be a map (partition, time, args)", yaml_at(path, map)));
  SlurmOptions o;
  for (const auto& kv : map) {
    const std::string key = kv.first.Scalar();
    const YAML::Node& v = kv.second;
    if (key == "args") {
      if (!v.IsSequence()) throw ConfigError(fmt::format("{}: slurm.args must be a list of sbatch options", yaml_at(path, v)));
      for (const auto& a : v) o.args.push_back(a.Scalar());
    } else if (key != "partition" && key != "time") {
      throw ConfigError(fmt::format("{}: unknown key 'slurm.{}': allowed are partition, time, args", yaml_at(path, kv.first), key));
    } else if (!v.IsScalar() || v.Scalar().empty()) {
      throw ConfigError(fmt::format("{}: slurm.{} must be a single value", yaml_at(path, v), key));
    } else {
      (key == "partition" ? o.partition : o.time) = v.Scalar();
    }
  }
  return o;
}

// A key no block of the scenario declares is refused before any point runs, naming its line. The
// scenario is built (not run) with the first point's parameters, which also picks its variant
// (topology=..., say). A value that build refuses is left to the points, each telling its own:
// a sweep may mean some points to fail.
void check_keys(const Sweep& s) {
  Config config;
  for (const auto& [key, value] : s.combos.front()) config.set(key, value, s.origins.at(key));
  try {
    build_unrun(s.scenario, config);
  } catch (const ConfigError&) {
    return;
  }
  config.check_all_used();
}

// The memory the sweep itself takes, estimated before its points are made: each point's parameters
// are held about four times (its combination, its Point, its command, its sweep.json entry), and
// merging adds its row and summary (about 2 KiB, more with a large summary).
void check_sweep_memory(const std::vector<std::pair<std::string, std::vector<std::string>>>& grid,
                        const Params& fixed, const std::vector<Params>& points, std::size_t seeds, bool force) {
  const auto text_bytes = [](const Params& ps) {
    double n = 0;
    for (const auto& [k, v] : ps) n += static_cast<double>(k.size() + v.size()) + 64;  // two strings and a pair
    return n;
  };
  double combos = grid.empty() ? 0 : 1, params = text_bytes(fixed);
  for (const auto& [key, values] : grid) {
    combos *= static_cast<double>(values.size());
    params += static_cast<double>(key.size()) + 64 + static_cast<double>(values.front().size());
  }
  double listed = 0;
  for (const Params& p : points) listed += text_bytes(fixed) + text_bytes(p);
  const double count = (combos + static_cast<double>(points.size())) * static_cast<double>(seeds);
  const double bytes = static_cast<double>(seeds) * 4 * (combos * params + listed) + count * (sizeof(Point) + 2048);
  check_memory(bytes, fmt::format("the sweep's {:.0f} points ({} seeds x the grid's combinations and the points listed)",
                                  count, seeds),
               force);
}

Sweep load(const std::string& path, bool force_memory) {
  const YAML::Node root = load_yaml_file(path, "sweep file");
  if (!root.IsMap())
    throw ConfigError(
        fmt::format("{}: a sweep file is a map (scenario, seeds, set, grid, points, slurm, expect_failures)", path));
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
        throw ConfigError(fmt::format("{}: scenario = '{}': no such scenario ('xysim scenarios' lists them)", yaml_at(path, v),
                                      s.scenario));
    } else if (key == "seeds") {
      if (!v.IsSequence() || v.size() == 0) throw ConfigError(fmt::format("{}: seeds must be a list of seeds", yaml_at(path, v)));
      s.seeds.clear();
      for (const auto& seed : v) s.seeds.push_back(parse_seed(seed.Scalar(), yaml_at(path, seed) + ": seeds"));
    } else if (key == "set") {
      fixed = scalars(path, v, "set", s.origins);
    } else if (key == "grid") {
      if (!v.IsMap() || v.size() == 0)
        throw ConfigError(fmt::format("{}: grid must be a map of key: [values] with at least one key (or no grid)",
                                      yaml_at(path, v)));
      for (const auto& g : v) {
        if (!g.second.IsSequence() || g.second.size() == 0)
          throw ConfigError(fmt::format("{}: grid.{} must be a list of at least one value", yaml_at(path, g.second), g.first.Scalar()));
        std::vector<std::string> values;
        for (const auto& x : g.second) {
          if (!x.IsScalar())
            throw ConfigError(fmt::format("{}: grid.{} holds a {}: each value must be a single value", yaml_at(path, x),
                                          g.first.Scalar(), x.IsSequence() ? "list" : "map"));
          values.push_back(x.Scalar());
        }
        grid.emplace_back(g.first.Scalar(), values);
        s.origins.emplace(g.first.Scalar(), yaml_at(path, g.first));
      }
    } else if (key == "points") {
      if (!v.IsSequence()) throw ConfigError(fmt::format("{}: points must be a list of maps", yaml_at(path, v)));
      for (const auto& p : v) points.push_back(scalars(path, p, "points[]", s.origins));
    } else if (key == "slurm") {
      s.slurm = slurm_options(path, v);
    } else if (key == "expect_failures") {
      const std::string flag = v.IsScalar() ? v.Scalar() : "";
      if (flag != "true" && flag != "false")
        throw ConfigError(fmt::format("{}: expect_failures = '{}': must be true or false", yaml_at(path, v), flag));
      s.expect_failures = flag == "true";
    } else {
      throw ConfigError(fmt::format(
          "{}: unknown key '{}': allowed are scenario, seeds, set, grid, points, slurm, expect_failures",
          yaml_at(path, kv.first), key));
    }
  }
  if (s.scenario.empty()) throw ConfigError(fmt::format("{}: 'scenario' missing", path));
  check_sweep_memory(grid, fixed, points, s.seeds.size(), force_memory);
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
  check_keys(s);
  return s;
}

std::vector<std::string> command(const char* self, const Sweep& s, const Point& p) {
  std::vector<std::string> args = run_args(self, s.scenario, p.seed, p.params, p.dir);
  if (s.force_memory) args.push_back("--force-memory");
  return args;
}

nlohmann::json describe(const std::string& scenario, const Point& p) {
  nlohmann::json params = nlohmann::json::object();
  for (const auto& [k, v] : p.params) params[k] = v;
  return {{"scenario", scenario}, {"seed", p.seed}, {"params", params}};
}



// A parameter's value as the scenario read it: the number or boolean of the point's results.json
// `config` (the scenario declared its type), else the sweep file's text as a YAML reader takes it.
nlohmann::json typed(const std::string& key, const std::string& text, const nlohmann::json& results) {
  if (results.contains("config") && results["config"].contains(key)) {
    const nlohmann::json& read = results["config"][key];
    return read.is_number() || read.is_boolean() ? read : nlohmann::json(text);
  }
  const YAML::Node node = YAML::Load(text);
  bool flag = false;
  double number = 0;
  if (node.IsScalar() && YAML::convert<bool>::decode(node, flag)) return flag;
  if (node.IsScalar() && YAML::convert<double>::decode(node, number) && std::isfinite(number)) {
    std::int64_t whole = 0;
    return YAML::convert<std::int64_t>::decode(node, whole) ? nlohmann::json(whole) : nlohmann::json(number);
  }
  return text;
}

std::string csv_cell(const nlohmann::json& v) {
  std::string s = v.is_string() ? v.get<std::string>() : v.is_null() ? "" : v.dump();
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

// A point's results.json, or {} when there is none or only a part (a run killed while writing it).
nlohmann::json read_results(const Point& p) {
  std::ifstream in(p.dir / "results.json");
  nlohmann::json r = in ? nlohmann::json::parse(in, nullptr, false) : nlohmann::json();
  return r.is_object() ? r : nlohmann::json::object();
}

// A point is done when its point.json describes it and its results are whole.
bool done_before(const std::string& scenario, const Point& p) {
  std::ifstream described(p.dir / "point.json");
  return described && nlohmann::json::parse(described, nullptr, false) == describe(scenario, p) &&
         !read_results(p).empty();
}

// Why a point failed, in one line short enough to read among others: the first line of its
// results' failure (or of its log's last line), cut at 120 characters; the file named holds it all.
std::string failure_line(const Point& p) {
  const nlohmann::json r = read_results(p);
  const bool has_failure = r.contains("failure") && r["failure"].is_string() && !r["failure"].get<std::string>().empty();
  std::string reason = has_failure ? r["failure"].get<std::string>() : last_line(p.dir / "log.txt");
  reason = reason.substr(0, reason.find('\n'));
  constexpr std::size_t kMax = 120;
  if (reason.size() > kMax) reason = reason.substr(0, kMax - 3) + "...";
  return fmt::format("{} ({})", reason, (p.dir / (has_failure ? "results.json" : "log.txt")).string());
}

void report_failure(const Point& p, int exit_code) {
  std::cerr << fmt::format("[sweep] point {} failed (exit {}): {}\n", p.index, exit_code, failure_line(p));
}

// Runs the points here, `jobs` at a time.
void run_local(const char* self, const Sweep& s, const std::vector<Point*>& todo, std::size_t skipped, int jobs) {
  std::vector<Process> processes;
  for (const Point* p : todo) processes.push_back({command(self, s, *p), p->dir / "log.txt"});
  std::size_t done = 0, failed = 0;
  const auto start = std::chrono::steady_clock::now();
  auto last_progress = start;
  run_processes(processes, jobs, [&](std::size_t i, int exit_code) {
    ++done;
    if (exit_code != 0) {
      ++failed;
      report_failure(*todo[i], exit_code);
    }
    const auto now = std::chrono::steady_clock::now();
    if (done == todo.size() || now - last_progress >= std::chrono::seconds(2)) {  // a line every 2 s at most
      last_progress = now;
      const double elapsed = std::chrono::duration<double>(now - start).count();
      std::cerr << fmt::format("[sweep] {} of {} run, {} failed, {} skipped (done before), ETA {:.0f} s\n", done,
                               todo.size(), failed, skipped, elapsed / done * (todo.size() - done));
    }
  });
}

// The full path of a program on PATH, or "" when it is not there.
std::string on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const fs::path candidate = fs::path(dir.empty() ? "." : dir) / program;
    if (access(candidate.c_str(), X_OK) == 0 && fs::is_regular_file(candidate)) return candidate.string();
  }
  return "";
}

std::string shell_quoted(const std::string& text) {
  std::string q = "'";
  for (char c : text) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Slurm's array syntax for these indices: 0-3,7,9-10.
std::string index_ranges(const std::vector<Point*>& todo) {
  std::string out;
  for (std::size_t i = 0; i < todo.size();) {
    std::size_t j = i;
    while (j + 1 < todo.size() && todo[j + 1]->index == todo[j]->index + 1) ++j;
    out += (out.empty() ? "" : ",") + std::to_string(todo[i]->index);
    if (j > i) out += "-" + std::to_string(todo[j]->index);
    i = j + 1;
  }
  return out;
}

// How many tasks of a Slurm job are pending or running, or -1 when squeue cannot tell.
long tasks_left(const std::string& job_id) {
  FILE* pipe = popen(("squeue -h -r -o %i -j " + job_id + " 2>/dev/null").c_str(), "r");
  if (!pipe) return -1;
  long lines = 0;
  for (int c; (c = std::fgetc(pipe)) != EOF;) lines += c == '\n';
  return pclose(pipe) == 0 ? lines : -1;
}

// Submits the points as one Slurm job array, each task running `xysim sweep FILE --out DIR --point
// K`, at most `jobs` at once when given, and waits for it (sbatch --wait, or squeue listing none of
// its tasks), showing how many are done.
void run_slurm(const SweepOptions& o, const std::string& sbatch, const Sweep& s, const std::vector<Point*>& todo,
               std::size_t skipped) {
  const fs::path out = fs::absolute(o.out_dir), slurm_dir = out / "slurm";
  fs::create_directories(slurm_dir);
  // The tasks run on other nodes: every path absolute, and xysim the very binary running here.
  const std::string task = fmt::format("exec {} sweep {} --out {} --point \"$SLURM_ARRAY_TASK_ID\"",
                                       shell_quoted(fs::canonical("/proc/self/exe").string()),
                                       shell_quoted(fs::absolute(o.file).string()), shell_quoted(out.string()));
  std::vector<std::string> args{sbatch, "--parsable", "--wait", "--job-name=xysim-sweep",
                                "--array=" + index_ranges(todo) + (o.jobs > 0 ? "%" + std::to_string(o.jobs) : ""),
                                "--output=" + (slurm_dir / "%a.txt").string()};
  if (!s.slurm.partition.empty()) args.push_back("--partition=" + s.slurm.partition);
  if (!s.slurm.time.empty()) args.push_back("--time=" + s.slurm.time);
  args.insert(args.end(), s.slurm.args.begin(), s.slurm.args.end());
  args.push_back("--wrap=" + task);
  const fs::path sbatch_log = slurm_dir / "sbatch.txt";
  const pid_t pid = spawn({args, sbatch_log});

  // --parsable prints the job id (as "id" or "id;cluster") once the array is queued.
  auto job_id = [&]() -> std::string {
    std::ifstream in(sbatch_log);
    std::string line;
    std::getline(in, line);
    return !line.empty() && std::isdigit(static_cast<unsigned char>(line[0])) ? line.substr(0, line.find(';')) : "";
  };
  long left_before = -1;
  int status = 0;
  for (int tick = 0; waitpid(pid, &status, WNOHANG) == 0; ++tick) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const std::string id = job_id();
    if (tick % 10 != 0 || id.empty()) continue;  // squeue every 2 s
    const long left = tasks_left(id);
    if (left >= 0 && left != left_before)
      std::cerr << fmt::format("[sweep] Slurm job {}: {} of {} done, {} skipped (done before)\n", id,
                               static_cast<long>(todo.size()) - left, todo.size(), skipped);
    left_before = left;
    if (left == 0) {  // sbatch --wait notices the end after growing pauses (20 s and more); squeue at once
      kill(pid, SIGTERM);
      waitpid(pid, &status, 0);
      break;
    }
  }
  if (job_id().empty())  // e.g. an option in slurm: that this cluster does not take
    throw ConfigError(fmt::format("sbatch refused the job array: {} ({})", last_line(sbatch_log), sbatch_log.string()));
  // A task that failed said why in its output (its report_failure line, or Slurm's own).
  for (const Point* p : todo)
    if (!read_results(*p).value("passed", false)) {
      const fs::path said = slurm_dir / fmt::format("{}.txt", p->index);
      const bool point_ran = fs::exists(p->dir / "log.txt");  // else Slurm's own output says why
      std::cerr << (point_ran ? fmt::format("[sweep] point {} failed: {}", p->index, failure_line(*p))
                              : fmt::format("[sweep] point {} failed ({})", p->index, said.string()))
                << "\n";
    }
}

std::vector<Point> all_points(const Sweep& s, const fs::path& out) {
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
  return points;
}

// The same tree with every leaf null.
nlohmann::json blanked(const nlohmann::json& tree) {
  if (!tree.is_structured()) return nullptr;
  nlohmann::json out = tree;
  for (auto& v : out) v = blanked(v);
  return out;
}

// Writes sweep.json and sweep.csv from every point's results and prints the summary; returns the
// number of points that did not pass.
std::size_t merge(const Sweep& s, const fs::path& out, const std::vector<Point>& points, std::size_t run,
                  std::size_t skipped) {
  nlohmann::json merged = nlohmann::json::array();
  std::vector<std::map<std::string, nlohmann::json>> rows;
  std::set<std::string> param_keys, leaf_keys;
  std::size_t failed = 0;
  for (const Point& p : points) {
    nlohmann::json entry = describe(s.scenario, p);
    entry["point"] = p.index;
    const nlohmann::json r = read_results(p);
    for (const auto& [k, v] : p.params) entry["params"][k] = typed(k, v, r);
    entry["passed"] = r.value("passed", false);
    entry["failure"] = r.empty() ? last_line(p.dir / "log.txt") : r.value("failure", "");
    entry["summary"] = r.value("summary", nlohmann::json::object());
    // A failed point's figures cover only what it did until it failed: blank here (null, an empty
    // cell) so that no plot or spreadsheet takes them for results; its results.json keeps them.
    if (!entry["passed"].get<bool>()) entry["summary"] = blanked(entry["summary"]);
    failed += !entry["passed"].get<bool>();
    merged.push_back(entry);
    std::map<std::string, nlohmann::json> row;
    for (const auto& [k, v] : p.params) {
      row["param." + k] = entry["params"][k];
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
  std::cout << fmt::format("sweep of {}: {} points, {} run, {} skipped, {} failed{}\n  {}\n  {}\n", s.scenario,
                           points.size(), run, skipped, failed,
                           s.expect_failures && failed ? " (expect_failures: true)" : "", (out / "sweep.csv").string(),
                           (out / "sweep.json").string());
  return failed;
}

}  // namespace

int sweep_command(const char* self, const SweepOptions& o) {
  Sweep s = load(o.file, o.force_memory);
  s.force_memory = o.force_memory;
  const fs::path out = o.out_dir;
  std::vector<Point> points = all_points(s, out);
  if (o.point >= 0) {  // one task of the Slurm array: the point the submitter prepared
    if (static_cast<std::size_t>(o.point) >= points.size())
      throw ConfigError(fmt::format("--point {}: the sweep has points 0 to {}", o.point, points.size() - 1));
    Point& p = points[o.point];
    int status = 0;
    waitpid(spawn({command(self, s, p), p.dir / "log.txt"}), &status, 0);
    const int exit_code = exit_status(status);
    if (exit_code != 0) report_failure(p, exit_code);
    return exit_code;
  }
  if (o.backend == "print") {
    for (const Point& p : points) {
      std::string line;
      for (const auto& a : command(self, s, p)) line += (line.empty() ? "" : " ") + a;
      std::cout << line << "\n";
    }
    return 0;
  }
  const std::string sbatch = o.backend == "slurm" ? on_path("sbatch") : "";
  if (o.backend == "slurm" && sbatch.empty())
    throw ConfigError("--backend slurm: sbatch is not on PATH (Slurm's client commands are needed on this machine)");
  std::error_code ec;
  fs::create_directories(out / "points", ec);
  if (ec) throw ConfigError(fmt::format("--out '{}': cannot create it: {}", o.out_dir, ec.message()));

  // Points done before with the same description are skipped.
  std::vector<Point*> todo;
  for (Point& p : points) {
    if (done_before(s.scenario, p)) continue;
    fs::create_directories(p.dir);
    fs::remove(p.dir / "results.json", ec);
    std::ofstream(p.dir / "point.json") << describe(s.scenario, p).dump(2) << "\n";
    todo.push_back(&p);
  }
  const std::size_t skipped = points.size() - todo.size();
  if (o.backend == "slurm") {
    if (!todo.empty()) run_slurm(o, sbatch, s, todo, skipped);
  } else {
    run_local(self, s, todo, skipped, o.jobs);
  }
  const std::size_t failed = merge(s, out, points, todo.size(), skipped);
  return failed && !s.expect_failures ? 1 : 0;
}

}  // namespace xy
