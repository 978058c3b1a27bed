// OlinkEndpoint: a GPU's OLink interface. Its TLM-2.0 target socket takes the GPU's Loads,
// Stores and atomics (blocking b_transport or the AT base protocol); it sends them as request
// frames into the cycle-level fabric, serves requests for its own memory, and completes each
// transaction when the response frame is back.
//
// Cycle contract (the endpoint's clock): a transaction handed over at time T enters at the first
// edge after T; its request frame leaves `egress` cycles later, once the line has room: frames
// are packed back to back (frame + FCS + 20 bytes of preamble and gap, `width` bytes a cycle),
// at most one new frame per cycle; the responses this GPU owes wait in a queue of their own (so
// that they always drain) and take the line in turn with its requests. A NIC with a port on each
// of several planes sprays its frames over them: each takes the next port in turn whose line is
// free and whose flow control lets it go, at most one new frame per cycle on each (frames of one
// transaction may arrive out of order; a bulk write completes when all are answered, whatever
// the order). The fabric delivers a frame
// to the owner, which takes it `ingress` cycles after its last byte arrived (the FCS is checked
// on whole frames), serves it from memory after `memory` cycles (plus ceil(bytes /
// memory_width) for the data), and answers the same way; the transaction completes `ingress`
// cycles after the response arrived. Atomics run at the owner, one at a time in arrival order,
// on 64-bit words.
// TLM: b_transport honours the annotated delay first and returns with zero delay; AT accepts
// BEGIN_REQ at once (TLM_UPDATED, END_REQ) and sends BEGIN_RESP on the backward path at
// completion time (END_RESP from the initiator, or TLM_COMPLETED, both accepted). Errors: an
// address outside the map → TLM_ADDRESS_ERROR_RESPONSE; an unaligned or non-8-byte atomic,
// or more than `max_bytes` (unless a bulk write, below) → TLM_GENERIC_ERROR_RESPONSE; byte enables
// are honoured on writes. Dual mode: a plain write longer than `max_bytes` goes as Stores of
// `segment_bytes`, all queued at once, and completes when the last is acknowledged.
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include "hw/link/attachment.hpp"
#include "tlm/olink/memory.hpp"
#include "tlm/olink/olink.hpp"
#include "tlm/olink/response_queue.hpp"
#include "kernel/channel.hpp"
#include "kernel/packet.hpp"
#include "kernel/stats.hpp"

namespace xy::olink {

struct EndpointParams {
  std::uint32_t gpus = 2;
  std::uint64_t memory_bytes = std::uint64_t{1} << 30;  // per GPU, the map's bound
  std::uint32_t max_bytes = 256;                        // per Load, Store or atomic
  // Dual mode: a plain write of up to `bulk_max_bytes` (no byte enables) is an RDMA-style bulk
  // write, sent as Stores of `segment_bytes` and complete when every one is acknowledged.
  std::uint32_t bulk_max_bytes = 1u << 20, segment_bytes = 4096;
  std::uint32_t width = 64;                             // line bytes per cycle
  Cycle egress = 64, ingress = 64;                      // NIC pipelines (packetise, depacketise)
  Cycle memory = 160;                                   // HBM access
  std::uint32_t memory_width = 64;                      // HBM bytes per cycle for this endpoint
  // false: timing only, as FastParams::data: the memory keeps nothing (Stores write nothing,
  // Loads and atomics read zeros), for runs that never read back what they wrote.
  bool data = true;
};

// The endpoint's admission rules (see the cycle contract): sets the error status and returns false
// if the transaction cannot be carried.
bool check_request(tlm::tlm_generic_payload& trans, const EndpointParams& params);

class OlinkEndpoint : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<OlinkEndpoint> socket;

  // `ports`: the fabric's ports for this GPU's NIC, one per plane (the NIC's receive buffers
  // drain at once). Throws std::invalid_argument for none.
  OlinkEndpoint(const sc_core::sc_module_name& name, std::uint32_t gpu, const EndpointParams& params, Clock& clock,
                std::vector<link::PortAttachment> ports, PacketPool& pool, Stats& stats);
  ~OlinkEndpoint() override;
  Core& core();
  // Called with every frame the NIC takes from its port and its arrival time, before the NIC
  // takes it apart.
  void on_arrival(std::function<void(const Packet&, Time)> arrived);

  // Called with the time this GPU's NIC hands a request for its memory over to it (a Store's
  // data is written then), for testbenches that time deliveries.
  void on_served(std::function<void(Time)> served);

  // This GPU's memory, for set-up and checks.
  void poke(std::uint64_t offset, const std::uint8_t* data, std::uint32_t bytes);
  void peek(std::uint64_t offset, std::uint8_t* data, std::uint32_t bytes) const;

 private:
  struct Nic;
  void b_transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload& trans, tlm::tlm_phase& phase, sc_core::sc_time& delay);
  std::unique_ptr<Nic> nic_;
  ResponseQueue<tlm_utils::simple_target_socket<OlinkEndpoint>> responses_;
  EndpointParams params_;
};

}  // namespace xy::olink
