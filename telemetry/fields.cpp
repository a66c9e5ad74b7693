#include "telemetry/fields.hpp"

#include <algorithm>
#include <array>
#include <vector>

namespace npukit::telemetry {

namespace {

constexpr auto G = FieldKind::kGauge;
constexpr auto C = FieldKind::kCounter;
constexpr auto N = EntityLevel::kNode;
constexpr auto D = EntityLevel::kDevice;
constexpr auto L = EntityLevel::kLink;
constexpr auto P = EntityLevel::kProcess;
constexpr auto U64 = ValueType::kU64;
constexpr auto I64 = ValueType::kI64;
constexpr auto F64 = ValueType::kF64;

// THE table. Sorted by id. Never reuse an id; on a rename keep the id and add an alias below.
// Id ranges: node 1-99 (1-9 state, 10-29 bus self-telemetry, 30-99 reserved); device 100-399
// (100-129 utilization, 130-139 busy time, 140-159 work totals, 160-179 power/thermal, 180-199
// clocks, 200-219 memory, 220-239 health, 240-259 ECC, 260-279 processes, 280-299 identity,
// 300-389 reserved,
// 390-399 integrity); link 400-449; process 450-499; 500+ reserved.
constexpr FieldDef kTable[] = {
    {fid::kNodeHeartbeatNs, "npu_node_heartbeat_ns", G, N, U64, "Heartbeat(ns)", 20,
     "CLOCK_MONOTONIC time of the writer's last heartbeat, ns (from the segment header)"},
    {fid::kNodeVirtualTimeNs, "npu_node_virtual_time_ns", G, N, U64, "VTime(ns)", 20,
     "the emulator's virtual clock, ns since the node started"},
    {fid::kNodeLagNs, "npu_node_lag_ns", G, N, I64, "Lag(ns)", 14,
     "how far virtual time runs behind wall time in paced mode, ns (negative: ahead)"},
    {fid::kNodeDeviceCount, "npu_node_device_count", G, N, U64, "Devices", 7,
     "number of devices on the node (from the segment header)"},
    {fid::kNodeSpeedRatio, "npu_node_speed_ratio", G, N, F64, "Speed", 7,
     "paced-mode speed factor (virtual ns per wall ns); 0 in fast mode"},
    {fid::kBusEventsTotal, "npukit_bus_events_total", C, N, U64, "Events", 12,
     "events the writer has recorded into the event ring"},
    {fid::kBusStringsInterned, "npukit_bus_strings_count", G, N, U64, "Strings", 8,
     "strings in the segment's string table"},
    {fid::kBusStringTableFullTotal, "npukit_bus_string_table_full_total", C, N, U64, "StrFull", 8,
     "intern requests refused because the string table was full"},
    {fid::kBusPublishErrorsTotal, "npukit_bus_publish_errors_total", C, N, U64, "PubErr", 8,
     "publish calls rejected: unknown field, wrong level, or process table overflow"},
    {fid::kBusLosslessTimeoutsTotal, "npukit_bus_lossless_timeouts_total", C, N, U64, "LLTimeout",
     9, "lossless readers evicted after the writer waited longer than the lossless timeout"},
    {fid::kBusLosslessDeadReadersTotal, "npukit_bus_lossless_dead_readers_total", C, N, U64,
     "LLDead", 8, "lossless reader slots reclaimed because the reader's process was gone"},

    {fid::kAicoreUtil, "npu_aicore_utilization_percent", G, D, F64, "AICore(%)", 9,
     "AI-core (cube + vector) utilization over the last window, 0-100"},
    {fid::kCubeUtil, "npu_cube_utilization_percent", G, D, F64, "AICube(%)", 9,
     "cube-unit utilization over the last window, 0-100"},
    {fid::kVectorUtil, "npu_vector_utilization_percent", G, D, F64, "AIVector(%)", 11,
     "vector-unit utilization over the last window, 0-100"},
    {fid::kAicpuUtil, "npu_aicpu_utilization_percent", G, D, F64, "AICpu(%)", 8,
     "AI CPU utilization over the last window, 0-100"},
    {fid::kCtrlcpuUtil, "npu_ctrlcpu_utilization_percent", G, D, F64, "CtrlCpu(%)", 10,
     "control CPU utilization over the last window, 0-100"},
    {fid::kNpuUtil, "npu_overall_utilization_percent", G, D, F64, "NPU(%)", 6,
     "overall NPU utilization over the last window, 0-100"},
    {fid::kHbmBandwidthUtil, "npu_hbm_bandwidth_utilization_percent", G, D, F64, "HBM BW(%)", 9,
     "HBM bandwidth used over the last window as a share of peak, 0-100"},
    {fid::kPcieBandwidthUtil, "npu_pcie_bandwidth_utilization_percent", G, D, F64, "PCIe BW(%)",
     10, "PCIe bandwidth used over the last window as a share of peak, 0-100"},
    {fid::kHccsBandwidthUtil, "npu_hccs_bandwidth_utilization_percent", G, D, F64, "HCCS BW(%)",
     10, "HCCS bandwidth used over the last window as a share of peak, 0-100"},

    {fid::kAicoreBusyNs, "npu_aicore_busy_ns_total", C, D, U64, "AICoreBusy(ns)", 16,
     "AI-core busy time averaged over the device's AI cores, ns; its rate is the utilization"},
    {fid::kCubeBusyNs, "npu_cube_busy_ns_total", C, D, U64, "CubeBusy(ns)", 16,
     "cube-unit busy time averaged over the device's AI cores, ns"},
    {fid::kVectorBusyNs, "npu_vector_busy_ns_total", C, D, U64, "VecBusy(ns)", 16,
     "vector-unit busy time averaged over the device's vector cores (its AIVs where they are apart from the AI cores), ns"},
    {fid::kAicpuBusyNs, "npu_aicpu_busy_ns_total", C, D, U64, "AICpuBusy(ns)", 16,
     "AI CPU busy time averaged over the device's AI CPUs, ns"},
    {fid::kFlopsTotal, "npu_flops_total", C, D, F64, "FLOPs", 12,
     "floating-point operations executed by kernels (f64: u64 would wrap within a day)"},
    {fid::kHbmBytesTotal, "npu_hbm_bytes_total", C, D, U64, "HBM(B)", 14,
     "HBM traffic of kernels, device-to-device copies and collectives (their sends, receives and reductions), bytes"},
    {fid::kPcieTxBytesTotal, "npu_pcie_tx_bytes_total", C, D, U64, "PCIeTx(B)", 14,
     "bytes sent device-to-host over PCIe"},
    {fid::kPcieRxBytesTotal, "npu_pcie_rx_bytes_total", C, D, U64, "PCIeRx(B)", 14,
     "bytes received host-to-device over PCIe"},
    {fid::kKernelsTotal, "npu_kernels_total", C, D, U64, "Kernels", 12,
     "kernels completed (AI core and AI CPU)"},
    {fid::kAicpuKernelsTotal, "npu_aicpu_kernels_total", C, D, U64, "AICpuKern", 10,
     "kernels completed on the AI CPU (fallbacks the profiler flags)"},
    {fid::kCopiesTotal, "npu_copies_total", C, D, U64, "Copies", 10,
     "memory copies completed (H2D, D2H, D2D)"},
    {fid::kHbmWriteBytesTotal, "npu_hbm_write_bytes_total", C, D, U64, "HBMWr(B)", 14,
     "of npu_hbm_bytes_total, the bytes written: kernels' outputs, device-to-device copies' destinations, what collectives receive and reduce"},

    {fid::kPowerWatts, "npu_power_watts", G, D, F64, "Power(W)", 8, "chip power draw, watts"},
    {fid::kPowerLimitWatts, "npu_power_limit_watts", G, D, F64, "PwrLimit(W)", 11,
     "power limit enforced by power capping, watts"},
    {fid::kEnergyJoulesTotal, "npu_energy_joules_total", C, D, F64, "Energy(J)", 12,
     "energy consumed since the node started, joules"},
    {fid::kTemperatureCelsius, "npu_temperature_celsius", G, D, F64, "Temp(C)", 7,
     "chip (SoC) temperature, degrees Celsius"},
    {fid::kHbmTemperatureCelsius, "npu_hbm_temperature_celsius", G, D, F64, "HBMTemp(C)", 10,
     "HBM temperature, degrees Celsius"},
    {fid::kVoltageVolts, "npu_voltage_volts", G, D, F64, "Volt(V)", 7, "chip voltage, volts"},

    {fid::kAicoreClockMhz, "npu_aicore_clock_mhz", G, D, U64, "AICoreFreq(MHz)", 15,
     "current AI-core clock (DVFS lowers it when throttling), MHz"},
    {fid::kAicoreClockMaxMhz, "npu_aicore_clock_max_mhz", G, D, U64, "MaxFreq(MHz)", 12,
     "maximum AI-core clock, MHz"},
    {fid::kHbmClockMhz, "npu_hbm_clock_mhz", G, D, U64, "HBMFreq(MHz)", 12, "HBM clock, MHz"},

    {fid::kHbmUsedBytes, "npu_hbm_used_bytes", G, D, U64, "HBM-Usage(MB)", 13,
     "HBM in use (allocated by processes plus runtime reserve), bytes"},
    {fid::kHbmTotalBytes, "npu_hbm_total_bytes", G, D, U64, "HBM(MB)", 8, "HBM capacity, bytes"},
    {fid::kDdrUsedBytes, "npu_ddr_used_bytes", G, D, U64, "Memory-Usage(MB)", 16,
     "on-chip DDR in use, bytes (310P classic layout; 910B reports 0)"},
    {fid::kDdrTotalBytes, "npu_ddr_total_bytes", G, D, U64, "Memory(MB)", 10,
     "on-chip DDR capacity, bytes"},
    {fid::kHugepagesUsedPages, "npu_hugepages_used_pages", G, D, U64, "Hugepages", 9,
     "2 MiB hugepages in use"},
    {fid::kHugepagesTotalPages, "npu_hugepages_total_pages", G, D, U64, "HugepagesTotal", 14,
     "2 MiB hugepages available"},

    {fid::kHealth, "npu_health", G, D, U64, "Health", 8,
     "0 OK, 1 Warning, 2 Alarm, 3 Critical, 4 UNKNOWN (stale or absent)"},
    {fid::kErrorCode, "npu_error_code", G, D, U64, "ErrorCode", 10,
     "most severe active error code, 0 when none"},
    {fid::kThrottleReasons, "npu_throttle_reasons", G, D, U64, "Throttle", 8,
     "bitmask of active clock throttling: 1 thermal, 2 power limit, 4 fault"},
    {fid::kErrorCode2, "npu_error_code_2", G, D, U64, "ErrorCode2", 10,
     "second most severe active error code, 0 when none"},
    {fid::kErrorCode3, "npu_error_code_3", G, D, U64, "ErrorCode3", 10,
     "third most severe active error code, 0 when none"},
    {fid::kErrorCode4, "npu_error_code_4", G, D, U64, "ErrorCode4", 10,
     "fourth most severe active error code, 0 when none"},

    {fid::kEccEnabled, "npu_ecc_enabled", G, D, U64, "ECC", 3, "1 when ECC is enabled on the device memory (HBM; DDR on 310P)"},
    {fid::kEccSingleBitVolatile, "npu_ecc_single_bit_volatile_errors", G, D, U64, "SBE", 6,
     "memory (HBM; DDR on 310P) single-bit errors since the last clear"},
    {fid::kEccDoubleBitVolatile, "npu_ecc_double_bit_volatile_errors", G, D, U64, "DBE", 6,
     "memory (HBM; DDR on 310P) double-bit errors since the last clear"},
    {fid::kEccSingleBitTotal, "npu_ecc_single_bit_errors_total", C, D, U64, "SBETotal", 8,
     "memory (HBM; DDR on 310P) single-bit errors, aggregate over the device's life"},
    {fid::kEccDoubleBitTotal, "npu_ecc_double_bit_errors_total", C, D, U64, "DBETotal", 8,
     "memory (HBM; DDR on 310P) double-bit errors, aggregate over the device's life"},
    {fid::kEccSingleBitIsolatedPages, "npu_ecc_single_bit_isolated_pages", G, D, U64, "SBEPages", 8,
     "memory (HBM; DDR on 310P) pages isolated after single-bit errors"},
    {fid::kEccDoubleBitIsolatedPages, "npu_ecc_double_bit_isolated_pages", G, D, U64, "DBEPages", 8,
     "memory (HBM; DDR on 310P) pages isolated after double-bit errors"},

    {fid::kProcessCount, "npu_process_count", G, D, U64, "Procs", 5,
     "processes holding a context on the device"},
    {fid::kDeviceInfo, "npu_device_info", FieldKind::kInfo, D, U64, "Info", 4,
     "1 while the device is present; its labels (name, chip, bus id) are the static device info"},
    {fid::kChecksum, "npu_snapshot_checksum", G, D, U64, "Checksum", 18,
     "set by the writer on every commit from the device's other values and statuses; a reader "
     "recomputes it to prove the snapshot is not torn"},

    {fid::kLinkTxBytesTotal, "npu_link_tx_bytes_total", C, L, U64, "Tx(B)", 14,
     "bytes sent from the link's first to its second endpoint"},
    {fid::kLinkRxBytesTotal, "npu_link_rx_bytes_total", C, L, U64, "Rx(B)", 14,
     "bytes sent from the link's second to its first endpoint"},
    {fid::kLinkUp, "npu_link_up", G, L, U64, "Up", 2, "1 when the link is up, 0 when down"},
    {fid::kLinkBandwidthUtil, "npu_link_bandwidth_utilization_percent", G, L, F64, "BW(%)", 6,
     "link bandwidth used over the last window as a share of peak, 0-100"},
    {fid::kLinkRatePercent, "npu_link_rate_percent", G, L, F64, "Rate(%)", 7,
     "rate the link trained at, as a share of its line rate, 0-100"},
    {fid::kLinkDownEventsRecent, "npu_link_recent_down_count", G, L, U64, "Flaps", 5,
     "times the link went down in the last 60 s of virtual time"},

    {fid::kProcessHbmUsedBytes, "npu_process_hbm_used_bytes", G, P, U64, "Process memory(MB)", 18,
     "HBM held by one process on one device, bytes"},
};

// Old names kept after renames (none so far); each maps to the id the field still has.
constexpr std::array<FieldAlias, 0> kAliases{};

constexpr FieldId kMaxId = 511;

struct Registry {
  std::array<FieldDef, std::size(kTable)> table{};
  std::array<int16_t, kMaxId + 1> by_id{};
  std::array<std::vector<const FieldDef*>, 4> by_level;
  uint64_t hash = 0;

