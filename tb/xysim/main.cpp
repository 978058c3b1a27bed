// xysim: the Xingyun driver (tb/xysim/xysim.hpp). Exit status: 0 ok, 1 a check failed, 2 bad input.
//
// The subcommands are a table (kCommands, and bench's own, kBenchCommands): each entry is a
// subcommand's name, its description, and a function that declares its options on its CLI11
// subcommand and returns its handler, which holds the options' values (shared with the CLI11
// options that write them) and runs the command. xysim_main builds the application from the
// table, parses, and runs the handler of the subcommand given. A new subcommand is one entry.
#include "tb/xysim/xysim.hpp"

#include <cmath>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <memory>
#include <new>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <systemc>

#include "tb/bench/fec_bench.hpp"
#include "tb/bench/kernel_bench.hpp"
#include "tb/bench/lingyun_bench.hpp"
#include "tb/bench/nic_bench.hpp"
#include "tb/bench/link_bench.hpp"
#include "tb/bench/otn_bench.hpp"
#include "tb/bench/switch_bench.hpp"
#include "tb/export/command.hpp"
#include "tb/lib/scenario.hpp"
#include "tb/xysim/claims.hpp"
#include "tb/run/results.hpp"
#include "tb/run/run.hpp"
#include "tb/xysim/sweep.hpp"
#include "kernel/version.hpp"

namespace {
using namespace xy;

// SystemC prints its banner on stderr before sc_main unless told not to; told here, before main
// runs, so that an error stays one line in xysim and in any program built on xysim_main.
const bool kNoSystemCBanner = setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 0) == 0;

// An error is one line, whatever the value it quotes: line breaks in it are shown as \n.
std::string one_line(std::string text) {
  for (std::size_t at = 0; (at = text.find_first_of("\r\n", at)) != std::string::npos; at += 2)
    text.replace(at, 1, text[at] == '\n' ? "\\n" : "\\r");
  return text;
}

// CLI::Range lets NaN through (every comparison with it is false): real options check this too.
const CLI::Validator kNumber(
    [](std::string& text) -> std::string {
      const double v = std::strtod(text.c_str(), nullptr);
      return std::isfinite(v) ? "" : "must be a finite number, not " + text;
    },
    "NUMBER");

// What a subcommand runs once the command line is parsed: its exit status. It throws ConfigError
// or std::invalid_argument for bad input (exit 2), any other exception for a failure (exit 1).
using Handler = std::function<int()>;

// A subcommand: its name and description (as --help shows them), and `declare`, which adds its
// options (or subcommands of its own) to `cmd` and returns its handler. `self` is argv[0], for
// commands that run the program again (sweep, claims, the benchmarks).
struct Subcommand {
  const char* name;
  const char* description;
  Handler (*declare)(CLI::App& cmd, const char* self);
};

// Adds the subcommands of `table` to `app`, in its order; returns the handler of the one parsed
// (0 when none was).
Handler add_subcommands(CLI::App& app, const std::vector<Subcommand>& table, const char* self) {
  std::vector<std::pair<CLI::App*, Handler>> commands;
  for (const Subcommand& s : table) {
    CLI::App* cmd = app.add_subcommand(s.name, s.description);
    commands.emplace_back(cmd, s.declare(*cmd, self));
  }
  return [commands] {
    for (const auto& [cmd, handler] : commands)
      if (cmd->parsed()) return handler();
    return 0;
  };
}

