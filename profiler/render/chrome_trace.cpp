#include "profiler/render/chrome_trace.hpp"
#include "profiler/render/report_render.hpp"
#include "telemetry/json_reader.hpp"

#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <unordered_map>

namespace npukit::prof {

namespace {

using nlohmann::json;

struct CounterTrack {
  const char* label;
  double scale;  // value / scale
};

const std::map<std::string, CounterTrack> kCounterTracks = {
    {"npu_aicore_clock_mhz", {"AI Core Freq (MHz)", 1}},
    {"npu_power_watts", {"Power (W)", 1}},
    {"npu_temperature_celsius", {"Temperature (C)", 1}},
    {"npu_hbm_used_bytes", {"HBM used (MiB)", 1 << 20}},
    {"hbm_bandwidth_bytes_per_s", {"HBM bandwidth (GB/s)", 1e9}},
    {"hccs_tx_bytes_per_s", {"HCCS tx (GB/s)", 1e9}}};

const char* const kOverlapThreads[] = {"Computing", "Communication", "Communication(Not Overlapped)", "Free", "Steps"};

// What the options select: per device, the time window of its selected steps.
class Selection {
 public:
  static Result<Selection> make(const ProfileData& d, const ChromeOptions& o);
  bool device(int device) const { return windows_.count(device) > 0; }
  // Whether [start, end) on `device` is shown (starts inside its window).
  bool contains(int device, int64_t start) const {
    auto it = windows_.find(device);
    return it != windows_.end() && start >= it->second.start && start < it->second.end;
  }
  Interval window(int device) const { return windows_.at(device); }
  std::vector<int> devices() const {
    std::vector<int> out;
    for (const auto& [device, w] : windows_) out.push_back(device);
    return out;
  }
  bool step(const StepWindow& w) const {
    return device(w.device) && (!steps_ || (w.step >= steps_->first && w.step <= steps_->second));
  }

 private:
  std::map<int, Interval> windows_;
  std::optional<std::pair<int64_t, int64_t>> steps_;
};

Result<Selection> Selection::make(const ProfileData& d, const ChromeOptions& o) {
  Selection s;
  s.steps_ = o.steps;
  std::set<int> devices;
  for (const TaskRecord& t : d.tasks) devices.insert(t.device);
  for (int device : devices) {
    if (o.ranks.empty() || o.ranks.count(d.rank_of(device))) s.windows_[device] = {d.session_start, d.session_end + 1};
  }
  if (s.windows_.empty()) return InvalidArgument("no rank of this recording is among those asked for");
  if (!o.steps) return s;
  std::map<int, Interval> picked;
  for (const StepWindow& w : d.steps) {
    if (!s.step(w)) continue;
    auto [it, fresh] = picked.try_emplace(w.device, w.window);
    it->second = {std::min(it->second.start, w.window.start), std::max(it->second.end, w.window.end)};
  }
  if (picked.empty()) {
    return InvalidArgument("no step " + std::to_string(o.steps->first) + "-" + std::to_string(o.steps->second) +
                           " recorded" + (d.steps.empty() ? " (the recording has no steps)" : ""));
  }
  s.windows_ = std::move(picked);
  return s;
}

class TraceBuilder {
 public:
  TraceBuilder(const ProfileData& d, const Selection& sel);
  json build();

 private:
  int64_t first_time() const;
  double us(int64_t ns) const { return static_cast<double>(ns - base_) / 1000.0; }
  void process(int64_t pid, const std::string& name, int sort);
  void thread(int64_t pid, int64_t tid, const std::string& name, int sort);
  void slice(int64_t pid, int64_t tid, const std::string& name, const char* cat, int64_t start, int64_t end, json args);
  std::string rank_name(int device) const { return "Rank " + std::to_string(d_.rank_of(device)); }
  int sort_of(int device, int part) const { return 3 * d_.rank_of(device) + part; }
  void tasks();
  void launches();
  void overlap();
  void counters();

