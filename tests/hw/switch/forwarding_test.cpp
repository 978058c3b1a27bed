#include "hw/switch/forwarding.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "hw/link/crc32.hpp"

namespace xy::sw {
namespace {

constexpr std::uint32_t ip(unsigned a, unsigned b, unsigned c, unsigned d) {
  return a << 24 | b << 16 | c << 8 | d;
}

// The RSS verification suite (Microsoft, "Verifying the RSS Hash Calculation"; the same table
// is in the Intel 82599 datasheet §7.1.2.8.3 and DPDK's app/test/test_thash.c), key kMsRssKey:
// source and destination, the hash of the IPv4 addresses alone, the hash of IPv4 with TCP ports.
struct RssV4Vector {
  std::uint32_t src_ip;
  std::uint16_t src_port;
  std::uint32_t dst_ip;
  std::uint16_t dst_port;
  std::uint32_t ipv4, ipv4_tcp;
};
const RssV4Vector kRssV4[] = {
    {ip(66, 9, 149, 187), 2794, ip(161, 142, 100, 80), 1766, 0x323e8fc2, 0x51ccc178},
    {ip(199, 92, 111, 2), 14230, ip(65, 69, 140, 83), 4739, 0xd718262a, 0xc626b0ea},
    {ip(24, 19, 198, 95), 12898, ip(12, 22, 207, 184), 38024, 0xd2d0a5de, 0x5c2b394a},
    {ip(38, 27, 205, 30), 48228, ip(209, 142, 163, 6), 2217, 0x82989176, 0xafc7327f},
    {ip(153, 39, 163, 191), 44251, ip(202, 188, 127, 2), 1303, 0x5d1809c5, 0x10e828a2},
};

TEST(Forwarding, ToeplitzMatchesRssVerificationSuiteIpv4Tcp) {
  for (const auto& v : kRssV4) {
    FiveTuple f{v.src_ip, v.dst_ip, v.src_port, v.dst_port, 6};
    EXPECT_EQ(hash_toeplitz(f), v.ipv4_tcp) << std::hex << v.src_ip << " -> " << v.dst_ip;
    EXPECT_EQ(hash_toeplitz(f, kMsRssKey.data(), kMsRssKey.size()), v.ipv4_tcp);
    f.protocol = kIpProtoUdp;  // RSS hashes UDP the same way: the protocol picks the hash type
    EXPECT_EQ(hash_toeplitz(f), v.ipv4_tcp);
  }
}

TEST(Forwarding, ToeplitzMatchesRssVerificationSuiteIpv4AddressesOnly) {
  for (const auto& v : kRssV4) {
    const std::uint8_t in[8] = {
        static_cast<std::uint8_t>(v.src_ip >> 24), static_cast<std::uint8_t>(v.src_ip >> 16),
        static_cast<std::uint8_t>(v.src_ip >> 8),  static_cast<std::uint8_t>(v.src_ip),
        static_cast<std::uint8_t>(v.dst_ip >> 24), static_cast<std::uint8_t>(v.dst_ip >> 16),
        static_cast<std::uint8_t>(v.dst_ip >> 8),  static_cast<std::uint8_t>(v.dst_ip)};
    EXPECT_EQ(toeplitz(in, sizeof in, kMsRssKey.data(), kMsRssKey.size()), v.ipv4);
  }
}

// The suite's IPv6 with TCP vectors: 36 input bytes, the whole 40-byte key.
TEST(Forwarding, ToeplitzMatchesRssVerificationSuiteIpv6Tcp) {
  struct V6 {
    std::uint8_t src[16], dst[16];
    std::uint16_t src_port, dst_port;
    std::uint32_t hash;
  };
  const V6 vectors[] = {
      // 3ffe:2501:200:1fff::7 -> 3ffe:2501:200:3::1
      {{0x3f, 0xfe, 0x25, 0x01, 0x02, 0x00, 0x1f, 0xff, 0, 0, 0, 0, 0, 0, 0, 0x07},
       {0x3f, 0xfe, 0x25, 0x01, 0x02, 0x00, 0x00, 0x03, 0, 0, 0, 0, 0, 0, 0, 0x01},
       2794, 1766, 0x40207d3d},
      // 3ffe:501:8::260:97ff:fe40:efab -> ff02::1
      {{0x3f, 0xfe, 0x05, 0x01, 0x00, 0x08, 0, 0, 0x02, 0x60, 0x97, 0xff, 0xfe, 0x40, 0xef, 0xab},
       {0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01},
       14230, 4739, 0xdde51bbf},
      // 3ffe:1900:4545:3:200:f8ff:fe21:67cf -> fe80::200:f8ff:fe21:67cf
      {{0x3f, 0xfe, 0x19, 0x00, 0x45, 0x45, 0x00, 0x03, 0x02, 0x00, 0xf8, 0xff, 0xfe, 0x21, 0x67, 0xcf},
       {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x02, 0x00, 0xf8, 0xff, 0xfe, 0x21, 0x67, 0xcf},
       44251, 38024, 0x02d1feef},
  };
  for (const auto& v : vectors) {
    std::vector<std::uint8_t> in(v.src, v.src + 16);
    in.insert(in.end(), v.dst, v.dst + 16);
    for (std::uint16_t port : {v.src_port, v.dst_port}) {
      in.push_back(static_cast<std::uint8_t>(port >> 8));
      in.push_back(static_cast<std::uint8_t>(port));
    }
    EXPECT_EQ(toeplitz(in.data(), in.size(), kMsRssKey.data(), kMsRssKey.size()), v.hash);
  }
}

TEST(Forwarding, ToeplitzRejectsShortKey) {
  const FiveTuple f{ip(10, 0, 0, 1), ip(10, 0, 1, 1), 49152, kRoceV2UdpPort, kIpProtoUdp};
  EXPECT_THROW(hash_toeplitz(f, kMsRssKey.data(), 15), std::invalid_argument);
  EXPECT_THROW(hash_toeplitz(f, nullptr, 40), std::invalid_argument);
  EXPECT_NO_THROW(hash_toeplitz(f, kMsRssKey.data(), 16));
}

TEST(Forwarding, Crc32HashIsTheIeeeCrcOverTheTupleInNetworkOrder) {
  const FiveTuple f{ip(10, 0, 0, 1), ip(10, 0, 1, 1), 49152, kRoceV2UdpPort, kIpProtoUdp};
  // Python: zlib.crc32(inet_aton('10.0.0.1') + inet_aton('10.0.1.1') + pack('>HHB', 49152, 4791, 17))
  EXPECT_EQ(hash_crc32(f), 0x156f9e5du);
  const std::uint8_t bytes[13] = {10, 0, 0, 1, 10, 0, 1, 1, 0xC0, 0x00, 0x12, 0xB7, 17};
  EXPECT_EQ(hash_crc32(f), link::crc32(bytes, sizeof bytes));
  EXPECT_EQ(hash_crc32(f), hash_crc32(FiveTuple{f}));  // deterministic
}

TEST(Forwarding, Crc32HashChangesWithEveryBitOfEveryField) {
  const FiveTuple base{ip(10, 0, 0, 1), ip(10, 0, 1, 1), 49152, kRoceV2UdpPort, kIpProtoUdp};
  const std::uint32_t h = hash_crc32(base);
  int flips = 0;
  for (int bit = 0; bit < 32; ++bit) {
    FiveTuple f = base;
    f.src_ip ^= 1u << bit;
    EXPECT_NE(hash_crc32(f), h) << "src_ip bit " << bit;
    f = base;
    f.dst_ip ^= 1u << bit;
    EXPECT_NE(hash_crc32(f), h) << "dst_ip bit " << bit;
    flips += 2;
  }
  for (int bit = 0; bit < 16; ++bit) {
    FiveTuple f = base;
    f.src_port = static_cast<std::uint16_t>(f.src_port ^ 1u << bit);
    EXPECT_NE(hash_crc32(f), h) << "src_port bit " << bit;
    f = base;
    f.dst_port = static_cast<std::uint16_t>(f.dst_port ^ 1u << bit);
    EXPECT_NE(hash_crc32(f), h) << "dst_port bit " << bit;
    flips += 2;
  }
  for (int bit = 0; bit < 8; ++bit) {
    FiveTuple f = base;
    f.protocol = static_cast<std::uint8_t>(f.protocol ^ 1u << bit);
    EXPECT_NE(hash_crc32(f), h) << "protocol bit " << bit;
    ++flips;
  }
  EXPECT_EQ(flips, 13 * 8);
  // Swapping source and destination is a different flow.
  const FiveTuple reverse{base.dst_ip, base.src_ip, base.dst_port, base.src_port, base.protocol};
  EXPECT_NE(hash_crc32(reverse), h);
}

TEST(Forwarding, ExactMatchRoutesGroupsAndMisses) {
  ForwardingTable t;
  t.add_route(7, 3);
  t.add_group(100, {4, 5, 6, 7});
  auto r = t.lookup(7);
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->group);
  EXPECT_EQ(r->port, 3);
  EXPECT_EQ(r->ports, nullptr);
  r = t.lookup(100);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->group);
  ASSERT_NE(r->ports, nullptr);
  EXPECT_EQ(*r->ports, (std::vector<int>{4, 5, 6, 7}));
  EXPECT_FALSE(t.lookup(8));  // unknown destination: the switch drops and counts it
  EXPECT_EQ(t.routes(), 2u);

