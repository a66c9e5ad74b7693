// HBM near capacity: a step whose weights and gradients fill over 90% of the device's HBM gets
// the finding with the device's real capacity (the npu_hbm_total_bytes counter); a small run
// does not.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/profiler/prof_test_util.hpp"

namespace npukit::testing {
namespace {

using nlohmann::json;

json report_json(const std::string& dir) {
  return json::parse(run_command("(" + prof() + " report " + dir + " --format json 2>/dev/null)").output, nullptr, false);
}

const json* finding(const json& report, const std::string& id) {
  for (const json& f : report["findings"]) {
    if (f["id"] == id) return &f;
  }
  return nullptr;
}

TEST(HbmNearCapacity, AFullDeviceIsNamedWithItsCapacity) {
  RecordedRun run = record_on_fresh_node("hbm-full", data_path("hbm-full.json"));
  ASSERT_EQ(run.record.exit_code, 0) << run.record.output;
  json r = report_json(run.dir);
  EXPECT_EQ(r["memory"]["devices"][0]["capacity_bytes"], int64_t{64} << 30);  // the 910B2's 64 GiB
  const json* f = finding(r, "hbm_near_capacity");
  ASSERT_NE(f, nullptr) << r["findings"].dump(1);
  EXPECT_EQ((*f)["severity"], "warning");
  EXPECT_GE((*f)["numbers"]["percent_of_capacity"].get<double>(), 90);
  EXPECT_LT((*f)["numbers"]["percent_of_capacity"].get<double>(), 100);
  EXPECT_DOUBLE_EQ((*f)["numbers"]["capacity_gib"].get<double>(), 64);
}

TEST(HbmNearCapacity, ASmallRunHasNoSuchFinding) {
  json r = report_json(small_run().dir);
  EXPECT_EQ(finding(r, "hbm_near_capacity"), nullptr);
  EXPECT_GT(r["memory"]["devices"][0]["capacity_bytes"].get<int64_t>(), 0);
}

}  // namespace
}  // namespace npukit::testing
