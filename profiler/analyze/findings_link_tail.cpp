// What slow collectives cost when they end their devices' part of a step: a pipeline stage's
// data-parallel AllReduce runs after the stage's last send while the stage before it already
// computes its next step's first forward, so its extra time costs only what that stage's first
// Send then waits for it (a degraded dp link of pipeline-train was costed 54.8 ms per step for a
// true 5.2).
#include <algorithm>
#include <map>
#include <unordered_map>

#include "profiler/analyze/findings_internal.hpp"
#include "profiler/analyze/findings_links.hpp"
#include "profiler/analyze/report_build.hpp"

namespace npukit::prof {

namespace {

// Each device's step windows in time order.
std::map<int, std::vector<StepWindow>> windows_by_device(const ProfileData& d) {
  std::map<int, std::vector<StepWindow>> out;
  for (const StepWindow& w : d.steps) out[w.device].push_back(w);
  for (auto& [device, ws] : out) {
    std::sort(ws.begin(), ws.end(), [](const StepWindow& a, const StepWindow& b) { return a.window.start < b.window.start; });
  }
  return out;
}

// The window of `windows` holding `t`, or null.
const StepWindow* window_at(const std::vector<StepWindow>& windows, int64_t t) {
  auto it = std::upper_bound(windows.begin(), windows.end(), t,
                             [](int64_t v, const StepWindow& w) { return v < w.window.start; });
  if (it == windows.begin()) return nullptr;
  --it;
  return t < it->window.end ? &*it : nullptr;
}

// Each Send's Receive and each Receive's Send: between an ordered pair of devices (from, to), the
// n-th Send from one meets the n-th Receive on the other (the emulator's rendezvous, as HCCL's).
std::unordered_map<const CollectiveRecord*, const CollectiveRecord*> other_ends(const ProfileData& d) {
  std::map<std::pair<int, int>, std::vector<const CollectiveRecord*>> sends, receives;
  for (const auto& [call, from, to] : transfers(d)) (is_receive(d.str(call->op_type)) ? receives : sends)[{from, to}].push_back(call);
  auto by_start = [](const CollectiveRecord* a, const CollectiveRecord* b) { return a->start < b->start; };
  std::unordered_map<const CollectiveRecord*, const CollectiveRecord*> out;
  for (auto& [pair, sent] : sends) {
    auto got = receives.find(pair);
    if (got == receives.end()) continue;
    std::sort(sent.begin(), sent.end(), by_start), std::sort(got->second.begin(), got->second.end(), by_start);
    for (std::size_t n = 0; n < std::min(sent.size(), got->second.size()); ++n) {
      out[sent[n]] = got->second[n], out[got->second[n]] = sent[n];
    }
  }
  return out;
}

}  // namespace

std::optional<double> tail_cost(const ProfileData& d, const std::vector<SlowSpan>& spans, const std::set<int64_t>& slow_groups) {
  const auto windows = windows_by_device(d);
  std::map<int, std::vector<const CollectiveRecord*>> others;  // per device, its collectives outside the slow groups
  for (const CollectiveRecord& c : d.collectives) {
    if (!slow_groups.count(c.group)) others[c.device].push_back(&c);
  }
  for (auto& [device, v] : others) {
    std::sort(v.begin(), v.end(), [](const CollectiveRecord* a, const CollectiveRecord* b) { return a->start < b->start; });
  }
  const auto other_end = other_ends(d);
  // Per device and the communication that follows its slow tail (null: none), what they added.
  std::map<std::pair<int, const CollectiveRecord*>, double> added;
  for (const SlowSpan& s : spans) {
    auto ws = windows.find(s.device);
    const StepWindow* w = ws == windows.end() ? nullptr : window_at(ws->second, s.start);
    if (w == nullptr) return std::nullopt;  // outside the steps
    static const std::vector<const CollectiveRecord*> kNone;
    auto own = others.find(s.device);
    const auto& mine = own == others.end() ? kNone : own->second;
    auto next = std::upper_bound(mine.begin(), mine.end(), s.start,
                                 [](int64_t t, const CollectiveRecord* c) { return t < c->start; });
    // At the tail: nothing of the device's own communication follows it within the step.
    if (next != mine.end() && (*next)->start < w->window.end) return std::nullopt;
    added[{s.device, next == mine.end() ? nullptr : *next}] += std::max(0.0, s.lost_ns);
  }
  // The other end of the device's next transfer waited for it from when that end was posted
  // until the device posted its own: the tail's added time costs no more than that wait (a step's
  // two slow buckets before one Receive, once). The run's last tail, which nothing follows, costs
  // what the device's others did (the job's end waits for all of it once, not every step).
  std::map<int, double> lost;                  // per device, over the recording
  std::map<int, std::pair<double, int>> capped;  // per device: the costs of its tails before a transfer
  std::map<int, double> last;                  // per device: its tail that nothing follows
  for (const auto& [key, ns] : added) {
    const auto& [device, next] = key;
    if (next == nullptr) {
      last[device] = ns;
      continue;
    }
    double cost = ns;
    if (is_point_to_point(d.str(next->op_type))) {
      if (auto other = other_end.find(next); other != other_end.end()) {
        cost = std::min(cost, std::max(0.0, static_cast<double>(next->start - other->second->start)));
        capped[device].first += cost, ++capped[device].second;
      }
    }
    lost[device] += cost;
  }
  for (const auto& [device, ns] : last) {
    auto c = capped.find(device);
    lost[device] += c == capped.end() ? ns : std::min(ns, c->second.first / c->second.second);
  }
  std::map<int, int> steps = steps_per_device(d);
  double worst = 0;
  for (const auto& [device, ns] : lost) worst = std::max(worst, ns / std::max(1, steps[device]));
  return worst;
}

}  // namespace npukit::prof
