// The SQL Ascend's analysis tools run (msprof-analyze's compute_op_sum join and the step-time
// join over STEP_TIME and OVERLAP_ANALYSIS), run here with the sqlite3 CLI on every rank's
// database, agree with what npu-prof report prints for that rank.
#include <gtest/gtest.h>

#include <map>

#include <nlohmann/json.hpp>

#include "tests/profiler/prof_test_util.hpp"

namespace npukit::testing {
namespace {

nlohmann::json report_json(const std::string& dir, int rank) {
  auto r = run_command(prof() + " report " + dir + " --rank " + std::to_string(rank) + " --format json");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return nlohmann::json::parse(r.output, nullptr, false);
}

// compute_op_sum: COMPUTE_TASK_INFO joined with TASK on globalTaskId, every text column through
// its own STRING_IDS alias, grouped by op type and task type.
TEST(MsprofQueries, ComputeOpSumMatchesTheReportOnEveryRank) {
  const RecordedRun& run = small_run();
  ASSERT_EQ(run.dbs.size(), 2u) << run.record.output;
  for (int rank = 0; rank < 2; ++rank) {
    std::string sql =
        "SELECT o.value, k.value, count(*), sum(t.endNs - t.startNs), min(t.endNs - t.startNs), max(t.endNs - t.startNs) "
        "FROM COMPUTE_TASK_INFO c JOIN TASK t ON t.globalTaskId = c.globalTaskId "
        "JOIN STRING_IDS o ON o.id = c.opType JOIN STRING_IDS k ON k.id = c.taskType "
        "GROUP BY o.value, k.value ORDER BY sum(t.endNs - t.startNs) DESC, o.value";
    std::string from_sql = sqlite(run.dbs[static_cast<std::size_t>(rank)], sql).output;
    std::string from_report;
    auto j = report_json(run.dir, rank);
    ASSERT_FALSE(j.is_discarded());
    for (const auto& row : j["operators"]["op_types"]) {
      const auto& s = row["stats"];
      from_report += row["op_type"].get<std::string>() + "|" + row["core_type"].get<std::string>() + "|" +
                     std::to_string(s["count"].get<int64_t>()) + "|" + std::to_string(s["total_ns"].get<int64_t>()) + "|" +
                     std::to_string(s["min_ns"].get<int64_t>()) + "|" + std::to_string(s["max_ns"].get<int64_t>()) + "\n";
    }
    EXPECT_FALSE(from_sql.empty());
    EXPECT_EQ(from_sql, from_report) << "rank " << rank;
  }
}

// Step time: each STEP_TIME window against the OVERLAP_ANALYSIS intervals of its kind (0
// computing, 1 communication, 2 communication not overlapped), clipped to the window.
TEST(MsprofQueries, StepTimeJoinMatchesTheReportsStepBreakdown) {
  const RecordedRun& run = small_run();
  ASSERT_EQ(run.dbs.size(), 2u);
  for (int rank = 0; rank < 2; ++rank) {
    std::string sql =
        "SELECT s.id, o.type, sum(min(o.endNs, s.endNs) - max(o.startNs, s.startNs)) FROM STEP_TIME s "
        "JOIN OVERLAP_ANALYSIS o ON o.endNs > s.startNs AND o.startNs < s.endNs WHERE o.type IN (0, 1, 2) "
        "GROUP BY s.id, o.type ORDER BY s.id, o.type";
    std::map<std::pair<int64_t, int64_t>, int64_t> from_sql;
    for (const std::string& line : lines_of(sqlite(run.dbs[static_cast<std::size_t>(rank)], sql).output)) {
      int64_t step = 0, type = 0, ns = 0;
      ASSERT_EQ(std::sscanf(line.c_str(), "%ld|%ld|%ld", &step, &type, &ns), 3) << line;
      from_sql[{step, type}] = ns;
    }
    auto j = report_json(run.dir, rank);
    ASSERT_EQ(j["steps"].size(), 3u);
    for (const auto& s : j["steps"]) {
      int64_t step = s["step"].get<int64_t>();
      const char* keys[] = {"computing_ns", "communication_ns", "communication_not_overlapped_ns"};
      for (int64_t type = 0; type < 3; ++type) {
        EXPECT_EQ(from_sql[std::make_pair(step, type)], s[keys[type]].get<int64_t>())
            << "rank " << rank << " step " << step << " " << keys[type];
      }
    }
  }
}

}  // namespace
}  // namespace npukit::testing
