// The answer-first numbers every surface opens with (text summary, JSON "summary", HTML): step
// time percentiles, throughput, where the step goes, the slowest steps. Computed once here.
#pragma once

#include <cstdint>
#include <vector>

#include "profiler/analyze/report_model.hpp"

namespace npukit::prof {

struct SlowStep {
  int64_t step = 0;
  int device = 0;  // the device whose step was longest (a step is as long as its slowest device)
  StepBreakdown b;
};

struct StepSummary {
  int steps = 0;
  double p50_ns = 0, p95_ns = 0, max_ns = 0;  // over steps; a step's time is its slowest device's
  int64_t max_step = 0;
  double steps_per_s = 0;  // 1 / p50
  // Shares of all device-step time, percent.
  double computing_pct = 0, comm_exposed_pct = 0, idle_pct = 0, idle_before_first_task_pct = 0;
  std::vector<SlowStep> slowest;  // up to five, longest first
};

StepSummary summarize_steps(const Report& report);

// Nearest-rank quantile q in [0, 1] of `values` (0 when empty).
double nearest_rank(std::vector<double> values, double q);

}  // namespace npukit::prof
