#include "profiler/analyze/ranks.hpp"
#include "profiler/analyze/summary.hpp"
#include "profiler/render/report_render.hpp"

namespace npukit::prof {

namespace {

using nlohmann::json;

json faults_json(const ReportHeader& h) {
  json out = json::array();
  for (const ReportHeader::Fault& f : h.faults) {
    out.push_back({{"fault", f.fault}, {"devices", f.devices}, {"where", h.fault_where(f)},
                   {"after_first_task_s", static_cast<double>(f.ts - h.first_task) / 1e9},
                   {"in_force_at_start", f.before_recording}});
  }
  return out;
}

json stats(const DurationStats& s) {
  return {{"count", s.count},   {"total_ns", s.total},   {"avg_ns", s.avg},    {"min_ns", s.min},
          {"max_ns", s.max},    {"median_ns", s.median}, {"ratio_percent", s.ratio}};
}

json header(const ReportHeader& h) {
  json devices = json::array();
  for (const auto& [id, name] : h.devices) devices.push_back({{"id", id}, {"name", name}});
  return {{"database", h.db},
          {"ranks", h.ranks},
          {"schema_version", h.schema_version},
          {"producer", h.producer},
          {"complete", h.complete},
          {"damage", h.damage},
          {"node", h.node},
          {"hosts", h.hosts()},
          {"node_spec", h.node_spec},
          {"mode", h.mode},
          {"pace", h.pace},
          {"command", h.command},
          {"job", h.job},
          {"command_exit", h.command_exit ? json(*h.command_exit) : json(nullptr)},
          {"job_error", h.job_error.empty() ? json(nullptr) : json(h.job_error)},
          {"faults", faults_json(h)},
          {"devices", devices},
          {"session_start_ns", h.session_start},
          {"session_end_ns", h.session_end},
          {"first_task_ns", h.first_task},
          {"tasks", h.tasks},
          {"events_recorded", h.events_recorded},
          {"events_missed", h.events_missed},
          {"lossless_lost", h.lossless_lost},
          {"step_filter", h.step_filter ? json(*h.step_filter) : json(nullptr)}};
}

json op_name(const OpNameRow& r) {
  return {{"name", r.name},     {"op_type", r.op_type}, {"core_type", r.core_type},       {"input_shapes", r.shapes},
          {"input_dtypes", r.dtypes}, {"flops", r.flops}, {"input_bytes_per_call", r.input_bytes}, {"stats", stats(r.stats)}};
}

json step_json(const StepRow& s) {  // also each slowest step of the summary
  const StepBreakdown& b = s.b;
  return {{"device", s.device},        {"step", s.step},         {"step_ns", b.step},
          {"computing_ns", b.computing}, {"communication_ns", b.communication}, {"overlapped_ns", b.overlapped},
          {"communication_not_overlapped_ns", b.comm_not_overlapped}, {"free_ns", b.free}, {"preparing_ns", b.preparing}};
}

json ops(const Report& r) {
  json out = {{"op_types", json::array()}, {"op_types_by_device", json::array()}, {"op_names", json::array()},
              {"aicpu_ops", json::array()}};
  for (const OpTypeRow& t : r.op_types) out["op_types"].push_back({{"op_type", t.op_type}, {"core_type", t.core_type}, {"stats", stats(t.stats)}});
  for (const DeviceOpTypeRow& t : r.device_op_types) {
    out["op_types_by_device"].push_back(
        {{"device", t.device}, {"op_type", t.row.op_type}, {"core_type", t.row.core_type}, {"stats", stats(t.row.stats)}});
  }
  for (const OpNameRow& n : r.op_names) out["op_names"].push_back(op_name(n));
  for (const OpNameRow& n : r.aicpu_ops) out["aicpu_ops"].push_back(op_name(n));
  return out;
}

json communication(const Report& r) {
  json out = {{"by_type", json::array()}, {"by_device", json::array()}, {"by_group", json::array()}};
  for (const CommTypeRow& c : r.comm_types) out["by_type"].push_back({{"op_type", c.op_type}, {"stats", stats(c.stats)}});
  for (const DeviceCommTypeRow& c : r.device_comm_types) {
    out["by_device"].push_back({{"device", c.device}, {"op_type", c.row.op_type}, {"stats", stats(c.row.stats)}});
  }
  for (const CommSizeRow& c : r.comm_sizes) {
    out["by_group"].push_back({{"group", c.group}, {"op_type", c.op_type}, {"bytes_per_rank", c.bytes}, {"ranks", c.ranks}, {"count", c.count},
                              {"avg_ns", c.avg_ns}, {"algbw_bytes_per_s", c.algbw}, {"busbw_bytes_per_s", c.busbw}});
  }
  return out;
}

json memory(const Report& r) {
  json out = {{"devices", json::array()}, {"timeline", json::array()}};
  for (const MemoryRow& m : r.memory) {
    out["devices"].push_back({{"device", m.device}, {"peak_bytes", m.peak_bytes}, {"peak_ts_ns", m.peak_ts},
                              {"first_bytes", m.first_bytes}, {"last_bytes", m.last_bytes}, {"samples", m.samples},
                              {"samples_in_job", m.samples_in_job},
                              {"allocated_peak_bytes", m.allocated_peak >= 0 ? json(m.allocated_peak) : json()},
                              {"reserved_peak_bytes", m.reserved_peak >= 0 ? json(m.reserved_peak) : json()},
                              {"capacity_bytes", m.capacity_bytes}});
  }
  for (const MemoryPoint& p : r.memory_timeline) out["timeline"].push_back({{"device", p.device}, {"ts_ns", p.ts}, {"bytes", p.bytes}});
  return out;
}

// Per rank (ms per step) and the straggler verdict (ranks.hpp).
json ranks(const Report& r) {
  json rows = json::array();
  for (const RankRow& row : r.ranks) {
    rows.push_back({{"device", row.device}, {"rank", row.rank >= 0 ? json(row.rank) : json()}, {"steps", row.steps},
                    {"step_ms", row.step / 1e6}, {"work_ms", row.work() / 1e6}, {"computing_ms", row.computing / 1e6},
                    {"communication_ms", row.communication / 1e6}, {"comm_not_overlapped_ms", row.comm_exposed / 1e6},
                    {"idle_before_first_task_ms", row.preparing / 1e6}, {"idle_between_tasks_ms", row.other_idle / 1e6}});
  }
  json verdict;
  if (r.ranks.size() >= 2) {
    StragglerVerdict v = straggler(r.ranks);
    const RankRow& slow = r.ranks[static_cast<std::size_t>(v.index)];
    json devices = {slow.device};
    for (int i : v.tied) devices.push_back(r.ranks[static_cast<std::size_t>(i)].device);
    verdict = {{"straggler", v.slow}, {"slowest_device", slow.device}, {"straggler_devices", devices}, {"excess_ms", v.excess_ns / 1e6},
               {"others_median_work_ms", v.baseline_ns / 1e6}, {"phase", v.phase},
               {"phase_excess_ms", v.phase_excess_ns / 1e6}, {"threshold_percent", 100 * straggler_threshold()}};
  }
  return {{"per_rank", rows}, {"verdict", verdict}};
}

json summary(const Report& r) {
  StepSummary s = summarize_steps(r);
  json slowest = json::array();
  for (const SlowStep& step : s.slowest) slowest.push_back(step_json(StepRow{step.device, step.step, step.b}));
  return {{"steps", s.steps},
          {"step_p50_ms", s.p50_ns / 1e6},
          {"step_p95_ms", s.p95_ns / 1e6},
          {"step_max_ms", s.max_ns / 1e6},
          {"step_max_index", s.max_step},
          {"steps_per_s", s.steps_per_s},
          {"computing_percent", s.computing_pct},
          {"comm_not_overlapped_percent", s.comm_exposed_pct},
          {"idle_percent", s.idle_pct},
          {"idle_before_first_task_percent", s.idle_before_first_task_pct},
          {"slowest_steps", slowest}};
}

json clocks(const Report& r) {
  json out = json::array();
  for (const ClockPoint& p : r.clock_timeline) out.push_back({{"device", p.device}, {"ts_ns", p.ts}, {"mhz", p.mhz}});
  return out;
}

}  // namespace

json render_json(const Report& r) {
  json top = json::array(), steps = json::array(), throttles = json::array(), findings = json::array();
  for (const TopTask& t : r.top_tasks) {
    top.push_back({{"name", t.name}, {"op_type", t.op_type}, {"core_type", t.core_type}, {"input_shapes", t.shapes},
                   {"device", t.device}, {"stream", t.stream}, {"task_id", t.task_id}, {"start_ns", t.start},
                   {"duration_ns", t.duration}, {"wait_ns", t.wait}, {"block_num", t.block_num},
                   {"op_tasks", t.tasks}, {"op_devices", t.devices}});
  }
  for (const StepRow& s : r.steps) steps.push_back(step_json(s));
  for (const ThrottlePeriod& p : r.throttles) {
    json at = json::object();
    for (const auto& [mhz, ns] : p.time_at_mhz) at[std::to_string(mhz)] = ns;
    throttles.push_back({{"device", p.device}, {"start_ns", p.start}, {"end_ns", p.end}, {"still_throttled", p.open},
                         {"reasons_bitmask", p.reasons}, {"min_clock_mhz", p.min_clock_mhz}, {"time_at_mhz_ns", at}});
  }
  for (const Finding& f : r.findings) {
    json numbers = json::object();
    for (const auto& [name, value] : f.numbers) numbers[name] = value;
    json cost = f.cost_ns_per_step ? json(*f.cost_ns_per_step / 1e6) : json();
    findings.push_back({{"id", f.id}, {"severity", f.severity}, {"cost_ms_per_step", cost}, {"text", f.text},
                        {"action", f.action}, {"numbers", numbers}});
  }
  json out = {{"header", header(r.header)}, {"operators", ops(r)},   {"top_tasks", top},
              {"steps", steps},             {"communication", communication(r)}, {"memory", memory(r)},
              {"throttling", throttles},    {"ranks", ranks(r)},                 {"findings", findings},
              {"summary", summary(r)},      {"clock_timeline", clocks(r)}};
  return out;
}

}  // namespace npukit::prof
