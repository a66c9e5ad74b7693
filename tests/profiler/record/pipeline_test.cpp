// A pipeline-parallel job (4 stages, 1F1B) recorded on a real node: the stages wait for each other
// at their receives, and the report calls that the pipeline's bubble, not a slow link or
// unoverlapped communication; more micro-batches shrink it toward 1F1B's floor.
#include <gtest/gtest.h>

#include <regex>

#include "tests/profiler/prof_test_util.hpp"

namespace npukit::testing {
namespace {

// The mean step time of `workload` run standalone in fast mode with `micro` micro-batches.
double step_ms(const std::string& workload_json, int micro, const TempDir& dir) {
  std::string text = read_file(workload_json);
  text = std::regex_replace(text, std::regex(R"("micro_batches": [0-9]+)"), "\"micro_batches\": " + std::to_string(micro));
  std::string path = dir / ("pp-" + std::to_string(micro) + ".json");
  std::ofstream(path) << text;
  auto r = run_command(npu_run() + " " + path + " --standalone --fast --steps 3");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  std::smatch m;
  EXPECT_TRUE(std::regex_search(r.output, m, std::regex(R"(step time +([0-9.]+) ms)"))) << r.output;
  return m.empty() ? 0 : std::stod(m[1].str());
}

TEST(PipelineBubble, TheReportNamesTheBubbleNotASlowLink) {
  RecordedRun run = record_on_fresh_node("pipeline", data_path("pipeline-small.json"));
  ASSERT_EQ(run.record.exit_code, 0) << run.record.output;
  ASSERT_EQ(run.dbs.size(), 4u) << "one tree per stage";
  auto r = run_command(prof() + " report " + run.dir + " --format json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto report = nlohmann::json::parse(r.output, nullptr, false);
  ASSERT_FALSE(report["findings"].empty()) << r.output;
  const auto& top = report["findings"][0];
  EXPECT_EQ(top["id"], "pipeline_bubble") << r.output;
  for (const auto& f : report["findings"]) {
    EXPECT_NE(f["id"], "slow_link") << f.dump();
    EXPECT_NE(f["id"], "unoverlapped_communication") << f.dump();
  }
  // 4 stages over 8 micro-batches: at least 1F1B's floor, 3/11 of the step; the transfers add to it.
  double percent = top["numbers"].value("percent_of_step", 0.0), floor = top["numbers"].value("one_f_one_b_floor_percent", 0.0);
  EXPECT_NEAR(floor, 100.0 * 3 / 11, 0.01) << top.dump();
  EXPECT_GE(percent, floor) << top.dump();
  EXPECT_LE(percent, 60) << top.dump();
  EXPECT_NE(report["header"]["job"]["layout"].get<std::string>().find("pp4 (8 micro-batches, 1F1B)"), std::string::npos);
  auto text = run_command(prof() + " report " + run.dir);
  EXPECT_NE(text.output.find("(of which the pipeline's bubble"), std::string::npos) << text.output;
}

// (m + p - 1) slots of a stage's forward and backward make a step: 8 -> 32 micro-batches takes the
// step from 11 to 35 slots (3.18x) while the work grows 4x.
TEST(PipelineBubble, MoreMicroBatchesShrinkTheBubble) {
  TempDir dir("pp-micro");
  double m8 = step_ms(data_path("pipeline-small.json"), 8, dir), m32 = step_ms(data_path("pipeline-small.json"), 32, dir);
  ASSERT_GT(m8, 0);
  EXPECT_NEAR(m32 / m8, 35.0 / 11.0, 0.1 * 35.0 / 11.0) << m8 << " ms vs " << m32 << " ms";
}

}  // namespace
}  // namespace npukit::testing
