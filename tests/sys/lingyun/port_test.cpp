// The RTL twins in composed Lingyun ports (llr.impl=rtl, cbfc.impl=rtl): which ends a PortLink
// builds, and the configurations the twins cannot take, refused naming the key. That the twins'
// results are the models' is Cli.lingyun_rtl_dropin_identical.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sys/lingyun/port.hpp"
#include "rtl/link/cbfc_sender_twin.hpp"
#include "rtl/link/llr_twins.hpp"
#include "kernel/units.hpp"

namespace xy::lingyun {
namespace {

PortParams declare(const std::vector<std::string>& sets, int vcs = 2) {
  Config c;
  for (const auto& s : sets) c.set_from_assignment(s);
  PortParams p = PortParams::declare(c, vcs);
  c.check_all_used();
  return p;
}

// A 2 m link between two cores on one clock.
struct Rig {
  explicit Rig(const PortParams& p)
      : phy("phy", p.phy.period()), core("core", period_from_mhz(1000)),
        link(names, p, 2.0, phy, core, core, stats, 1, pool) {}
  std::string names[2] = {"top.a.port0", "top.b.port0"};
  Clock phy, core;
  Stats stats;
  PacketPool pool;
  PortLink link;
};

bool llr_twins(const link::Mac& mac) {
  return dynamic_cast<const rtl::LlrTxTwin*>(&mac.llr_tx()) && dynamic_cast<const rtl::LlrRxTwin*>(&mac.llr_rx());
}
bool cbfc_twin(const link::PortFc& fc) { return dynamic_cast<const rtl::CbfcSenderTwin*>(&fc.cbfc_sender()) != nullptr; }

TEST(LingyunRtl, ByDefaultEveryPortRunsTheModels) {
  Rig r(declare({}));
  for (int s = 0; s < 2; ++s) {
    EXPECT_FALSE(llr_twins(r.link.mac(s)));
    EXPECT_FALSE(cbfc_twin(r.link.fc(s)));
  }
}

TEST(LingyunRtl, TheTwinsReplaceTheModelsAtBothEndsOfALink) {
  Rig r(declare({"llr.impl=rtl", "cbfc.impl=rtl"}));
  for (int s = 0; s < 2; ++s) {
    EXPECT_TRUE(llr_twins(r.link.mac(s))) << s;
    EXPECT_TRUE(cbfc_twin(r.link.fc(s))) << s;
    // The twin's counters start where the model's do: the link's whole buffer free.
    EXPECT_EQ(r.link.fc(s).cbfc_sender().credits_available(0), r.link.params().cbfc.config.buffer_credits[0]);
  }
}

TEST(LingyunRtl, EachChoiceIsIndependent) {
  Rig llr(declare({"llr.impl=rtl"}));
  EXPECT_TRUE(llr_twins(llr.link.mac(0)));
  EXPECT_FALSE(cbfc_twin(llr.link.fc(0)));
  Rig cbfc(declare({"cbfc.impl=rtl"}));
  EXPECT_FALSE(llr_twins(cbfc.link.mac(0)));
  EXPECT_TRUE(cbfc_twin(cbfc.link.fc(0)));
}

// lingyun-fec-llr's rs544 design turns LLR off: nothing of LLR runs there, the model transmitter
// only lets frames through.
TEST(LingyunRtl, APortWithoutLlrKeepsTheModelTransmitter) {
  PortParams p = declare({"llr.impl=rtl", "cbfc.impl=rtl"});
  p.llr = false;
  Rig r(p);
  EXPECT_FALSE(dynamic_cast<const rtl::LlrTxTwin*>(&r.link.mac(0).llr_tx()));
  EXPECT_TRUE(cbfc_twin(r.link.fc(0)));
}

void expect_refused(const std::vector<std::string>& sets, const std::string& words) {
  try {
    declare(sets);
    ADD_FAILURE() << "accepted; expected: " << words;
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(LingyunRtl, ConfigurationsTheTwinsAreNotBuiltForAreRefusedNamingTheKey) {
  expect_refused({"llr.impl=rtl", "llr.seq_bits=16"}, "llr.seq_bits = 16: the RTL twins (llr.impl=rtl)");
  expect_refused({"llr.impl=rtl", "llr.replay_limit=300"}, "llr.replay_limit = 300: the RTL twins");
  expect_refused({"llr.impl=rtl", "llr.ack_every=70000"}, "llr.ack_every = 70000: the RTL twins");
  expect_refused({"cbfc.impl=rtl", "port.fc=pfc"}, "cbfc.impl = 'rtl' with port.fc = 'pfc'");
  expect_refused({"cbfc.impl=rtl", "port.fc=none"}, "allowed with port.fc=cbfc only");
  // What the models take alone is no business of the twins'.
  EXPECT_NO_THROW(declare({"llr.seq_bits=16", "port.fc=pfc"}));
}

// The twin keeps 4096 frames: a replay buffer of more than 4096 frames of 64 B is refused per link.
TEST(LingyunRtl, ALinkWhoseReplayBufferIsBeyondTheTwinIsRefused) {
  // 300 m: a NACK's replay takes over 3 us to come back, so the model's NACK timer is raised.
  const PortParams rtl = declare({"llr.impl=rtl"}), model = declare({"llr.nack_timer_ns=4000"});
  EXPECT_EQ(rtl.reach_problem(2), "");
  EXPECT_LE(rtl.replay_buffer_bytes(2), 4096u * 64);
  ASSERT_GT(rtl.replay_buffer_bytes(300), 4096u * 64);
  EXPECT_NE(rtl.reach_problem(300).find("beyond the RTL twins (llr.impl=rtl)"), std::string::npos)
      << rtl.reach_problem(300);
  EXPECT_EQ(model.reach_problem(300), "");
  PortParams off = rtl;
  off.llr = false;
  EXPECT_EQ(off.reach_problem(300), "");
}

}  // namespace
}  // namespace xy::lingyun
