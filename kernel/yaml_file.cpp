#include "kernel/yaml_file.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "kernel/config.hpp"

namespace xy {

YAML::Node load_yaml_file(const std::string& path, const std::string& kind) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw ConfigError(fmt::format("{}: cannot read {} ({})", path, kind,
                                  std::filesystem::exists(path, ec) ? "not a regular file" : "no such file"));
  try {
    return YAML::LoadFile(path);
  } catch (const YAML::ParserException& e) {
    throw ConfigError(fmt::format("{}:{}:{}: YAML syntax error: {}", path, e.mark.line + 1, e.mark.column + 1, e.msg));
  } catch (const std::exception&) {  // unreadable (permissions, I/O)
    throw ConfigError(fmt::format("{}: cannot read {}", path, kind));
  }
}

std::string yaml_at(const std::string& path, const YAML::Node& node) {
  return fmt::format("{}:{}", path, node.Mark().line + 1);
}

}  // namespace xy
