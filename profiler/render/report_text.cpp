#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "profiler/render/report_render.hpp"
#include "profiler/render/text_table.hpp"
#include "telemetry/collective_traffic.hpp"
#include "telemetry/fields.hpp"

namespace npukit::prof {

namespace {

std::string us(double ns) { return fixed(ns / 1e3, 3); }
std::string ms_at(int64_t ts, int64_t origin) { return fixed(static_cast<double>(ts - origin) / 1e6, 3); }
std::string mib(int64_t bytes) { return fixed(static_cast<double>(bytes) / (1 << 20), 1); }
std::string section(const std::string& title) { return "\n== " + title + " ==\n"; }

std::string header(const ReportHeader& h) {
  std::string out = "npu-prof report: " + h.db + "\n";
  std::string ranks = h.ranks > 1 ? ", " + std::to_string(h.ranks) + " ranks (one PROF_ tree each)" : "";
  out += "Recording:  " + h.recording_state() + ranks + "\n";
  std::set<std::string> chips;
  std::string ids;
  for (const auto& [id, name] : h.devices) ids += (ids.empty() ? "" : ",") + std::to_string(id), chips.insert(name);
  std::string chip_list;
  for (const std::string& c : chips) chip_list += (chip_list.empty() ? "" : ", ") + c;
  std::string hosts;
  for (const std::string& host : h.hosts()) hosts += (hosts.empty() ? "'" : ", '") + host + "'";
  std::string node = h.hosts().size() < 2 ? "'" + h.node + "' (" + h.node_spec + ")" : h.node_label() + " (" + hosts + ")";
  out += "Node:       " + node + ", devices " + (ids.empty() ? "NA" : ids) + " (" +
         (chip_list.empty() ? "NA" : chip_list) + "), run " + h.pace + ", recorded " + h.recorded_as() + "\n";
  out += "Command:    " + h.command + (h.command_exit ? " (exit " + std::to_string(*h.command_exit) + ")" : "") + "\n";
  if (!h.job_error.empty()) out += "Failed:     " + h.job_error + "\n";
  for (const ReportHeader::Fault& f : h.faults) {
    std::string when = f.before_recording ? "in force when the recording started"
                                              : "at " + fixed(static_cast<double>(f.ts - h.first_task) / 1e6, 3) + " ms";
    out += "Fault:      " + h.fault_where(f) + " " + when + "\n";
  }
  out += "Session:    " + fixed(static_cast<double>(h.session_end - h.session_start) / 1e9, 6) + " s, " +
         std::to_string(h.tasks) + " tasks, " + std::to_string(h.events_recorded) + " events recorded, " +
         std::to_string(h.events_missed) + " missed" + (h.lossless_lost ? " (lossless reader evicted)" : "") + "\n";
  out += "Schema:     " + h.schema_version + " (" + h.producer + ")\n";
  if (h.step_filter) out += "Filter:     step " + std::to_string(*h.step_filter) + "\n";
  out += "Times:      durations in us; \"at\" times in ms from the first task\n";
  return out;
}

std::vector<std::string> stat_cells(const DurationStats& s) {
  return {std::to_string(s.count), us(static_cast<double>(s.total)), us(s.avg), us(static_cast<double>(s.min)),
          us(static_cast<double>(s.max)), us(s.median), fixed(s.ratio, 2)};
}

std::string op_sections(const Report& r, int top) {
  std::string out = section("Operator summary by type");
  TextTable types({"OP Type", "Core Type", "Count", "Total(us)", "Avg(us)", "Min(us)", "Max(us)", "Median(us)", "Ratio(%)"}, 2);
  for (const OpTypeRow& row : r.op_types) {
    std::vector<std::string> cells = {row.op_type, row.core_type};
    for (std::string& c : stat_cells(row.stats)) cells.push_back(std::move(c));
    types.add(std::move(cells));
  }
  out += types.empty() ? "  (no kernels)\n" : types.render();
  out += section("Operator summary by name and input shapes (top " + std::to_string(top) + " by total time)");
  TextTable names({"Name", "OP Type", "Core Type", "Input Shapes", "Count", "Total(us)", "Avg(us)", "Min(us)", "Max(us)",
                   "Median(us)", "Ratio(%)"}, 4);
  for (std::size_t i = 0; i < r.op_names.size() && i < static_cast<std::size_t>(top); ++i) {
    const OpNameRow& row = r.op_names[i];
    std::vector<std::string> cells = {row.name, row.op_type, row.core_type, row.shapes};
    for (std::string& c : stat_cells(row.stats)) cells.push_back(std::move(c));
    names.add(std::move(cells));
  }
  out += names.empty() ? "  (no kernels)\n" : names.render();
  return out;
}

std::string task_sections(const Report& r, int top) {
  std::string out = section("Top " + std::to_string(top) + " ops by their longest task");
  TextTable tasks({"Name", "OP Type", "Input Shapes", "Device", "Stream", "Task ID", "At(ms)", "Duration(us)", "Wait(us)",
                   "Tasks", "Devices"}, 3);
  for (const TopTask& t : r.top_tasks) {
    tasks.add({t.name, t.op_type, t.shapes, std::to_string(t.device), std::to_string(t.stream), std::to_string(t.task_id),
               ms_at(t.start, r.header.first_task), us(static_cast<double>(t.duration)), us(static_cast<double>(t.wait)),
               std::to_string(t.tasks), std::to_string(t.devices)});
  }
  out += tasks.empty() ? "  (no tasks)\n" : tasks.render();
  out += section("AI CPU fallback ops");
  TextTable cpu({"Name", "OP Type", "Input Shapes", "Count", "Total(us)", "Avg(us)", "Min(us)", "Max(us)", "Median(us)",
                 "Ratio(%)"}, 3);
  for (const OpNameRow& row : r.aicpu_ops) {
    std::vector<std::string> cells = {row.name, row.op_type, row.shapes};
    for (std::string& c : stat_cells(row.stats)) cells.push_back(std::move(c));
    cpu.add(std::move(cells));
  }
  out += cpu.empty() ? "  (none: every op ran on AI Core)\n" : cpu.render();
  return out;
}

std::vector<std::string> breakdown_cells(const StepBreakdown& b, double n) {
  auto avg = [n](int64_t v) { return us(static_cast<double>(v) / n); };
  return {avg(b.step), avg(b.computing), avg(b.communication), avg(b.overlapped), avg(b.comm_not_overlapped),
          avg(b.free), avg(b.preparing)};
}

constexpr std::size_t kStepRowsShown = 10;  // longer runs: percentiles and outlier steps
constexpr double kOutlierShare = 0.05;       // a step this much slower than the median

// Per column, the value at quantile q over the rows (nearest rank).
StepBreakdown quantile_row(std::vector<StepBreakdown> rows, double q) {
  StepBreakdown out;
  int64_t StepBreakdown::*fields[] = {&StepBreakdown::step, &StepBreakdown::computing, &StepBreakdown::communication,
                                      &StepBreakdown::overlapped, &StepBreakdown::comm_not_overlapped,
                                      &StepBreakdown::free, &StepBreakdown::preparing};
  for (auto field : fields) {
    std::vector<int64_t> v;
    for (const StepBreakdown& b : rows) v.push_back(b.*field);
    std::sort(v.begin(), v.end());
    out.*field = v[static_cast<std::size_t>(std::llround(q * static_cast<double>(v.size() - 1)))];
  }
  return out;
}

std::string step_section(const Report& r) {
  bool per_device = r.header.step_filter.has_value();
  std::string out = section(per_device ? "Step breakdown per device" : "Step breakdown (average over devices)");
  TextTable t({per_device ? "Device" : "Step", "Step(us)", "Computing(us)", "Communication(us)", "Overlapped(us)",
               "Communication(Not Overlapped)(us)", "Free(us)", "Preparing(us)"}, 0);
  std::map<int64_t, std::pair<StepBreakdown, int>> by_step;
  for (const StepRow& s : r.steps) {
    int64_t key = per_device ? s.device : s.step;
    auto& [sum, n] = by_step[key];
    sum.step += s.b.step, sum.computing += s.b.computing, sum.communication += s.b.communication;
    sum.overlapped += s.b.overlapped, sum.comm_not_overlapped += s.b.comm_not_overlapped;
    sum.free += s.b.free, sum.preparing += s.b.preparing;
    ++n;
  }
  auto add = [&](const std::string& label, const StepBreakdown& b, double n) {
    std::vector<std::string> cells = {label};
    for (std::string& c : breakdown_cells(b, n)) cells.push_back(std::move(c));
    t.add(std::move(cells));
  };
  if (per_device || by_step.size() <= kStepRowsShown) {
    for (const auto& [key, v] : by_step) add(std::to_string(key), v.first, v.second);
    return out + (t.empty() ? "  (no steps recorded)\n" : t.render());
  }
  std::vector<StepBreakdown> averages;
  for (const auto& [key, v] : by_step) {
    StepBreakdown a = v.first;
    for (int64_t StepBreakdown::*f : {&StepBreakdown::step, &StepBreakdown::computing, &StepBreakdown::communication,
                                       &StepBreakdown::overlapped, &StepBreakdown::comm_not_overlapped,
                                       &StepBreakdown::free, &StepBreakdown::preparing}) {
      a.*f /= v.second;
    }
    averages.push_back(a);
  }
  for (auto [label, q] : {std::pair{"p50", 0.5}, std::pair{"p95", 0.95}, std::pair{"max", 1.0}, std::pair{"min", 0.0}}) {
    add(label, quantile_row(averages, q), 1);
  }
  StepBreakdown median = quantile_row(averages, 0.5);
  std::size_t outliers = 0;
  std::size_t i = 0;
  for (const auto& [key, v] : by_step) {
    const StepBreakdown& a = averages[i++];
    if (static_cast<double>(a.step) <= (1 + kOutlierShare) * static_cast<double>(median.step) || outliers >= 5) continue;
    add("step " + std::to_string(key), a, 1);
    ++outliers;
  }
  return out + "  " + std::to_string(by_step.size()) + " steps: percentiles per column, then steps over " +
         fixed(100 * kOutlierShare, 0) + "% slower than the median (" + std::to_string(outliers) + ")\n" + t.render();
}

std::string comm_section(const Report& r) {
  std::string out = section("Communication");
  TextTable types({"OP Type", "Count", "Total(us)", "Avg(us)", "Min(us)", "Max(us)", "Median(us)", "Ratio(%)"}, 1);
  for (const CommTypeRow& row : r.comm_types) {
    std::vector<std::string> cells = {collective_display_name(row.op_type)};
    for (std::string& c : stat_cells(row.stats)) cells.push_back(std::move(c));
    types.add(std::move(cells));
  }
  if (types.empty()) return out + "  (no collectives)\n";
  out += types.render() + "\n";
  TextTable sizes({"Group", "OP Type", "Size(B)", "Ranks", "Count", "Avg(us)", "algbw(GB/s)", "busbw(GB/s)"}, 2);
  bool point_to_point = false;
  for (const CommSizeRow& row : r.comm_sizes) {
    sizes.add({row.group, collective_display_name(row.op_type), std::to_string(row.bytes), std::to_string(row.ranks), std::to_string(row.count), us(row.avg_ns),
               fixed(row.algbw / 1e9, 2), fixed(row.busbw / 1e9, 2)});
    point_to_point = point_to_point || telemetry::is_point_to_point(row.op_type);
  }
  out += sizes.render();
  if (point_to_point) {
    out += "  send, receive: bandwidth from the shortest call of each link (its later end waited for nobody),\n"
           "  the slowest link's; the average also holds the wait for the other stage\n";
  }
  return out;
}

std::string memory_section(const Report& r) {
  std::string out = section("Memory");
  // The memory the chips have: HBM, DDR on a 310P, "memory" if a merged profile holds both.
  bool ddr = !r.memory.empty() && std::all_of(r.memory.begin(), r.memory.end(), [](const MemoryRow& m) { return m.ddr; });
  bool hbm = std::none_of(r.memory.begin(), r.memory.end(), [](const MemoryRow& m) { return m.ddr; });
  std::string peak = std::string("Peak ") + (ddr ? "DDR" : hbm ? "HBM" : "memory") + "(MiB)";
  TextTable t({"Device", peak, "Peak at(ms)", "First(MiB)", "Last(MiB)", "Samples", "Allocated(MiB)", "Reserved(MiB)"}, 0);
  bool allocator = false;
  std::string outside;  // devices whose every sample fell outside their tasks
  for (const MemoryRow& m : r.memory) {
    bool sampled = m.samples > 0;
    auto or_dash = [](bool known, const std::string& v) { return known ? v : std::string("-"); };
    t.add({std::to_string(m.device), or_dash(sampled, mib(m.peak_bytes)), or_dash(sampled, ms_at(m.peak_ts, r.header.first_task)),
           or_dash(sampled, mib(m.first_bytes)), or_dash(sampled, mib(m.last_bytes)), std::to_string(m.samples),
           or_dash(m.allocated_peak >= 0, mib(m.allocated_peak)), or_dash(m.reserved_peak >= 0, mib(m.reserved_peak))});
    allocator |= m.allocated_peak >= 0;
    if (m.sampled_outside_job()) outside += (outside.empty() ? "" : ",") + std::to_string(m.device);
  }
  if (t.empty()) return out + "  (no memory samples)\n";
  out += t.render();
  if (allocator) out += "  Allocated, Reserved: the most the recorded processes' allocator held (from every alloc and free).\n";
  if (!outside.empty()) {
    out += "  No sample fell within the tasks of device " + outside + ": the sampled columns show memory\n"
           "  outside the job; the allocator's columns are the job's.\n";
  }
  out += "  Timeline (MiB, max per slot of the session):\n";
  std::map<int, std::string> lines;
  for (const MemoryPoint& p : r.memory_timeline) lines[p.device] += " " + mib(p.bytes);
  // Devices with the same timeline share one line.
  std::map<std::string, std::vector<int>> same;
  for (const auto& [device, line] : lines) same[line].push_back(device);
  for (const auto& [line, devices] : same) {
    std::string ids;
    for (int d : devices) ids += (ids.empty() ? "" : ",") + std::to_string(d);
    out += std::string("    ") + (devices.size() > 1 ? "devices " : "device ") + ids + ":" + line + "\n";
  }
  return out;
}

std::string throttle_section(const Report& r) {
  std::string out = section("Throttling");
  TextTable t({"Device", "From(ms)", "To(ms)", "Duration(ms)", "Reasons", "Min clock(MHz)", "Mean clock(MHz)"}, 0);
  for (const ThrottlePeriod& p : r.throttles) {
    std::string reasons = telemetry::throttle_reason_names(p.reasons, ", ");
    t.add({r.header.rank_label(p.device), ms_at(p.start, r.header.first_task),
           ms_at(p.end, r.header.first_task) + (p.open ? " (still)" : ""),
           fixed(static_cast<double>(p.end - p.start) / 1e6, 3), reasons, fixed(p.min_clock_mhz, 0),
           fixed(p.mean_clock_mhz(), 0)});
  }
  return out + (t.empty() ? "  (none)\n" : t.render());
}

}  // namespace

std::string finding_lead(const Finding& f) {
  std::string cost = f.cost_ns_per_step ? ", " + fixed(*f.cost_ns_per_step / 1e6, 3) + " ms per step" : "";
  return "[" + f.id + "] (" + f.severity + cost + ") ";
}

namespace {

std::string findings_section(const Report& r) {
  std::string out = section("Findings");
  if (r.findings.empty()) return out + "  (none)\n";
  for (const Finding& f : r.findings) out += "  - " + finding_lead(f) + f.text + " What to do: " + f.action + ".\n";
  return out;
}

}  // namespace

std::string render_text(const Report& r, int top) {
  return header(r.header) + op_sections(r, top) + task_sections(r, top) + step_section(r) + comm_section(r) +
         memory_section(r) + throttle_section(r) + findings_section(r);
}

std::string render_section(const Report& r, const std::string& name, int top) {
  if (name == "ops") return op_sections(r, top) + task_sections(r, top);
  if (name == "steps") return step_section(r);
  if (name == "comm") return comm_section(r);
  if (name == "memory") return memory_section(r);
  if (name == "throttle") return throttle_section(r);
  if (name == "findings") return findings_section(r);
  return "";
}

}  // namespace npukit::prof
