// What an exporter of tb/export/formats.hpp writes for results.json files, for the checkers beside
// it (until `xysim export` calls the exporters): export_files htsim|ns3 OUT RESULTS...
// A RESULTS is a results.json or a run's --out directory. Bad input: one line on stderr, exit 2.
#include <filesystem>
#include <fstream>
#include <iostream>

#include "tb/export/formats.hpp"
#include "xingyun/config.hpp"

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  using namespace xy::exports;
  if (argc < 4) {
    std::cerr << "usage: export_files htsim|ns3 OUT RESULTS...\n";
    return 2;
  }
  const std::string format = argv[1];
  try {
    std::vector<Input> inputs;
    for (int i = 3; i < argc; ++i) {
      const fs::path given = argv[i];
      const fs::path path = fs::is_directory(given) ? given / "results.json" : given;
      std::ifstream in(path);
      if (!in) throw xy::ConfigError(path.string() + ": no such file (or unreadable)");
      inputs.push_back({path.string(), nlohmann::json::parse(in)});
    }
    std::vector<File> files;
    if (format == "htsim") files = htsim_topo(inputs);
    else if (format == "ns3") files = ns3_config(inputs);
    else throw xy::ConfigError("format '" + format + "': allowed are htsim, ns3");
    for (const File& f : files) {
      const fs::path out = fs::path(argv[2]) / f.name;
      fs::create_directories(out.parent_path());
      std::ofstream(out) << f.text;
      std::cout << out.string() << '\n';
    }
  } catch (const xy::ConfigError& e) {
    std::cerr << e.what() << '\n';
    return 2;
  }
  return 0;
}
