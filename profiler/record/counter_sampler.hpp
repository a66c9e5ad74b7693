// CounterSampler: turns bus snapshots into counter time series.
//
//   msprof tables: AICORE_FREQ (npu_aicore_clock_mhz), NPU_MEM (HBM or DDR in use, bytes),
//                  HBM (two rows a sample, bytes/s: type "write" from the delta of
//                  npu_hbm_write_bytes_total, "read" from the delta of the rest of
//                  npu_hbm_bytes_total), HCCS (per device: tx = its
//                  HCCS links' tx deltas, rx = the tx deltas of the links towards it, bytes/s)
//   EMU_COUNTER:   every ok gauge and counter of the node, each device and each link, by its
//                  field-registry name (power, temperature, utilizations, clocks, HBM, link
//                  bytes, throttle reasons, ...): the raw values, totals stay totals.
//
// Sample time = clock_base_ns + npu_node_virtual_time_ns of the snapshot, the same clock as the
// events. A snapshot whose virtual time did not advance, or a stale one, adds nothing.
// A sampler for one rank's database (`device` >= 0) writes that device's rows, the node's, and
// those of the links with that device at one end.
//
// Thread-safety: one thread owns a sampler.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "profiler/store/profile_writer.hpp"
#include "telemetry/snapshot.hpp"

namespace npukit::prof {

class CounterSampler {
 public:
  // `device` -1: every device.
  CounterSampler(ProfileWriter& writer, int64_t clock_base_ns, int device = -1)
      : w_(writer), base_(clock_base_ns), device_(device) {}

  // NPU_INFO and EMU_LINK rows from the snapshot's identity (call once, first).
  Status describe(const telemetry::Snapshot& snapshot);
  Status sample(const telemetry::Snapshot& snapshot);
  uint64_t samples() const { return samples_; }

 private:
  Result<int64_t> field_name(const telemetry::FieldDef& field);
  Status registry_rows(const telemetry::Snapshot& s, int64_t ts);
  Status device_rows(const telemetry::Snapshot& s, int device, int64_t ts, double dt_s);
  Status hccs_rows(const telemetry::Snapshot& s, int64_t ts, double dt_s);

  bool mine(int device) const { return device_ < 0 || device == device_; }
  bool mine(const telemetry::LinkInfo& link) const { return mine(link.device_a) || mine(link.device_b); }

  ProfileWriter& w_;
  int64_t base_;
  int device_;
  int64_t last_ts_ = -1;
  uint64_t samples_ = 0;
  std::map<telemetry::FieldId, int64_t> names_;
  std::vector<double> prev_hbm_read_;    // per device, NaN = none yet
  std::vector<double> prev_hbm_write_;   // per device, NaN = none yet
  std::vector<double> prev_link_bytes_;  // per link, NaN = none yet
  int64_t device_type_ = 0;              // STRING_IDS "device"
  int64_t hbm_read_ = 0;                 // STRING_IDS "read"
  int64_t hbm_write_ = 0;                // STRING_IDS "write"
};

}  // namespace npukit::prof
