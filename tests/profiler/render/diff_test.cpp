// npu-prof diff: two recordings of the small workload, one with a slower data loader and
// larger matmuls; the diff shows the ops and the step breakdown that changed.
#include <gtest/gtest.h>

#include <optional>

#include "profiler/render/diff.hpp"
#include "tests/profiler/prof_test_util.hpp"

namespace npukit::testing {
namespace {

TEST(Diff, UnitComparesOpsStepsAndFindings) {
  prof::Report a, b;
  prof::DurationStats s1{10, 1000, 90, 110, 100, 100, 100};
  prof::DurationStats s2{10, 3000, 290, 310, 300, 300, 100};
  a.op_names.push_back({"aten::mm", "MatMulV2", "AI_CORE", "64,64;64,64", "FLOAT16;FLOAT16", s1, 0, 0});
  b.op_names.push_back({"aten::mm", "MatMulV2", "AI_CORE", "64,64;64,64", "FLOAT16;FLOAT16", s2, 0, 0});
  b.op_names.push_back({"aten::cumsum", "Cumsum", "AI_CPU", "4096", "FLOAT16", s1, 0, 0});
  a.steps.push_back({0, 0, {100, 50, 0, 0, 0, 50, 10}});
  b.steps.push_back({0, 0, {200, 50, 0, 0, 0, 150, 100}});
  b.findings.push_back({"aicpu_fallback", "x", {}});
  prof::DiffReport d = prof::diff_reports(a, b);
  ASSERT_EQ(d.ops.size(), 2u);
  EXPECT_EQ(d.ops[0].name, "aten::mm");  // largest change of total time first
  EXPECT_EQ(d.ops[0].delta_total(), 2000);
  EXPECT_EQ(d.ops[1].a.count, 0u);
  EXPECT_EQ(d.steps[0].metric, "Step");
  EXPECT_EQ(d.steps[0].b_ns - d.steps[0].a_ns, 100);
  EXPECT_EQ(d.findings_new, std::vector<std::string>{"aicpu_fallback"});
  std::string text = prof::render_diff_text(d, 10);
  EXPECT_NE(text.find("only in B"), std::string::npos) << text;
  EXPECT_NE(text.find("+200.0%"), std::string::npos) << text;
  EXPECT_EQ(prof::render_diff_json(d)["ops"][0]["delta_total_ns"], 2000);
}

TEST(Diff, FindingsExplainTheStepChangeByTheirCosts) {
  prof::Report a, b;
  a.steps.push_back({0, 0, {10'000'000, 0, 0, 0, 0, 0, 0}});
  b.steps.push_back({0, 0, {14'000'000, 0, 0, 0, 0, 0, 0}});
  auto finding = [](const char* id, const char* severity, std::optional<double> cost) {
    prof::Finding f{id, std::string(id) + " sentence"};
    f.severity = severity, f.cost_ns_per_step = cost;
    return f;
  };
  a.findings = {finding("data_loader_starvation", "critical", 2e6), finding("memory_bound_ops", "info", std::nullopt)};
  b.findings = {finding("data_loader_starvation", "critical", 5e6), finding("allocator_cost", "warning", 0.5e6),
                finding("memory_bound_ops", "info", std::nullopt)};
  prof::DiffReport d = prof::diff_reports(a, b);
  ASSERT_EQ(d.findings.size(), 3u);
  EXPECT_EQ(d.findings[0].id, "data_loader_starvation");  // largest change of cost first
  EXPECT_DOUBLE_EQ(d.findings[0].delta_cost_ns(), 3e6);
  EXPECT_EQ(d.findings[1].id, "allocator_cost");           // absent in A: costs 0 there
  EXPECT_DOUBLE_EQ(d.findings[1].delta_cost_ns(), 0.5e6);
  EXPECT_EQ(d.findings[2].id, "memory_bound_ops");         // without a cost: last
  EXPECT_DOUBLE_EQ(d.explained_ns(), 3.5e6);
  EXPECT_DOUBLE_EQ(d.step_delta_ns(), 4e6);
  std::string text = prof::render_diff_text(d, 10);
  EXPECT_NE(text.find("changed by +4000.000 us; the findings' costs changed by +3500.000 us (88% of the change"),
            std::string::npos) << text;
  auto j = prof::render_diff_json(d);
  EXPECT_EQ(j["findings"][1]["a_cost_ns"], nullptr);
  EXPECT_EQ(j["findings"][1]["severity_b"], "warning");
  EXPECT_EQ(j["explained_ns"], 3.5e6);
  EXPECT_EQ(j["findings"][2]["delta_cost_ns"], nullptr);

  // A's allocator cost was measured under the rule's threshold: the diff counts it, not 0.
  a.measured_cost_ns_per_step["allocator_cost"] = 0.2e6;
  prof::DiffReport measured = prof::diff_reports(a, b);
  EXPECT_DOUBLE_EQ(measured.findings[1].delta_cost_ns(), 0.3e6);
  EXPECT_TRUE(measured.findings[1].severity_a.empty());
  EXPECT_NE(prof::render_diff_text(measured, 10).find("(200.000)"), std::string::npos);
}

TEST(Diff, TwoRecordingsEndToEnd) {
  const RecordedRun& a = small_run();
  ASSERT_FALSE(a.db.empty());
  TempDir dir("diff");
  std::string changed = read_file(data_path("small-train.json"));
  auto replace = [&](const std::string& from, const std::string& to) {
    auto at = changed.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    changed.replace(at, from.size(), to);
  };
  replace("\"loader_ms\": 6", "\"loader_ms\": 9");
  replace("[[2048, 1024], [1024, 1024]]", "[[4096, 1024], [1024, 1024]]");
  std::ofstream(dir / "changed.json") << changed;
  RecordedRun b = record_on_fresh_node("diffb", dir / "changed.json");
  ASSERT_EQ(b.record.exit_code, 0) << b.record.output;
  auto r = run_command(prof() + " diff " + a.dir + " " + b.dir);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("== Step breakdown"), std::string::npos);
  EXPECT_NE(r.output.find("4096,1024;1024,1024"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("only in B"), std::string::npos) << r.output;
  auto j = nlohmann::json::parse(run_command(prof() + " diff " + a.dir + " " + b.dir + " --format json").output, nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  double preparing_a = 0, preparing_b = 0;
  for (const auto& s : j["steps"]) {
    if (s["metric"] == "Preparing") preparing_a = s["a_ns"], preparing_b = s["b_ns"];
  }
  EXPECT_NEAR(preparing_b - preparing_a, 3e6, 0.2e6) << "the loader got 3 ms slower per step";
  bool loader_found = false;
  for (const auto& f : j["findings"]) {
    if (f["id"] != "data_loader_starvation") continue;
    loader_found = true;
    ASSERT_TRUE(f["delta_cost_ns"].is_number()) << f.dump();
    EXPECT_NEAR(f["delta_cost_ns"].get<double>(), 3e6, 0.3e6) << "the finding's cost moves with the loader";
  }
  EXPECT_TRUE(loader_found) << j["findings"].dump();
  EXPECT_NE(r.output.find("of the change"), std::string::npos) << r.output;
  auto missing = run_command(prof() + " diff " + a.dir + " /nonexistent");
  EXPECT_EQ(missing.exit_code, 3);
}

}  // namespace
}  // namespace npukit::testing
