// Fuzz target: a profile database as `npu-prof report`, `report --format json`, `export --chrome`
// and `diff` open it — truncated, foreign, with corrupted pages or another schema. The input is
// the bytes of one rank's msprof_*.db; the seeds are real recordings. Each command must end
// with its documented exit code (0, or 3 for bad input), never crash or hang.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "profiler/cli/cli.hpp"
#include "profiler/cli/cli_commands.hpp"
#include "tests/fuzz/fuzz_util.hpp"

namespace {

namespace prof = npukit::prof;

void expect_documented(int rc, const char* command) {
  if (rc != prof::kExitOk && rc != prof::kExitBadInput) {
    std::fprintf(stderr, "profile fuzz: %s exited %d (documented: 0 or %d)\n", command, rc, prof::kExitBadInput);
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  std::string db = npukit::fuzz::scratch_path("msprof.db");
  std::string trace = npukit::fuzz::scratch_path("trace.json");
  if (!npukit::fuzz::write_file(db, data, size)) return 0;
  prof::ReportArgs report;
  report.path = db;
  expect_documented(prof::run_report(report), "report");
  report.format = "json";
  expect_documented(prof::run_report(report), "report --format json");
  prof::ExportArgs exp;
  exp.path = db;
  exp.chrome = trace;
  expect_documented(prof::run_export(exp), "export --chrome");
  prof::DiffArgs diff;
  diff.a = diff.b = db;
  expect_documented(prof::run_diff(diff), "diff");
  ::unlink(db.c_str());
  ::unlink(trace.c_str());
  ::unlink((db + "-journal").c_str());
  return 0;
}
