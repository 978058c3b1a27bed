// The memory a configuration needs, estimated before anything is allocated, held against the
// machine's: a run that cannot fit is refused (exit 2) naming what drives it, rather than ending
// in std::bad_alloc or the kernel's OOM killer after minutes of building. --force-memory lets it
// try anyway (a machine whose swap or overcommit the estimate does not know of).
#pragma once
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <string>

#include <fmt/format.h>
#include <systemc>

#include "kernel/config.hpp"

namespace xy {

// This machine's memory in bytes: MemTotal of /proc/meminfo, else the pages sysconf counts.
inline double machine_memory_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  for (std::string key; meminfo >> key;) {
    double kib = 0;
    if (key == "MemTotal:" && meminfo >> kib) return kib * 1024;
    meminfo.ignore(1 << 20, '\n');
  }
  return static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
}

// A field of /proc/self/status in bytes (VmSize: address space; VmRSS: memory), 0 when not found.
inline double own_memory_bytes(const std::string& field) {
  std::ifstream status("/proc/self/status");
  for (std::string key; status >> key;) {
    double kib = 0;
    if (key == field + ":" && status >> kib) return kib * 1024;
    status.ignore(1 << 20, '\n');
  }
  return 0;
}

// ConfigError when `bytes` (the estimate), added to what the process holds already, exceed the
// machine's memory, or the process's address space limit (ulimit -v) when lower, and `forced` is
// false. `driver` names the parameters that drive the estimate, with their values and how they
// add up.
inline void check_memory(double bytes, const std::string& driver, bool forced) {
  double have = machine_memory_bytes(), held = own_memory_bytes("VmRSS");
  const char* which = "this machine's memory (MemTotal)";
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY && static_cast<double>(limit.rlim_cur) < have) {
    have = static_cast<double>(limit.rlim_cur);
    held = own_memory_bytes("VmSize");
    which = "this process's address space limit (ulimit -v)";
  }
  if (forced || held + bytes <= have) return;
  constexpr double kGiB = 1024.0 * 1024 * 1024;
  throw ConfigError(fmt::format("{} need about {:.1f} GiB of memory, more than {}, {:.1f} GiB{}: ask for less, or "
                                "give --force-memory to try anyway",
                                driver, bytes / kGiB, which, have / kGiB,
                                held > 0.1 * have ? fmt::format(" ({:.1f} GiB of it already taken)", held / kGiB) : ""));
}

// SystemC gives every SC_THREAD a stack of its own, mapped when the simulation starts: an mmap and
// a guard page, two of the memory maps the kernel lets a process have (vm.max_map_count), and
// SC_DEFAULT_STACK_SIZE of address space. More threads than that ends in SystemC's E518 (stack
// setup failed), stacks above the memory in std::bad_alloc.
inline double thread_stack_bytes(std::size_t threads) {
  return static_cast<double>(threads) * sc_core::SC_DEFAULT_STACK_SIZE;
}

// ConfigError when `threads` stacks need more maps than the process may have; `what` names what
// makes them ("this configuration has 40000 SystemC threads (...)").
inline void check_thread_maps(std::size_t threads, const std::string& what) {
  long max_maps = 65530;  // the kernel's default
  std::ifstream("/proc/sys/vm/max_map_count") >> max_maps;
  constexpr long kOtherMaps = 4096;  // the program, its libraries, its heap
  const long allowed = std::max(0L, (max_maps - kOtherMaps) / 2);
  if (static_cast<long>(threads) > allowed)
    throw ConfigError(fmt::format("{}, above the {} SystemC threads this machine can map (vm.max_map_count = {}, two "
                                  "maps a stack): ask for fewer endpoints or GPUs",
                                  what, allowed, max_maps));
}

}  // namespace xy
