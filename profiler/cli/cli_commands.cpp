#include "profiler/cli/cli_commands.hpp"

#include <cstdio>
#include <filesystem>
#include <iostream>

#include "profiler/render/chrome_trace.hpp"
#include "profiler/cli/cli.hpp"
#include "profiler/render/diff.hpp"
#include "profiler/analyze/report_build.hpp"
#include "profiler/render/report_render.hpp"
#include "profiler/store/prof_layout.hpp"

namespace npukit::prof {

namespace {

int fail(const Status& s) {
  std::fprintf(stderr, "npu-prof: %s\n", s.message().c_str());
  switch (s.code()) {
    case Code::kNotFound:
    case Code::kInvalidArgument: return kExitBadInput;
    case Code::kUnavailable: return kExitNoNode;
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
  print_record_summary(*r);
  if (r->command_exit > 0) {
    std::fprintf(stderr, "npu-prof: the recorded command exited with status %d (the profile was written)\n",
                 r->command_exit);
    return kExitCommandFailed;
  }
  return kExitOk;
}

int run_report(const ReportArgs& args) {
  if (args.format == "csv") return write_rank_csvs(args);
  auto data = load_profile(args.path, {.launches = false, .counters = false, .rank = args.rank});
  if (!data.ok()) return fail(data.status());
  auto report = report_of(*data, args.top, args.step);
  if (!report.ok()) return fail(report.status());
  if (!data->complete) {
    std::fprintf(stderr, "npu-prof: warning: %s: the recording is incomplete (the recorder stopped before finalizing)\n",
                 data->db_path.c_str());
  }
  if (args.format == "json") {
    std::cout << render_json(*report).dump(2) << "\n";
  } else {
    std::cout << render_text(*report, args.top);
  }
  return std::cout.good() ? kExitOk : kExitFailed;
}

int run_export(const ExportArgs& args) {
  auto data = load_profile(args.path, {.launches = true, .counters = true, .rank = args.rank});
  if (!data.ok()) return fail(data.status());
  if (Status s = write_chrome_trace(*data, args.chrome); !s.ok()) return fail(s);
  std::printf("npu-prof: wrote %s (%zu tasks, %zu launches)\n", args.chrome.c_str(), data->tasks.size(),
              data->launches.size());
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
  DiffReport d = diff_reports(*ra, *rb);
  if (args.format == "json") std::cout << render_diff_json(d).dump(2) << "\n";
  else std::cout << render_diff_text(d, args.top);
  return kExitOk;
}

}  // namespace npukit::prof
