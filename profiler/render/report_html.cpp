// The HTML report: one self-contained page (inline CSS and SVG, no script, nothing fetched) read
// from the same report model as text and JSON. Every number on it is tagged with the JSON
// pointer it comes from (html_writer.hpp), which the headless-Chromium test checks.
#include <algorithm>
#include <fstream>
#include <map>

#include "profiler/analyze/ranks.hpp"
#include "profiler/analyze/summary.hpp"
#include "profiler/render/html_writer.hpp"
#include "profiler/render/report_render.hpp"

namespace npukit::prof {

namespace {

using html::checked;
using html::escape;
using html::Segment;

constexpr const char* kComputing = "#4c78a8";
constexpr const char* kCommWait = "#f58518";
constexpr const char* kIdleLead = "#e45756";
constexpr const char* kIdleGaps = "#bab0ac";
constexpr double kMs = 1e-6;       // ns -> ms
constexpr double kMiB = 1.0 / (1 << 20);

constexpr const char* kStyle = R"(
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px auto;max-width:1100px;color:#222;padding:0 16px}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
.meta{color:#555;margin:0}.cards{display:flex;gap:12px;flex-wrap:wrap;margin:14px 0}
.card{border:1px solid #ddd;border-radius:6px;padding:8px 12px;min-width:120px}.card b{display:block;font-size:18px}
.card small{color:#666}table{border-collapse:collapse;margin:6px 0}td,th{padding:3px 10px;text-align:right;border-bottom:1px solid #eee}
td:first-child,th:first-child{text-align:left}.legend span{margin-right:14px}.legend i{display:inline-block;width:10px;height:10px;margin-right:4px}
.finding{border-left:4px solid #bbb;padding:4px 12px;margin:10px 0}.critical{border-color:#d62728}.warning{border-color:#ff7f0e}
.info{border-color:#7f7f7f}.sev{font-weight:600;text-transform:uppercase;font-size:12px}.action{color:#444}
.verdict{font-weight:600}svg{vertical-align:middle}.spark{background:#fafafa;border:1px solid #eee}
)";

std::string settings(const ReportHeader& h) {
  std::string out;
  for (const auto& [key, value] : h.job) out += ", " + key + " " + value;
  return out;
}

std::string card(const std::string& label, const std::string& value) {
  return "<div class=\"card\"><small>" + escape(label) + "</small><b>" + value + "</b></div>";
}

std::string header_section(const Report& r) {
  const ReportHeader& h = r.header;
  std::string chip = h.devices.empty() ? "NA" : h.devices.front().second;
  return "<h1>npu-prof report</h1><p class=\"meta\">" + escape(h.db) + "</p><p class=\"meta\">Job: <code>" +
         escape(h.command) + "</code>" + (h.command_exit ? " (exit " + std::to_string(*h.command_exit) + ")" : "") +
         "<br>Node: " + escape(h.node_label()) + " (" + escape(chip) + "), " + h.size_label() + escape(settings(h)) + ", run " + escape(h.pace) + ", recorded " + escape(h.recorded_as()) +
         (!h.damage.empty() ? " &mdash; <b>damaged recording</b>" : h.complete ? "" : " &mdash; <b>incomplete recording</b>") + "</p>";
}

std::string summary_section(const StepSummary& s) {
  if (s.steps == 0) return "<section id=\"summary\"><h2>Summary</h2><p>No steps recorded.</p></section>";
  std::string out = "<section id=\"summary\"><h2>Summary</h2><div class=\"cards\">";
  out += card("steps", checked(s.steps, 0, "/summary/steps"));
  out += card("step p50 (ms)", checked(s.p50_ns * kMs, 3, "/summary/step_p50_ms"));
  out += card("step p95 (ms)", checked(s.p95_ns * kMs, 3, "/summary/step_p95_ms"));
  out += card("step max (ms)", checked(s.max_ns * kMs, 3, "/summary/step_max_ms") + "<small> step " +
                                   std::to_string(s.max_step) + "</small>");
  out += card("throughput (steps/s)", checked(s.steps_per_s, 2, "/summary/steps_per_s"));
  out += "</div>";
  double lead = s.idle_before_first_task_pct, gaps = s.idle_pct - lead;
  std::vector<Segment> parts = {{"computing", s.computing_pct, kComputing},
                                {"communication not overlapped", s.comm_exposed_pct, kCommWait},
                                {"idle before the step's first task", lead, kIdleLead},
                                {"idle between tasks", gaps, kIdleGaps}};
  out += "<p>Where the step goes: computing " + checked(s.computing_pct, 1, "/summary/computing_percent") +
         "%, communication not overlapped " + checked(s.comm_exposed_pct, 1, "/summary/comm_not_overlapped_percent") +
         "%, idle " + checked(s.idle_pct, 1, "/summary/idle_percent") + "% (before the step's first task " +
         checked(lead, 1, "/summary/idle_before_first_task_percent") + "%)</p>";
  return out + html::stacked_bar(parts, 100, 700, 18) + html::legend(parts) + "</section>";
}

std::string findings_section(const Report& r) {
  std::string out = "<section id=\"findings\"><h2>Findings</h2>";
  if (r.findings.empty()) out += "<p>None.</p>";
  for (std::size_t i = 0; i < r.findings.size(); ++i) {
    const Finding& f = r.findings[i];
    std::string at = "/findings/" + std::to_string(i);
    out += "<article class=\"finding " + escape(f.severity) + "\"><p><span class=\"sev\">" + escape(f.severity) +
           "</span> <code>" + escape(f.id) + "</code>";
    if (f.cost_ns_per_step) out += " &mdash; costs " + checked(*f.cost_ns_per_step * kMs, 3, at + "/cost_ms_per_step") + " ms per step";
    out += "</p><p>" + escape(f.text) + "</p><p class=\"action\">What to do: " + escape(f.action) + "</p>";
    if (!f.numbers.empty()) {
      out += "<details><summary>Evidence</summary><table>";
      for (const auto& [name, value] : f.numbers) {
        out += "<tr><td>" + escape(name) + "</td><td>" + checked(value, 3, at + "/numbers/" + html::pointer_token(name)) + "</td></tr>";
      }
      out += "</table></details>";
    }
    out += "</article>";
  }
  return out + "</section>";
}

std::string ranks_section(const Report& r) {
  if (r.ranks.empty()) return "";
  std::string out = "<section id=\"ranks\"><h2>Step time per rank</h2>";
  if (r.ranks.size() >= 2) {
    StragglerVerdict v = straggler(r.ranks);
    out += "<p class=\"verdict\">" +
           (v.slow ? std::string(v.tied.empty() ? "Straggler: " : "Stragglers: ") + escape(straggler_label(r.header, r.ranks, v)) + ", " +
                         checked(v.excess_ns * kMs, 3, "/ranks/verdict/excess_ms") + " ms per step over the other ranks' median, lost " +
                         escape(v.phase)
                   : std::string("No straggler: every rank's own work within 5% of the others' median")) +
           "</p>";
  }
  double longest = 0;
  for (const RankRow& row : r.ranks) longest = std::max(longest, row.step);
  std::vector<Segment> legend = {{"computing", 0, kComputing}, {"communication not overlapped", 0, kCommWait},
                                 {"idle before first task", 0, kIdleLead}, {"idle between tasks", 0, kIdleGaps}};
  out += html::legend(legend) + "<table><tr><th>rank</th><th>step (ms)</th><th>own work (ms)</th><th></th></tr>";
  for (std::size_t i = 0; i < r.ranks.size(); ++i) {
    const RankRow& row = r.ranks[i];
    std::string at = "/ranks/per_rank/" + std::to_string(i);
    std::vector<Segment> parts = {{"computing (ms)", row.computing * kMs, kComputing},
                                  {"communication not overlapped (ms)", row.comm_exposed * kMs, kCommWait},
                                  {"idle before first task (ms)", row.preparing * kMs, kIdleLead},
                                  {"idle between tasks (ms)", row.other_idle * kMs, kIdleGaps}};
    out += "<tr><td>" + r.header.rank_label(row.device) + "</td><td>" + checked(row.step * kMs, 3, at + "/step_ms") +
           "</td><td>" + checked(row.work() * kMs, 3, at + "/work_ms") + "</td><td>" +
           html::stacked_bar(parts, longest * kMs, 560, 14) + "</td></tr>";
  }
  return out + "</table></section>";
}

std::string slow_steps_section(const Report& r, const StepSummary& s) {
  if (s.slowest.empty()) return "";
  std::string out = "<section id=\"steps\"><h2>Slowest steps</h2><table><tr><th>step</th><th>slowest rank</th>"
                    "<th>step (ms)</th><th>computing (ms)</th><th>communication not overlapped (ms)</th><th>idle (ms)</th></tr>";
  for (std::size_t i = 0; i < s.slowest.size(); ++i) {
    const SlowStep& st = s.slowest[i];
    std::string at = "/summary/slowest_steps/" + std::to_string(i);
    out += "<tr><td>" + std::to_string(st.step) + "</td><td>" + r.header.rank_label(st.device) + "</td><td>" +
           checked(static_cast<double>(st.b.step), 3, at + "/step_ns", kMs) + "</td><td>" +
           checked(static_cast<double>(st.b.computing), 3, at + "/computing_ns", kMs) + "</td><td>" +
           checked(static_cast<double>(st.b.comm_not_overlapped), 3, at + "/communication_not_overlapped_ns", kMs) +
           "</td><td>" + checked(static_cast<double>(st.b.free), 3, at + "/free_ns", kMs) + "</td></tr>";
  }
  return out + "</table></section>";
}

std::string memory_clock_section(const Report& r) {
  if (r.memory.empty() && r.clock_timeline.empty()) return "";
  int64_t start = r.header.session_start, end = std::max(r.header.session_end, start + 1);
  std::map<int, std::vector<std::pair<double, double>>> memory, clock;
  std::map<int, std::size_t> min_clock_at;  // index into clock_timeline
  for (const MemoryPoint& p : r.memory_timeline) memory[p.device].push_back({static_cast<double>(p.ts), p.bytes * kMiB});
  for (std::size_t i = 0; i < r.clock_timeline.size(); ++i) {
    const ClockPoint& p = r.clock_timeline[i];
    clock[p.device].push_back({static_cast<double>(p.ts), static_cast<double>(p.mhz)});
    auto m = min_clock_at.find(p.device);
    if (m == min_clock_at.end() || p.mhz < r.clock_timeline[m->second].mhz) min_clock_at[p.device] = i;
  }
  double max_mhz = 0;
  for (const ClockPoint& p : r.clock_timeline) max_mhz = std::max(max_mhz, static_cast<double>(p.mhz));
  std::string out = "<section id=\"memory\"><h2>Memory and clock per rank</h2><table><tr><th>rank</th><th>HBM in use</th>"
                    "<th>sampled peak (MiB)</th><th>job's allocator reserved (MiB)</th><th>AI-core clock</th><th>lowest (MHz)</th></tr>";
  std::string outside;  // ranks whose every sample fell outside their tasks
  for (std::size_t i = 0; i < r.memory.size(); ++i) {
    const MemoryRow& m = r.memory[i];
    if (m.sampled_outside_job()) outside += (outside.empty() ? "" : ", ") + r.header.rank_label(m.device);
    out += "<tr><td>" + r.header.rank_label(m.device) + "</td><td>" +
           html::sparkline(memory[m.device], static_cast<double>(end), 0, std::max(1.0, m.peak_bytes * kMiB), kComputing,
                           "HBM in use (MiB) over the recording", 320, 36) +
           "</td><td>" + checked(static_cast<double>(m.peak_bytes), 0, "/memory/devices/" + std::to_string(i) + "/peak_bytes", kMiB) +
           "</td><td>" +
           (m.reserved_peak < 0 ? std::string("&ndash;")
                                : checked(static_cast<double>(m.reserved_peak), 0, "/memory/devices/" + std::to_string(i) + "/reserved_peak_bytes", kMiB)) +
           "</td><td>";
    auto c = min_clock_at.find(m.device);
    if (c == min_clock_at.end()) {
      out += "</td><td>&ndash;</td></tr>";
      continue;
    }
    out += html::sparkline(clock[m.device], static_cast<double>(end), 0, max_mhz, kCommWait, "AI-core clock (MHz) over the recording", 320, 36) +
           "</td><td>" + checked(r.clock_timeline[c->second].mhz, 0, "/clock_timeline/" + std::to_string(c->second) + "/mhz") +
           "</td></tr>";
  }
  out += "</table>";
  if (!outside.empty()) {
    out += "<p class=\"meta\">No memory sample fell within the tasks of " + outside +
           ": their HBM line and sampled peak show the device outside the job (it ran between two samples); "
           "the allocator's column is the job's, from every alloc and free.</p>";
  }
  return out + "</section>";
}

}  // namespace

std::string render_html(const Report& r) {
  StepSummary s = summarize_steps(r);
  return "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width\">"
         "<title>npu-prof report: " + escape(r.header.db) + "</title><style>" + kStyle + "</style></head><body>" +
         header_section(r) + summary_section(s) + findings_section(r) + ranks_section(r) + slow_steps_section(r, s) +
         memory_clock_section(r) +
         "<footer><p class=\"meta\">Written by npu-prof; every number here is also in <code>npu-prof report --format json</code>.</p></footer>"
         "</body></html>\n";
}

Status write_text_file(const std::string& file, const std::string& text) {
  std::ofstream out(file, std::ios::binary);
  if (!out) return InvalidArgument(file + ": cannot open for writing");
  out << text;
  out.close();
  if (!out) return Status(Code::kInternal, file + ": write failed (disk full?)");
  return Status::Ok();
}

}  // namespace npukit::prof
