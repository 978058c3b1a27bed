#include "tlm/olink/fast_fabric.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>
#include <tlm_utils/simple_target_socket.h>

#include "tlm/olink/response_queue.hpp"
#include "kernel/clock_domain.hpp"

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
    : sc_core::sc_module(name), params_(params), uplink_(params.switch_width) {
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

FastFabric::Arrivals FastFabric::send(std::uint32_t src, std::uint32_t dst, const Train& train, Span ready, Cycle now) {
  const auto& ep = params_.endpoint;
  const std::uint32_t width = ep.width, beat = params_.switch_width;
  // The line carries frame, FCS, preamble and gap; the switch whole beats of frame and FCS.
  const auto slot = [](std::uint32_t bytes) { return bytes + kFcsBytes + kPreambleGapBytes; };
  const auto beats_of = [&](std::uint32_t bytes) { return beats(bytes + kFcsBytes, beat); };
  const std::uint64_t before_last = train.frames - 1;
  const std::uint64_t on_line = before_last * slot(train.bytes) + slot(train.last_bytes);
  const Cycle line_end = std::max(lines_[src].book(ready.first, on_line, now),
                                  ready.last + beats(slot(train.last_bytes), width) - 1);
  // The first frame's head leaves as many cycles before the end as the whole train takes.
  const Cycle head_first = line_end + 1 - beats(on_line, width);
  const Cycle head_last = line_end + 1 - beats(slot(train.last_bytes), width);
  const Cycle hop = params_.link + params_.switch_core;
  const std::uint64_t out_beats = before_last * beats_of(train.bytes) + beats_of(train.last_bytes);
  // A switch output sends the train's beats from its first frame's head on (`first_in`), its last
  // frame no earlier than that frame's head allows (`last_in`); returns the cycle of the last beat.
  const auto through = [&](Calendar& output, Cycle first_in, Cycle last_in) {
    return std::max(output.book(first_in, out_beats * beat, now), last_in + beats_of(train.last_bytes) - 1);
  };
  Cycle first_in = head_first + hop, last_in = head_last + hop;
  if (params_.uplink) {  // up the shared uplink, back, and through the switch again
    const Cycle up_end = through(uplink_, first_in, last_in), back = params_.uplink + params_.switch_core;
    first_in = up_end + 1 - out_beats + back;
    last_in = up_end + 1 - beats_of(train.last_bytes) + back;
  }
  const Cycle out_end = through(outputs_[dst], first_in, last_in);
  // Out of the switch, a frame reaches the owner a link and its serialisation later.
  const std::uint32_t first_bytes = train.frames > 1 ? train.bytes : train.last_bytes;
  const Cycle after = params_.link + ep.ingress - 1;
  const Cycle last_out = out_end + 1 - beats_of(train.last_bytes);
  return {out_end + 1 - out_beats + beats(first_bytes + kFcsBytes, width) + after,
          last_out - beats_of(train.bytes) + beats(train.bytes + kFcsBytes, width) + after,
          last_out + beats(train.last_bytes + kFcsBytes, width) + after};
}

void FastFabric::execute(std::uint32_t src, tlm::tlm_generic_payload& trans) {
  Memory& owner = memory_[gpu_of(trans.get_address())];
  if (trans.get_data_length() > params_.endpoint.max_bytes) {  // a bulk write: its Stores, all at once
    owner.write(trans.get_address() & kOffsetMask, trans.get_data_ptr(), trans.get_data_length());
    return;
  }
  Header h;
  to_request(trans, static_cast<std::uint16_t>(src), next_txn_++, h, payload_);
  owner.serve(h, payload_.data(), data_);
  if (trans.is_read() || trans.get_extension<AtomicExtension>())
    std::copy(data_.begin(), data_.begin() + std::min<std::size_t>(data_.size(), trans.get_data_length()),
              trans.get_data_ptr());
}

Time FastFabric::carry(std::uint32_t src, tlm::tlm_generic_payload& trans, Time issued) {
  const auto& ep = params_.endpoint;
  const Cycle now = sim_now() / params_.period;
  const Cycle ready = issued / params_.period + 1 + ep.egress;
  if (params_.data) execute(src, trans);
  else if (trans.is_read() || trans.get_extension<AtomicExtension>())
    std::memset(trans.get_data_ptr(), 0, trans.get_data_length());
  // A bulk write is a train of Stores of `segment_bytes`, the last maybe shorter; the rest one frame.
  const std::uint32_t dst = gpu_of(trans.get_address()), length = trans.get_data_length();
  const std::uint32_t frames = length > ep.max_bytes ? segments_of(trans, ep.segment_bytes) : 1;
  const std::uint32_t bytes = frames > 1 ? ep.segment_bytes : length, last = length - (frames - 1) * bytes;
  // Without the FCS, as send() takes them.
  const auto request = [&](std::uint32_t b) { return frame_bytes(request_data_bytes(trans, b)) - kFcsBytes; };
  const auto response = [&](std::uint32_t b) { return frame_bytes(response_data_bytes(trans, b)) - kFcsBytes; };
  const Arrivals at_owner = send(src, dst, {frames, request(bytes), request(last)}, {ready, ready}, now);
  // The owner's memory serves each frame's data as it comes; a short last frame waits for the one
  // before it to be served.
  const std::uint32_t mw = ep.memory_width;
  Cycle memory_end = std::max(memories_[dst].book(at_owner.first, length, now), at_owner.last + beats(last, mw) - 1);
  if (frames > 1) memory_end = std::max(memory_end, at_owner.next_to_last + beats(bytes, mw) + beats(last, mw) - 1);
  const Span served{memory_end + 1 - beats(length, mw) + beats(bytes, mw) + ep.memory, memory_end + 1 + ep.memory};
  const Arrivals back = send(dst, src, {frames, response(bytes), response(last)},
                         {served.first + ep.egress, served.last + ep.egress}, now);
  trans.set_response_status(tlm::TLM_OK_RESPONSE);
  return back.last * params_.period;
}

}  // namespace xy::olink