  const std::vector<int>* group = r->ports;
  t.add_route(7, 9);           // replaces
  t.add_group(100, {1, 2});    // replaces; the route's vector is the same object
  EXPECT_EQ(t.lookup(7)->port, 9);
  EXPECT_EQ(t.lookup(100)->ports, group);
  EXPECT_EQ(*group, (std::vector<int>{1, 2}));
  t.add_route(100, 0);         // a group becomes a single port
  EXPECT_FALSE(t.lookup(100)->group);
  EXPECT_EQ(t.routes(), 2u);

  EXPECT_THROW(t.add_route(1, -1), std::invalid_argument);
  EXPECT_THROW(t.add_group(1, {}), std::invalid_argument);
  EXPECT_THROW(t.add_group(1, {2, -3}), std::invalid_argument);
  EXPECT_FALSE(t.lookup(1));
}

TEST(Forwarding, LongestPrefixMatchOnOverlappingPrefixes) {
  ForwardingTable t;
  EXPECT_FALSE(t.lookup_ip(ip(10, 1, 2, 3)));  // empty table: a miss
  t.add_prefix(ip(10, 0, 0, 0), 8, 1);
  t.add_prefix(ip(10, 1, 0, 0), 16, 2);
  t.add_prefix_group(ip(10, 1, 2, 0), 24, {3, 4});
  t.add_prefix(ip(10, 1, 2, 128), 25, 5);
  t.add_prefix(ip(10, 1, 2, 130), 32, 6);
  t.add_prefix(ip(192, 168, 0, 0), 16, 7);
  EXPECT_EQ(t.prefixes(), 6u);

  auto port_of = [&](std::uint32_t a) { return t.lookup_ip(a)->port; };
  EXPECT_FALSE(t.lookup_ip(ip(11, 0, 0, 1)));  // no default route yet
  EXPECT_EQ(port_of(ip(10, 200, 0, 1)), 1);
  EXPECT_EQ(port_of(ip(10, 1, 200, 1)), 2);
  const auto g = t.lookup_ip(ip(10, 1, 2, 3));
  ASSERT_TRUE(g);
  ASSERT_TRUE(g->group);
  EXPECT_EQ(*g->ports, (std::vector<int>{3, 4}));
  EXPECT_EQ(port_of(ip(10, 1, 2, 129)), 5);
  EXPECT_EQ(port_of(ip(10, 1, 2, 130)), 6);
  EXPECT_EQ(port_of(ip(10, 1, 2, 131)), 5);
  EXPECT_EQ(port_of(ip(10, 1, 2, 255)), 5);
  EXPECT_TRUE(t.lookup_ip(ip(10, 1, 2, 127))->group);
  EXPECT_EQ(port_of(ip(192, 168, 255, 255)), 7);
  EXPECT_FALSE(t.lookup_ip(ip(192, 169, 0, 0)));

  t.add_prefix(0, 0, 0);  // default route
  EXPECT_EQ(port_of(ip(11, 0, 0, 1)), 0);
  EXPECT_EQ(port_of(ip(192, 169, 0, 0)), 0);
  EXPECT_EQ(port_of(ip(10, 1, 2, 130)), 6);
  // Host bits below the length are ignored: this replaces 10.1.2.0/24.
  t.add_prefix(ip(10, 1, 2, 77), 24, 8);
  EXPECT_EQ(port_of(ip(10, 1, 2, 3)), 8);
  EXPECT_EQ(t.prefixes(), 7u);

  EXPECT_THROW(t.add_prefix(0, 33, 1), std::invalid_argument);
  EXPECT_THROW(t.add_prefix(0, -1, 1), std::invalid_argument);
  EXPECT_THROW(t.add_prefix_group(0, 8, {}), std::invalid_argument);
}

