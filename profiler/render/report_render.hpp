// The report's renderers: one document (report_model.hpp), three forms.
//   text  human-readable sections with units in every column header
//   json  the whole document via nlohmann::json (ns, bytes, bytes/s; keys carry the units)
//   csv   msprof's deliverables by their file names and headers (reference/msprof-db.md 1.5,
//         1.6): op_summary_<ts>.csv (one row per task), op_statistic_<ts>.csv,
//         communication_statistic_<ts>.csv and step_trace_time.csv, each led by Device_id.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "profiler/analyze/profile_data.hpp"
#include "profiler/analyze/report_model.hpp"

namespace npukit::prof {

// Every section (npu-prof report --full), or one: ops, steps, comm, memory, throttle, findings.
std::string render_text(const Report& report, int top);
std::string render_section(const Report& report, const std::string& section, int top);
// The answer first (the default text report): job, step times, where the step goes, the top
// findings, the slowest ranks — within 100 columns by 40 lines.
std::string render_summary(const Report& report);
// "[id] (severity, X ms per step) ": how a finding's line starts in text.
std::string finding_lead(const Finding& finding);
inline constexpr const char* kReportSections[] = {"ops", "steps", "comm", "memory", "throttle", "findings"};
nlohmann::json render_json(const Report& report);
// One self-contained HTML page (report_html.cpp): summary, findings with their evidence, per-rank
// step chart, slowest steps, memory and clock per rank; numbers tagged with their JSON pointers.
std::string render_html(const Report& report);
// Writes `text` to `file`: InvalidArgument when it cannot be opened, Internal when writing fails.
Status write_text_file(const std::string& file, const std::string& text);

// Writes the CSV files into `dir` (created when missing); op_summary lists the tasks `selected`
// (indexes into data.tasks). Returns the paths written.
Result<std::vector<std::string>> write_csv(const Report& report, const ProfileData& data,
                                           const std::vector<std::size_t>& selected, const std::string& dir);

// The 14-digit timestamp of a msprof_<ts>.db path ("" when the name has none).
std::string db_timestamp(const std::string& db_path);

}  // namespace npukit::prof
