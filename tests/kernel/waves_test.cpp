#include "kernel/waves.hpp"

#include <gtest/gtest.h>

#include "tests/test_util.hpp"
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "fstapi.h"
#include "kernel/clock.hpp"

namespace xy {
namespace {

namespace fs = std::filesystem;

using xy::testing::TempDir;

WavesOptions to(const std::string& path) {
  WavesOptions o;
  o.path = path;
  return o;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Change {
  Time time;
  std::string name;  // full dotted name, without the range
  std::string value;  // binary digits as written
  bool operator==(const Change& o) const {
    return std::tie(time, name, value) == std::tie(o.time, o.name, o.value);
  }
};

std::ostream& operator<<(std::ostream& os, const Change& c) {
  return os << "{" << c.time << ", " << c.name << ", " << c.value << "}";
}

// A small VCD reader: full names from the $scope nesting, then every value change.
struct Vcd {
  std::map<std::string, std::string> names;   // id -> full name
  std::map<std::string, unsigned> widths;     // full name -> width
  std::vector<Time> stamps;
  std::vector<Change> changes;
};

Vcd parse_vcd(const std::string& text) {
  Vcd vcd;
  std::istringstream in(text);
  std::vector<std::string> scope;
  std::string tok;
  Time now = 0;
  while (in >> tok) {
    if (tok == "$scope") {
      std::string kind, name, end;
      in >> kind >> name >> end;
      scope.push_back(name);
    } else if (tok == "$upscope") {
      in >> tok;
      scope.pop_back();
    } else if (tok == "$var") {
      std::string type, id, name, rest;
      unsigned width;
      in >> type >> width >> id >> name;
      while (in >> rest && rest != "$end") {
      }
      std::string full;
      for (const auto& s : scope) full += s + ".";
      vcd.names[id] = full + name;
      vcd.widths[full + name] = width;
    } else if (tok[0] == '$') {
      if (tok != "$dumpvars" && tok != "$end" && tok != "$enddefinitions")
        while (in >> tok && tok != "$end") {
        }
      else if (tok == "$enddefinitions")
        in >> tok;
    } else if (tok[0] == '#') {
      now = std::stoull(tok.substr(1));
      vcd.stamps.push_back(now);
    } else if (tok[0] == 'b') {
      std::string id;
      in >> id;
      vcd.changes.push_back({now, vcd.names.at(id), tok.substr(1)});
    } else {
      vcd.changes.push_back({now, vcd.names.at(tok.substr(1)), tok.substr(0, 1)});
    }
  }
  return vcd;
}

// Three probes in two blocks plus one outside the "top.link" scope.
struct Design {
  std::uint64_t valid = 0, count = 0, other = 0;
  void attach(Waves& w) {
    w.probe("top.link.valid", 1, [this] { return valid; });
    w.probe("top.link.sink.count", 16, [this] { return count; });
    w.probe("top.other.x", 8, [this] { return other; });
  }
};

TEST(Waves, VcdHasHeaderScopesAndChangesAtTheirTimes) {
  TempDir tmp;
  const std::string path = tmp.file("run.vcd");
  Design d;
  {
    Waves w(to(path));
    d.attach(w);
    EXPECT_EQ(w.probe_count(), 3u);
    w.start();
    d.count = 5;
    w.sample(1000);  // initial values
    d.count = 6;
    w.sample(2000);
    w.sample(3000);  // nothing changed: no #3000
    d.valid = 1;
    d.other = 0xab;
    w.sample(4000);
    w.finish(5000);
  }
  const std::string text = read_text(path);
  EXPECT_NE(text.find("$timescale 1fs $end"), std::string::npos);
  EXPECT_NE(text.find("$scope module top $end\n$scope module link $end\n"), std::string::npos);
  EXPECT_NE(text.find("$scope module sink $end"), std::string::npos);
  EXPECT_NE(text.find("$enddefinitions $end"), std::string::npos);
  EXPECT_NE(text.find("#1000\n$dumpvars\n"), std::string::npos);

  const Vcd vcd = parse_vcd(text);
  EXPECT_EQ(vcd.widths.at("top.link.valid"), 1u);
  EXPECT_EQ(vcd.widths.at("top.link.sink.count"), 16u);
  EXPECT_EQ(vcd.widths.at("top.other.x"), 8u);
  EXPECT_NE(text.find(" count [15:0] $end"), std::string::npos);
  EXPECT_NE(text.find(" valid $end"), std::string::npos);

  EXPECT_EQ(vcd.stamps, (std::vector<Time>{1000, 2000, 4000, 5000}));
  const std::vector<Change> want = {
      {1000, "top.link.sink.count", "101"}, {1000, "top.link.valid", "0"},
      {1000, "top.other.x", "0"},           {2000, "top.link.sink.count", "110"},
      {4000, "top.link.valid", "1"},        {4000, "top.other.x", "10101011"},
  };
  std::vector<Change> got = vcd.changes;
  std::sort(got.begin(), got.end(), [](const Change& a, const Change& b) {
    return std::tie(a.time, a.name) < std::tie(b.time, b.name);
  });
  EXPECT_EQ(got, want);
}

TEST(Waves, VcdWindowKeepsOnlyChangesInsideAndStartsWithAllValues) {
  TempDir tmp;
  const std::string path = tmp.file("win.vcd");
  Design d;
  WavesOptions o;
  o.path = path;
  o.window_begin = 2000;
  o.window_end = 4000;
  Waves w(o);
  d.attach(w);
  w.start();
  for (Time t = 1000; t <= 6000; t += 1000) {
    d.count = t / 1000;  // changes every sample
    if (t == 1000) d.valid = 1;  // set before the window, must appear in the initial values
    w.sample(t);
  }
  w.finish(7000);
  const Vcd vcd = parse_vcd(read_text(path));
  EXPECT_EQ(vcd.stamps, (std::vector<Time>{2000, 3000, 4000}));
  const std::vector<Change> want = {
      {2000, "top.link.valid", "1"},        {2000, "top.link.sink.count", "10"},
      {2000, "top.other.x", "0"},           {3000, "top.link.sink.count", "11"},
      {4000, "top.link.sink.count", "100"},
  };
  EXPECT_EQ(vcd.changes, want);
}

TEST(Waves, ScopeFilterDropsProbesOutsideIt) {
  TempDir tmp;
  const std::string path = tmp.file("scope.vcd");
  Design d;
  WavesOptions o;
  o.path = path;
  o.scope = "top.link";
  Waves w(o);
  d.attach(w);
  EXPECT_EQ(w.probe_count(), 2u);
  w.start();
  w.sample(10);
  d.other = 3;
  d.count = 1;
  w.sample(20);
  w.finish(30);
  const std::string text = read_text(path);
  EXPECT_EQ(text.find("other"), std::string::npos);
  const Vcd vcd = parse_vcd(text);
  EXPECT_EQ(vcd.names.size(), 2u);
  EXPECT_EQ(vcd.changes.back(), (Change{20, "top.link.sink.count", "1"}));
}

struct FstRead {
  std::map<fstHandle, std::string> names;
  std::vector<Change> changes;
};

FstRead read_fst(const std::string& path, std::uint64_t* var_count, int* timescale) {
  FstRead r;
  void* ctx = fstReaderOpen(path.c_str());
  if (!ctx) throw std::runtime_error("fstReaderOpen failed on " + path);
  *var_count = fstReaderGetVarCount(ctx);
  *timescale = fstReaderGetTimescale(ctx);
  std::vector<std::string> scope;
  while (fstHier* h = fstReaderIterateHier(ctx)) {
    if (h->htyp == FST_HT_SCOPE) {
      scope.emplace_back(h->u.scope.name);
    } else if (h->htyp == FST_HT_UPSCOPE) {
      scope.pop_back();
    } else if (h->htyp == FST_HT_VAR) {
      std::string full;
      for (const auto& s : scope) full += s + ".";
      r.names[h->u.var.handle] = full + h->u.var.name;
    }
  }
  fstReaderSetFacProcessMaskAll(ctx);
  fstReaderIterBlocks(
      ctx,
      [](void* user, std::uint64_t time, fstHandle handle, const unsigned char* value) {
        auto* r = static_cast<FstRead*>(user);
        r->changes.push_back({time, r->names.at(handle), reinterpret_cast<const char*>(value)});
      },
      &r, nullptr);
  fstReaderClose(ctx);
  return r;
}

TEST(Waves, FstReadsBackTheWrittenChanges) {
  TempDir tmp;
  const std::string path = tmp.file("run.fst");
  Design d;
  Waves w(to(path));
  d.attach(w);
  w.start();
  d.count = 5;
  w.sample(1000);
  d.count = 6;
  w.sample(2000);
  w.sample(3000);
  d.valid = 1;
  w.sample(4000);
  w.finish(5000);

  std::uint64_t vars = 0;
  int timescale = 0;
  FstRead r = read_fst(path, &vars, &timescale);
  EXPECT_EQ(vars, 3u);
  EXPECT_EQ(timescale, -15);
  EXPECT_EQ(r.names.size(), 3u);
  std::sort(r.changes.begin(), r.changes.end(), [](const Change& a, const Change& b) {
    return std::tie(a.time, a.name) < std::tie(b.time, b.name);
  });
  const std::vector<Change> want = {
      {1000, "top.link.sink.count [15:0]", "0000000000000101"},
      {1000, "top.link.valid", "0"},
      {1000, "top.other.x [7:0]", "00000000"},
      {2000, "top.link.sink.count [15:0]", "0000000000000110"},
      {4000, "top.link.valid", "1"},
  };
  EXPECT_EQ(r.changes, want);
}

TEST(Waves, GtkwGroupsProbesByBlock) {
  TempDir tmp;
  const std::string path = tmp.file("g.fst");
  Design d;
  Waves w(to(path));
  d.attach(w);
  EXPECT_EQ(w.gtkw_path(), tmp.file("g.gtkw"));
  w.start();
  w.sample(100);
  w.finish(200);
  const std::string text = read_text(w.gtkw_path());
  EXPECT_NE(text.find("[dumpfile] \"" + fs::absolute(path).string() + "\"\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("[timestart] 100\n"), std::string::npos) << text;
  // Registration order: top.link, then top.link.sink, then top.other.
  const std::string link = "@800200\n-top.link\n@28\ntop.link.valid\n@1000200\n-top.link\n";
  const std::string sink =
      "@800200\n-top.link.sink\n@24\ntop.link.sink.count[15:0]\n@1000200\n-top.link.sink\n";
  const std::string other = "@800200\n-top.other\n@24\ntop.other.x[7:0]\n@1000200\n-top.other\n";
  const auto at_link = text.find(link), at_sink = text.find(sink), at_other = text.find(other);
  ASSERT_NE(at_link, std::string::npos) << text;
  ASSERT_NE(at_sink, std::string::npos) << text;
  ASSERT_NE(at_other, std::string::npos) << text;
  EXPECT_LT(at_link, at_sink);
  EXPECT_LT(at_sink, at_other);
}

// gtkwave's trace flag bits (analyzer.h, enum TraceEntFlagBits).
constexpr std::uint64_t kTrHex = 1 << 1, kTrDec = 1 << 2, kTrBin = 1 << 3, kTrRjustify = 1 << 5,
                        kTrFtranslated = 1 << 13;

// A .gtkw read as gtkwave reads it (savefile.c): "@<hex>" sets the flags of the traces after
// it, "^<n> <file>" their translate filter file (n 0: none), "-<text>" is a comment trace,
// "*<zoom> <marker> ..." the zoom and primary marker (-1: none), "[key] value" a setting, and
// any other line a trace. A trace takes the last filter only if its flags say translated
// (analyzer.c).
struct Gtkw {
  struct Trace {
    std::string name;
    std::uint64_t flags;
    std::string filter;
  };
  std::vector<Trace> traces;
  std::map<std::string, std::string> settings;
  bool zoomed = false;
  double zoom = 0;
  long long marker = -1;
  const Trace& trace(const std::string& name) const {
    for (const Trace& t : traces)
      if (t.name == name) return t;
    throw std::runtime_error("no trace " + name);
  }
};

Gtkw parse_gtkw(const std::string& text) {
  Gtkw g;
  std::istringstream in(text);
  std::string line, filter;
  std::uint64_t flags = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '-') continue;
    if (line[0] == '@') {
      flags = std::stoull(line.substr(1), nullptr, 16);
    } else if (line[0] == '^') {
      std::istringstream f(line.substr(1));
      int n = 0;
      f >> n >> std::ws;
      std::getline(f, filter);
      if (n == 0) filter.clear();
    } else if (line[0] == '*') {
      std::istringstream z(line.substr(1));
      z >> g.zoom >> g.marker;
      g.zoomed = true;
    } else if (line[0] == '[') {
      const auto close = line.find(']');
      g.settings[line.substr(1, close - 1)] = line.size() > close + 2 ? line.substr(close + 2) : "";
    } else {
      g.traces.push_back({line, flags, flags & kTrFtranslated ? filter : ""});
    }
  }
  return g;
}

// A translate filter file as gtkwave loads it (translate.c, load_file_filter): per line, after
// leading blanks, '#' starts a comment; else the first word is the value as displayed and the
// rest, blanks trimmed, the text shown instead.
std::map<std::string, std::string> read_filter(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open filter " + path);
  std::map<std::string, std::string> names;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream l(line);
    std::string value, name;
    if (!(l >> value) || value[0] == '#') continue;
    std::getline(l >> std::ws, name);
    while (!name.empty() && std::isspace(static_cast<unsigned char>(name.back()))) name.pop_back();
    if (!name.empty()) names[value] = name;
  }
  return names;
}

TEST(Waves, GtkwShowsCountersInDecimalAndBitsInBinary) {
  TempDir tmp;
  Design d;
  Waves w(to(tmp.file("f.vcd")));
  d.attach(w);
  w.start();
  w.sample(100);
  w.finish(200);
  const Gtkw g = parse_gtkw(read_text(w.gtkw_path()));
  const auto count = g.trace("top.link.sink.count[15:0]").flags;
  EXPECT_TRUE(count & kTrDec) << count;
  EXPECT_FALSE(count & (kTrHex | kTrBin | kTrFtranslated)) << count;
  EXPECT_TRUE(count & kTrRjustify) << count;
  const auto valid = g.trace("top.link.valid").flags;
  EXPECT_TRUE(valid & kTrBin) << valid;
  EXPECT_FALSE(valid & (kTrDec | kTrFtranslated)) << valid;
}

TEST(Waves, GtkwNamesStatesThroughATranslateFile) {
  TempDir tmp;
  const std::vector<std::string> tx = {"INIT", "ADVANCE", "REPLAY", "FLUSH"};
  const std::vector<std::string> rx = {"SEND_ACKS", "SEND_NACK", "NACK_SENT"};
  std::uint64_t state = 0;
  Waves w(to(tmp.file("s.fst")));
  w.probe("top.a.llr.tx_state", 2, [&] { return state; }, tx);
  w.probe("top.b.llr.tx_state", 2, [&] { return state; }, tx);
  w.probe("top.a.llr.rx_state", 2, [&] { return state; }, rx);
  w.probe("top.a.llr.kept", 32, [&] { return state; });
  w.start();
  w.sample(100);
  state = 2;
  w.sample(200);
  w.finish(300);
  const Gtkw g = parse_gtkw(read_text(w.gtkw_path()));

  const Gtkw::Trace& a = g.trace("top.a.llr.tx_state[1:0]");
  const Gtkw::Trace& b = g.trace("top.b.llr.tx_state[1:0]");
  const Gtkw::Trace& r = g.trace("top.a.llr.rx_state[1:0]");
  for (const Gtkw::Trace* t : {&a, &b, &r}) {
    EXPECT_TRUE(t->flags & kTrFtranslated) << t->name << " " << t->flags;
    // The filter's left side is the value as gtkwave displays it: decimal, no leading zeros.
    EXPECT_TRUE(t->flags & kTrDec) << t->name << " " << t->flags;
    // Absolute, so the save file works when gtkwave is started elsewhere.
    EXPECT_TRUE(fs::path(t->filter).is_absolute()) << t->filter;
  }
  EXPECT_EQ(a.filter, b.filter);  // one file per list of names
  EXPECT_NE(a.filter, r.filter);
  EXPECT_EQ(read_filter(a.filter), (std::map<std::string, std::string>{
                                       {"0", "INIT"}, {"1", "ADVANCE"}, {"2", "REPLAY"}, {"3", "FLUSH"}}));
  EXPECT_EQ(read_filter(r.filter), (std::map<std::string, std::string>{
                                       {"0", "SEND_ACKS"}, {"1", "SEND_NACK"}, {"2", "NACK_SENT"}}));
  EXPECT_TRUE(g.trace("top.a.llr.kept[31:0]").filter.empty());
  EXPECT_FALSE(g.trace("top.a.llr.kept[31:0]").flags & kTrFtranslated);
}

TEST(Waves, RejectsValueNamesGtkwaveCannotShow) {
  TempDir tmp;
  Waves w(to(tmp.file("n.vcd")));
  auto zero = [] { return std::uint64_t{0}; };
  EXPECT_THROW(w.probe("top.bit", 1, zero, {"OFF", "ON"}), std::invalid_argument);  // not a vector
  EXPECT_THROW(w.probe("top.few", 2, zero, {"A", "B", "C", "D", "E"}), std::invalid_argument);
  EXPECT_THROW(w.probe("top.blank", 2, zero, {"A", " "}), std::invalid_argument);
  EXPECT_THROW(w.probe("top.lines", 2, zero, {"A", "B\nC"}), std::invalid_argument);
  w.probe("top.ok", 2, zero, {"A", "B", "C", "D"});
  EXPECT_EQ(w.probe_count(), 1u);
}

// gtkwave shows 2^-zoom time units per 200 pixels (wavewindow.c, calczoom): the time a wave
// pane `pixels` wide shows.
double shown(const Gtkw& g, double pixels) { return std::pow(2.0, -g.zoom) * pixels / 200.0; }

TEST(Waves, GtkwOpensOnTheBusyPeriodOfALongRun) {
  TempDir tmp;
  std::uint64_t v = 0;
  Waves w(to(tmp.file("z.vcd")));
  w.probe("top.v", 8, [&] { return v; });
  w.start();
  for (Time t = 0; t <= 100 * kUs; t += kUs / 4) {
    if (t >= 10 * kUs && t <= 12 * kUs) v = t / (kUs / 4);  // busy from 10 to 12 us only
    w.sample(t);
  }
  w.finish(100 * kUs);
  const Gtkw g = parse_gtkw(read_text(w.gtkw_path()));
  ASSERT_TRUE(g.zoomed);
  const double start = std::stod(g.settings.at("timestart"));
  // The wave pane of the 1200-pixel window is 620 pixels wide (gtkwave 3.3 under xvfb).
  EXPECT_LE(start, 10.0 * kUs);
  EXPECT_GE(start, 9.0 * kUs);
  EXPECT_GE(start + shown(g, 620), 12.0 * kUs);
  EXPECT_LE(shown(g, 620), 3.0 * kUs);  // the busy period fills the pane, not the run
  EXPECT_EQ(g.marker, static_cast<long long>(10 * kUs));
}

TEST(Waves, GtkwTimestartLeavesAPaneBeforeTheEnd) {
  // gtkwave ignores a [timestart] later than the dump's end less the pane (gw-wave-view.c).
  TempDir tmp;
  std::uint64_t v = 0;
  Waves w(to(tmp.file("e.vcd")));
  w.probe("top.v", 8, [&] { return v; });
  w.start();
  for (Time t = 0; t <= 100 * kUs; t += kUs) {
    if (t >= 95 * kUs) v = t / kUs;
    w.sample(t);
  }
  w.finish(100 * kUs);
  const Gtkw g = parse_gtkw(read_text(w.gtkw_path()));
  const double start = std::stod(g.settings.at("timestart"));
  EXPECT_LE(start + shown(g, 620), 100.0 * kUs);
  EXPECT_LE(start, 95.0 * kUs);
  EXPECT_GE(start + shown(g, 620), 99.0 * kUs);
  EXPECT_LE(shown(g, 620), 10.0 * kUs);
}

TEST(Waves, GtkwWithoutChangesFitsTheRecordedSpan) {
  TempDir tmp;
  Waves w(to(tmp.file("q.vcd")));
  w.probe("top.v", 8, [] { return std::uint64_t{7}; });
  w.start();
  w.sample(1000);
  w.finish(5000);
  const Gtkw g = parse_gtkw(read_text(w.gtkw_path()));
  EXPECT_EQ(g.settings.at("timestart"), "1000");
  EXPECT_EQ(g.marker, -1);
  EXPECT_NEAR(shown(g, 620), 4000.0, 1.0);
}

TEST(Waves, UnknownExtensionThrowsNamingThePath) {
  try {
    Waves w(to("out/trace.txt"));
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("out/trace.txt"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(".vcd or .fst"), std::string::npos) << e.what();
  }
  EXPECT_THROW(Waves(to("noext")), std::invalid_argument);
}

TEST(Waves, UnopenableFileIsBadInputNamingThePath) {
  // Under a file, so no folder can be made for them.
  for (const std::string path : {"/dev/null/dir/a.vcd", "/dev/null/dir/a.fst"}) {
    Waves w(to(path));
    w.probe("top.a", 1, [] { return 0; });
    try {
      w.start();
      FAIL() << "no exception for " << path;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    }
  }
}

TEST(Waves, AScopeMatchingNoProbeIsBadInputNamingTheScopesThereAre) {
  WavesOptions o = to("/tmp/xy_waves_scope_test.vcd");
  o.scope = "top.c";
  Waves w(o);
  w.probe("top.a.x", 1, [] { return 0; });
  w.probe("top.b.y", 1, [] { return 0; });
  try {
    w.start();
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "--waves-scope 'top.c' matches none of this scenario's signals; its scopes: top.a, top.b");
  }
}

TEST(Waves, DisabledRecorderIgnoresEverything) {
  Waves w;
  EXPECT_FALSE(w.enabled());
  w.probe("top.a", 1, [] { return 1; });
  EXPECT_EQ(w.probe_count(), 0u);
  w.start();
  w.sample(10);
  w.finish(20);
}

TEST(Waves, DestructorClosesAnOpenDump) {
  TempDir tmp;
  const std::string path = tmp.file("d.vcd");
  std::uint64_t v = 0;
  {
    Waves w(to(path));
    w.probe("top.v", 4, [&] { return v; });
    w.start();
    w.sample(10);
    v = 3;
    w.sample(20);
  }
  const Vcd vcd = parse_vcd(read_text(path));
  EXPECT_EQ(vcd.changes.back(), (Change{20, "top.v", "11"}));
  EXPECT_TRUE(fs::exists(tmp.file("d.gtkw")));
}

TEST(Waves, ValuesAreMaskedToTheirWidth) {
  TempDir tmp;
  const std::string path = tmp.file("m.vcd");
  Waves w(to(path));
  w.probe("top.wide", 64, [] { return ~std::uint64_t{0}; });
  w.probe("top.nib", 4, [] { return std::uint64_t{0x1f}; });
  w.start();
  w.sample(0);
  w.finish(1);
  const Vcd vcd = parse_vcd(read_text(path));
  ASSERT_EQ(vcd.changes.size(), 2u);
  EXPECT_EQ(vcd.changes[0], (Change{0, "top.wide", std::string(64, '1')}));
  EXPECT_EQ(vcd.changes[1], (Change{0, "top.nib", "1111"}));
}

TEST(Waves, RejectsBadProbes) {
  TempDir tmp;
  Waves w(to(tmp.file("bad.vcd")));
  EXPECT_THROW(w.probe("top.zero", 0, [] { return 0; }), std::invalid_argument);
  EXPECT_THROW(w.probe("top.huge", 65, [] { return 0; }), std::invalid_argument);
  EXPECT_THROW(w.probe("top..gap", 1, [] { return 0; }), std::invalid_argument);
  EXPECT_THROW(w.probe("top.has space", 1, [] { return 0; }), std::invalid_argument);
  w.probe("top.a", 1, [] { return 0; });
  w.probe("top.a", 1, [] { return 0; });
  EXPECT_THROW(w.start(), std::invalid_argument);  // registered twice
}

TEST(Waves, ProbeAfterStartIsAnError) {
  TempDir tmp;
  Waves w(to(tmp.file("late.vcd")));
  w.probe("top.a", 1, [] { return 0; });
  w.start();
  EXPECT_THROW(w.probe("top.b", 1, [] { return 0; }), std::logic_error);
}

TEST(Waves, ParseWindowAcceptsOpenEnds) {
  Time b = 1, e = 1;
  WavesOptions::parse_window("10us:12us", &b, &e);
  EXPECT_EQ(b, 10 * kUs);
  EXPECT_EQ(e, 12 * kUs);
  WavesOptions::parse_window(":5us", &b, &e);
  EXPECT_EQ(b, 0u);
  EXPECT_EQ(e, 5 * kUs);
  WavesOptions::parse_window("1us:", &b, &e);
  EXPECT_EQ(b, kUs);
  EXPECT_EQ(e, ~Time{0});
  for (const char* bad : {"10us", "5us:1us", "x:1us"}) {
    try {
      WavesOptions::parse_window(bad, &b, &e);
      FAIL() << "no exception for " << bad;
    } catch (const std::invalid_argument& ex) {
      EXPECT_NE(std::string(ex.what()).find(bad), std::string::npos) << ex.what();
    }
  }
}

// A core that counts its ticks, to see the clock drive sample().
class Counter : public Core {
 public:
  Counter() : Core("top.counter") {}
  void eval() override { next_ = value_ + 1; }
  void commit() override { value_ = next_; }
  std::uint64_t value_ = 0, next_ = 0;
};

TEST(Waves, WatchSamplesAfterEveryClockStep) {
  TempDir tmp;
  const std::string path = tmp.file("clk.vcd");
  Clock clk("clk", 1000);
  Counter c;
  clk.attach(c);
  Waves w(to(path));
  w.probe("top.counter.value", 8, [&] { return c.value_; });
  w.watch(clk);
  w.start();
  clk.wake(c, 1);
  clk.wake(c, 3);
  clk.run();
  w.finish(4000);
  const Vcd vcd = parse_vcd(read_text(path));
  const std::vector<Change> want = {{1000, "top.counter.value", "1"},
                                    {3000, "top.counter.value", "10"}};
  EXPECT_EQ(vcd.changes, want);
  EXPECT_EQ(vcd.stamps, (std::vector<Time>{1000, 3000, 4000}));
}

}  // namespace
}  // namespace xy
