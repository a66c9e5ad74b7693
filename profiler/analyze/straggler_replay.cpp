// What a cause on some devices costs the step, by replaying the job's collectives with those
// devices' own work as it would be without it (replay_cost, findings_internal.hpp): a straggler's at
// the others' pace, a throttled device's at its unthrottled clock.
//
// Each device's timeline after its warm-up step is its collectives with its own work before each:
// a call follows the latest of its device's calls that ended before it started (its warm-up's
// end for the first), after the time between the two; calls that overlap run side by side (a
// stage's Send beside its Receive). A collective instance (one COMMUNICATION_OP opName across its
// members; a Send and its Receive) ends its transfer time after its last member arrives; the
// transfer time is its shortest member's duration (the last to arrive waits for nobody). The
// replay takes the instances in dependency order; a device ends its work after its last call
// (to its last step's end) after the last of them.
#include <algorithm>
#include <deque>
#include <map>
#include <tuple>
#include <unordered_map>

#include "profiler/analyze/findings_internal.hpp"
#include "profiler/analyze/findings_links.hpp"

namespace npukit::prof {

namespace {

struct Timeline {
  int64_t from = 0, to = 0;                     // its warm-up step's end, its last step's end
  std::vector<const CollectiveRecord*> calls;   // in start order, within (from, to)
  std::vector<int64_t> instance;                // per call: its instance's id
  std::vector<std::vector<std::size_t>> next;   // per call: the calls that follow it
  std::vector<std::size_t> first;               // the calls that follow the warm-up
};

// Each call's predecessor: the latest-ending of the device's earlier calls that ended by its start.
void link_calls(Timeline& t) {
  t.next.assign(t.calls.size(), {});
  std::vector<std::size_t> by_end(t.calls.size());
  for (std::size_t i = 0; i < by_end.size(); ++i) by_end[i] = i;
  std::sort(by_end.begin(), by_end.end(), [&](std::size_t a, std::size_t b) {
    return t.calls[a]->end != t.calls[b]->end ? t.calls[a]->end < t.calls[b]->end : a < b;
  });
  std::size_t ended = 0;
  int latest = -1;
  // A call never follows itself or a later one: a zero-length call ends at its start.
  auto before = [&](std::size_t j, std::size_t k) {
    return t.calls[j]->end < t.calls[k]->start || (t.calls[j]->end == t.calls[k]->start && j < k);
  };
  for (std::size_t k = 0; k < t.calls.size(); ++k) {  // start order
    while (ended < by_end.size() && before(by_end[ended], k)) latest = static_cast<int>(by_end[ended++]);
    if (latest < 0) t.first.push_back(k);
    else t.next[static_cast<std::size_t>(latest)].push_back(k);
  }
}

struct Instance {
  std::vector<std::pair<int, std::size_t>> members;  // (device, its call's index in its timeline)
  int64_t transfer_ns = INT64_MAX;
  const CollectiveRecord* call = nullptr;  // one member's
  int from = -1, to = -1;                  // a Send and its Receive: the devices
};

// When the last device ends, replayed with each device's own work as `work` says (as recorded
// when empty). nullopt when the instances cannot all be ordered.
std::optional<double> replay(const std::map<int, Timeline>& devices, const std::unordered_map<int64_t, Instance>& instances,
                             const ReplayWork& work, const ReplayTransfer& transfer) {
  auto own = [&](int device, int64_t from, int64_t to) {
    return work ? work(device, from, to) : static_cast<double>(to - from);
  };
  std::map<int, std::vector<double>> ends;  // device -> per call, when it ended in the replay
  std::unordered_map<int64_t, std::pair<std::size_t, double>> arrived;  // instance -> members there, latest arrival
  std::deque<int64_t> ready;
  auto arrive = [&](int device, std::size_t k, double from_time, int64_t from_ns) {
    const Timeline& t = devices.at(device);
    const int64_t id = t.instance[k];
    auto& [count, latest] = arrived.try_emplace(id, 0, -1e300).first->second;
    ++count, latest = std::max(latest, from_time + own(device, from_ns, t.calls[k]->start));
    if (count == instances.at(id).members.size()) ready.push_back(id);
  };
  for (const auto& [device, t] : devices) {
    ends[device].assign(t.calls.size(), 0);
    for (std::size_t k : t.first) arrive(device, k, static_cast<double>(t.from), t.from);
  }
  std::size_t done = 0;
  while (!ready.empty()) {
    const int64_t id = ready.front();
    ready.pop_front();
    const Instance& inst = instances.at(id);
    const auto recorded = static_cast<double>(inst.transfer_ns);
    const double finish = arrived[id].second + (transfer ? transfer(*inst.call, inst.from, inst.to, recorded) : recorded);
    ++done;
    for (auto [device, k] : inst.members) {
      const Timeline& t = devices.at(device);
      ends[device][k] = finish;
      for (std::size_t n : t.next[k]) arrive(device, n, finish, t.calls[k]->end);
    }
  }
  if (done != instances.size()) return std::nullopt;
  double last = -1e300;
  for (const auto& [device, t] : devices) {
    double finish = static_cast<double>(t.from);
    int64_t after = t.from;
    for (std::size_t k = 0; k < t.calls.size(); ++k) {
      if (t.calls[k]->end >= after) after = t.calls[k]->end, finish = ends[device][k];
    }
    last = std::max(last, finish + own(device, after, t.to));
  }
  return last;
}

}  // namespace

std::optional<double> replay_cost(const ProfileData& d, const ReplayWork& work, const ReplayTransfer& transfer) {
  std::map<int, Timeline> devices;
  std::map<int, int> steps;
  for (const StepWindow& w : d.steps) {
    Timeline& t = devices.try_emplace(w.device, Timeline{w.window.end, w.window.end, {}, {}, {}, {}}).first->second;
    t.from = std::min(t.from, w.window.end), t.to = std::max(t.to, w.window.end);
    ++steps[w.device];
  }
  int replayed_steps = 0;
  for (const auto& [device, n] : steps) replayed_steps = std::max(replayed_steps, n - 1);
  if (replayed_steps < 1) return std::nullopt;
  // A Send and its Receive are two ops of one transfer: the k-th Send from one device to another
  // meets the k-th Receive there, counted over the whole recording (the devices' warm-ups end at
  // different times) before the calls outside the replayed steps are left out.
  std::unordered_map<const CollectiveRecord*, std::pair<int, int>> ends;
  for (const Transfer& t : transfers(d)) ends[t.call] = {t.from, t.to};
  std::map<int, std::vector<const CollectiveRecord*>> all;  // device -> its calls, in start order
  for (const CollectiveRecord& c : d.collectives) {
    if (c.src_rank >= 0 && !ends.count(&c)) return std::nullopt;  // its other end was not recorded
    if (c.end < c.start) return std::nullopt;                      // a damaged row
    all[c.device].push_back(&c);
  }
  std::map<std::tuple<int, int, bool>, int64_t> nth;             // (from, to, at the sender) -> transfers met
  std::map<std::tuple<int, int, int64_t>, int64_t> transfer_ids;  // (from, to, k) -> an id below every string id
  std::unordered_map<int64_t, Instance> instances;
  for (auto& [device, calls] : all) {
    std::sort(calls.begin(), calls.end(), [](const CollectiveRecord* a, const CollectiveRecord* b) { return a->start < b->start; });
    auto t = devices.find(device);
    for (const CollectiveRecord* c : calls) {
      int64_t id = c->op_name;
      int from = -1, to = -1;
      if (auto e = ends.find(c); e != ends.end()) {
        std::tie(from, to) = e->second;
        const int64_t k = nth[{from, to, device == from}]++;
        id = transfer_ids.try_emplace({from, to, k}, -1 - static_cast<int64_t>(transfer_ids.size())).first->second;
      }
      if (t == devices.end() || c->start < t->second.from || c->end > t->second.to) continue;
      Instance& inst = instances[id];
      if (!inst.members.empty() && inst.members.back().first == device) return std::nullopt;  // met twice by one device
      inst.call = c, inst.from = from, inst.to = to;
      inst.members.push_back({device, t->second.calls.size()});
      t->second.calls.push_back(c);
      t->second.instance.push_back(id);
      inst.transfer_ns = std::min(inst.transfer_ns, c->end - c->start);
    }
  }
  if (instances.empty()) return std::nullopt;
  for (auto& [device, t] : devices) link_calls(t);
  auto as_recorded = replay(devices, instances, {}, {});
  auto at_pace = replay(devices, instances, work, transfer);
  if (!as_recorded || !at_pace) return std::nullopt;
  return std::max(0.0, (*as_recorded - *at_pace) / replayed_steps);
}

}  // namespace npukit::prof
