// The Lingyun switch's forwarding decisions, as plain C++: flow hashes (CRC-32 and the RSS
// Toeplitz hash), path selection over equal-cost links (ECMP through an indirection table,
// per-packet spraying, adaptive least-queue), and the forwarding table (exact match on a
// destination GPU/endpoint id, IPv4 longest-prefix match for scale-out).
//
// Cycle contract: none of its own. These are the decisions the switch's lookup stage makes once
// per packet header; that stage's latency is the switch's `lookup` parameter. Exact: hash bits,
// the ECMP member a hash selects (indirection table included), round-robin and least-queue
// choices, the longest-prefix-match result. Abstracted: table capacity (TCAM/SRAM sizes) and
// update latency (an update takes effect at once).
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <unordered_map>
#include <vector>

#include "kernel/rng.hpp"

namespace xy::sw {

// An IPv4 flow, in host byte order (10.0.0.1 is 0x0A000001).
struct FiveTuple {
  std::uint32_t src_ip = 0, dst_ip = 0;
  std::uint16_t src_port = 0, dst_port = 0;
  std::uint8_t protocol = 0;  // IP protocol number: 6 TCP, 17 UDP (RoCEv2)
};

inline constexpr std::uint16_t kRoceV2UdpPort = 4791;  // IANA: RoCEv2's fixed destination port
inline constexpr std::uint8_t kIpProtoUdp = 17;

// CRC-32 (IEEE 802.3: reflected 0xEDB88320, preset all ones, complemented; xy::link::crc32)
// over 13 bytes, each field in network byte order (most significant byte first), as they occur
// in the IPv4 and UDP/TCP headers:
//   bytes 0-3 src_ip, 4-7 dst_ip, 8-9 src_port, 10-11 dst_port, 12 protocol.
// Every field reaches the result, and any single-bit change in the tuple changes it.
std::uint32_t hash_crc32(const FiveTuple& flow);

// The standard 40-byte RSS key of Microsoft's "Verifying the RSS Hash Calculation" (also the
// default of Intel NICs and DPDK), against which the published verification vectors are given.
inline constexpr std::array<std::uint8_t, 40> kMsRssKey = {
    0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
    0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
    0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa};

// The Toeplitz hash of RSS over `size` input bytes: for each input bit, most significant bit of
// input[0] first, if it is one XOR in the 32 key bits starting at that bit's position (key bit
// 0 is the most significant bit of key[0]). Needs key_bytes >= size + 4; throws
// std::invalid_argument otherwise.
std::uint32_t toeplitz(const std::uint8_t* input, std::size_t size, const std::uint8_t* key,
                       std::size_t key_bytes);

// The RSS "IPv4 with TCP" (and UDP) hash: Toeplitz over the 12 bytes src_ip, dst_ip, src_port,
// dst_port in network order. The protocol is not hashed: in RSS it selects the hash type. Needs
// key_bytes >= 16 (std::invalid_argument).
std::uint32_t hash_toeplitz(const FiveTuple& flow, const std::uint8_t* key = kMsRssKey.data(),
                            std::size_t key_bytes = kMsRssKey.size());

enum class HashKind { kCrc32, kToeplitz };  // Toeplitz uses kMsRssKey
enum class PathChoice { kEcmpHash, kSprayRoundRobin, kSprayRandom, kAdaptive };

// Chooses one of `paths` equal-cost paths (0..paths-1) for each packet.
//  - kEcmpHash: per flow. The flow's hash indexes a 256-entry indirection table with its low
//    eight bits; entry i holds i % paths unless set_indirection() says otherwise, so with a
//    power-of-two path count the choice is hash % paths. The same flow always takes the same
//    path: elephants that collide stay collided.
//  - kSprayRoundRobin: per packet, paths in turn, whatever the flow. One pointer per selector;
//    a sender that sprays each flow on its own keeps one selector per flow.
//  - kSprayRandom: per packet, uniform from the selector's Rng stream.
//  - kAdaptive: per packet, the path with the least queue depth; among equally short queues the
//    first at or after a round-robin pointer, which then moves past the chosen path.
class PathSelector {
 public:
  static constexpr int kIndirectionEntries = 256;
  using Indirection = std::array<std::uint8_t, kIndirectionEntries>;

  // paths in [1, 256] (std::invalid_argument otherwise).
  PathSelector(PathChoice choice, HashKind hash, int paths, Rng rng);

  // `queue_depths` (one per path) is read only by kAdaptive, which needs it
  // (std::invalid_argument if null).
  int choose(const FiveTuple& flow, const std::uint32_t* queue_depths = nullptr);

  // The flow's hash with this selector's hash kind.
  std::uint32_t hash(const FiveTuple& flow) const;
  // Replaces the ECMP indirection table (e.g. to weight paths, or steer off a failed one);
  // every entry must be < paths (std::invalid_argument).
  void set_indirection(const Indirection& table);
  const Indirection& indirection() const { return table_; }
  int paths() const { return paths_; }
  PathChoice choice() const { return choice_; }

 private:
  PathChoice choice_;
  HashKind hash_;
  int paths_;
  Rng rng_;
  Indirection table_{};
  int next_ = 0;  // round-robin pointer (spraying, adaptive tie-break)
};

// Where a lookup sends a packet: one port, or an ECMP group whose member a PathSelector picks.
// `ports` points into the table and stays valid until that entry is replaced.
struct Route {
  bool group = false;
  int port = -1;                             // when !group
  const std::vector<int>* ports = nullptr;   // when group
};

// Exact match from a destination id (GPU / endpoint id) and IPv4 longest-prefix match. A miss
// returns std::nullopt; the switch drops the packet and counts the reason. Adding an entry for
// a destination (or prefix) that has one replaces it. Ports must be >= 0 and groups non-empty
// (std::invalid_argument).
class ForwardingTable {
 public:
  void add_route(std::uint32_t dst, int port);
  void add_group(std::uint32_t dst, std::vector<int> ports);
  std::optional<Route> lookup(std::uint32_t dst) const;

  // `ip` in host byte order; bits below `length` (0..32, std::invalid_argument otherwise) are
  // ignored. Length 0 is the default route.
  void add_prefix(std::uint32_t ip, int length, int port);
  void add_prefix_group(std::uint32_t ip, int length, std::vector<int> ports);
  std::optional<Route> lookup_ip(std::uint32_t ip) const;

  std::size_t routes() const { return exact_.size(); }
  std::size_t prefixes() const { return prefix_entries_.size(); }

 private:
  struct Entry {
    bool group = false;
    int port = -1;
    std::vector<int> ports;
    Route route() const { return {group, port, group ? &ports : nullptr}; }
  };
  // A binary trie, one level per address bit, most significant first; nodes_[0] is the root.
  struct Node {
    std::int32_t child[2] = {-1, -1};
    std::int32_t entry = -1;  // index into prefix_entries_, or -1
  };
  void insert_prefix(std::uint32_t ip, int length, Entry entry);

  std::unordered_map<std::uint32_t, Entry> exact_;
  std::vector<Node> nodes_{Node{}};
  std::deque<Entry> prefix_entries_;  // a deque: Route::ports stays valid as prefixes are added
};

}  // namespace xy::sw
