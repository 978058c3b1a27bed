// A GPU's memory as an OLink target sees it: sparse 4 KiB pages, zero where never written, and
// the request semantics (Load, Store with byte enables, fetch-add and CAS on 64-bit words).
// A memory that keeps no data (timing only) writes nothing, so it reads zeros everywhere.
#pragma once
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "tlm/olink/olink.hpp"

namespace xy::olink {

class Memory {
 public:
  explicit Memory(bool keep_data = true) : keep_data_(keep_data) {}
  void read(std::uint64_t offset, std::uint8_t* out, std::uint32_t bytes) const;
  void write(std::uint64_t offset, const std::uint8_t* in, std::uint32_t bytes);
  // Runs a request (header and the frame's payload) and returns the response's data: the bytes
  // loaded, the old value of an atomic, nothing for a Store. False for an op that is not a request.
  bool serve(const Header& h, const std::uint8_t* payload, std::vector<std::uint8_t>& data);

 private:
  static constexpr std::uint64_t kPage = 4096;
  bool keep_data_;
  std::unordered_map<std::uint64_t, std::vector<std::uint8_t>> pages_;
};

}  // namespace xy::olink
