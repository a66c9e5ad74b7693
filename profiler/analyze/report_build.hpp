// Builds the report document (report_model.hpp) from a loaded recording (profile_data.hpp).
//
// Which tasks count: every task, or with a step filter only tasks that start inside that
// step's window on their own device. Op tables cover kernels (COMPUTE_TASK_INFO rows); top
// tasks cover every task; "wait" is the gap since the previous task on the same stream.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "profiler/analyze/profile_data.hpp"
#include "profiler/analyze/report_model.hpp"
#include "telemetry/collective_traffic.hpp"

namespace npukit::prof {

struct ReportOptions {
  int top = 10;
  std::optional<int64_t> step;
};

// InvalidArgument when the step filter names a step the recording does not hold.
Result<Report> build_report(const ProfileData& data, const ReportOptions& options);

// Whether a task (or collective) starting at `start` on `device` is in the selected step.
class StepFilter {
 public:
  StepFilter(const ProfileData& data, std::optional<int64_t> step);
  bool contains(int device, int64_t start) const;
  bool empty() const { return !all_ && windows_.empty(); }

 private:
  bool all_;
  std::map<int, Interval> windows_;
};

// Indexes into data.tasks selected by the step filter, in globalTaskId order.
Result<std::vector<std::size_t>> select_tasks(const ProfileData& data, std::optional<int64_t> step);
// Per task (same order as data.tasks): gap since the previous task on its stream, ns (0 first).
std::vector<int64_t> wait_times(const ProfileData& data);
// Bytes of one call's inputs from msprof-style shapes ("8,16;16") and dtypes ("FLOAT16;INT64");
// 0 when a dtype is unknown.
double input_bytes(const std::string& shapes, const std::string& dtypes);
// nccl-tests' factors and HCCL's split across hosts (telemetry/collective_traffic.hpp).
using telemetry::algbw_size_factor;
using telemetry::busbw_factor;
using telemetry::hierarchical_shares;
using telemetry::HierarchicalShares;
using telemetry::is_point_to_point;
using telemetry::is_receive;
// The link latencies a collective pays one after another (the alpha terms of its alpha-beta
// time) on `algorithm` ("RING", else a mesh): ring AllReduce 2(n-1), ring ReduceScatter and
// AllGather n-1, ring Broadcast n; mesh AllReduce 2 (reduce-scatter, then all-gather); every other
// mesh collective and AlltoAll (every pair at once) 1.
double latency_hops(const std::string& op_type, const std::string& algorithm, int ranks);

// Adds the plain-language findings (findings.cpp).
void add_findings(const ProfileData& data, Report& report);

}  // namespace npukit::prof
