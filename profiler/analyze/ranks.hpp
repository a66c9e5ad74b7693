// Ranks against each other: per-rank step rows and the straggler verdict, read by the slow_rank
// rule and by every renderer.
#pragma once

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "profiler/analyze/report_model.hpp"

namespace npukit::prof {

// One row per device of the report's step rows, means over its steps.
std::vector<RankRow> rank_rows(const Report& report);

// The rank whose own work (RankRow::work) is furthest above the median of the other ranks', and
// the phase of its step where most of the difference lies. Ranks as slow as it (critical_ranks:
// own work within 1% of the most; a pipeline's heaviest stage in every data-parallel replica) are
// stragglers with it, when they are fewer than half the ranks: the baseline is then the median
// of the ranks that are not.
struct StragglerVerdict {
  int index = -1;            // into the rows; -1 with fewer than two ranks
  std::vector<int> tied;     // into the rows: the ranks as slow as `index`, in row order (it is not among them)
  double excess_ns = 0;      // its work minus the others' median, per step
  double baseline_ns = 0;    // the others' median work per step
  std::string phase;         // "computing", "waiting for input", "idle between tasks"
  double phase_excess_ns = 0;
  bool slow = false;         // excess >= straggler_threshold() of the baseline
};
StragglerVerdict straggler(const std::vector<RankRow>& ranks);
// Whether a rank other than the one on `device` is a straggler (another cause the others wait for).
bool straggler_apart_from(const std::vector<RankRow>& ranks, int device);
// Each device's first step and how many it recorded; a device's first step is its warm-up (its
// compiles, first allocations, a slow host's first input twice as slow), left out of per-step
// figures when later steps were recorded, as npu-run's step time and the diagnosis truth do.
using FirstSteps = std::map<int, std::pair<int64_t, int>>;  // device -> (its first step, its steps)
FirstSteps first_steps(const Report& r);
bool is_warm_up(const FirstSteps& first, const StepRow& s);
// The rank the others wait for: the most own work (RankRow::work). Its step is its work plus its
// waits, so what it waits in (a pipeline's receives, collectives) is the step's, not another
// rank's slowness. `ranks` must not be empty.
const RankRow& critical_rank(const std::vector<RankRow>& ranks);
// Every rank whose own work is within 1% of the critical rank's (all of a balanced job's), in row order.
std::vector<const RankRow*> critical_ranks(const std::vector<RankRow>& ranks);

// "rank 2 (device 2)", or with ties "rank 3 (device 3) and rank 7 (device 7)".
std::string straggler_label(const ReportHeader& header, const std::vector<RankRow>& ranks, const StragglerVerdict& v);

// Ranks recorded on several hosts: the host whose ranks' median own work is furthest above the
// median of the other hosts' medians, and the phase where most of the difference lies.
struct HostVerdict {
  std::string host;           // the slowest host; "" unless the report holds ranks of two or more hosts
  // Every slow host, the slowest first (each at least the threshold over the median of the others);
  // `ranks`, `work_ns` and `excess_ns` are theirs, against the hosts that are not slow.
  std::vector<std::string> slow_hosts;
  std::vector<int> ranks;     // their ranks
  double work_ns = 0;         // its ranks' median own work per step
  double excess_ns = 0;       // that minus the other hosts' median
  double baseline_ns = 0;
  std::string phase;
  double phase_excess_ns = 0;
  bool slow = false;          // excess >= straggler_threshold() of the baseline
  // "c-2, c-1": the slow hosts, the slowest first.
  std::string slow_host_names() const {
    std::string out;
    for (const std::string& h : slow_hosts) out += (out.empty() ? "" : ", ") + h;
    return out;
  }
  bool is_slow(const std::string& h) const {
    return slow && std::find(slow_hosts.begin(), slow_hosts.end(), h) != slow_hosts.end();
  }
};
HostVerdict slow_host_verdict(const Report& report);
double straggler_threshold();  // 0.05

}  // namespace npukit::prof
