#include "tb/run/run.hpp"

#include <array>

#include <fnmatch.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <fmt/format.h>
#include <systemc>

#include "tb/lib/memory.hpp"
#include "tb/lib/scenario.hpp"
#include "tb/run/results.hpp"
#include "kernel/clock_domain.hpp"
#include "kernel/version.hpp"

namespace xy {
namespace {

bool is_yaml(const std::string& s) {
  const auto ext = std::filesystem::path(s).extension();
  return ext == ".yaml" || ext == ".yml";
}

std::string scenario_names() {
  std::string names;
  for (const auto& s : scenarios()) names += (names.empty() ? "" : ", ") + s.name;
  return names;
}

const Scenario& scenario_or_throw(const std::string& name, const std::string& origin) {
  if (const Scenario* s = find_scenario(name)) return *s;
  throw ConfigError(fmt::format("{}unknown scenario '{}': one of {}, a .yaml file, or a run's results.json", origin,
                                name, scenario_names()));
}

bool is_json(const std::string& s) { return std::filesystem::path(s).extension() == ".json"; }

// A parameter's value as --set takes it: numbers in JSON's shortest form that reads back the same.
std::string as_text(const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// Repeating a run from its results.json (or the run.json beside it): its scenario, seed and every
// parameter it read, and from run.json the implementations (RTL twins) it ran. Returns the scenario.
std::string load_run(const std::string& path, Config& config, std::uint64_t* seed) {
  namespace fs = std::filesystem;
  const bool run_json = fs::path(path).filename() == "run.json";
  const fs::path results_path = run_json ? fs::path(path).parent_path() / "results.json" : fs::path(path);
  const nlohmann::json results = load_results(results_path.string());
  const std::string origin = results_path.string() + ": config";
  if (!results["scenario"].is_string() || !results.contains("seed") || !results["seed"].is_number_unsigned() ||
      !results.contains("config") || !results["config"].is_object())
    throw ConfigError(fmt::format("{}: no 'scenario', 'seed' and 'config' to repeat the run from", results_path.string()));
  for (const auto& [key, value] : results["config"].items()) config.set(key, as_text(value), origin);
  *seed = results["seed"].get<std::uint64_t>();
  std::ifstream run_in(results_path.parent_path() / "run.json");
  const nlohmann::json run = run_in ? nlohmann::json::parse(run_in, nullptr, false) : nlohmann::json();
  if (run.is_object() && run.contains("implementations") && run["implementations"].is_object())
    for (const auto& [key, value] : run["implementations"].items())
      config.set(key, as_text(value), (results_path.parent_path() / "run.json").string() + ": implementations");
  return results["scenario"].get<std::string>();
}

struct SimParams {
  Time max_time, warmup, watchdog;
  explicit SimParams(Config& c) {
    max_time = static_cast<Time>(c.real("sim.max_time_us", 100000, "us", 0.001, 1e9,
                                        "stop and fail a run that has not finished by then") * kUs);
    warmup = static_cast<Time>(c.real("sim.warmup_us", 0, "us", 0, 1e9,
                                      "stats are reset at this time; results count what follows") * kUs);
    watchdog = static_cast<Time>(c.real("sim.watchdog_us", 1000, "us", 0.001, 1e9,
                                        "fail the run if no data is delivered for this long (deadlock)") * kUs);
    if (warmup > 0 && warmup >= max_time)
      throw ConfigError(fmt::format("sim.warmup_us = {}: must be below sim.max_time_us = {}, or nothing is measured",
                                    to_us(warmup), to_us(max_time)));
  }
};

// What a run creates before it knows its input is good: the directories of --out and --pcap that
// were missing, and the --pcap file. A refused run (bad input, exit 2) removes them again, so it
// leaves nothing behind.
class Debris {
 public:
  // Remembers `path` and its missing parents, before they are created.
  void will_create(const std::filesystem::path& path) {
    std::error_code ec;
    std::vector<std::filesystem::path> missing;
    for (auto p = std::filesystem::absolute(path, ec); !p.empty() && !std::filesystem::exists(p, ec); p = p.parent_path())
      missing.push_back(p);
    made_.insert(made_.end(), missing.begin(), missing.end());  // deepest first
  }
  // Removes what was remembered, deepest first; a directory only if empty (remove() leaves others).
  void remove() const {
    std::error_code ec;
    for (const auto& p : made_) std::filesystem::remove(p, ec);
  }

 private:
  std::vector<std::filesystem::path> made_;
};

// --out names a directory to write: found unwritable before the run, not after it.
void check_writable_dir(const std::string& dir, Debris& debris) {
  std::error_code ec;
  debris.will_create(dir);
  std::filesystem::create_directories(dir, ec);
  const auto probe = std::filesystem::path(dir) / ".xysim-write-test";
  if (!ec) std::ofstream(probe).put('\n');
  if (ec || !std::filesystem::exists(probe, ec))
    throw ConfigError(fmt::format("--out '{}': cannot write there; give a directory that can be created and written", dir));
  std::filesystem::remove(probe, ec);
}

// --pcap on a scenario: at least one link must take the capture.
void check_capture(const Capture& capture, const std::string& scenario) {
  const auto& links = capture.links;
  if (!capture.writer || std::any_of(links.begin(), links.end(), [&](const auto& l) { return capture.takes(l); })) return;
  if (links.empty())
    throw ConfigError(fmt::format("--pcap: scenario {} has no link whose frames can be captured", scenario));
  constexpr std::size_t kNamed = 8;  // a fabric has hundreds of ports: the first few show the names
  const std::vector<std::string> named(links.begin(), links.begin() + std::min(links.size(), kNamed));
  throw ConfigError(fmt::format("--pcap-scope '{}' matches none of this scenario's links: {}{}", capture.scope,
                                fmt::join(named, ", "),
                                links.size() > kNamed ? fmt::format(", ... ({} in all)", links.size()) : ""));
}

// Every SC_THREAD's stack (thread_stack_bytes, check_thread_maps in tb/lib/memory.hpp) held
// against the maps and the memory after the build, before the start, where SystemC would stop
// with E518.
void check_threads(bool force_memory) {
  std::size_t threads = 0;
  std::vector<sc_core::sc_object*> todo = sc_core::sc_get_top_level_objects();
  while (!todo.empty()) {
    const sc_core::sc_object* o = todo.back();
    todo.pop_back();
    const std::string kind = o->kind();
    threads += kind == "sc_thread_process" || kind == "sc_cthread_process";
    todo.insert(todo.end(), o->get_child_objects().begin(), o->get_child_objects().end());
  }
  check_thread_maps(threads, fmt::format("this configuration has {} SystemC threads (GPUs, hosts, endpoints that "
                                         "wait in stacks of their own)",
                                         threads));
  check_memory(thread_stack_bytes(threads),
               fmt::format("{} SystemC threads (GPUs, hosts, endpoints), each with a stack of {} KiB,", threads,
                           sc_core::SC_DEFAULT_STACK_SIZE / 1024),
               force_memory);
}

// What a progress line adds after the rate: the ETA from the share of the scenario's traffic done,
// or once the traffic has ended, what the run waits for. sim.max_time_us is only a limit, which a
// run rarely nears: no ETA is made from it.
std::string progress_note(const Testbench& tb, const Testbench::Work& work, double wall_s) {
  if (const std::string waiting = tb.waiting_for(); !waiting.empty())
    return fmt::format(", traffic ended, waiting for {}", waiting);
  const double done = std::min(tb.done_fraction(), 1.0);
  if (done > 0)
    return fmt::format(", {:.1f} % of the traffic done, ETA {:.0f} s", 100 * done, wall_s * (1 - done) / done);
  if (done == 0) return ", 0 % of the traffic done, no ETA yet";
  if (work.at_least > sim_now())
    return fmt::format(", {:.1f} % of the least simulated time it needs ({}); no ETA", 100.0 * sim_now() / work.at_least,
                       work.because);
  return ", no ETA (this scenario does not tell how much traffic is left)";
}

void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
  if (!f) throw std::runtime_error(fmt::format("cannot write {}", path.string()));
}

}  // namespace

namespace {
RunResult simulate(const RunOptions& options, Debris& debris) {
  const auto wall_start = std::chrono::steady_clock::now();
  Config config;
  std::uint64_t seed = 1;
  std::string name = options.scenario.empty() ? kDefaultScenario : options.scenario;
  if (is_yaml(name)) {
    const std::string file = name;
    name = config.load_yaml_file(file, &seed);
    if (name.empty()) throw ConfigError(fmt::format("{}: missing 'scenario:' (one of {})", file, scenario_names()));
    scenario_or_throw(name, file + ": ");
  } else if (is_json(name)) {
    const std::string file = name;
    name = load_run(file, config, &seed);
    scenario_or_throw(name, file + ": ");
  }
  const Scenario& scenario = scenario_or_throw(name, "");
  for (const auto& s : options.sets) config.set_from_assignment(s);
  if (options.seed) seed = *options.seed;

  if (!options.out_dir.empty()) check_writable_dir(options.out_dir, debris);

  Stats stats;
  Waves waves(options.waves);
  std::unique_ptr<link::PcapWriter> pcap;
  if (!options.pcap.empty()) {
    try {
      debris.will_create(options.pcap);
      pcap = std::make_unique<link::PcapWriter>(options.pcap);
    } catch (const std::runtime_error&) {
      throw ConfigError(fmt::format("--pcap '{}': cannot open the file for writing", options.pcap));
    }
  }
  RunContext ctx{config, stats, waves, seed, Capture{pcap.get(), options.pcap_scope, {}}};
  ctx.force_memory = options.force_memory;
  const SimParams sim(config);
  ctx.watchdog = sim.watchdog;
  std::unique_ptr<Testbench> tb = scenario.build(ctx);
  config.check_all_used();
  check_capture(ctx.capture, name);
  check_threads(options.force_memory);
  const Testbench::Work work = tb->work();
  if (work.at_least > sim.max_time)
    throw ConfigError(fmt::format("{} needs at least {} of simulated time, beyond sim.max_time_us = {}: raise "
                                  "sim.max_time_us or ask for less",
                                  work.because, format_time(work.at_least), to_us(sim.max_time)));
  if (ctx.reach.one_way >= sim.watchdog && !tb->quiet_until())
    throw ConfigError(fmt::format("sim.watchdog_us = {}: a frame takes {} one way on {}, so the watchdog would fail the "
                                  "run before one could arrive; allowed: above {:.3f}",
                                  to_us(sim.watchdog), format_time(ctx.reach.one_way), ctx.reach.because,
                                  to_us(ctx.reach.one_way)));

  for (const std::string& w : ctx.warnings) std::cerr << "warning: " << w << "\n";
  waves.start();
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  const auto sim_start = std::chrono::steady_clock::now();  // ETAs count the simulation, not the building
  const Time slice = std::min<Time>(sim.watchdog / 4 + 1, 10 * kUs);
  bool warm = sim.warmup == 0;
  std::uint64_t last_progress = tb->progress();
  Time last_move = 0;
  std::string failure;
  auto last_print = std::chrono::steady_clock::now();
  while (!tb->done()) {
    const Time now = sim_now();
    if (now >= sim.max_time) {
      failure = fmt::format("not finished at sim.max_time_us = {}", to_us(sim.max_time));
      break;
    }
    if (!sc_core::sc_pending_activity()) {
      failure = fmt::format("deadlock at {}: nothing is scheduled but the testbench is not done", format_time(now));
      break;
    }
    Time step = std::min(slice, sim.max_time - now);
    if (!warm) step = std::min(step, sim.warmup - now);
    ClockDomain::set_run_ahead_limit(now + step);
    try {
      sc_core::sc_start(to_sc_time(step));
    } catch (const sc_core::sc_report& e) {  // a model invariant threw inside a process
      failure = e.get_msg();
      const std::string wrapped = "uncaught exception: ";
      if (failure.rfind(wrapped, 0) == 0) failure = failure.substr(wrapped.size());
      break;
    }
    if (!warm && sim_now() >= sim.warmup) {
      stats.reset();
      tb->end_warmup();
      warm = true;
    }
    if (std::string fault = tb->fault(); !fault.empty()) {
      failure = fault;
      break;
    }
    if (tb->progress() != last_progress) {
      last_progress = tb->progress();
      last_move = sim_now();
    } else if (sim_now() - std::min(sim_now(), std::max(last_move, tb->quiet_until().value_or(0))) >= sim.watchdog) {
      const std::string stall = tb->stall();
      failure = fmt::format("{}: no data delivered from {} to {} (sim.watchdog_us = {})",
                            stall.empty() ? "watchdog" : stall, format_time(last_move),
                            format_time(sim_now()), to_us(sim.watchdog));
      break;
    }
    const auto wall = std::chrono::steady_clock::now();
    if (!options.quiet && wall - last_print >= options.progress_every) {
      const double secs = std::chrono::duration<double>(wall - sim_start).count();
      const double rate = secs > 0 ? to_us(sim_now()) / secs : 0;
      std::cerr << fmt::format("[xysim] {}  sim {}  ({:.1f} sim-us per wall-s){}\n", name, format_time(sim_now()), rate,
                               progress_note(*tb, work, secs));
      last_print = wall;
    }
  }
  const Time end = sim_now();
  if (!warm && failure.empty())
    throw ConfigError(fmt::format("sim.warmup_us = {}: the run was over by {}, before its warm-up ended, so nothing "
                                  "was measured; allowed: a warm-up shorter than the run",
                                  to_us(sim.warmup), format_time(end)));
  waves.finish(end);
  if (pcap) pcap->close();
  if (failure.empty()) {
    try {
      tb->check();
    } catch (const CheckFailure& e) {
      failure = e.what();
    }
  }
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();

  RunResult r;
  r.results = {{"schema_version", kResultsSchemaVersion},
               {"scenario", name},
               {"seed", seed},
               {"xysim_version", kVersion},
               {"config", config.effective()},
               {"sim_time_ns", to_ns(end)},
               {"passed", failure.empty()},
               {"failure", failure},
               {"stats", stats.to_json()},
               {"summary", tb->summary()}};
  if (!ctx.fabrics.empty()) r.results["fabrics"] = ctx.fabrics;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  r.run = {{"schema_version", kResultsSchemaVersion},
           {"git_commit", git_commit()},
           {"host", host},
           {"wall_s", wall_s},
           {"sim_time_per_wall_s_us", wall_s > 0 ? to_us(end) / wall_s : 0.0},
           {"peak_rss_mib", usage.ru_maxrss / 1024.0},
           {"implementations", config.implementations()},
           {"waves", waves.path()},
           {"pcap_frames", pcap ? pcap->frames() : 0},
           {"gtkw", waves.enabled() ? waves.gtkw_path() : ""}};
  if (const nlohmann::json wall = tb->wall_clock(); !wall.is_null()) r.run["scenario_wall_clock"] = wall;
  r.report = fmt::format("xysim {} — scenario {}, seed {}, simulated {}\n{}{}", kVersion, name, seed,
                         format_time(end),
                         failure.empty() ? "" : "  the run FAILED: the figures below cover only what it did until then\n",
                         tb->report());
  r.failure = failure;
  if (!options.out_dir.empty()) {
    std::filesystem::create_directories(options.out_dir);
    tb->write_artifacts(options.out_dir);
  }
  return r;
}
}  // namespace

RunResult run_scenario(const RunOptions& options) {
  Debris debris;
  try {
    return simulate(options, debris);
  } catch (const ConfigError&) {  // bad input (exit 2): the outputs made for the run go again
    debris.remove();
    throw;
  } catch (const std::invalid_argument&) {
    debris.remove();
    throw;
  }
}

int run_command(const RunOptions& options) {
  RunResult r = run_scenario(options);
  std::cout << r.report;
  if (!options.out_dir.empty()) {
    const std::filesystem::path dir(options.out_dir);
    std::filesystem::create_directories(dir);
    write_file(dir / "results.json", r.results.dump(2) + "\n");
    write_file(dir / "run.json", r.run.dump(2) + "\n");
    std::cout << fmt::format("  results: {}\n", (dir / "results.json").string());
  }
  if (!options.waves.path.empty()) std::cout << fmt::format("  waves:   gtkwave {}\n", r.run["gtkw"].get<std::string>());
  if (!r.failure.empty()) {
    std::cerr << "FAILED: " << r.failure << "\n";
    return 1;
  }
  return 0;
}

namespace {
// A parameter as `xysim params --json` lists it: min and max numbers (null when not numeric),
// allowed a list of the values or words a choice, flag or text takes.
nlohmann::json param_json(const ParamInfo& p) {
  nlohmann::json j = {{"key", p.key},         {"type", p.type},       {"default", p.default_value},
                      {"unit", p.unit},       {"min", nullptr},       {"max", nullptr},
                      {"allowed", nullptr},   {"meaning", p.description},
                      {"implementation", p.implementation}};
  if (p.type == "int" || p.type == "real") {
    // The range is written as "[min, max]" (Config::integer, Config::real), which is JSON.
    const nlohmann::json range = nlohmann::json::parse(p.range, nullptr, false);
    if (range.is_array() && range.size() == 2) j["min"] = range[0], j["max"] = range[1];
  } else if (p.type == "bool") {
    j["allowed"] = {true, false};
  } else if (!p.range.empty()) {  // choice, text: alternatives joined by |
    std::vector<std::string> alternatives;
    for (std::size_t from = 0, bar = 0; bar != std::string::npos; from = bar + 1)
      alternatives.push_back(p.range.substr(from, (bar = p.range.find('|', from)) - from));
    j["allowed"] = alternatives;
  }
  return j;
}

// A glob on the key (fnmatch); a pattern without * ? [ matches every key that contains it.
bool key_matches(const std::string& key, const std::string& pattern) {
  if (pattern.find_first_of("*?[") == std::string::npos) return key.find(pattern) != std::string::npos;
  return fnmatch(pattern.c_str(), key.c_str(), 0) == 0;
}
}  // namespace

void build_unrun(const std::string& name, Config& config) {
  const Scenario& scenario = scenario_or_throw(name, "");
  Stats stats;
  Waves waves;
  RunContext ctx{config, stats, waves, 1, Capture{}};
  const SimParams sim(config);
  scenario.build(ctx);
}

int params_command(const ParamsOptions& options) {
  const std::string name = options.scenario.empty() ? kDefaultScenario : options.scenario;
  Config config;
  for (const auto& assignment : options.sets) config.set_from_assignment(assignment);
  build_unrun(name, config);
  config.check_all_used();  // a --set that names no parameter of this variant
  std::vector<const ParamInfo*> chosen;
  for (const auto& p : config.params())  // a key the scenario sets itself is not the user's
    if (p.fixed_by.empty() && (options.filter.empty() || key_matches(p.key, options.filter))) chosen.push_back(&p);
  if (chosen.empty())
    throw ConfigError(fmt::format("params {} '{}': matches no parameter of {}; give a part of a key or a glob, e.g. "
                                  "'traffic.*'",
                                  name, options.filter, name));
  if (options.json) {
    nlohmann::json list = nlohmann::json::array();
    for (const ParamInfo* p : chosen) list.push_back(param_json(*p));
    std::cout << list.dump(2) << "\n";
    return 0;
  }
  // Columns as wide as their widest cell (a string default, a unit of two words).
  std::vector<std::array<std::string, 5>> rows{{"parameter", "default", "unit", "allowed", "description"}};
  for (const ParamInfo* p : chosen) rows.push_back({p->key, p->default_value.dump(), p->unit, p->range, p->description});
  std::array<std::size_t, 4> width{};
  for (const auto& r : rows)
    for (std::size_t c = 0; c < width.size(); ++c) width[c] = std::max(width[c], r[c].size());
  for (const auto& r : rows)
    std::cout << fmt::format("{:<{}} {:<{}} {:<{}} {:<{}} {}\n", r[0], width[0], r[1], width[1], r[2], width[2], r[3],
                             width[3], r[4]);
  return 0;
}

}  // namespace xy
