// The vocabulary of link flow control, shared by every port that has it: the mode of a link
// and the messages its two ends exchange.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hw/link/cbfc.hpp"
#include "hw/link/pfc.hpp"
#include "kernel/config.hpp"
#include "kernel/packet.hpp"

namespace xy::link {

enum class FcMode { kCbfc, kPfc, kNone };

// The names a configuration uses, in the order of FcMode.
inline const std::vector<std::string>& fc_mode_names() {
  static const std::vector<std::string> names{"cbfc", "pfc", "none"};
  return names;
}
const std::string& fc_mode_name(FcMode mode);
// `name` must be one of fc_mode_names() (the caller has checked it, as Config::choice does).
FcMode fc_mode(const std::string& name);
// Declares `key` as a flow-control mode among `allowed` (a subset of fc_mode_names()).
FcMode declare_fc_mode(Config& c, const std::string& key, const std::string& def, const std::string& meaning,
                       const std::vector<std::string>& allowed = fc_mode_names());

// The most buffer cells of `cell_bytes` that the frames a lossless receiver lets in can take at
// once, over its VCs: as many frames as its credits (CBFC) or its buffer_bytes (PFC) hold, of
// whatever size from `min_bytes` to `max_bytes` takes most, each rounded up to whole cells (more
// would be an overflow, which the receiver reports). 0 without flow control: no promise.
std::uint64_t lossless_cells(FcMode mode, const CbfcConfig& cbfc, const PfcConfig& pfc, std::uint32_t cell_bytes,
                             std::uint32_t min_bytes, std::uint32_t max_bytes);

// A flow-control message from one end of a link direction to the other.
struct FcMessage {
  std::optional<CreditUpdate> credit;  // CBFC: a CF_Update upstream or a CC_Update downstream
  std::optional<PauseFrame> pause;     // PFC, upstream
  // A CC_Update counts the data frames sent before it: it takes effect only after the first
  // `after_frames` frames of the link, so that it never overtakes a frame it counted.
  std::uint64_t after_frames = 0;
};

// The flow control of a link as the cores at its ends see it, provided by whoever builds the
// link (a composed port, a rig): the core feeding the link asks a gate before it sends a packet
// (PFC pause, CBFC credits); the core the link feeds reports what arrived and, once it has left
// (or was taken into a shared buffer), what departed, freeing credits or lowering occupancy.
struct EgressGate {
  virtual ~EgressGate() = default;
  virtual bool can_send(const Packet& p) const = 0;
  virtual void on_send(const Packet& p) = 0;
};
struct IngressMonitor {
  virtual ~IngressMonitor() = default;
  virtual void on_arrive(const Packet& p) = 0;
  virtual void on_admit(std::uint32_t bytes, std::uint8_t vc) = 0;   // taken into the shared buffer
  virtual void on_depart(std::uint32_t bytes, std::uint8_t vc) = 0;  // left the switch (or dropped)
  // Whether the sender is held back as the buffer fills (PFC, CBFC); if not, what does not fit
  // is the receiver's to drop.
  virtual bool holds_back() const = 0;
};

}  // namespace xy::link
