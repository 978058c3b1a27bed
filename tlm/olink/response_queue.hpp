// Transactions waiting for their BEGIN_RESP, earliest first (ties in the order they came), sent
// on the target socket's backward path by one method process. The TLM utilities'
// peq_with_cb_and_phase inserts in linear time: too slow with thousands in flight.
#pragma once
#include <cstdint>
#include <functional>
#include <queue>
#include <tuple>
#include <vector>

#include <systemc>
#include <tlm>

#include "kernel/clock_domain.hpp"

namespace xy::olink {

template <class Socket>
class ResponseQueue : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(ResponseQueue);
  ResponseQueue(const sc_core::sc_module_name& name, Socket& socket) : sc_core::sc_module(name), socket_(socket) {
    SC_METHOD(send);
    sensitive << wake_;
    dont_initialize();
  }
  // BEGIN_RESP for `trans` at simulated time `at` (fs, not before now).
  void push(tlm::tlm_generic_payload& trans, Time at) {
    due_.emplace(at, order_++, &trans);
    wake_.notify(to_sc_time(std::get<0>(due_.top()) - sim_now()));  // an earlier notification wins
  }

 private:
  void send() {
    while (!due_.empty() && std::get<0>(due_.top()) <= sim_now()) {
      tlm::tlm_generic_payload& trans = *std::get<2>(due_.top());
      due_.pop();
      tlm::tlm_phase phase = tlm::BEGIN_RESP;
      sc_core::sc_time zero = sc_core::SC_ZERO_TIME;
      socket_->nb_transport_bw(trans, phase, zero);  // END_RESP may follow on the forward path
    }
    if (!due_.empty()) wake_.notify(to_sc_time(std::get<0>(due_.top()) - sim_now()));
  }
  using Due = std::tuple<Time, std::uint64_t, tlm::tlm_generic_payload*>;
  Socket& socket_;
  std::priority_queue<Due, std::vector<Due>, std::greater<Due>> due_;
  std::uint64_t order_ = 0;
  sc_core::sc_event wake_;
};

}  // namespace xy::olink
