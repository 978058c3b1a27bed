#include "tlm/olink/endpoint.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "kernel/clock_domain.hpp"

namespace xy::olink {

using sc_core::sc_time;

// The cycle-level part: frames in and out, the transaction table, the memory.
struct OlinkEndpoint::Nic : Core {
  struct Pending {
    tlm::tlm_generic_payload* trans;
    bool blocking;
    bool bulk;                // its frames' txns are in parent_of
    sc_core::sc_event* done;  // blocking: notified at completion
    std::uint32_t remaining;  // frames still to be answered (a bulk write sends several)
    std::uint8_t status;      // the first error among them, or OK
    Cycle started;
  };
  struct Timed {
    Cycle at;
    std::vector<std::uint8_t> frame;
  };
  // A request frame still to send: encoded only when it is the next to go (thousands may wait,
  // and the transaction holds their bytes until it completes).
  struct Request {
    Cycle at;
    tlm::tlm_generic_payload* trans;
    std::uint32_t txn;
    std::uint32_t segment;  // of a bulk write
  };

  std::function<void(const Packet&, Time)> on_arrival;
  std::function<void(Time)> on_served;

  Nic(const std::string& name, std::uint32_t gpu_id, const EndpointParams& p, Clock& clock_,
      std::vector<link::PortAttachment> ports_, PacketPool& pool_, Stats& stats, OlinkEndpoint& shell_)
      : Core(name), gpu(gpu_id), params(p), ports(std::move(ports_)), line_bytes(ports.size(), 0), pool(pool_),
        shell(shell_), memory(p.data),
        requests(stats.counter(name + ".requests", "transactions", "transactions this GPU issued")),
        served(stats.counter(name + ".served", "transactions", "requests this GPU's memory served")),
        latency(stats.histogram(name + ".latency", clock_.period(), "transaction in to completion")) {
    clock_.attach(*this);
    for (const auto& port : ports) port.bind(*this);
  }

  // --- from the shell, at SystemC time `t` ---
  void submit(tlm::tlm_generic_payload& trans, bool blocking, sc_core::sc_event* done, Time t) {
    const Cycle at = clock().first_edge_after(t);
    const std::uint32_t id = next_txn;
    const bool bulk = trans.get_data_length() > params.max_bytes;
    const std::uint32_t frames = bulk ? segments_of(trans, params.segment_bytes) : 1;
    table[id] = {&trans, blocking, bulk, done, frames, static_cast<std::uint8_t>(tlm::TLM_OK_RESPONSE), at};
    for (std::uint32_t i = 0; i < frames; ++i) {
      const std::uint32_t txn = next_txn++;
      if (bulk) parent_of[txn] = id;
      outbox.push_back({at + params.egress, &trans, txn, i});
    }
    requests.add();
    wake_at(at);
  }

