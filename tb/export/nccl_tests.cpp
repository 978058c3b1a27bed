// nccl-tests' figures (doc/PERFORMANCE.md, src/sendrecv.cu) for the measured point-to-point
// messages: time in us, algbw = size / time in GB/s of 10^9 bytes, busbw = algbw x 1 (the
// factor of SendRecv). Time is the GPU-to-GPU time: the write handed to the sender's NIC to
// the receiver's NIC handing its last Store to memory (summary.delivered_ns, as olink-message reports it).
#include <map>

#include <fmt/format.h>

#include "tb/export/formats.hpp"

namespace xy::exports {

constexpr double kSendRecvBusFactor = 1;  // busbw / algbw of point-to-point (SendRecvGetBw)

std::vector<File> nccl_tests(const std::vector<Input>& inputs) {
  const MessageSweep s = message_sweep(inputs, 1, "nccl-tests");
  std::map<double, std::pair<double, int>> by_size;  // bytes -> (sum of delivered_ns, points)
  for (const auto& m : s.messages) {
    auto& [sum, n] = by_size[m.bytes];
    sum += m.delivered_ns;
    ++n;
  }
  std::string csv = fmt::format(
      "# nccl-tests sendrecv figures, written by xysim export nccl-tests: {} on {}, {} GPUs ({}), from {}.\n"
      "# time: us, measured (write handed to the sender's NIC to the receiver's last Store in memory, mean of the points);\n"
      "# algbw = size / time, GB/s of 10^9 B; busbw = algbw x 1 (point to point).\n"
      "size,time,algbw,busbw\n",
      s.scenarios, s.fabric, s.gpus, s.topology, s.inputs);
  for (const auto& [bytes, acc] : by_size) {
    const double ns = acc.first / acc.second, algbw = bytes / ns;  // bytes per ns = 10^9 B/s
    csv += fmt::format("{:.0f},{:.4f},{:.4f},{:.4f}\n", bytes, ns / 1000, algbw, algbw * kSendRecvBusFactor);
  }
  return {{"nccl-tests.csv", csv}};
}

}  // namespace xy::exports
