// Packet capture of simulated Ethernet frames, for Wireshark and tshark.
//
// Classic pcap (pcap-savefile(5)), little-endian, nanosecond timestamps (magic 0xA1B23C4D),
// LINKTYPE_ETHERNET. Frames are written as the MAC sends them: destination address through
// the 4-byte FCS (no preamble, no SFD). The header's link-type field says so: its upper bits
// carry "FCS length known" (P, 0x04000000) and "FCS length = 2 x 16 bits" (0x20000000), i.e.
// 0x24000001, which Wireshark/tshark honour (4.0, Debian 12), so the last four bytes show as
// the Ethernet FCS, not as payload. Wireshark does not check an FCS by default, though; to
// have bad ones flagged (eth.fcs.status == 0, expert info "Bad checksum"), set the preference
// eth.check_fcs:
//   tshark -r run.pcap -o eth.check_fcs:TRUE -Y 'eth.fcs.status == 0'
//   Wireshark: Edit > Preferences > Protocols > Ethernet > "Validate the Ethernet checksum".
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "kernel/units.hpp"

namespace xy::link {

inline constexpr std::uint32_t kPcapMagicNs = 0xA1B23C4D;
inline constexpr std::uint32_t kLinktypeEthernet = 1;
// Link-type field: FCS length present (bit 26) and 2 units of 16 bits (bits 28..31).
inline constexpr std::uint32_t kLinktypeEthernetWithFcs = 0x24000000 | kLinktypeEthernet;
// Largest frame a record may hold (libpcap's MAXIMUM_SNAPLEN); far above a jumbo frame.
inline constexpr std::uint32_t kPcapSnaplen = 262144;

class PcapWriter {
 public:
  // Creates the parent folder if missing; throws std::runtime_error naming the path if the
  // file cannot be opened.
  explicit PcapWriter(const std::string& path);
  ~PcapWriter();  // flushes and closes, ignoring errors; call close() to have them reported
  PcapWriter(const PcapWriter&) = delete;
  PcapWriter& operator=(const PcapWriter&) = delete;

  // One frame with its FCS, stamped at simulated time `t_fs` (femtoseconds; written as
  // seconds and nanoseconds, the femtoseconds below a nanosecond dropped). Throws
  // std::invalid_argument if `size` exceeds kPcapSnaplen, std::runtime_error on a write error.
  void write(Time t_fs, const std::uint8_t* frame, std::size_t size);
  // Flushes and closes; throws std::runtime_error naming the path if anything failed.
  void close();

  std::uint64_t frames() const { return frames_; }
  const std::string& path() const { return path_; }

 private:
  void flush();

  std::string path_;
  std::FILE* file_ = nullptr;
  std::vector<std::uint8_t> buf_;
  std::uint64_t frames_ = 0;
};

}  // namespace xy::link
