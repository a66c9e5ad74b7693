// The field registry: every value the bus carries is declared once, in one table (fields.cpp),
// with a stable numeric id, a Prometheus-style name carrying unit and kind, an entity level, a
// value type, a CLI label and width, and a description. CLI columns, JSON keys, exporter metric
// names and profiler counter names all come from this table (STYLE.md item 1).
//
// Contract:
//   - Ids are stable and never reused. A retired field keeps its id listed in kRetiredFieldIds;
//     a rename keeps the id and adds the old name to the alias table, and a test pins both.
//   - Names end in their unit (`_bytes`, `_watts`, `_celsius`, `_percent`, `_mhz`, `_ns`,
//     `_pages`) and counters end in `_total`: devices publish monotonic totals, consumers derive
//     rates from deltas.
//   - Every sample carries a SampleStatus: "no value" is a state, never 0.
//   - field_table_hash() changes whenever ids, names, levels, types or table order change; the
//     shm header records it so a tool built from another table refuses the segment.
//
// Thread-safety: everything here is immutable after first use; safe from any thread.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace npukit::telemetry {

// A stable field id (see the table in fields.cpp for the id ranges).
using FieldId = uint16_t;

enum class FieldKind : uint8_t { kGauge, kCounter, kInfo };
enum class EntityLevel : uint8_t { kNode, kDevice, kLink, kProcess };
enum class ValueType : uint8_t { kU64, kI64, kF64 };

// The state of one sample. kBlank (= 0, what zeroed shared memory reads as) means "never
// published"; kNotSupported means the device cannot produce it; kStale means the writer is gone
// or silent. Only kOk samples carry a meaningful value.
enum class SampleStatus : uint8_t { kBlank = 0, kOk = 1, kNotSupported = 2, kStale = 3 };

struct FieldDef {
  FieldId id;
  std::string_view name;   // e.g. "npu_power_watts"
  FieldKind kind;
  EntityLevel level;
  ValueType type;
  std::string_view label;  // short CLI column header, e.g. "Power(W)"
  uint8_t width;           // CLI column width in characters
  std::string_view description;
  uint16_t slot = 0;       // dense index among the fields of `level` (filled by the registry)
};

