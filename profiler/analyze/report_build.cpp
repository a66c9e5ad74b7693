#include "profiler/analyze/report_build.hpp"

#include "profiler/analyze/id_groups.hpp"

#include "profiler/analyze/ranks.hpp"
#include "profiler/analyze/report_memory.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <thread>
#include <tuple>
#include <unordered_map>

namespace npukit::prof {

DurationStats duration_stats(std::vector<int64_t>& d) {
  DurationStats s;
  if (d.empty()) return s;
  s.count = d.size();
  s.total = std::accumulate(d.begin(), d.end(), int64_t{0});
  auto [lo, hi] = std::minmax_element(d.begin(), d.end());
  s.min = *lo, s.max = *hi;
  s.avg = static_cast<double>(s.total) / static_cast<double>(s.count);
  std::size_t mid = d.size() / 2;
  std::nth_element(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(mid), d.end());
  double upper = static_cast<double>(d[mid]);
  if (d.size() % 2 == 1) {
    s.median = upper;
  } else {
    double lower = static_cast<double>(*std::max_element(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(mid)));
    s.median = (lower + upper) / 2;
  }
  return s;
}

namespace {

template <typename Row>
void set_ratios(std::vector<Row>& rows) {
  int64_t sum = 0;
  for (const Row& r : rows) sum += r.stats.total;
  for (Row& r : rows) r.stats.ratio = sum > 0 ? 100.0 * static_cast<double>(r.stats.total) / static_cast<double>(sum) : 0;
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.stats.total > b.stats.total; });
}

// EMU_RUN.speed (virtual ns per wall ns; 0 on a node that runs as fast as it can) as the run's
// pace, in the words npu-run uses.
std::string pace_of(const std::string& speed) {
  double v = 0;
  auto [end, ec] = std::from_chars(speed.data(), speed.data() + speed.size(), v);
  if (ec != std::errc() || end == speed.data() || !std::isfinite(v) || v < 0) return "NA";
  if (v == 0) return "fast";
  char text[32];
  std::snprintf(text, sizeof text, "paced at speed %g", v);
  return text;
}

ReportHeader header_of(const ProfileData& d) {
  ReportHeader h;
  h.db = d.db_path;
  h.ranks = d.ranks;
  h.device_ranks = d.device_ranks;
  h.device_hosts = d.device_hosts;
  auto meta = [&](const char* k) { auto it = d.meta.find(k); return it == d.meta.end() ? std::string() : it->second; };
  h.schema_version = meta("SCHEMA_VERSION");
  h.producer = meta("PRODUCER");
  h.complete = d.complete;
  h.node_lost = d.run_value("node_lost");
  if (!h.node_lost.empty()) h.complete = false;
  h.node = d.run_value("node", "NA");
  h.node_spec = d.run_value("node_spec", "NA");
  h.mode = d.run_value("mode", "NA");
  if (h.mode == "fast") h.mode = "lossless";  // the names before 0.1.0's vocabulary
  if (h.mode == "paced") h.mode = "lossy";
  h.pace = pace_of(d.run_value("speed", "NA"));
  h.command = d.run_value("command", "NA");
  h.job = d.job_settings;
  for (const auto& [id, name] : d.npu_names) h.devices.emplace_back(id, name);
  // The job whose failure the header reports: the one with the most steps, else (it failed before
  // its first step) the first job that started while recording.
  std::optional<uint64_t> job;
  if (d.main_job) job = static_cast<uint64_t>(*d.main_job);
  for (const NodeEvent& e : d.events) {
    if (!job && e.type == "job_started") job = e.a;
    if (e.type == "job_finished" && job && e.a == *job) h.job_error = e.message;
    if (e.type != "fault_injected") continue;
    std::string fault = e.name + e.message;
    auto same = [&](const ReportHeader::Fault& f) { return f.fault == fault && f.ts == e.ts; };
    auto it = std::find_if(h.faults.begin(), h.faults.end(), same);
    if (it == h.faults.end()) it = h.faults.insert(h.faults.end(), {fault, {}, e.ts, e.a == 1});
    if (e.device >= 0 && std::find(it->devices.begin(), it->devices.end(), e.device) == it->devices.end()) it->devices.push_back(e.device);
  }
  for (ReportHeader::Fault& f : h.faults) std::sort(f.devices.begin(), f.devices.end());
  h.session_start = d.session_start, h.session_end = d.session_end;
  h.tasks = d.tasks.size();
  h.first_task = d.tasks.empty() ? d.session_start : d.tasks.front().start;
  for (const TaskRecord& t : d.tasks) h.first_task = std::min(h.first_task, t.start);
  h.damage = d.damage;
  // Run metadata is text: a number that does not parse is damage, not a crash.
  auto count = [&](const char* key, int64_t fallback, int64_t lo, int64_t hi) {
    std::string text = d.run_value(key, std::to_string(fallback));
    int64_t v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec == std::errc() && end == text.data() + text.size() && v >= lo && v <= hi) return v;
    h.damage.push_back("EMU_RUN." + std::string(key) + " is not a number in range: '" + text.substr(0, 40) + "'");
    return fallback;
  };
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  h.events_recorded = static_cast<uint64_t>(count("events_recorded", 0, 0, kMax));
  h.events_missed = static_cast<uint64_t>(count("events_missed", 0, 0, kMax));
  h.lossless_lost = count("lossless_lost", 0, 0, 1) == 1;
  if (!d.run.empty()) {  // a recording writes these; an empty one is damage, not a value
    for (const char* key : {"node", "node_spec", "topology", "mode", "command", "clock_base_ns"}) {
      if (d.run_value(key, "").empty()) h.damage.push_back("EMU_RUN." + std::string(key) + " is missing or empty");
    }
    count("clock_base_ns", 0, 0, std::numeric_limits<int64_t>::max());
  }
  int64_t exit = count("command_exit", -1, -1, 255);
  if (exit != -1) h.command_exit = static_cast<int>(exit);
  if (!h.damage.empty()) h.complete = false;
  return h;
}

