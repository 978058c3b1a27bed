// Scenarios: the named testbenches that `xysim run` builds, runs and reports.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hw/link/pcap.hpp"
#include "kernel/config.hpp"
#include "kernel/rng.hpp"
#include "kernel/stats.hpp"
#include "kernel/waves.hpp"

namespace xy {

// A checker found the model breaking a promise (a lost packet, a wrong latency...).
struct CheckFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Where a scenario may write the frames that cross its links (--pcap FILE --pcap-scope NAME).
struct Capture {
  link::PcapWriter* writer = nullptr;  // null: no capture
  std::string scope;                   // only links whose name starts with this
  std::vector<std::string> links;      // every link offered, so a scope matching none is refused
  bool takes(const std::string& link) const { return link.rfind(scope, 0) == 0; }
  link::PcapWriter* for_link(const std::string& name) {
    links.push_back(name);
    return writer && takes(name) ? writer : nullptr;
  }
};

struct RunContext {
  Config& config;
  Stats& stats;
  Waves& waves;
  std::uint64_t seed;
  Capture capture;
  // The fabrics of composed Lingyun ports the scenario built, each its lingyun::Fabric's
  // description(), in the order built: results.json's `fabrics`, which the exporters read.
  nlohmann::json fabrics = nlohmann::json::array();
  Rng rng(const std::string& block) const { return Rng(seed, block); }
  bool force_memory = false;  // --force-memory: build what check_memory (tb/lib/memory.hpp) refuses
  // sim.watchdog_us: a scenario that reports a part's stall as an outcome (not the run's failure)
  // must see it before the watchdog does.
  Time watchdog = 0;
  // The longest a frame takes one way on any link built (PHY pipelines and cable), and what sets
  // it: a run's watchdog must be longer, or it fires before the first frame could arrive.
  struct Reach {
    Time one_way = 0;
    std::string because;
  };
  Reach reach;
  void reach_at_least(Time one_way, std::string because) {
    if (one_way > reach.one_way) reach = {one_way, std::move(because)};
  }
  // Said on stderr once every check before the simulation has passed: bad input gets one error
  // line, not a warning before it.
  std::vector<std::string> warnings;
};

class Testbench {
 public:
  virtual ~Testbench() = default;
  virtual bool done() const = 0;
  // Data delivered so far (frames, bytes, transactions): the watchdog fails a run where it stops
  // growing. Control traffic (credit updates, ACKs, pauses) is not progress.
  virtual std::uint64_t progress() const = 0;
  // When the watchdog fires: what holds the run up, naming the port and VC (a credit deadlock,
  // a pause that never ends), or "" when the testbench cannot tell.
  virtual std::string stall() const { return ""; }
  // A fault the run cannot get past (a link that can never come up), naming where and why: the
  // run loop asks after every slice and ends the run with it as its failure; "" while fine.
  virtual std::string fault() const { return ""; }
  // The least simulated time the run can take (its traffic back to back at line rate) and what
  // sets it, e.g. "traffic.frames = 1000 at 800 Gb/s"; none when unknown. A run that cannot end
  // within sim.max_time_us is refused before it starts; progress lines show the share done.
  struct Work {
    Time at_least = 0;
    std::string because;
  };
  virtual Work work() const { return {}; }
  // The share of the scenario's traffic done, in [0, 1] (packets received of those asked for...),
  // from which progress lines give an ETA; negative when the testbench cannot tell.
  virtual double done_fraction() const { return -1; }
  // Once every piece of traffic has been offered (or received): what the run still waits for
  // ("the last 3 of 1000 packets", "replays in flight"); "" while traffic is still being offered.
  virtual std::string waiting_for() const { return ""; }
  // A testbench whose traffic pauses by design (a compute phase, data in flight over a line
  // longer than sim.watchdog_us) says until when it waits: the watchdog counts from then, not
  // from the last data delivered, and a line longer than the watchdog is no reason to refuse the
  // run. Asked after every slice; nothing (the default): it never pauses.
  virtual std::optional<Time> quiet_until() const { return std::nullopt; }
  virtual void end_warmup() {}
  // End-of-run scoreboard checks; throws CheckFailure.
  virtual void check() const = 0;
  virtual nlohmann::json summary() const = 0;  // headline figures, units in key names
  // Figures of wall time (a model's speed), which no seed reproduces: they go to run.json.
  virtual nlohmann::json wall_clock() const { return nullptr; }
  virtual std::string report() const = 0;       // the same for people, a few table lines
  // Extra files beside results.json (CSV curves and the like), when the run has --out.
  virtual void write_artifacts(const std::string& dir) const {}
};

struct Scenario {
  std::string name, description;
  std::function<std::unique_ptr<Testbench>(RunContext&)> build;
};

// Every scenario, in the order `xysim scenarios` lists them: those registered by XY_SCENARIO (the
// built-in ones) by their order key, then those added by register_scenario, in the order of the
// calls.
const std::vector<Scenario>& scenarios();
const Scenario* find_scenario(const std::string& name);
// Adds a scenario of a program of one's own to the list that xysim_main (tb/xysim/xysim.hpp)
// runs, lists and sweeps; call it before xysim_main. Throws std::invalid_argument for a name
// already taken or a scenario without a name or a build function.
void register_scenario(Scenario scenario);

// A scenario registers itself in the file that defines it, so that adding one is one new file
// under tb/scenarios/ (and its line in tests/golden/runs.txt); nothing else lists it:
//
//   XY_SCENARIO(link_basic_scenario, 100) {
//     return {"link-basic", "one channel, a generator and a sink...",
//             [](RunContext& ctx) { return std::make_unique<LinkBasic>(ctx); }};
//   }
//
// The number places it in the listing, whatever order the files are linked or initialised in
// (equal numbers by name): the families bottom-up, 100 link-basic (the first testbench), 200s
// phy, 300s link, 400s switch, 500s olink, 600s lingyun; a new scenario takes a free number in its
// family. XY_SCENARIO registers from a static object, at start-up: a static library drops objects
// nothing refers to, so the scenarios' library is linked whole (tb/CMakeLists.txt). A name taken
// twice stops the program at start-up (std::invalid_argument, as register_scenario).
struct RegisterScenario {
  RegisterScenario(int order, Scenario (*make)());
};
#define XY_SCENARIO(factory, order)                                              \
  static ::xy::Scenario factory();                                               \
  static const ::xy::RegisterScenario factory##_registration{(order), factory};  \
  static ::xy::Scenario factory()
// The usual case, a scenario that is one Testbench built from its RunContext:
//   XY_TESTBENCH(LinkBasic, 100, "link-basic", "one channel, a generator and a sink...");
#define XY_TESTBENCH(Class, order, name, description)                                                  \
  XY_SCENARIO(Class##_scenario, order) {                                                               \
    return {name, description, [](::xy::RunContext& ctx) { return std::make_unique<Class>(ctx); }}; \
  }
inline const char* kDefaultScenario = "olink-alltoall";  // 8 GPUs on one Lingyun switch

}  // namespace xy