  const ProfileData& d_;
  const Selection& sel_;
  int64_t base_;
  json events_ = json::array();
  std::set<int64_t> processes_;
  std::set<std::pair<int64_t, int64_t>> threads_;
  std::unordered_map<int64_t, const TaskRecord*> shown_;  // connectionId -> its shown task
};

TraceBuilder::TraceBuilder(const ProfileData& d, const Selection& sel) : d_(d), sel_(sel) {
  for (const TaskRecord& t : d_.tasks) {
    if (sel_.contains(t.device, t.start)) shown_.emplace(t.connection_id, &t);
  }
  base_ = first_time();
}

// The earliest shown moment: a shown task, the call that launched it, or a selected window.
int64_t TraceBuilder::first_time() const {
  int64_t first = std::numeric_limits<int64_t>::max();
  for (const auto& [connection, t] : shown_) first = std::min(first, t->start);
  for (const LaunchRecord& l : d_.launches) {
    if (shown_.count(l.connection_id)) first = std::min(first, l.start);
  }
  for (int device : sel_.devices()) first = std::min(first, sel_.window(device).start);
  return first == std::numeric_limits<int64_t>::max() ? d_.session_start : first;
}

void TraceBuilder::process(int64_t pid, const std::string& name, int sort) {
  if (!processes_.insert(pid).second) return;
  events_.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", pid}, {"tid", 0}, {"args", {{"name", name}}}});
  events_.push_back({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", pid}, {"tid", 0}, {"args", {{"sort_index", sort}}}});
}

void TraceBuilder::thread(int64_t pid, int64_t tid, const std::string& name, int sort) {
  if (!threads_.insert({pid, tid}).second) return;
  events_.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", pid}, {"tid", tid}, {"args", {{"name", name}}}});
  events_.push_back({{"ph", "M"}, {"name", "thread_sort_index"}, {"pid", pid}, {"tid", tid}, {"args", {{"sort_index", sort}}}});
}

// ts and dur such that ts + dur (in doubles) is exactly the end's ts; zero length: an instant.
void TraceBuilder::slice(int64_t pid, int64_t tid, const std::string& name, const char* cat, int64_t start, int64_t end,
                         json args) {
  double ts = us(start), stop = us(end);
  if (end <= start) {
    events_.push_back({{"ph", "i"}, {"s", "t"}, {"name", name}, {"cat", cat}, {"pid", pid}, {"tid", tid}, {"ts", ts},
                       {"args", std::move(args)}});
    return;
  }
  double dur = stop - ts;
  for (int i = 0; i < 8 && ts + dur != stop; ++i) dur = std::nextafter(dur, ts + dur > stop ? 0.0 : stop);
  while (ts + dur > stop) dur = std::nextafter(dur, 0.0);
  events_.push_back({{"ph", "X"}, {"name", name}, {"cat", cat}, {"pid", pid}, {"tid", tid}, {"ts", ts}, {"dur", dur},
                     {"args", std::move(args)}});
}

void TraceBuilder::tasks() {
  std::map<std::pair<int, int64_t>, std::pair<int64_t, int64_t>> collectives;  // (device, start) -> opName, group
  for (const CollectiveRecord& c : d_.collectives) collectives[{c.device, c.start}] = {c.op_name, c.group};
  for (const TaskRecord& t : d_.tasks) {
    if (!sel_.contains(t.device, t.start)) continue;
    int64_t pid = kHardwarePidBase + t.device;
    process(pid, rank_name(t.device) + " Ascend Hardware (" + device_label(d_.device_hosts, t.device) + ")", sort_of(t.device, 1));
    thread(pid, t.stream, "Stream " + std::to_string(t.stream), static_cast<int>(t.stream));
    std::string name = d_.str(t.task_type);
    json args = {{"Task Id", t.task_id}, {"connection_id", t.connection_id}};
    if (t.op_type >= 0) {
      name = d_.str(t.name);
      args.update({{"OP Type", d_.str(t.op_type)}, {"Input Shapes", d_.str(t.shapes)},
                   {"Input Data Types", d_.str(t.dtypes)}, {"Block Num", t.block_num}});
    } else if (auto it = collectives.find({t.device, t.start}); it != collectives.end()) {
      name = d_.str(it->second.first);
      args["Group"] = d_.str(it->second.second);
    }
    slice(pid, t.stream, name, d_.str(t.task_type).c_str(), t.start, t.end, std::move(args));
  }
}

void TraceBuilder::launches() {
  for (const LaunchRecord& l : d_.launches) {
    auto it = shown_.find(l.connection_id);
    if (it == shown_.end()) continue;
    const TaskRecord& t = *it->second;
    int64_t pid = kHostPidBase + t.device, tid = l.global_tid & 0xffffffff;
    process(pid, rank_name(t.device) + " CANN", sort_of(t.device, 0));
    thread(pid, tid, "Host thread", static_cast<int>(tid));
    slice(pid, tid, d_.str(l.name), "cann", l.start, l.end, {{"connection_id", l.connection_id}});
    if (l.end <= l.start) continue;  // an instant binds no flow
    json common = {{"cat", "HostToDevice"}, {"name", "HostToDevice"}, {"id", l.connection_id}};
    json s = common, f = common;
    s.update({{"ph", "s"}, {"pid", pid}, {"tid", tid}, {"ts", us(l.start)}});
    f.update({{"ph", "f"}, {"bp", "e"}, {"pid", kHardwarePidBase + t.device}, {"tid", t.stream}, {"ts", us(t.start)}});
    events_.push_back(std::move(s));
    events_.push_back(std::move(f));
  }
}

void TraceBuilder::overlap() {
  for (const auto& [device, o] : d_.overlap) {
    if (!sel_.device(device)) continue;
    Interval window = sel_.window(device);
    int64_t pid = kOverlapPidBase + device;
    process(pid, rank_name(device) + " Overlap Analysis", sort_of(device, 2));
    const Intervals* kinds[] = {&o.compute, &o.communication, &o.comm_not_overlapped, &o.free};
    for (int k = 0; k < 4; ++k) {
      thread(pid, k + 1, kOverlapThreads[k], k + 1);
      for (const Interval& i : clip(*kinds[k], window)) slice(pid, k + 1, kOverlapThreads[k], "overlap", i.start, i.end, {});
    }
  }
  for (const StepWindow& w : d_.steps) {
    if (!sel_.step(w)) continue;
    int64_t pid = kOverlapPidBase + w.device;
    process(pid, rank_name(w.device) + " Overlap Analysis", sort_of(w.device, 2));
    thread(pid, 5, kOverlapThreads[4], 5);
    slice(pid, 5, "Step " + std::to_string(w.step), "step", w.window.start, w.window.end, {{"step", w.step}});
  }
}

void TraceBuilder::counters() {
  for (const CounterSample& c : d_.counters) {
    auto track = kCounterTracks.find(c.name);
    if (track == kCounterTracks.end() || c.device < 0 || !sel_.device(c.device)) continue;
    Interval window = sel_.window(c.device);
    if (c.ts < window.start || c.ts > window.end) continue;
    int64_t pid = kHardwarePidBase + c.device;
    process(pid, rank_name(c.device) + " Ascend Hardware (" + device_label(d_.device_hosts, c.device) + ")", sort_of(c.device, 1));
    // Counters are process-scoped: no tid.
    events_.push_back({{"ph", "C"}, {"name", track->second.label}, {"pid", pid}, {"ts", us(c.ts)},
                       {"args", {{"value", c.value / track->second.scale}}}});
  }
}

json TraceBuilder::build() {
  tasks();
  launches();
  overlap();
  counters();
  return {{"traceEvents", std::move(events_)},
          {"displayTimeUnit", "ms"},
          {"otherData", {{"baseTimeNanoseconds", base_}, {"database", d_.db_path}, {"producer", "npukit npu-prof"}}}};
}

}  // namespace

std::optional<std::pair<int64_t, int64_t>> default_steps(const ProfileData& data) {
  int64_t last = kFirstStep - 1;
  for (const StepWindow& w : data.steps) last = std::max(last, w.step);
  if (last - kFirstStep + 1 <= kDefaultSteps) return std::nullopt;
  return std::pair<int64_t, int64_t>{kFirstStep + 1, std::min(last, kFirstStep + kDefaultSteps)};
}

Result<json> chrome_trace(const ProfileData& data, const ChromeOptions& options) {
  auto sel = Selection::make(data, options);
  if (!sel.ok()) return sel.status();
  return TraceBuilder(data, *sel).build();
}

Status write_chrome_trace(const json& trace, const std::string& file) { return write_text_file(file, json_text(trace) + "\n"); }

}  // namespace npukit::prof
