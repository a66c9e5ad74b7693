#include "profiler/cli/cli_commands.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <set>
#include <sstream>

#include "profiler/render/chrome_trace.hpp"
#include "profiler/cli/cli.hpp"
#include "profiler/render/diff.hpp"
#include "profiler/analyze/comm_analyzer.hpp"
#include "profiler/analyze/report_build.hpp"
#include "profiler/render/report_render.hpp"
#include "profiler/store/prof_layout.hpp"
#include "telemetry/json_reader.hpp"

namespace npukit::prof {

namespace {

int fail(const Status& s) {
  std::fprintf(stderr, "npu-prof: %s\n", s.message().c_str());
  switch (s.code()) {
    case Code::kNotFound:
    case Code::kInvalidArgument: return kExitBadInput;
    case Code::kUnavailable: return kExitNoNode;
    case Code::kPermissionDenied: return kExitNoAccess;
    default: return kExitFailed;
  }
}

void print_record_summary(const RecordResult& r) {
  std::string trees;
  if (!r.ranks.empty()) {
    trees = std::filesystem::path(r.ranks.front().prof_dir).filename().string();
    if (r.ranks.size() > 1) trees += " .. " + std::filesystem::path(r.ranks.back().prof_dir).filename().string();
  }
  std::printf("npu-prof: recorded %llu events (%llu counter samples) into %s: %zu rank%s (%s)\n",
              static_cast<unsigned long long>(r.events), static_cast<unsigned long long>(r.samples), r.out_dir.c_str(),
              r.ranks.size(), r.ranks.size() == 1 ? "" : "s", trees.c_str());
  if (r.missed > 0 || r.lossless_lost) {
    std::fprintf(stderr, "npu-prof: warning: %llu events were missed (the recorder fell behind the node)%s\n",
                 static_cast<unsigned long long>(r.missed), r.lossless_lost ? "; the lossless reader was evicted" : "");
  }
  if (r.finalize.orphan_launches > 0) {
    std::printf("npu-prof: %llu launches whose tasks had not run when the recording ended were left out\n",
                static_cast<unsigned long long>(r.finalize.orphan_launches));
  }
  if (r.finalize.left_in_wal > 0) {
    std::printf("npu-prof: %llu rank database%s stayed in WAL mode (a reader held it open when the recording ended); "
                "complete, keep its -wal file beside it until a reader closes it last\n",
                static_cast<unsigned long long>(r.finalize.left_in_wal), r.finalize.left_in_wal == 1 ? "" : "s");
  }
}

Result<Report> report_of(const ProfileData& data, int top, std::optional<int64_t> step) {
  return build_report(data, {.top = top, .step = step});
}

// msprof's CSV files, per rank as msprof writes them: into each rank's PROF_ tree, or under
// `out_dir` (rank_<r>/ when there are several).
int write_rank_csvs(const ReportArgs& args) {
  auto dbs = find_profile_dbs(args.path);
  if (!dbs.ok()) return fail(dbs.status());
  for (const RankDb& r : *dbs) {
    if (args.rank && r.rank != *args.rank) continue;
    auto data = load_profile(r.db);
    if (!data.ok()) return fail(data.status());
    auto report = report_of(*data, args.top, args.step);
    if (!report.ok()) return fail(report.status());
    auto sel = select_tasks(*data, args.step);
    if (!sel.ok()) return fail(sel.status());
    std::filesystem::path dir = std::filesystem::path(r.db).parent_path() / "mindstudio_profiler_output";
    if (!args.out_dir.empty()) {
      bool several = dbs->size() > 1 && !args.rank;
      dir = several ? std::filesystem::path(args.out_dir) / ("rank_" + std::to_string(r.rank)) : std::filesystem::path(args.out_dir);
    }
    auto files = write_csv(*report, *data, *sel, dir.string());
    if (!files.ok()) return fail(files.status());
    for (const std::string& f : *files) std::printf("%s\n", f.c_str());
  }
  return kExitOk;
}

}  // namespace

int run_record(RecordArgs& args, const std::atomic<bool>* stop) {
  auto r = record(args.options, stop);
  if (!r.ok()) return fail(r.status());
  // msprof --analyze's communication tables, from every rank at once.
  if (auto analyzed = write_comm_analysis(r->ranks); !analyzed.ok()) return fail(analyzed.status());
  print_record_summary(*r);
  if (r->command_exit > 0) {
    std::fprintf(stderr, "npu-prof: the recorded command exited with status %d (the profile was written)\n",
                 r->command_exit);
    return kExitCommandFailed;
  }
  return kExitOk;
}

namespace {

// A damaged database is bad input (exit 3), yet what could be read is still reported: one warning
// line naming what is wrong, and the exit code a report of it ends with.
int warn_if_damaged(const Report& report) {
  const std::vector<std::string>& damage = report.header.damage;
  if (damage.empty()) return kExitOk;
  std::string what;
  for (const std::string& d : damage) what += (what.empty() ? "" : "; ") + d;
  std::fprintf(stderr, "npu-prof: warning: %s: damaged recording: %s; the report covers what could be read\n",
               report.header.db.c_str(), what.c_str());
  return kExitBadInput;
}

}  // namespace

int run_report(const ReportArgs& args) {
  if (args.format == "csv") return write_rank_csvs(args);
  auto data = load_profile(args.path, {.launches = false, .counters = false, .rank = args.rank, .ranks = {}});
  if (!data.ok()) return fail(data.status());
  auto report = report_of(*data, args.top, args.step);
  if (!report.ok()) return fail(report.status());
  const int done = warn_if_damaged(*report);
  if (done == kExitOk && !data->complete) {
    std::fprintf(stderr, "npu-prof: warning: %s: the recording is incomplete (the recorder stopped before finalizing)\n",
                 data->db_path.c_str());
  }
  if (!args.html.empty()) {
    if (Status s = write_text_file(args.html, render_html(*report)); !s.ok()) return fail(s);
    std::printf("npu-prof: wrote %s\n", args.html.c_str());
    return done;
  }
  if (args.format == "json") {
    std::cout << json_text(render_json(*report), 2) << "\n";
  } else {
    std::cout << (args.full ? render_text(*report, args.top)
                  : !args.section.empty() ? render_section(*report, args.section, args.top)
                                          : render_summary(*report));
  }
  return std::cout.good() ? done : kExitFailed;
}

namespace {

// "A:B" or "N" (steps numbered from 1) -> the range; "all" -> none. InvalidArgument names the text.
Result<std::optional<std::pair<int64_t, int64_t>>> parse_steps(const std::string& text) {
  if (text == "all") return std::optional<std::pair<int64_t, int64_t>>{};
  int64_t a = -1, b = -1;
  char tail = 0;
  int n = std::sscanf(text.c_str(), "%ld:%ld%c", &a, &b, &tail);
  if (n == 1 && text.find(':') == std::string::npos) b = a;
  else if (n != 2) a = -1;
  if (a < kFirstStep || b < a) return InvalidArgument("--steps '" + text + "': use A:B (steps from 1, A <= B), N or all");
  return std::optional<std::pair<int64_t, int64_t>>{{a, b}};
}

Result<std::set<int>> parse_ranks(const std::string& text) {
  std::set<int> out;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, ',');) {
    char* end = nullptr;
    long r = std::strtol(part.c_str(), &end, 10);
    if (part.empty() || *end != '\0' || r < 0 || r > 1 << 20) {
      return InvalidArgument("--ranks '" + text + "': use rank numbers separated by commas, e.g. 0,3");
    }
    out.insert(static_cast<int>(r));
  }
  return out;
}

}  // namespace