  Registry() {
    by_id.fill(-1);
    std::array<uint16_t, 4> next_slot{};
    for (std::size_t i = 0; i < std::size(kTable); ++i) {
      table[i] = kTable[i];
      auto level = static_cast<std::size_t>(table[i].level);
      table[i].slot = next_slot[level]++;
      by_id[table[i].id] = static_cast<int16_t>(i);
    }
    for (const auto& f : table) by_level[static_cast<std::size_t>(f.level)].push_back(&f);
    hash = compute_hash();
  }

  uint64_t compute_hash() const {
    uint64_t h = 1469598103934665603ull;
    auto mix = [&h](uint64_t byte) {
      h ^= byte;
      h *= 1099511628211ull;
    };
    for (const auto& f : table) {
      mix(f.id & 0xff);
      mix(f.id >> 8);
      for (char c : f.name) mix(static_cast<unsigned char>(c));
      mix(static_cast<uint64_t>(f.kind));
      mix(static_cast<uint64_t>(f.level));
      mix(static_cast<uint64_t>(f.type));
    }
    return h;
  }
};

// Table order must be sorted by id and ids must fit the lookup array (checked at compile time).
constexpr bool table_is_sorted() {
  for (std::size_t i = 1; i < std::size(kTable); ++i) {
    if (kTable[i - 1].id >= kTable[i].id) return false;
  }
  return kTable[std::size(kTable) - 1].id <= kMaxId;
}
static_assert(table_is_sorted(), "field table must be sorted by id, ids unique and <= kMaxId");

constexpr std::array<uint16_t, 4> count_levels() {
  std::array<uint16_t, 4> counts{};
  for (const auto& f : kTable) ++counts[static_cast<std::size_t>(f.level)];
  return counts;
}

const Registry& registry() {
  static const Registry r;
  return r;
}

}  // namespace

constinit const std::array<uint16_t, 4> detail::kFieldCountByLevel = count_levels();

std::span<const FieldDef> all_fields() { return registry().table; }

std::span<const FieldDef* const> fields_of(EntityLevel level) {
  return registry().by_level[static_cast<std::size_t>(level)];
}

const FieldDef* find_field(FieldId id) {
  const auto& r = registry();
  if (id > kMaxId || r.by_id[id] < 0) return nullptr;
  return &r.table[static_cast<std::size_t>(r.by_id[id])];
}

const FieldDef* find_field(std::string_view name) {
  const auto& r = registry();
  for (const auto& f : r.table) {
    if (f.name == name) return &f;
  }
  for (const auto& a : field_aliases()) {
    if (a.old_name == name) return find_field(a.id);
  }
  return nullptr;
}

std::span<const FieldAlias> field_aliases() { return kAliases; }

uint64_t field_table_hash() { return registry().hash; }

namespace {

// Name of an enum value from a table indexed by the value; "?" outside the table.
template <typename E, std::size_t N>
const char* name_in(E value, const char* const (&names)[N]) {
  auto i = static_cast<std::size_t>(value);
  return i < N ? names[i] : "?";
}

constexpr const char* kHealthNames[] = {"OK", "Warning", "Alarm", "Critical", "UNKNOWN"};
constexpr const char* kLevelNames[] = {"node", "device", "link", "process"};
constexpr const char* kKindNames[] = {"gauge", "counter", "info"};
constexpr const char* kTypeNames[] = {"u64", "i64", "f64"};
constexpr const char* kStatusNames[] = {"blank", "ok", "not_supported", "stale"};

}  // namespace

std::string throttle_reason_names(uint64_t reasons, std::string_view separator) {
  static constexpr std::pair<uint64_t, std::string_view> kNames[] = {
      {kThrottleThermal, "thermal"}, {kThrottlePowerLimit, "power limit"}, {kThrottleFault, "fault"}};
  std::string out;
  for (const auto& [bit, name] : kNames) {
    if ((reasons & bit) == 0) continue;
    if (!out.empty()) out += separator;
    out += name;
  }
  return out;
}

const char* health_name(Health h) {
  return static_cast<std::size_t>(h) < std::size(kHealthNames) ? name_in(h, kHealthNames) : "UNKNOWN";
}
const char* level_name(EntityLevel level) { return name_in(level, kLevelNames); }
const char* kind_name(FieldKind kind) { return name_in(kind, kKindNames); }
const char* value_type_name(ValueType type) { return name_in(type, kTypeNames); }
const char* status_name(SampleStatus status) { return name_in(status, kStatusNames); }

}  // namespace npukit::telemetry
