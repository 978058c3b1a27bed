// `xysim export FORMAT RESULTS... [--out DIR]`: loads each input, hands them to the format's
// exporter and writes its files.
#pragma once
#include <string>
#include <vector>

namespace xy::exports {

struct ExportOptions {
  std::string format;
  std::vector<std::string> inputs;  // results.json, a run's --out dir, a sweep dir or its sweep.json
  std::string out_dir = ".";
  bool list = false;                // print the formats instead
};

// Exit status: 0 written; bad input (format, files, what the format needs) throws ConfigError.
int export_command(const ExportOptions& options);
// "astra-sim, nccl-tests": for help texts.
std::string format_names();

}  // namespace xy::exports
