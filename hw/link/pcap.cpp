#include "hw/link/pcap.hpp"

#include <filesystem>
#include <stdexcept>
#include <system_error>

namespace xy::link {
namespace {

constexpr std::size_t kFlushAt = std::size_t{1} << 20;
constexpr Time kFsPerSecond = 1000 * kMs;

// pcap fields are in the writer's byte order; little-endian fixes it whatever the host.
void put_le16(std::vector<std::uint8_t>& buf, std::uint16_t v) {
  buf.push_back(static_cast<std::uint8_t>(v));
  buf.push_back(static_cast<std::uint8_t>(v >> 8));
}

void put_le32(std::vector<std::uint8_t>& buf, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) buf.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

}  // namespace

PcapWriter::PcapWriter(const std::string& path) : path_(path) {
  const auto dir = std::filesystem::path(path).parent_path();
  if (!dir.empty()) {
    std::error_code ignored;  // an unwritable place is reported when the file fails to open
    std::filesystem::create_directories(dir, ignored);
  }
  file_ = std::fopen(path.c_str(), "wb");
  if (!file_) throw std::runtime_error("cannot open pcap file '" + path + "' for writing");
  buf_.reserve(kFlushAt + kPcapSnaplen + 16);
  put_le32(buf_, kPcapMagicNs);
  put_le16(buf_, 2);  // version 2.4
  put_le16(buf_, 4);
  put_le32(buf_, 0);  // reserved (once the time zone)
  put_le32(buf_, 0);  // reserved (once the timestamp accuracy)
  put_le32(buf_, kPcapSnaplen);
  put_le32(buf_, kLinktypeEthernetWithFcs);
}

PcapWriter::~PcapWriter() {
  if (!file_) return;
  if (!buf_.empty()) std::fwrite(buf_.data(), 1, buf_.size(), file_);
  std::fclose(file_);
}

void PcapWriter::write(Time t_fs, const std::uint8_t* frame, std::size_t size) {
  if (size > kPcapSnaplen)
    throw std::invalid_argument("pcap: frame of " + std::to_string(size) +
                                " bytes exceeds the snapshot length " +
                                std::to_string(kPcapSnaplen));
  if (!file_) throw std::runtime_error("pcap file '" + path_ + "' written after close()");
  // 2^64 fs is about 5 hours, so the seconds always fit the 32-bit field.
  put_le32(buf_, static_cast<std::uint32_t>(t_fs / kFsPerSecond));
  put_le32(buf_, static_cast<std::uint32_t>(t_fs % kFsPerSecond / kNs));
  put_le32(buf_, static_cast<std::uint32_t>(size));  // captured length
  put_le32(buf_, static_cast<std::uint32_t>(size));  // length on the wire
  buf_.insert(buf_.end(), frame, frame + size);
  ++frames_;
  if (buf_.size() >= kFlushAt) flush();
}

void PcapWriter::flush() {
  if (std::fwrite(buf_.data(), 1, buf_.size(), file_) != buf_.size())
    throw std::runtime_error("error writing pcap file '" + path_ + "'");
  buf_.clear();
}

void PcapWriter::close() {
  if (!file_) return;
  bool failed = std::fwrite(buf_.data(), 1, buf_.size(), file_) != buf_.size();
  buf_.clear();
  failed |= std::fclose(file_) != 0;
  file_ = nullptr;
  if (failed) throw std::runtime_error("error writing pcap file '" + path_ + "'");
}

}  // namespace xy::link
