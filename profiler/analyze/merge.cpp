// Merging the per-rank databases of one recording (prof_layout.hpp) into one ProfileData: each
// rank's STRING_IDS ids are mapped onto one shared table, so an op type, a group or a task type
// is the same id on every rank; node-level events, which every rank's database holds, are taken
// once.
#include "profiler/analyze/merge.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>

namespace npukit::prof {

namespace {

class StringMerger {
 public:
  explicit StringMerger(std::vector<std::string>& merged) : merged_(merged) {
    for (std::size_t i = 0; i < merged_.size(); ++i) ids_.emplace(merged_[i], static_cast<int64_t>(i));
  }
  // The merged id of each of `part`'s ids.
  std::vector<int64_t> map(const std::vector<std::string>& part) {
    std::vector<int64_t> out(part.size());
    for (std::size_t i = 0; i < part.size(); ++i) {
      auto [it, fresh] = ids_.try_emplace(part[i], static_cast<int64_t>(merged_.size()));
      if (fresh) merged_.push_back(part[i]);
      out[i] = it->second;
    }
    return out;
  }

 private:
  std::vector<std::string>& merged_;
  std::unordered_map<std::string, int64_t> ids_;
};

template <typename Id>
void remap(Id& id, const std::vector<int64_t>& to) {
  if (id >= 0 && static_cast<std::size_t>(id) < to.size()) id = static_cast<Id>(to[static_cast<std::size_t>(id)]);
}

// The parts' tasks in one vector ordered by (start, device), equal keys in part order then in
// their order within the part (what a std::stable_sort of the concatenation gives), each task's
// string ids mapped onto the merged table (`ids`, one map per part) as it moves. Each part is
// nearly in start order already (one rank, tasks in globalTaskId order), so each is put in order
// on its own (an index sort only where it is not), then the parts are merged through a heap of
// their heads: every record is read in order and moved once, instead of gathered at random from
// the whole recording.
std::vector<TaskRecord> tasks_by_start(std::vector<ProfileData>& parts, const std::vector<std::vector<int64_t>>& ids) {
  auto before = [](const TaskRecord& a, const TaskRecord& b) {
    return std::tie(a.start, a.device) < std::tie(b.start, b.device);
  };
  std::vector<std::vector<uint32_t>> order(parts.size());  // per part: its indices in order; empty = as stored
  std::size_t total = 0;
  for (std::size_t p = 0; p < parts.size(); ++p) {
    const std::vector<TaskRecord>& tasks = parts[p].tasks;
    total += tasks.size();
    if (std::is_sorted(tasks.begin(), tasks.end(), before)) continue;
    order[p].resize(tasks.size());
    std::iota(order[p].begin(), order[p].end(), 0u);
    std::stable_sort(order[p].begin(), order[p].end(), [&](uint32_t a, uint32_t b) { return before(tasks[a], tasks[b]); });
  }
  auto at = [&](std::size_t p, std::size_t k) -> TaskRecord& {
    return parts[p].tasks[order[p].empty() ? k : order[p][k]];
  };
  struct Head {
    int64_t start;
    int32_t device;
    uint32_t part;
    uint32_t next;  // position within the part's order
  };
  // std::make_heap keeps the greatest on top: "later" puts the earliest (start, device, part) there.
  auto later = [](const Head& a, const Head& b) {
    return std::tie(a.start, a.device, a.part) > std::tie(b.start, b.device, b.part);
  };
  std::vector<Head> heap;
  for (std::size_t p = 0; p < parts.size(); ++p) {
    if (parts[p].tasks.empty()) continue;
    const TaskRecord& t = at(p, 0);
    heap.push_back({t.start, t.device, static_cast<uint32_t>(p), 0});
  }
  std::make_heap(heap.begin(), heap.end(), later);
  std::vector<TaskRecord> sorted;
  sorted.reserve(total);
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), later);
    Head& h = heap.back();
    TaskRecord& t = sorted.emplace_back(std::move(at(h.part, h.next)));
    for (TaskRecord::Id* f : {&t.task_type, &t.name, &t.op_type, &t.shapes, &t.dtypes, &t.formats, &t.out_shapes,
                              &t.out_dtypes, &t.out_formats, &t.state, &t.hf32}) {
      remap(*f, ids[h.part]);
    }
    if (++h.next < parts[h.part].tasks.size()) {
      const TaskRecord& n = at(h.part, h.next);
      h.start = n.start, h.device = n.device;
      std::push_heap(heap.begin(), heap.end(), later);
    } else {
      heap.pop_back();
    }
  }
  for (ProfileData& p : parts) std::vector<TaskRecord>().swap(p.tasks);
  return sorted;
}