// Groups (id_groups.hpp) in key order, so equal totals keep a stable, reproducible order.

template <std::size_t N, typename V>
std::vector<std::pair<std::array<int64_t, N>, V>> by_key(Groups<N, V>& groups) {
  std::vector<std::pair<std::array<int64_t, N>, V>> out(std::make_move_iterator(groups.begin()),
                                                        std::make_move_iterator(groups.end()));
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

// op_statistic (per device, ratios within the device), op_summary by type and by name. One hash
// lookup per task, for its (name, shapes, dtypes, type) group; the by-type and per-device tables
// are gathered from those groups (a recording has millions of tasks and a few hundred groups).
void op_tables(const ProfileData& d, const std::vector<std::size_t>& sel, Report& r) {
  struct NameGroup {
    std::vector<int64_t> durations;
    double flops = 0;
    std::size_t type = 0;  // index into `types`
  };
  Groups<5, std::size_t> name_index;  // name, shapes, dtypes, opType, taskType -> index into `names`
  std::vector<NameGroup> names;
  Groups<2, std::size_t> type_index;  // opType, taskType -> index into `types`
  std::vector<std::array<int64_t, 2>> types;
  std::vector<std::vector<std::vector<int64_t>>> per_device;  // [device + 1][type]: durations
  for (std::size_t i : sel) {
    const TaskRecord& t = d.tasks[i];
    if (t.op_type < 0) continue;
    auto [it, fresh] = name_index.try_emplace({t.name, t.shapes, t.dtypes, t.op_type, t.task_type}, names.size());
    if (fresh) {
      auto [type, new_type] = type_index.try_emplace({t.op_type, t.task_type}, types.size());
      if (new_type) types.push_back({t.op_type, t.task_type});
      names.push_back({{}, 0, type->second});
    }
    NameGroup& g = names[it->second];
    g.durations.push_back(t.duration());
    g.flops += t.flops;
    auto device = static_cast<std::size_t>(t.device < 0 ? 0 : t.device + 1);
    if (device >= per_device.size()) per_device.resize(device + 1);
    if (g.type >= per_device[device].size()) per_device[device].resize(types.size());
    per_device[device][g.type].push_back(t.duration());
  }
  Groups<3, std::vector<int64_t>> by_device_type;  // device, opType, taskType
  for (std::size_t device = 0; device < per_device.size(); ++device) {
    for (std::size_t type = 0; type < per_device[device].size(); ++type) {
      if (per_device[device][type].empty()) continue;
      by_device_type[{static_cast<int64_t>(device) - 1, types[type][0], types[type][1]}] = std::move(per_device[device][type]);
    }
  }
  std::map<int, std::vector<OpTypeRow>> by_device;
  for (auto& [key, durations] : by_key(by_device_type)) {
    by_device[static_cast<int>(key[0])].push_back({d.str(key[1]), d.str(key[2]), duration_stats(durations)});
  }
  for (auto& [device, rows] : by_device) {
    set_ratios(rows);
    for (OpTypeRow& row : rows) r.device_op_types.push_back({device, std::move(row)});
  }
  Groups<2, std::vector<int64_t>> by_type;  // opType, taskType
  Groups<5, std::pair<std::vector<int64_t>, double>> by_name;
  for (auto& [key, index] : name_index) {
    NameGroup& g = names[index];
    std::vector<int64_t>& of_type = by_type[types[g.type]];
    of_type.insert(of_type.end(), g.durations.begin(), g.durations.end());
    by_name[key] = {std::move(g.durations), g.flops};
  }
  for (auto& [key, durations] : by_key(by_type)) r.op_types.push_back({d.str(key[0]), d.str(key[1]), duration_stats(durations)});
  for (auto& [key, entry] : by_key(by_name)) {
    const std::string &shapes = d.str(key[1]), &dtypes = d.str(key[2]);
    r.op_names.push_back({d.str(key[0]), d.str(key[3]), d.str(key[4]), shapes, dtypes, duration_stats(entry.first),
                          entry.second, input_bytes(shapes, dtypes)});
  }
  set_ratios(r.op_types);
  set_ratios(r.op_names);
  for (const OpNameRow& row : r.op_names) {
    if (row.core_type == "AI_CPU") r.aicpu_ops.push_back(row);
  }
}

// The idle time on its stream before each of `tasks`: from the end of the task before it (in
// (start, globalTaskId) order on the same device and stream) to its start, 0 for a stream's first
// task. One pass over the recording for a few tasks; for many, wait_times(), which has every task's.
std::vector<int64_t> waits_before(const ProfileData& d, const std::vector<std::size_t>& tasks) {
  constexpr std::size_t kFewTasks = 32;  // the pass below costs tasks x recording
  if (tasks.size() > kFewTasks) {
    std::vector<int64_t> all = wait_times(d), out;
    for (std::size_t i : tasks) out.push_back(all[i]);
    return out;
  }
  std::vector<const TaskRecord*> previous(tasks.size(), nullptr);
  auto key = [](const TaskRecord& t) { return std::tie(t.start, t.global_task_id); };
  for (const TaskRecord& t : d.tasks) {
    for (std::size_t k = 0; k < tasks.size(); ++k) {
      const TaskRecord& of = d.tasks[tasks[k]];
      if (t.device != of.device || t.stream != of.stream || !(key(t) < key(of))) continue;
      if (!previous[k] || key(*previous[k]) < key(t)) previous[k] = &t;
    }
  }
  std::vector<int64_t> out(tasks.size(), 0);
  for (std::size_t k = 0; k < tasks.size(); ++k) {
    if (previous[k]) out[k] = std::max<int64_t>(0, d.tasks[tasks[k]].start - previous[k]->end);
  }
  return out;
}

// The longest task of each distinct op (name, type, input shapes), longest first: one row per op,
// not ten near-identical rows of one op on ten devices. Each row counts its op's tasks and devices.
void top_tasks(const ProfileData& d, const std::vector<std::size_t>& sel, int top, Report& r) {
  struct Op {
    std::size_t longest = 0;
    uint64_t tasks = 0;
    std::vector<bool> devices;  // by device id
    int device_count = 0;
  };
  Groups<4, Op> ops;  // name, type, shapes, task type
  auto longer = [&](std::size_t a, std::size_t b) {
    const TaskRecord &x = d.tasks[a], &y = d.tasks[b];
    return x.duration() != y.duration() ? x.duration() > y.duration() : x.global_task_id < y.global_task_id;
  };
  for (std::size_t i : sel) {
    const TaskRecord& t = d.tasks[i];
    auto [it, fresh] = ops.try_emplace({t.name, t.op_type, t.shapes, t.task_type}, Op{i, 0, {}, 0});
    Op& op = it->second;
    if (!fresh && longer(i, op.longest)) op.longest = i;
    ++op.tasks;
    auto device = static_cast<std::size_t>(t.device < 0 ? 0 : t.device + 1);  // 0: the host side
    if (device >= op.devices.size()) op.devices.resize(device + 1);
    if (!op.devices[device]) op.devices[device] = true, ++op.device_count;
  }
  std::vector<const Op*> order;
  for (const auto& [key, op] : ops) order.push_back(&op);
  auto n = std::min(order.size(), static_cast<std::size_t>(std::max(top, 0)));
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n), order.end(),
                    [&](const Op* a, const Op* b) { return longer(a->longest, b->longest); });
  std::vector<std::size_t> shown;
  for (std::size_t k = 0; k < n; ++k) shown.push_back(order[k]->longest);
  std::vector<int64_t> waits = waits_before(d, shown);
  for (std::size_t k = 0; k < n; ++k) {
    const TaskRecord& t = d.tasks[order[k]->longest];
    std::string core = d.str(t.task_type);
    r.top_tasks.push_back({t.device, t.stream, t.task_id, t.name >= 0 ? d.str(t.name) : core,
                           t.op_type >= 0 ? d.str(t.op_type) : core, core, t.shapes >= 0 ? d.str(t.shapes) : "",
                           t.start, t.duration(), waits[k], t.block_num, order[k]->tasks, order[k]->device_count});
  }
}

