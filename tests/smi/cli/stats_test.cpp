// npu-smi stats (job accounting) against a profile of the same job: energy within 2% of the
// integral of the recorded power samples, and peak HBM in use exactly the profile's largest
// totalAllocate; text and JSON, and a job id that does not exist.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tests/daemon_util.hpp"
#include "tests/profiler/prof_test_util.hpp"

namespace npukit::testing {
namespace {

using nlohmann::json;

std::string bin(const std::string& path) { return std::string(NPUKIT_BUILD_DIR) + "/" + path; }

double sql_number(const std::string& db, const std::string& sql) {
  auto r = run_command("sqlite3 '" + db + "' \"" + sql + "\"");
  char* end = nullptr;
  double v = std::strtod(r.output.c_str(), &end);
  EXPECT_TRUE(end != r.output.c_str()) << sql << ": " << r.output;
  return end != r.output.c_str() ? v : -1;
}

struct Recorded {
  std::string dir;
  json job;  // npu-smi stats --json's only job
};

Recorded record_and_stat(ScopedNode& node, const std::string& workload, const std::string& mode) {
  Recorded out;
  out.dir = (std::filesystem::temp_directory_path() / ("npukit-stats-" + std::to_string(getpid()) + "-" + mode)).string();
  std::filesystem::remove_all(out.dir);
  auto rec = run_command(bin("profiler/npu-prof") + " record --mode " + mode + " -o " + out.dir + " --node-name " +
                         node.name() + " -- " + bin("workloads/npu-run") + " " + workload);
  EXPECT_EQ(rec.exit_code, 0) << rec.output;
  json stats = json::parse(run_command("(" + bin("smi/npu-smi") + " stats --json --node-name " + node.name() + " 2>/dev/null)").output,
                           nullptr, false);
  EXPECT_TRUE(stats.is_object());
  if (stats.is_object() && !stats["jobs"].empty()) out.job = stats["jobs"].back();
  return out;
}

TEST(Stats, EnergyAgreesWithTheProfilesPowerSamples) {
  ScopedNode node("stats-energy");
  Recorded r = record_and_stat(node, "burn --devices 0 --steps 30", "lossy");  // ~3 s at speed 1
  ASSERT_EQ(r.job["state"], "done") << r.job.dump();
  const json& dev = r.job["accounting"]["devices"][0];
  std::string db = find_db(r.dir);
  double base = sql_number(db, "SELECT value FROM EMU_RUN WHERE key = 'clock_base_ns'");
  double start = base + r.job["started_ns"].get<double>(), end = base + r.job["finished_ns"].get<double>();
  std::ostringstream sql;  // trapezoids between consecutive samples inside the job
  sql.precision(20);
  sql << "WITH p AS (SELECT c.timestampNs AS t, c.value AS w FROM EMU_COUNTER c JOIN STRING_IDS s ON s.id = c.name "
         "WHERE s.value = 'npu_power_watts' AND c.deviceId = 0 AND c.timestampNs BETWEEN " << start << " AND " << end
      << "), q AS (SELECT t, w, LAG(t) OVER (ORDER BY t) AS t0, LAG(w) OVER (ORDER BY t) AS w0 FROM p) "
         "SELECT SUM((t - t0) * (w + w0) / 2) / 1e9 FROM q WHERE t0 IS NOT NULL";
  double profile_j = sql_number(db, sql.str());
  double covered_s = sql_number(db, "SELECT (MAX(c.timestampNs) - MIN(c.timestampNs)) / 1e9 FROM EMU_COUNTER c JOIN STRING_IDS s "
                                    "ON s.id = c.name WHERE s.value = 'npu_power_watts' AND c.deviceId = 0 AND c.timestampNs "
                                    "BETWEEN " + std::to_string(static_cast<int64_t>(start)) + " AND " +
                                    std::to_string(static_cast<int64_t>(end)));
  ASSERT_GT(profile_j, 0) << sql.str();
  // The samples cover the job but for up to one sample interval at each end: compare power.
  double stats_w = dev["energy_j"].get<double>() / r.job["accounting"]["duration_s"].get<double>();
  double profile_w = profile_j / covered_s;
  std::printf("stats: %.1f J over %.3f s (%.2f W); profile samples: %.1f J over %.3f s (%.2f W), ratio %.4f\n",
              dev["energy_j"].get<double>(), r.job["accounting"]["duration_s"].get<double>(), stats_w, profile_j, covered_s,
              profile_w, profile_w / stats_w);
  EXPECT_NEAR(profile_w / stats_w, 1.0, 0.02) << "stats " << dev["energy_j"] << " J over "
                                              << r.job["accounting"]["duration_s"] << " s, profile " << profile_j
                                              << " J over " << covered_s << " s";
  EXPECT_GT(dev["aicore_util_avg_percent"].get<double>(), 90);
  EXPECT_EQ(r.job["exit_code"], 0);
  auto text = run_command(bin("smi/npu-smi") + " stats --node-name " + node.name());
  EXPECT_NE(text.output.find("Job 1 'burn' (pid "), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("  NPU 0 Chip 0: energy "), std::string::npos) << text.output;
  std::filesystem::remove_all(r.dir);
}

// A job shorter than the utilization window (100 ms): the windows reaching back before it held
// idle time, and its maximum read below its average ("AI Core avg 98.4% max 3.9%"). The maximum
// is the busiest window within the job, and the job itself is one.
TEST(Stats, AShortJobsMaximumUtilizationIsAtLeastItsAverage) {
  ScopedNode node("stats-short", "--speed 100");
  for (int i = 0; i < 3; ++i) {  // the first after the node's start had a short window of its own
    auto run = run_command(bin("workloads/npu-run") + " resnet50-train --devices 0 --steps 1 --node " + node.name());
    ASSERT_EQ(run.exit_code, 0) << run.output;
  }
  json stats = json::parse(run_command("(" + bin("smi/npu-smi") + " stats --json --node-name " + node.name() + " 2>/dev/null)").output,
                           nullptr, false);
  ASSERT_TRUE(stats.is_object());
  ASSERT_EQ(stats["jobs"].size(), 3u) << stats.dump();
  for (const json& job : stats["jobs"]) {
    ASSERT_LT(job["accounting"]["duration_s"].get<double>(), 0.1) << "shorter than one window: " << job.dump();
    const json& dev = job["accounting"]["devices"][0];
    EXPECT_GT(dev["aicore_util_avg_percent"].get<double>(), 50) << dev.dump();
    EXPECT_GE(dev["aicore_util_max_percent"].get<double>(), dev["aicore_util_avg_percent"].get<double>()) << dev.dump();
  }
}

TEST(Stats, PeakHbmIsExactlyTheProfilesAndABadJobIsOneLine) {
  ScopedNode node("stats-hbm");
  Recorded r = record_and_stat(node, std::string(NPUKIT_SOURCE_DIR) + "/workloads/diagnosis/clean.json", "lossless");
  const json& dev = r.job["accounting"]["devices"][0];
  double profile_peak = sql_number(find_db(r.dir), "SELECT MAX(totalAllocate) FROM NPU_OP_MEM");
  EXPECT_GT(profile_peak, 0);
  EXPECT_EQ(dev["hbm_peak_allocated_bytes"].get<double>(), profile_peak);
  EXPECT_GE(dev["hbm_peak_reserved_bytes"].get<double>(), profile_peak);
  auto bad = run_command(bin("smi/npu-smi") + " stats --job 99 --node-name " + node.name());
  EXPECT_EQ(bad.exit_code, 4) << bad.output;
  EXPECT_EQ(bad.output, "npu-smi: stats --job: no job 99 on node '" + node.name() + "'\n");
  std::filesystem::remove_all(r.dir);
}

}  // namespace
}  // namespace npukit::testing
