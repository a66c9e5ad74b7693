// The device error-code catalog as consumers see it: the codes the emulated devices raise
// (docs/faults.md, emulator/device/health.hpp), with the health each implies and a one-line text.
// npu-smi's `-t health` prints the text as "Error Information"; the health rules name them.
//
// Thread-safety: immutable table.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "telemetry/fields.hpp"
#include "telemetry/snapshot.hpp"

namespace npukit::probes {

struct ErrorCodeInfo {
  uint32_t code;
  telemetry::Health severity;
  std::string_view description;  // "{memory}" and "{link}" stand for the chip's (error_text)
};

inline constexpr uint32_t kErrorTemperatureHigh = 0x80E18401;
inline constexpr uint32_t kErrorTemperatureCritical = 0x80E18402;
inline constexpr uint32_t kErrorTemperatureShutdown = 0x80E18403;
inline constexpr uint32_t kErrorEccSingleBitStorm = 0x80E01801;
inline constexpr uint32_t kErrorEccDoubleBit = 0x80E01802;
inline constexpr uint32_t kErrorAicoreTimeout = 0x80CB8009;
inline constexpr uint32_t kErrorLinkDown = 0x80D18001;
inline constexpr uint32_t kErrorDeviceLost = 0xFFFFFFFF;

std::span<const ErrorCodeInfo> error_codes();
// nullptr for a code outside the catalog.
const ErrorCodeInfo* find_error_code(uint32_t code);
// The code's text for this chip: its memory (HBM, or DDR on a 310P) and links (HCCS, or PCIe on
// a PCIe-only node) named; "" outside the catalog.
std::string error_text(uint32_t code, const telemetry::Snapshot& s, int device);

}  // namespace npukit::probes
