// Plain-language findings: each rule looks at the report's numbers, and when it fires says one
// sentence with the numbers behind it (also listed by name, with units, for JSON).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "profiler/analyze/findings_internal.hpp"
#include "profiler/analyze/ranks.hpp"
#include "profiler/analyze/report_build.hpp"
#include "profiler/analyze/rules.hpp"

namespace npukit::prof {

namespace {

// Thresholds of the rules.
constexpr double kStarvationShare = 0.15;      // idle lead of a step before its first task
constexpr double kExposedCommShare = 0.10;     // communication not overlapped, share of step time
constexpr double kMemoryBoundIntensity = 10;   // FLOP per input byte, far below any cube ridge point
constexpr double kMemoryBoundMinRatio = 3;     // percent of kernel time for an op to matter
constexpr double kChurnAllocsPerStep = 100;
constexpr double kAllocCostShare = 0.005;      // host time in device malloc/free, share of step time
constexpr double kHbmNearCapacityShare = 0.90; // peak HBM in use, share of the device's HBM

// Each costed rule records what it measured in `measured` (ns per step) before its threshold.

// A slow host's ranks wait for their input because the host is slow (slow_host, one root cause):
// measured on the other hosts' ranks then. The host's device malloc/free calls and online compiles
// before a step's first task are allocator_cost's and shape_recompilation's: a direct allocator's
// step-start allocations were both findings at once (200% of the change in a diff).
void starvation(const ProfileData& d, const Report& r, const HostVerdict& slow, std::vector<Finding>& out, Measured& measured) {
  std::map<std::pair<int, int64_t>, Interval> windows;  // (device, step) -> its window
  for (const StepWindow& w : d.steps) windows[{w.device, w.step}] = w.window;
  const std::map<int, Intervals> host_work = allocator_and_compile_spans(d);
  double step = 0, lead = 0, idle = 0, n = 0;
  std::map<int64_t, double> last_fed;  // per step: the longest any rank waited for its input
  std::map<int64_t, double> critical_lead;  // per step: the critical rank's own wait
  const int critical = r.ranks.empty() ? -1 : critical_rank(r.ranks).device;
  const auto first = first_steps(r);
  for (const StepRow& s : r.steps) {
    if (slow.is_slow(r.header.host_of(s.device)) || is_warm_up(first, s)) continue;
    double waiting = static_cast<double>(s.b.preparing);
    auto w = windows.find({s.device, s.step});
    auto h = host_work.find(s.device);
    if (w != windows.end() && h != host_work.end()) {
      waiting -= static_cast<double>(total(clip(h->second, {w->second.start, w->second.start + s.b.preparing})));
    }
    step += static_cast<double>(s.b.step), lead += waiting, idle += static_cast<double>(s.b.free);
    last_fed[s.step] = std::max(last_fed[s.step], waiting);
    if (s.device == critical) critical_lead[s.step] = waiting;
    n += 1;
  }
  if (n == 0) return;
  // Ranks joined by collectives wait there for the last one fed (one host's input pipeline feeds
  // its ranks one after another): each step costs its longest wait, which the average over the
  // ranks understated by half (80.0 ms for a true 182.2), the rest read as exposed communication.
  // Ranks that run free each lose their own.
  double cost = lead / n;
  if (!r.comm_types.empty()) {
    cost = 0;
    for (const auto& [k, ns] : last_fed) cost += ns / static_cast<double>(last_fed.size());
  }
  measured["data_loader_starvation"] = cost;
  const double step_avg = step / n;
  if (step <= 0 || cost / step_avg < kStarvationShare) return;
  // Said as the ranks' average when they wait alike (one loader each); else as the last one fed.
  const bool alike = cost - lead / n <= 0.05 * cost;
  std::string how = alike ? "on average " + ms(lead / n) + " of each " + ms(step_avg) + " step pass"
                          : "the last rank fed waits " + ms(cost) + " of each " + ms(step_avg) + " step (the ranks on average " +
                                ms(lead / n) + "; the others then wait for it in their collectives)";
  Finding f{"data_loader_starvation",
            "AI cores idle " + pct(cost / step_avg) + " of each step waiting for input: " + how +
                " before the step's first task (" + std::to_string(static_cast<int64_t>(n)) + " device-steps).",
            {{"idle_before_first_task_percent", 100 * cost / step_avg},
             {"idle_before_first_task_avg_ms", lead / n / 1e6},
             {"idle_before_first_task_last_fed_ms", cost / 1e6},
             {"step_avg_ms", step_avg / 1e6},
             {"free_percent", 100 * idle / step}}};
  f.cost_ns_per_step = cost, f.step_ns = step_avg;
  out.push_back(std::move(f));
  // What the rank the others wait for (exposed_communication measures on it) spent in its
  // collectives waiting for ranks fed later than itself: this finding's time, not communication's.
  double waited = 0;
  for (const auto& [k, own] : critical_lead) waited += (last_fed[k] - own) / static_cast<double>(critical_lead.size());
  if (!r.comm_types.empty()) measured[kInputWaitInCommunication] = waited;
}

// Measured on the rank the others wait for (the most own work): what the other ranks spend in
// communication beyond it is waiting for that rank (slow_rank), not transfer time.
void exposed_communication(const Report& r, std::vector<Finding>& out, Measured& measured) {
  if (r.ranks.empty()) return;
  const RankRow& critical = critical_rank(r.ranks);
  // What slow_link's collectives add on their devices (a slow pipeline link's is in the receives,
  // below): at a stage's tail more than their cost to the step, and all of it not the job's own
  // exposure (a degraded dp link's 54.8 ms per step on its stage would read as 67.6 ms exposed).
  auto link = measured.find(kSlowLinkOnDevice);
  const double slow_collectives = link == measured.end() ? 0 : std::max(0.0, link->second);
  // What a slow link adds is that rule's cost (slow_link runs first), not this one's; nor are the
  // rank's pipeline receives, where stages wait for each other (pipeline_bubble).
  // The share of communication exposed is taken on the same terms: a slow link's added time and
  // the receives are out of the whole too (a degraded link read "20.5% of all communication time is
  // exposed" where the same job without the fault exposes 98.3%).
  // Nor is its wait for ranks fed later than itself (data_loader_starvation's, when it fired).
  auto input = measured.find(kInputWaitInCommunication);
  const double input_wait = input == measured.end() ? 0 : input->second;
  double step = critical.step;
  double exposed = std::max(0.0, critical.comm_exposed - slow_collectives - critical.bubble - input_wait);
  double comm = std::max(exposed, critical.communication - slow_collectives - critical.bubble - input_wait);
  measured["unoverlapped_communication"] = exposed;
  if (step <= 0 || exposed / step < kExposedCommShare) return;
  Finding f{"unoverlapped_communication",
                 "Communication is not hidden behind computation: " + pct(exposed / step) + " of step time (" +
                     ms(exposed) + " per step) is communication with no compute running" +
                     // Beside a slow link, the share of communication exposed is not this job's own: its
                     // collectives stretch on the other ranks too, so the sentence leaves it out.
                     (slow_collectives > 0 ? " beyond what the slow link adds."
                                           : "; " + pct(exposed / comm) + " of all communication time is exposed."),
                 {{"not_overlapped_percent_of_step", 100 * exposed / step},
                  {"not_overlapped_avg_ms", exposed / 1e6}}};
  if (slow_collectives <= 0) f.numbers.push_back({"exposed_percent_of_communication", 100 * exposed / comm});
  f.cost_ns_per_step = exposed, f.step_ns = step;
  out.push_back(std::move(f));
}

void memory_bound(const Report& r, std::vector<Finding>& out) {
  std::vector<const OpNameRow*> ops;
  for (const OpNameRow& op : r.op_names) {
    if (op.core_type == "AI_CPU" || op.input_bytes <= 0 || op.stats.count == 0) continue;
    double intensity = op.flops / static_cast<double>(op.stats.count) / op.input_bytes;
    if (intensity < kMemoryBoundIntensity && op.stats.ratio >= kMemoryBoundMinRatio) ops.push_back(&op);
  }
  if (ops.empty()) return;
  double share = 0;
  std::string list;
  Finding f{"memory_bound_ops", "", {}};
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const OpNameRow& op = *ops[i];
    double intensity = op.flops / static_cast<double>(op.stats.count) / op.input_bytes;
    double gbps = op.input_bytes / op.stats.avg;  // bytes/ns == GB/s
    share += op.stats.ratio;
    if (i < 3) {
      list += (i ? "; " : "") + op.name + " [" + op.shapes + "] (" + fmt("%.2f FLOP/byte", intensity) + ", " +
              fmt("%.1f%% of kernel time", op.stats.ratio) + ", reads inputs at " + fmt("%.0f GB/s", gbps) + ")";
    }
    f.numbers.push_back({op.name + " [" + op.shapes + "] flop_per_byte", intensity});
    f.numbers.push_back({op.name + " [" + op.shapes + "] percent_of_kernel_time", op.stats.ratio});
  }
  f.text = std::to_string(ops.size()) + " memory-bound op(s) take " + fmt("%.1f%%", share) +
           " of kernel time (arithmetic intensity below " + fmt("%.0f", kMemoryBoundIntensity) + " FLOP per input byte): " +
           list + ".";
  f.numbers.insert(f.numbers.begin(), {"percent_of_kernel_time", share});
  out.push_back(std::move(f));
}

void aicpu(const Report& r, std::vector<Finding>& out, Measured& measured) {
  if (!r.steps.empty()) measured["aicpu_fallback"] = 0;  // fires on any AI CPU op
  if (r.aicpu_ops.empty()) return;
  double share = 0, total = 0;
  std::string list;
  Finding f{"aicpu_fallback", "", {}};
  for (std::size_t i = 0; i < r.aicpu_ops.size(); ++i) {
    const OpNameRow& op = r.aicpu_ops[i];
    share += op.stats.ratio, total += static_cast<double>(op.stats.total);
    if (i < 3) {
      list += (i ? "; " : "") + op.name + " (" + op.op_type + ", " + std::to_string(op.stats.count) + " calls, " +
              ms(static_cast<double>(op.stats.total)) + ", " + fmt("%.1f%% of kernel time", op.stats.ratio) + ")";
    }
    f.numbers.push_back({op.name + " total_ms", static_cast<double>(op.stats.total) / 1e6});
  }
  f.text = std::to_string(r.aicpu_ops.size()) + " op(s) fell back to AI CPU (no AI Core kernel), " + ms(total) + " in all, " +
           fmt("%.1f%%", share) + " of kernel time: " + list + ".";
  f.numbers.insert(f.numbers.begin(), {{"total_ms", total / 1e6}, {"percent_of_kernel_time", share}});
  double step = 0;
  for (const StepRow& s : r.steps) step += static_cast<double>(s.b.step);
  if (!r.steps.empty()) {
    auto n = static_cast<double>(r.steps.size());
    f.cost_ns_per_step = total / n, f.step_ns = step / n;
    measured["aicpu_fallback"] = total / n;
  }
  out.push_back(std::move(f));
}

void churn(const ProfileData& d, const Report& r, std::vector<Finding>& out) {
  std::map<int64_t, int> steps;
  for (const StepRow& s : r.steps) steps[s.step] = 1;
  if (d.alloc_events == 0 || steps.empty()) return;
  double per_step = static_cast<double>(d.alloc_events) / static_cast<double>(steps.size());
  if (per_step < kChurnAllocsPerStep) return;
  out.push_back({"allocator_churn",
                 "HBM allocator churn: " + fmt("%.0f", per_step) + " allocations per step across the node (" +
                     std::to_string(d.alloc_events) + " in " + std::to_string(steps.size()) +
                     " steps); a caching allocator or preallocated buffers avoid paying for each one.",
                 {{"allocations_per_step", per_step}, {"allocations", static_cast<double>(d.alloc_events)}}});
}

// What device malloc/free cost each step: on each device, the host time of the calls inside its
// step windows while the device sat idle (a call the device works through costs nothing), and the
// device's wait for its next launch after a call that left it idle (allocator_span), averaged over
// its steps; the costliest device speaks for the node.
void allocator_cost(const ProfileData& d, std::vector<Finding>& out, Measured& measured) {
  struct PerDevice {
    std::vector<Interval> calls;
    int64_t host_ns = 0, count = 0, step_ns = 0, steps = 0, idle_ns = 0;
  };
  std::map<int, PerDevice> devices;
  for (const StepWindow& w : d.steps) {
    PerDevice& p = devices[w.device];
    p.step_ns += w.window.end - w.window.start, ++p.steps;
  }
  std::set<std::pair<int, int64_t>> flushing;  // (device, ts): hbm_fragmentation's calls
  for (const auto& [device, spans] : cache_flushes(d)) {
    for (const HostSpan& s : spans) flushing.insert({device, s.span.start});
  }
  for (const ProfileData::AllocCall& c : d.alloc_calls) {
    if (flushing.count({c.device, c.ts})) continue;
    for (const StepWindow& w : d.steps) {
      if (w.device != c.device || c.ts < w.window.start || c.ts >= w.window.end || c.host_ns <= 0) continue;
      PerDevice& p = devices[c.device];
      p.calls.push_back(allocator_span(busy_on(d, c.device), c));
      p.host_ns += c.host_ns, ++p.count;
      break;
    }
  }
  for (auto& [device, p] : devices) p.idle_ns = total(subtract(union_of(p.calls), busy_on(d, device)));
  auto worst = std::max_element(devices.begin(), devices.end(), [](const auto& a, const auto& b) {
    return a.second.idle_ns * b.second.steps < b.second.idle_ns * a.second.steps;
  });
  if (worst == devices.end() || worst->second.steps == 0) return;
  const PerDevice& p = worst->second;
  double steps = static_cast<double>(p.steps);
  double per_step = static_cast<double>(p.idle_ns) / steps, step = static_cast<double>(p.step_ns) / steps;
  measured["allocator_cost"] = per_step;
  if (p.count == 0) return;
  if (per_step < kAllocCostShare * step) return;
  double calls = static_cast<double>(p.count) / steps, host = static_cast<double>(p.host_ns) / steps;
  // Fewer calls than steps (a caching allocator growing its pool): say how many, not "0 per step".
  std::string how_many = calls >= 1 ? fmt("%.0f malloc/free calls per step take ", calls)
                                    : std::to_string(p.count) + " malloc/free call(s) in " + std::to_string(p.steps) +
                                          " steps take, per step, ";
  auto allocator = d.job_settings.find("allocator");
  const bool caching = allocator != d.job_settings.end() && allocator->second == "caching";
  std::string why = caching ? "the caching allocator calls the runtime only to grow its pool (a new segment), "
                              "and each such call pays the runtime's cost."
                            : "each call pays the runtime's cost (a non-caching allocator), a caching allocator "
                              "reuses freed blocks instead.";
  Finding f{"allocator_cost",
            "Device memory allocation costs " + ms(per_step) + " per step (" + pct(per_step / step) +
                " of the step) on device " + std::to_string(worst->first) + ": " + how_many + ms(host) +
                " of host time, " + ms(per_step) + " of it with the device idle; " + why,
            {{"cost_ms_per_step", per_step / 1e6},
             {"host_ms_per_step", host / 1e6},
             {"percent_of_step", 100 * per_step / step},
             {"calls_per_step", calls}}};
  f.cost_ns_per_step = per_step, f.step_ns = step;
  out.push_back(std::move(f));
}

// HBM near capacity: no headroom for a larger batch, and a caching allocator that needs a block
// its cache does not hold flushes the cache and re-allocates from the device (allocator_cost
// counts what that costs).
void hbm_near_capacity(const Report& r, std::vector<Finding>& out) {
  const MemoryRow* fullest = nullptr;
  for (const MemoryRow& m : r.memory) {
    if (m.capacity_bytes <= 0) continue;
    auto share = [](const MemoryRow& row) { return static_cast<double>(row.peak_bytes) / static_cast<double>(row.capacity_bytes); };
    if (!fullest || share(m) > share(*fullest)) fullest = &m;
  }
  if (!fullest) return;
  double share = static_cast<double>(fullest->peak_bytes) / static_cast<double>(fullest->capacity_bytes);
  if (share < kHbmNearCapacityShare) return;
  constexpr double kGiB = 1 << 30;
  out.push_back({"hbm_near_capacity",
                 "HBM near capacity: device " + std::to_string(fullest->device) + " peaked at " +
                     fmt("%.1f", static_cast<double>(fullest->peak_bytes) / kGiB) + " of " +
                     fmt("%.1f GiB", static_cast<double>(fullest->capacity_bytes) / kGiB) + " (" + pct(share) +
                     "); a larger batch or a longer sequence will not fit, and a caching allocator short of a block "
                     "empties its cache and allocates from the device again (allocator_cost shows what that costs).",
                 {{"peak_gib", static_cast<double>(fullest->peak_bytes) / kGiB},
                  {"capacity_gib", static_cast<double>(fullest->capacity_bytes) / kGiB},
                  {"percent_of_capacity", 100 * share},
                  {"device", static_cast<double>(fullest->device)}}});
}

void recording_quality(const Report& r, std::vector<Finding>& out) {
  const ReportHeader& h = r.header;
  if (!h.complete) {
    std::string damage;
    for (const std::string& d : h.damage) damage += (damage.empty() ? "" : "; ") + d;
    std::string why = !damage.empty()         ? "the database is damaged (" + damage + ")"
                      : h.node_lost.empty() ? "the recorder stopped before finalizing"
                                            : "the node went away during the recording (" + h.node_lost + ")";
    out.push_back({"incomplete_recording",
                   "The recording is incomplete: " + why + ", so this report covers the " + std::to_string(h.tasks) +
                       (!damage.empty()        ? " tasks it could read."
                        : h.node_lost.empty() ? " tasks committed until then (derived tables recomputed)."
                                              : " tasks recorded until then."),
                   {{"tasks", static_cast<double>(h.tasks)}}});
  }
  if (h.events_missed > 0 || h.lossless_lost) {
    out.push_back({"dropped_events",
                   "The recording missed " + std::to_string(h.events_missed) + " of " +
                       std::to_string(h.events_missed + h.events_recorded) +
                       " events (the recorder fell behind the node); counts and totals here undercount.",
                   {{"events_missed", static_cast<double>(h.events_missed)},
                    {"events_recorded", static_cast<double>(h.events_recorded)}}});
  }
}

// Severity and action from the rule table; costliest first, then the rest by severity.
void rank_findings(std::vector<Finding>& findings) {
  for (Finding& f : findings) {
    const RuleDef* rule = find_rule(f.id);
    Severity s = rule ? rule->severity : Severity::kInfo;
    if (f.cost_ns_per_step && f.step_ns > 0) s = severity_of_share(*f.cost_ns_per_step / f.step_ns);
    f.severity = std::string(severity_name(s));
    f.action = rule ? std::string(rule->action) : "";
  }
  auto rank = [](const std::string& s) { return s == "critical" ? 2 : s == "warning" ? 1 : 0; };
  std::stable_sort(findings.begin(), findings.end(), [&](const Finding& a, const Finding& b) {
    double ca = a.cost_ns_per_step.value_or(-1), cb = b.cost_ns_per_step.value_or(-1);
    if (ca != cb) return ca > cb;
    return rank(a.severity) > rank(b.severity);
  });
}

}  // namespace