template <typename Value>
std::map<int, Value> shifted(const std::map<int, Value>& by_device, int base) {
  std::map<int, Value> out;
  for (const auto& [device, value] : by_device) out.emplace(device < 0 ? device : device + base, value);
  return out;
}

// One host's part of a cluster recording in the cluster's numbering: device d becomes base + d
// (-1, the host side, stays), link ids move past the previous hosts' (each bus numbers its own).
void to_cluster_ids(ProfileData& p, int base, int64_t link_base) {
  auto shift = [base](auto& device) {
    if (device >= 0) device += base;
  };
  for (TaskRecord& t : p.tasks) shift(t.device);
  for (CollectiveRecord& c : p.collectives) shift(c.device);
  for (MemorySample& m : p.memory) shift(m.device);
  for (NodeEvent& e : p.events) shift(e.device);
  for (CounterSample& c : p.counters) shift(c.device);
  for (ProfileData::AllocCall& a : p.alloc_calls) shift(a.device);
  for (StepWindow& w : p.steps) shift(w.device);
  std::map<int64_t, LinkRecord> links;
  for (auto [id, l] : p.links) {
    shift(l.device_a), shift(l.device_b);
    l.id = id + link_base;
    links.emplace(l.id, l);
  }
  p.links = std::move(links);
  p.npu_names = shifted(p.npu_names, base);
  p.device_ranks = shifted(p.device_ranks, base);
  p.overlap = shifted(p.overlap, base);
  p.hbm_capacity = shifted(p.hbm_capacity, base);
  p.allocator_peak = shifted(p.allocator_peak, base);
  p.initial_clock = shifted(p.initial_clock, base);
}

// Parts recorded from more than one bus (the hosts of a cluster) take cluster-wide device ids
// and name their host; so do the ranks of one host read alone (--rank), whose recording says it
// was one of several (EMU_RUN cluster_hosts: a report of rank 11 named "device 3" of "8x910B2").
void place_hosts(std::vector<ProfileData>& parts, ProfileData& out) {
  std::set<std::string> nodes;
  bool cluster = false;
  for (const ProfileData& p : parts) nodes.insert(p.run_value("node")), cluster = cluster || !p.run_value("cluster_hosts").empty();
  if (nodes.size() < 2 && !cluster) return;
  std::map<std::string, int64_t> link_base;  // per host: its links' offset
  int64_t next_link = 0;
  for (ProfileData& p : parts) {
    std::string node = p.run_value("node");
    int base = std::atoi(p.run_value("device_base").c_str());
    auto [it, fresh] = link_base.try_emplace(node, next_link);
    int64_t last = -1;
    for (const auto& [id, l] : p.links) last = std::max(last, id);
    if (fresh) next_link += last + 1;
    else next_link = std::max(next_link, it->second + last + 1);
    to_cluster_ids(p, base, it->second);
    auto place = [&](int device) { out.device_hosts[device] = {node, device - base}; };
    for (const auto& [device, name] : p.npu_names) place(device);
    for (const StepWindow& w : p.steps) place(w.device);
    if (!p.tasks.empty()) place(p.tasks.front().device);
  }
}