int usage(const Status& s) {
  std::fprintf(stderr, "npu-prof: export: %s\n", s.message().c_str());
  return kExitUsage;
}

int run_export(const ExportArgs& args) {
  ChromeOptions options;
  if (!args.steps.empty()) {
    auto steps = parse_steps(args.steps);
    if (!steps.ok()) return usage(steps.status());
    options.steps = *steps;
  }
  if (!args.ranks.empty()) {
    auto ranks = parse_ranks(args.ranks);
    if (!ranks.ok()) return usage(ranks.status());
    options.ranks = *ranks;
  }
  auto data = load_profile(args.path, {.launches = true, .counters = true, .rank = args.rank, .ranks = options.ranks});
  if (!data.ok()) return fail(data.status());
  bool defaulted = args.steps.empty() && (options.steps = default_steps(*data)).has_value();
  auto trace = chrome_trace(*data, options);
  if (!trace.ok()) return fail(Status(trace.status().code(), args.path + ": " + trace.status().message()));
  if (Status s = write_chrome_trace(*trace, args.chrome); !s.ok()) return fail(s);
  std::size_t events = (*trace)["traceEvents"].size();
  std::printf("npu-prof: wrote %s (%zu events", args.chrome.c_str(), events);
  if (options.steps && !data->steps.empty()) {
    // The steps written, not those asked for: --steps 5:9 of a 6-step recording wrote 5-6 and said 5-9.
    auto [lo, hi] = std::minmax_element(data->steps.begin(), data->steps.end(),
                                        [](const StepWindow& a, const StepWindow& b) { return a.step < b.step; });
    int64_t first = std::max(options.steps->first, lo->step), last = std::min(options.steps->second, hi->step);
    std::printf(", steps %ld-%ld", static_cast<long>(first), static_cast<long>(last));
    if (first != options.steps->first || last != options.steps->second) {
      std::printf(" of the %ld-%ld asked for: the recording has steps %ld-%ld", static_cast<long>(options.steps->first),
                  static_cast<long>(options.steps->second), static_cast<long>(lo->step), static_cast<long>(hi->step));
    }
  }
  std::printf(")\n");
  if (defaulted) std::printf("npu-prof: a few steps by default; --steps A:B or --steps all for others\n");
  return kExitOk;
}

int run_diff(const DiffArgs& args) {
  auto a = load_profile(args.a);
  if (!a.ok()) return fail(a.status());
  auto b = load_profile(args.b);
  if (!b.ok()) return fail(b.status());
  auto ra = report_of(*a, args.top, std::nullopt);
  if (!ra.ok()) return fail(ra.status());
  auto rb = report_of(*b, args.top, std::nullopt);
  if (!rb.ok()) return fail(rb.status());
  const int damaged = std::max(warn_if_damaged(*ra), warn_if_damaged(*rb));
  DiffReport d = diff_reports(*ra, *rb);
  if (args.format == "json") std::cout << json_text(render_diff_json(d), 2) << "\n";
  else std::cout << render_diff_text(d, args.top);
  return std::cout.good() ? damaged : kExitFailed;
}

}  // namespace npukit::prof