const std::vector<Subcommand> kBenchCommands = {
    {"kernel", "ClockDomain vs one SC_METHOD per block, one ticking all, a plain loop",
     [](CLI::App& cmd, const char* self) -> Handler {
       auto o = std::make_shared<KernelBenchOptions>();
       cmd.add_option("--repeats", o->repeats, "runs per configuration (median is reported)")->check(CLI::Range(1, 15));
       cmd.add_option("--scale", o->scale, "multiply the simulated cycles")->check(CLI::Range(0.01, 100.0) & kNumber);
       return [o, self] { return kernel_bench(self, *o); };
     }},
    {"kernel-one", "one configuration (used by 'bench kernel')",
     [](CLI::App& cmd, const char*) -> Handler {
       auto o = std::make_shared<KernelBenchOptions>();
       cmd.group("");  // internal
       cmd.add_option("--style", o->style)->required()->check(CLI::IsMember({"domain", "method", "method-gated", "tick-all", "plain"}));
       cmd.add_option("--blocks", o->blocks)->required()->check(CLI::Range(1, 100000));
       cmd.add_option("--activity", o->activity_percent)->required()->check(CLI::IsMember({1, 10, 100}));
       cmd.add_option("--cycles", o->cycles)->required()->check(CLI::Range(1, 1000000000));
       return [o] { return kernel_bench_one(*o); };
     }},
    {"fec", "RS codec Gb/s per core; fast vs exact codec in phy-loopback",
     [](CLI::App& cmd, const char* self) -> Handler {
       struct Fec {
         double seconds = 0.3, ber = 1e-6;
         int repeats = KernelBenchOptions{}.repeats;
       };
       auto o = std::make_shared<Fec>();
       cmd.add_option("--seconds", o->seconds, "time per codec measurement")->check(CLI::Range(0.01, 60.0) & kNumber);
       cmd.add_option("--ber", o->ber, "pre-FEC BER of the fast/exact comparison")->check(CLI::Range(0.0, 0.01) & kNumber);
       cmd.add_option("--repeats", o->repeats, "runs of each codec (median is reported)")->check(CLI::Range(1, 15));
       return [o, self] {
         const int rc = fec_bench(o->seconds);
         return rc ? rc : fec_mode_bench(self, o->ber, o->repeats);
       };
     }},
    {"link", "one 800G link with LLR at full load: cycles/s, frames/s, memory",
     [](CLI::App& cmd, const char*) -> Handler {
       struct Link {
         std::uint64_t frames = 200000;
         double error = 1e-4;
       };
       auto o = std::make_shared<Link>();
       cmd.add_option("--frames", o->frames, "frames each way")->check(CLI::Range(1, 1000000000));
       cmd.add_option("--frame-error", o->error, "chance a frame is corrupted")->check(CLI::Range(0.0, 0.5) & kNumber);
       return [o] { return link_bench(o->frames, o->error); };
     }},
    {"switch", "one switch over port counts x offered loads: cycles/s, packets/s, memory, cost against ports",
     [](CLI::App& cmd, const char* self) -> Handler {
       auto o = std::make_shared<SwitchBenchOptions>();
       cmd.add_option("--cycles", o->cycles, "cycles of traffic")->check(CLI::Range(1000, 1000000000));
       cmd.add_option("--ports", o->ports, "port counts, e.g. 16,64 (default 16,32,64,128)")
           ->delimiter(',')
           ->check(CLI::Range(2, 512));
       cmd.add_option("--loads", o->loads, "offered loads, e.g. 0.5,0.9 (default 0.1,0.5,0.9)")
           ->delimiter(',')
           ->check(CLI::Range(0.01, 1.0) & kNumber);
       cmd.add_option("--repeats", o->repeats, "runs per point (median is reported)")->check(CLI::Range(1, 15));
       return [o, self] { return switch_bench(self, *o); };
     }},
    {"lingyun", "the 64-port Lingyun ASIC with every port composed vs the bare switch core, and a leaf-spine: cycles/s",
     [](CLI::App& cmd, const char* self) -> Handler {
       auto o = std::make_shared<LingyunBenchOptions>();
       cmd.add_option("--us", o->us, "simulated time measured per rig")->check(CLI::Range(0.01, 10000.0) & kNumber);
       cmd.add_option("--warmup-us", o->warmup_us, "simulated time before it, not timed")
           ->check(CLI::Range(0.0, 10000.0) & kNumber);
       cmd.add_option("--repeats", o->repeats, "rounds of the three rigs, run back to back (medians are reported)")
           ->check(CLI::Range(1, 15));
       return [o, self] { return lingyun_bench(self, *o); };
     }},
    {"nic", "the NIC engine on composed ports: nic-incast's five designs timed, cycles/s and simulated Gb/s per wall second",
     [](CLI::App& cmd, const char* self) -> Handler {
       auto o = std::make_shared<NicBenchOptions>();
       cmd.add_option("--senders", o->senders, "senders into the one receiver")->check(CLI::Range(1, 1023));
       cmd.add_option("--message-kib", o->message_kib, "each sender's WRITE")->check(CLI::Range(1, 16384));
       cmd.add_option("--htsim", o->htsim,
                      "uet-htsim's htsim_roce binary (built with its topology-file fix, docs/nic.md): the same incast "
                      "timed beside ours")
           ->check(CLI::ExistingFile);
       return [o, self] { return nic_bench(self, *o); };
     }},
    {"otn", "the OTU4 path as cores (GMP, framer, GFEC, deframer): frames/s and client Gb/s, clean and at a BER",
     [](CLI::App& cmd, const char*) -> Handler {
       struct Otn {
         std::uint64_t frames = 2000;
         double ber = 1e-4;
       };
       auto o = std::make_shared<Otn>();
       cmd.add_option("--frames", o->frames, "OTU4 frames through the path")->check(CLI::Range(1, 1000000));
       cmd.add_option("--ber", o->ber, "pre-FEC bit error ratio of the second row")
           ->check(CLI::Range(0.0, 0.01) & kNumber);
       return [o] { return otn_bench(o->frames, o->ber); };
     }},
    {"lingyun-one", "one rig (used by 'bench lingyun')",
     [](CLI::App& cmd, const char*) -> Handler {
       auto o = std::make_shared<LingyunBenchOptions>();
       cmd.group("");  // internal
       cmd.add_option("--rig", o->rig)->required()->check(CLI::IsMember({"bare", "composed", "leaf-spine"}));
       cmd.add_option("--us", o->us)->required()->check(CLI::Range(0.01, 10000.0) & kNumber);
       cmd.add_option("--warmup-us", o->warmup_us)->required()->check(CLI::Range(0.0, 10000.0) & kNumber);
       return [o] { return lingyun_bench_one(*o); };
     }},
};

