// Chrome Trace Event Format export: loads in Perfetto UI, chrome://tracing and speedscope.
// Layout (mirrors torch_npu's timeline), per rank r on device d, ordered by rank:
//
//   process "Rank r CANN"                         pid 30000000 + d; thread "Host thread":
//                                                 one slice per host launch call
//   process "Rank r Ascend Hardware (device d)"   pid 10000000 + d; thread "Stream <id>",
//                                                 tid = stream: one slice per task; counters
//                                                 (clock, power, temperature, HBM in use, HBM
//                                                 and HCCS bandwidth)
//   process "Rank r Overlap Analysis"             pid 20000000 + d; threads Computing,
//                                                 Communication, Communication(Not Overlapped),
//                                                 Free, Steps
//   flows "HostToDevice" (cat HostToDevice, id = connectionId): s at the launch call's start,
//   f with bp "e" at the start of the task it launched; both ends lie on a slice of their track.
//
// Times: ts and dur are microseconds relative to otherData.baseTimeNanoseconds (Kineto style),
// derived from integer ns so that ts + dur, added in double precision as importers do, is
// exactly the end's ts: slices that nest (or follow each other) in ns still do for an importer.
// Zero-length items become thread-scoped instant events ("i"), never zero-length slices.
//
// Thread-safety: pure functions of the loaded data.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "profiler/analyze/profile_data.hpp"

namespace npukit::prof {

struct ChromeOptions {
  // Only tasks that start within these steps (inclusive, numbered from 1, per device's own step
  // windows), their launches, and the overlap, steps and counters of that time.
  std::optional<std::pair<int64_t, int64_t>> steps;
  std::set<int> ranks;  // only these ranks; empty: all
};

// What `export` writes when no --steps is given: every step of a run of at most kDefaultSteps
// steps, otherwise kDefaultSteps steps after the first (warm-up) one: a trace a browser opens.
inline constexpr int64_t kDefaultSteps = 3;
std::optional<std::pair<int64_t, int64_t>> default_steps(const ProfileData& data);

// `data` must be loaded with LoadOptions{.launches = true, .counters = true}. InvalidArgument
// when the options name steps or ranks the recording does not hold.
Result<nlohmann::json> chrome_trace(const ProfileData& data, const ChromeOptions& options = {});
Status write_chrome_trace(const nlohmann::json& trace, const std::string& file);

inline constexpr int64_t kHardwarePidBase = 10000000;
inline constexpr int64_t kOverlapPidBase = 20000000;
inline constexpr int64_t kHostPidBase = 30000000;

}  // namespace npukit::prof
