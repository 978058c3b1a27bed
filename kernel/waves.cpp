#include "kernel/waves.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>
#include <unordered_map>

#include "fstapi.h"
#include "kernel/clock.hpp"

namespace xy {

// One dump format. Declarations come first (scopes nest like the dotted names), then times
// and value changes in non-decreasing time order.
class WaveWriter {
 public:
  virtual ~WaveWriter() = default;
  virtual void push_scope(const std::string& name) = 0;
  virtual void pop_scope() = 0;
  // `leaf` is the last name component; returns the handle used by change().
  virtual std::uint32_t declare(const std::string& leaf, unsigned width) = 0;
  virtual void end_declarations() = 0;
  // Initial values are bracketed so VCD can mark them with $dumpvars.
  virtual void begin_initial() {}
  virtual void end_initial() {}
  virtual void change(std::uint32_t handle, unsigned width, std::uint64_t value) = 0;
  // Flushes and closes; throws std::runtime_error if the file could not be written.
  virtual void close() = 0;

  // Starts a new time stamp unless `t` is the current one.
  void time(Time t) {
    if (stamped_ && t == now_) return;
    if (stamped_ && t < now_)
      throw std::logic_error("waves: time went backwards (" + std::to_string(t) + " fs after " +
                             std::to_string(now_) + " fs)");
    emit_time(t);
    if (!stamped_) first_ = t;
    now_ = t;
    stamped_ = true;
  }
  bool stamped() const { return stamped_; }
  Time first() const { return first_; }
  Time now() const { return now_; }

 protected:
  virtual void emit_time(Time t) = 0;

