// Running `xysim run` in processes of their own (SystemC allows one simulation per process), N at
// a time: what `xysim sweep` and `xysim claims` share.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace xy {

using Params = std::vector<std::pair<std::string, std::string>>;  // --set key=value, in order

// `SELF run SCENARIO --seed S --set k=v... --out DIR --quiet`.
std::vector<std::string> run_args(const char* self, const std::string& scenario, std::uint64_t seed,
                                  const Params& params, const std::filesystem::path& out);

// A command line and the file that takes its stdout and stderr.
struct Process {
  std::vector<std::string> args;
  std::filesystem::path log;
};

// Starts a process with its stdout and stderr in its log; found on PATH when args[0] has no slash.
pid_t spawn(const Process& p);
// A waitpid status as a shell shows it: the exit code, or 128 + the signal that ended it.
int exit_status(int wait_status);

// How many processes run at once: `requested`, or one a core when 0.
int processes_at_once(int requested);

// Runs every process, processes_at_once(parallel) at once; `finished(i, exit_status)` is called as
// each ends, in the order they end (a signal counts as 128 + its number).
void run_processes(const std::vector<Process>& processes, int parallel,
                   const std::function<void(std::size_t, int)>& finished);

// The last non-empty line a process wrote (its error line, when it failed).
std::string last_line(const std::filesystem::path& log);

}  // namespace xy
