// A GPU as a TLM-2.0 initiator: runs a list of Loads, Stores and atomics through its socket,
// blocking (b_transport) one at a time, and records each one's latency and result.
#pragma once
#include <cstdint>
#include <algorithm>
#include <functional>
#include <queue>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "tlm/olink/olink.hpp"
#include "kernel/rng.hpp"

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
  // Starts at `start`, or that long after `go` fires if given.
  GpuInitiator(const sc_core::sc_module_name& name, std::vector<Access> program, sc_core::sc_time start,
               const sc_core::sc_event* go = nullptr)
      : sc_core::sc_module(name), socket("socket"), program_(std::move(program)), start_(start), go_(go) {
    SC_THREAD(run);
  }
  struct Result {
    sc_core::sc_time latency;
    tlm::tlm_response_status status;
    std::uint64_t value;  // first 8 bytes read, or the old value of an atomic
    sc_core::sc_time issued;  // when it was handed to the socket
  };
  const std::vector<Result>& results() const { return results_; }
  bool done() const { return results_.size() == program_.size(); }
  const sc_core::sc_event& done_event() const { return done_event_; }  // notified when done

 private:
  void run() {
    if (go_) sc_core::wait(*go_);
    sc_core::wait(start_);
    std::uint32_t largest = 8;
    for (const Access& a : program_) largest = std::max(largest, a.bytes);
    buffer_.resize(largest);  // Stores write a known pattern: byte i = i mod 251
    for (std::uint32_t i = 0; i < largest; ++i) buffer_[i] = static_cast<std::uint8_t>(i % 251);
    for (const Access& a : program_) {
      tlm::tlm_generic_payload t;
      AtomicExtension atomic;
      t.set_address(a.address);
      t.set_data_length(a.bytes);
      t.set_data_ptr(buffer_.data());
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
      if (delay != sc_core::SC_ZERO_TIME) sc_core::wait(delay);  // a loosely timed target annotates instead of waiting
      std::uint64_t value = 0;
      std::memcpy(&value, buffer_.data(), std::min<std::uint32_t>(8, a.bytes));
      results_.push_back({sc_core::sc_time_stamp() - begin, t.get_response_status(), value, begin});
      if (a.kind == Access::kFetchAdd) t.clear_extension(&atomic);
    }
    done_event_.notify(sc_core::SC_ZERO_TIME);
  }
  std::vector<Access> program_;
  sc_core::sc_time start_;
  const sc_core::sc_event* go_;
  std::vector<Result> results_;
  // A member, not a local of run(): a run stopped early leaves the thread waiting, never unwound,
  // and LeakSanitizer does not see into SystemC's thread stacks (tests/sanitize/lsan.supp).
  std::vector<std::uint8_t> buffer_;
  sc_core::sc_event done_event_;
};

}  // namespace xy::olink

namespace xy::olink {

// Where a GPU's Stores go: round robin over the other GPUs (an MoE all-to-all), to a seeded
// random other GPU each time (collisions and incast), or all to the next GPU on a ring (a TP
// all-gather or reduce-scatter step: each GPU passes its slice to its neighbour).
enum class Pattern { kAllToAll, kRandom, kRing };
inline const std::vector<std::string> kPatternNames = {"alltoall", "random", "ring"};

struct StreamSpec {
  std::uint32_t gpus = 2;
  std::uint32_t bytes = 256;        // per write: a Store, or above 256 a bulk write
  std::uint32_t count = 1;          // writes
  std::uint32_t outstanding = 2048; // in flight at most
  Pattern pattern = Pattern::kAllToAll;
  std::uint64_t seed = 1;           // the random pattern's
  // b_transport with temporal decoupling instead of the AT protocol: for a target that answers
  // with the completion as annotated delay rather than waiting (FastFabric).
  bool loosely_timed = false;
};

// A GPU streaming writes (AT base protocol, or loosely timed), offsets advancing in its own
// 16 MiB region of each target (one of 64 in the default 1 GiB); it starts when `go` fires, if
// given. Its payloads, one per write it may keep in flight, exist from its start until its last
// write is answered. Its random stream is its GPU's, so that models of the same system see the same traffic.
// Measures the bytes it moved and when the first started and the last completed.
class StoreStreamer : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<StoreStreamer> socket;
  SC_HAS_PROCESS(StoreStreamer);
  StoreStreamer(const sc_core::sc_module_name& name, std::uint32_t gpu, const StreamSpec& spec,
                const sc_core::sc_event* go = nullptr)
      : sc_core::sc_module(name), socket("socket"), gpu_(gpu), gpus_(spec.gpus), bytes_(spec.bytes),
        count_(spec.count), pattern_(spec.pattern), rng_(spec.seed, "gpu" + std::to_string(gpu)),
        outstanding_(spec.outstanding), data_(spec.bytes, static_cast<std::uint8_t>(gpu)), go_(go),
        loosely_timed_(spec.loosely_timed), sent_to_(spec.gpus) {
    socket.register_nb_transport_bw(this, &StoreStreamer::nb_transport_bw);
    SC_THREAD(run);
  }
  // Every write answered, and (loosely timed) the simulation has caught up with the last answer.
  bool done() const { return completed_ == count_ && sc_core::sc_time_stamp() >= finished_; }
  const sc_core::sc_event& done_event() const { return done_event_; }  // notified when done
  std::uint64_t bytes_moved() const { return static_cast<std::uint64_t>(completed_) * bytes_; }
  std::uint64_t bytes_to_move() const { return static_cast<std::uint64_t>(count_) * bytes_; }  // all its writes
  sc_core::sc_time started_at() const { return started_; }
  sc_core::sc_time finished_at() const { return finished_; }
  std::uint32_t errors() const { return errors_; }