// Per device, its pipeline receives (start, duration), in start order.
std::map<int, std::vector<std::pair<int64_t, int64_t>>> receives(const ProfileData& d) {
  std::map<int, std::vector<std::pair<int64_t, int64_t>>> out;
  for (const CollectiveRecord& c : d.collectives) {
    if (is_receive(d.str(c.op_type))) out[c.device].emplace_back(c.start, c.end - c.start);
  }
  for (auto& [device, list] : out) std::sort(list.begin(), list.end());
  return out;
}

void step_rows(const ProfileData& d, std::optional<int64_t> step, Report& r) {
  static const Overlap kIdle;
  auto recv = receives(d);
  for (const StepWindow& w : d.steps) {
    if (step && w.step != *step) continue;
    auto it = d.overlap.find(w.device);
    StepRow row{w.device, w.step, breakdown(it == d.overlap.end() ? kIdle : it->second, w.window), 0};
    if (auto on = recv.find(w.device); on != recv.end()) {
      auto first = std::lower_bound(on->second.begin(), on->second.end(), std::pair{w.window.start, int64_t{0}});
      Intervals waits;
      for (auto x = first; x != on->second.end() && x->first < w.window.end; ++x) {
        row.bubble += x->second;
        waits.push_back({x->first, x->first + x->second});
      }
      const Intervals& compute = it == d.overlap.end() ? kIdle.compute : it->second.compute;
      row.bubble_not_overlapped = total(clip(subtract(union_of(std::move(waits)), compute), w.window));
    }
    r.steps.push_back(row);
  }
}