// The trie against a linear scan for the longest matching prefix, on random nested prefixes.
TEST(Forwarding, LongestPrefixMatchAgreesWithLinearScan) {
  Rng rng(11, "forwarding_test.lpm");
  struct P {
    std::uint32_t ip;
    int length, port;
  };
  std::vector<P> table;
  ForwardingTable t;
  for (int i = 0; i < 400; ++i) {
    // Addresses share the top byte so that prefixes overlap at every length.
    const std::uint32_t a = 0x0A000000u | static_cast<std::uint32_t>(rng.below(1u << 24));
    const int len = static_cast<int>(rng.between(1, 32));
    const std::uint32_t mask = len == 32 ? ~0u : ~(~0u >> len);
    const int port = static_cast<int>(rng.below(64));
    t.add_prefix(a, len, port);
    auto same = std::find_if(table.begin(), table.end(),
                             [&](const P& p) { return p.length == len && p.ip == (a & mask); });
    if (same != table.end())
      same->port = port;
    else
      table.push_back({a & mask, len, port});
  }
  EXPECT_EQ(t.prefixes(), table.size());
  for (int i = 0; i < 20000; ++i) {
    const std::uint32_t a = 0x0A000000u | static_cast<std::uint32_t>(rng.below(1u << 24));
    int best_len = -1, best_port = -1;
    for (const P& p : table) {
      const std::uint32_t mask = p.length == 32 ? ~0u : ~(~0u >> p.length);
      if ((a & mask) == p.ip && p.length > best_len) {
        best_len = p.length;
        best_port = p.port;
      }
    }
    const auto r = t.lookup_ip(a);
    ASSERT_EQ(r.has_value(), best_len >= 0) << std::hex << a;
    if (r) {
      EXPECT_EQ(r->port, best_port) << std::hex << a;
    }
  }
}

