// Shared by the rule files (findings*.cpp): number formatting for finding texts and the
// measured-cost map each costed rule fills before its threshold.
#pragma once

#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "profiler/analyze/findings_links.hpp"
#include "profiler/analyze/profile_data.hpp"
#include "profiler/analyze/ranks.hpp"
#include "profiler/analyze/report_model.hpp"

namespace npukit::prof {

inline std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}
inline std::string ms(double ns) { return fmt("%.3f ms", ns / 1e6); }
inline std::string pct(double fraction) { return fmt("%.1f%%", fraction * 100); }

// How many steps each device recorded.
inline std::map<int, int> steps_per_device(const ProfileData& d) {
  std::map<int, int> steps;
  for (const StepWindow& w : d.steps) ++steps[w.device];
  return steps;
}

// Rule id -> what it measured, ns per step, whether it fired or not; and parts of a rule's
// measure that a later rule must not count again, under "<rule>.<part>":
using Measured = std::map<std::string, double>;
// what data_loader_starvation found inside the critical rank's collectives (its wait for ranks fed later)
inline constexpr const char* kInputWaitInCommunication = "data_loader_starvation.in_communication";
// slow_link's cost when all of it is at its devices' tail: in the other stages' waits (pipeline_bubble)
inline constexpr const char* kSlowLinkAtTail = "slow_link.at_tail";
// what slow_link's collectives add on their own devices, the step waiting or not (at a tail, more
// than its cost): not exposed communication of the job's own
inline constexpr const char* kSlowLinkOnDevice = "slow_link.on_device";

// The slow host's ranks are that finding's, not slow_rank's (`host`: slow_host_verdict).
void slow_rank(const ProfileData& d, const Report& r, const HostVerdict& host, std::vector<Finding>& out,
               Measured& measured);  // findings_ranks.cpp
// A cause the replay says costs the step less than this share of its own estimate: the step hides it.
inline constexpr double kHiddenShare = 0.5;
// How long a device's own work from `from` to `to` (recorded ns: outside its collectives) would
// take without the cause.
using ReplayWork = std::function<double(int device, int64_t from, int64_t to)>;
// How long a collective instance's transfer would take without the cause, from its recorded
// time (`call`: one member's record; `from`, `to`: a Send and its Receive's devices, else -1).
using ReplayTransfer = std::function<double(const CollectiveRecord& call, int from, int to, double recorded_ns)>;
// How much sooner per step (after each device's warm-up) the job would end with its devices' own
// work as `work` says and its transfers as `transfer` says (either empty: as recorded): the
// collectives replayed (straggler_replay.cpp). nullopt when they cannot be: no steps after a
// warm-up, no collectives, a Send or Receive whose other end was not recorded, or calls that
// cannot be ordered.
std::optional<double> replay_cost(const ProfileData& d, const ReplayWork& work, const ReplayTransfer& transfer = {});
// The same with each given device's own work times its pace (a straggler at the others' pace).
inline std::optional<double> straggler_replay_cost(const ProfileData& d, const std::map<int, double>& pace) {
  return replay_cost(d, [&pace](int device, int64_t from, int64_t to) {
    auto p = pace.find(device);
    return static_cast<double>(to - from) * (p == pace.end() ? 1.0 : p->second);
  });
}
void slow_host(const HostVerdict& v, std::vector<Finding>& out, Measured& measured);  // findings_ranks.cpp
void throttling(const ProfileData& d, const Report& r, std::vector<Finding>& out, Measured& measured);  // findings_clock.cpp
void host_gaps(const ProfileData& d, std::vector<Finding>& out, Measured& measured);  // findings_host.cpp
void unfused_kernels(const ProfileData& d, const Report& r, std::vector<Finding>& out, Measured& measured);  // findings_fusion.cpp
// `stage_links`: the slow links between pipeline stages (slow_point_to_point, findings_links.hpp),
// found once for the three rules that read them; `stage_links_cost` what they add per step
// (point_to_point_cost): pipeline_bubble and unoverlapped_communication leave it out.
void slow_link(const ProfileData& d, const Report& r, const std::vector<PointToPoint>& stage_links,
               std::vector<Finding>& out, Measured& measured);  // findings_comm.cpp
void pipeline_bubble(const ProfileData& d, const Report& r, double stage_links_cost, std::vector<Finding>& out,
                     Measured& measured);  // findings_pipeline.cpp
// Host work that holds back the launches (an online compile, an allocator's cache flush): on each
// device, in the steps after the first (the warm-up), the time the device sat idle during it.
struct HostSpan {
  Interval span;
  const NodeEvent* event = nullptr;
};
struct HostStall {
  double idle_ns = 0, step_ns = 0;
  int steps = 0, count = 0;  // steps after the first; spans that started in them
  const NodeEvent* example = nullptr;
};
std::map<int, HostStall> idle_during(const ProfileData& d, const std::map<int, std::vector<HostSpan>>& spans);
const std::pair<const int, HostStall>* costliest(const std::map<int, HostStall>& stalls);  // nullptr: no steps
const Intervals& busy_on(const ProfileData& d, int device);  // compute and communication, merged
void shape_recompilation(const ProfileData& d, std::vector<Finding>& out, Measured& measured);  // findings_stalls.cpp
void hbm_fragmentation(const ProfileData& d, std::vector<Finding>& out, Measured& measured);  // findings_stalls.cpp
// Per device, the allocator's cache flushes (EMU_EVENT cache_flush) as host spans (findings_stalls.cpp).
std::map<int, std::vector<HostSpan>> cache_flushes(const ProfileData& d);
// Per device, the host's online compiles (EMU_EVENT op_compile), merged (findings_stalls.cpp).
std::map<int, Intervals> compile_spans(const ProfileData& d);
// Per device, the host's device malloc/free calls and online compiles, merged: idle device time
// under them is allocator_cost's and shape_recompilation's, not another rule's (findings_host.cpp).
std::map<int, Intervals> allocator_and_compile_spans(const ProfileData& d);
// A device malloc/free call's span on the device's timeline: the call, and when the device sat
// idle from its end until a task started within kRelaunchNs, that wait too (a free drains the
// device first, so the next launch after it finds the device idle).
inline constexpr int64_t kRelaunchNs = 50'000;
Interval allocator_span(const Intervals& busy, const ProfileData::AllocCall& c);

}  // namespace npukit::prof
