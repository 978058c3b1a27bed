// Configuration. Every parameter has one owner that declares it, with its default, unit,
// allowed range and a one-line description; values come from a scenario YAML file and
// --set key=value overrides. A value out of range, of the wrong type, or a key that no block
// declares is a ConfigError naming the key, the value and what is allowed. Declaring a key
// again is allowed only as the same parameter (a second instance of a block): another type,
// default, unit, range or description is a model bug, refused at start-up (std::logic_error).
#pragma once
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace xy {

struct ConfigError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A seed: a decimal integer in [0, 2^64 - 1]; throws ConfigError naming `origin` otherwise.
std::uint64_t parse_seed(const std::string& text, const std::string& origin);

struct ParamInfo {
  std::string key, type, unit, range, description;
  nlohmann::json default_value, value;
  bool implementation = false;  // see Config::implementation()
  std::string fixed_by = "";    // see Config::fix()
};

class Config {
 public:
  // --set key=value; origin names where it came from in error messages.
  void set(const std::string& key, const std::string& value, const std::string& origin = "--set");
  void set_from_assignment(const std::string& assignment);  // "key=value"
  // Loads `params:` of a scenario YAML file (nested maps flatten to dotted keys). Returns the
  // file's `scenario:` name (or "") and sets `seed` if the file has one.
  std::string load_yaml_file(const std::string& path, std::uint64_t* seed);

  std::int64_t integer(const std::string& key, std::int64_t def, const std::string& unit, std::int64_t min,
                       std::int64_t max, const std::string& description);
  double real(const std::string& key, double def, const std::string& unit, double min, double max,
              const std::string& description);
  bool flag(const std::string& key, bool def, const std::string& description);
  // `allowed` says in words what the text may be (e.g. "single | leaf-spine | a topology file path").
  std::string text(const std::string& key, const std::string& def, const std::string& description,
                   const std::string& allowed = "");
  std::string choice(const std::string& key, const std::string& def, const std::vector<std::string>& allowed,
                     const std::string& description);

  // Which implementation of a block runs — its C++ model (the default, allowed[0]) or an RTL
  // twin — rather than what is modelled: results must not depend on it, so effective() leaves it
  // out (results.json stays comparable) and implementations() lists it (run.json).
  std::string implementation(const std::string& key, const std::vector<std::string>& allowed,
                             const std::string& description);

  // `key` is set by `owner` (a scenario that runs every value of it, say), not by the user:
  // giving it is a ConfigError naming the owner, and params() marks it (xysim params leaves it
  // out). Call it before or after the block declares the key.
  void fix(const std::string& key, const std::string& owner);
  // `owner`'s own default for a block's key (a scenario that needs ECN marking on, say): the
  // value unless the key is given. Call it before the block declares the key.
  void default_to(const std::string& key, const std::string& value, const std::string& owner);

  // Throws for any given key that no block declared.
  void check_all_used() const;
  nlohmann::json effective() const;        // key -> value, sorted
  nlohmann::json implementations() const;  // the same, of the implementation choices
  const std::vector<ParamInfo>& params() const { return params_; }

 private:
  struct Given {
    std::string value, origin;
    bool used = false;
    bool owner_default = false;  // default_to's: listed as the key's default
  };
  const Given* given(const std::string& key);
  void declare(ParamInfo info);
  std::map<std::string, Given> given_;
  std::vector<ParamInfo> params_;
  std::map<std::string, std::size_t> index_;
  std::map<std::string, std::string> fixed_;  // key -> owner
};

}  // namespace xy
