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

bool is_sweep(const nlohmann::json& j) {
  if (!j.is_array() || j.empty()) return false;
  for (const auto& p : j)
    if (!p.is_object() || !p.contains("scenario") || !p.contains("summary") || !p.contains("point")) return false;
  return true;
}

// A sweep's directory or its sweep.json, or else a results.json or a run's --out directory.
Input load(const std::string& arg) {
  std::error_code ec;
  const fs::path sweep = fs::is_directory(arg, ec) ? fs::path(arg) / "sweep.json" : fs::path(arg);
  std::ifstream in(sweep);
  const nlohmann::json doc = in ? nlohmann::json::parse(in, nullptr, false) : nlohmann::json();
  if (is_sweep(doc)) return {sweep.string(), doc};
  try {
    return {(fs::is_directory(arg, ec) ? fs::path(arg) / "results.json" : fs::path(arg)).string(), load_results(arg)};
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
