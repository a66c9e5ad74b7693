// Chrome Trace Event Format export (reference/msprof-db.md section 3): loads in Perfetto UI,
// chrome://tracing and speedscope. Layout (mirrors torch_npu's timeline):
//
//   process "CANN (pid P)"                 pid P (the host process); one thread per rank,
//                                          "Host thread (device d)", tid d; X slices per launch
//   process "Ascend Hardware (device d)"   pid 10000000 + d; thread "Stream <id>", tid = stream;
//                                          X slices per task; C counters (clock, power,
//                                          temperature, HBM in use, HBM and HCCS bandwidth)
//   process "Overlap Analysis (device d)"  pid 20000000 + d; threads Computing, Communication,
//                                          Communication(Not Overlapped), Free, Steps
//   flows "HostToDevice" (cat HostToDevice, id = connectionId): s on the launch, f with
//   bp "e" on the task it launched.
//
// ts/dur are microseconds (3 decimals carry the ns) relative to otherData.baseTimeNanoseconds
// (the session start, Unix ns), Kineto style. A launch has no duration on the bus: its slice
// has dur 0 and the flow starts at its timestamp.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "profiler/analyze/profile_data.hpp"

namespace npukit::prof {

// `data` must be loaded with LoadOptions{.launches = true, .counters = true}.
nlohmann::json chrome_trace(const ProfileData& data);
Status write_chrome_trace(const ProfileData& data, const std::string& file);

inline constexpr int64_t kHardwarePidBase = 10000000;
inline constexpr int64_t kOverlapPidBase = 20000000;

}  // namespace npukit::prof