// `first`: the first part; `first_of_bus`: the first part recorded from its bus.
void append_part(ProfileData& into, ProfileData& part, const std::vector<int64_t>& ids, bool first, bool first_of_bus,
                 std::size_t rank) {
  for (CollectiveRecord& c : part.collectives) {
    for (int64_t* f : {&c.op_name, &c.op_type, &c.group, &c.algorithm}) remap(*f, ids);
    into.collectives.push_back(c);
  }
  for (LaunchRecord& l : part.launches) {
    remap(l.name, ids);
    into.launches.push_back(l);
  }
  into.steps.insert(into.steps.end(), part.steps.begin(), part.steps.end());
  into.overlap.insert(part.overlap.begin(), part.overlap.end());
  into.memory.insert(into.memory.end(), part.memory.begin(), part.memory.end());
  into.counters.insert(into.counters.end(), part.counters.begin(), part.counters.end());
  into.npu_names.insert(part.npu_names.begin(), part.npu_names.end());
  for (const auto& [id, link] : part.links) {  // a link is in both its ends' databases; the events
    auto [it, fresh] = into.links.emplace(id, link);  // that it retrained are in its cause's only
    it->second.least_rate_percent = std::min(it->second.least_rate_percent, link.least_rate_percent);
  }
  into.hbm_capacity.insert(part.hbm_capacity.begin(), part.hbm_capacity.end());
  into.allocator_peak.insert(part.allocator_peak.begin(), part.allocator_peak.end());
  into.device_ranks.insert(part.device_ranks.begin(), part.device_ranks.end());
  into.initial_clock.insert(part.initial_clock.begin(), part.initial_clock.end());
  for (NodeEvent& e : part.events) {
    if (first_of_bus || e.device >= 0) into.events.push_back(std::move(e));  // node-level: in every rank's database
  }
  into.alloc_events += part.alloc_events;
  into.alloc_calls.insert(into.alloc_calls.end(), part.alloc_calls.begin(), part.alloc_calls.end());
  into.session_start = first ? part.session_start : std::min(into.session_start, part.session_start);
  into.session_end = first ? part.session_end : std::max(into.session_end, part.session_end);
  into.complete = (first || into.complete) && part.complete;
  for (const std::string& d : part.damage) into.damage.push_back("rank " + std::to_string(rank) + ": " + d);
  if (!into.main_job) into.main_job = part.main_job;
  into.job_settings.insert(part.job_settings.begin(), part.job_settings.end());
}

// A recording of several buses (the hosts of a cluster) read each with its own reader: what the
// readers counted adds up, and one evicted reader makes the whole recording lossy. (The merged
// run was the first host's: a second host's 138 k missed events were not in the report.)
void add_bus_counts(std::map<std::string, std::string>& into, const std::map<std::string, std::string>& bus) {
  auto number = [](const std::map<std::string, std::string>& run, const char* key) -> std::optional<uint64_t> {
    auto it = run.find(key);
    if (it == run.end()) return std::nullopt;
    uint64_t v = 0;
    auto [end, ec] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), v);
    if (ec != std::errc() || end != it->second.data() + it->second.size()) return std::nullopt;
    return v;
  };
  for (const char* key : {"events_recorded", "events_missed", "samples"}) {
    auto a = number(into, key), b = number(bus, key);
    if (a && b) into[key] = std::to_string(*a + *b);  // text that is not a number stays, as damage
  }
  auto lost = number(bus, "lossless_lost");
  if (lost && *lost == 1) into["lossless_lost"] = "1";
}

}  // namespace

ProfileData merge_ranks(std::vector<ProfileData> parts, std::string path) {
  if (parts.size() == 1) {  // one rank: nothing to merge, but a cluster host's still names its host
    ProfileData hosts;
    place_hosts(parts, hosts);
    parts.front().device_hosts = std::move(hosts.device_hosts);
    return std::move(parts.front());
  }
  ProfileData out;
  out.db_path = std::move(path);
  out.ranks = static_cast<int>(parts.size());
  StringMerger strings(out.strings);
  std::vector<std::vector<int64_t>> ids(parts.size());  // per part: its string ids in the merged table
  place_hosts(parts, out);
  std::set<std::string> hosts_seen;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    ProfileData& part = parts[i];
    if (i == 0) out.meta = part.meta, out.run = part.run;
    // Node-level events are in every rank's database of a bus: taken once per bus.
    bool first_of_bus = hosts_seen.insert(part.run_value("node")).second;
    if (first_of_bus && i > 0) add_bus_counts(out.run, part.run);
    ids[i] = strings.map(part.strings);
    append_part(out, part, ids[i], i == 0, first_of_bus, i);  // all but the tasks
  }
  // One order for every consumer: by start, then device; tasks keep "by globalTaskId" order by
  // being renumbered in it (each rank's ids start at 0).
  out.tasks = tasks_by_start(parts, ids);
  for (std::size_t i = 0; i < out.tasks.size(); ++i) out.tasks[i].global_task_id = static_cast<int64_t>(i);
  std::stable_sort(out.steps.begin(), out.steps.end(), [](const StepWindow& a, const StepWindow& b) {
    return std::tie(a.step, a.device) < std::tie(b.step, b.device);
  });
  std::stable_sort(out.events.begin(), out.events.end(), [](const NodeEvent& a, const NodeEvent& b) { return a.ts < b.ts; });
  std::stable_sort(out.launches.begin(), out.launches.end(), [](const LaunchRecord& a, const LaunchRecord& b) {
    return std::tie(a.start, a.connection_id) < std::tie(b.start, b.connection_id);
  });
  return out;
}

}  // namespace npukit::prof
