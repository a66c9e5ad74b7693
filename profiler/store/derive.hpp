// Derived analysis for finalize (which stores it) and report.
//
//   - the main job: the job with the most recorded steps (ties: the lowest job id);
//   - step windows: EMU_STEP rows of the main job, per device;
//   - overlap: per device, compute vs communication intervals from TASK (intervals.hpp).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "profiler/store/intervals.hpp"
#include "profiler/store/sqlite_db.hpp"

namespace npukit::prof {

// Steps are numbered from 1 wherever npukit shows or takes one (npu-run's "step 3/20", reports,
// --step, --steps, traces, diffs, STEP_TIME and the CSV exports); EMU_STEP keeps the runtime's
// index, which counts from 0.
inline constexpr int64_t kFirstStep = 1;

struct StepWindow {
  int device = 0;
  int64_t step = kFirstStep;  // the step's number (from kFirstStep)
  Interval window;
};

// The main job's id, or nullopt when no step was recorded.
Result<std::optional<int64_t>> main_job(Db& db);
Result<std::vector<StepWindow>> load_step_windows(Db& db, int64_t job);

// Writes OVERLAP_ANALYSIS rows (ids dense from 0); returns the row count.
Result<uint64_t> write_overlap(Db& db, const std::map<int, Overlap>& overlap);

}  // namespace npukit::prof
