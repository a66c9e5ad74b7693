// The throttling rule: where the AI-core clock was pulled down, why, how long it spent at each
// clock, and what that cost each step: every kernel that ran while throttled against the median
// of the same op (name and shapes) run unthrottled in the same recording.
#include <algorithm>
#include <map>
#include <sstream>
#include <tuple>

#include "profiler/analyze/findings_internal.hpp"
#include "profiler/analyze/ranks.hpp"
#include "telemetry/fields.hpp"

namespace npukit::prof {

namespace {

struct Device {
  double secs = 0, min_clock = 0;
  uint64_t reasons = 0;
  ThrottlePeriod merged;  // the time at each clock over all its periods
  double excess_ns = 0;   // kernels' time beyond their unthrottled median
  double kernels_ns = 0;  // the measured throttled kernels' time
  uint64_t measured = 0, unmeasured = 0;  // throttled kernels with and without an unthrottled twin
};

std::string reason_names(uint64_t reasons) {
  std::string out = telemetry::throttle_reason_names(reasons, " and ");
  return out.empty() ? "unknown" : out;
}

bool throttled_at(const std::vector<const ThrottlePeriod*>& periods, int64_t ts) {
  return std::any_of(periods.begin(), periods.end(), [&](const ThrottlePeriod* p) { return ts >= p->start && ts < p->end; });
}

// Each device's warm-up step window, when it recorded later steps too (first_steps, ranks.hpp:
// left out of per-step figures, as npu-run's step time and the diagnosis truth do).
std::map<int, Interval> warm_up_windows(const ProfileData& d, const Report& r) {
  const FirstSteps first = first_steps(r);
  std::map<int, Interval> out;
  for (const StepWindow& w : d.steps) {
    auto f = first.find(w.device);
    if (f != first.end() && f->second.second > 1 && w.step == f->second.first) out[w.device] = w.window;
  }
  return out;
}

// Adds each device's kernel excess while throttled (Device::excess_ns, measured, unmeasured). A
// throttled kernel's twin is the same op run unthrottled on its own device; else the op's median
// over every device, times how much slower the device runs the ops it ran unthrottled (the median
// ratio of its own medians to every device's): a device slow for another reason too (degraded
// cores) would otherwise have that counted as throttling.
void kernel_excess(const ProfileData& d, const Report& r, std::map<int, Device>& devices) {
  std::map<int, std::vector<const ThrottlePeriod*>> periods;
  for (const ThrottlePeriod& p : r.throttles) periods[p.device].push_back(&p);
  const std::map<int, Interval> warm_up = warm_up_windows(d, r);
  auto in_warm_up = [&](const TaskRecord& t) {
    auto w = warm_up.find(t.device);
    return w != warm_up.end() && t.start >= w->second.start && t.start < w->second.end;
  };
  using Key = std::tuple<int64_t, int64_t, int64_t, int64_t>;  // device (-1: any), name, shapes, dtypes
  std::map<Key, std::vector<int64_t>> unthrottled;
  std::vector<const TaskRecord*> throttled;
  for (const TaskRecord& t : d.tasks) {
    if (t.name < 0 || d.str(t.task_type).rfind("AI_", 0) != 0) continue;
    auto p = periods.find(t.device);
    if (p != periods.end() && throttled_at(p->second, t.start)) {
      if (!in_warm_up(t)) throttled.push_back(&t);  // per step as the step time is: after the warm-up
      continue;
    }
    unthrottled[{t.device, t.name, t.shapes, t.dtypes}].push_back(t.duration());
    unthrottled[{-1, t.name, t.shapes, t.dtypes}].push_back(t.duration());
  }
  std::map<Key, double> median;
  for (auto& [key, list] : unthrottled) {
    std::nth_element(list.begin(), list.begin() + static_cast<std::ptrdiff_t>(list.size() / 2), list.end());
    median[key] = static_cast<double>(list[list.size() / 2]);
  }
  std::map<int64_t, std::vector<double>> ratios;  // device -> its median over every device's, per op
  for (const auto& [key, own] : median) {
    const auto [device, name, shapes, dtypes] = key;
    if (device >= 0 && median.at({-1, name, shapes, dtypes}) > 0) ratios[device].push_back(own / median.at({-1, name, shapes, dtypes}));
  }
  std::map<int64_t, double> pace;
  for (auto& [device, list] : ratios) {
    std::nth_element(list.begin(), list.begin() + static_cast<std::ptrdiff_t>(list.size() / 2), list.end());
    pace[device] = list[list.size() / 2];
  }
  for (const TaskRecord* t : throttled) {
    Device& dev = devices[t->device];
    double twin = 0;
    if (auto own = median.find({t->device, t->name, t->shapes, t->dtypes}); own != median.end()) {
      twin = own->second;
    } else if (auto any = median.find({-1, t->name, t->shapes, t->dtypes}); any != median.end()) {
      auto p = pace.find(t->device);
      twin = any->second * (p == pace.end() ? 1.0 : p->second);
    } else {
      ++dev.unmeasured;
      continue;
    }
    dev.excess_ns += std::max(0.0, static_cast<double>(t->duration()) - twin);
    dev.kernels_ns += static_cast<double>(t->duration());
    ++dev.measured;
  }
}

// What the throttling of `device` costs the step in a replay of the collectives with its work
// inside its throttle periods shortened by the share the throttled kernels lost (nullopt: no
// replay). Where the others wait for another rank anyway, little of it.
std::optional<double> replayed_cost(const ProfileData& d, const Report& r, int device, const Device& dev) {
  if (dev.kernels_ns <= 0) return std::nullopt;
  const double lost = dev.excess_ns / dev.kernels_ns;
  std::vector<const ThrottlePeriod*> periods;
  for (const ThrottlePeriod& p : r.throttles) {
    if (p.device == device) periods.push_back(&p);
  }
  return replay_cost(d, [&](int at, int64_t from, int64_t to) {
    double span = static_cast<double>(to - from);
    if (at != device) return span;
    for (const ThrottlePeriod* p : periods) {
      span -= lost * static_cast<double>(std::max<int64_t>(0, std::min(to, p->end) - std::max(from, p->start)));
    }
    return std::max(0.0, span);
  });
}

}  // namespace

void throttling(const ProfileData& d, const Report& r, std::vector<Finding>& out, Measured& measured) {
  if (!r.steps.empty()) measured["throttling"] = 0;
  if (r.throttles.empty()) return;
  std::map<int, Device> by_device;
  for (const ThrottlePeriod& p : r.throttles) {
    Device& dev = by_device[p.device];
    dev.secs += static_cast<double>(p.end - p.start) / 1e9;
    dev.min_clock = dev.min_clock == 0 ? p.min_clock_mhz : std::min(dev.min_clock, p.min_clock_mhz);
    dev.reasons |= p.reasons;
    dev.merged.min_clock_mhz = dev.min_clock;
    for (const auto& [mhz, ns] : p.time_at_mhz) dev.merged.time_at_mhz[mhz] += ns;
  }
  kernel_excess(d, r, by_device);
  std::map<int, int> steps;
  const FirstSteps first_step = first_steps(r);
  for (const StepRow& s : r.steps) steps[s.device] += is_warm_up(first_step, s) ? 0 : 1;
  std::ostringstream text;
  Finding f{"throttling", "", {}};
  text << "AI-core clock throttled on " << by_device.size() << " device(s): ";
  double worst = -1, step = 0;
  int worst_device = -1;
  for (const RankRow& row : r.ranks) step = std::max(step, row.step);
  bool first = true;
  for (const auto& [device, dev] : by_device) {
    std::string id = "device " + std::to_string(device);  // the numbers' keys: the recording's device id
    double per_step = steps[device] > 0 && dev.measured > 0 ? dev.excess_ns / steps[device] : -1;
    // Named as the rest of the report names it: on a cluster "device 10" is on no host.
    text << (first ? "" : "; ") << r.header.rank_label(device) << " (" << reason_names(dev.reasons) << ") for "
         << fmt("%.2f s", dev.secs) << ", down to " << fmt("%.0f MHz", dev.min_clock) << " and "
         << fmt("%.0f MHz", dev.merged.mean_clock_mhz()) << " on average over that time";
    if (per_step >= 0) text << ", costing " << ms(per_step) << " per step";
    f.numbers.push_back({id + " throttled_s", dev.secs});
    f.numbers.push_back({id + " min_clock_mhz", dev.min_clock});
    f.numbers.push_back({id + " mean_clock_mhz", dev.merged.mean_clock_mhz()});
    for (const auto& [mhz, ns] : dev.merged.time_at_mhz) f.numbers.push_back({id + " s_at_" + std::to_string(mhz) + "_mhz", static_cast<double>(ns) / 1e9});
    if (per_step >= 0) f.numbers.push_back({id + " cost_ms_per_step", per_step / 1e6});
    if (per_step > worst) worst = per_step, worst_device = device;
    first = false;
  }
  text << "; kernels run slower while throttled";
  if (worst >= 0) {
    text << " (each throttled kernel against the same op run unthrottled in this recording)";
    // Only where another rank is slow for another reason (a straggler the others wait for).
    std::optional<double> replayed;
    if (straggler_apart_from(r.ranks, worst_device)) replayed = replayed_cost(d, r, worst_device, by_device[worst_device]);
    if (replayed && *replayed < kHiddenShare * worst) {
      text << "; but the step hides most of it: the ranks wait in their collectives for another rank anyway (replayed "
              "with the throttled work at its unthrottled clock, the step ends " << ms(*replayed) << " sooner)";
      worst = *replayed;
      f.numbers.push_back({"replayed_cost_ms_per_step", worst / 1e6});
    }
    text << ".";
    f.cost_ns_per_step = worst, f.step_ns = step;
    measured["throttling"] = worst;
  } else {
    text << "; the cost is not estimated: no op ran unthrottled to compare with.";
  }
  f.text = text.str();
  out.push_back(std::move(f));
}

}  // namespace npukit::prof