 private:
  Time first_ = 0, now_ = 0;
  bool stamped_ = false;
};

namespace {

std::uint64_t mask_of(unsigned width) {
  return width >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << width) - 1;
}

std::string range_of(unsigned width) { return "[" + std::to_string(width - 1) + ":0]"; }

std::vector<std::string> split_name(const std::string& name) {
  std::vector<std::string> parts;
  std::size_t from = 0;
  for (;;) {
    std::size_t dot = name.find('.', from);
    parts.push_back(name.substr(from, dot - from));
    if (dot == std::string::npos) break;
    from = dot + 1;
  }
  return parts;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

enum class Format { kVcd, kFst };

Format format_of(const std::string& path) {
  std::string ext = lower(std::filesystem::path(path).extension().string());
  if (ext == ".vcd") return Format::kVcd;
  if (ext == ".fst") return Format::kFst;
  throw std::invalid_argument("waves file '" + path + "' must end in .vcd or .fst");
}

class VcdWriter final : public WaveWriter {
 public:
  explicit VcdWriter(const std::string& path) : path_(path) {
    file_ = std::fopen(path.c_str(), "wb");
    if (!file_) throw std::invalid_argument("--waves '" + path + "': cannot open the file for writing");
    buf_.reserve(kFlushAt + 256);
    buf_ += "$version Xingyun $end\n$timescale 1fs $end\n";
  }
  ~VcdWriter() override {
    if (file_) std::fclose(file_);
  }

  void push_scope(const std::string& name) override {
    buf_ += "$scope module " + name + " $end\n";
  }
  void pop_scope() override { buf_ += "$upscope $end\n"; }
  std::uint32_t declare(const std::string& leaf, unsigned width) override {
    std::uint32_t handle = static_cast<std::uint32_t>(ids_.size());
    ids_.push_back(id_code(handle));
    buf_ += "$var wire " + std::to_string(width) + " " + ids_.back() + " " + leaf;
    if (width > 1) buf_ += " " + range_of(width);
    buf_ += " $end\n";
    return handle;
  }
  void end_declarations() override { buf_ += "$enddefinitions $end\n"; }
  void begin_initial() override { buf_ += "$dumpvars\n"; }
  void end_initial() override { buf_ += "$end\n"; }

  void change(std::uint32_t handle, unsigned width, std::uint64_t value) override {
    if (width == 1) {
      buf_ += value ? '1' : '0';
    } else {
      buf_ += 'b';
      int top = 63;
      while (top > 0 && !((value >> top) & 1)) --top;  // VCD drops leading zeros
      for (int b = top; b >= 0; --b) buf_ += ((value >> b) & 1) ? '1' : '0';
      buf_ += ' ';
    }
    buf_ += ids_[handle];
    buf_ += '\n';
    if (buf_.size() >= kFlushAt) flush();
  }

  void close() override {
    flush();
    bool failed = std::ferror(file_) != 0;
    failed |= std::fclose(file_) != 0;
    file_ = nullptr;
    if (failed) throw std::runtime_error("error writing waves file '" + path_ + "'");
  }

 protected:
  void emit_time(Time t) override {
    buf_ += '#';
    buf_ += std::to_string(t);
    buf_ += '\n';
  }

 private:
  static constexpr std::size_t kFlushAt = 1 << 16;

  // Short identifiers from the printable range '!'..'~', as simulators write them.
  static std::string id_code(std::uint32_t n) {
    std::string id;
    do {
      id += static_cast<char>('!' + n % 94);
      n /= 94;
    } while (n);
    return id;
  }
  void flush() {
    if (!buf_.empty()) std::fwrite(buf_.data(), 1, buf_.size(), file_);
    buf_.clear();
  }

  std::string path_;
  std::FILE* file_ = nullptr;
  std::string buf_;
  std::vector<std::string> ids_;
};

class FstWriter final : public WaveWriter {
 public:
  explicit FstWriter(const std::string& path) {
    ctx_ = fstWriterCreate(path.c_str(), 1);
    if (!ctx_) throw std::invalid_argument("--waves '" + path + "': cannot open the file for writing");
    fstWriterSetTimescale(ctx_, -15);  // Time is femtoseconds
    fstWriterSetVersion(ctx_, "Xingyun");
  }
  ~FstWriter() override {
    if (ctx_) fstWriterClose(ctx_);
  }

  void push_scope(const std::string& name) override {
    fstWriterSetScope(ctx_, FST_ST_VCD_MODULE, name.c_str(), nullptr);
  }
  void pop_scope() override { fstWriterSetUpscope(ctx_); }
  std::uint32_t declare(const std::string& leaf, unsigned width) override {
    // Named like Verilator's FST vectors, so viewers show "count[15:0]" for both formats.
    std::string name = width > 1 ? leaf + " " + range_of(width) : leaf;
    return fstWriterCreateVar(ctx_, FST_VT_VCD_WIRE, FST_VD_IMPLICIT, width, name.c_str(), 0);
  }
  void end_declarations() override {}
  void change(std::uint32_t handle, unsigned width, std::uint64_t value) override {
    fstWriterEmitValueChange64(ctx_, handle, width, value);
  }
  void close() override {
    fstWriterClose(ctx_);
    ctx_ = nullptr;
  }

 protected:
  void emit_time(Time t) override { fstWriterEmitTimeChange(ctx_, t); }

 private:
  void* ctx_ = nullptr;
};

std::string trim(const std::string& s) {
  std::size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  std::size_t e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

}  // namespace

void WavesOptions::parse_window(const std::string& text, Time* begin, Time* end) {
  std::size_t colon = text.find(':');
  if (colon == std::string::npos)
    throw std::invalid_argument("waves window '" + text + "' must be BEGIN:END, e.g. 10us:12us");
  std::string b = trim(text.substr(0, colon)), e = trim(text.substr(colon + 1));
  Time tb = 0, te = ~Time{0};
  try {
    if (!b.empty()) tb = parse_time(b);
    if (!e.empty()) te = parse_time(e);
  } catch (const std::exception& ex) {
    throw std::invalid_argument("waves window '" + text + "': " + ex.what());
  }
  if (tb > te) throw std::invalid_argument("waves window '" + text + "' ends before it begins");
  *begin = tb;
  *end = te;
}

Waves::Waves(WavesOptions options) : options_(std::move(options)) {
  if (!enabled()) return;
  format_of(options_.path);  // reject a bad extension before the run, not after it
  if (options_.window_begin > options_.window_end)
    throw std::invalid_argument("waves window of '" + options_.path + "' ends before it begins");
}

Waves::~Waves() {
  if (!writer_) return;
  try {
    finish(last_time_);
  } catch (...) {
    // A destructor must not throw; an explicit finish() reports errors.
  }
}

void Waves::probe(const std::string& name, unsigned width, std::function<std::uint64_t()> read,
                  std::vector<std::string> value_names) {
  if (!enabled()) return;
  scopes_.insert(name.substr(0, name.rfind('.')));
  if (name.compare(0, options_.scope.size(), options_.scope) != 0) return;
  if (started_) throw std::logic_error("waves: probe '" + name + "' added after start()");
  if (width < 1 || width > 64)
    throw std::invalid_argument("waves: probe '" + name + "' has width " +
                                std::to_string(width) + ", must be 1..64");
  bool bad = name.empty() || name.front() == '.' || name.back() == '.' ||
             name.find("..") != std::string::npos;
  for (char c : name) bad |= std::isspace(static_cast<unsigned char>(c)) != 0;
  if (bad) throw std::invalid_argument("waves: bad probe name '" + name + "'");
  if (!value_names.empty() && width < 2)
    throw std::invalid_argument("waves: probe '" + name + "' has value names but one bit; gtkwave names only vectors");
  if (width < 64 && value_names.size() > (std::uint64_t{1} << width))
    throw std::invalid_argument("waves: probe '" + name + "' has " + std::to_string(value_names.size()) +
                                " value names for " + std::to_string(width) + " bits");
  for (const std::string& v : value_names)
    if (trim(v).empty() || v.find_first_of("\r\n") != std::string::npos)
      throw std::invalid_argument("waves: probe '" + name + "' has a value name that is blank or not one line");
  probes_.push_back(Probe{name, width, std::move(read), 0, 0, std::move(value_names)});
}

void Waves::watch(Clock& clock) {
  if (!enabled()) return;
  clock.after_step([this](Time t) { sample(t); });
}

void Waves::start() {
  if (!enabled()) return;
  if (started_) throw std::logic_error("waves: start() called twice");
  if (probes_.empty()) {
    if (scopes_.empty()) throw std::invalid_argument("--waves: this scenario has no signals to dump");
    std::string some;
    int n = 0;
    for (auto it = scopes_.begin(); it != scopes_.end() && n < 12; ++it, ++n) some += (n ? ", " : "") + *it;
    throw std::invalid_argument("--waves-scope '" + options_.scope + "' matches none of this scenario's signals; its scopes: " +
                                some + (scopes_.size() > 12 ? ", ..." : ""));
  }

  // Declare in name order so each scope is opened once; probes keep registration order.
  std::vector<std::vector<std::string>> parts(probes_.size());
  std::vector<std::size_t> order(probes_.size());
  for (std::size_t i = 0; i < probes_.size(); ++i) {
    parts[i] = split_name(probes_[i].name);
    order[i] = i;
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return parts[a] < parts[b]; });
  for (std::size_t k = 1; k < order.size(); ++k)
    if (parts[order[k]] == parts[order[k - 1]])
      throw std::invalid_argument("waves: probe '" + probes_[order[k]].name +
                                  "' registered twice");

  const auto dir = std::filesystem::path(options_.path).parent_path();
  if (!dir.empty()) {
    std::error_code ignored;  // an unwritable place is reported when the file fails to open
    std::filesystem::create_directories(dir, ignored);
  }
  if (format_of(options_.path) == Format::kVcd)
    writer_ = std::make_unique<VcdWriter>(options_.path);
  else
    writer_ = std::make_unique<FstWriter>(options_.path);

  std::vector<std::string> open;
  for (std::size_t i : order) {
    const auto& p = parts[i];
    std::size_t depth = p.size() - 1, common = 0;
    while (common < open.size() && common < depth && open[common] == p[common]) ++common;
    for (; open.size() > common; open.pop_back()) writer_->pop_scope();
    for (; open.size() < depth; open.push_back(p[open.size()])) writer_->push_scope(p[open.size()]);
    probes_[i].handle = writer_->declare(p.back(), probes_[i].width);
  }
  for (; !open.empty(); open.pop_back()) writer_->pop_scope();
  writer_->end_declarations();
  started_ = true;
}

void Waves::sample(Time now) {
  if (!writer_) return;
  last_time_ = now;
  if (now < options_.window_begin || now > options_.window_end) return;
  if (!primed_) {
    // First sample in the window: every probe's value, so the viewer has a starting point.
    writer_->time(now);
    writer_->begin_initial();
    for (Probe& p : probes_) {
      p.last = p.read() & mask_of(p.width);
      writer_->change(p.handle, p.width, p.last);
    }
    writer_->end_initial();
    primed_ = true;
    return;
  }
  bool stamped = false;
  for (Probe& p : probes_) {
    std::uint64_t v = p.read() & mask_of(p.width);
    if (v == p.last) continue;
    if (!stamped) writer_->time(now);  // no time stamp for a step where nothing changed
    stamped = true;
    if (!changed_) first_change_ = now;
    changed_ = true;
    last_change_ = now;
    writer_->change(p.handle, p.width, v);
    p.last = v;
  }
}

void Waves::finish(Time end) {
  if (!writer_) return;
  // Values set after the last step still count; then the end stamp shows the last values'
  // duration in the viewer.
  if (!writer_->stamped() || end >= writer_->now()) sample(end);
  Time stop = std::min(end, options_.window_end);
  if (primed_ && stop > writer_->now()) writer_->time(stop);
  Time first = writer_->stamped() ? writer_->first() : 0;
  Time last = writer_->stamped() ? writer_->now() : 0;
  std::unique_ptr<WaveWriter> writer = std::move(writer_);
  writer->close();

  write_gtkw(first, last);
}

// gtkwave's trace flags (analyzer.h, TraceEntFlagBits): what each trace line's "@" sets.
constexpr unsigned kTrDec = 1u << 2, kTrBin = 1u << 3, kTrRjustify = 1u << 5, kTrBlank = 1u << 9,
                   kTrFtranslated = 1u << 13, kTrGrpBegin = 1u << 23, kTrGrpEnd = 1u << 24;

void Waves::write_gtkw(Time first, Time last) const {
  namespace fs = std::filesystem;
  auto absolute = [](const std::string& p) { return fs::absolute(p).lexically_normal().string(); };
  const std::string gtkw = gtkw_path();

  // One translate file per distinct list of value names, named after its first probe. gtkwave
  // matches the value as it displays it, and decimal shows it without leading zeros.
  std::map<std::vector<std::string>, std::pair<int, std::string>> translate;  // number, path
  for (const Probe& p : probes_) {
    if (p.value_names.empty() || translate.count(p.value_names)) continue;
    const std::string path = fs::path(options_.path).replace_extension("").string() + "." + p.name + ".txt";
    std::ofstream out(path);
    out << "# gtkwave translate filter: the value names of " << p.name << "\n";
    for (std::size_t v = 0; v < p.value_names.size(); ++v) out << v << " " << p.value_names[v] << "\n";
    out.close();
    if (!out) throw std::runtime_error("error writing gtkwave translate file '" + path + "'");
    translate.emplace(p.value_names, std::make_pair(static_cast<int>(translate.size()) + 1, absolute(path)));
  }

  // The probes grouped by block, in registration order.
  std::vector<std::string> blocks;
  std::unordered_map<std::string, std::vector<const Probe*>> members;
  for (const Probe& p : probes_) {
    std::size_t dot = p.name.rfind('.');
    std::string block = dot == std::string::npos ? "" : p.name.substr(0, dot);
    auto& list = members[block];
    if (list.empty()) blocks.push_back(block);
    list.push_back(&p);
  }

  // Open on where the values change (a long run's short busy period), with a tenth of it as a
  // margin either side; on the recorded span when nothing changed.
  Time view_begin = first, view_end = last;
  if (changed_) {
    const Time busy = last_change_ - first_change_;
    const Time margin = busy > 0 ? busy / 10 : (last - first) / 200;
    view_begin = first_change_ - std::min(margin, first_change_ - first);
    view_end = last_change_ + std::min(margin, last - last_change_);
  }
  // gtkwave shows 2^-zoom time units per 200 pixels; the wave pane of a 1200-pixel-wide window
  // is 620 pixels. It ignores a [timestart] that leaves less than a pane before the end, so
  // leave a little more (it reads the zoom as a float).
  const double width = static_cast<double>(view_end - view_begin);
  const double room = std::min(static_cast<double>(last - first), width * 630.0 / 620.0);
  const Time start = std::min(view_begin, last - static_cast<Time>(room));

  std::ofstream out(gtkw);
  if (!out) throw std::runtime_error("cannot open gtkwave save file '" + gtkw + "'");
  out << "[*] Xingyun waves\n";
  out << "[dumpfile] \"" << absolute(options_.path) << "\"\n";
  out << "[savefile] \"" << absolute(gtkw) << "\"\n";
  out << "[timestart] " << start << "\n";
  out << "[size] 1200 700\n";
  out << "[sst_width] 220\n[signals_width] 280\n[sst_expanded] 1\n";
  if (width > 0) {
    // The marker (the values column) on the first change.
    char line[96];
    std::snprintf(line, sizeof line, "*%f %lld\n", -std::log2(width * 200.0 / 620.0),
                  changed_ ? static_cast<long long>(first_change_) : -1LL);
    out << line;
  }
  // gtkwave reads the "@" flags in hex.
  auto flags = [](unsigned f) {
    char text[16];
    std::snprintf(text, sizeof text, "@%x\n", f);
    return std::string(text);
  };
  for (const std::string& block : blocks) {
    if (!block.empty()) out << flags(kTrGrpBegin | kTrBlank) << "-" << block << "\n";
    for (const Probe* p : members[block]) {
      if (p->width == 1) {
        out << flags(kTrBin | kTrRjustify) << p->name << "\n";
        continue;
      }
      if (p->value_names.empty()) {
        out << flags(kTrDec | kTrRjustify);
      } else {
        const auto& [number, file] = translate.at(p->value_names);
        out << flags(kTrFtranslated | kTrDec | kTrRjustify) << "^" << number << " " << file << "\n";
      }
      out << p->name << range_of(p->width) << "\n";
    }
    if (!block.empty()) out << flags(kTrGrpEnd | kTrBlank) << "-" << block << "\n";
  }
  out.close();
  if (!out) throw std::runtime_error("error writing gtkwave save file '" + gtkw + "'");
}

std::string Waves::gtkw_path() const {
  return std::filesystem::path(options_.path).replace_extension(".gtkw").string();
}

}  // namespace xy
