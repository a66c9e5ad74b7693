#include "smi/common/columns.hpp"

#include <cctype>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <vector>

#include "smi/common/text.hpp"

namespace npukit::smi {

namespace tf = telemetry;

namespace {

using Info = tf::DeviceInfo;

Value id_npu(const tf::Snapshot& s, int d) { return Value::integer(s.device_info(d).npu_id); }
Value id_chip(const tf::Snapshot& s, int d) { return Value::integer(s.device_info(d).chip_id); }
Value id_logic(const tf::Snapshot& s, int d) { return Value::integer(s.device_info(d).logic_id); }
Value id_phy(const tf::Snapshot& s, int d) { return Value::integer(s.device_info(d).phy_id); }
Value id_name(const tf::Snapshot& s, int d) { return Value::str(s.device_info(d).name); }
Value id_chip_name(const tf::Snapshot& s, int d) { return Value::str(s.device_info(d).chip_name); }
Value id_chip_type(const tf::Snapshot& s, int d) { return Value::str(s.device_info(d).chip_type); }
Value id_bus(const tf::Snapshot& s, int d) { return Value::str(s.device_info(d).bus_id); }
Value id_serial(const tf::Snapshot& s, int d) { return Value::str(s.device_info(d).serial_number); }
Value id_firmware(const tf::Snapshot& s, int d) { return Value::str(s.device_info(d).firmware_version); }
Value id_aicore(const tf::Snapshot& s, int d) { return Value::integer(s.device_info(d).aicore_count); }
Value id_aicpu(const tf::Snapshot& s, int d) { return Value::integer(s.device_info(d).aicpu_count); }

Value hbm_usage(const tf::Snapshot& s, int d) {
  return usage_percent(s, d, tf::fid::kHbmUsedBytes, tf::fid::kHbmTotalBytes);
}
Value ddr_usage(const tf::Snapshot& s, int d) {
  return usage_percent(s, d, tf::fid::kDdrUsedBytes, tf::fid::kDdrTotalBytes);
}

// nvidia-smi --query-gpu names, in nvidia-smi's units (MiB, W with 2 decimals, integer C, %).
template <tf::FieldId F>
Value nv_integer(const tf::Snapshot& s, int d) { return field_integer(s, d, F); }
template <tf::FieldId F>
Value nv_watts(const tf::Snapshot& s, int d) { return field_real(s, d, F, 2); }
// nvidia-smi's memory.* is the device memory: HBM, or DDR on a chip that has no HBM (310P).
tf::FieldId memory_used_field(const tf::Snapshot& s, int d) {
  return s.device_info(d).has_hbm() ? tf::fid::kHbmUsedBytes : tf::fid::kDdrUsedBytes;
}
tf::FieldId memory_total_field(const tf::Snapshot& s, int d) {
  return s.device_info(d).has_hbm() ? tf::fid::kHbmTotalBytes : tf::fid::kDdrTotalBytes;
}
Value nv_memory_used(const tf::Snapshot& s, int d) { return field_mb(s, d, memory_used_field(s, d)); }
Value nv_memory_total(const tf::Snapshot& s, int d) { return field_mb(s, d, memory_total_field(s, d)); }
Value nv_memory_free(const tf::Snapshot& s, int d) {
  tf::Sample used = s.device(d, memory_used_field(s, d)), total = s.device(d, memory_total_field(s, d));
  if (!used.ok() || !total.ok()) return Value::na();
  uint64_t free = total.as_u64() > used.as_u64() ? total.as_u64() - used.as_u64() : 0;
  return Value::bytes_as_mb(free);
}
Value nv_count(const tf::Snapshot& s, int) { return Value::integer(s.device_count()); }
// "NPU-" and the first 32 hex digits of the chip's VDie ID as 8-4-4-4-12: unique per chip and
// stable across restarts, like nvidia-smi's GPU-<uuid>.
Value nv_uuid(const tf::Snapshot& s, int d) {
  std::string hex;
  for (char c : s.device_info(d).die_id) {
    if (std::isxdigit(static_cast<unsigned char>(c))) hex += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  if (hex.size() < 32) return Value::na();
  return Value::str("NPU-" + hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-" + hex.substr(12, 4) + "-" +
                    hex.substr(16, 4) + "-" + hex.substr(20, 12));
}
Value nv_ecc_mode(const tf::Snapshot& s, int d) {
  auto n = s.device(d, tf::fid::kEccEnabled).number();
  return n ? Value::str(*n != 0 ? "Enabled" : "Disabled") : Value::na();
}
// nvidia-smi's clocks_event_reasons bits: 0x4 SW power cap, 0x8 HW slowdown, 0x20 SW thermal.
Value nv_throttle(const tf::Snapshot& s, int d) {
  tf::Sample sample = s.device(d, tf::fid::kThrottleReasons);
  if (!sample.ok()) return Value::na();
  uint64_t ours = sample.as_u64(), theirs = 0;
  if (ours & tf::kThrottlePowerLimit) theirs |= 0x4;
  if (ours & tf::kThrottleFault) theirs |= 0x8;
  if (ours & tf::kThrottleThermal) theirs |= 0x20;
  return Value::pair(theirs, strprintf("0x%016" PRIX64, theirs));
}
Value nv_energy_mj(const tf::Snapshot& s, int d) {
  auto n = s.device(d, tf::fid::kEnergyJoulesTotal).number();
  return n ? Value::integer(std::llround(*n * 1000)) : Value::na();
}

Column nvidia(const char* key, const char* unit, const char* ours, Value (*read)(const tf::Snapshot&, int)) {
  return {Column::Kind::kNvidia, key, unit, ours, 0, read};
}

// The nvidia-smi --query-gpu names scripts ported from NVIDIA use, mapped onto ours.
void add_nvidia_columns(std::vector<Column>& cols) {
  namespace f = tf::fid;
  const Column more[] = {
      nvidia("index", "", "logic_id", id_logic),
      nvidia("count", "", "chips on the node", nv_count),
      nvidia("uuid", "", "NPU- and the chip's VDie ID (die_id) in UUID form", nv_uuid),
      nvidia("serial", "", "serial_number", id_serial),
      nvidia("pci.bus_id", "", "bus_id", id_bus),
      nvidia("temperature.gpu", "C", "npu_temperature_celsius, rounded", nv_integer<f::kTemperatureCelsius>),
      nvidia("temperature.memory", "C", "npu_hbm_temperature_celsius, rounded", nv_integer<f::kHbmTemperatureCelsius>),
      nvidia("power.draw", "W", "npu_power_watts", nv_watts<f::kPowerWatts>),
      nvidia("power.limit", "W", "npu_power_limit_watts", nv_watts<f::kPowerLimitWatts>),
      nvidia("memory.used", "MiB", "npu_hbm_used_bytes (DDR on a 310P) in MiB", nv_memory_used),
      nvidia("memory.total", "MiB", "npu_hbm_total_bytes (DDR on a 310P) in MiB", nv_memory_total),
      nvidia("memory.free", "MiB", "HBM (DDR on a 310P) total - used, MiB", nv_memory_free),
      nvidia("utilization.gpu", "%", "npu_aicore_utilization_percent, rounded", nv_integer<f::kAicoreUtil>),
      nvidia("utilization.memory", "%", "npu_hbm_bandwidth_utilization_percent, rounded", nv_integer<f::kHbmBandwidthUtil>),
      nvidia("clocks.sm", "MHz", "npu_aicore_clock_mhz", nv_integer<f::kAicoreClockMhz>),
      nvidia("clocks.current.sm", "MHz", "npu_aicore_clock_mhz", nv_integer<f::kAicoreClockMhz>),
      nvidia("clocks.max.sm", "MHz", "npu_aicore_clock_max_mhz", nv_integer<f::kAicoreClockMaxMhz>),
      nvidia("clocks.mem", "MHz", "npu_hbm_clock_mhz", nv_integer<f::kHbmClockMhz>),
      nvidia("ecc.mode.current", "", "npu_ecc_enabled as Enabled/Disabled", nv_ecc_mode),
      nvidia("ecc.errors.corrected.volatile.total", "", "npu_ecc_single_bit_volatile_errors", nv_integer<f::kEccSingleBitVolatile>),
      nvidia("ecc.errors.uncorrected.volatile.total", "", "npu_ecc_double_bit_volatile_errors", nv_integer<f::kEccDoubleBitVolatile>),
      nvidia("ecc.errors.corrected.aggregate.total", "", "npu_ecc_single_bit_errors_total", nv_integer<f::kEccSingleBitTotal>),
      nvidia("ecc.errors.uncorrected.aggregate.total", "", "npu_ecc_double_bit_errors_total", nv_integer<f::kEccDoubleBitTotal>),
      nvidia("clocks_event_reasons.active", "", "npu_throttle_reasons as nvidia's bits (0x4 power cap, 0x8 fault, 0x20 thermal)", nv_throttle),
      nvidia("clocks_throttle_reasons.active", "", "the same as clocks_event_reasons.active", nv_throttle),
      nvidia("total_energy_consumption", "mJ", "npu_energy_joules_total in mJ", nv_energy_mj),
  };
  cols.insert(cols.end(), std::begin(more), std::end(more));
}

Column identity(const char* key, const char* description, Value (*read)(const tf::Snapshot&, int)) {
  return {Column::Kind::kIdentity, key, "", description, 0, read};
}

std::vector<Column> build_columns() {
  std::vector<Column> cols = {
      identity("npu_id", "NPU (card) id, as npu-smi -i takes it", id_npu),
      identity("chip_id", "chip index within the card, as npu-smi -c takes it", id_chip),
      identity("logic_id", "chip logic id (the runtime's device id)", id_logic),
      identity("phy_id", "chip physical id (/dev/davinciN), as npu-smi -p takes it", id_phy),
      identity("name", "product name as the npu-smi table prints it", id_name),
      identity("chip_name", "chip name", id_chip_name),
      identity("chip_type", "chip family", id_chip_type),
      identity("bus_id", "PCIe bus id DDDD:BB:DD.F", id_bus),
      identity("serial_number", "board serial number", id_serial),
      identity("firmware_version", "firmware version", id_firmware),
      identity("aicore_count", "AI cores on the chip", id_aicore),
      identity("aicpu_count", "AI CPUs on the chip", id_aicpu),
  };
  for (const tf::FieldDef* f : tf::fields_of(tf::EntityLevel::kDevice)) {
    if (f->id == tf::fid::kChecksum) continue;  // integrity plumbing, not a reading
    cols.push_back({Column::Kind::kField, std::string(f->name), unit_of(f->name), std::string(f->description),
                    f->id, nullptr});
  }
  cols.push_back({Column::Kind::kDerived, "npu_hbm_usage_percent", "%",
                  "npu_hbm_used_bytes / npu_hbm_total_bytes * 100, rounded down", 0, hbm_usage});
  cols.push_back({Column::Kind::kDerived, "npu_ddr_usage_percent", "%",
                  "npu_ddr_used_bytes / npu_ddr_total_bytes * 100, rounded down", 0, ddr_usage});
  add_nvidia_columns(cols);
  return cols;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

std::span<const Column> all_columns() {
  static const std::vector<Column> cols = build_columns();
  return cols;
}

const Column* find_column(std::string_view key) {
  for (const Column& c : all_columns()) {
    if (c.key == key) return &c;
  }
  if (const tf::FieldDef* f = tf::find_field(key); f != nullptr && f->level == tf::EntityLevel::kDevice) {
    for (const Column& c : all_columns()) {
      if (c.kind == Column::Kind::kField && c.field == f->id) return &c;
    }
  }
  return nullptr;
}

Value column_value(const Column& column, const tf::Snapshot& s, int device) {
  if (column.kind == Column::Kind::kField) return field_value(s, device, column.field);
  return column.read(s, device);
}

std::string unit_of(std::string_view name) {
  static const std::pair<std::string_view, std::string_view> kSuffixes[] = {
      {"_bytes_total", "B"}, {"_bytes", "B"},     {"_watts", "W"},      {"_joules_total", "J"},
      {"_celsius", "C"},     {"_percent", "%"},   {"_mhz", "MHz"},      {"_ns_total", "ns"},
      {"_ns", "ns"},         {"_pages", "pages"}, {"_volts", "V"},      {"_errors_total", "errors"},
      {"_errors", "errors"}, {"_flops_total", "FLOP"},
  };
  for (const auto& [suffix, unit] : kSuffixes) {
    if (ends_with(name, suffix)) return std::string(unit);
  }
  return "";
}

Value field_integer(const tf::Snapshot& s, int device, tf::FieldId id) {
  auto n = s.device(device, id).number();
  return n ? Value::integer(std::llround(*n)) : Value::na();
}

Value field_real(const tf::Snapshot& s, int device, tf::FieldId id, int decimals) {
  auto n = s.device(device, id).number();
  return n ? Value::real(*n, decimals) : Value::na();
}

Value field_mb(const tf::Snapshot& s, int device, tf::FieldId id) {
  tf::Sample sample = s.device(device, id);
  return sample.ok() ? Value::bytes_as_mb(sample.as_u64()) : Value::na();
}

Value field_value(const tf::Snapshot& s, int device, tf::FieldId id, int decimals) {
  tf::Sample sample = s.device(device, id);
  if (!sample.ok()) return Value::na();
  if (id == tf::fid::kHealth) return Value::str(tf::health_name(s.health(device)));
  // Every error code in the same form (npu_error_code_2.._4 printed in decimal beside the first's hex).
  if (id == tf::fid::kErrorCode || id == tf::fid::kErrorCode2 || id == tf::fid::kErrorCode3 || id == tf::fid::kErrorCode4) {
    return Value::pair(sample.as_u64(), error_code_text(sample.as_u64()));
  }
  switch (sample.type) {
    case tf::ValueType::kU64: return Value::pair(sample.as_u64(), std::to_string(sample.as_u64()));
    case tf::ValueType::kI64: return Value::integer(sample.as_i64());
    case tf::ValueType::kF64: return Value::real(sample.as_f64(), decimals);
  }
  return Value::na();
}

Value usage_percent(const tf::Snapshot& s, int device, tf::FieldId used, tf::FieldId total) {
  tf::Sample u = s.device(device, used);
  tf::Sample t = s.device(device, total);
  if (!u.ok() || !t.ok() || t.as_u64() == 0) return Value::na();
  return Value::integer(static_cast<int64_t>(u.as_u64() * 100 / t.as_u64()));
}

std::string key_of(tf::FieldId id) {
  const tf::FieldDef* f = tf::find_field(id);
  return f != nullptr ? std::string(f->name) : std::string();
}

}  // namespace npukit::smi
