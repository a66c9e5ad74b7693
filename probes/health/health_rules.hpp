// Passive health rules: verdicts computed from one Snapshot, never touching the device (like
// `dcmi health --check`; active diagnostics come later and live beside these in probes/).
//
// Each rule looks at one concern of one device. The verdicts come from the node's incidents
// (incidents.hpp, one per root cause): a rule appends one Check per incident of its kinds that
// sits on or touches the device (WARN for a Warning, FAIL for an Alarm or Critical, the
// incident's message as the reason), and when there is none, one PASS Check whose reason names
// the measured value. So `npu-smi health` says what `info`, npu-top and the exporter say about
// every NPU. UNKNOWN when there is no data to judge (stale node, device that never published);
// a rule whose inputs are missing appends nothing; the heartbeat rule reports why.
//
// The rule list is explicit and ordered (health_rules()); add a rule by adding a function and
// a row there. Thresholds come from the device's chip family (thresholds_for), so a rule never
// hard-codes a chip.
//
// Thread-safety: pure functions over an immutable Snapshot.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "probes/health/incidents.hpp"
#include "telemetry/snapshot.hpp"

namespace npukit::probes {

// Ordered by how bad: a device's verdict is its worst check (FAIL > UNKNOWN > WARN > PASS).
enum class Verdict : uint8_t { kPass, kWarn, kUnknown, kFail };
const char* verdict_name(Verdict v);  // "PASS", "WARN", "UNKNOWN", "FAIL"
Verdict worst(Verdict a, Verdict b);

struct Check {
  std::string rule;
  Verdict verdict = Verdict::kPass;
  std::string reason;               // one line, names measured value and threshold
  std::optional<double> measured;   // in `unit`
  std::optional<double> threshold;  // the limit the verdict was judged against
  std::string unit;
  std::string incident;             // the incident kind behind a WARN/FAIL ("" for a PASS)
  uint32_t code = 0;                // its code
};

// Limits the messages and PASS lines name (incidents judge). Chip temperatures follow the emulated specs' throttle and
// shutdown points (emulator/specs/devices; the bus does not carry them).
struct Thresholds {
  double temperature_warn_c = 85;       // throttle point: DVFS starts pulling the clock down
  double temperature_fail_c = 100;      // 5 C below the shutdown point
  double hbm_temperature_warn_c = 85;   // named by the (informational) memory rule
};
Thresholds thresholds_for(const telemetry::DeviceInfo& info);

struct RuleContext {
  const telemetry::Snapshot& snapshot;
  int device;
  const Thresholds& limits;
  std::span<const Incident> incidents;  // the node's
};

struct Rule {
  std::string_view name;
  std::string_view description;
  std::span<const std::string_view> kinds;  // the incident kinds it reports
  // The PASS check when no incident of its kinds touches the device (nothing when no data).
  void (*evaluate)(const RuleContext& ctx, std::vector<Check>& out);
};

// heartbeat, device_health, temperature, throttling, ecc_errors, ecc_isolated_pages, memory,
// links, aicore, power.
std::span<const Rule> health_rules();
Verdict verdict_of(telemetry::Health severity);  // Warning WARN, Alarm/Critical FAIL

struct DeviceReport {
  int device = 0;
  Verdict verdict = Verdict::kPass;
  std::vector<Check> checks;
};

struct NodeReport {
  Verdict verdict = Verdict::kPass;   // worst of the devices' and of the incidents'
  bool stale = false;
  std::string stale_reason;
  std::vector<DeviceReport> devices;
  std::vector<Incident> incidents;    // those on or touching the listed devices (all: every one)
};

DeviceReport evaluate_device(const telemetry::Snapshot& s, int device, std::span<const Incident> incidents);
// The listed devices (all when empty).
NodeReport evaluate_node(const telemetry::Snapshot& s, std::span<const int> devices = {});

}  // namespace npukit::probes
