#include "tlm/olink/fast_fabric.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <tlm_utils/simple_target_socket.h>

#include "tlm/olink/response_queue.hpp"
#include "xingyun/clock_domain.hpp"

namespace xy::olink {

using sc_core::sc_time;

std::uint64_t& Calendar::used(Cycle bucket) {
  if (bucket >= first_ + ring_.size()) {  // grow: re-seat the live buckets in a ring twice as large
    std::size_t size = 2 * ring_.size();
    while (size <= bucket - first_) size *= 2;
    std::vector<std::uint64_t> bigger(size, 0);
    for (Cycle b = first_; b < end_; ++b) bigger[b & (bigger.size() - 1)] = ring_[b & (ring_.size() - 1)];
    ring_.swap(bigger);
  }
  end_ = std::max(end_, bucket + 1);
  return ring_[bucket & (ring_.size() - 1)];
}

Cycle Calendar::book(Cycle ready, std::uint64_t bytes, Cycle now) {
  for (; first_ < now / kBucket && first_ < end_; ++first_) ring_[first_ & (ring_.size() - 1)] = 0;
  first_ = std::max(first_, now / kBucket);
  end_ = std::max(end_, first_);
  // Fluid within a bucket: a booking takes the bucket's free bytes wherever they are, and ends
  // no earlier than its own serialisation from `ready` allows.
  const std::uint64_t capacity = kBucket * rate_;
  const Cycle own_end = ready + (bytes + rate_ - 1) / rate_ - 1;
  Cycle bucket = std::max(ready / kBucket, first_);
  if (bucket >= full_from_ && bucket < full_until_) bucket = full_until_;  // skip a known full run
  for (;; ++bucket) {
    std::uint64_t& booked = used(bucket);
    const std::uint64_t take = std::min(bytes, capacity - booked);
    booked += take;
    bytes -= take;
    if (booked == capacity) {  // extend the full run, or start a new one here
      if (bucket != full_until_) full_from_ = bucket;
      full_until_ = bucket + 1;
    }
    if (bytes == 0) return std::max(own_end, bucket * kBucket + (booked + rate_ - 1) / rate_ - 1);
  }
}

// One GPU's socket.
struct FastFabric::Port : sc_core::sc_module {
  tlm_utils::simple_target_socket<Port> socket;
  ResponseQueue<tlm_utils::simple_target_socket<Port>> responses;
  FastFabric& fabric;
  std::uint32_t gpu;

  Port(const sc_core::sc_module_name& name, FastFabric& f, std::uint32_t g)
      : sc_core::sc_module(name), socket("socket"), responses("responses", socket), fabric(f), gpu(g) {
    socket.register_b_transport(this, &Port::b_transport);
    socket.register_nb_transport_fw(this, &Port::nb_transport_fw);
  }
  // Loosely timed: returns at once, the completion in the annotated delay.
  void b_transport(tlm::tlm_generic_payload& trans, sc_time& delay) {
    if (!check_request(trans, fabric.params_.endpoint)) return;
    delay = to_sc_time(fabric.carry(gpu, trans, sim_now() + from_sc_time(delay)) - sim_now());
  }
  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& trans, tlm::tlm_phase& phase, sc_time& delay) {
    if (phase == tlm::END_RESP) return tlm::TLM_COMPLETED;
    if (phase != tlm::BEGIN_REQ) return tlm::TLM_ACCEPTED;
    if (!check_request(trans, fabric.params_.endpoint)) {
      phase = tlm::BEGIN_RESP;
      return tlm::TLM_UPDATED;
    }
    responses.push(trans, fabric.carry(gpu, trans, sim_now() + from_sc_time(delay)));
    phase = tlm::END_REQ;
    return tlm::TLM_UPDATED;
  }
};

FastFabric::FastFabric(const sc_core::sc_module_name& name, const FastParams& params)
    : sc_core::sc_module(name), params_(params) {
  use_femtosecond_resolution();  // Time is in fs, as in the cycle-level models
  const auto& ep = params.endpoint;
  for (std::uint32_t g = 0; g < ep.gpus; ++g) {
    ports_.push_back(std::make_unique<Port>(fmt::format("gpu{}", g).c_str(), *this, g));
    lines_.emplace_back(ep.width);
    outputs_.emplace_back(params.switch_width);
    memories_.emplace_back(ep.memory_width);
  }
  memory_.resize(ep.gpus);
}
FastFabric::~FastFabric() = default;

tlm::tlm_target_socket<>& FastFabric::socket(std::uint32_t gpu) { return ports_.at(gpu)->socket; }
Memory& FastFabric::memory(std::uint32_t gpu) { return memory_.at(gpu); }

Cycle FastFabric::send(std::uint32_t src, std::uint32_t dst, std::uint32_t frame_bytes, Cycle ready, Cycle now) {
  const auto& ep = params_.endpoint;
  const std::uint32_t on_line = frame_bytes + kFcsBytes;
  const Cycle serialise = (on_line + ep.width - 1) / ep.width;
  // The line carries frame, FCS, preamble and gap; the head leaves as many cycles before the end.
  const std::uint32_t slot = on_line + kPreambleGapBytes;
  const Cycle head = lines_[src].book(ready, slot, now) + 1 - (slot + ep.width - 1) / ep.width;
  const Cycle beats = (on_line + params_.switch_width - 1) / params_.switch_width;
  const Cycle out_head =
      outputs_[dst].book(head + params_.link + params_.switch_core, beats * params_.switch_width, now) + 1 - beats;
  return out_head + params_.link + serialise - 1 + ep.ingress;
}

Time FastFabric::carry(std::uint32_t src, tlm::tlm_generic_payload& trans, Time issued) {
  const auto& ep = params_.endpoint;
  const Cycle now = sim_now() / params_.period;
  const Cycle ready = issued / params_.period + 1 + ep.egress;
  // Each frame's payload as the cycle-level endpoint would encode it; the owner's memory runs it now.
  const bool bulk = trans.get_data_length() > ep.max_bytes;
  const std::uint32_t frames = bulk ? segments_of(trans, ep.segment_bytes) : 1;
  const auto frame = [](std::size_t bytes) { return static_cast<std::uint32_t>(kEthernetHeaderBytes + kHeaderBytes + bytes); };
  Cycle done = 0;
  Header h;
  for (std::uint32_t i = 0; i < frames; ++i) {
    if (bulk) to_segment(trans, static_cast<std::uint16_t>(src), next_txn_++, i, ep.segment_bytes, h, payload_);
    else to_request(trans, static_cast<std::uint16_t>(src), next_txn_++, h, payload_);
    memory_[h.dst].serve(h, payload_.data(), data_);
    if (trans.is_read() || trans.get_extension<AtomicExtension>())
      std::copy(data_.begin(), data_.begin() + std::min<std::size_t>(data_.size(), trans.get_data_length()),
                trans.get_data_ptr());
    const Cycle at_owner = send(src, h.dst, frame(payload_.size()), ready, now);
    const Cycle served = memories_[h.dst].book(at_owner, h.bytes, now) + 1 + ep.memory;
    done = std::max(done, send(h.dst, src, frame(data_.size()), served + ep.egress, now));
  }
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
  return done * params_.period;
}

}  // namespace xy::olink