double input_bytes(const std::string& shapes, const std::string& dtypes) {
  static const std::map<std::string, double> kSize = {
      {"FLOAT16", 2}, {"BF16", 2},  {"BFLOAT16", 2}, {"FLOAT", 4}, {"FLOAT32", 4}, {"DOUBLE", 8}, {"INT64", 8},
      {"INT32", 4},   {"INT16", 2}, {"INT8", 1},     {"UINT8", 1}, {"BOOL", 1},    {"UINT64", 8}, {"UINT32", 4}};
  std::istringstream sh(shapes), dt(dtypes);
  std::string shape, dtype;
  double total = 0;
  while (std::getline(sh, shape, ';') && std::getline(dt, dtype, ';')) {
    auto size = kSize.find(dtype);
    if (size == kSize.end()) return 0;
    double elements = 1;
    std::istringstream dims(shape);
    std::string dim;
    while (std::getline(dims, dim, ',')) {
      if (dim.empty()) continue;
      double d = 0;  // a damaged database's shape: a dim that is not a number leaves the size unknown
      auto [end, ec] = std::from_chars(dim.data(), dim.data() + dim.size(), d);
      if (ec != std::errc() || end != dim.data() + dim.size() || !std::isfinite(d) || d < 0) return 0;
      elements *= d;
    }
    total += elements * size->second;
  }
  return total;
}

