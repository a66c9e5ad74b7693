#include "probes/error_codes.hpp"

namespace npukit::probes {

namespace {

using telemetry::Health;

constexpr ErrorCodeInfo kCodes[] = {
    {kErrorTemperatureHigh, Health::kWarning, "temperature above throttle point"},
    {kErrorTemperatureCritical, Health::kAlarm, "temperature near shutdown point"},
    {kErrorTemperatureShutdown, Health::kCritical, "temperature at shutdown point"},
    {kErrorEccSingleBitStorm, Health::kWarning, "single-bit ECC error storm"},
    {kErrorEccDoubleBit, Health::kAlarm, "uncorrectable {memory} ECC error, page isolated"},
    {kErrorAicoreTimeout, Health::kCritical, "AI Core task timeout"},
    {kErrorLinkDown, Health::kAlarm, "{link} link down"},
    {kErrorDeviceLost, Health::kUnknown, "device lost"},
};

}  // namespace

std::span<const ErrorCodeInfo> error_codes() { return kCodes; }

std::string error_text(uint32_t code, const telemetry::Snapshot& s, int device) {
  const ErrorCodeInfo* info = find_error_code(code);
  if (info == nullptr) return "";
  std::string text(info->description);
  auto hbm = s.device(device, telemetry::fid::kHbmTotalBytes).number();
  bool has_hbm = hbm && *hbm > 0;
  bool hccs = false;
  for (int l = 0; l < s.link_count(); ++l) {
    const telemetry::LinkInfo& link = s.link_info(l);
    hccs = hccs || (link.kind == "hccs" && (link.device_a == device || link.device_b == device));
  }
  for (auto [key, value] : {std::pair<std::string, std::string>{"{memory}", has_hbm ? "HBM" : "DDR"},
                            std::pair<std::string, std::string>{"{link}", hccs ? "HCCS" : "PCIe"}}) {
    if (auto at = text.find(key); at != std::string::npos) text.replace(at, key.size(), value);
  }
  return text;
}

const ErrorCodeInfo* find_error_code(uint32_t code) {
  for (const auto& c : kCodes) {
    if (c.code == code) return &c;
  }
  return nullptr;
}

}  // namespace npukit::probes