// Claim C12: 32 elephant flows between fixed endpoints, RoCEv2 (UDP destination port 4791), a
// small set of source ports, 8 equal-cost links. Eight sender NICs 10.0.0.1-8 each run four
// queue pairs (UDP source ports 49152-49155) to their peer 10.0.1.1-8.
std::vector<FiveTuple> c12_flows() {
  std::vector<FiveTuple> flows;
  for (unsigned host = 1; host <= 8; ++host)
    for (std::uint16_t qp = 0; qp < 4; ++qp)
      flows.push_back({ip(10, 0, 0, host), ip(10, 0, 1, host), static_cast<std::uint16_t>(49152 + qp),
                       kRoceV2UdpPort, kIpProtoUdp});
  return flows;
}

constexpr int kC12Links = 8;

std::string counts_text(const std::vector<int>& counts) {
  std::string s;
  for (int c : counts) s += (s.empty() ? "" : " ") + std::to_string(c);
  return s;
}

TEST(Forwarding, EcmpHashCollidesElephantFlowsClaimC12) {
  const auto flows = c12_flows();
  ASSERT_EQ(flows.size(), 32u);
  for (HashKind kind : {HashKind::kCrc32, HashKind::kToeplitz}) {
    PathSelector ecmp(PathChoice::kEcmpHash, kind, kC12Links, Rng(1));
    std::vector<int> per_link(kC12Links, 0);
    for (const auto& f : flows) {
      const int link = ecmp.choose(f);
      // With 8 links (a divisor of 256) the indirection table gives hash % paths.
      EXPECT_EQ(link, static_cast<int>(ecmp.hash(f) % kC12Links));
      EXPECT_EQ(ecmp.choose(f), link);  // per flow: every packet of it takes the same link
      ++per_link[link];
    }
    const int worst = *std::max_element(per_link.begin(), per_link.end());
    const int idle = static_cast<int>(std::count(per_link.begin(), per_link.end(), 0));
    std::printf("C12 ECMP %-8s flows per link: %s | worst %d (mean 4, max/mean %.2f), idle links %d\n",
                kind == HashKind::kCrc32 ? "CRC32" : "Toeplitz", counts_text(per_link).c_str(), worst,
                worst / 4.0, idle);
    EXPECT_GT(worst, 4) << "no collision: every link got its fair share";
  }
}

