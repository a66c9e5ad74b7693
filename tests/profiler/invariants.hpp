// The reference's section 6 invariants of a profile database, checked with the sqlite3 CLI
// (the same queries a user would type). Each check is a query counting violations.
#pragma once

#include <string>
#include <vector>

#include "profiler/store/schema.hpp"
#include "tests/profiler/prof_test_util.hpp"

namespace npukit::testing {

struct Check {
  std::string what;
  std::string sql;  // must print 0
};

inline std::vector<Check> invariant_checks(bool complete) {
  std::vector<Check> checks;
  // Every STRING_IDS reference resolves (every table, every text-valued column).
  for (const prof::TableDef& t : prof::all_tables()) {
    for (const prof::ColumnDef& c : t.columns) {
      if (!c.string_id) continue;
      std::string table(t.name), col(c.name);
      checks.push_back({table + "." + col + " resolves in STRING_IDS",
                        "SELECT count(*) FROM " + table + " WHERE " + col + " IS NOT NULL AND " + col +
                            " NOT IN (SELECT id FROM STRING_IDS)"});
    }
  }
  for (const char* t : {"TASK", "CANN_API", "COMMUNICATION_OP", "OVERLAP_ANALYSIS", "MSTX_EVENTS", "STEP_TIME", "EMU_STEP"}) {
    checks.push_back({std::string(t) + " endNs >= startNs", "SELECT count(*) FROM " + std::string(t) + " WHERE endNs < startNs"});
  }
  checks.push_back({"SESSION_TIME_INFO end >= start", "SELECT count(*) FROM SESSION_TIME_INFO WHERE endTimeNs < startTimeNs"});
  checks.push_back({"one SESSION_TIME_INFO row", "SELECT count(*) != 1 FROM SESSION_TIME_INFO"});
  checks.push_back({"TASK.globalTaskId unique", "SELECT count(*) - count(DISTINCT globalTaskId) FROM TASK"});
  for (const char* t : {"COMPUTE_TASK_INFO", "COMMUNICATION_TASK_INFO", "MEMCPY_INFO", "TASK_PMU_INFO"}) {
    checks.push_back({std::string(t) + ".globalTaskId in TASK",
                      "SELECT count(*) FROM " + std::string(t) + " WHERE globalTaskId NOT IN (SELECT globalTaskId FROM TASK)"});
  }
  if (complete) {
    checks.push_back({"CANN_API.connectionId matches a TASK",
                      "SELECT count(*) FROM CANN_API WHERE connectionId NOT IN (SELECT connectionId FROM TASK)"});
  }
  checks.push_back({"COMMUNICATION_OP.connectionId matches a TASK",
                    "SELECT count(*) FROM COMMUNICATION_OP WHERE connectionId NOT IN (SELECT connectionId FROM TASK)"});
  checks.push_back({"COMMUNICATION_TASK_INFO.opId in COMMUNICATION_OP",
                    "SELECT count(*) FROM COMMUNICATION_TASK_INFO WHERE opId NOT IN (SELECT opId FROM COMMUNICATION_OP)"});
  checks.push_back({"tasks of one (device, stream) do not overlap",
                    "SELECT count(*) FROM (SELECT startNs, lag(endNs) OVER (PARTITION BY deviceId, streamId "
                    "ORDER BY startNs, endNs) AS prev FROM TASK) WHERE prev > startNs"});
  const std::pair<const char*, const char*> timed[] = {
      {"TASK", "startNs, endNs"},          {"CANN_API", "startNs, endNs"},        {"COMMUNICATION_OP", "startNs, endNs"},
      {"OVERLAP_ANALYSIS", "startNs, endNs"}, {"STEP_TIME", "startNs, endNs"},    {"EMU_STEP", "startNs, endNs"},
      {"MSTX_EVENTS", "startNs, endNs"},   {"NPU_MEM", "timestampNs, timestampNs"}, {"AICORE_FREQ", "timestampNs, timestampNs"},
      {"EMU_COUNTER", "timestampNs, timestampNs"}, {"EMU_EVENT", "timestampNs, timestampNs"}};
  for (const auto& [table, cols] : timed) {
    std::string c(cols), start = c.substr(0, c.find(',')), end = c.substr(c.find(',') + 2);
    checks.push_back({std::string("SESSION_TIME_INFO brackets ") + table,
                      "SELECT count(*) FROM " + std::string(table) + ", SESSION_TIME_INFO WHERE " + start +
                          " < startTimeNs OR " + end + " > endTimeNs"});
  }
  checks.push_back({"STRING_IDS ids dense from 0", "SELECT coalesce(max(id) + 1, 0) - count(*) FROM STRING_IDS"});
  checks.push_back({"SCHEMA_VERSION present", "SELECT count(*) != 1 FROM META_DATA WHERE name = 'SCHEMA_VERSION'"});
  checks.push_back({"every ENUM_OVERLAP_ANALYSIS_TYPE used is defined",
                    "SELECT count(*) FROM OVERLAP_ANALYSIS WHERE type NOT IN (SELECT id FROM ENUM_OVERLAP_ANALYSIS_TYPE)"});
  checks.push_back({"every CANN_API.type is in ENUM_API_TYPE",
                    "SELECT count(*) FROM CANN_API WHERE type NOT IN (SELECT id FROM ENUM_API_TYPE)"});
  checks.push_back({"every MEMCPY_INFO.memcpyOperation is in ENUM_MEMCPY_OPERATION",
                    "SELECT count(*) FROM MEMCPY_INFO WHERE memcpyOperation NOT IN (SELECT id FROM ENUM_MEMCPY_OPERATION)"});
  return checks;
}

// Runs every check and the SQLite integrity checks; returns one line per violation.
inline std::vector<std::string> invariant_violations(const std::string& db, bool complete) {
  std::vector<std::string> bad;
  auto integrity = sqlite(db, "PRAGMA integrity_check");
  if (integrity.exit_code != 0 || integrity.output != "ok\n") bad.push_back("integrity_check: " + integrity.output);
  auto fk = sqlite(db, "PRAGMA foreign_key_check");
  if (fk.exit_code != 0 || !fk.output.empty()) bad.push_back("foreign_key_check: " + fk.output);
  for (const Check& c : invariant_checks(complete)) {
    auto r = sqlite(db, c.sql);
    if (r.exit_code != 0 || r.output != "0\n") bad.push_back(c.what + ": " + r.output + " (" + c.sql + ")");
  }
  return bad;
}

}  // namespace npukit::testing
