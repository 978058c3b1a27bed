// The YAML files users write (scenarios, topologies, sweeps): loaded, or refused in one line
// that names the file and, for a syntax error, its line and column.
#pragma once
#include <string>

#include <yaml-cpp/yaml.h>

namespace xy {

// Loads `path`, a `kind` such as "scenario file"; ConfigError when it is missing, not a regular
// file, unreadable or not YAML.
YAML::Node load_yaml_file(const std::string& path, const std::string& kind);

// "path:line" of a node, for an error about it.
std::string yaml_at(const std::string& path, const YAML::Node& node);

}  // namespace xy
