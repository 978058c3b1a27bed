#include "tb/xysim/processes.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

extern char** environ;

namespace xy {

pid_t spawn(const Process& p) {
  std::vector<char*> argv;
  for (const auto& a : p.args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t io;
  posix_spawn_file_actions_init(&io);
  posix_spawn_file_actions_addopen(&io, 1, p.log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&io, 1, 2);
  pid_t pid = 0;
  // spawnp: a program started through PATH (argv[0] without a slash) is found the same way again.
  const int rc = posix_spawnp(&pid, argv[0], &io, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&io);
  if (rc != 0) throw std::runtime_error(fmt::format("cannot start {}: {}", argv[0], std::strerror(rc)));
  return pid;
}

int exit_status(int wait_status) {
  return WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128 + WTERMSIG(wait_status);
}

std::vector<std::string> run_args(const char* self, const std::string& scenario, std::uint64_t seed,
                                  const Params& params, const std::filesystem::path& out) {
  std::vector<std::string> args{self, "run", scenario, "--seed", std::to_string(seed)};
  for (const auto& [k, v] : params) {
    args.push_back("--set");
    args.push_back(k + "=" + v);
  }
  args.push_back("--out");
  args.push_back(out.string());
  args.push_back("--quiet");
  return args;
}

int processes_at_once(int requested) {
  return requested > 0 ? requested : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

void run_processes(const std::vector<Process>& processes, int parallel,
                   const std::function<void(std::size_t, int)>& finished) {
  const auto at_once = static_cast<std::size_t>(processes_at_once(parallel));
  std::map<pid_t, std::size_t> running;
  std::size_t next = 0;
  while (next < processes.size() || !running.empty()) {
    while (next < processes.size() && running.size() < at_once) {
      running[spawn(processes[next])] = next;
      ++next;
    }
    int status = 0;
    const pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) break;
    const auto it = running.find(pid);
    if (it == running.end()) continue;  // not one of ours
    const std::size_t i = it->second;
    running.erase(it);
    finished(i, exit_status(status));
  }
}

std::string last_line(const std::filesystem::path& log) {
  std::ifstream in(log);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  return last;
}

}  // namespace xy
