// What a straggler costs the step, by replaying the job's collectives with its own work at the
// other ranks' pace (straggler_replay_cost, findings_internal.hpp).
//
// Each device's timeline after its warm-up step is its collectives in start order with its own
// work between them: from its warm-up's end to its first collective, from each collective's end
// to the next one's start (negative when it was queued behind the previous one), and from its
// last collective to its last step's end. A collective instance (one COMMUNICATION_OP opName
// across its members) ends its transfer time after its last member arrives; the transfer time is
// its shortest member's duration (the last to arrive waits for nobody). The replay takes the
// instances in dependency order: one is ready when each member has reached it.
#include <algorithm>
#include <deque>
#include <map>
#include <set>
#include <unordered_map>

#include "profiler/analyze/findings_internal.hpp"

namespace npukit::prof {

namespace {

struct Timeline {
  int64_t from = 0, to = 0;                     // its warm-up step's end, its last step's end
  std::vector<const CollectiveRecord*> calls;   // in start order, within (from, to)
};

struct Instance {
  std::vector<int> members;   // devices
  int64_t transfer_ns = INT64_MAX;
};

// When the last device ends, replayed with each device's own work times its pace (1 unless
// given). nullopt when the instances cannot all be ordered (devices meeting them in different
// orders: overlapping collectives on several streams).
std::optional<double> replay(const std::map<int, Timeline>& devices, const std::unordered_map<int64_t, Instance>& instances,
                             const std::map<int, double>& pace) {
  auto pace_of = [&](int device) {
    auto p = pace.find(device);
    return p == pace.end() ? 1.0 : p->second;
  };
  std::map<int, std::size_t> next;   // device -> index of the call it is at
  std::map<int, double> end;         // device -> when its last replayed call ended
  std::unordered_map<int64_t, std::pair<std::size_t, double>> arrived;  // instance -> members there, latest arrival
  std::deque<int64_t> ready;
  auto arrive = [&](int device) {
    const Timeline& t = devices.at(device);
    const std::size_t k = next[device];
    if (k >= t.calls.size()) return;
    const CollectiveRecord& c = *t.calls[k];
    const int64_t before = k == 0 ? t.from : t.calls[k - 1]->end;
    const double at = end[device] + static_cast<double>(c.start - before) * pace_of(device);
    auto& [count, latest] = arrived.try_emplace(c.op_name, 0, -1e300).first->second;
    ++count, latest = std::max(latest, at);
    if (count == instances.at(c.op_name).members.size()) ready.push_back(c.op_name);
  };
  for (const auto& [device, t] : devices) end[device] = static_cast<double>(t.from), arrive(device);
  std::size_t done = 0;
  while (!ready.empty()) {
    const int64_t id = ready.front();
    ready.pop_front();
    const Instance& inst = instances.at(id);
    const double finish = arrived[id].second + static_cast<double>(inst.transfer_ns);
    ++done;
    for (int m : inst.members) {
      end[m] = finish, ++next[m];
      arrive(m);
    }
  }
  if (done != instances.size()) return std::nullopt;
  double last = -1e300;
  for (const auto& [device, t] : devices) {
    const int64_t after = t.calls.empty() ? t.from : t.calls.back()->end;
    last = std::max(last, end[device] + static_cast<double>(t.to - after) * pace_of(device));
  }
  return last;
}

}  // namespace

std::optional<double> straggler_replay_cost(const ProfileData& d, const std::map<int, double>& pace) {
  std::map<int, Timeline> devices;
  std::map<int, int> steps;
  for (const StepWindow& w : d.steps) {
    Timeline& t = devices.try_emplace(w.device, Timeline{w.window.end, w.window.end, {}}).first->second;
    t.from = std::min(t.from, w.window.end), t.to = std::max(t.to, w.window.end);
    ++steps[w.device];
  }
  int replayed_steps = 0;
  for (const auto& [device, n] : steps) replayed_steps = std::max(replayed_steps, n - 1);
  if (replayed_steps < 1) return std::nullopt;
  std::unordered_map<int64_t, Instance> instances;
  for (const CollectiveRecord& c : d.collectives) {
    if (c.src_rank >= 0 || c.dst_rank >= 0) return std::nullopt;  // a Send and its Receive are two ops
    auto t = devices.find(c.device);
    if (t == devices.end() || c.start < t->second.from || c.end > t->second.to) continue;
    t->second.calls.push_back(&c);
    Instance& inst = instances[c.op_name];
    inst.members.push_back(c.device);
    inst.transfer_ns = std::min(inst.transfer_ns, c.end - c.start);
  }
  if (instances.empty()) return std::nullopt;
  for (auto& [device, t] : devices) {
    std::sort(t.calls.begin(), t.calls.end(), [](const CollectiveRecord* a, const CollectiveRecord* b) { return a->start < b->start; });
  }
  for (const auto& [id, inst] : instances) {  // an instance met twice by one device is not one call each
    if (std::set<int>(inst.members.begin(), inst.members.end()).size() != inst.members.size()) return std::nullopt;
  }
  auto as_recorded = replay(devices, instances, {});
  auto at_pace = replay(devices, instances, pace);
  if (!as_recorded || !at_pace) return std::nullopt;
  return std::max(0.0, (*as_recorded - *at_pace) / replayed_steps);
}

}  // namespace npukit::prof