  void eval() override {
    const Cycle now_c = now();
    for (auto& port : ports)
      while (port.can_receive()) {  // the frame is taken once its last byte (and FCS) is in
        Packet* p = port.receive(clock().time_of(now_c));
        if (on_arrival) on_arrival(*p, clock().time_of(now_c));
        inbox.push_back({now_c + (p->bytes + params.width - 1) / params.width - 1 + params.ingress, spare_buffer()});
        inbox.back().frame.swap(p->payload);  // the bytes change hands, the packet keeps a buffer
        pool.release(p);
      }
    while (!inbox.empty() && inbox.front().at <= now_c) {
      Timed in = std::move(inbox.front());
      inbox.pop_front();
      if (const auto h = decode(in.frame)) {
        if (h->op == Op::kResponse) complete(*h, in.frame);
        else serve(*h, in.frame);
      }
      spare_buffers.push_back(std::move(in.frame));
    }
    // Memory: the HBM answers in order, `memory` cycles after the access starts.
    while (!memory_out.empty() && memory_out.front().at <= now_c) {
      answers.push_back({now_c + params.egress, std::move(memory_out.front().frame)});
      memory_out.pop_front();
    }
    // Each line packs frames back to back, 20 bytes of preamble and gap between them, at most one
    // new frame per cycle on each (a channel takes one item a cycle); responses and requests in
    // turn; with several ports, each frame takes the next one in turn that is free and lets it go.
    for (std::size_t sent = 0; sent < ports.size(); ++sent) {
      const bool answer = !answers.empty() && answers.front().at <= now_c;
      const bool request = !outbox.empty() && outbox.front().at <= now_c;
      const bool send_answer = answer && (!request || !answered_last);
      if (!send_answer && !request) break;
      const int k = free_port(now_c, send_answer ? answers.front().frame : next_request());
      if (k < 0) break;
      Packet* p = pool.acquire();
      if (send_answer) {
        p->payload.swap(answers.front().frame);
        spare_buffers.push_back(std::move(answers.front().frame));
        answers.pop_front();
      } else {
        p->payload.swap(request_frame);
        outbox.pop_front();
        request_encoded = false;
      }
      answered_last = send_answer;
      p->bytes = static_cast<std::uint32_t>(p->payload.size()) + kFcsBytes;
      p->phantom = false;
      p->dst = decode(p->payload)->dst;
      p->src = gpu;
      p->created = clock().time_of(now_c);
      ports[k].send(p);
      line_bytes[k] = std::max<std::uint64_t>(line_bytes[k], now_c * params.width) + p->bytes + kPreambleGapBytes;
      next_port = (k + 1) % static_cast<int>(ports.size());
    }
  }
  // The first port from next_port on whose line is free this cycle and whose flow control lets a
  // frame of these bytes (and its FCS) go, or -1.
  int free_port(Cycle now_c, const std::vector<std::uint8_t>& frame) const {
    Packet probe;
    probe.bytes = static_cast<std::uint32_t>(frame.size()) + kFcsBytes;
    const int n = static_cast<int>(ports.size());
    for (int i = 0; i < n; ++i) {
      const int k = (next_port + i) % n;
      if (line_bytes[k] < (now_c + 1) * params.width && ports[k].can_send(probe)) return k;
    }
    return -1;
  }
  // The frame of the request at the head of the outbox, encoded once.
  const std::vector<std::uint8_t>& next_request() {
    if (!request_encoded) {
      const Request& r = outbox.front();
      Header h;
      if (r.trans->get_data_length() > params.max_bytes)
        to_segment(*r.trans, static_cast<std::uint16_t>(gpu), r.txn, r.segment, params.segment_bytes, h, request_data);
      else to_request(*r.trans, static_cast<std::uint16_t>(gpu), r.txn, h, request_data);
      encode(h, request_data.data(), static_cast<std::uint32_t>(request_data.size()), request_frame);
      request_encoded = true;
    }
    return request_frame;
  }
  // A frame buffer that an earlier frame left, with its capacity (or a new one).
  std::vector<std::uint8_t> spare_buffer() {
    if (spare_buffers.empty()) return {};
    std::vector<std::uint8_t> b = std::move(spare_buffers.back());
    spare_buffers.pop_back();
    b.clear();
    return b;
  }
  void commit() override {
    Cycle next = ~Cycle{0};
    if (!inbox.empty()) next = std::min(next, inbox.front().at);
    if (!memory_out.empty()) next = std::min(next, memory_out.front().at);
    const Cycle line_free = *std::min_element(line_bytes.begin(), line_bytes.end()) / params.width;
    if (!outbox.empty()) next = std::min(next, std::max(outbox.front().at, line_free));
    if (!answers.empty()) next = std::min(next, std::max(answers.front().at, line_free));
    if (next != ~Cycle{0}) wake_at(std::max(next, now() + 1));
    bool arriving = false;
    for (const auto& port : ports) arriving = arriving || port.ready_by(now() + 1);
    set_busy(arriving);
  }

  // A request for this GPU's memory.
  void serve(const Header& h, const std::vector<std::uint8_t>& frame) {
    Header r = h;
    r.op = Op::kResponse;
    r.src = static_cast<std::uint16_t>(gpu);
    r.dst = h.src;
    r.status = static_cast<std::uint8_t>(tlm::TLM_OK_RESPONSE);
    std::vector<std::uint8_t>& data = response_data;
    if (!memory.serve(h, payload_of(frame), data)) return;
    if (h.op == Op::kStore) r.bytes = 0;
    served.add();
    if (on_served) on_served(clock().time_of(now()));
    const Cycle data_cycles = (h.bytes + params.memory_width - 1) / params.memory_width;
    memory_free = std::max(memory_free, now()) + data_cycles;
    memory_out.push_back({memory_free + params.memory, spare_buffer()});
    encode(r, data.data(), static_cast<std::uint32_t>(data.size()), memory_out.back().frame);
  }

  // A response to one of ours.
  void complete(const Header& h, const std::vector<std::uint8_t>& frame) {
    const auto parent = parent_of.find(h.txn);  // a bulk write's frame; any other is its own
    const auto it = table.find(parent != parent_of.end() ? parent->second : h.txn);
    if (it == table.end() || it->second.bulk != (parent != parent_of.end())) return;  // not ours, or answered
    if (parent != parent_of.end()) parent_of.erase(parent);
    const std::uint32_t id = it->first;
    Pending& p = it->second;
    if (p.status == tlm::TLM_OK_RESPONSE) p.status = h.status;
    tlm::tlm_generic_payload& t = *p.trans;
    if (t.is_read() || t.get_extension<AtomicExtension>())
      std::memcpy(t.get_data_ptr(), payload_of(frame), std::min<std::size_t>(t.get_data_length(), h.bytes));
    if (--p.remaining) return;
    const Pending pend = p;
    table.erase(id);
    t.set_response_status(static_cast<tlm::tlm_response_status>(pend.status));
    latency.record(now() - pend.started);
    const sc_time in = to_sc_time(clock().time_of(now()) - sim_now());  // the clock may run ahead
    if (pend.blocking) pend.done->notify(in);
    else shell.responses_.push(t, clock().time_of(now()));
  }

