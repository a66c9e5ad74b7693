// The allocator's cost, measured against the emulator's ground truth: the same ernie3-train run
// with the direct (non-caching) allocator and with the caching one; the direct run's report names
// the allocator with a cost per step within 25% of the step-time difference, the caching run's
// report has no such finding.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/profiler/prof_test_util.hpp"

namespace npukit::testing {
namespace {

using nlohmann::json;

struct AllocRun {
  json report;
  double step_ms = 0;  // mean over the steps after the first, from the steps table
};

AllocRun record_ernie3(const std::string& allocator) {
  ScopedNode node("alloc-" + allocator, "--speed 100 --seed 7");
  TempDir dir("alloc-" + allocator);
  auto r = run_command(prof() + " record -o " + dir.str() + " --node-name " + node.name() + " -- " + npu_run() +
                       " ernie3-train --steps 4 --allocator " + allocator);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  auto rep = run_command(prof() + " report " + dir.str() + " --format json");
  EXPECT_EQ(rep.exit_code, 0) << rep.output;
  AllocRun run{json::parse(rep.output, nullptr, false), 0};
  int n = 0;
  for (const json& s : run.report["steps"]) {
    if (s["step"].get<int>() == 1) continue;  // the warm-up step (steps count from 1)
    run.step_ms += s["step_ns"].get<double>() / 1e6, ++n;
  }
  if (n > 0) run.step_ms /= n;
  return run;
}

const json* finding(const json& report, const std::string& id) {
  for (const json& f : report["findings"]) {
    if (f["id"] == id) return &f;
  }
  return nullptr;
}

TEST(AllocatorCost, TheDirectAllocatorIsNamedWithItsTrueCostPerStep) {
  AllocRun direct = record_ernie3("direct"), caching = record_ernie3("caching");
  ASSERT_GT(direct.step_ms, 0);
  ASSERT_GT(caching.step_ms, 0);
  double truth = direct.step_ms - caching.step_ms;
  ASSERT_GT(truth, 0) << "the direct allocator costs time";
  const json* f = finding(direct.report, "allocator_cost");
  ASSERT_NE(f, nullptr) << direct.report["findings"].dump(1);
  double estimated = (*f)["cost_ms_per_step"].get<double>();
  EXPECT_NEAR(estimated / truth, 1.0, 0.25) << "estimated " << estimated << " ms per step, true " << truth;
  EXPECT_EQ(finding(caching.report, "allocator_cost"), nullptr) << caching.report["findings"].dump(1);
}

}  // namespace
}  // namespace npukit::testing
