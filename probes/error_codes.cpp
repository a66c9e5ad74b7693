#include "probes/error_codes.hpp"

namespace npukit::probes {

namespace {

using telemetry::Health;

constexpr ErrorCodeInfo kCodes[] = {
    {kErrorTemperatureHigh, Health::kWarning, "temperature above throttle point"},
    {kErrorTemperatureCritical, Health::kAlarm, "temperature near shutdown point"},
    {kErrorTemperatureShutdown, Health::kCritical, "temperature at shutdown point"},
    {kErrorEccSingleBitStorm, Health::kWarning, "single-bit ECC error storm"},
    {kErrorEccDoubleBit, Health::kAlarm, "uncorrectable HBM ECC error, page isolated"},
    {kErrorAicoreTimeout, Health::kCritical, "AI Core task timeout"},
    {kErrorLinkDown, Health::kAlarm, "HCCS link down"},
    {kErrorDeviceLost, Health::kUnknown, "device lost"},
};

}  // namespace

std::span<const ErrorCodeInfo> error_codes() { return kCodes; }

const ErrorCodeInfo* find_error_code(uint32_t code) {
  for (const auto& c : kCodes) {
    if (c.code == code) return &c;
  }
  return nullptr;
}

}  // namespace npukit::probes
