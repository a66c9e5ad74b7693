#include "profiler/analyze/summary.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace npukit::prof {

namespace {
constexpr std::size_t kSlowestSteps = 5;
}

double nearest_rank(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(std::lround(q * static_cast<double>(v.size() - 1)))];
}

StepSummary summarize_steps(const Report& r) {
  StepSummary s;
  std::map<int64_t, const StepRow*> longest;  // per step, its slowest device's row
  double step = 0, computing = 0, exposed = 0, free = 0, preparing = 0;
  for (const StepRow& row : r.steps) {
    const StepRow*& l = longest[row.step];
    if (!l || row.b.step > l->b.step) l = &row;
    step += static_cast<double>(row.b.step), computing += static_cast<double>(row.b.computing);
    exposed += static_cast<double>(row.b.comm_not_overlapped), free += static_cast<double>(row.b.free);
    preparing += static_cast<double>(row.b.preparing);
  }
  if (longest.empty()) return s;
  std::vector<double> times;
  std::vector<SlowStep> all;
  for (const auto& [n, row] : longest) {
    times.push_back(static_cast<double>(row->b.step));
    all.push_back({n, row->device, row->b});
  }
  s.steps = static_cast<int>(times.size());
  s.p50_ns = nearest_rank(times, 0.5), s.p95_ns = nearest_rank(times, 0.95);
  std::stable_sort(all.begin(), all.end(), [](const SlowStep& a, const SlowStep& b) { return a.b.step > b.b.step; });
  s.max_ns = static_cast<double>(all.front().b.step), s.max_step = all.front().step;
  s.steps_per_s = s.p50_ns > 0 ? 1e9 / s.p50_ns : 0;
  all.resize(std::min(all.size(), kSlowestSteps));
  s.slowest = std::move(all);
  if (step > 0) {
    s.computing_pct = 100 * computing / step, s.comm_exposed_pct = 100 * exposed / step;
    s.idle_pct = 100 * free / step, s.idle_before_first_task_pct = 100 * preparing / step;
  }
  return s;
}

}  // namespace npukit::prof
