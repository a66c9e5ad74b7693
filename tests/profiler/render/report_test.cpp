// Reports of the small deterministic workload: the text golden, msprof CSV files and headers,
// JSON, the step filter. Virtual-time durations are deterministic for a seed; the header
// (paths, node name, session length, event counts) and the memory section (sampled on the
// wall clock) are not, so the golden leaves them out.
#include <gtest/gtest.h>

#include "tests/profiler/prof_test_util.hpp"

namespace npukit::testing {
namespace {

// The report without its header block and its Memory section.
std::string deterministic_part(const std::string& text) {
  std::string out;
  bool in_header = true, in_memory = false;
  for (const std::string& line : lines_of(text)) {
    if (line.rfind("== ", 0) == 0) {
      in_header = false;
      in_memory = line == "== Memory ==";
    }
    if (!in_header && !in_memory) out += line + "\n";
  }
  return out;
}

// `npu-prof report <small run> <args>` against a golden; returns the whole output.
std::string golden_report(const std::string& args, const std::string& golden) {
  const RecordedRun& run = small_run();
  EXPECT_FALSE(run.db.empty()) << run.record.output;
  auto r = run_command(prof() + " report " + run.dir + " --full " + args);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  expect_golden(golden, deterministic_part(r.output));
  return r.output;
}

TEST(Report, GoldenTextForTheSmallWorkload) {
  std::string out = golden_report("--top 8", "small-train.report.txt");
  EXPECT_NE(out.find("Recording:  complete"), std::string::npos);
}

TEST(Report, GoldenStepFilteredText) {
  std::string out = golden_report("--step 2 --top 5", "small-train.step2.report.txt");
  EXPECT_NE(out.find("Filter:     step 2"), std::string::npos);
}

// msprof writes its CSV files per rank: npu-prof writes each rank's into rank_<r>/ under -o
// (or into each rank's PROF_ tree without -o).
TEST(Report, CsvFilesUseMsprofNamesAndHeadersPerRank) {
  const RecordedRun& run = small_run();
  TempDir out("csv");
  auto r = run_command(prof() + " report " + run.dir + " --format csv -o " + out.str());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::string ts = std::filesystem::path(run.db).filename().string().substr(7, 14);
  const std::pair<std::string, std::string> files[] = {
      {"op_summary_" + ts + ".csv",
       "Device_id,Model ID,Task ID,Stream ID,Op Name,OP Type,OP State,Task Type,Task Start Time(us),Task Duration(us),"
       "Task Wait Time(us),Block Num,HF32 Eligible,Mix Block Num,Input Shapes,Input Data Types,Input Formats,"
       "Output Shapes,Output Data Types,Output Formats,Context ID"},
      {"op_statistic_" + ts + ".csv",
       "Device_id,OP Type,Core Type,Count,Total Time(us),Min Time(us),Avg Time(us),Max Time(us),Ratio(%)"},
      {"communication_statistic_" + ts + ".csv",
       "Device_id,OP Type,Count,Total Time(us),Min Time(us),Avg Time(us),Max Time(us),Ratio(%)"},
      {"step_trace_time.csv",
       "Device_id,Step,Computing,Communication(Not Overlapped),Overlapped,Communication,Free,Stage,Bubble,"
       "Communication(Not Overlapped and Exclude Receive),Preparing"}};
  std::string op_statistic;
  for (const std::string rank : {"rank_0", "rank_1"}) {
    std::string dir = out / rank;
    for (const auto& [name, header] : files) {
      std::string path = dir + "/" + name;
      auto lines = lines_of(read_file(path));
      ASSERT_FALSE(lines.empty()) << path << " missing; npu-prof said: " << r.output;
      EXPECT_EQ(lines[0], header) << name;
      EXPECT_NE(r.output.find(path), std::string::npos) << r.output;
    }
    EXPECT_EQ(lines_of(read_file(dir + "/op_summary_" + ts + ".csv")).size(), 1u + 51u);
    EXPECT_EQ(lines_of(read_file(dir + "/step_trace_time.csv")).size(), 1u + 3u);
    // Shapes with commas are quoted; start times are Unix us with ns decimals.
    std::string summary = read_file(dir + "/op_summary_" + ts + ".csv");
    EXPECT_NE(summary.find(",\"2048,1024;1024,1024\",FLOAT16;FLOAT16,ND;ND,"), std::string::npos);
    std::string stats = read_file(dir + "/op_statistic_" + ts + ".csv");
    op_statistic += op_statistic.empty() ? stats : stats.substr(stats.find('\n') + 1);
  }
  expect_golden("small-train.op_statistic.csv", op_statistic);
  // Without -o the files go where msprof puts them: each rank's PROF_ tree.
  auto def = run_command(prof() + " report " + run.dir + " --format csv");
  ASSERT_EQ(def.exit_code, 0) << def.output;
  for (const std::string& db : run.dbs) {
    std::string dir = std::filesystem::path(db).parent_path().string();
    EXPECT_NE(def.output.find(dir + "/mindstudio_profiler_output/op_summary_" + ts + ".csv"), std::string::npos) << def.output;
  }
}

TEST(Report, JsonHasEverySectionWithUnitsInKeys) {
  const RecordedRun& run = small_run();
  auto r = run_command("(" + prof() + " report " + run.dir + " --format json 2>/dev/null)");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto j = nlohmann::json::parse(r.output, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.output.substr(0, 400);
  for (const char* key : {"header", "operators", "top_tasks", "steps", "communication", "memory", "throttling", "findings"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["header"]["complete"], true);
  EXPECT_EQ(j["header"]["tasks"], 102);
  EXPECT_EQ(j["steps"].size(), 6u);
  const auto& comm = j["communication"]["by_group"][0];
  EXPECT_EQ(comm["group"], "dp0");
  EXPECT_EQ(comm["op_type"], "hcom_allReduce_");
  EXPECT_EQ(comm["ranks"], 2);
  // busbw of an allreduce on 2 ranks = algbw x 2(n-1)/n = algbw.
  EXPECT_DOUBLE_EQ(comm["busbw_bytes_per_s"].get<double>(), comm["algbw_bytes_per_s"].get<double>());
  std::set<std::string> findings;
  for (const auto& f : j["findings"]) {
    findings.insert(f["id"].get<std::string>());
    EXPECT_FALSE(f["numbers"].empty()) << f["id"];
  }
  EXPECT_TRUE(findings.count("data_loader_starvation"));
  EXPECT_TRUE(findings.count("aicpu_fallback"));
  EXPECT_EQ(j["operators"]["aicpu_ops"][0]["name"], "aten::cumsum");
  EXPECT_GT(j["memory"]["devices"][0]["peak_bytes"].get<int64_t>(), 0);
}

// The default text report answers first: job, step-time percentiles, where the step goes, the
// top findings and the slowest ranks, within 100 columns by 40 lines; golden for the demo's
// workload (ernie3-train, 8 ranks, 4 fast steps; the first line, which names the directory, left
// out), and golden JSON of the same answers.
TEST(Report, TheSummaryOfTheDemoWorkloadFits100By40) {
  static RecordedRun run = record_on_fresh_node("summary", "ernie3-train --steps 4");
  ASSERT_EQ(run.record.exit_code, 0) << run.record.output;
  auto r = run_command(prof() + " report " + run.dir);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto lines = lines_of(r.output);
  EXPECT_LE(lines.size(), 40u) << r.output;
  for (const std::string& line : lines) EXPECT_LE(line.size(), 100u) << line;
  ASSERT_FALSE(lines.empty());
  expect_golden("ernie3-train.summary.txt", r.output.substr(r.output.find('\n') + 1));
  // Golden JSON of the same answers (what has no wall-clock time or path in it).
  auto js = nlohmann::json::parse(run_command("(" + prof() + " report " + run.dir + " --format json 2>/dev/null)").output,
                                  nullptr, false);
  ASSERT_TRUE(js.is_object());
  nlohmann::json answers = {{"job", js["header"]["job"]}, {"summary", js["summary"]}, {"ranks", js["ranks"]},
                            {"findings", js["findings"]}, {"measured_memory_peak_bytes", js["memory"]["devices"][0]["peak_bytes"]}};
  expect_golden("ernie3-train.summary.json", answers.dump(1) + "\n");
  for (const char* section : {"ops", "steps", "comm", "memory", "throttle", "findings"}) {
    auto one = run_command(prof() + " report " + run.dir + " --section " + section);
    EXPECT_EQ(one.exit_code, 0) << section << ": " << one.output;
    EXPECT_EQ(one.output.rfind("\n== ", 0), 0u) << section << ": " << one.output.substr(0, 200);
  }
}

// A long run's step table is percentiles and outliers, not a row per step (JSON keeps them all).
TEST(Report, LongRunsShowStepPercentilesNotEveryStep) {
  static RecordedRun run = record_on_fresh_node("steps12", data_path("small-train.json") + " --steps 12");
  ASSERT_EQ(run.record.exit_code, 0) << run.record.output;
  auto steps = run_command(prof() + " report " + run.dir + " --section steps");
  ASSERT_EQ(steps.exit_code, 0) << steps.output;
  EXPECT_NE(steps.output.find("12 steps: percentiles per column"), std::string::npos) << steps.output;
  int rows = 0;
  for (const std::string& line : lines_of(steps.output)) {
    for (const char* label : {"   p50 ", "   p95 ", "   max ", "   min "}) rows += line.rfind(label, 0) == 0;
  }
  EXPECT_EQ(rows, 4) << steps.output;
  EXPECT_LE(lines_of(steps.output).size(), 4u + 4u + 5u) << "title, note, header, 4 percentiles, at most 5 outliers";
  auto json_steps = run_command(prof() + " report " + run.dir + " --format json");
  EXPECT_EQ(nlohmann::json::parse(json_steps.output)["steps"].size(), 24u) << "JSON carries every step of every rank";
}

TEST(Report, StepThatWasNotRecordedIsBadInput) {
  auto r = run_command(prof() + " report " + small_run().dir + " --step 99");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.output.find("no step 99 recorded (steps 1-3)"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace npukit::testing

#include "profiler/render/report_render.hpp"

namespace npukit::testing {
namespace {

// A lossless recording that lost events says so where it says "lossless" (the summary said
// "recorded lossless" beside "62875 events missed"; only --full said the reader was evicted).
TEST(Report, ALosslessRecordingThatLostEventsSaysSoInEveryHeader) {
  prof::Report r;
  r.header.mode = "lossless";
  r.header.events_missed = 62875;
  r.header.lossless_lost = true;
  const std::string said = "recorded lossless until its reader was evicted (62875 events missed)";
  EXPECT_NE(prof::render_summary(r).find(said), std::string::npos) << prof::render_summary(r);
  EXPECT_NE(prof::render_text(r, 5).find(said), std::string::npos);
  EXPECT_NE(prof::render_html(r).find(said), std::string::npos);
  r.header.lossless_lost = false, r.header.events_missed = 0;
  EXPECT_NE(prof::render_summary(r).find("recorded lossless\n"), std::string::npos) << prof::render_summary(r);
}

}  // namespace
}  // namespace npukit::testing