void comm_tables(const ProfileData& d, const StepFilter& filter, Report& r) {
  std::map<int64_t, std::vector<int64_t>> by_type;
  std::map<std::pair<int, int64_t>, std::vector<int64_t>> by_device;
  std::map<std::tuple<int64_t, int64_t, int64_t, int>, std::vector<int64_t>> by_size;  // group, type, bytes, ranks
  // A pipeline transfer's shortest over both its ends (the Send's and the Receive's), per
  // (group, bytes, from rank, to rank); and each row's transfers.
  std::map<std::tuple<int64_t, int64_t, int, int>, int64_t> shortest;
  std::map<std::tuple<int64_t, int64_t, int64_t, int>, std::set<std::pair<int, int>>> transfers;
  for (const CollectiveRecord& c : d.collectives) {
    if (!filter.contains(c.device, c.start)) continue;
    by_type[c.op_type].push_back(c.end - c.start);
    by_device[{c.device, c.op_type}].push_back(c.end - c.start);
    by_size[{c.group, c.op_type, c.bytes, c.ranks}].push_back(c.end - c.start);
    if (!is_point_to_point(d.str(c.op_type))) continue;
    auto [it, fresh] = shortest.try_emplace({c.group, c.bytes, c.src_rank, c.dst_rank}, c.end - c.start);
    it->second = std::min(it->second, c.end - c.start);
    transfers[{c.group, c.op_type, c.bytes, c.ranks}].insert({c.src_rank, c.dst_rank});
  }
  for (auto& [type, durations] : by_type) r.comm_types.push_back({d.str(type), duration_stats(durations)});
  set_ratios(r.comm_types);
  std::map<int, std::vector<CommTypeRow>> device_rows;
  for (auto& [key, durations] : by_device) device_rows[key.first].push_back({d.str(key.second), duration_stats(durations)});
  for (auto& [device, rows] : device_rows) {
    set_ratios(rows);
    for (CommTypeRow& row : rows) r.device_comm_types.push_back({device, std::move(row)});
  }
  for (auto& [key, durations] : by_size) {
    auto [group, type, bytes, ranks] = key;
    DurationStats s = duration_stats(durations);
    std::string op = d.str(type);
    std::string group_name = group < 0 ? "N/A" : d.str(group);
    // A Send or Receive waits for its other end: its average holds the pipeline's bubble, and only
    // a transfer's shortest call over both its ends, the later end waiting for nobody, says the
    // link's rate (the average read 1.4 GB/s on a healthy 56 GB/s link). The row's transfers each
    // have their shortest; the slowest of those is the row's (a degraded boundary stays in sight).
    double slowest_link = 0;
    for (const auto& [from, to] : transfers[key]) {
      slowest_link = std::max(slowest_link, static_cast<double>(shortest[{group, bytes, from, to}]));
    }
    const double time = is_point_to_point(op) ? slowest_link : s.avg;
    double algbw = time > 0 ? static_cast<double>(bytes) * algbw_size_factor(op, ranks) / (time / 1e9) : 0;
    r.comm_sizes.push_back({group_name, op, bytes, ranks, s.count, s.avg, algbw, algbw * busbw_factor(op, ranks)});
  }
  std::sort(r.comm_sizes.begin(), r.comm_sizes.end(), [](const CommSizeRow& a, const CommSizeRow& b) {
    return std::tie(a.group, a.op_type, a.bytes) < std::tie(b.group, b.op_type, b.bytes);
  });
}

