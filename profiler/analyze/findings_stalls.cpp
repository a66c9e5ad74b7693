// Host work that holds back the next launch, charged by the time the device sat idle during it in
// the steps after the first (the warm-up):
// - Online compiles (EMU_EVENT op_compile): with jit_compile on, the framework compiles an op on
//   the host for every static shape it has not compiled before. The first compile of each op is
//   the warm-up everyone pays once; compiling an op *again* for another shape means its shapes
//   change from step to step, and every step pays it (shape_recompilation).
// - Cache flushes (EMU_EVENT cache_flush): a caching allocator that has free blocks but none large
//   enough, with no HBM left for a new segment, empties its cache (a free per segment) and
//   allocates again (hbm_fragmentation). allocator_cost leaves those calls to this rule.
#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "profiler/analyze/findings_internal.hpp"
#include "profiler/analyze/time_sanity.hpp"

namespace npukit::prof {

namespace {

constexpr double kRecompileShare = 0.03;  // of the step
constexpr double kFlushShare = 0.01;      // of the step, as allocator_cost's 0.5% is for all calls

struct Compile {
  Interval span;
  bool again = false;  // the op was compiled before, for other shapes
  const NodeEvent* event = nullptr;
};

// Per device, the op_compile events in time order, each marked when its op was compiled before.
std::map<int, std::vector<Compile>> compiles_by_device(const ProfileData& d) {
  std::map<int, std::vector<Compile>> out;
  std::map<std::pair<int, uint64_t>, std::set<std::string>> seen;  // (device, pid): ops compiled
  for (const NodeEvent& e : d.events) {  // in time order
    if (e.type != "op_compile" || e.a > static_cast<uint64_t>(kMaxSessionNs)) continue;
    bool again = !seen[{e.device, e.b >> 32}].insert(e.name).second;  // b: stream | pid << 32
    out[e.device].push_back({{e.ts, e.ts + static_cast<int64_t>(e.a)}, again, &e});
  }
  return out;
}

}  // namespace

const Intervals& busy_on(const ProfileData& d, int device) {
  static const Intervals kNone;
  auto it = d.overlap.find(device);
  return it == d.overlap.end() ? kNone : it->second.busy;
}

std::map<int, HostStall> idle_during(const ProfileData& d, const std::map<int, std::vector<HostSpan>>& spans) {
  std::map<int, HostStall> out;
  for (const StepWindow& w : d.steps) {
    if (w.step == kFirstStep) continue;  // the warm-up step
    HostStall& p = out[w.device];
    p.step_ns += static_cast<double>(w.window.length()), ++p.steps;
    auto it = spans.find(w.device);
    if (it == spans.end()) continue;
    Intervals inside;
    for (const HostSpan& s : it->second) {
      if (s.span.start < w.window.start || s.span.start >= w.window.end) continue;
      inside.push_back(s.span);
      ++p.count;
      if (!p.example) p.example = s.event;
    }
    if (inside.empty()) continue;
    p.idle_ns += static_cast<double>(total(subtract(clip(union_of(std::move(inside)), w.window), busy_on(d, w.device))));
  }
  return out;
}

const std::pair<const int, HostStall>* costliest(const std::map<int, HostStall>& stalls) {
  const std::pair<const int, HostStall>* best = nullptr;
  for (const auto& entry : stalls) {
    if (entry.second.steps == 0) continue;
    if (!best || entry.second.idle_ns / entry.second.steps > best->second.idle_ns / best->second.steps) best = &entry;
  }
  return best;
}

namespace {

// The device where `spans` cost most per step, recorded in `measured[rule]`; nullopt when no span
// fell in a step or the cost is below `share` of the step.
struct Stall {
  int device = 0;
  HostStall cost;
  double per_step = 0, step = 0, n = 0;
};
std::optional<Stall> costly_stall(const ProfileData& d, const std::map<int, std::vector<HostSpan>>& spans,
                                  const char* rule, double share, Measured& measured) {
  auto stalls = idle_during(d, spans);
  const auto* worst = costliest(stalls);
  if (!worst) return std::nullopt;
  Stall s{worst->first, worst->second, 0, 0, static_cast<double>(worst->second.steps)};
  s.per_step = s.cost.idle_ns / s.n, s.step = s.cost.step_ns / s.n;
  measured[rule] = s.per_step;
  if (s.cost.count == 0 || s.step <= 0 || s.per_step < share * s.step) return std::nullopt;
  return s;
}

}  // namespace

std::map<int, Intervals> compile_spans(const ProfileData& d) {
  std::map<int, Intervals> out;
  for (const auto& [device, list] : compiles_by_device(d)) {
    for (const Compile& c : list) out[device].push_back(c.span);
    out[device] = union_of(std::move(out[device]));
  }
  return out;
}

void shape_recompilation(const ProfileData& d, std::vector<Finding>& out, Measured& measured) {
  std::map<int, std::vector<HostSpan>> again;
  std::map<int, std::set<std::string>> ops;
  for (const auto& [device, list] : compiles_by_device(d)) {
    for (const Compile& c : list) {
      if (!c.again) continue;
      again[device].push_back({c.span, c.event});
      ops[device].insert(c.event->name);
    }
  }
  auto stall = costly_stall(d, again, "shape_recompilation", kRecompileShare, measured);
  if (!stall) return;
  const HostStall& p = stall->cost;
  double n = stall->n, per_step = stall->per_step, step = stall->step;
  Finding f{"shape_recompilation",
            "Op recompilation: on device " + std::to_string(stall->device) + " " + std::to_string(ops[stall->device].size()) +
                " op(s) are compiled again for new input shapes " + fmt("%.1f", p.count / n) +
                " time(s) per step (e.g. " + p.example->name + " for " + p.example->message + "), costing " +
                ms(per_step) + " per step (" + pct(per_step / step) +
                ") with the AI cores idle: the shapes change from step to step and each new one is compiled "
                "online before its launch.",
            {{"cost_ms_per_step", per_step / 1e6},
             {"recompiles_per_step", p.count / n},
             {"ops", static_cast<double>(ops[stall->device].size())},
             {"percent_of_step", 100 * per_step / step}}};
  f.cost_ns_per_step = per_step, f.step_ns = step;
  out.push_back(std::move(f));
}

std::map<int, std::vector<HostSpan>> cache_flushes(const ProfileData& d) {
  std::map<int, std::vector<HostSpan>> out;
  for (const NodeEvent& e : d.events) {
    if (e.type != "cache_flush" || e.a > static_cast<uint64_t>(kMaxSessionNs)) continue;
    out[e.device].push_back({{e.ts, e.ts + static_cast<int64_t>(e.a)}, &e});
  }
  return out;
}

void hbm_fragmentation(const ProfileData& d, std::vector<Finding>& out, Measured& measured) {
  auto stall = costly_stall(d, cache_flushes(d), "hbm_fragmentation", kFlushShare, measured);
  if (!stall) return;
  const HostStall& p = stall->cost;
  double n = stall->n, per_step = stall->per_step, step = stall->step;
  constexpr double kMiB = 1 << 20;
  const NodeEvent& e = *p.example;
  Finding f{"hbm_fragmentation",
            "HBM fragmentation: on device " + std::to_string(stall->device) + " the caching allocator ran out of HBM " +
                fmt("%.1f", p.count / n) + " time(s) per step and emptied its cache to allocate (e.g. " +
                fmt("%.1f MiB", static_cast<double>(e.b) / kMiB) + " for '" + e.name + "' while its largest free block was " +
                fmt("%.1f MiB", static_cast<double>(e.d) / kMiB) + "; the flush gave back " +
                fmt("%.1f MiB", static_cast<double>(e.c) / kMiB) + "), costing " + ms(per_step) + " per step (" +
                pct(per_step / step) + ") with the AI cores idle: cached blocks of other sizes fill the HBM a new "
                "allocation needs.",
            {{"cost_ms_per_step", per_step / 1e6},
             {"flushes_per_step", p.count / n},
             {"percent_of_step", 100 * per_step / step}}};
  f.cost_ns_per_step = per_step, f.step_ns = step;
  out.push_back(std::move(f));
}

}  // namespace npukit::prof
