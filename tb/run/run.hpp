// `xysim run`: builds a scenario, runs it to completion under a watchdog, checks it and
// writes its results.
#pragma once
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernel/waves.hpp"

namespace xy {

struct RunOptions {
  std::string scenario;              // a scenario's name (scenarios()) or a .yaml file
  std::vector<std::string> sets;     // key=value
  std::optional<std::uint64_t> seed;
  std::string out_dir;               // "" = write nothing
  WavesOptions waves;
  std::string pcap, pcap_scope;      // capture frames crossing the links under the scope
  bool quiet = false;
  bool force_memory = false;         // build a configuration estimated above the machine's memory
  std::chrono::milliseconds progress_every{1000};  // between progress lines on stderr
};

struct RunResult {
  nlohmann::json results;  // deterministic: same seed, same bytes
  nlohmann::json run;      // host, wall time, rate
  std::string report;      // for people
  std::string failure;     // "" when every check passed
};

// Throws ConfigError for bad input; a failed check is reported in RunResult::failure.
RunResult run_scenario(const RunOptions& options);
// The CLI's view: prints, writes --out, returns the exit status (0 ok, 1 check failed, 2 bad input).
int run_command(const RunOptions& options);
class Config;
// Builds `scenario` with `config` as a run would, without running it, so that `config` holds every
// parameter of that variant; ConfigError for a value it refuses. (`params`; a sweep checks its keys.)
void build_unrun(const std::string& scenario, Config& config);
// `xysim params [SCENARIO] [FILTER] [--json]`.
struct ParamsOptions {
  std::string scenario;  // "" = the default scenario
  std::string filter;    // a glob on the key, or a part of it; "" = every parameter
  bool json = false;
  std::vector<std::string> sets;  // key=value: the parameters of that variant (topology=leaf-spine, say)
};
int params_command(const ParamsOptions& options);

}  // namespace xy
