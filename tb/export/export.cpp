// The registry of formats, the loading of inputs, and `xysim export`.
#include "tb/export/export.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>

#include <fmt/format.h>

#include "tb/export/command.hpp"
#include "tb/export/formats.hpp"
#include "tb/run/results.hpp"
#include "kernel/config.hpp"

namespace xy::exports {
namespace fs = std::filesystem;

const std::vector<Exporter>& exporters() {
  static const std::vector<Exporter> all = {
      {"astra-sim", "ASTRA-sim analytical network.yml (Switch) and system.json, fitted to a message-size sweep (such as olink-message's)",
       astra_sim},
      {"nccl-tests", "nccl-tests columns size, time, algbw, busbw (CSV) of a message-size sweep (such as olink-message's)", nccl_tests},
      {"htsim", "htsim fat-tree .topo of each two-tier leaf-spine fabric of composed ports a run built", htsim_topo},
      {"ns3", "ns-3 HPCC topology.txt and config.txt (scratch/third.cc) of each fabric of composed ports a run built",
       ns3_config},
  };
  return all;
}

std::string format_names() {
  std::string names;
  for (const auto& e : exporters()) names += (names.empty() ? "" : ", ") + e.format;
  return names;
}

namespace {

// A sweep.json as xysim sweep writes it: a list of points, each with its number, scenario, summary
// and whether it passed; ConfigError naming the first entry that is not.
void check_sweep(const fs::path& path, const nlohmann::json& doc) {
  const auto bad = [&](const std::string& what) {
    throw ConfigError(fmt::format("{}: not a sweep.json of xysim sweep: {}", path.string(), what));
  };
  if (!doc.is_array() || doc.empty()) bad(fmt::format("a {}, not a list of points", doc.type_name()));
  for (std::size_t i = 0; i < doc.size(); ++i) {
    const nlohmann::json& p = doc[i];
    const auto want = [&](const char* key, bool ok, const char* type) {
      if (!ok) bad(fmt::format("entry {}: '{}' missing or not {}", i, key, type));
    };
    want("point", p.is_object() && p.contains("point") && p["point"].is_number_unsigned(), "a point's number");
    want("scenario", p.contains("scenario") && p["scenario"].is_string(), "a scenario's name");
    want("summary", p.contains("summary") && p["summary"].is_object(), "an object");
    want("passed", p.contains("passed") && p["passed"].is_boolean(), "true or false");
    want("failure", !p.contains("failure") || p["failure"].is_string(), "a text");
  }
}

// A sweep.json's points checked against the points/NNNN/results.json beside it, when they are
// there (a sweep's directory): a point file corrupted or changed since the merge is named, not
// passed over.
void check_point_files(const fs::path& sweep, const nlohmann::json& doc) {
  std::error_code ec;
  const fs::path dir = sweep.parent_path() / "points";
  if (!fs::is_directory(dir, ec)) return;  // a sweep.json on its own
  for (const auto& p : doc) {
    const fs::path file = dir / fmt::format("{:04}", p["point"].get<std::uint64_t>()) / "results.json";
    if (!p.value("passed", false)) continue;  // a failed point is refused by its entry; its file may be partial
    const nlohmann::json own = load_results(file.string());
    if (own["summary"] != p["summary"])
      throw ConfigError(fmt::format("{}: its summary is not that of point {} in {}: run the sweep again to merge it",
                                    file.string(), p["point"].dump(), sweep.string()));
  }
}

// A sweep's directory or its sweep.json (a list), or else a results.json or a run's --out directory.
Input load(const std::string& arg) {
  std::error_code ec;
  const bool dir = fs::is_directory(arg, ec);
  const fs::path sweep = dir ? fs::path(arg) / "sweep.json" : fs::path(arg);
  if (dir ? fs::exists(sweep, ec) : fs::is_regular_file(sweep, ec) && load_json(sweep.string()).is_array()) {
    const nlohmann::json doc = load_json(sweep.string());
    check_sweep(sweep, doc);
    check_point_files(sweep, doc);
    return {sweep.string(), doc};
  }
  try {
    return {(dir ? fs::path(arg) / "results.json" : fs::path(arg)).string(), load_results(arg)};
  } catch (const ConfigError& e) {
    throw ConfigError(std::string(e.what()) + " (or a sweep's directory or its sweep.json)");
  }
}

}  // namespace

std::vector<Point> points_of(const std::vector<Input>& inputs) {
  std::vector<Point> points;
  for (const Input& in : inputs) {
    const bool sweep = in.doc.is_array();
    if (!sweep && in.doc.value("schema_version", kResultsSchemaVersion) != kResultsSchemaVersion)
      throw ConfigError(fmt::format("{}: schema_version {}: this xysim reads {} (docs/results.md)", in.path,
                                    in.doc["schema_version"].dump(), kResultsSchemaVersion));
    for (const auto& p : sweep ? in.doc : nlohmann::json::array({in.doc})) {
      const std::string origin = sweep ? fmt::format("{} point {}", in.path, p["point"].dump()) : in.path;
      if (!p.value("passed", false))
        throw ConfigError(fmt::format("{}: the run did not pass ({}): its figures cannot be exported", origin,
                                      p.value("failure", std::string("no result"))));
      points.push_back({origin, p["scenario"].is_string() ? p["scenario"].get<std::string>() : "", p["summary"]});
    }
  }
  return points;
}

MessageSweep message_sweep(const std::vector<Input>& inputs, std::size_t sizes, const std::string& format) {
  MessageSweep sweep;
  std::set<double> distinct;
  for (const Input& in : inputs) sweep.inputs += (sweep.inputs.empty() ? "" : ", ") + in.path;
  std::set<std::string> scenarios;
  for (const Point& p : points_of(inputs)) {
    // What a run reports decides, not its scenario's name: any run with these summary keys will do.
    const auto number = [&](const char* key) {
      const auto it = p.summary.find(key);
      if (it == p.summary.end() || !it->is_number())
        throw ConfigError(fmt::format("{}: summary.{} missing or not a number: {} needs runs that report a message's "
                                      "size and latency (summary.message_bytes, transfer_ns, delivered_ns, gpus), "
                                      "such as those of scripts/sweeps/olink-message-size.yaml",
                                      p.origin, key, format));
      return it->get<double>();
    };
    const auto text = [&](const char* key) {
      const auto it = p.summary.find(key);
      return it != p.summary.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    const Message m{p.origin, number("message_bytes"), number("transfer_ns"), number("delivered_ns")};
    const int gpus = static_cast<int>(number("gpus"));
    if (sweep.messages.empty()) {
      sweep.fabric = text("fabric");
      sweep.topology = text("topology");
      sweep.gpus = gpus;
    } else if (text("fabric") != sweep.fabric || text("topology") != sweep.topology || gpus != sweep.gpus) {
      throw ConfigError(fmt::format("{}: fabric {} ({}, {} GPUs), but {} is {} ({}, {} GPUs): one system at a time",
                                    p.origin, text("fabric"), text("topology"), gpus, sweep.messages.front().origin,
                                    sweep.fabric, sweep.topology, sweep.gpus));
    }
    sweep.messages.push_back(m);
    distinct.insert(m.bytes);
    if (scenarios.insert(p.scenario).second) sweep.scenarios += (sweep.scenarios.empty() ? "" : ", ") + p.scenario;
  }
  if (distinct.size() < sizes)
    throw ConfigError(fmt::format("{}: {} message size{}, {} needs at least {} (sweep message.bytes)", sweep.inputs,
                                  distinct.size(), distinct.size() == 1 ? "" : "s", format, sizes));
  return sweep;
}

int export_command(const ExportOptions& o) {
  if (o.list) {
    for (const auto& e : exporters()) std::cout << e.format << "  " << e.description << "\n";
    return 0;
  }
  if (o.format.empty()) throw ConfigError(fmt::format("export: no format given: one of {} (xysim export --list)", format_names()));
  const auto e = std::find_if(exporters().begin(), exporters().end(), [&](const Exporter& x) { return x.format == o.format; });
  if (e == exporters().end())
    throw ConfigError(fmt::format("export: unknown format '{}': one of {}", o.format, format_names()));
  if (o.inputs.empty())
    throw ConfigError(fmt::format("export {}: no RESULTS given: results.json, a run's --out directory, or a sweep's", o.format));
  std::vector<Input> inputs;
  for (const auto& arg : o.inputs) inputs.push_back(load(arg));
  const std::vector<File> files = e->write(inputs);
  std::error_code ec;
  fs::create_directories(o.out_dir, ec);
  for (const File& f : files) {
    const fs::path path = fs::path(o.out_dir) / f.name;
    fs::create_directories(path.parent_path(), ec);  // a format may put files in directories of their own
    std::ofstream out(path);
    out << f.text;
    if (!out) throw ConfigError(fmt::format("--out '{}': cannot write {} there", o.out_dir, f.name));
    std::cout << path.string() << "\n";
  }
  return 0;
}

}  // namespace xy::exports
