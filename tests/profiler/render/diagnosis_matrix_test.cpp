// The diagnosis scored against the emulator's ground truth: `npu-prof selftest` runs every
// scenario of workloads/diagnosis/matrix.json and its baseline on fresh nodes. Each scenario's
// top finding must name its injected cause with a cost within 25% of the true step-time
// difference, and each baseline must have no finding above info. The printed table is the one in
// bench/RESULTS.md.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>

#include <nlohmann/json.hpp>

#include "tests/profiler/prof_test_util.hpp"

namespace npukit::testing {
namespace {

using nlohmann::json;

std::string diagnosis_dir() { return std::string(NPUKIT_SOURCE_DIR) + "/workloads/diagnosis"; }

TEST(DiagnosisMatrix, EveryInjectedCauseIsTheTopFindingWithItsTrueCost) {
  auto r = run_command("(" + prof() + " selftest --format json 2>/dev/null)");
  json m = json::parse(r.output, nullptr, false);
  ASSERT_TRUE(m.is_object()) << r.output;
  EXPECT_EQ(r.exit_code, 0) << r.output;
  ASSERT_EQ(m["scenarios"].size(), 17u);
  std::printf("| scenario | expected | top finding | estimated (ms/step) | true (ms/step) | error | verdict |\n|---|---|---|---|---|---|---|\n");
  for (const json& s : m["scenarios"]) {
    double estimated = s["estimated_ms_per_step"], truth = s["true_ms_per_step"];
    std::printf("| %s | %s | %s | %.4f | %.4f | %.1f%% | %s |\n", s["scenario"].get<std::string>().c_str(),
                s["expected"].get<std::string>().c_str(), s["top_finding"].get<std::string>().c_str(), estimated, truth,
                s["cost_error_percent"].get<double>(), s["right"] ? "right" : "WRONG");
    EXPECT_EQ(s["top_finding"], s["expected"]) << s.dump();
    ASSERT_GT(truth, 0) << s.dump();
    EXPECT_LE(std::abs(estimated - truth) / truth, 0.25) << s.dump();
    EXPECT_EQ(s["right"], true);
  }
  // The truth is a measurement, not the estimate: the loader scenario's cause is 6 ms by construction.
  for (const json& s : m["scenarios"]) {
    if (s["scenario"] == "loader") {
      EXPECT_NEAR(s["true_ms_per_step"].get<double>(), 6.0, 0.05);
    }
    if (s["scenario"] == "straggler-host") {  // host 1's 2 ms loaders take 3x: every rank waits 4 ms more
      EXPECT_NEAR(s["true_ms_per_step"].get<double>(), 4.0, 0.1);
    }
    if (s["scenario"] == "recompile") {  // one 20 ms compile per step, less the work queued before it
      EXPECT_NEAR(s["true_ms_per_step"].get<double>(), 20.0, 1.0);
    }
    // What fusion saves is priced as the emulator prices a fused kernel: within 5%, conv + batch
    // norm + relu and matmul + gelu too (the element-wise-chains rule read none of those).
    if (s["expected"] == "unfused_kernels") {
      EXPECT_LE(s["cost_error_percent"].get<double>(), 5.0) << s.dump();
    }
    // A free drains the device, so the device also waits for the next launch after it: counted,
    // the direct allocator's cost reads within 3% (6.0% short without that wait).
    if (s["scenario"] == "allocator") {
      EXPECT_LE(s["cost_error_percent"].get<double>(), 3.0) << s.dump();
    }
  }
  ASSERT_EQ(m["baselines"].size(), 13u);
  for (const json& b : m["baselines"]) EXPECT_TRUE(b["finding_above_info"].is_null()) << b.dump();
  std::printf("top-1: %d of %zu right; mean cost error %.1f%%\n", m["top1_right"].get<int>(), m["scenarios"].size(),
              m["mean_cost_error_percent"].get<double>());
}

TEST(DiagnosisMatrix, AWrongExpectationFailsTheSelftest) {
  TempDir dir("matrix-wrong");
  for (const char* w : {"clean", "loader"}) {
    std::filesystem::copy_file(diagnosis_dir() + "/" + w + ".json", dir / (std::string(w) + ".json"));
  }
  std::ofstream(dir / "matrix.json")
      << R"({"scenarios": [{"name": "loader", "cause": "slow_rank", "baseline": "clean", "injects": "a loader"}]})";
  auto r = run_command("(" + prof() + " selftest --dir " + dir.str() + " 2>/dev/null)");
  EXPECT_EQ(r.exit_code, 8) << r.output;
  EXPECT_NE(r.output.find("| loader | a loader | slow_rank | data_loader_starvation |"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("WRONG"), std::string::npos);
  EXPECT_NE(r.output.find("top-1: 0 of 1 right"), std::string::npos);
}

// An injected cause cannot make a job faster: a truth <= 0 says the pair was disturbed (under the
// whole suite on 2 cores host-gap once read -1.4 ms), so both are measured again, once, and the row
// says so. Here the "scenario" is the clean step and its "baseline" the slow loader's, so the
// truth is -6 ms both times: measured again, and wrong still.
TEST(DiagnosisMatrix, APairWhoseCauseMadeItFasterIsMeasuredAgainAndStaysWrong) {
  TempDir dir("matrix-again");
  for (const char* w : {"clean", "loader"}) {
    std::filesystem::copy_file(diagnosis_dir() + "/" + w + ".json", dir / (std::string(w) + ".json"));
  }
  std::ofstream(dir / "matrix.json")
      << R"({"scenarios": [{"name": "clean", "cause": "slow_rank", "baseline": "loader", "injects": "nothing"}]})";
  auto r = run_command("(" + prof() + " selftest --dir " + dir.str() + " --format json 2>/dev/null)");
  EXPECT_EQ(r.exit_code, 8) << r.output;
  json m = json::parse(r.output, nullptr, false);
  ASSERT_TRUE(m.is_object()) << r.output;
  ASSERT_EQ(m["scenarios"].size(), 1u);
  const json& s = m["scenarios"][0];
  EXPECT_EQ(s["remeasured"], true) << s.dump();
  EXPECT_NEAR(s["true_ms_per_step"].get<double>(), -6.0, 0.1) << s.dump();
  EXPECT_EQ(s["right"], false) << s.dump();
}

TEST(DiagnosisMatrix, AMissingMatrixIsOneClearLine) {
  auto r = run_command(prof() + " selftest --dir /nonexistent");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.output, "npu-prof: /nonexistent/matrix.json: cannot open the diagnosis matrix\n");
}

}  // namespace
}  // namespace npukit::testing
