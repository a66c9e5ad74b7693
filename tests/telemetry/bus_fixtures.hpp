// Fixtures shared by the bus tests and the multi-process test helper (no gtest here): small
// writer options, and a publisher whose values are all functions of one generation number, so a
// reader can detect a torn snapshot without trusting the checksum.
#pragma once

#include <cstdint>
#include <string>

#include "telemetry/snapshot.hpp"
#include "telemetry/writer.hpp"

namespace npukit::telemetry::testing {

inline WriterOptions small_options(const std::string& node, int devices = 2, int links = 1) {
  WriterOptions o;
  o.node = node;
  o.node_info.node_spec = "2x910B2";
  o.node_info.topology = "hccs_full_mesh";
  o.node_info.driver_version = "23.0.2.1";
  o.node_info.tool_version = "23.0.2.1";
  o.node_info.card_count = devices;
  for (int d = 0; d < devices; ++d) {
    DeviceInfo info;
    info.npu_id = d;
    info.logic_id = d;
    info.phy_id = d;
    info.aicore_count = 24;
    info.aicpu_count = 6;
    info.name = "910B2";
    info.chip_name = "910B2";
    info.chip_type = "Ascend910B";
    info.bus_id = "0000:5" + std::to_string(d) + ":00.0";
    info.serial_number = "SN" + std::to_string(d);
    info.firmware_version = "7.1.0.3.220";
    info.smi_layout = "hbm";
    o.devices.push_back(info);
  }
  for (int l = 0; l < links && devices > 1; ++l) o.links.push_back({0, 1, "hccs", 28e9});
  return o;
}

// Publishes generation `k` on device `d`: every value is a function of k, so a reader can check
// them against each other.
inline void publish_generation(Writer& w, int d, uint64_t k) {
  auto u = w.update_device(d);
  u.set(fid::kKernelsTotal, k)
      .set(fid::kHbmBytesTotal, 3 * k)
      .set(fid::kPowerWatts, static_cast<double>(k) * 0.5)
      .set(fid::kTemperatureCelsius, static_cast<double>(k % 100))
      .set(fid::kHbmUsedBytes, k * 7)
      .set(fid::kAicoreBusyNs, k * 11)
      .set(fid::kFlopsTotal, static_cast<double>(k) * 1e6)
      .set(fid::kHealth, k % 4)
      .set_status(fid::kVoltageVolts, SampleStatus::kNotSupported);
}

// True when device `d` of `s` holds one consistent generation (or never published).
inline bool generation_consistent(const Snapshot& s, int d) {
  Sample k = s.device(d, fid::kKernelsTotal);
  if (!k.ok()) return s.device(d, fid::kHbmBytesTotal).status == SampleStatus::kBlank;
  uint64_t g = k.as_u64();
  return s.device(d, fid::kHbmBytesTotal).as_u64() == 3 * g &&
         s.device(d, fid::kPowerWatts).as_f64() == static_cast<double>(g) * 0.5 &&
         s.device(d, fid::kTemperatureCelsius).as_f64() == static_cast<double>(g % 100) &&
         s.device(d, fid::kHbmUsedBytes).as_u64() == 7 * g &&
         s.device(d, fid::kAicoreBusyNs).as_u64() == 11 * g &&
         s.device(d, fid::kFlopsTotal).as_f64() == static_cast<double>(g) * 1e6 &&
         s.device(d, fid::kHealth).as_u64() == g % 4 &&
         s.device(d, fid::kVoltageVolts).status == SampleStatus::kNotSupported &&
         s.checksum_ok(d);
}

// Event `seq` as the tests record it: payload words are functions of the sequence number.
inline Event test_event(uint64_t seq) {
  Event ev;
  ev.type = EventType::kMarker;
  ev.device = static_cast<int32_t>(seq % 8);
  ev.ts_ns = seq * 10;
  ev.words = {seq, seq * 7, ~seq, seq ^ 0x5555};
  return ev;
}
inline bool test_event_ok(const Event& ev) {
  return ev.type == EventType::kMarker && ev.device == static_cast<int32_t>(ev.seq % 8) &&
         ev.ts_ns == ev.seq * 10 && ev.words[0] == ev.seq && ev.words[1] == ev.seq * 7 &&
         ev.words[2] == ~ev.seq && ev.words[3] == (ev.seq ^ 0x5555);
}

}  // namespace npukit::telemetry::testing
