#include "emulator/device/health.hpp"

#include <algorithm>
#include <array>

namespace npukit::emu {

namespace {

struct FaultName {
  FaultKind kind;
  const char* name;
};
constexpr std::array<FaultName, 11> kFaultNames{{
    {FaultKind::kOverTemperature, "over-temperature"},
    {FaultKind::kHbmDoubleBit, "hbm-double-bit"},
    {FaultKind::kEccStorm, "ecc-storm"},
    {FaultKind::kAicoreHang, "aicore-hang"},
    {FaultKind::kLinkDown, "link-down"},
    {FaultKind::kDeviceLost, "device-lost"},
    {FaultKind::kAicoreDegraded, "aicore-degraded"},
    {FaultKind::kLinkDegraded, "link-degraded"},
    {FaultKind::kLinkFlapping, "link-flapping"},
    {FaultKind::kHostSlow, "host-slow"},
    {FaultKind::kHostDown, "host-down"},
}};

}  // namespace

const char* health_name(Health h) {
  switch (h) {
    case Health::kOk: return "OK";
    case Health::kWarning: return "Warning";
    case Health::kAlarm: return "Alarm";
    case Health::kCritical: return "Critical";
    case Health::kUnknown: return "UNKNOWN";
  }
  return "UNKNOWN";
}

const char* fault_name(FaultKind k) {
  for (const auto& f : kFaultNames) {
    if (f.kind == k) return f.name;
  }
  return "?";
}

Result<FaultKind> parse_fault(std::string_view name) {
  for (const auto& f : kFaultNames) {
    if (name == f.name) return f.kind;
  }
  std::string known;
  for (const auto& f : kFaultNames) known += std::string(known.empty() ? "" : ", ") + f.name;
  return InvalidArgument("unknown fault '" + std::string(name) + "' (expected one of: " + known + ")");
}

const std::vector<FaultKind>& all_faults() {
  static const std::vector<FaultKind> kinds = [] {
    std::vector<FaultKind> v;
    for (const auto& f : kFaultNames) v.push_back(f.kind);
    return v;
  }();
  return kinds;
}

bool acts_on_link(FaultKind k) {
  return k == FaultKind::kLinkDown || k == FaultKind::kLinkDegraded || k == FaultKind::kLinkFlapping;
}

bool acts_on_host(FaultKind k) { return k == FaultKind::kHostSlow || k == FaultKind::kHostDown; }

bool acts_on_device(FaultKind k) { return k != FaultKind::kLinkFlapping && !acts_on_host(k); }

std::string fault_names(bool (*pred)(FaultKind)) {
  std::string out;
  for (const auto& f : kFaultNames) {
    if (pred(f.kind)) out += std::string(out.empty() ? "" : ", ") + f.name;
  }
  return out;
}

void DeviceHealth::inject(FaultKind kind) {
  active_ |= 1u << static_cast<int>(kind);
  if (kind == FaultKind::kHbmDoubleBit) add_double_bit_error();
}

void DeviceHealth::clear() {
  for (FaultKind k : {FaultKind::kOverTemperature, FaultKind::kEccStorm, FaultKind::kLinkDown,
                      FaultKind::kHbmDoubleBit, FaultKind::kAicoreDegraded, FaultKind::kLinkDegraded,
                      FaultKind::kHostSlow, FaultKind::kHostDown}) {
    active_ &= ~(1u << static_cast<int>(k));
  }
  ecc_.single_bit_volatile = 0;
  ecc_.double_bit_volatile = 0;
}

void DeviceHealth::clear_ecc() {
  ecc_.single_bit_volatile = 0;
  ecc_.double_bit_volatile = 0;
}

void DeviceHealth::reset() {
  // The reset isolates the pages uncorrectable errors hit: only now are they counted isolated.
  ecc_.isolated_pages_double += bad_pages_.size();
  retired_pages_.insert(retired_pages_.end(), bad_pages_.begin(), bad_pages_.end());
  bad_pages_.clear();
  active_ = 0;
  timeouts_ = 0;
  ecc_.single_bit_volatile = 0;
  ecc_.double_bit_volatile = 0;
}

void DeviceHealth::add_single_bit_errors(uint64_t n) {
  if (!ecc_.enabled) return;
  ecc_.single_bit_volatile += n;
  ecc_.single_bit_aggregate += n;
}

void DeviceHealth::add_double_bit_error() {
  ecc_.double_bit_volatile += 1;
  ecc_.double_bit_aggregate += 1;
}

Alarm alarm_of(const telemetry::IncidentKind& kind, bool as_peer) {
  return {kind.code, static_cast<Health>(as_peer ? kind.peer_severity : kind.severity), kind.summary};
}

std::vector<Alarm> DeviceHealth::alarms(double t, const ThermalLimits& limits) const {
  using telemetry::incident;
  std::vector<Alarm> out;
  if (active(FaultKind::kHostDown)) out.push_back(alarm_of(incident("host_down")));
  if (lost()) out.push_back({incident("device_lost").code, Health::kUnknown, incident("device_lost").summary});
  if (hung() || timeouts_ > 0) out.push_back(alarm_of(incident("aicore_timeout")));
  if (t >= limits.shutdown_c) {
    out.push_back(alarm_of(incident("temperature_shutdown")));
  } else if (t >= limits.shutdown_c - 5) {
    out.push_back(alarm_of(incident("temperature_critical")));
  } else if (t >= limits.throttle_c) {
    out.push_back(alarm_of(incident("temperature_high")));
  }
  if (ecc_.double_bit_volatile > 0) out.push_back(alarm_of(incident("ecc_double_bit")));
  out.insert(out.end(), link_alarms_.begin(), link_alarms_.end());
  if (ecc_.single_bit_volatile >= telemetry::kSingleBitStormErrors) out.push_back(alarm_of(incident("ecc_single_bit_storm")));
  if (ecc_.isolated_pages_single + ecc_.isolated_pages_double >= telemetry::kIsolatedPagesReplace) {
    out.push_back(alarm_of(incident("ecc_isolated_pages")));
  }
  if (active(FaultKind::kAicoreDegraded)) out.push_back(alarm_of(incident("aicore_degraded")));
  if (active(FaultKind::kHostSlow)) out.push_back(alarm_of(incident("host_slow")));
  std::stable_sort(out.begin(), out.end(),
                   [](const Alarm& a, const Alarm& b) { return a.severity > b.severity; });
  // A peer of two down links shows their code once, at its worst.
  for (std::size_t i = 1; i < out.size(); ++i) {
    bool seen = std::any_of(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(i), [&](const Alarm& a) { return a.code == out[i].code; });
    if (seen) out.erase(out.begin() + static_cast<std::ptrdiff_t>(i--));
  }
  return out;
}

Health DeviceHealth::health(double t, const ThermalLimits& limits) const {
  auto a = alarms(t, limits);
  return a.empty() ? Health::kOk : a.front().severity;
}

uint32_t DeviceHealth::error_code(double t, const ThermalLimits& limits) const {
  auto a = alarms(t, limits);
  return a.empty() ? 0 : a.front().code;
}

}  // namespace npukit::emu