const std::vector<Subcommand> kCommands = {
    {"run", "run a scenario (its name or a YAML file) and report",
     [](CLI::App& cmd, const char*) -> Handler {
       struct Run {
         RunOptions run;
         std::string seed, window;
         CLI::Option* seed_given = nullptr;
         double progress_every_s = 1;
       };
       auto o = std::make_shared<Run>();
       RunOptions& run = o->run;
       cmd.add_option("scenario", run.scenario,
                      std::string("scenario name or FILE.yaml (default: ") + kDefaultScenario + ")");
       cmd.add_option("--set", run.sets, "override a parameter: key=value (repeatable)")->take_all();
       o->seed_given = cmd.add_option("--seed", o->seed, "seed of every random stream (default 1)");
       cmd.add_option("--out", run.out_dir, "write DIR/results.json and DIR/run.json");
       cmd.add_option("--waves", run.waves.path, "dump waveforms to FILE.vcd or FILE.fst (+ FILE.gtkw)");
       cmd.add_option("--waves-scope", run.waves.scope, "only signals under this name, e.g. top.link.sink");
       cmd.add_option("--waves-window", o->window, "only this time window, e.g. 10us:12us");
       cmd.add_option("--pcap", run.pcap, "write the frames crossing the links to FILE.pcap (Wireshark, tshark)");
       cmd.add_option("--pcap-scope", run.pcap_scope, "only links whose name starts with this, e.g. top.a");
       cmd.add_flag("--quiet", run.quiet, "no progress on stderr");
       cmd.add_flag("--force-memory", run.force_memory,
                    "build a configuration whose estimated memory exceeds this machine's (refused otherwise)");
       cmd.add_option("--progress-every", o->progress_every_s, "seconds between progress lines (default 1; 0: every step)")
           ->check(CLI::Range(0.0, 3600.0) & kNumber);
       return [o] {
         RunOptions& run = o->run;
         const std::string& window = o->window;
         if (*o->seed_given) run.seed = parse_seed(o->seed, "--seed");
         run.progress_every = std::chrono::milliseconds(static_cast<std::int64_t>(o->progress_every_s * 1000));
         if (run.waves.path.empty() && (!window.empty() || !run.waves.scope.empty()))
           throw ConfigError(fmt::format("{} without --waves: give --waves FILE.fst (or .vcd) too",
                                         window.empty() ? "--waves-scope" : "--waves-window"));
         if (run.pcap.empty() && !run.pcap_scope.empty())
           throw ConfigError("--pcap-scope without --pcap: give --pcap FILE.pcap too");
         if (!window.empty()) {
           try {
             WavesOptions::parse_window(window, &run.waves.window_begin, &run.waves.window_end);
           } catch (const std::invalid_argument& e) {
             throw ConfigError(std::string("--waves-window: ") + e.what());
           }
         }
         return run_command(run);
       };
     }},
    {"sweep", "run a scenario over a grid of parameters and seeds, merged into a CSV",
     [](CLI::App& cmd, const char* self) -> Handler {
       auto o = std::make_shared<SweepOptions>();
       cmd.add_option("file", o->file, "SWEEP.yaml: scenario, seeds, set, grid, points")->required();
       cmd.add_option("--out", o->out_dir, "where the points and sweep.csv / sweep.json go (default: sweep)");
       cmd.add_option("-j,--jobs", o->jobs, "points run at once (default: every core; with slurm, no limit)")
           ->check(CLI::Range(1, 1024));
       cmd.add_option("--backend", o->backend,
                      "local: run here; print: print each point's command; slurm: one Slurm job array")
           ->check(CLI::IsMember({"local", "print", "slurm"}));
       cmd.add_flag("--force-memory", o->force_memory,
                    "go on when the sweep's points, or a point's run, are estimated to need more memory than this machine has");
       cmd.add_option("--point", o->point)->group("")->check(CLI::Range(0, 1 << 30));  // a Slurm array task
       return [o, self] { return sweep_command(self, *o); };
     }},
    {"compare", "the summary leaves and parameters that differ between two runs",
     [](CLI::App& cmd, const char*) -> Handler {
       struct Compare {
         std::string a, b;
         double tolerance = 0;
       };
       auto o = std::make_shared<Compare>();
       cmd.add_option("a", o->a, "results.json or a run's --out directory")->required();
       cmd.add_option("b", o->b, "the same, compared with a")->required();
       cmd.add_option("--tolerance", o->tolerance, "relative difference of a number taken as equal (e.g. 0.01)")
           ->check(CLI::Range(0.0, 1e9) & kNumber);
       return [o] { return compare_command(o->a, o->b, o->tolerance); };
     }},
    {"export", "measured figures in the input formats of other simulators",
     [](CLI::App& cmd, const char*) -> Handler {
       auto o = std::make_shared<exports::ExportOptions>();
       cmd.add_option("format", o->format, "one of " + exports::format_names());
       cmd.add_option("results", o->inputs, "results.json, a run's --out directory, a sweep's directory or its sweep.json");
       cmd.add_option("--out", o->out_dir, "where the files go (default: here)");
       cmd.add_flag("--list", o->list, "list the formats");
       return [o] { return exports::export_command(*o); };
     }},
    {"claims", "run what measures each seed claim (SPEC C1-C13): measured, verdict, command",
     [](CLI::App& cmd, const char* self) -> Handler {
       auto o = std::make_shared<ClaimsOptions>();
       cmd.add_option("--out", o->out_dir, "write DIR/claims.md, DIR/claims.json and every run's results under DIR/runs");
       cmd.add_option("-j,--jobs", o->jobs, "runs at once (default: every core)")->check(CLI::Range(1, 1024));
       cmd.add_option("--only", o->only, "only these claims, e.g. C1,C12")->delimiter(',');
       return [o, self] { return claims_command(self, *o); };
     }},
    {"scenarios", "list the scenarios",
     [](CLI::App&, const char*) -> Handler {
       return [] {
         for (const auto& s : scenarios()) std::cout << s.name << "  " << s.description << "\n";
         return 0;
       };
     }},
    {"params", "list every parameter of a scenario",
     [](CLI::App& cmd, const char*) -> Handler {
       auto o = std::make_shared<ParamsOptions>();
       cmd.add_option("scenario", o->scenario, std::string("scenario name (default: ") + kDefaultScenario + ")");
       cmd.add_option("filter", o->filter, "only keys matching this glob, e.g. 'llr.*', or containing this text");
       cmd.add_flag("--json", o->json, "a JSON list: key, type, default, unit, min, max, allowed, meaning");
       cmd.add_option("--set", o->sets, "key=value: list the parameters of that variant, e.g. topology=leaf-spine")
           ->allow_extra_args(false);  // one value a --set: the filter stays positional
       return [o] { return params_command(*o); };
     }},
    {"bench", "benchmarks",
     [](CLI::App& cmd, const char* self) -> Handler {
       Handler run = add_subcommands(cmd, kBenchCommands, self);
       cmd.require_subcommand(1);
       return run;
     }},
};

}  // namespace

