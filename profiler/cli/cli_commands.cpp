#include "profiler/cli/cli_commands.hpp"

#include <cstdio>
#include <filesystem>
#include <iostream>

#include "profiler/render/chrome_trace.hpp"
#include "profiler/cli/cli.hpp"
#include "profiler/render/diff.hpp"
#include "profiler/analyze/report_build.hpp"
#include "profiler/render/report_render.hpp"

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
  std::printf("npu-prof: recorded %llu events (%llu counter samples) into %s\n",
              static_cast<unsigned long long>(r.events), static_cast<unsigned long long>(r.samples), r.db.c_str());
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
  auto data = load_profile(args.path);
  if (!data.ok()) return fail(data.status());
  auto report = report_of(*data, args.top, args.step);
  if (!report.ok()) return fail(report.status());
  if (!data->complete) {
    std::fprintf(stderr, "npu-prof: warning: %s: the recording is incomplete (the recorder stopped before finalizing)\n",
                 data->db_path.c_str());
  }
  if (args.format == "json") {
    std::cout << render_json(*report).dump(2) << "\n";
  } else if (args.format == "csv") {
    std::string dir = args.out_dir.empty()
                          ? (std::filesystem::path(data->db_path).parent_path() / "mindstudio_profiler_output").string()
                          : args.out_dir;
    auto sel = select_tasks(*data, args.step);
    if (!sel.ok()) return fail(sel.status());
    auto files = write_csv(*report, *data, *sel, dir);
    if (!files.ok()) return fail(files.status());
    for (const std::string& f : *files) std::printf("%s\n", f.c_str());
  } else {
    std::cout << render_text(*report, args.top);
  }
  return std::cout.good() ? kExitOk : kExitFailed;
}

int run_export(const ExportArgs& args) {
  auto data = load_profile(args.path, {.launches = true, .counters = true});
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
