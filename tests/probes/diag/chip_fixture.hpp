// A 910B2-like chip's identity for in-process test buses of the probes tests.
#pragma once

#include <string>

#include "telemetry/snapshot.hpp"

namespace npukit::probes::testing {

inline telemetry::DeviceInfo chip_info(int d) {
  telemetry::DeviceInfo info;
  info.npu_id = d;
  info.logic_id = d;
  info.aicore_count = 24;
  info.chip_type = "Ascend910B";
  info.bus_id = "0000:0" + std::to_string(d) + ":00.0";
  info.smi_layout = "hbm";
  return info;
}

}  // namespace npukit::probes::testing
