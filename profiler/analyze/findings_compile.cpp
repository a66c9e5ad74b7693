// Online compiles (EMU_EVENT op_compile): with jit_compile on, the framework compiles an op on the
// host for every static shape it has not compiled before. The first compile of each op is the
// warm-up everyone pays once; compiling an op *again* for another shape means its shapes change
// from step to step, and every step pays it (shape_recompilation). The host compiles before the
// launch, so the cost is the time the device sat idle during those compiles.
#include <algorithm>
#include <map>
#include <set>

#include "profiler/analyze/findings_internal.hpp"
#include "profiler/analyze/time_sanity.hpp"

namespace npukit::prof {

namespace {

constexpr double kRecompileShare = 0.03;  // of the step

struct Compile {
  Interval span;
  bool again = false;  // the op was compiled before, for other shapes
  const NodeEvent* event = nullptr;
};

// Per device, the op_compile events in time order, each marked when its op was compiled before.
std::map<int, std::vector<Compile>> compiles_by_device(const ProfileData& d) {
  std::map<int, std::vector<Compile>> out;
  std::map<int, std::set<std::string>> seen;
  for (const NodeEvent& e : d.events) {  // in time order
    if (e.type != "op_compile" || e.a > static_cast<uint64_t>(kMaxSessionNs)) continue;
    bool again = !seen[e.device].insert(e.name).second;
    out[e.device].push_back({{e.ts, e.ts + static_cast<int64_t>(e.a)}, again, &e});
  }
  return out;
}

Intervals busy_on(const ProfileData& d, int device) {
  auto it = d.overlap.find(device);
  if (it == d.overlap.end()) return {};
  Intervals busy = it->second.compute;
  busy.insert(busy.end(), it->second.communication.begin(), it->second.communication.end());
  return union_of(std::move(busy));
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
  struct PerDevice {
    double idle_ns = 0, step_ns = 0;
    int steps = 0, recompiles = 0;
    std::set<std::string> ops;
    const NodeEvent* example = nullptr;
  };
  std::map<int, PerDevice> devices;
  auto compiles = compiles_by_device(d);
  for (const StepWindow& w : d.steps) {
    if (w.step == 0) continue;  // the warm-up step compiles every op once
    PerDevice& p = devices[w.device];
    p.step_ns += static_cast<double>(w.window.length()), ++p.steps;
    Intervals again;
    for (const Compile& c : compiles[w.device]) {
      if (!c.again || c.span.start < w.window.start || c.span.start >= w.window.end) continue;
      again.push_back(c.span);
      ++p.recompiles;
      p.ops.insert(c.event->name);
      if (!p.example) p.example = c.event;
    }
    p.idle_ns += static_cast<double>(total(subtract(clip(union_of(std::move(again)), w.window), busy_on(d, w.device))));
  }
  auto worst = std::max_element(devices.begin(), devices.end(), [](const auto& a, const auto& b) {
    return a.second.idle_ns * std::max(b.second.steps, 1) < b.second.idle_ns * std::max(a.second.steps, 1);
  });
  if (worst == devices.end() || worst->second.steps == 0) return;
  const PerDevice& p = worst->second;
  double n = p.steps, per_step = p.idle_ns / n, step = p.step_ns / n;
  measured["shape_recompilation"] = per_step;
  if (p.recompiles == 0 || step <= 0 || per_step < kRecompileShare * step) return;
  Finding f{"shape_recompilation",
            "Op recompilation: on device " + std::to_string(worst->first) + " " + std::to_string(p.ops.size()) +
                " op(s) are compiled again for new input shapes " + fmt("%.1f", p.recompiles / n) +
                " time(s) per step (e.g. " + p.example->name + " for " + p.example->message + "), costing " +
                ms(per_step) + " per step (" + pct(per_step / step) +
                ") with the AI cores idle: the shapes change from step to step and each new one is compiled "
                "online before its launch.",
            {{"cost_ms_per_step", per_step / 1e6},
             {"recompiles_per_step", p.recompiles / n},
             {"ops", static_cast<double>(p.ops.size())},
             {"percent_of_step", 100 * per_step / step}}};
  f.cost_ns_per_step = per_step, f.step_ns = step;
  out.push_back(std::move(f));
}

}  // namespace npukit::prof
