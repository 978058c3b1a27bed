// Waveforms. Blocks register probes (a hierarchical name, a width of 1..64 bits, and a
// function that reads the value); the Waves recorder samples them after every clock step and
// writes value changes to a VCD or FST file (chosen by the file's extension), limited to a
// scope (name prefix) and a time window. Beside the dump it writes a gtkwave save file (.gtkw)
// with the probes grouped by block, zoomed to where the values change; a probe with value names
// gets a gtkwave translate file beside it, so states show as names.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "kernel/units.hpp"

namespace xy {

class Clock;

struct WavesOptions {
  std::string path;       // "" = off; must end in .vcd or .fst
  std::string scope;      // only probes whose name starts with this; "" = all
  Time window_begin = 0;  // record value changes in [begin, end]
  Time window_end = ~Time{0};
  // Parses "10us:12us", ":5us", "1us:"; throws std::invalid_argument naming the text.
  static void parse_window(const std::string& text, Time* begin, Time* end);
};

class WaveWriter;  // VCD or FST backend

class Waves {
 public:
  explicit Waves(WavesOptions options = {});
  ~Waves();
  bool enabled() const { return !options_.path.empty(); }

  // `name` is hierarchical with dots: "top.link.sink.occupancy". Ignored when disabled or
  // outside the scope. Must be called before start(). `value_names[v]` is what gtkwave shows
  // for value v (a state's name); needs a width of 2 or more, as gtkwave draws single bits as lines.
  void probe(const std::string& name, unsigned width, std::function<std::uint64_t()> read,
             std::vector<std::string> value_names = {});
  // Samples after each step of `clock`.
  void watch(Clock& clock);

  // Opens the dump and writes the header; after all probes. Throws std::invalid_argument when
  // the scope matches no probe (naming the scopes there are) or the file cannot be written.
  void start();
  void sample(Time now);       // writes the probes that changed
  void finish(Time end);       // closes the dump and writes the .gtkw beside it

  std::size_t probe_count() const { return probes_.size(); }
  const std::string& path() const { return options_.path; }
  std::string gtkw_path() const;

 private:
  struct Probe {
    std::string name;
    unsigned width;
    std::function<std::uint64_t()> read;
    std::uint64_t last;
    std::uint32_t handle;
    std::vector<std::string> value_names;
  };
  void write_gtkw(Time first, Time last) const;
  WavesOptions options_;
  std::vector<Probe> probes_;
  std::set<std::string> scopes_;  // of every probe offered, in the scope or not
  std::unique_ptr<WaveWriter> writer_;
  bool started_ = false, primed_ = false;
  Time last_time_ = 0;
  bool changed_ = false;  // since the initial values; then the first and last change's times
  Time first_change_ = 0, last_change_ = 0;
};

}  // namespace xy
