// The stages of a frame's path through Lingyun's ports and switches (docs/lingyun.md), in the
// slots of Packet::stage_time. The composer tells each block which of them it opens
// (port.cpp, fabric.cpp); a frame's stage times then add up to its journey from its first port
// on to its endpoint.
#pragma once
#include "kernel/packet.hpp"

namespace xy::lingyun {

enum : Stage {
  kStageMacTx = 1,      // MAC/LLR TX: waiting for the line, replays
  kStageSerialize,      // PCS: into codewords until the one with its last block is sent
  kStageMacPcsTx,       // MAC, RS and PCS transmit pipeline
  kStageFecEncode,      // encoder pipeline
  kStagePmaCable,       // PMA TX, cable, PMA RX, deskew
  kStageFecAccumulate,  // the RX gathering the codeword group
  kStageFecDecode,      // decoder pipeline
  kStageMacPcsRx,       // PCS, RS and MAC receive pipeline
  kStageMacRx,          // FCS check, LLR, in-order delivery
  kStageCrossing,       // async FIFOs between the PHY clock and the core clocks
  kStageSwitch,         // switch core: pipeline, queueing, flow-control wait
  kStages
};
static_assert(kStages <= kStageSlots);

inline const char* stage_name(Stage s) {
  static const char* const names[kStages] = {"none",       "mac_tx",         "serialize",  "mac_pcs_tx",
                                             "fec_encode", "pma_cable",      "fec_accumulate", "fec_decode",
                                             "mac_pcs_rx", "mac_rx",     "clock_crossing", "switch"};
  return names[s];
}
// Whether a stage's time is measured as frames pass, a configured constant (a pipeline, a
// cable), or derived from the configuration (a codeword's bits over the lanes' rate).
inline const char* stage_provenance(Stage s) {
  switch (s) {
    case kStageMacPcsTx: case kStageFecEncode: case kStagePmaCable: case kStageFecDecode: case kStageMacPcsRx:
      return "configured";
    case kStageFecAccumulate: return "derived";
    default: return "measured";
  }
}

}  // namespace xy::lingyun
