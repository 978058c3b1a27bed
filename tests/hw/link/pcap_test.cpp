#include "hw/link/pcap.hpp"

#include <gtest/gtest.h>

#include "tests/test_util.hpp"
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "hw/link/crc32.hpp"
#include "kernel/rng.hpp"

namespace xy::link {
namespace {

namespace fs = std::filesystem;

using xy::testing::TempDir;

// 100 good Ethernet II frames and 3 with a corrupted FCS, 20 us + 7 fs apart from 0.999 s, so
// the stamps cross a second and drop their femtoseconds.
struct Capture {
  std::vector<std::vector<std::uint8_t>> frames;
  std::vector<Time> times;
  std::vector<bool> bad;
};

constexpr std::size_t kBadFrames[] = {7, 55, 102};

Capture make_capture() {
  Capture c;
  Rng rng(11, "pcap_test");
  for (std::size_t i = 0; i < 103; ++i) {
    std::vector<std::uint8_t> f = {0x02, 0, 0, 0, 0, 0x01, 0x02, 0, 0, 0, 0, 0x02, 0x88, 0xB5};
    f.resize(14 + rng.between(46, 1500));
    rng.fill(f.data() + 14, f.size() - 14);
    append_fcs(f);
    bool bad = false;
    for (std::size_t b : kBadFrames) bad |= i == b;
    if (bad) f[f.size() - 1 - i % 4] ^= 0x5A;
    c.frames.push_back(std::move(f));
    c.times.push_back(999 * kMs + i * (20 * kUs + 7));
    c.bad.push_back(bad);
  }
  return c;
}

void write_capture(const Capture& c, const std::string& path) {
  PcapWriter w(path);
  for (std::size_t i = 0; i < c.frames.size(); ++i)
    w.write(c.times[i], c.frames[i].data(), c.frames[i].size());
  EXPECT_EQ(w.frames(), c.frames.size());
  w.close();
}

std::vector<std::uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::uint32_t le32(const std::vector<std::uint8_t>& b, std::size_t at) {
  return std::uint32_t{b.at(at)} | std::uint32_t{b.at(at + 1)} << 8 |
         std::uint32_t{b.at(at + 2)} << 16 | std::uint32_t{b.at(at + 3)} << 24;
}

std::uint16_t le16(const std::vector<std::uint8_t>& b, std::size_t at) {
  return static_cast<std::uint16_t>(b.at(at) | b.at(at + 1) << 8);
}

// Runs a shell command; returns its stdout and sets `status` to its exit status.
std::string run(const std::string& command, int& status) {
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) throw std::runtime_error("cannot run: " + command);
  char chunk[4096];
  for (std::size_t n; (n = std::fread(chunk, 1, sizeof chunk, pipe)) > 0;) out.append(chunk, n);
  const int raw = ::pclose(pipe);
  status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return out;
}

std::vector<std::string> split(const std::string& line, char sep) {
  std::vector<std::string> parts;
  std::stringstream ss(line);
  for (std::string part; std::getline(ss, part, sep);) parts.push_back(part);
  if (!line.empty() && line.back() == sep) parts.emplace_back();
  return parts;
}

TEST(PcapWriter, FileHoldsHeaderRecordsAndTimestamps) {
  TempDir tmp;
  const std::string path = tmp.file("run.pcap");
  const Capture c = make_capture();
  write_capture(c, path);

  const auto b = read_bytes(path);
  ASSERT_GE(b.size(), 24u);
  EXPECT_EQ(b[0], 0x4D);  // 0xA1B23C4D little-endian: nanosecond stamps
  EXPECT_EQ(le32(b, 0), 0xA1B23C4Du);
  EXPECT_EQ(le16(b, 4), 2);
  EXPECT_EQ(le16(b, 6), 4);
  EXPECT_EQ(le32(b, 8), 0u);
  EXPECT_EQ(le32(b, 12), 0u);
  EXPECT_EQ(le32(b, 16), kPcapSnaplen);
  EXPECT_EQ(le32(b, 20), 0x24000001u);  // Ethernet; FCS length known, 2 x 16 bits

  std::size_t at = 24;
  for (std::size_t i = 0; i < c.frames.size(); ++i) {
    const auto& f = c.frames[i];
    ASSERT_LE(at + 16 + f.size(), b.size()) << "record " << i;
    EXPECT_EQ(le32(b, at), c.times[i] / (1000 * kMs)) << "record " << i;
    EXPECT_EQ(le32(b, at + 4), c.times[i] % (1000 * kMs) / kNs) << "record " << i;
    EXPECT_EQ(le32(b, at + 8), f.size()) << "record " << i;
    EXPECT_EQ(le32(b, at + 12), f.size()) << "record " << i;
    EXPECT_TRUE(std::equal(f.begin(), f.end(), b.data() + at + 16)) << "record " << i;
    at += 16 + f.size();
  }
  EXPECT_EQ(at, b.size());

  // Spot checks by hand: first stamp 0.999 s; record 50 is 0.999 s + 1 ms + 350 fs.
  EXPECT_EQ(le32(b, 24), 0u);
  EXPECT_EQ(le32(b, 28), 999'000'000u);
  std::size_t r50 = 24;
  for (std::size_t i = 0; i < 50; ++i) r50 += 16 + c.frames[i].size();
  EXPECT_EQ(le32(b, r50), 1u);
  EXPECT_EQ(le32(b, r50 + 4), 0u);
}

TEST(PcapWriter, TsharkReadsEveryFrameAndFlagsExactlyTheBadFcs) {
  int status = 0;
  run("command -v tshark", status);
  ASSERT_EQ(status, 0) << "tshark is not on PATH; scripts/bootstrap installs it (Debian package "
                          "'tshark')";

  TempDir tmp;
  const std::string path = tmp.file("run.pcap");
  const Capture c = make_capture();
  write_capture(c, path);

  // The header's FCS bits make tshark take the last four bytes as the FCS; eth.check_fcs makes
  // it verify them (status 0 bad, 1 good, 2 not checked).
  const std::string errors = tmp.file("tshark.err");
  const std::string out = run("tshark -r '" + path +
                                  "' -o eth.check_fcs:TRUE -T fields -E separator='|'"
                                  " -E occurrence=f -e frame.number -e frame.len"
                                  " -e frame.time_epoch -e eth.type -e eth.fcs.status"
                                  " -e _ws.malformed 2>'" + errors + "'",
                              status);
  std::ifstream err_in(errors);
  const std::string err{std::istreambuf_iterator<char>(err_in), std::istreambuf_iterator<char>()};
  ASSERT_EQ(status, 0) << "tshark failed:\n" << err;

  std::vector<std::string> lines;
  std::stringstream ss(out);
  for (std::string line; std::getline(ss, line);)
    if (!line.empty()) lines.push_back(line);
  ASSERT_EQ(lines.size(), c.frames.size()) << out << err;

  std::vector<std::size_t> flagged;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const auto fields = split(lines[i], '|');
    ASSERT_EQ(fields.size(), 6u) << lines[i];
    EXPECT_EQ(fields[0], std::to_string(i + 1));
    EXPECT_EQ(fields[1], std::to_string(c.frames[i].size()));
    char stamp[32];
    std::snprintf(stamp, sizeof stamp, "%u.%09u",
                  static_cast<unsigned>(c.times[i] / (1000 * kMs)),
                  static_cast<unsigned>(c.times[i] % (1000 * kMs) / kNs));
    EXPECT_EQ(fields[2], stamp) << "frame " << i + 1;
    EXPECT_EQ(fields[3], "0x88b5") << "frame " << i + 1;
    EXPECT_TRUE(fields[4] == "0" || fields[4] == "1") << "FCS unchecked: " << lines[i];
    if (fields[4] == "0") flagged.push_back(i);
    EXPECT_EQ(fields[5], "") << "malformed: " << lines[i];
  }
  EXPECT_EQ(flagged, std::vector<std::size_t>(std::begin(kBadFrames), std::end(kBadFrames)));
}

