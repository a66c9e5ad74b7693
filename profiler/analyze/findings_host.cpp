// Host-side rules: the device idle between tasks inside a step because the host had not launched
// the next one yet. Short gaps, one per op, are the launch rate (small kernels, launch-bound);
// long ones are the host doing something else (a sync and Python work, logging). Time the host
// spent in device malloc/free is allocator_cost's, and in online compiles shape_recompilation's
// (or a warm-up's): neither is counted here.
#include <algorithm>
#include <map>

#include "profiler/analyze/findings_internal.hpp"

namespace npukit::prof {

namespace {

constexpr int64_t kLongGapNs = 50'000;  // a launch takes a few us; a gap this long is host work
constexpr double kLaunchBoundShare = 0.05;
constexpr double kHostGapShare = 0.05;

struct Gaps {
  double short_ns = 0, long_ns = 0, step_ns = 0;
  int64_t short_count = 0, long_count = 0, longest = 0;
  int steps = 0;
  std::vector<int64_t> kernel_ns;  // kernels that started right after a short gap
};

// Per device: the idle gaps after each step's first task, without the host's malloc/free time.
std::map<int, Gaps> step_gaps(const ProfileData& d) {
  const std::map<int, Intervals> alloc = allocator_and_compile_spans(d);
  std::map<int, Gaps> out;
  for (const StepWindow& w : d.steps) {
    auto ov = d.overlap.find(w.device);
    if (ov == d.overlap.end()) continue;
    Intervals busy = clip(ov->second.busy, w.window);
    Gaps& g = out[w.device];
    g.step_ns += static_cast<double>(w.window.length()), ++g.steps;
    if (busy.empty()) continue;
    Intervals idle = subtract({{busy.front().start, w.window.end}}, busy);
    if (auto a = alloc.find(w.device); a != alloc.end()) idle = subtract(idle, a->second);
    for (const Interval& gap : idle) {
      bool host_work = gap.length() >= kLongGapNs;
      (host_work ? g.long_ns : g.short_ns) += static_cast<double>(gap.length());
      ++(host_work ? g.long_count : g.short_count);
      g.longest = std::max(g.longest, gap.length());
    }
  }
  return out;
}

const std::pair<const int, Gaps>* worst(const std::map<int, Gaps>& gaps, double Gaps::*field) {
  const std::pair<const int, Gaps>* best = nullptr;
  for (const auto& entry : gaps) {
    const Gaps& g = entry.second;
    if (g.steps == 0) continue;
    if (!best || g.*field / g.steps > best->second.*field / best->second.steps) best = &entry;
  }
  return best;
}

}  // namespace

Interval allocator_span(const Intervals& busy, const ProfileData::AllocCall& c) {
  Interval span{c.ts, c.ts + std::max<int64_t>(0, c.host_ns)};
  if (c.host_ns <= 0) return span;  // a caching allocator's hit or free: no runtime call, no drain
  // The first busy interval ending after the call: the device is idle at the call's end unless it
  // started by then.
  auto next = std::upper_bound(busy.begin(), busy.end(), span.end, [](int64_t t, const Interval& b) { return t < b.end; });
  if (next != busy.end() && next->start > span.end && next->start - span.end <= kRelaunchNs) span.end = next->start;
  return span;
}

std::map<int, Intervals> allocator_and_compile_spans(const ProfileData& d) {
  std::map<int, Intervals> out;
  for (const ProfileData::AllocCall& c : d.alloc_calls) out[c.device].push_back(allocator_span(busy_on(d, c.device), c));
  for (auto& [device, spans] : compile_spans(d)) out[device].insert(out[device].end(), spans.begin(), spans.end());
  for (auto& [device, list] : out) list = union_of(std::move(list));
  return out;
}

void host_gaps(const ProfileData& d, std::vector<Finding>& out, Measured& measured) {
  auto gaps = step_gaps(d);
  if (gaps.empty()) return;
  if (const auto* w = worst(gaps, &Gaps::short_ns)) {
    const Gaps& g = w->second;
    double n = g.steps, per_step = g.short_ns / n, step = g.step_ns / n;
    measured["launch_bound"] = per_step;
    if (step > 0 && per_step / step >= kLaunchBoundShare) {
      Finding f{"launch_bound",
                "Launch-bound: on device " + std::to_string(w->first) + " the AI cores wait for the host between tasks " +
                    fmt("%.0f", static_cast<double>(g.short_count) / n) + " times per step, " + ms(per_step) + " (" +
                    pct(per_step / step) + " of the step) in gaps under 50 us: its kernels finish faster than the host "
                    "dispatches and launches the next one.",
                {{"gaps_per_step", static_cast<double>(g.short_count) / n},
                 {"gap_ms_per_step", per_step / 1e6},
                 {"percent_of_step", 100 * per_step / step}}};
      f.cost_ns_per_step = per_step, f.step_ns = step;
      out.push_back(std::move(f));
    }
  }
  if (const auto* w = worst(gaps, &Gaps::long_ns)) {
    const Gaps& g = w->second;
    double n = g.steps, per_step = g.long_ns / n, step = g.step_ns / n;
    measured["host_launch_gaps"] = per_step;
    if (step > 0 && per_step / step >= kHostGapShare) {
      Finding f{"host_launch_gaps",
                "Host launch gaps: on device " + std::to_string(w->first) + " the AI cores sit idle mid-step " +
                    ms(per_step) + " per step (" + pct(per_step / step) + ") in " +
                    fmt("%.1f", static_cast<double>(g.long_count) / n) + " gap(s) of 50 us or more (longest " +
                    ms(static_cast<double>(g.longest)) + ") while the host launches nothing: host work between "
                    "launches (a sync such as loss.item(), logging, Python).",
                {{"gaps_per_step", static_cast<double>(g.long_count) / n},
                 {"gap_ms_per_step", per_step / 1e6},
                 {"longest_gap_ms", static_cast<double>(g.longest) / 1e6},
                 {"percent_of_step", 100 * per_step / step}}};
      f.cost_ns_per_step = per_step, f.step_ns = step;
      out.push_back(std::move(f));
    }
  }
}

}  // namespace npukit::prof
