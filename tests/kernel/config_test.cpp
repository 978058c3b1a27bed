#include "kernel/config.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/test_util.hpp"
#include <unistd.h>

#include <fstream>

namespace xy {
namespace {

using xy::testing::config_error_of;

using ::testing::HasSubstr;

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = "/tmp/xy_cfg_" + std::to_string(getpid()) + "_" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(Config, DefaultsApplyAndAreRecorded) {
  Config c;
  EXPECT_EQ(c.integer("a.b", 7, "cycles", 1, 10, "x"), 7);
  EXPECT_DOUBLE_EQ(c.real("a.r", 0.5, "", 0, 1, "x"), 0.5);
  EXPECT_TRUE(c.flag("a.f", true, "x"));
  EXPECT_EQ(c.choice("a.c", "rs544", {"rs544", "rs272", "none"}, "x"), "rs544");
  EXPECT_EQ(c.effective()["a.b"], 7);
  EXPECT_EQ(c.params().size(), 4u);
}

TEST(Config, ASecondOwnerOfAKeyIsRefusedAtStartUp) {
  Config c;
  c.real("llr.replay_timer_ns", 2000, "ns", 1, 1e9, "replay when no ACK progress this long");
  // A second instance of the same block declares the same parameter: allowed.
  EXPECT_DOUBLE_EQ(c.real("llr.replay_timer_ns", 2000, "ns", 1, 1e9, "replay when no ACK progress this long"), 2000);
  const auto error_of = [&](auto declare) {
    try {
      declare();
    } catch (const std::logic_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_THAT(error_of([&] { c.real("llr.replay_timer_ns", 5000, "ns", 1, 1e9, "replay when no ACK progress this long"); }),
              HasSubstr("'llr.replay_timer_ns' is declared twice with different defaults: '2000.0' and '5000.0'"));
  EXPECT_THAT(error_of([&] { c.real("llr.replay_timer_ns", 2000, "cycles", 1, 1e9, "replay when no ACK progress this long"); }),
              HasSubstr("different units"));
  EXPECT_THAT(error_of([&] { c.real("llr.replay_timer_ns", 2000, "ns", 1, 1e6, "replay when no ACK progress this long"); }),
              HasSubstr("different ranges"));
  EXPECT_THAT(error_of([&] { c.integer("llr.replay_timer_ns", 2000, "ns", 1, 1000000000, "replay when no ACK progress this long"); }),
              HasSubstr("different types"));
  EXPECT_EQ(c.params().size(), 1u);
}

TEST(Config, AFixedKeyIsRefusedNamingItsOwnerAndIsNotListed) {
  Config given;
  given.set_from_assignment("port.fc=pfc");
  EXPECT_THAT(config_error_of([&] { given.fix("port.fc", "lingyun-incast, which runs every mode"); }),
              HasSubstr("port.fc = 'pfc' (--set): set by lingyun-incast, which runs every mode; allowed: leave it unset"));
  Config c;
  c.choice("port.fc", "cbfc", {"cbfc", "pfc", "none"}, "flow control");
  c.fix("port.fc", "lingyun-incast");  // after the block declared it, as before
  c.fix("port.fec", "olink-latency");
  c.choice("port.fec", "rs544", {"rs544", "rs272", "none"}, "FEC");
  ASSERT_EQ(c.params().size(), 2u);
  EXPECT_EQ(c.params()[0].fixed_by, "lingyun-incast");
  EXPECT_EQ(c.params()[1].fixed_by, "olink-latency");
}

TEST(Config, OverridesAreParsedByType) {
  Config c;
  c.set_from_assignment("a.b=9");
  c.set_from_assignment("a.r=0.25");
  c.set_from_assignment("a.f=off");
  c.set_from_assignment("a.c=none");
  EXPECT_EQ(c.integer("a.b", 7, "cycles", 1, 10, "x"), 9);
  EXPECT_DOUBLE_EQ(c.real("a.r", 0.5, "", 0, 1, "x"), 0.25);
  EXPECT_FALSE(c.flag("a.f", true, "x"));
  EXPECT_EQ(c.choice("a.c", "rs544", {"rs544", "none"}, "x"), "none");
  EXPECT_NO_THROW(c.check_all_used());
}

TEST(Config, IntegersAreDecimalWithLeadingZeros) {
  Config c;
  c.set_from_assignment("a.b=010");
  c.set_from_assignment("a.h=0x10");
  EXPECT_EQ(c.integer("a.b", 7, "cycles", 1, 100, "x"), 10);
  EXPECT_THROW(c.integer("a.h", 7, "cycles", 1, 100, "x"), ConfigError);
}

TEST(Config, OutOfRangeNamesKeyValueAndRange) {
  Config c;
  c.set_from_assignment("link.latency_cycles=-3");
  const std::string e = config_error_of([&] { c.integer("link.latency_cycles", 8, "cycles", 1, 100, "x"); });
  EXPECT_THAT(e, HasSubstr("link.latency_cycles"));
  EXPECT_THAT(e, HasSubstr("-3"));
  EXPECT_THAT(e, HasSubstr("[1, 100]"));
}

TEST(Config, WrongTypesAreErrors) {
  Config c;
  c.set_from_assignment("i=12abc");
  c.set_from_assignment("r=fast");
  c.set_from_assignment("f=maybe");
  c.set_from_assignment("c=rs999");
  EXPECT_THAT(config_error_of([&] { c.integer("i", 1, "", 0, 100, ""); }), HasSubstr("must be an integer"));
  EXPECT_THAT(config_error_of([&] { c.real("r", 1, "", 0, 100, ""); }), HasSubstr("must be a number"));
  EXPECT_THAT(config_error_of([&] { c.flag("f", true, ""); }), HasSubstr("true or false"));
  EXPECT_THAT(config_error_of([&] { c.choice("c", "a", {"rs544", "rs272"}, ""); }), HasSubstr("one of rs544, rs272"));
}

TEST(Config, UnknownKeyIsAnError) {
  Config c;
  c.set_from_assignment("no.such.key=1");
  c.integer("a", 1, "", 0, 2, "");
  EXPECT_THAT(config_error_of([&] { c.check_all_used(); }), HasSubstr("unknown parameter 'no.such.key'"));
}

TEST(Config, AssignmentWithoutEqualsIsAnError) {
  Config c;
  EXPECT_THAT(config_error_of([&] { c.set_from_assignment("latency"); }), HasSubstr("expected key=value"));
}

TEST(Config, YamlParamsFlattenToDottedKeysWithFileAndLine) {
  const std::string path = write_temp("ok.yaml",
                                      "scenario: link-basic\nseed: 42\nparams:\n  link:\n    latency_cycles: 12\n"
                                      "  traffic.load: 2.0\n");
  Config c;
  std::uint64_t seed = 1;
  EXPECT_EQ(c.load_yaml_file(path, &seed), "link-basic");
  EXPECT_EQ(seed, 42u);
  EXPECT_EQ(c.integer("link.latency_cycles", 8, "", 1, 100, ""), 12);
  const std::string e = config_error_of([&] { c.real("traffic.load", 0.5, "", 0, 1, ""); });
  EXPECT_THAT(e, HasSubstr(path + ":6"));  // where the bad value stands
}

TEST(Config, YamlSyntaxErrorNamesFileLineAndColumn) {
  const std::string path = write_temp("bad.yaml", "scenario: link-basic\nparams:\n  link: {latency_cycles: 4\n");
  Config c;
  std::uint64_t seed = 1;
  const std::string e = config_error_of([&] { c.load_yaml_file(path, &seed); });
  EXPECT_THAT(e, HasSubstr(path + ":"));
  EXPECT_THAT(e, HasSubstr("YAML syntax error"));
}

TEST(Config, YamlUnknownTopLevelKeyIsAnError) {
  const std::string path = write_temp("top.yaml", "scenario: link-basic\nparamz: {}\n");
  Config c;
  std::uint64_t seed = 1;
  EXPECT_THAT(config_error_of([&] { c.load_yaml_file(path, &seed); }), HasSubstr("unknown key 'paramz'"));
}

}  // namespace
}  // namespace xy
