// Every CSV file npu-prof exports, read back by a quoting CSV reader (the sqlite3 CLI's
// `.import --csv`, which names any row whose field count differs from the header's), with the
// value forms msprof uses checked column by column.
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/profiler/prof_test_util.hpp"

namespace npukit::testing {
namespace {

namespace fs = std::filesystem;

// Runs `sql` over the CSV file imported as table t; the output of sqlite3, stderr included.
CommandResult query_csv(const std::string& csv, const std::string& sql) {
  return run_command("sqlite3 :memory: \".import --csv '" + csv + "' t\" \"" + sql + "\" 2>&1");
}

struct CsvFiles {
  TempDir out{"csvforms"};
  std::vector<std::string> files;
};

const CsvFiles& exported() {
  static CsvFiles f = [] {
    CsvFiles c;
    const RecordedRun& run = small_run();
    auto r = run_command(prof() + " report " + run.dir + " --format csv -o " + c.out.str());
    EXPECT_EQ(r.exit_code, 0) << r.output;
    for (const std::string& line : lines_of(r.output)) c.files.push_back(line);
    return c;
  }();
  return f;
}

std::string file_named(const std::string& rank, const std::string& prefix) {
  for (const std::string& f : exported().files) {
    if (f.find("/" + rank + "/") != std::string::npos && fs::path(f).filename().string().rfind(prefix, 0) == 0) return f;
  }
  ADD_FAILURE() << "no " << prefix << " file of " << rank;
  return "";
}

TEST(CsvExport, EveryRowOfEveryFileHasTheHeadersFieldCount) {
  ASSERT_EQ(exported().files.size(), 8u) << "4 files for each of 2 ranks";
  for (const std::string& csv : exported().files) {
    auto header = lines_of(read_file(csv)).at(0);
    auto r = query_csv(csv, "SELECT count(*) FROM t");
    EXPECT_EQ(r.output.find("expected"), std::string::npos) << csv << ": " << r.output;
    EXPECT_GT(std::stoll(r.output), 0) << csv;
    auto columns = query_csv(csv, "SELECT count(*) FROM pragma_table_info('t')");
    EXPECT_EQ(std::stoll(columns.output), static_cast<long long>(std::count(header.begin(), header.end(), ',') + 1)) << csv;
  }
}

TEST(CsvExport, OpSummaryFillsEveryColumnMsprofFillsInItsForm) {
  for (const char* rank : {"rank_0", "rank_1"}) {
    std::string csv = file_named(rank, "op_summary_");
    // No empty cell; "N/A" only where msprof writes it.
    std::string empty;
    for (const char* col : {"Device_id", "Model ID", "Task ID", "Stream ID", "Op Name", "OP Type", "OP State", "Task Type",
                            "Task Start Time(us)", "Task Duration(us)", "Task Wait Time(us)", "Block Num", "HF32 Eligible",
                            "Mix Block Num", "Input Shapes", "Input Data Types", "Input Formats", "Output Shapes",
                            "Output Data Types", "Output Formats", "Context ID"}) {
      auto r = query_csv(csv, std::string("SELECT count(*) FROM t WHERE \\\"") + col + "\\\" = ''");
      if (r.output != "0\n") empty += std::string(col) + ": " + r.output;
    }
    EXPECT_EQ(empty, "") << csv;
    // Kernels: OP State from the shape mode, HF32 eligibility, output shapes/types/formats.
    EXPECT_EQ(query_csv(csv, "SELECT \\\"OP Type\\\", \\\"OP State\\\", \\\"HF32 Eligible\\\", \\\"Output Shapes\\\", "
                             "\\\"Output Data Types\\\", \\\"Output Formats\\\" FROM t WHERE \\\"Task Type\\\" LIKE 'AI_%' "
                             "GROUP BY 1, 4 ORDER BY 1, 4").output,
              "Add|static|NO|4194304|FLOAT|ND\n"
              "Cumsum|static|NO|4096|FLOAT16|ND\n"
              "MatMulV2|static|NO|1024,1024|FLOAT16|ND\n"
              "MatMulV2|static|NO|2048,1024|FLOAT16|ND\n"
              "Relu|static|NO|2048,1024|FLOAT16|ND\n"
              "ReluGrad|static|NO|2048,1024|FLOAT16|ND\n");
    // Communication and copies: no op fields, and (communication) no task or stream id.
    EXPECT_EQ(query_csv(csv, "SELECT DISTINCT \\\"Task Type\\\", \\\"Task ID\\\" = 'N/A', \\\"OP State\\\", \\\"Input Shapes\\\" "
                             "FROM t WHERE \\\"Task Type\\\" NOT LIKE 'AI_%' ORDER BY 1").output,
              "COMMUNICATION|1|N/A|N/A\nMEMCPY_ASYNC|0|N/A|N/A\n");
    // Times: Unix us with ns decimals; durations and waits non-negative with 3 decimals.
    EXPECT_EQ(query_csv(csv, "SELECT count(*) FROM t WHERE \\\"Task Start Time(us)\\\" NOT GLOB '1[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9].[0-9][0-9][0-9]' "
                             "OR \\\"Task Duration(us)\\\" NOT GLOB '[0-9]*.[0-9][0-9][0-9]' OR \\\"Task Wait Time(us)\\\" NOT GLOB '[0-9]*.[0-9][0-9][0-9]' "
                             "OR \\\"Model ID\\\" != '4294967295' OR \\\"Context ID\\\" != '4294967295' OR \\\"Mix Block Num\\\" != '0' "
                             "OR CAST(\\\"Block Num\\\" AS INTEGER) || '' != \\\"Block Num\\\"").output,
              "0\n");
  }
}

TEST(CsvExport, StatisticsAndStepFilesHoldNumbersInTheirUnits) {
  for (const char* rank : {"rank_0", "rank_1"}) {
    std::string stats = file_named(rank, "op_statistic_");
    EXPECT_EQ(query_csv(stats, "SELECT count(*) FROM t WHERE \\\"Total Time(us)\\\" NOT GLOB '[0-9]*.[0-9][0-9][0-9]' "
                               "OR \\\"Ratio(%)\\\" NOT GLOB '[0-9]*.[0-9][0-9]' OR CAST(Count AS INTEGER) < 1").output,
              "0\n");
    EXPECT_EQ(query_csv(stats, "SELECT round(sum(\\\"Ratio(%)\\\")) FROM t").output, "100.0\n");
    std::string comm = file_named(rank, "communication_statistic_");
    EXPECT_EQ(query_csv(comm, "SELECT \\\"OP Type\\\", Count, \\\"Ratio(%)\\\" FROM t").output, "hcom_allReduce_|12|100.00\n");
    std::string steps = file_named(rank, "step_trace_time");
    EXPECT_EQ(query_csv(steps, "SELECT count(*), count(DISTINCT Step) FROM t WHERE Computing GLOB '[0-9]*.[0-9][0-9][0-9]'").output,
              "3|3\n");
  }
}

}  // namespace
}  // namespace npukit::testing