// Throttle periods from the node's clock changes (every DVFS step is a throttle_changed event:
// reasons before/after, the clock after): from the first step with a reason to the one that
// clears them, with the time spent at each clock.
void throttle_periods(const ProfileData& d, Report& r) {
  struct Open {
    ThrottlePeriod period;
    int64_t since = 0;  // the current clock's start
    int clock = 0;
  };
  std::map<int, Open> open;
  for (const auto& [device, s] : d.initial_clock) {  // throttled before the recording began
    if (s.reasons != 0) open[device] = {{device, d.session_start, d.session_start, true, s.reasons, static_cast<double>(s.clock_mhz), {}},
                                        d.session_start, s.clock_mhz};
  }
  for (const NodeEvent& e : d.events) {
    if (e.type != "throttle_changed") continue;
    auto it = open.find(e.device);
    int clock = static_cast<int>(e.c);
    if (it == open.end()) {
      if (e.b != 0) open[e.device] = {{e.device, e.ts, e.ts, true, e.b, static_cast<double>(clock), {}}, e.ts, clock};
      continue;
    }
    Open& o = it->second;
    o.period.time_at_mhz[o.clock] += e.ts - o.since;
    o.since = e.ts, o.clock = clock;
    o.period.reasons |= e.b;
    // The event that clears the reasons ends the period: its clock (max again, or an idle chip's
    // idle clock) was never a throttled one.
    if (clock > 0 && e.b != 0) o.period.min_clock_mhz = std::min(o.period.min_clock_mhz, static_cast<double>(clock));
    if (e.b == 0) {
      o.period.end = e.ts, o.period.open = false;
      r.throttles.push_back(std::move(o.period));
      open.erase(it);
    }
  }
  for (auto& [device, o] : open) {
    o.period.end = std::max(d.session_end, o.since);
    o.period.time_at_mhz[o.clock] += o.period.end - o.since;
    r.throttles.push_back(std::move(o.period));
  }
}