int xy::xysim_main(int argc, char** argv) {
  sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);

  CLI::App app{"xysim — cycle-accurate models of the Xingyun AI-cluster interconnect"};
  app.set_version_flag("--version", std::string("xysim ") + kVersion + " (SystemC " + sc_core::sc_release() + ")");
  app.require_subcommand(1);
  app.failure_message([](const CLI::App*, const CLI::Error& e) { return "error: " + std::string(e.what()) + " (see --help)\n"; });
  const Handler run = add_subcommands(app, kCommands, argv[0]);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }

  try {
    return run();
  } catch (const ConfigError& e) {
    std::cerr << "error: " << one_line(e.what()) << "\n";
    return 2;
  } catch (const std::invalid_argument& e) {  // e.g. a --waves file with an unknown extension
    std::cerr << "error: " << one_line(e.what()) << "\n";
    return 2;
  } catch (const std::bad_alloc&) {
    // What the memory estimates (tb/lib/memory.hpp) did not foresee: the input asked for more than
    // this process could have, as when an estimate refuses it, so the same status (2, input that
    // cannot be used here), not 1 (a check of the model failed).
    std::cerr << "error: out of memory (std::bad_alloc) while building or running: this configuration needs more "
                 "memory than this process can have; ask for less (smaller counts or sizes)\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "error: " << one_line(e.what()) << "\n";
    return 1;
  }
}
