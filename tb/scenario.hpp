// Scenarios: the named testbenches that `xysim run` builds, runs and reports.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hw/link/pcap.hpp"
#include "xingyun/config.hpp"
#include "xingyun/rng.hpp"
#include "xingyun/stats.hpp"
#include "xingyun/waves.hpp"

namespace xy {

// A checker found the model breaking a promise (a lost packet, a wrong latency...).
struct CheckFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Where a scenario may write the frames that cross its links (--pcap FILE --pcap-scope NAME).
struct Capture {
  link::PcapWriter* writer = nullptr;  // null: no capture
  std::string scope;                   // only links whose name starts with this
  link::PcapWriter* for_link(const std::string& name) const {
    return writer && name.rfind(scope, 0) == 0 ? writer : nullptr;
  }
};

struct RunContext {
  Config& config;
  Stats& stats;
  Waves& waves;
  std::uint64_t seed;
  Capture capture;
  Rng rng(const std::string& block) const { return Rng(seed, block); }
};

class Testbench {
 public:
  virtual ~Testbench() = default;
  virtual bool done() const = 0;
  // Grows while the run makes progress; the watchdog fails a run where it stops growing.
  virtual std::uint64_t progress() const = 0;
  virtual void end_warmup() {}
  // End-of-run scoreboard checks; throws CheckFailure.
  virtual void check() const = 0;
  virtual nlohmann::json summary() const = 0;  // headline figures, units in key names
  virtual std::string report() const = 0;       // the same for people, a few table lines
  // Extra files beside results.json (CSV curves and the like), when the run has --out.
  virtual void write_artifacts(const std::string& dir) const {}
};

struct Scenario {
  std::string name, description;
  std::function<std::unique_ptr<Testbench>(RunContext&)> build;
};

const std::vector<Scenario>& scenarios();
const Scenario* find_scenario(const std::string& name);
inline const char* kDefaultScenario = "olink-alltoall";  // 8 GPUs on one Lingyun switch

}  // namespace xy
