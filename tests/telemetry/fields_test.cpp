#include "telemetry/fields.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "telemetry/events.hpp"

namespace npukit::telemetry {
namespace {

// The pinned id <-> name contract. A new field adds a row; a rename keeps the id, changes the
// name here AND adds the old name to the alias table; a removal moves the id to
// kRetiredFieldIds. Changing an existing row any other way breaks every tool and dashboard.
const std::vector<std::pair<FieldId, std::string>> kPinned = {
    {1, "npu_node_heartbeat_ns"},
    {2, "npu_node_virtual_time_ns"},
    {3, "npu_node_lag_ns"},
    {4, "npu_node_device_count"},
    {5, "npu_node_speed_ratio"},
    {10, "npukit_bus_events_total"},
    {11, "npukit_bus_strings_count"},
    {12, "npukit_bus_string_table_full_total"},
    {13, "npukit_bus_publish_errors_total"},
    {14, "npukit_bus_lossless_timeouts_total"},
    {15, "npukit_bus_lossless_dead_readers_total"},
    {100, "npu_aicore_utilization_percent"},
    {101, "npu_cube_utilization_percent"},
    {102, "npu_vector_utilization_percent"},
    {103, "npu_aicpu_utilization_percent"},
    {104, "npu_ctrlcpu_utilization_percent"},
    {105, "npu_overall_utilization_percent"},
    {106, "npu_hbm_bandwidth_utilization_percent"},
    {107, "npu_pcie_bandwidth_utilization_percent"},
    {108, "npu_hccs_bandwidth_utilization_percent"},
    {130, "npu_aicore_busy_ns_total"},
    {131, "npu_cube_busy_ns_total"},
    {132, "npu_vector_busy_ns_total"},
    {133, "npu_aicpu_busy_ns_total"},
    {140, "npu_flops_total"},
    {141, "npu_hbm_bytes_total"},
    {142, "npu_pcie_tx_bytes_total"},
    {143, "npu_pcie_rx_bytes_total"},
    {144, "npu_kernels_total"},
    {145, "npu_aicpu_kernels_total"},
    {146, "npu_copies_total"},
    {147, "npu_hbm_write_bytes_total"},
    {160, "npu_power_watts"},
    {161, "npu_power_limit_watts"},
    {162, "npu_energy_joules_total"},
    {163, "npu_temperature_celsius"},
    {164, "npu_hbm_temperature_celsius"},
    {165, "npu_voltage_volts"},
    {180, "npu_aicore_clock_mhz"},
    {181, "npu_aicore_clock_max_mhz"},
    {182, "npu_hbm_clock_mhz"},
    {200, "npu_hbm_used_bytes"},
    {201, "npu_hbm_total_bytes"},
    {202, "npu_ddr_used_bytes"},
    {203, "npu_ddr_total_bytes"},
    {204, "npu_hugepages_used_pages"},
    {205, "npu_hugepages_total_pages"},
    {220, "npu_health"},
    {221, "npu_error_code"},
    {222, "npu_throttle_reasons"},
    {223, "npu_error_code_2"},
    {224, "npu_error_code_3"},
    {225, "npu_error_code_4"},
    {240, "npu_ecc_enabled"},
    {241, "npu_ecc_single_bit_volatile_errors"},
    {242, "npu_ecc_double_bit_volatile_errors"},
    {243, "npu_ecc_single_bit_errors_total"},
    {244, "npu_ecc_double_bit_errors_total"},
    {245, "npu_ecc_single_bit_isolated_pages"},
    {246, "npu_ecc_double_bit_isolated_pages"},
    {260, "npu_process_count"},
    {280, "npu_device_info"},
    {390, "npu_snapshot_checksum"},
    {400, "npu_link_tx_bytes_total"},
    {401, "npu_link_rx_bytes_total"},
    {402, "npu_link_up"},
    {403, "npu_link_bandwidth_utilization_percent"},
    {404, "npu_link_rate_percent"},
    {405, "npu_link_recent_down_count"},
    {450, "npu_process_hbm_used_bytes"},
};

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

TEST(Fields, IdsAndNamesArePinned) {
  auto fields = all_fields();
  ASSERT_EQ(fields.size(), kPinned.size()) << "a field was added or removed: update kPinned";
  for (std::size_t i = 0; i < fields.size(); ++i) {
    EXPECT_EQ(fields[i].id, kPinned[i].first) << "row " << i;
    EXPECT_EQ(fields[i].name, kPinned[i].second) << "id " << fields[i].id;
  }
}

TEST(Fields, AliasesResolveToTheIdTheFieldKept) {
  std::set<std::string_view> names;
  for (const auto& f : all_fields()) names.insert(f.name);
  for (const auto& a : field_aliases()) {
    const FieldDef* f = find_field(a.id);
    ASSERT_NE(f, nullptr) << "alias '" << a.old_name << "' points at unknown id " << a.id;
    EXPECT_EQ(find_field(a.old_name), f) << a.old_name;
    EXPECT_EQ(names.count(a.old_name), 0u) << "alias '" << a.old_name << "' shadows a current name";
  }
}

TEST(Fields, RetiredIdsAreNeverReused) {
  for (FieldId id : kRetiredFieldIds) EXPECT_EQ(find_field(id), nullptr) << "retired id " << id << " reused";
}

TEST(Fields, LookupByIdAndName) {
  const FieldDef* p = find_field(fid::kPowerWatts);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->name, "npu_power_watts");
  EXPECT_EQ(p->label, "Power(W)");
  EXPECT_EQ(p->kind, FieldKind::kGauge);
  EXPECT_EQ(p->level, EntityLevel::kDevice);
  EXPECT_EQ(p->type, ValueType::kF64);
  EXPECT_EQ(find_field("npu_power_watts"), p);
  EXPECT_EQ(find_field(FieldId{9}), nullptr);
  EXPECT_EQ(find_field(FieldId{60000}), nullptr);
  EXPECT_EQ(find_field("npu_power"), nullptr);
}

TEST(Fields, NamesCarryUnitAndKind) {
  const std::vector<std::string_view> units = {"_ns", "_bytes", "_watts", "_celsius", "_percent",
                                               "_mhz", "_pages", "_volts", "_joules", "_count",
                                               "_errors", "_ratio"};
  // Unitless by nature: enums, bitmasks, flags, identity and integrity values.
  const std::set<std::string_view> unitless = {"npu_health", "npu_error_code", "npu_error_code_2",
                                               "npu_error_code_3", "npu_error_code_4", "npu_throttle_reasons",
                                               "npu_ecc_enabled", "npu_link_up", "npu_device_info",
                                               "npu_snapshot_checksum"};
  for (const auto& f : all_fields()) {
    for (char c : f.name) EXPECT_TRUE((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_') << f.name;
    if (f.kind == FieldKind::kCounter) {
      EXPECT_TRUE(ends_with(f.name, "_total")) << f.name << " is a counter without _total";
      continue;
    }
    EXPECT_FALSE(ends_with(f.name, "_total")) << f.name << " is a " << kind_name(f.kind) << " ending in _total";
    bool has_unit = unitless.count(f.name) != 0;
    for (auto u : units) has_unit = has_unit || ends_with(f.name, u);
    EXPECT_TRUE(has_unit) << f.name << " does not end in a unit";
  }
}

TEST(Fields, EveryFieldIsDocumentedAndFitsItsColumn) {
  std::set<std::string_view> names;
  for (const auto& f : all_fields()) {
    EXPECT_FALSE(f.description.empty()) << f.name;
    EXPECT_FALSE(f.label.empty()) << f.name;
    EXPECT_LE(f.label.size(), f.width) << f.name << " label '" << f.label << "' wider than its column";
    EXPECT_TRUE(names.insert(f.name).second) << "duplicate name " << f.name;
  }
}

TEST(Fields, IdRangesMatchLevels) {
  for (const auto& f : all_fields()) {
    switch (f.level) {
      case EntityLevel::kNode: EXPECT_LT(f.id, 100) << f.name; break;
      case EntityLevel::kDevice: EXPECT_TRUE(f.id >= 100 && f.id < 400) << f.name; break;
      case EntityLevel::kLink: EXPECT_TRUE(f.id >= 400 && f.id < 450) << f.name; break;
      case EntityLevel::kProcess: EXPECT_TRUE(f.id >= 450 && f.id < 500) << f.name; break;
    }
  }
}

TEST(Fields, SlotsAreDenseWithinEachLevel) {
  for (auto level : {EntityLevel::kNode, EntityLevel::kDevice, EntityLevel::kLink, EntityLevel::kProcess}) {
    auto fs = fields_of(level);
    EXPECT_FALSE(fs.empty()) << level_name(level);
    EXPECT_EQ(field_count(level), fs.size()) << level_name(level);
    for (std::size_t i = 0; i < fs.size(); ++i) {
      EXPECT_EQ(fs[i]->slot, i) << fs[i]->name;
      EXPECT_EQ(fs[i]->level, level) << fs[i]->name;
    }
  }
}

TEST(Fields, HashIsStableAndNonZero) {
  EXPECT_NE(field_table_hash(), 0u);
  EXPECT_EQ(field_table_hash(), field_table_hash());
}

TEST(Fields, NamesOfEnums) {
  EXPECT_STREQ(status_name(SampleStatus::kBlank), "blank");
  EXPECT_STREQ(status_name(SampleStatus::kOk), "ok");
  EXPECT_STREQ(status_name(SampleStatus::kNotSupported), "not_supported");
  EXPECT_STREQ(status_name(SampleStatus::kStale), "stale");
  EXPECT_STREQ(health_name(Health::kOk), "OK");
  EXPECT_STREQ(health_name(Health::kWarning), "Warning");
  EXPECT_STREQ(health_name(Health::kAlarm), "Alarm");
  EXPECT_STREQ(health_name(Health::kCritical), "Critical");
  EXPECT_STREQ(health_name(Health::kUnknown), "UNKNOWN");
  EXPECT_EQ(static_cast<int>(SampleStatus::kBlank), 0) << "zeroed shared memory must read as blank";
}

TEST(Fields, EventTypesHaveUniqueIdsAndNames) {
  std::set<uint16_t> ids;
  std::set<std::string_view> names;
  for (const auto& t : all_event_types()) {
    EXPECT_TRUE(ids.insert(static_cast<uint16_t>(t.type)).second) << t.name;
    EXPECT_TRUE(names.insert(t.name).second) << t.name;
    EXPECT_FALSE(t.payload.empty()) << t.name;
    EXPECT_EQ(find_event_type(t.type), &t);
    EXPECT_EQ(find_event_type(t.name), &t);
  }
  EXPECT_EQ(find_event_type("kernel")->type, EventType::kKernel);
  EXPECT_EQ(find_event_type(static_cast<EventType>(999)), nullptr);
}

// One name per throttle reason, read by the profiler's finding and section and by npu-top (they
// said "power cap", "power-limit" and "power" for the same bit).
TEST(Fields, EachThrottleReasonHasOneName) {
  EXPECT_EQ(throttle_reason_names(kThrottleThermal | kThrottlePowerLimit | kThrottleFault, "+"), "thermal+power limit+fault");
  EXPECT_EQ(throttle_reason_names(kThrottlePowerLimit, " and "), "power limit");
  EXPECT_EQ(throttle_reason_names(0, ", "), "");
}

}  // namespace
}  // namespace npukit::telemetry
