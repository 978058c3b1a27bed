// A GPU as a TLM-2.0 initiator: runs a list of Loads, Stores and atomics through its socket,
// blocking (b_transport) one at a time, and records each one's latency and result.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "tlm/olink/olink.hpp"

namespace xy::olink {

struct Access {
  enum Kind { kLoad, kStore, kFetchAdd } kind = kLoad;
  std::uint64_t address = 0;
  std::uint32_t bytes = 64;
  std::uint64_t operand = 0;  // fetch-add
};

class GpuInitiator : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<GpuInitiator> socket;
  SC_HAS_PROCESS(GpuInitiator);
  GpuInitiator(const sc_core::sc_module_name& name, std::vector<Access> program, sc_core::sc_time start)
      : sc_core::sc_module(name), socket("socket"), program_(std::move(program)), start_(start) {
    SC_THREAD(run);
  }
  struct Result {
    sc_core::sc_time latency;
    tlm::tlm_response_status status;
    std::uint64_t value;  // first 8 bytes read, or the old value of an atomic
  };
  const std::vector<Result>& results() const { return results_; }
  bool done() const { return results_.size() == program_.size(); }

 private:
  void run() {
    sc_core::wait(start_);
    std::vector<std::uint8_t> buffer(4096);
    for (const Access& a : program_) {
      tlm::tlm_generic_payload t;
      AtomicExtension atomic;
      t.set_address(a.address);
      t.set_data_length(a.bytes);
      t.set_data_ptr(buffer.data());
      t.set_streaming_width(a.bytes);
      t.set_byte_enable_ptr(nullptr);
      t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
      t.set_command(a.kind == Access::kLoad ? tlm::TLM_READ_COMMAND : tlm::TLM_WRITE_COMMAND);
      if (a.kind == Access::kFetchAdd) {
        atomic.kind = AtomicExtension::kFetchAdd;
        atomic.operand = a.operand;
        t.set_extension(&atomic);
      }
      sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
      const sc_core::sc_time begin = sc_core::sc_time_stamp();
      socket->b_transport(t, delay);
      std::uint64_t value = 0;
      std::memcpy(&value, buffer.data(), std::min<std::uint32_t>(8, a.bytes));
      results_.push_back({sc_core::sc_time_stamp() + delay - begin, t.get_response_status(), value});
      if (a.kind == Access::kFetchAdd) t.clear_extension(&atomic);
    }
  }
  std::vector<Access> program_;
  sc_core::sc_time start_;
  std::vector<Result> results_;
};

}  // namespace xy::olink
