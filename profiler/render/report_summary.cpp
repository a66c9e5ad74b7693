// The default text report: the answer first (report_render.hpp).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>

#include "profiler/analyze/ranks.hpp"
#include "profiler/analyze/summary.hpp"
#include "profiler/render/report_render.hpp"
#include "profiler/render/text_table.hpp"

namespace npukit::prof {

namespace {

constexpr std::size_t kWidth = 100;
constexpr std::size_t kTopFindings = 3;
constexpr std::size_t kSlowRanks = 3;

std::string ms(double ns) { return fixed(ns / 1e6, 3) + " ms"; }

// `text` wrapped to lines of at most kWidth columns, the first led by `lead`, the rest indented.
std::string wrap(const std::string& lead, const std::string& text) {
  std::istringstream words(text);
  std::string out, line = lead, indent(lead.size(), ' ');
  for (std::string w; words >> w;) {
    if (line.size() + 1 + w.size() > kWidth && line.size() > indent.size()) {
      out += line + "\n";
      line = indent;
    }
    line += (line.size() == indent.size() || line == lead ? "" : " ") + w;
  }
  return out + line + "\n";
}

// The command with its program's directory left out ("npu-run ernie3-train --steps 4").
std::string short_command(const std::string& command) {
  std::size_t space = command.find(' ');
  std::string program = command.substr(0, space);
  return std::filesystem::path(program).filename().string() + (space == std::string::npos ? "" : command.substr(space));
}

// "; dp4 x tp2, caching allocator, eager launch" from what the job recorded ("" when nothing).
std::string job_settings(const ReportHeader& h) {
  auto get = [&](const char* key) { auto it = h.job.find(key); return it == h.job.end() ? std::string() : it->second; };
  std::string out = get("layout");
  if (!get("allocator").empty()) out += (out.empty() ? "" : ", ") + get("allocator") + " allocator";
  if (!get("launch").empty()) out += (out.empty() ? "" : ", ") + get("launch") + " launch";
  return out.empty() ? "" : "; " + out;
}

std::string job_lines(const Report& r) {
  const ReportHeader& h = r.header;
  std::string chip = h.devices.empty() ? "NA" : h.devices.front().second;
  std::string out = wrap("Job:       ", short_command(h.command) + (h.command_exit ? " (exit " + std::to_string(*h.command_exit) + ")" : "") + job_settings(h));
  out += "Node:      " + h.node_label() + " (" + chip + "), " + h.size_label() + ", run " + h.pace + ", recorded " + h.recorded_as() + "\n";
  if (!h.job_error.empty()) out += wrap("Failed:    ", "the job ended in error: " + h.job_error);
  for (const ReportHeader::Fault& f : h.faults) {
    double after_s = static_cast<double>(f.ts - h.first_task) / 1e9;  // < 0: a timeline fault at the job's start
    std::string when = f.before_recording         ? "in force when the recording started"
                       : std::abs(after_s) < 5e-4 ? "injected as the first task ran"
                       : "injected " + fixed(std::abs(after_s), 3) + (after_s < 0 ? " s before" : " s after") + " the first task";
    out += wrap("Fault:     ", h.fault_where(f) + ", " + when);
  }
  return out;
}

// Step time of a step = its slowest device's; percentiles over the steps (summary.hpp).
std::string step_lines(const StepSummary& s) {
  if (s.steps == 0) return "Steps:     none recorded\n";
  return "Steps:     " + std::to_string(s.steps) + ", p50 " + ms(s.p50_ns) + ", p95 " + ms(s.p95_ns) + ", max " +
         ms(s.max_ns) + " (step " + std::to_string(s.max_step) + "); " + fixed(s.steps_per_s, 2) + " steps/s\n";
}

// `bubble_pct`: a pipeline's stages waiting at their receives (pipeline_bubble), part of the
// communication not overlapped; 0 for a job without pipeline stages.
std::string breakdown_line(const StepSummary& s, double bubble_pct) {
  if (s.steps == 0) return "";
  auto p = [](double v) { return fixed(v, 1) + "%"; };
  std::string bubble = bubble_pct > 0 ? " (of which the pipeline's bubble " + p(bubble_pct) + ")" : "";
  return wrap("Step time: ", "computing " + p(s.computing_pct) + ", communication not overlapped " + p(s.comm_exposed_pct) +
                                 bubble + ", idle " + p(s.idle_pct) + " (of which before the step's first task " +
                                 p(s.idle_before_first_task_pct) + ")");
}

// On the line's own base, every rank's steps: their receives with no compute running, so a part
// of the communication not overlapped (the pipeline_bubble finding's share, the critical stage's
// wait over the longest step, read 26.2% "of" 26.0%).
double bubble_pct(const Report& r) {
  double step = 0, bubble = 0;
  for (const StepRow& row : r.steps) step += static_cast<double>(row.b.step), bubble += static_cast<double>(row.bubble_not_overlapped);
  return step <= 0 ? 0 : 100 * bubble / step;
}

std::string findings_lines(const Report& r) {
  if (r.findings.empty()) return "Findings:  none\n";
  std::string out = "Findings:  " + std::to_string(r.findings.size()) + (r.findings.size() > kTopFindings ? ", the first " + std::to_string(kTopFindings) : "") + "\n";
  for (std::size_t i = 0; i < r.findings.size() && i < kTopFindings; ++i) {
    out += wrap("  " + std::to_string(i + 1) + ". ", finding_lead(r.findings[i]) + r.findings[i].text);
  }
  return out;
}

// Each rank's own work per step (its step minus the time it waited in communication), slowest
// first, with the straggler verdict of ranks.hpp.
std::string slow_rank_lines(const Report& r) {
  if (r.ranks.size() < 2) return "";
  std::vector<const RankRow*> rows;
  for (const RankRow& row : r.ranks) rows.push_back(&row);
  std::stable_sort(rows.begin(), rows.end(), [](const RankRow* a, const RankRow* b) { return a->work() > b->work(); });
  StragglerVerdict v = straggler(r.ranks);
  const RankRow& slow = r.ranks[static_cast<std::size_t>(v.index)];
  std::string out = "Slowest:   each rank's own work per step (its step minus waiting in communication)\n";
  // A slow host's ranks are slow together: the verdict names the host, not one of its ranks
  // (which one of the tied ranks it named changed from run to run).
  HostVerdict host = slow_host_verdict(r);
  if (v.slow && host.is_slow(r.header.host_of(slow.device))) {
    out += "  straggler host" + std::string(host.slow_hosts.size() > 1 ? "s: " : ": ") + host.slow_host_names() + ", +" +
           fixed(100 * host.excess_ns / host.baseline_ns, 1) + "% over the other hosts' median " + ms(host.baseline_ns) +
           "; loses " + ms(host.phase_excess_ns) + " " + host.phase + "\n";
  } else {
    out += v.slow ? "  straggler" + std::string(v.tied.empty() ? ": " : "s: ") + straggler_label(r.header, r.ranks, v) + ", +" + fixed(100 * v.excess_ns / v.baseline_ns, 1) +
                        "% over the others' median " + ms(v.baseline_ns) + "; loses " + ms(v.phase_excess_ns) + " " +
                        v.phase + "\n"
                  : "  no straggler: every rank within " + fixed(100 * straggler_threshold(), 0) + "% of the others' median\n";
  }
  for (std::size_t i = 0; i < rows.size() && i < kSlowRanks; ++i) {
    const RankRow& row = *rows[i];
    out += "  " + r.header.rank_label(row.device) + ": work " + fixed(row.work() / 1e6, 3) + " of " + ms(row.step) +
           "; compute " + fixed(row.computing / 1e6, 3) + ", comm wait " + fixed(row.comm_exposed / 1e6, 3) + ", idle " +
           fixed((row.preparing + row.other_idle) / 1e6, 3) + "\n";
  }
  return out;
}

}  // namespace

std::string render_summary(const Report& r) {
  const ReportHeader& h = r.header;
  std::string out = "npu-prof report: " + h.db + "\n";
  out += "Recording: " + h.recording_state() + ", " + std::to_string(h.tasks) + " tasks, " + std::to_string(h.events_missed) + " events missed\n";
  StepSummary steps = summarize_steps(r);
  out += job_lines(r) + step_lines(steps) + breakdown_line(steps, bubble_pct(r)) + findings_lines(r) + slow_rank_lines(r);
  std::string sections;
  for (const char* s : kReportSections) sections += (sections.empty() ? "" : "|") + std::string(s);
  return out + "Details:   --section " + sections + ", or --full\n";
}

}  // namespace npukit::prof