TEST(Forwarding, SprayRoundRobinBalancesEveryLinkExactly) {
  const auto flows = c12_flows();
  PathSelector spray(PathChoice::kSprayRoundRobin, HashKind::kCrc32, kC12Links, Rng(1));
  // One packet of each flow: exactly four per link.
  std::vector<int> first(kC12Links, 0);
  for (const auto& f : flows) ++first[spray.choose(f)];
  EXPECT_EQ(first, std::vector<int>(kC12Links, 4));
  // Then 1000 more packets of each, interleaved: per-packet load is exactly even.
  std::vector<long> packets(kC12Links, 0);
  for (int round = 0; round < 1000; ++round)
    for (const auto& f : flows) ++packets[spray.choose(f)];
  const long max = *std::max_element(packets.begin(), packets.end());
  const double mean = 32.0 * 1000 / kC12Links;
  std::printf("C12 spray round robin: packets per link %ld..%ld, max/mean %.3f\n",
              *std::min_element(packets.begin(), packets.end()), max, max / mean);
  EXPECT_EQ(max / mean, 1.0);
  // A selector of its own per flow sprays that flow over every link in turn.
  PathSelector one_flow(PathChoice::kSprayRoundRobin, HashKind::kToeplitz, kC12Links, Rng(1));
  for (int p = 0; p < 2 * kC12Links; ++p) EXPECT_EQ(one_flow.choose(flows[0]), p % kC12Links);
}

TEST(Forwarding, SprayRandomIsUniformAndReproducible) {
  const FiveTuple f = c12_flows()[0];
  PathSelector a(PathChoice::kSprayRandom, HashKind::kCrc32, kC12Links, Rng(42, "top.sw.spray"));
  PathSelector b(PathChoice::kSprayRandom, HashKind::kCrc32, kC12Links, Rng(42, "top.sw.spray"));
  std::vector<int> counts(kC12Links, 0);
  const int n = 80000;
  for (int i = 0; i < n; ++i) {
    const int p = a.choose(f);
    ASSERT_EQ(p, b.choose(f));
    ASSERT_GE(p, 0);
    ASSERT_LT(p, kC12Links);
    ++counts[p];
  }
  // 10000 expected per link, standard deviation ~94: 5 % is over five sigma.
  for (int c : counts) EXPECT_NEAR(c, n / kC12Links, n / kC12Links / 20);
}

