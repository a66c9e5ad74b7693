// The diagnosis scored against the emulator's ground truth: each scenario injects one cause into
// the clean one-device training step (tests/data/profiler/scenarios/); the truth of its cost is
// the step-time difference against the clean run, which the emulator runs too. For each: the top
// finding names the cause and its estimated cost per step is within 25% of the truth; the clean
// run has no finding above info. The matrix is printed (bench/RESULTS.md keeps it).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include <nlohmann/json.hpp>

#include "tests/profiler/prof_test_util.hpp"

namespace npukit::testing {
namespace {

using nlohmann::json;

struct Recorded {
  json report;
  double step_ms = 0;  // mean over the steps after the first
};

Recorded record(const std::string& scenario) {
  RecordedRun run = record_on_fresh_node("diag-" + scenario, data_path("scenarios/" + scenario + ".json"));
  EXPECT_EQ(run.record.exit_code, 0) << run.record.output;
  auto r = run_command(prof() + " report " + run.dir + " --format json");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  Recorded out{json::parse(r.output, nullptr, false), 0};
  int n = 0;
  for (const json& s : out.report["steps"]) {
    if (s["step"].get<int>() > 0) out.step_ms += s["step_ns"].get<double>() / 1e6, ++n;
  }
  out.step_ms /= std::max(n, 1);
  return out;
}

struct Scenario {
  const char* name;
  const char* cause;     // the rule that must come first
  const char* baseline;  // the same run without the cause
};

TEST(DiagnosisMatrix, EveryInjectedCauseIsTheTopFindingWithItsTrueCost) {
  const Scenario scenarios[] = {{"loader", "data_loader_starvation", "clean"},
                                {"allocator", "allocator_cost", "clean"},
                                {"aicpu", "aicpu_fallback", "clean"},
                                {"straggler", "slow_rank", "clean-dp2"},
                                {"slow-link", "slow_link", "clean-dp2"},
                                {"power-cap", "throttling", "clean-long"},
                                {"launch-bound", "launch_bound", "launch-bound-graph"},
                                {"host-gap", "host_launch_gaps", "clean"}};
  std::map<std::string, Recorded> baselines;
  for (const char* name : {"clean", "clean-dp2", "clean-long", "launch-bound-graph"}) {
    baselines[name] = record(name);
    for (const json& f : baselines[name].report["findings"]) {
      EXPECT_EQ(f["severity"], "info") << "the clean run " << name << ": " << f.dump();
    }
  }
  std::printf("| scenario | expected | top finding | estimated (ms/step) | true (ms/step) | error | verdict |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  int right = 0;
  double errors = 0;
  for (const Scenario& s : scenarios) {
    Recorded run = record(s.name);
    ASSERT_FALSE(run.report["findings"].empty()) << s.name;
    const json& top = run.report["findings"][0];
    double truth = run.step_ms - baselines[s.baseline].step_ms;
    double estimated = top["cost_ms_per_step"].is_number() ? top["cost_ms_per_step"].get<double>() : 0;
    double error = truth > 0 ? std::abs(estimated - truth) / truth : 1;
    bool ok = top["id"] == s.cause && error <= 0.25;
    right += ok;
    errors += error;
    std::printf("| %s | %s | %s | %.4f | %.4f | %.1f%% | %s |\n", s.name, s.cause, top["id"].get<std::string>().c_str(),
                estimated, truth, 100 * error, ok ? "right" : "WRONG");
    EXPECT_EQ(top["id"], s.cause) << s.name << ": " << run.report["findings"].dump(1);
    EXPECT_LE(error, 0.25) << s.name << ": estimated " << estimated << " ms per step, true " << truth;
  }
  for (const auto& [name, clean] : baselines) {
    const json& findings = clean.report["findings"];
    bool ok = std::all_of(findings.begin(), findings.end(), [](const json& f) { return f["severity"] == "info"; });
    std::printf("| %s | (nothing above info) | %s | | | | %s |\n", name.c_str(),
                findings.empty() ? "none" : (findings[0]["id"].get<std::string>() + " (info)").c_str(), ok ? "right" : "WRONG");
  }
  std::printf("top-1: %d of %zu right; mean cost error %.1f%%\n", right, std::size(scenarios),
              100 * errors / static_cast<double>(std::size(scenarios)));
}

}  // namespace
}  // namespace npukit::testing