double latency_hops(const std::string& op, const std::string& algorithm, int ranks) {
  const double n = std::max(ranks, 1);
  const bool all_reduce = op.find("allReduce") != std::string::npos;
  if (algorithm != "RING" || op.find("alltoall") != std::string::npos) return all_reduce ? 2 : 1;
  if (all_reduce) return 2 * (n - 1);
  if (op.find("broadcast") != std::string::npos) return n;
  return n - 1;
}

void add_findings(const ProfileData& data, Report& r) {
  recording_quality(r, r.findings);
  const HostVerdict slow_host_of_run = slow_host_verdict(r);  // read by three rules
  starvation(data, r, slow_host_of_run, r.findings, r.measured_cost_ns_per_step);
  const std::vector<PointToPoint> stage_links = slow_point_to_point(data);  // read by three rules
  const double stage_links_cost = point_to_point_cost(data, stage_links);
  slow_link(data, r, stage_links, r.findings, r.measured_cost_ns_per_step);
  // A slow collective at its stage's tail costs the step in the other stages' receives: slow_link's.
  auto at_tail = r.measured_cost_ns_per_step.find(kSlowLinkAtTail);
  const double links_in_receives = stage_links_cost + (at_tail == r.measured_cost_ns_per_step.end() ? 0 : at_tail->second);
  pipeline_bubble(data, r, links_in_receives, r.findings, r.measured_cost_ns_per_step);
  exposed_communication(r, r.findings, r.measured_cost_ns_per_step);
  aicpu(r, r.findings, r.measured_cost_ns_per_step);
  memory_bound(r, r.findings);
  churn(data, r, r.findings);
  allocator_cost(data, r.findings, r.measured_cost_ns_per_step);
  throttling(data, r, r.findings, r.measured_cost_ns_per_step);
  slow_host(slow_host_of_run, r.findings, r.measured_cost_ns_per_step);
  slow_rank(data, r, slow_host_of_run, r.findings, r.measured_cost_ns_per_step);
  host_gaps(data, r.findings, r.measured_cost_ns_per_step);
  shape_recompilation(data, r.findings, r.measured_cost_ns_per_step);
  hbm_fragmentation(data, r.findings, r.measured_cost_ns_per_step);
  hbm_near_capacity(r, r.findings);
  unfused_kernels(data, r, r.findings, r.measured_cost_ns_per_step);
  rank_findings(r.findings);
}

}  // namespace npukit::prof