TEST(Forwarding, AdaptivePicksTheLeastLoadedPathTiesRoundRobin) {
  const FiveTuple f = c12_flows()[0];
  PathSelector sel(PathChoice::kAdaptive, HashKind::kCrc32, kC12Links, Rng(1));
  const std::uint32_t depths[kC12Links] = {5, 3, 7, 3, 9, 3, 8, 4};
  EXPECT_EQ(sel.choose(f, depths), 1);
  EXPECT_EQ(sel.choose(f, depths), 3);
  EXPECT_EQ(sel.choose(f, depths), 5);
  EXPECT_EQ(sel.choose(f, depths), 1);
  const std::uint32_t one_short[kC12Links] = {9, 9, 9, 9, 9, 9, 2, 9};
  EXPECT_EQ(sel.choose(f, one_short), 6);
  EXPECT_EQ(sel.choose(f, one_short), 6);

  // Queues that grow with what they are given: a path already 10 deep gets nothing until the
  // others have caught up, and then everything stays level.
  PathSelector fresh(PathChoice::kAdaptive, HashKind::kToeplitz, kC12Links, Rng(1));
  std::uint32_t q[kC12Links] = {0, 0, 0, 10, 0, 0, 0, 0};
  for (int i = 0; i < 70; ++i) {
    const int p = fresh.choose(f, q);
    EXPECT_NE(p, 3);
    ++q[p];
  }
  EXPECT_EQ(std::vector<std::uint32_t>(q, q + kC12Links), std::vector<std::uint32_t>(kC12Links, 10));
  for (int i = 0; i < 800; ++i) ++q[fresh.choose(f, q)];
  EXPECT_EQ(std::vector<std::uint32_t>(q, q + kC12Links), std::vector<std::uint32_t>(kC12Links, 110));
  EXPECT_THROW(fresh.choose(f), std::invalid_argument);
}

TEST(Forwarding, EcmpUsesTheIndirectionTable) {
  PathSelector ecmp(PathChoice::kEcmpHash, HashKind::kCrc32, 6, Rng(1));
  for (int i = 0; i < PathSelector::kIndirectionEntries; ++i) EXPECT_EQ(ecmp.indirection()[i], i % 6);
  // Steer off path 5 (a failed link): its entries move to the others, nothing else moves.
  PathSelector::Indirection table = ecmp.indirection();
  for (int i = 0; i < PathSelector::kIndirectionEntries; ++i)
    if (table[i] == 5) table[i] = static_cast<std::uint8_t>(i % 5);
  PathSelector old = ecmp;
  ecmp.set_indirection(table);
  Rng rng(3, "forwarding_test.ecmp");
  int moved = 0;
  for (int i = 0; i < 5000; ++i) {
    const FiveTuple f{static_cast<std::uint32_t>(rng.next()), static_cast<std::uint32_t>(rng.next()),
                      static_cast<std::uint16_t>(rng.next()), kRoceV2UdpPort, kIpProtoUdp};
    const int p = ecmp.choose(f);
    EXPECT_EQ(p, table[ecmp.hash(f) & 0xFF]);
    EXPECT_NE(p, 5);
    const int was = old.choose(f);
    if (was != 5) {
      EXPECT_EQ(p, was);  // flows on healthy links keep their link
    }
    moved += was == 5;
  }
  EXPECT_GT(moved, 0);
  table[17] = 6;
  EXPECT_THROW(ecmp.set_indirection(table), std::invalid_argument);
  EXPECT_THROW(PathSelector(PathChoice::kEcmpHash, HashKind::kCrc32, 0, Rng(1)), std::invalid_argument);
  EXPECT_THROW(PathSelector(PathChoice::kEcmpHash, HashKind::kCrc32, 257, Rng(1)), std::invalid_argument);
  EXPECT_NO_THROW(PathSelector(PathChoice::kEcmpHash, HashKind::kCrc32, 256, Rng(1)));
}

}  // namespace
}  // namespace xy::sw