 private:
  void run() {
    if (go_) sc_core::wait(*go_);
    started_ = sc_core::sc_time_stamp();
    slots_ = std::vector<tlm::tlm_generic_payload>(loosely_timed_ ? 1 : std::min(outstanding_, count_));
    if (loosely_timed_) return run_loosely_timed();  // reuses its one
    for (std::uint32_t s = 0; s < slots_.size(); ++s) free_.push_back(s);
    for (std::uint32_t i = 0; i < count_; ++i) {
      while (free_.empty()) sc_core::wait(freed_);
      tlm::tlm_generic_payload& t = slots_[free_.back()];  // responses come back in any order
      free_.pop_back();
      prepare(t, i);
      tlm::tlm_phase phase = tlm::BEGIN_REQ;
      sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
      if (socket->nb_transport_fw(t, phase, delay) == tlm::TLM_UPDATED && phase == tlm::BEGIN_RESP) finish(t);
    }
    while (completed_ < count_) sc_core::wait(freed_);
    std::vector<tlm::tlm_generic_payload>().swap(slots_);  // every write answered: no target holds one
    std::vector<std::uint32_t>().swap(free_);
  }
  // Each b_transport returns at once with the completion as its annotated delay; the GPU runs
  // ahead of SystemC's time by up to a quantum, with at most `outstanding` writes in flight, and
  // lets the other GPUs issue theirs every kTurnBytes, so that GPUs posting at the same time
  // share the fabric in turns rather than in SystemC's process order.
  void run_loosely_timed() {
    const sc_core::sc_time quantum(1, sc_core::SC_US);
    std::priority_queue<sc_core::sc_time, std::vector<sc_core::sc_time>, std::greater<>> in_flight;
    sc_core::sc_time local = sc_core::SC_ZERO_TIME;  // ahead of sc_time_stamp()
    const auto retire = [&] {
      const sc_core::sc_time done = in_flight.top();
      in_flight.pop();
      ++completed_;
      finished_ = std::max(finished_, done);
      return done;
    };
    tlm::tlm_generic_payload& t = slots_[0];
    std::uint64_t turn = 0;  // bytes issued since this GPU last let the others issue theirs
    for (std::uint32_t i = 0; i < count_; ++i) {
      if (in_flight.size() == outstanding_) local = std::max(local, retire() - sc_core::sc_time_stamp());
      prepare(t, i);
      sc_core::sc_time delay = local;
      socket->b_transport(t, delay);
      if (t.get_response_status() != tlm::TLM_OK_RESPONSE) ++errors_;
      in_flight.push(sc_core::sc_time_stamp() + delay);
      if (local >= quantum) {
        sc_core::wait(local);
        local = sc_core::SC_ZERO_TIME;
        turn = 0;
      } else if ((turn += bytes_) >= kTurnBytes) {
        sc_core::wait(sc_core::SC_ZERO_TIME);
        turn = 0;
      }
    }
    while (!in_flight.empty()) retire();
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    done_event_.notify(finished_ > now ? finished_ - now : sc_core::SC_ZERO_TIME);
  }
  void prepare(tlm::tlm_generic_payload& t, std::uint32_t i) {
    const std::uint32_t hop = pattern_ == Pattern::kAllToAll ? 1 + i % (gpus_ - 1)
                              : pattern_ == Pattern::kRandom  ? 1 + static_cast<std::uint32_t>(rng_.below(gpus_ - 1))
                                                              : 1;
    const std::uint32_t dst = (gpu_ + hop) % gpus_;
    const std::uint64_t region = std::uint64_t{1} << 24, writes_per_region = std::max<std::uint64_t>(1, region / bytes_);
    t.set_command(tlm::TLM_WRITE_COMMAND);
    t.set_address(uva(dst, gpu_ % 64 * region + sent_to_[dst]++ % writes_per_region * bytes_));
    t.set_data_ptr(data_.data());
    t.set_data_length(bytes_);
    t.set_streaming_width(bytes_);
    t.set_byte_enable_ptr(nullptr);
    t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  }
  tlm::tlm_sync_enum nb_transport_bw(tlm::tlm_generic_payload& t, tlm::tlm_phase& phase, sc_core::sc_time&) {
    if (phase == tlm::BEGIN_RESP) finish(t);
    phase = tlm::END_RESP;
    return tlm::TLM_COMPLETED;
  }
  void finish(tlm::tlm_generic_payload& t) {
    if (t.get_response_status() != tlm::TLM_OK_RESPONSE) ++errors_;
    free_.push_back(static_cast<std::uint32_t>(&t - slots_.data()));
    ++completed_;
    finished_ = sc_core::sc_time_stamp();
    freed_.notify(sc_core::SC_ZERO_TIME);
    if (done()) done_event_.notify(sc_core::SC_ZERO_TIME);
  }
  std::uint32_t gpu_, gpus_, bytes_, count_;
  Pattern pattern_;
  Rng rng_;
  std::uint32_t outstanding_;
  std::vector<tlm::tlm_generic_payload> slots_;
  std::vector<std::uint32_t> free_;  // indices of slots not in flight
  std::vector<std::uint8_t> data_;
  const sc_core::sc_event* go_;
  bool loosely_timed_;
  static constexpr std::uint64_t kTurnBytes = 16384;
  std::vector<std::uint32_t> sent_to_;  // writes per destination, for the next offset
  std::uint32_t completed_ = 0, errors_ = 0;
  sc_core::sc_event freed_, done_event_;
  sc_core::sc_time started_, finished_;
};

}  // namespace xy::olink
