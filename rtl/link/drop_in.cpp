#include "rtl/link/drop_in.hpp"

#include "rtl/link/cbfc_sender_twin.hpp"
#include "rtl/link/llr_twins.hpp"

namespace xy::rtl {

std::unique_ptr<link::LlrTransmitter> llr_transmitter(bool twin, const link::LlrConfig& config, const Clock& clock) {
  if (twin) return std::make_unique<LlrTxTwin>(config, clock);
  return nullptr;
}

std::unique_ptr<link::LlrReceiver> llr_receiver(bool twin, const link::LlrConfig& config) {
  if (twin) return std::make_unique<LlrRxTwin>(config);
  return nullptr;
}

std::unique_ptr<link::CreditSender> credit_sender(bool twin, const link::CbfcConfig& config, const Clock& clock) {
  if (twin) return std::make_unique<CbfcSenderTwin>(config, clock);
  return std::make_unique<link::CbfcSender>(config);
}

}  // namespace xy::rtl
