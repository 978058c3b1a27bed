#include "hw/switch/forwarding.hpp"

#include <stdexcept>
#include <string>
#include <utility>

#include "hw/link/crc32.hpp"

namespace xy::sw {
namespace {

constexpr std::size_t kTupleBytes = 13;  // src_ip, dst_ip, src_port, dst_port, protocol
constexpr std::size_t kRssIpv4L4Bytes = 12;  // the same without the protocol

void put_be32(std::uint8_t* p, std::uint32_t v) {
  p[0] = static_cast<std::uint8_t>(v >> 24);
  p[1] = static_cast<std::uint8_t>(v >> 16);
  p[2] = static_cast<std::uint8_t>(v >> 8);
  p[3] = static_cast<std::uint8_t>(v);
}

void put_be16(std::uint8_t* p, std::uint16_t v) {
  p[0] = static_cast<std::uint8_t>(v >> 8);
  p[1] = static_cast<std::uint8_t>(v);
}

std::array<std::uint8_t, kTupleBytes> tuple_bytes(const FiveTuple& f) {
  std::array<std::uint8_t, kTupleBytes> b{};
  put_be32(&b[0], f.src_ip);
  put_be32(&b[4], f.dst_ip);
  put_be16(&b[8], f.src_port);
  put_be16(&b[10], f.dst_port);
  b[12] = f.protocol;
  return b;
}

void check_ports(const std::vector<int>& ports, const char* what) {
  if (ports.empty()) throw std::invalid_argument(std::string(what) + ": an ECMP group needs a port");
  for (int p : ports)
    if (p < 0) throw std::invalid_argument(std::string(what) + ": port " + std::to_string(p) + " < 0");
}

void check_port(int port, const char* what) {
  if (port < 0) throw std::invalid_argument(std::string(what) + ": port " + std::to_string(port) + " < 0");
}

}  // namespace

std::uint32_t hash_crc32(const FiveTuple& flow) {
  const auto b = tuple_bytes(flow);
  return link::crc32(b.data(), b.size());
}

std::uint32_t toeplitz(const std::uint8_t* input, std::size_t size, const std::uint8_t* key,
                       std::size_t key_bytes) {
  if (key == nullptr || key_bytes < size + 4)
    throw std::invalid_argument("toeplitz: a " + std::to_string(size) + "-byte input needs a key of at least " +
                                std::to_string(size + 4) + " bytes, got " +
                                std::to_string(key == nullptr ? 0 : key_bytes));
  // `window` holds key bits [i, i + 64) for input bit i; its top 32 bits are the ones XORed in.
  std::uint64_t window = 0;
  for (std::size_t k = 0; k < 8; ++k) window = window << 8 | (k < key_bytes ? key[k] : 0u);
  std::uint32_t result = 0;
  for (std::size_t i = 0; i < size; ++i) {
    for (int bit = 7; bit >= 0; --bit) {
      if (input[i] >> bit & 1u) result ^= static_cast<std::uint32_t>(window >> 32);
      window <<= 1;
    }
    // Bits [8(i+1), 8(i+1) + 56) are in place; the next key byte fills the low eight.
    window |= i + 8 < key_bytes ? key[i + 8] : 0u;
  }
  return result;
}

std::uint32_t hash_toeplitz(const FiveTuple& flow, const std::uint8_t* key, std::size_t key_bytes) {
  const auto b = tuple_bytes(flow);
  return toeplitz(b.data(), kRssIpv4L4Bytes, key, key_bytes);
}

PathSelector::PathSelector(PathChoice choice, HashKind hash, int paths, Rng rng)
    : choice_(choice), hash_(hash), paths_(paths), rng_(rng) {
  if (paths < 1 || paths > kIndirectionEntries)
    throw std::invalid_argument("PathSelector: paths = " + std::to_string(paths) + ": must be in [1, 256]");
  for (int i = 0; i < kIndirectionEntries; ++i) table_[i] = static_cast<std::uint8_t>(i % paths);
}

std::uint32_t PathSelector::hash(const FiveTuple& flow) const {
  return hash_ == HashKind::kCrc32 ? hash_crc32(flow) : hash_toeplitz(flow);
}

void PathSelector::set_indirection(const Indirection& table) {
  for (int i = 0; i < kIndirectionEntries; ++i)
    if (table[i] >= paths_)
      throw std::invalid_argument("PathSelector: indirection entry " + std::to_string(i) + " = " +
                                  std::to_string(table[i]) + ": must be < paths (" +
                                  std::to_string(paths_) + ")");
  table_ = table;
}

int PathSelector::choose(const FiveTuple& flow, const std::uint32_t* queue_depths) {
  switch (choice_) {
    case PathChoice::kEcmpHash:
      return table_[hash(flow) & (kIndirectionEntries - 1)];
    case PathChoice::kSprayRoundRobin: {
      const int p = next_;
      next_ = (next_ + 1) % paths_;
      return p;
    }
    case PathChoice::kSprayRandom:
      return static_cast<int>(rng_.below(static_cast<std::uint64_t>(paths_)));
    case PathChoice::kAdaptive: {
      if (queue_depths == nullptr)
        throw std::invalid_argument("PathSelector: adaptive choice needs the queue depths");
      int best = next_;
      for (int k = 1; k < paths_; ++k) {
        const int p = (next_ + k) % paths_;
        if (queue_depths[p] < queue_depths[best]) best = p;
      }
      next_ = (best + 1) % paths_;
      return best;
    }
  }
  throw std::logic_error("PathSelector: unknown PathChoice");
}

void ForwardingTable::add_route(std::uint32_t dst, int port) {
  check_port(port, "add_route");
  exact_[dst] = Entry{false, port, {}};
}

void ForwardingTable::add_group(std::uint32_t dst, std::vector<int> ports) {
  check_ports(ports, "add_group");
  exact_[dst] = Entry{true, -1, std::move(ports)};
}

std::optional<Route> ForwardingTable::lookup(std::uint32_t dst) const {
  const auto it = exact_.find(dst);
  if (it == exact_.end()) return std::nullopt;
  return it->second.route();
}

void ForwardingTable::add_prefix(std::uint32_t ip, int length, int port) {
  check_port(port, "add_prefix");
  insert_prefix(ip, length, Entry{false, port, {}});
}

void ForwardingTable::add_prefix_group(std::uint32_t ip, int length, std::vector<int> ports) {
  check_ports(ports, "add_prefix_group");
  insert_prefix(ip, length, Entry{true, -1, std::move(ports)});
}

void ForwardingTable::insert_prefix(std::uint32_t ip, int length, Entry entry) {
  if (length < 0 || length > 32)
    throw std::invalid_argument("add_prefix: length " + std::to_string(length) + ": must be in [0, 32]");
  std::int32_t n = 0;
  for (int d = 0; d < length; ++d) {
    const int bit = ip >> (31 - d) & 1u;
    if (nodes_[n].child[bit] < 0) {
      nodes_[n].child[bit] = static_cast<std::int32_t>(nodes_.size());
      nodes_.push_back(Node{});
    }
    n = nodes_[n].child[bit];
  }
  if (nodes_[n].entry >= 0) {
    prefix_entries_[nodes_[n].entry] = std::move(entry);
    return;
  }
  nodes_[n].entry = static_cast<std::int32_t>(prefix_entries_.size());
  prefix_entries_.push_back(std::move(entry));
}

std::optional<Route> ForwardingTable::lookup_ip(std::uint32_t ip) const {
  std::int32_t n = 0, match = nodes_[0].entry;
  for (int d = 0; d < 32; ++d) {
    n = nodes_[n].child[ip >> (31 - d) & 1u];
    if (n < 0) break;
    if (nodes_[n].entry >= 0) match = nodes_[n].entry;
  }
  if (match < 0) return std::nullopt;
  return prefix_entries_[match].route();
}

}  // namespace xy::sw
