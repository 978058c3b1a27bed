// The fabric builder (sys/lingyun/fabric.hpp): fabrics of composed ports built from small
// topology files on plain clocks (nothing runs), their switches, ports and port names, the next
// hops worked out by hand, each link's cable and settings as its topology line gives them, and
// the fabrics that cannot be built refused with their reason.
#include "sys/lingyun/fabric.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "tests/sys/lingyun/leaf_spine.hpp"
#include "tests/test_util.hpp"

namespace xy::lingyun {
namespace {

using Ports = std::vector<int>;

using testing::kLeafSpine;  // tests/sys/lingyun/leaf_spine.hpp: its ports are worked out there

// The PHY clock of 8 lanes at 106.25 Gb/s, 40 bits a lane a cycle: 376.471 ps.
constexpr Time kPhyPeriod = 376471;

// Cycles of a link's path: PMA TX 10 ns, 5 ns a metre of cable, PMA RX 10 ns, 1 ns of lane skew,
// rounded up to whole PHY cycles.
Cycle path_cycles(double cable_m) {
  const Time fs = static_cast<Time>((21 + 5 * cable_m) * 1e6 + 0.5);
  return (fs + kPhyPeriod - 1) / kPhyPeriod;
}

// A fabric of `yaml` with the default parameters (port.*, switch.*), `sets` applied.
struct Built {
  Built(const std::string& yaml, const std::vector<std::string>& sets = {})
      : core("core", period_from_mhz(1562.5)), phy("phy", kPhyPeriod), host("host", period_from_mhz(1562.5)) {
    std::ofstream(dir.file("t.yaml")) << yaml;
    topology = Topology::load(dir.file("t.yaml"));
    topology.validate();
    Config c;
    for (const auto& s : sets) c.set_from_assignment(s);
    sp = sw::SwitchParams::declare(c, "switch");
    pp = PortParams::declare(c, sp.vcs);
  }
  std::unique_ptr<Fabric> build() {
    return std::make_unique<Fabric>("top", topology, sp, pp, core, phy, host, stats, 1, pool, false);
  }
  testing::TempDir dir;
  Topology topology;
  sw::SwitchParams sp;
  PortParams pp;
  Clock core, phy, host;
  Stats stats;
  PacketPool pool;
};

TEST(LingyunFabric, ALeafSpineHasASwitchPerSwitchNodeAndAPortLinkPerCable) {
  Built b(kLeafSpine);
  ASSERT_EQ(b.pp.phy.period(), kPhyPeriod);
  const auto f = b.build();
  ASSERT_EQ(f->switches().size(), 4u);
  ASSERT_EQ(f->links().size(), 8u);
  ASSERT_EQ(f->endpoints(), 4);
  for (int e = 0; e < 4; ++e) EXPECT_EQ(f->ports_of(e), 1) << e;
  const int radix[] = {4, 4, 2, 2};
  for (int s = 0; s < 4; ++s) EXPECT_EQ(f->switches()[s]->params().ports, radix[s]) << s;
  // Each link's two ports, by hand from the file order.
  const char* sides[8][2] = {{"top.h0.port0", "top.leaf0.port0"},  {"top.h1.port0", "top.leaf0.port1"},
                             {"top.h2.port0", "top.leaf1.port0"},  {"top.h3.port0", "top.leaf1.port1"},
                             {"top.leaf0.port2", "top.spine0.port0"}, {"top.leaf0.port3", "top.spine1.port0"},
                             {"top.spine0.port1", "top.leaf1.port2"}, {"top.leaf1.port3", "top.spine1.port1"}};
  for (int l = 0; l < 8; ++l)
    for (int s = 0; s < 2; ++s) EXPECT_EQ(f->links()[l]->side_name(s), sides[l][s]) << l << " " << s;
  // 12 switch ports; h0, h1 against h2, h3 cross leaf0's 2 uplinks of 800 Gb/s; h0 to h2 crosses
  // leaf0, a spine and leaf1.
  EXPECT_EQ(f->summary(), "topology " + b.topology.name +
                              ": 4 switches (12 ports), 4 endpoints, 8 links, bisection 1.6 Tb/s, up to 3 switch hops");
}

TEST(LingyunFabric, EveryLinkGetsItsTopologysCableAndItsOwnSettings) {
  Built b(kLeafSpine);
  const auto f = b.build();
  const double cables[8] = {3, 2, 4, 5, 10, 20, 30, 40};
  for (int l = 0; l < 8; ++l) {
    const PortParams& p = f->links()[l]->params();
    SCOPED_TRACE(l);
    EXPECT_EQ(p.phy.cable_m, cables[l]);
    EXPECT_EQ(p.phy.path_cycles, path_cycles(cables[l]));
    // Link 4 (leaf0 - spine0) sets its FEC, LLR and flow control; the others keep port.*.
    EXPECT_EQ(p.phy.fec, l == 4 ? "rs272" : "rs544");
    EXPECT_EQ(p.llr, l != 4);
    EXPECT_EQ(p.fc, l == 4 ? link::FcMode::kPfc : link::FcMode::kCbfc);
  }
  EXPECT_EQ(path_cycles(40), 588u);  // 221 ns / 0.376471 ns = 587.03: 587 cycles are 220.988 ns, short of it
}

TEST(LingyunFabric, ALeafSpinesSwitchesRouteOverTheNextHopsWorkedOutByHand) {
  Built b(kLeafSpine);
  const auto f = b.build();
  const std::vector<std::vector<Ports>> next = {
      {{0}, {1}, {2, 3}, {2, 3}},  // leaf0: its hosts below, h2 and h3 over either spine
      {{2, 3}, {2, 3}, {0}, {1}},  // leaf1
      {{0}, {0}, {1}, {1}},        // spine0: leaf0 on port 0, leaf1 on port 1
      {{0}, {0}, {1}, {1}},        // spine1
  };
  for (int s = 0; s < 4; ++s) EXPECT_EQ(f->routes().next[s], next[s]) << s;
  EXPECT_EQ(f->routes().max_switch_hops, 3);
}

TEST(LingyunFabric, ASingleSwitchGivesEachEndpointItsOwnPort) {
  Built b("switches:\n  sw0: {ports: 3}\nendpoints: 3\nlinks:\n  - {a: e0, b: sw0}\n  - {a: sw0, b: e1}\n"
          "  - {a: e2, b: sw0, cable_m: 0.5}\n");
  const auto f = b.build();
  ASSERT_EQ(f->switches().size(), 1u);
  EXPECT_EQ(f->switches()[0]->params().ports, 3);
  ASSERT_EQ(f->links().size(), 3u);
  EXPECT_EQ(f->links()[0]->side_name(0), "top.e0.port0");
  EXPECT_EQ(f->links()[0]->side_name(1), "top.sw0.port0");
  EXPECT_EQ(f->links()[1]->side_name(0), "top.sw0.port1");  // the switch on side a
  EXPECT_EQ(f->links()[1]->side_name(1), "top.e1.port0");
  EXPECT_EQ(f->links()[2]->side_name(1), "top.sw0.port2");
  EXPECT_EQ(f->routes().next[0], (std::vector<Ports>{{0}, {1}, {2}}));
  const double cables[3] = {2, 2, 0.5};
  for (int l = 0; l < 3; ++l) {
    EXPECT_EQ(f->links()[l]->params().phy.cable_m, cables[l]) << l;
    EXPECT_EQ(f->links()[l]->params().phy.path_cycles, path_cycles(cables[l])) << l;
  }
  EXPECT_EQ(f->summary(), "topology " + b.topology.name +
                              ": 1 switches (3 ports), 3 endpoints, 3 links, bisection 0.8 Tb/s, up to 1 switch hops");
}

// An endpoint on two planes has a port on each, in the order of its links.
TEST(LingyunFabric, AnEndpointOnTwoSwitchesHasAPortOnEach) {
  Built b("switches:\n  a: {ports: 2}\n  b: {ports: 2}\nendpoints: [x, y]\nlinks:\n"
          "  - {a: x, b: a}\n  - {a: x, b: b}\n  - {a: y, b: a}\n  - {a: y, b: b}\n");
  const auto f = b.build();
  EXPECT_EQ(f->ports_of(0), 2);
  EXPECT_EQ(f->ports_of(1), 2);
  EXPECT_EQ(f->links()[0]->side_name(0), "top.x.port0");
  EXPECT_EQ(f->links()[1]->side_name(0), "top.x.port1");
  EXPECT_EQ(f->links()[1]->side_name(1), "top.b.port0");
  EXPECT_EQ(f->links()[3]->side_name(1), "top.b.port1");
  EXPECT_EQ(f->port(0, 1).to_port_name(), "top.x.port1.tx_fifo");  // x's port 1 is the link to b
  EXPECT_EQ(f->port(1, 0).from_port_name(), "top.y.port0.rx_fifo");
}

TEST(LingyunFabric, SwitchesSlowerOrFasterThanThePortsAreRefused) {
  Built b(kLeafSpine, {"switch.port_gbps=400"});
  const std::string m = testing::config_error_of([&] { b.build(); });
  EXPECT_EQ(m.rfind("switch.port_gbps = 400 but the ports carry 800", 0), 0u) << m;
  EXPECT_NE(m.find("(port.lanes = 8 x 106.25 Gb/s less FEC and transcoding): set them to agree"), std::string::npos) << m;
}

// 100 km of cable: the loop outgrows what LLR's replay buffer may hold. The refusal names the
// file's line and the link's two ends.
TEST(LingyunFabric, ALinkItsPortsCannotReachIsRefusedNamingItsLine) {
  Built b("switches:\n  sw0: {ports: 2}\nendpoints: 2\nlinks:\n  - {a: e0, b: sw0}\n"
          "  - {a: e1, b: sw0, cable_m: 100000}\n");
  const std::string m = testing::config_error_of([&] { b.build(); });
  EXPECT_EQ(m.rfind(b.topology.name + ":6: link e1 - sw0: ", 0), 0u) << m;
  EXPECT_NE(m.find("100000 m"), std::string::npos) << m;
}

// 40 km: beyond what LLR's replay buffer (8 MB) covers and CBFC's 20-bit counters track (the
// credit loop needs 313,039 credits of 128 B), so each is refused where the link runs it, naming
// the link, and a link that runs neither is built (it was refused with the CBFC counter error,
// naming no link, with port.fc=none).
TEST(LingyunFabric, ALinksReachIsCheckedForWhatItRunsOnly) {
  const std::string far = "switches:\n  sw0: {ports: 2}\nendpoints: 2\nlinks:\n  - {a: e0, b: sw0}\n"
                          "  - {a: e1, b: sw0, cable_m: 40000, ";
  EXPECT_NO_THROW(Built(far + "llr: false, fc: none}\n").build());
  EXPECT_NO_THROW(Built(far + "}\n", {"port.llr=false", "port.fc=none"}).build());
  Built cbfc(far + "llr: false, fc: cbfc}\n");
  const std::string m = testing::config_error_of([&] { cbfc.build(); });
  EXPECT_EQ(m.rfind(cbfc.topology.name + ":6: link e1 - sw0: CBFC over 40000 m needs 313039 credits", 0), 0u) << m;
  Built llr(far + "llr: true, fc: none}\n");
  const std::string l = testing::config_error_of([&] { llr.build(); });
  EXPECT_EQ(l.rfind(llr.topology.name + ":6: link e1 - sw0: LLR over 40000 m needs", 0), 0u) << l;
}

// A cross-site link of 300 km as an OTN line: built with no LLR and no flow control, its
// wavelengths the port's lanes (an OTU4 a 100G lane), its fibre the cable's; CBFC or PFC over it
// only where its ports can cover the loop, refused otherwise as any link is.
TEST(LingyunFabric, AnOtnLineJoinsTwoSitesWithoutLlrOrFlowControlUnlessItSetsThem) {
  const std::string sites = "switches:\n  a: {ports: 2}\n  b: {ports: 2}\nendpoints: 2\nlinks:\n"
                            "  - {a: e0, b: a}\n  - {a: e1, b: b}\n  - {a: a, b: b, cable_m: 300000, ";
  Built b(sites + "otn: {ber: 1e-9}}\n");
  const auto f = b.build();
  const PortLink& l = *f->links()[2];
  ASSERT_TRUE(l.otn());
  EXPECT_FALSE(f->links()[0]->otn());
  EXPECT_FALSE(l.params().llr);
  EXPECT_EQ(l.params().fc, link::FcMode::kNone);
  EXPECT_EQ(l.params().otn->channels, 8);
  EXPECT_DOUBLE_EQ(l.params().otn->km, 300);
  EXPECT_DOUBLE_EQ(l.params().otn->ber, 1e-9);
  EXPECT_EQ(l.fixed_latency(), from_ns(300 * 4900) + 2 * otn::frame_period());
  EXPECT_EQ(f->description()["links"][2]["otn"]["wavelengths"], 8);
  EXPECT_THROW(l.phy(0), std::logic_error);
  Built deep("switches:\n  a: {ports: 2, buffer_mib: 8192}\n  b: {ports: 2}\nendpoints: 2\nlinks:\n"
             "  - {a: e0, b: a}\n  - {a: e1, b: b}\n  - {a: a, b: b}\n");
  const auto fd = deep.build();
  EXPECT_EQ(fd->switches()[0]->params().buffer_cells, 8192ull * 1024 * 1024 / 256);  // its own buffer
  EXPECT_EQ(fd->switches()[1]->params().buffer_cells, 64ull * 1024 * 1024 / 256);    // switch.buffer_mib
  Built cbfc(sites + "fc: cbfc, otn: {}}\n");
  const std::string m = testing::config_error_of([&] { cbfc.build(); });
  EXPECT_EQ(m.rfind(cbfc.topology.name + ":8: link a - b: CBFC over 300000 m needs", 0), 0u) << m;
  Built pfc(sites + "fc: pfc, otn: {}}\n");
  const std::string p = testing::config_error_of([&] { pfc.build(); });
  EXPECT_EQ(p.rfind(pfc.topology.name + ":8: link a - b: PFC over 300000 m needs", 0), 0u) << p;
}

// A stalled fabric whose links are up names the port its flow control holds back and where the
// credits it lacks are, from both ends' counters (nothing runs: the ends are driven by hand). Its
// links run no LLR, so they are up from the start. 50 frames of 1500 B take ceil(1500 / 128) = 12
// credits each, 600 of the 604 of e0's port: a 51st is refused with 4 left.
TEST(LingyunFabric, AStallNamesThePortHeldForCreditsAndWhereTheyAre) {
  Built b("switches:\n  sw0: {ports: 2}\nendpoints: 2\nlinks:\n  - {a: e0, b: sw0, llr: false}\n"
          "  - {a: e1, b: sw0, llr: false}\n",
          {"cbfc.buffer_credits=604"});
  const auto f = b.build();
  EXPECT_EQ(f->stall(), "");
  PortLink& l = *f->links()[0];
  link::PortFc &sender = l.fc(0), &receiver = l.fc(1);  // e0's port, and the switch port it feeds
  Packet frame;
  frame.bytes = 1500;
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(sender.can_send(frame)) << i;
    sender.on_send(frame);
  }
  EXPECT_EQ(f->stall(), "");  // none refused yet
  EXPECT_FALSE(sender.can_send(frame));
  const std::string held = "credits held at top.e0.port0.fc VC 0: a 1500 B frame needs 12 credits, 4 of 604 available "
                           "(600 in use); of those in use, ";
  EXPECT_EQ(f->stall(), held + "600 for frames top.sw0.port0 never received: 0 frames lost there with a bad FCS, 0 of "
                               "the 0 codewords it sent uncorrectable; only a CC_Update returns them (cbfc.resync_us "
                               "= 256: 0 sent, 0 arrived)");
  // 3 of them arrive (36 credits) and 2 leave (24 freed, never reported): 600 - 36 = 564 never
  // received, 36 - 24 = 12 still buffered.
  for (int i = 0; i < 3; ++i) receiver.on_arrive(frame);
  for (int i = 0; i < 2; ++i) receiver.on_depart(frame.bytes, frame.vc);
  EXPECT_EQ(f->stall(), held + "564 for frames top.sw0.port0 never received: 0 frames lost there with a bad FCS, 0 of "
                               "the 0 codewords it sent uncorrectable; only a CC_Update returns them (cbfc.resync_us "
                               "= 256: 0 sent, 0 arrived); 24 freed by top.sw0.port0 but not yet reported back "
                               "(CF_Updates lost or on their way); 12 in the buffer of top.sw0.port0 (its core has not "
                               "taken them on)");
  // A frame of 64 B (one credit) may go: the hold is over.
  frame.bytes = 64;
  EXPECT_TRUE(sender.can_send(frame));
  EXPECT_EQ(f->stall(), "");
}

}  // namespace
}  // namespace xy::lingyun
