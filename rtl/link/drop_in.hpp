// The one place that chooses, for the link layer's engines, the C++ model or its RTL twin
// (llr.impl, cbfc.impl). Implementation choices: results must not change with them.
#pragma once
#include <memory>

#include "hw/link/cbfc.hpp"
#include "hw/link/llr.hpp"
#include "kernel/clock.hpp"

namespace xy::rtl {

// The twins keep the time of `clock`, on which the port calls them. The LLR ends are null for the
// models: a MAC holds its own (link::LlrEnds) and calls them directly.
std::unique_ptr<link::LlrTransmitter> llr_transmitter(bool twin, const link::LlrConfig& config, const Clock& clock);
std::unique_ptr<link::LlrReceiver> llr_receiver(bool twin, const link::LlrConfig& config);
std::unique_ptr<link::CreditSender> credit_sender(bool twin, const link::CbfcConfig& config, const Clock& clock);

}  // namespace xy::rtl
