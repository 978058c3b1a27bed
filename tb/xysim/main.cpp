// xysim: the Xingyun driver (tb/xysim/xysim.hpp). Exit status: 0 ok, 1 a check failed, 2 bad input.
#include "tb/xysim/xysim.hpp"

#include <cmath>
#include <cstdlib>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <systemc>

#include "tb/bench/fec_bench.hpp"
#include "tb/bench/kernel_bench.hpp"
#include "tb/bench/lingyun_bench.hpp"
#include "tb/bench/link_bench.hpp"
#include "tb/bench/switch_bench.hpp"
#include "tb/export/command.hpp"
#include "tb/lib/scenario.hpp"
#include "tb/xysim/claims.hpp"
#include "tb/run/results.hpp"
#include "tb/run/run.hpp"
#include "tb/xysim/sweep.hpp"
#include "kernel/version.hpp"

namespace {
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
}  // namespace

int xy::xysim_main(int argc, char** argv) {
  using namespace xy;
  sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);

  CLI::App app{"xysim — cycle-accurate models of the Xingyun AI-cluster interconnect"};
  app.set_version_flag("--version", std::string("xysim ") + kVersion + " (SystemC " + sc_core::sc_release() + ")");
  app.require_subcommand(1);
  app.failure_message([](const CLI::App*, const CLI::Error& e) { return "error: " + std::string(e.what()) + " (see --help)\n"; });

  RunOptions run;
  std::string seed, window;
  auto* run_cmd = app.add_subcommand("run", "run a scenario (its name or a YAML file) and report");
  run_cmd->add_option("scenario", run.scenario,
                      std::string("scenario name or FILE.yaml (default: ") + kDefaultScenario + ")");
  run_cmd->add_option("--set", run.sets, "override a parameter: key=value (repeatable)")->take_all();
  auto* seed_opt = run_cmd->add_option("--seed", seed, "seed of every random stream (default 1)");
  run_cmd->add_option("--out", run.out_dir, "write DIR/results.json and DIR/run.json");
  run_cmd->add_option("--waves", run.waves.path, "dump waveforms to FILE.vcd or FILE.fst (+ FILE.gtkw)");
  run_cmd->add_option("--waves-scope", run.waves.scope, "only signals under this name, e.g. top.link.sink");
  run_cmd->add_option("--waves-window", window, "only this time window, e.g. 10us:12us");
  run_cmd->add_option("--pcap", run.pcap, "write the frames crossing the links to FILE.pcap (Wireshark, tshark)");
  run_cmd->add_option("--pcap-scope", run.pcap_scope, "only links whose name starts with this, e.g. top.a");
  run_cmd->add_flag("--quiet", run.quiet, "no progress on stderr");
  double progress_every_s = 1;
  run_cmd->add_option("--progress-every", progress_every_s, "seconds between progress lines (default 1; 0: every step)")
      ->check(CLI::Range(0.0, 3600.0) & kNumber);

  SweepOptions sweep;
  auto* sweep_cmd = app.add_subcommand("sweep", "run a scenario over a grid of parameters and seeds, merged into a CSV");
  sweep_cmd->add_option("file", sweep.file, "SWEEP.yaml: scenario, seeds, set, grid, points")->required();
  sweep_cmd->add_option("--out", sweep.out_dir, "where the points and sweep.csv / sweep.json go (default: sweep)");
  sweep_cmd->add_option("-j,--jobs", sweep.jobs, "points run at once (default: every core; with slurm, no limit)")
      ->check(CLI::Range(1, 1024));
  sweep_cmd->add_option("--backend", sweep.backend,
                        "local: run here; print: print each point's command; slurm: one Slurm job array")
      ->check(CLI::IsMember({"local", "print", "slurm"}));
  sweep_cmd->add_option("--point", sweep.point)->group("")->check(CLI::Range(0, 1 << 30));  // a Slurm array task

  std::string compare_a, compare_b;
  double compare_tolerance = 0;
  auto* compare_cmd = app.add_subcommand("compare", "the summary leaves and parameters that differ between two runs");
  compare_cmd->add_option("a", compare_a, "results.json or a run's --out directory")->required();
  compare_cmd->add_option("b", compare_b, "the same, compared with a")->required();
  compare_cmd->add_option("--tolerance", compare_tolerance, "relative difference of a number taken as equal (e.g. 0.01)")
      ->check(CLI::Range(0.0, 1e9) & kNumber);

  exports::ExportOptions exp;
  auto* export_cmd = app.add_subcommand("export", "measured figures in the input formats of other simulators");
  export_cmd->add_option("format", exp.format, "one of " + exports::format_names());
  export_cmd->add_option("results", exp.inputs, "results.json, a run's --out directory, a sweep's directory or its sweep.json");
  export_cmd->add_option("--out", exp.out_dir, "where the files go (default: here)");
  export_cmd->add_flag("--list", exp.list, "list the formats");

  ClaimsOptions claims;
  auto* claims_cmd = app.add_subcommand("claims", "run what measures each seed claim (SPEC C1-C13): measured, verdict, command");
  claims_cmd->add_option("--out", claims.out_dir, "write DIR/claims.md, DIR/claims.json and every run's results under DIR/runs");
  claims_cmd->add_option("-j,--jobs", claims.jobs, "runs at once (default: every core)")->check(CLI::Range(1, 1024));
  claims_cmd->add_option("--only", claims.only, "only these claims, e.g. C1,C12")->delimiter(',');

  app.add_subcommand("scenarios", "list the scenarios");

  ParamsOptions params;
  auto* params_cmd = app.add_subcommand("params", "list every parameter of a scenario");
  params_cmd->add_option("scenario", params.scenario, std::string("scenario name (default: ") + kDefaultScenario + ")");
  params_cmd->add_option("filter", params.filter, "only keys matching this glob, e.g. 'llr.*', or containing this text");
  params_cmd->add_flag("--json", params.json, "a JSON list: key, type, default, unit, min, max, allowed, meaning");
  params_cmd->add_option("--set", params.sets, "key=value: list the parameters of that variant, e.g. topology=leaf-spine")
      ->allow_extra_args(false);  // one value a --set: the filter stays positional

  KernelBenchOptions bench;
  auto* bench_cmd = app.add_subcommand("bench", "benchmarks");
  auto* kernel_cmd = bench_cmd->add_subcommand("kernel", "ClockDomain vs one SC_METHOD per block, one ticking all, a plain loop");
  kernel_cmd->add_option("--repeats", bench.repeats, "runs per configuration (median is reported)")->check(CLI::Range(1, 15));
  kernel_cmd->add_option("--scale", bench.scale, "multiply the simulated cycles")->check(CLI::Range(0.01, 100.0) & kNumber);
  auto* one_cmd = bench_cmd->add_subcommand("kernel-one", "one configuration (used by 'bench kernel')");
  one_cmd->group("");  // internal
  one_cmd->add_option("--style", bench.style)->required()->check(CLI::IsMember({"domain", "method", "method-gated", "tick-all", "plain"}));
  one_cmd->add_option("--blocks", bench.blocks)->required()->check(CLI::Range(1, 100000));
  one_cmd->add_option("--activity", bench.activity_percent)->required()->check(CLI::IsMember({1, 10, 100}));
  one_cmd->add_option("--cycles", bench.cycles)->required()->check(CLI::Range(1, 1000000000));
  double fec_seconds = 0.3, fec_ber = 1e-6;
  auto* fec_cmd = bench_cmd->add_subcommand("fec", "RS codec Gb/s per core; fast vs exact codec in phy-loopback");
  fec_cmd->add_option("--seconds", fec_seconds, "time per codec measurement")->check(CLI::Range(0.01, 60.0) & kNumber);
  fec_cmd->add_option("--ber", fec_ber, "pre-FEC BER of the fast/exact comparison")->check(CLI::Range(0.0, 0.01) & kNumber);
  fec_cmd->add_option("--repeats", bench.repeats, "runs of each codec (median is reported)")->check(CLI::Range(1, 15));
  std::uint64_t link_frames = 200000;
  double link_error = 1e-4;
  auto* link_cmd = bench_cmd->add_subcommand("link", "one 800G link with LLR at full load: cycles/s, frames/s, memory");
  link_cmd->add_option("--frames", link_frames, "frames each way")->check(CLI::Range(1, 1000000000));
  link_cmd->add_option("--frame-error", link_error, "chance a frame is corrupted")->check(CLI::Range(0.0, 0.5) & kNumber);
  SwitchBenchOptions switch_bench_options;
  auto* switch_cmd = bench_cmd->add_subcommand(
      "switch", "one switch over port counts x offered loads: cycles/s, packets/s, memory, cost against ports");
  switch_cmd->add_option("--cycles", switch_bench_options.cycles, "cycles of traffic")->check(CLI::Range(1000, 1000000000));
  switch_cmd->add_option("--ports", switch_bench_options.ports, "port counts, e.g. 16,64 (default 16,32,64,128)")
      ->delimiter(',')
      ->check(CLI::Range(2, 512));
  switch_cmd->add_option("--loads", switch_bench_options.loads, "offered loads, e.g. 0.5,0.9 (default 0.1,0.5,0.9)")
      ->delimiter(',')
      ->check(CLI::Range(0.01, 1.0) & kNumber);
  switch_cmd->add_option("--repeats", switch_bench_options.repeats, "runs per point (median is reported)")
      ->check(CLI::Range(1, 15));
  LingyunBenchOptions lingyun;
  auto* lingyun_cmd = bench_cmd->add_subcommand(
      "lingyun", "the 64-port Lingyun ASIC with every port composed vs the bare switch core, and a leaf-spine: cycles/s");
  lingyun_cmd->add_option("--us", lingyun.us, "simulated time measured per rig")->check(CLI::Range(0.01, 10000.0) & kNumber);
  lingyun_cmd->add_option("--warmup-us", lingyun.warmup_us, "simulated time before it, not timed")
      ->check(CLI::Range(0.0, 10000.0) & kNumber);
  auto* lingyun_one_cmd = bench_cmd->add_subcommand("lingyun-one", "one rig (used by 'bench lingyun')");
  lingyun_one_cmd->group("");  // internal
  lingyun_one_cmd->add_option("--rig", lingyun.rig)->required()->check(CLI::IsMember({"bare", "composed", "leaf-spine"}));
  lingyun_one_cmd->add_option("--us", lingyun.us)->required()->check(CLI::Range(0.01, 10000.0) & kNumber);
  lingyun_one_cmd->add_option("--warmup-us", lingyun.warmup_us)->required()->check(CLI::Range(0.0, 10000.0) & kNumber);
  bench_cmd->require_subcommand(1);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }

  try {
    if (run_cmd->parsed()) {
      if (*seed_opt) run.seed = parse_seed(seed, "--seed");
      run.progress_every = std::chrono::milliseconds(static_cast<std::int64_t>(progress_every_s * 1000));
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
    }
    if (app.got_subcommand("scenarios")) {
      for (const auto& s : scenarios()) std::cout << s.name << "  " << s.description << "\n";
      return 0;
    }
    if (params_cmd->parsed()) return params_command(params);
    if (sweep_cmd->parsed()) return sweep_command(argv[0], sweep);
    if (compare_cmd->parsed()) return compare_command(compare_a, compare_b, compare_tolerance);
    if (export_cmd->parsed()) return exports::export_command(exp);

    if (claims_cmd->parsed()) return claims_command(argv[0], claims);
    if (kernel_cmd->parsed()) return kernel_bench(argv[0], bench);
    if (one_cmd->parsed()) return kernel_bench_one(bench);
    if (link_cmd->parsed()) return link_bench(link_frames, link_error);
    if (switch_cmd->parsed()) return switch_bench(argv[0], switch_bench_options);
    if (lingyun_cmd->parsed()) return lingyun_bench(argv[0], lingyun);
    if (lingyun_one_cmd->parsed()) return lingyun_bench_one(lingyun);
    if (fec_cmd->parsed()) {
      const int rc = fec_bench(fec_seconds);
      return rc ? rc : fec_mode_bench(argv[0], fec_ber, bench.repeats);
    }
  } catch (const ConfigError& e) {
    std::cerr << "error: " << one_line(e.what()) << "\n";
    return 2;
  } catch (const std::invalid_argument& e) {  // e.g. a --waves file with an unknown extension
    std::cerr << "error: " << one_line(e.what()) << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "error: " << one_line(e.what()) << "\n";
    return 1;
  }
  return 0;
}