void clock_timeline(const ProfileData& d, Report& r) {
  for (const auto& [device, s] : d.initial_clock) {
    if (s.clock_mhz > 0) r.clock_timeline.push_back({device, d.session_start, s.clock_mhz});
  }
  for (const NodeEvent& e : d.events) {
    if (e.type == "throttle_changed" && e.c > 0) r.clock_timeline.push_back({e.device, e.ts, static_cast<int>(e.c)});
  }
  std::stable_sort(r.clock_timeline.begin(), r.clock_timeline.end(),
                   [](const ClockPoint& a, const ClockPoint& b) { return a.device < b.device; });
}

}  // namespace

double ThrottlePeriod::mean_clock_mhz() const {
  double weighted = 0, total = 0;
  for (const auto& [mhz, ns] : time_at_mhz) weighted += static_cast<double>(mhz) * static_cast<double>(ns), total += static_cast<double>(ns);
  return total > 0 ? weighted / total : min_clock_mhz;
}

StepFilter::StepFilter(const ProfileData& d, std::optional<int64_t> step) : all_(!step) {
  for (const StepWindow& w : d.steps) {
    if (step && w.step == *step) windows_[w.device] = w.window;
  }
}

bool StepFilter::contains(int device, int64_t start) const {
  if (all_) return true;
  auto it = windows_.find(device);
  return it != windows_.end() && start >= it->second.start && start < it->second.end;
}

Result<std::vector<std::size_t>> select_tasks(const ProfileData& d, std::optional<int64_t> step) {
  StepFilter filter(d, step);
  if (step && filter.empty()) {
    int64_t last = kFirstStep - 1;
    for (const StepWindow& w : d.steps) last = std::max(last, w.step);
    return InvalidArgument(d.db_path + ": no step " + std::to_string(*step) + " recorded" +
                           (last < kFirstStep ? std::string(" (the recording has no steps)")
                                              : " (steps " + std::to_string(kFirstStep) + "-" + std::to_string(last) + ")"));
  }
  std::vector<std::size_t> sel;
  sel.reserve(d.tasks.size());
  for (std::size_t i = 0; i < d.tasks.size(); ++i) {
    if (filter.contains(d.tasks[i].device, d.tasks[i].start)) sel.push_back(i);
  }
  return sel;
}

std::vector<int64_t> wait_times(const ProfileData& d) {
  // Per (device, stream), in start order: tasks arrive in globalTaskId order, which is already
  // start order on an in-order stream, so most buckets need no sort.
  std::unordered_map<int64_t, std::vector<std::size_t>> streams;  // device << 32 | stream
  for (std::size_t i = 0; i < d.tasks.size(); ++i) {
    streams[int64_t{d.tasks[i].device} << 32 | (d.tasks[i].stream & 0xffffffff)].push_back(i);
  }
  std::vector<int64_t> wait(d.tasks.size(), 0);
  auto earlier = [&](std::size_t a, std::size_t b) {
    return std::tie(d.tasks[a].start, d.tasks[a].global_task_id) < std::tie(d.tasks[b].start, d.tasks[b].global_task_id);
  };
  for (auto& [key, list] : streams) {
    if (!std::is_sorted(list.begin(), list.end(), earlier)) std::sort(list.begin(), list.end(), earlier);
    for (std::size_t k = 1; k < list.size(); ++k) {
      wait[list[k]] = std::max<int64_t>(0, d.tasks[list[k]].start - d.tasks[list[k - 1]].end);
    }
  }
  return wait;
}

Result<Report> build_report(const ProfileData& data, const ReportOptions& options) {
  auto sel = select_tasks(data, options.step);
  if (!sel.ok()) return sel.status();
  Report r;
  r.header = header_of(data);
  r.header.step_filter = options.step;
  {
    // The op tables on a second core: they write only the op rows, which nothing else below reads.
    std::jthread ops([&] { op_tables(data, *sel, r); });
    top_tasks(data, *sel, options.top, r);
    step_rows(data, options.step, r);
    comm_tables(data, StepFilter(data, options.step), r);
    memory_tables(data, r);
    throttle_periods(data, r);
    clock_timeline(data, r);
  }
  r.ranks = rank_rows(r);
  add_findings(data, r);
  return r;
}

}  // namespace npukit::prof
