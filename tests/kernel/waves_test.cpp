#include "kernel/waves.hpp"

#include <gtest/gtest.h>

#include "tests/test_util.hpp"
#include <unistd.h>

#include <algorithm>
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
      "@800200\n-top.link.sink\n@22\ntop.link.sink.count[15:0]\n@1000200\n-top.link.sink\n";
  const std::string other = "@800200\n-top.other\n@22\ntop.other.x[7:0]\n@1000200\n-top.other\n";
  const auto at_link = text.find(link), at_sink = text.find(sink), at_other = text.find(other);
  ASSERT_NE(at_link, std::string::npos) << text;
  ASSERT_NE(at_sink, std::string::npos) << text;
  ASSERT_NE(at_other, std::string::npos) << text;
  EXPECT_LT(at_link, at_sink);
  EXPECT_LT(at_sink, at_other);
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