TEST(PcapWriter, TimestampsAreSecondsAndNanoseconds) {
  TempDir tmp;
  const std::string path = tmp.file("t.pcap");
  const std::uint8_t frame[64] = {};
  {
    PcapWriter w(path);
    w.write(0, frame, sizeof frame);
    w.write(1000 * kMs + kNs + 999, frame, sizeof frame);  // 1 s 1 ns 999 fs
    w.write(3723 * 1000 * kMs + 999'999'999 * kNs, frame, sizeof frame);
  }  // the destructor flushes
  const auto b = read_bytes(path);
  ASSERT_EQ(b.size(), 24u + 3 * (16 + 64));
  EXPECT_EQ(le32(b, 24), 0u);
  EXPECT_EQ(le32(b, 28), 0u);
  EXPECT_EQ(le32(b, 104), 1u);
  EXPECT_EQ(le32(b, 108), 1u);
  EXPECT_EQ(le32(b, 184), 3723u);
  EXPECT_EQ(le32(b, 188), 999'999'999u);
}

TEST(PcapWriter, CreatesTheParentFolder) {
  TempDir tmp;
  const std::string path = tmp.file("a/b/c.pcap");
  PcapWriter w(path);
  w.close();
  EXPECT_EQ(fs::file_size(path), 24u);
}

TEST(PcapWriter, ThrowsNamingAPathItCannotOpen) {
  TempDir tmp;
  std::ofstream(tmp.file("plain")) << "not a folder";
  const std::string path = tmp.file("plain/c.pcap");
  try {
    PcapWriter w(path);
    FAIL() << "opened " << path;
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

TEST(PcapWriter, RejectsAFrameAboveTheSnapshotLength) {
  TempDir tmp;
  PcapWriter w(tmp.file("big.pcap"));
  std::vector<std::uint8_t> frame(kPcapSnaplen + 1);
  EXPECT_THROW(w.write(0, frame.data(), frame.size()), std::invalid_argument);
  EXPECT_EQ(w.frames(), 0u);
}

}  // namespace
}  // namespace xy::link
