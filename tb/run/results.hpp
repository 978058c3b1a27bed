// Reading results.json back: loading one, its leaves, and `xysim compare A B` (what changed between
// two runs: every summary leaf that differs, with its relative change, and the parameters that differ).
#pragma once
#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace xy {

// The layout of results.json and run.json (docs/results.md): raised when a key is renamed, moved
// or removed, or changes meaning; adding a key does not raise it.
inline constexpr int kResultsSchemaVersion = 1;
// The git commit the binary was built from, "-dirty" when the tree had changes; "unknown" outside git.
const char* git_commit();

// A JSON file; ConfigError naming it when it cannot be read or is not JSON (with the byte, line and
// column where it stops being JSON: a truncated file, a NaN).
nlohmann::json load_json(const std::string& file);

// A results.json, or a run's --out directory holding one; ConfigError naming the path otherwise.
nlohmann::json load_results(const std::string& path);

// Every leaf of a JSON tree, keys joined by dots (array elements by their index).
std::map<std::string, nlohmann::json> leaves(const nlohmann::json& tree);

// Exit status: 0 when no summary leaf differs by more than `tolerance` (relative), 1 when some do,
// 2 for inputs that are not results.
int compare_command(const std::string& a, const std::string& b, double tolerance);

}  // namespace xy
