#include "profiler/render/chrome_trace.hpp"

#include <fstream>
#include <map>
#include <set>
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

class TraceBuilder {
 public:
  explicit TraceBuilder(const ProfileData& d) : d_(d), base_(d.session_start) {}
  json build();

 private:
  double us(int64_t ns) const { return static_cast<double>(ns - base_) / 1000.0; }
  void process(int64_t pid, const std::string& name, int sort);
  void thread(int64_t pid, int64_t tid, const std::string& name, int sort);
  void slice(int64_t pid, int64_t tid, const std::string& name, const char* cat, int64_t start, int64_t end, json args);
  void tasks();
  void launches();
  void overlap();
  void counters();

  const ProfileData& d_;
  int64_t base_;
  json events_ = json::array();
  std::set<int64_t> processes_;
  std::set<std::pair<int64_t, int64_t>> threads_;
};

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

void TraceBuilder::slice(int64_t pid, int64_t tid, const std::string& name, const char* cat, int64_t start, int64_t end,
                         json args) {
  events_.push_back({{"ph", "X"}, {"name", name}, {"cat", cat}, {"pid", pid}, {"tid", tid}, {"ts", us(start)},
                     {"dur", static_cast<double>(end - start) / 1000.0}, {"args", std::move(args)}});
}

void TraceBuilder::tasks() {
  std::map<std::pair<int, int64_t>, int64_t> collective_names;  // (device, start) -> opName
  for (const CollectiveRecord& c : d_.collectives) collective_names[{c.device, c.start}] = c.op_name;
  for (const TaskRecord& t : d_.tasks) {
    int64_t pid = kHardwarePidBase + t.device;
    process(pid, "Ascend Hardware (device " + std::to_string(t.device) + ")", 100 + t.device);
    thread(pid, t.stream, "Stream " + std::to_string(t.stream), static_cast<int>(t.stream));
    const std::string& type = d_.str(t.task_type);
    std::string name = type;
    json args = {{"Task Type", type}, {"Stream Id", t.stream}, {"Task Id", t.task_id}, {"connection_id", t.connection_id}};
    if (t.op_type >= 0) {
      name = d_.str(t.name);
      args["OP Type"] = d_.str(t.op_type);
      args["Input Shapes"] = d_.str(t.shapes);
      args["Input Data Types"] = d_.str(t.dtypes);
      args["Block Num"] = t.block_num;
      args["flops"] = t.flops;
    } else if (auto it = collective_names.find({t.device, t.start}); it != collective_names.end()) {
      name = d_.str(it->second);
    }
    slice(pid, t.stream, name, "task", t.start, t.end, std::move(args));
  }
}

void TraceBuilder::launches() {
  std::unordered_map<int64_t, const TaskRecord*> by_connection;
  by_connection.reserve(d_.tasks.size());
  for (const TaskRecord& t : d_.tasks) by_connection.emplace(t.connection_id, &t);
  for (const LaunchRecord& l : d_.launches) {
    int64_t pid = l.global_tid >> 32, tid = l.global_tid & 0xffffffff;
    process(pid, "CANN (pid " + std::to_string(pid) + ")", 2);
    thread(pid, tid, "Host thread (device " + std::to_string(tid) + ")", static_cast<int>(tid));
    slice(pid, tid, d_.str(l.name), "cann", l.start, l.end, {{"connection_id", l.connection_id}, {"level", l.type}});
    auto it = by_connection.find(l.connection_id);
    if (it == by_connection.end()) continue;
    const TaskRecord& t = *it->second;
    json common = {{"cat", "HostToDevice"}, {"name", "HostToDevice"}, {"id", l.connection_id}};
    json s = common, f = common;
    s.update({{"ph", "s"}, {"pid", pid}, {"tid", tid}, {"ts", us(l.start)}});
    f.update({{"ph", "f"}, {"bp", "e"}, {"pid", kHardwarePidBase + t.device}, {"tid", t.stream}, {"ts", us(t.start)}});
    events_.push_back(std::move(s));
    events_.push_back(std::move(f));
  }
}

void TraceBuilder::overlap() {
  static const char* kThreads[] = {"Computing", "Communication", "Communication(Not Overlapped)", "Free", "Steps"};
  for (const auto& [device, o] : d_.overlap) {
    int64_t pid = kOverlapPidBase + device;
    process(pid, "Overlap Analysis (device " + std::to_string(device) + ")", 200 + device);
    const Intervals* kinds[] = {&o.compute, &o.communication, &o.comm_not_overlapped, &o.free};
    for (int k = 0; k < 4; ++k) {
      thread(pid, k + 1, kThreads[k], k + 1);
      for (const Interval& i : *kinds[k]) slice(pid, k + 1, kThreads[k], "overlap", i.start, i.end, json::object());
    }
  }
  for (const StepWindow& w : d_.steps) {
    int64_t pid = kOverlapPidBase + w.device;
    process(pid, "Overlap Analysis (device " + std::to_string(w.device) + ")", 200 + w.device);
    thread(pid, 5, kThreads[4], 5);
    slice(pid, 5, "Step " + std::to_string(w.step), "step", w.window.start, w.window.end, {{"step", w.step}});
  }
}

void TraceBuilder::counters() {
  for (const CounterSample& c : d_.counters) {
    auto track = kCounterTracks.find(c.name);
    if (track == kCounterTracks.end() || c.device < 0) continue;
    int64_t pid = kHardwarePidBase + c.device;
    process(pid, "Ascend Hardware (device " + std::to_string(c.device) + ")", 100 + c.device);
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

json chrome_trace(const ProfileData& data) { return TraceBuilder(data).build(); }

Status write_chrome_trace(const ProfileData& data, const std::string& file) {
  json trace = chrome_trace(data);
  std::ofstream out(file);
  if (!out) return InvalidArgument(file + ": cannot open for writing");
  out << trace.dump() << "\n";
  out.close();
  if (!out) return Status(Code::kInternal, file + ": write failed (disk full?)");
  return Status::Ok();
}

}  // namespace npukit::prof