// Field ids, grouped by level with documented gaps (the table in fields.cpp is authoritative).
namespace fid {
// Node level, 1-99. 1-9 node state, 10-29 bus self-telemetry (filled by the reader from the
// segment header), 30-99 reserved.
inline constexpr FieldId kNodeHeartbeatNs = 1;
inline constexpr FieldId kNodeVirtualTimeNs = 2;
inline constexpr FieldId kNodeLagNs = 3;
inline constexpr FieldId kNodeDeviceCount = 4;
inline constexpr FieldId kNodeSpeedRatio = 5;
inline constexpr FieldId kBusEventsTotal = 10;
inline constexpr FieldId kBusStringsInterned = 11;
inline constexpr FieldId kBusStringTableFullTotal = 12;
inline constexpr FieldId kBusPublishErrorsTotal = 13;
inline constexpr FieldId kBusLosslessTimeoutsTotal = 14;
inline constexpr FieldId kBusLosslessDeadReadersTotal = 15;
// Device level, 100-399.
inline constexpr FieldId kAicoreUtil = 100;
inline constexpr FieldId kCubeUtil = 101;
inline constexpr FieldId kVectorUtil = 102;
inline constexpr FieldId kAicpuUtil = 103;
inline constexpr FieldId kCtrlcpuUtil = 104;
inline constexpr FieldId kNpuUtil = 105;
inline constexpr FieldId kHbmBandwidthUtil = 106;
inline constexpr FieldId kPcieBandwidthUtil = 107;
inline constexpr FieldId kHccsBandwidthUtil = 108;
inline constexpr FieldId kAicoreBusyNs = 130;
inline constexpr FieldId kCubeBusyNs = 131;
inline constexpr FieldId kVectorBusyNs = 132;
inline constexpr FieldId kAicpuBusyNs = 133;
inline constexpr FieldId kFlopsTotal = 140;
inline constexpr FieldId kHbmBytesTotal = 141;
inline constexpr FieldId kPcieTxBytesTotal = 142;
inline constexpr FieldId kPcieRxBytesTotal = 143;
inline constexpr FieldId kKernelsTotal = 144;
inline constexpr FieldId kAicpuKernelsTotal = 145;
inline constexpr FieldId kCopiesTotal = 146;
inline constexpr FieldId kHbmWriteBytesTotal = 147;
inline constexpr FieldId kPowerWatts = 160;
inline constexpr FieldId kPowerLimitWatts = 161;
inline constexpr FieldId kEnergyJoulesTotal = 162;
inline constexpr FieldId kTemperatureCelsius = 163;
inline constexpr FieldId kHbmTemperatureCelsius = 164;
inline constexpr FieldId kVoltageVolts = 165;
inline constexpr FieldId kAicoreClockMhz = 180;
inline constexpr FieldId kAicoreClockMaxMhz = 181;
inline constexpr FieldId kHbmClockMhz = 182;
inline constexpr FieldId kHbmUsedBytes = 200;
inline constexpr FieldId kHbmTotalBytes = 201;
inline constexpr FieldId kDdrUsedBytes = 202;
inline constexpr FieldId kDdrTotalBytes = 203;
inline constexpr FieldId kHugepagesUsedPages = 204;
inline constexpr FieldId kHugepagesTotalPages = 205;
inline constexpr FieldId kHealth = 220;
inline constexpr FieldId kErrorCode = 221;
inline constexpr FieldId kThrottleReasons = 222;
inline constexpr FieldId kErrorCode2 = 223;  // further active codes, by severity
inline constexpr FieldId kErrorCode3 = 224;
inline constexpr FieldId kErrorCode4 = 225;
inline constexpr FieldId kEccEnabled = 240;
inline constexpr FieldId kEccSingleBitVolatile = 241;
inline constexpr FieldId kEccDoubleBitVolatile = 242;
inline constexpr FieldId kEccSingleBitTotal = 243;
inline constexpr FieldId kEccDoubleBitTotal = 244;
inline constexpr FieldId kEccSingleBitIsolatedPages = 245;
inline constexpr FieldId kEccDoubleBitIsolatedPages = 246;
inline constexpr FieldId kProcessCount = 260;
inline constexpr FieldId kDeviceInfo = 280;
inline constexpr FieldId kChecksum = 390;
// Link level, 400-449.
inline constexpr FieldId kLinkTxBytesTotal = 400;
inline constexpr FieldId kLinkRxBytesTotal = 401;
inline constexpr FieldId kLinkUp = 402;
inline constexpr FieldId kLinkBandwidthUtil = 403;
inline constexpr FieldId kLinkRatePercent = 404;
inline constexpr FieldId kLinkDownEventsRecent = 405;
// Process level, 450-499 (carried by the process table, named here for tools).
inline constexpr FieldId kProcessHbmUsedBytes = 450;
}  // namespace fid

// Values of npu_health (npu-smi strings: OK, Warning, Alarm, Critical, UNKNOWN).
enum class Health : uint8_t { kOk = 0, kWarning = 1, kAlarm = 2, kCritical = 3, kUnknown = 4 };
const char* health_name(Health h);

// Bits of npu_throttle_reasons.
inline constexpr uint64_t kThrottleThermal = 1;
inline constexpr uint64_t kThrottlePowerLimit = 2;
inline constexpr uint64_t kThrottleFault = 4;
// The reasons set in `reasons` by name ("thermal", "power limit", "fault"), joined by `separator`;
// "" when none. Every surface names them so (they read "power cap", "power-limit" and "power").
std::string throttle_reason_names(uint64_t reasons, std::string_view separator);

// Ids that once existed and must never be reused (empty so far).
inline constexpr std::span<const FieldId> kRetiredFieldIds{};

// The whole table, in table order (sorted by id).
std::span<const FieldDef> all_fields();
namespace detail {
extern const std::array<uint16_t, 4> kFieldCountByLevel;  // constant-initialised from the table
}
// Number of fields of `level` (== fields_of(level).size()); cheap enough for hot loops.
inline std::size_t field_count(EntityLevel level) {
  return detail::kFieldCountByLevel[static_cast<std::size_t>(level)];
}
// Fields of one level, in slot order (fields_of(level)[i].slot == i).
std::span<const FieldDef* const> fields_of(EntityLevel level);
// Lookup by id; nullptr when unknown.
const FieldDef* find_field(FieldId id);
// Lookup by current name or by an alias (an old name kept after a rename); nullptr when unknown.
const FieldDef* find_field(std::string_view name);

struct FieldAlias {
  std::string_view old_name;
  FieldId id;
};
std::span<const FieldAlias> field_aliases();

// FNV-1a over (id, name, kind, level, type) of every field in table order.
uint64_t field_table_hash();

const char* level_name(EntityLevel level);
const char* kind_name(FieldKind kind);
const char* value_type_name(ValueType type);
const char* status_name(SampleStatus status);  // "ok", "not_supported", "stale", "blank"

}  // namespace npukit::telemetry