  std::uint32_t gpu;
  EndpointParams params;
  std::vector<link::PortAttachment> ports;  // one per plane
  std::vector<std::uint64_t> line_bytes;   // each line's position, in bytes since cycle 0
  int next_port = 0;
  PacketPool& pool;
  OlinkEndpoint& shell;
  std::unordered_map<std::uint32_t, Pending> table;  // by the id of its first frame
  std::unordered_map<std::uint32_t, std::uint32_t> parent_of;  // bulk write frame's txn → transaction id
  std::uint32_t next_txn = 1;
  std::deque<Request> outbox;
  std::deque<Timed> answers, inbox, memory_out;  // answers: responses
  // Frame buffers are reused: the head request's frame, the response data, spare buffers.
  std::vector<std::uint8_t> request_frame, request_data, response_data;
  bool request_encoded = false;
  std::vector<std::vector<std::uint8_t>> spare_buffers;
  bool answered_last = false;    // the last frame sent was a response
  Cycle memory_free = 0;
  Memory memory;
  Counter &requests, &served;
  LatencyHistogram& latency;
};

OlinkEndpoint::OlinkEndpoint(const sc_core::sc_module_name& name, std::uint32_t gpu, const EndpointParams& params,
                             Clock& clock, std::vector<link::PortAttachment> ports, PacketPool& pool, Stats& stats)
    : sc_core::sc_module(name), socket("socket"), responses_("responses", socket), params_(params) {
  if (ports.empty()) throw std::invalid_argument(std::string(this->name()) + ": an OLink NIC needs a port");
  nic_ = std::make_unique<Nic>(this->name(), gpu, params, clock, std::move(ports), pool, stats, *this);
  socket.register_b_transport(this, &OlinkEndpoint::b_transport);
  socket.register_nb_transport_fw(this, &OlinkEndpoint::nb_transport_fw);
}
OlinkEndpoint::~OlinkEndpoint() = default;

Core& OlinkEndpoint::core() { return *nic_; }
void OlinkEndpoint::on_arrival(std::function<void(const Packet&, Time)> arrived) {
  nic_->on_arrival = std::move(arrived);
}
void OlinkEndpoint::on_served(std::function<void(Time)> served) { nic_->on_served = std::move(served); }
void OlinkEndpoint::poke(std::uint64_t offset, const std::uint8_t* data, std::uint32_t bytes) { nic_->memory.write(offset, data, bytes); }
void OlinkEndpoint::peek(std::uint64_t offset, std::uint8_t* data, std::uint32_t bytes) const { nic_->memory.read(offset, data, bytes); }

bool check_request(tlm::tlm_generic_payload& t, const EndpointParams& params) {
  const std::uint64_t a = t.get_address();
  if (gpu_of(a) >= params.gpus || (a & kOffsetMask) + t.get_data_length() > params.memory_bytes) {
    t.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return false;
  }
  const bool atomic = t.get_extension<AtomicExtension>() != nullptr;
  const bool bulk = !atomic && t.is_write() && !t.get_byte_enable_ptr() && t.get_data_length() <= params.bulk_max_bytes;
  if (t.get_data_length() == 0 || (t.get_data_length() > params.max_bytes && !bulk) ||
      (atomic && (t.get_data_length() != 8 || a % 8 != 0)) || t.get_command() == tlm::TLM_IGNORE_COMMAND) {
    t.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    return false;
  }
  return true;
}

void OlinkEndpoint::b_transport(tlm::tlm_generic_payload& trans, sc_time& delay) {
  sc_core::wait(delay);  // loosely timed: catch up with the initiator's local time first
  delay = sc_core::SC_ZERO_TIME;
  if (!check_request(trans, params_)) return;
  sc_core::sc_event done;
  nic_->submit(trans, true, &done, sim_now());
  sc_core::wait(done);
}

tlm::tlm_sync_enum OlinkEndpoint::nb_transport_fw(tlm::tlm_generic_payload& trans, tlm::tlm_phase& phase,
                                                  sc_time& delay) {
  if (phase == tlm::END_RESP) return tlm::TLM_COMPLETED;
  if (phase != tlm::BEGIN_REQ) return tlm::TLM_ACCEPTED;
  if (!check_request(trans, params_)) {  // answered at once, still through the base protocol's response phase
    phase = tlm::BEGIN_RESP;
    return tlm::TLM_UPDATED;
  }
  nic_->submit(trans, false, nullptr, sim_now() + from_sc_time(delay));
  phase = tlm::END_REQ;
  return tlm::TLM_UPDATED;
}

}  // namespace xy::olink
