// A GPU's memory as an OLink target sees it: sparse 4 KiB pages, zero where never written, and
// the request semantics (Load, Store with byte enables, fetch-add and CAS on 64-bit words).
#pragma once
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "tlm/olink/olink.hpp"

namespace xy::olink {

class Memory {
 public:
  void read(std::uint64_t offset, std::uint8_t* out, std::uint32_t bytes) const;
  void write(std::uint64_t offset, const std::uint8_t* in, std::uint32_t bytes);
  // Runs a request (header and the frame's payload) and returns the response's data: the bytes
  // loaded, the old value of an atomic, nothing for a Store. False for an op that is not a request.
  bool serve(const Header& h, const std::uint8_t* payload, std::vector<std::uint8_t>& data);

 private:
  static constexpr std::uint64_t kPage = 4096;
  std::unordered_map<std::uint64_t, std::vector<std::uint8_t>> pages_;
};

}  // namespace xy::olink
