// Columns: every per-chip value npu-smi can name in --query, JSON keys, CSV headers and
// --help-query. Three kinds, in one explicit list:
//   identity  static device info (npu_id, chip_id, name, bus_id, ...) from the snapshot;
//   field     every device-level field of the telemetry registry (fields.hpp), generated from
//             the registry itself, so a new field is queryable without touching this file;
//   derived   a value computed from registry fields (npu_hbm_usage_percent = used / total),
//             each naming its sources;
//   nvidia    nvidia-smi --query-gpu names (memory.used, power.draw, ...) in nvidia-smi's units,
//             each naming the field it reads, so scripts ported from NVIDIA run unchanged.
// Units come from the name's suffix (_watts -> W, _celsius -> C, ...; fields.hpp naming rule).
//
// Thread-safety: the table is built once, immutable afterwards.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "smi/common/doc.hpp"
#include "telemetry/snapshot.hpp"

namespace npukit::smi {

struct Column {
  enum class Kind : uint8_t { kIdentity, kField, kDerived, kNvidia };
  Kind kind = Kind::kField;
  std::string key;          // --query name and JSON key
  std::string unit;         // "" when unitless
  std::string description;
  telemetry::FieldId field = 0;  // kField
  Value (*read)(const telemetry::Snapshot& s, int device) = nullptr;  // kIdentity, kDerived, kNvidia
};

// Identity columns first, then registry fields in table order, derived, nvidia-smi names.
std::span<const Column> all_columns();
// By key (a registry alias resolves to the field's current name); nullptr when unknown.
const Column* find_column(std::string_view key);
// The value of `column` for `device` in machine precision (reals with 1 decimal).
Value column_value(const Column& column, const telemetry::Snapshot& s, int device);

// The unit a registry name carries in its suffix ("W" for npu_power_watts), "" when none.
std::string unit_of(std::string_view field_name);

// Readings of one device field, formatted the way npu-smi prints them. NA when the sample is
// not ok (blank, not supported, stale).
Value field_integer(const telemetry::Snapshot& s, int device, telemetry::FieldId id);  // rounded
Value field_real(const telemetry::Snapshot& s, int device, telemetry::FieldId id, int decimals);
Value field_mb(const telemetry::Snapshot& s, int device, telemetry::FieldId id);  // bytes -> MB
// A registry value in machine form: integers, reals with `decimals`, npu_health by name,
// npu_error_code as 0x%08X text.
Value field_value(const telemetry::Snapshot& s, int device, telemetry::FieldId id, int decimals = 1);
// used / total * 100, rounded down like npu-smi's integer rates; NA when either is missing or
// total is 0.
Value usage_percent(const telemetry::Snapshot& s, int device, telemetry::FieldId used,
                    telemetry::FieldId total);
// The JSON key of a registry field (its name).
std::string key_of(telemetry::FieldId id);

}  // namespace npukit::smi
