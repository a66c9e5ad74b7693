// The incident table: every kind of trouble a device, its memory, a link or the node can be in,
// with its stable code, severity, entity and recommended handling (telemetry/incidents.json,
// compiled into the library). The emulator raises incidents by kind; npu-smi, npu-top, the
// exporter and the alert rules read the same rows, so a code means the same thing everywhere.
//
// Also here: the link root-cause rule both the emulator and the readers apply to link states,
// so "which NPU is to blame for a down link" has one answer.
//
// Thread-safety: the table is immutable after first use (initialized once, thread-safe).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "telemetry/fields.hpp"
#include "telemetry/status.hpp"

namespace npukit::telemetry {

enum class IncidentEntity : uint8_t { kChip, kMemory, kLink, kNode };
const char* entity_name(IncidentEntity e);  // "chip", "memory", "link", "node"

// What an operator (or a Kubernetes device plugin) should do about an incident.
enum class Handling : uint8_t { kNone, kRestartJob, kResetNpu, kIsolateNpu, kReplaceHardware };
const char* handling_name(Handling h);  // "none", "restart_job", "reset_npu", "isolate_npu", "replace_hardware"

struct IncidentKind {
  std::string kind;         // stable id: "link_down"
  uint32_t code = 0;        // stable error code, as npu-smi's Error Code shows it
  Health severity = Health::kOk;       // on the incident's own entity
  Health peer_severity = Health::kOk;  // on NPUs it touches but does not sit on (kOk: none)
  IncidentEntity entity = IncidentEntity::kChip;
  Handling handling = Handling::kNone;
  std::string summary;      // short, static: "{link} link down" ({memory}/{link} filled per chip)
  std::string message;      // <= 80 chars once filled: {npu} {link} {memory} {pair} {value} {limit}
  std::vector<std::string> faults;  // the injectable faults that raise it
  std::string lifted_by;
  std::string alert;        // the alert rule that fires for it (NpuIncident unless named)
  // It silences the node's bus (a host that went down): once the bus is stale, the last state
  // it published still holds, so it is reported in place of "telemetry stale".
  bool outlives_bus = false;
};

// The limits the memory incidents are raised at (the emulator raises them; readers name them).
inline constexpr uint64_t kSingleBitStormErrors = 1000;  // volatile single-bit errors: ecc_single_bit_storm
inline constexpr uint64_t kIsolatedPagesReplace = 60;    // isolated pages: ecc_isolated_pages (NVIDIA's rule)

std::span<const IncidentKind> incident_kinds();
// nullptr when absent.
const IncidentKind* find_incident(uint32_t code);
const IncidentKind* find_incident(std::string_view kind);
// A kind the code names by id; a missing row is a build-time table error (aborts with its name).
const IncidentKind& incident(std::string_view kind);

// Fills a template's {key} placeholders ({npu}, {link}, {memory}, {pair}, {value}, {limit});
// placeholders without a value are left as they are.
std::string fill(std::string_view text, std::span<const std::pair<std::string_view, std::string>> values);

// ---- Link root cause ----------------------------------------------------------------------

enum class LinkCondition : uint8_t { kOk, kDown, kFlapping, kDegraded };

// One direction of a link as the bus or the fabric knows it: from device_a to device_b; an end
// that is no device (the host of a PCIe link, a RoCE port's network, a switch) is -1.
struct LinkState {
  int device_a = 0;
  int device_b = -1;
  std::string kind;          // "hccs", "pcie", "roce"
  LinkCondition condition = LinkCondition::kOk;
};

// One root cause among the links: a chip that lost (or degraded) all its links of a kind, or one
// physical link (both directions).
struct LinkIncident {
  const IncidentKind* kind = nullptr;
  int device = -1;           // for chip incidents
  int device_a = -1;         // for link incidents: the pair, a < b
  int device_b = -1;
  std::string link_kind;     // "hccs", "pcie", "roce"
  std::vector<int> peers;    // the NPUs it touches and shows peer_severity on
};

// Groups link states into root causes: a device all of whose links of its main kind (HCCS when
// it has any, else PCIe) are down is one links_down incident (its peers touched); the same for
// degraded; any other unhealthy physical link is one incident of its own (its endpoints touched).
std::vector<LinkIncident> link_incidents(std::span<const LinkState> links, int device_count);

}  // namespace npukit::telemetry

namespace npukit::telemetry {

// A link that went down this many times in the last kFlapWindowS seconds is flapping.
inline constexpr uint64_t kFlapEvents = 2;
inline constexpr double kFlapWindowS = 60;
// A link trained below this share of its line rate is degraded.
inline constexpr double kDegradedRatePercent = 95;

// A link direction's condition from what the bus carries about it (npu_link_up,
// npu_link_rate_percent, npu_link_down_events_recent).
LinkCondition link_condition(bool up, double rate_percent, uint64_t down_events_recent);

}  // namespace npukit::telemetry

namespace npukit::telemetry {

// A link as faults and commands name it: "2-3" (devices 2 and 3) or "2-host" (device 2's PCIe
// link to the host: second = -1).
// A link's far end when it is the device's RoCE port into the cluster's switch ("3-roce"); -1 is
// the host (a PCIe link), and -2 means "no link" in fault timelines (program.hpp FaultEntry).
inline constexpr int kRocePort = -3;
// A link's far end when it is the device's HCCS port into the node's switch ("3-switch": a
// switched node such as 8xA100, whose devices meet in an NVSwitch-like switch).
inline constexpr int kSwitchPort = -4;
Result<std::pair<int, int>> parse_link_ends(std::string_view text);
std::string link_ends_name(int a, int b);  // "2-3", "2-host", "2-roce", "2-switch"
// The same for a bus link of `kind`: a "roce" link's far end (-1 on the bus) is its port, "2-roce";
// an "hccs" link's far end -1 is the node's switch, "2-switch".
std::string link_ends_name(int a, int b, std::string_view kind);

}  // namespace npukit::telemetry
