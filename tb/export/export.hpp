// Exports: measured figures from results.json / sweep.json files, written in the input formats of
// higher-level simulators (`xysim export FORMAT RESULTS...`).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace xy::exports {

// One input as given on the command line: a results.json, a run's --out directory (its
// results.json) or a sweep's sweep.json, loaded.
struct Input {
  std::string path;
  nlohmann::json doc;
};

struct File {
  std::string name;  // relative to the output directory
  std::string text;
};

// An exporter throws ConfigError (exit 2, one line naming the input and what it lacks) for inputs
// it cannot use.
struct Exporter {
  std::string format, description;
  std::function<std::vector<File>(const std::vector<Input>&)> write;
};

const std::vector<Exporter>& exporters();

}  // namespace xy::exports
