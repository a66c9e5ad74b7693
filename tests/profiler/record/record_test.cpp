// Recording a real workload on a real node: layout, invariants (reference section 6, checked
// with the sqlite3 CLI), content, modes.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <thread>
#include <regex>

#include "tests/profiler/invariants.hpp"
#include "profiler/record/recorder.hpp"

namespace npukit::testing {
namespace {

namespace fs = std::filesystem;

// One msprof PROF_ tree per rank: the two ranks of the workload (devices 0 and 1), the same
// timestamp and tag, consecutive numbers, each with its own device_<id>/info.json.<id> and rank.
TEST(Record, OnePROFTreePerRankAsAMultiRankCollection) {
  const RecordedRun& run = small_run();
  ASSERT_EQ(run.record.exit_code, 0) << run.record.output;
  ASSERT_EQ(run.dbs.size(), 2u) << run.record.output;
  std::string tail;
  for (int rank = 0; rank < 2; ++rank) {
    fs::path db(run.dbs[static_cast<std::size_t>(rank)]);
    std::string prof_dir = db.parent_path().filename().string();
    EXPECT_TRUE(std::regex_match(prof_dir, std::regex(R"(PROF_\d{6}_\d{14}_[A-Z0-9]{8})"))) << prof_dir;
    EXPECT_TRUE(std::regex_match(db.filename().string(), std::regex(R"(msprof_\d{14}\.db)"))) << db;
    EXPECT_EQ(prof_dir.substr(12, 14), db.filename().string().substr(7, 14));
    if (rank == 0) tail = prof_dir.substr(12);
    EXPECT_EQ(prof_dir.substr(12), tail) << "one recording: one timestamp and tag";
    std::string d = std::to_string(rank);
    std::string info = read_file((db.parent_path() / ("device_" + d) / ("info.json." + d)).string());
    auto j = nlohmann::json::parse(info, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << info;
    EXPECT_EQ(j["rank_id"], rank);
    EXPECT_EQ(j["devices"], d);
    EXPECT_FALSE(j["hostUid"].get<std::string>().empty());
    int devices = 0;
    for (const auto& e : fs::directory_iterator(db.parent_path())) devices += e.path().filename().string().rfind("device_", 0) == 0;
    EXPECT_EQ(devices, 1) << "a rank's tree holds its device only";
    EXPECT_EQ(sqlite(db.string(), "SELECT rankId, deviceId FROM RANK_DEVICE_MAP").output, d + "|" + d + "\n");
    EXPECT_EQ(sqlite(db.string(), "SELECT DISTINCT deviceId FROM TASK").output, d + "\n");
    EXPECT_FALSE(fs::exists(db.string() + "-wal")) << "a finalized profile is one self-contained file";
  }
  EXPECT_NE(run.record.output.find("npu-prof: recorded "), std::string::npos);
  EXPECT_NE(run.record.output.find(": 2 ranks ("), std::string::npos) << run.record.output;
}

TEST(Record, EachRanksDatabaseSatisfiesEveryInvariantOnItsOwn) {
  const RecordedRun& run = small_run();
  ASSERT_EQ(run.dbs.size(), 2u) << run.record.output;
  for (const std::string& db : run.dbs) {
    for (const std::string& v : invariant_violations(db, true)) ADD_FAILURE() << db << ": " << v;
    EXPECT_EQ(sqlite(db, "PRAGMA journal_mode").output, "delete\n");
  }
}

TEST(Record, HoldsTasksLaunchesCollectivesStepsAndCounters) {
  const RecordedRun& run = small_run();
  ASSERT_EQ(run.dbs.size(), 2u) << run.record.output;
  const std::vector<std::string>& dbs = run.dbs;
  // 3 steps x 2 ranks; kernels by core type; every task launched by a CANN_API row.
  EXPECT_EQ(sqlite_sum(dbs, "SELECT count(*) FROM EMU_STEP"), 6);
  EXPECT_EQ(sqlite_each(dbs, "SELECT count(*) FROM STEP_TIME"), "3\n3\n");
  EXPECT_EQ(sqlite_each(dbs, "SELECT s.value, count(*) FROM TASK t JOIN STRING_IDS s ON s.id = t.taskType "
                             "GROUP BY s.value ORDER BY s.value"),
            "AI_CORE|18\nAI_CPU|3\nAI_VECTOR_CORE|15\nCOMMUNICATION|12\nMEMCPY_ASYNC|3\n"
            "AI_CORE|18\nAI_CPU|3\nAI_VECTOR_CORE|15\nCOMMUNICATION|12\nMEMCPY_ASYNC|3\n");
  EXPECT_EQ(sqlite_sum(dbs, "SELECT count(*) FROM TASK t JOIN CANN_API a ON a.connectionId = t.connectionId"), 102);
  for (const std::string& db : dbs) {
    // The msprof join of host API -> device task -> op info (reference 1.4), on each rank.
    EXPECT_EQ(sqlite(db, "SELECT DISTINCT n.value FROM CANN_API a JOIN TASK t ON t.connectionId = a.connectionId "
                         "JOIN COMPUTE_TASK_INFO c ON c.globalTaskId = t.globalTaskId JOIN STRING_IDS n ON n.id = c.opType "
                         "WHERE a.type = 20000 ORDER BY 1").output,
              "Add\nCumsum\nMatMulV2\nRelu\nReluGrad\n");
    EXPECT_EQ(sqlite(db, "SELECT count(*) FROM COMMUNICATION_OP o JOIN CANN_API a ON a.connectionId = o.connectionId "
                         "WHERE a.type = 5500").output, "12\n");
    // The communicator reaches the data: group, size, algorithm, data type, count in elements
    // (2 MiB of fp16 per rank).
    EXPECT_EQ(sqlite(db, "SELECT DISTINCT g.value, o.rankSize, a.value, o.dataType, o.count FROM COMMUNICATION_OP o "
                         "JOIN STRING_IDS g ON g.id = o.groupName JOIN STRING_IDS a ON a.id = o.algType").output,
              "dp0|2|MESH|3|1048576\n");
    EXPECT_EQ(sqlite(db, "SELECT DISTINCT s.value FROM COMPUTE_TASK_INFO c JOIN STRING_IDS s ON s.id = c.inputShapes "
                         "JOIN STRING_IDS o ON o.id = c.opType WHERE o.value = 'Cumsum'").output, "4096\n");
    EXPECT_EQ(sqlite(db, "SELECT count(*) > 0 FROM MEMCPY_INFO WHERE memcpyOperation = 1").output, "1\n");
    // Counter time series of this rank's device: clock, HBM in use, registry-named counters.
    // (A recording this short may hold a single sample; AttachRecords... checks series.)
    EXPECT_EQ(sqlite(db, "SELECT count(*) >= 1, min(freq) > 0, count(DISTINCT deviceId) FROM AICORE_FREQ").output, "1|1|1\n");
    EXPECT_EQ(sqlite(db, "SELECT count(*) > 0 FROM NPU_MEM WHERE hbm > 0").output, "1\n");
    EXPECT_EQ(sqlite(db, "SELECT count(DISTINCT name) > 10 FROM EMU_COUNTER").output, "1\n");
    EXPECT_EQ(sqlite(db, "SELECT group_concat(DISTINCT s.value) FROM EMU_COUNTER c JOIN STRING_IDS s ON s.id = c.name "
                         "WHERE s.value IN ('npu_power_watts', 'npu_temperature_celsius') ORDER BY 1").output,
              "npu_power_watts,npu_temperature_celsius\n");
    EXPECT_EQ(sqlite(db, "SELECT value FROM EMU_RUN WHERE key = 'events_missed'").output, "0\n");
    EXPECT_EQ(sqlite(db, "SELECT value FROM EMU_RUN WHERE key = 'mode'").output, "lossless\n");
  }
  // Each rank's place in the group, and the group's link.
  EXPECT_EQ(sqlite_each(dbs, "SELECT DISTINCT srcRank, linkType FROM COMMUNICATION_TASK_INFO"), "0|1\n1|1\n");
}

// CANN_API rows are the host calls' real spans: positive, one after another on each host thread
// (distinct, ordered, never overlapping), and a task never starts before the call that queued it
// returned.
TEST(Record, HostApiRecordsAreRealSpans) {
  const RecordedRun& run = small_run();
  ASSERT_EQ(run.dbs.size(), 2u);
  for (const std::string& db : run.dbs) {
    EXPECT_EQ(sqlite(db, "SELECT count(*), min(endNs - startNs) > 0 FROM CANN_API").output, "51|1\n") << db;
    EXPECT_EQ(sqlite(db, "SELECT count(*) - count(DISTINCT startNs) FROM CANN_API GROUP BY globalTid").output, "0\n");
    EXPECT_EQ(sqlite(db, "SELECT count(*) FROM CANN_API a JOIN CANN_API b ON a.globalTid = b.globalTid "
                         "AND b.startNs > a.startNs AND b.startNs < a.endNs").output, "0\n");
    EXPECT_EQ(sqlite(db, "SELECT count(*) FROM CANN_API a JOIN TASK t ON t.connectionId = a.connectionId "
                         "WHERE t.startNs < a.endNs").output, "0\n");
  }
}

TEST(Record, TimestampsAreUnixNanoseconds) {
  const std::string db = small_run().db;
  auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  auto start = sqlite(db, "SELECT min(startNs) FROM TASK");
  ASSERT_EQ(start.exit_code, 0);
  int64_t ts = std::stoll(start.output);
  // The daemon runs at speed 1: virtual time + the clock base tracks the wall clock.
  EXPECT_LT(std::llabs(now - ts), int64_t{600} * 1'000'000'000) << ts;
}

// A lossy reader never slows the node, so on a loaded machine it may fall behind: whatever it
// missed is counted and said, never silent. (This test expected 0 missed, and failed when the
// machine starved the recorder.)
TEST(Record, LossyModeCountsWhatItMisses) {
  RecordedRun run = record_on_fresh_node("paced", data_path("small-train.json") + " --steps 1", "--mode lossy");
  ASSERT_EQ(run.record.exit_code, 0) << run.record.output;
  EXPECT_EQ(sqlite(run.db, "SELECT value FROM EMU_RUN WHERE key = 'mode'").output, "lossy\n");
  const long long missed = std::stoll(sqlite(run.db, "SELECT value FROM EMU_RUN WHERE key = 'events_missed'").output);
  auto report = run_command(prof() + " report " + run.dir);
  ASSERT_EQ(report.exit_code, 0) << report.output;
  if (missed == 0) {  // the usual case: it kept up, and the profile is whole
    EXPECT_EQ(sqlite(run.db, "SELECT count(*) FROM STEP_TIME").output, "1\n");
    for (const std::string& v : invariant_violations(run.db, true)) ADD_FAILURE() << v;
    EXPECT_EQ(report.output.find("dropped_events"), std::string::npos) << report.output;
  } else {  // it fell behind: the recording and the report say how much
    EXPECT_NE(run.record.output.find("missed"), std::string::npos) << run.record.output;
    EXPECT_NE(report.output.find("dropped_events"), std::string::npos) << report.output;
  }
}

// The HBM table has a read and a write row per sample, msprof's two types, each the rate of its
// bus counter over the sample's interval: write from npu_hbm_write_bytes_total, read from the rest
// of npu_hbm_bytes_total. It had one row typed "read/write", which no msprof reader knows.
TEST(Record, TheHbmTableSplitsReadsFromWritesAsTheBusCountsThem) {
  const std::string& db = small_run().db;
  EXPECT_EQ(sqlite(db, "SELECT s.value FROM HBM h JOIN STRING_IDS s ON s.id = h.type GROUP BY 1 ORDER BY 1").output,
            "read\nwrite\n");
  // Each row against the counters' deltas (EMU_COUNTER keeps the raw totals), device 0.
  const std::string deltas =
      "WITH c AS (SELECT e.timestampNs t, s.value f, e.value - LAG(e.value) OVER w dv, "
      "e.timestampNs - LAG(e.timestampNs) OVER w dt FROM EMU_COUNTER e JOIN STRING_IDS s ON s.id = e.name "
      "WHERE e.deviceId = 0 AND s.value IN ('npu_hbm_bytes_total', 'npu_hbm_write_bytes_total') "
      "WINDOW w AS (PARTITION BY s.value ORDER BY e.timestampNs)), "
      "r AS (SELECT h.timestampNs t, s.value type, h.bandwidth b FROM HBM h JOIN STRING_IDS s ON s.id = h.type "
      "WHERE h.deviceId = 0) ";
  auto check = sqlite(db, deltas +
      "SELECT count(*), sum(abs(w.b - cw.dv * 1e9 / cw.dt) > 1e-3 * (w.b + 1)), "
      "sum(abs(rd.b - (ct.dv - cw.dv) * 1e9 / ct.dt) > 1e-3 * (rd.b + 1)), sum(w.b > 0), sum(rd.b > w.b) "
      "FROM r w JOIN r rd ON rd.t = w.t AND rd.type = 'read' "
      "JOIN c cw ON cw.t = w.t AND cw.f = 'npu_hbm_write_bytes_total' "
      "JOIN c ct ON ct.t = w.t AND ct.f = 'npu_hbm_bytes_total' WHERE w.type = 'write' AND cw.dt > 0");
  ASSERT_EQ(check.exit_code, 0) << check.output;
  int rows = 0, write_off = 0, read_off = 0, writing = 0, read_more = 0;
  ASSERT_EQ(std::sscanf(check.output.c_str(), "%d|%d|%d|%d|%d", &rows, &write_off, &read_off, &writing, &read_more), 5)
      << check.output;
  EXPECT_GT(rows, 0);
  EXPECT_EQ(write_off, 0) << "write rows that are not the write counter's rate";
  EXPECT_EQ(read_off, 0) << "read rows that are not the rest of the traffic's rate";
  EXPECT_GT(writing, 0) << "the job's kernels write";
  EXPECT_EQ(read_more, writing) << "a training step's kernels read more than they write";
}

// NPU_OP_MEM.totalReserve is what the process's allocator held after the call (it was NULL on
// every row): at least what it had allocated; for the caching allocator more (whole segments).
TEST(Record, EveryAllocAndFreeSaysWhatTheAllocatorHolds) {
  const std::string& db = small_run().db;
  EXPECT_EQ(sqlite(db, "SELECT count(*) > 0, sum(totalReserve IS NULL), sum(totalReserve < totalAllocate), "
                       "sum(totalReserve > totalAllocate) > 0 FROM NPU_OP_MEM").output,
            "1|0|0|1\n");
}

// A 310P's memory is DDR: the recorder writes NPU_MEM.ddr, and the report's memory section said
// "Peak HBM" over it.
TEST(Record, The310PsMemoryIsReportedAsDdr) {
  ScopedNode node("ddr", "--spec 4x310P3");
  TempDir dir("ddr");
  auto r = run_command(prof() + " record -o " + dir.str() + " --node-name " + node.name() + " -- " + npu_run() + " " +
                       data_path("small-train.json") + " --steps 1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(sqlite(find_db(dir.str()), "SELECT count(*) > 0 FROM NPU_MEM WHERE ddr IS NOT NULL AND hbm IS NULL").output, "1\n");
  auto memory = run_command(prof() + " report " + dir.str() + " --section memory");
  ASSERT_EQ(memory.exit_code, 0) << memory.output;
  EXPECT_NE(memory.output.find("Peak DDR(MiB)"), std::string::npos) << memory.output;
  auto hbm = run_command(prof() + " report " + small_run().dir + " --section memory");
  EXPECT_NE(hbm.output.find("Peak HBM(MiB)"), std::string::npos) << hbm.output;
}

// A job shorter than the sampling interval falls between two memory samples: the memory section
// showed the idle device's memory as the peak (1560 MiB on a 310P, with none of the job's 120 MiB)
// and nothing else. It now shows what the job's allocator held, from NPU_OP_MEM, and says when no
// sample fell within the job.
TEST(Record, AJobBetweenTwoMemorySamplesShowsWhatItsAllocatorHeld) {
  ScopedNode node("between", "--spec 4x310P3 --speed 1000");
  TempDir dir("between");
  auto r = run_command(prof() + " record -o " + dir.str() + " --node-name " + node.name() + " -- " + npu_run() + " " +
                       data_path("small-train.json") + " --steps 1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string db = find_db(dir.str());
  auto truth = sqlite(db, "SELECT max(totalAllocate), max(totalReserve), (SELECT count(*) FROM NPU_MEM m, "
                          "(SELECT min(startNs) s, max(endNs) e FROM TASK WHERE deviceId = 0) t "
                          "WHERE m.deviceId = 0 AND m.timestampNs BETWEEN t.s AND t.e) FROM NPU_OP_MEM WHERE deviceId = 0");
  long long allocated = 0, reserved = 0, in_job = -1;
  ASSERT_EQ(std::sscanf(truth.output.c_str(), "%lld|%lld|%lld", &allocated, &reserved, &in_job), 3) << truth.output;
  ASSERT_GT(allocated, 0);
  auto json_out = run_command("(" + prof() + " report " + dir.str() + " --format json 2>/dev/null)");
  auto report = nlohmann::json::parse(json_out.output, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << json_out.output;
  const auto& device = report["memory"]["devices"][0];
  EXPECT_EQ(device["allocated_peak_bytes"], allocated);
  EXPECT_EQ(device["reserved_peak_bytes"], reserved);
  EXPECT_EQ(device["samples_in_job"], in_job);
  auto text = run_command(prof() + " report " + dir.str() + " --section memory");
  EXPECT_NE(text.output.find("Allocated(MiB)  Reserved(MiB)"), std::string::npos) << text.output;
  bool said = text.output.find("No sample fell within the tasks of device 0") != std::string::npos;
  EXPECT_EQ(said, in_job == 0) << text.output;
  EXPECT_EQ(in_job, 0) << "at speed 1000 the one-step job should run between two samples";
  // The HTML page says it too (its flat line and "peak" read as the job's memory).
  const std::string page = dir.str() + "/report.html";
  ASSERT_EQ(run_command(prof() + " report " + dir.str() + " --html " + page).exit_code, 0);
  EXPECT_NE(read_file(page).find("No memory sample fell within the tasks of rank 0 (device 0)"), std::string::npos);
}

TEST(Record, AttachRecordsARunningNodeForADuration) {
  ScopedNode node("attach", "--seed 7");
  TempDir dir("attach");
  std::string bg = npu_run() + " " + data_path("small-train.json") + " --steps 150 --node-name " + node.name();
  std::FILE* workload = popen((bg + " >/dev/null 2>&1").c_str(), "r");
  ASSERT_NE(workload, nullptr);
  auto bus = node.client();
  ASSERT_NE(bus, nullptr);
  for (int i = 0; i < 200; ++i) {  // attach to a job under way: its process holds device memory
    auto snap = bus->snapshot();
    if (snap.ok() && !snap->processes().empty()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  auto r = run_command(prof() + " record -o " + dir.str() + " --node-name " + node.name() + " --attach --duration 600ms");
  pclose(workload);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::string db = find_db(dir.str());
  ASSERT_FALSE(db.empty());
  EXPECT_EQ(sqlite(db, "SELECT value FROM EMU_RUN WHERE key = 'command'").output, "(attach)\n");
  EXPECT_EQ(sqlite(db, "SELECT count(*) > 0 FROM TASK").output, "1\n");
  auto span = sqlite(db, "SELECT (endTimeNs - startTimeNs) / 1000000 FROM SESSION_TIME_INFO");
  EXPECT_GE(std::stoll(span.output), 400) << span.output;
  // Counters as time series: samples every ~100 ms, HBM bandwidth from counter deltas.
  EXPECT_EQ(sqlite(db, "SELECT count(DISTINCT timestampNs) >= 3 FROM AICORE_FREQ").output, "1\n");
  EXPECT_EQ(sqlite(db, "SELECT count(DISTINCT timestampNs) >= 2 FROM HBM").output, "1\n");
  EXPECT_EQ(sqlite(db, "SELECT count(*) > 0 FROM HCCS").output, "1\n");
  // What the job's allocator holds comes from the process table's samples: its caching
  // allocator's holding does not change once warm, so no `reserved` event would say it. (An
  // alloc before the first sample that shows the process keeps NULL: the holding is not known.)
  EXPECT_EQ(sqlite(db, "SELECT count(*) > 0, sum(totalReserve IS NULL), sum(totalReserve < totalAllocate) FROM NPU_OP_MEM").output,
            "1|0|0\n");
  for (const std::string& v : invariant_violations(db, true)) ADD_FAILURE() << v;
}

// HBM alloc/free events from the emulator fill NPU_OP_MEM; the report's churn finding reads them.
TEST(Record, AllocatorChurnFillsTheMemoryTableAndTheReportFindsTheChurn) {
  RecordedRun run = record_on_fresh_node("churn", "allocator-churn --steps 3");
  ASSERT_EQ(run.record.exit_code, 0) << run.record.output;
  ASSERT_FALSE(run.db.empty()) << run.record.output;
  for (const std::string& v : invariant_violations(run.db, true)) ADD_FAILURE() << v;
  // 800 allocations per step (workloads/builtin/allocator-churn.json), every one freed.
  EXPECT_EQ(sqlite(run.db, "SELECT s.value, count(*) FROM NPU_OP_MEM m JOIN STRING_IDS s ON s.id = m.type "
                           "GROUP BY s.value ORDER BY s.value").output,
            "alloc|2400\nfree|2400\n");
  // Sizes 64 KiB + (i mod 7) x 4 KiB, all on device 0, from npu-run's process, at times inside the
  // session; the process's allocated total ends back at 0.
  EXPECT_EQ(sqlite(run.db, "SELECT min(size), max(size), count(DISTINCT deviceId), min(deviceId), "
                           "count(DISTINCT globalTid), min(globalTid) > 0, min(addr) > 0 FROM NPU_OP_MEM").output,
            "65536|90112|1|0|1|1|1\n");
  EXPECT_EQ(sqlite(run.db, "SELECT count(*) FROM NPU_OP_MEM m, SESSION_TIME_INFO s "
                           "WHERE m.timestampNs < s.startTimeNs OR m.timestampNs > s.endTimeNs").output,
            "0\n");
  EXPECT_EQ(sqlite(run.db, "SELECT totalAllocate FROM NPU_OP_MEM ORDER BY timestampNs DESC, rowid DESC LIMIT 1").output,
            "0\n");
  // Each allocation carries its buffer's name in the program (the workload's tmp0..tmp3), and
  // EMU_EVENT's type names an EMU_EVENT_TYPE row.
  EXPECT_EQ(sqlite(run.db, "SELECT DISTINCT s.value FROM NPU_OP_MEM m JOIN STRING_IDS s ON s.id = m.operatorName "
                           "ORDER BY 1").output,
            "tmp0\ntmp1\ntmp2\ntmp3\n");
  EXPECT_EQ(sqlite(run.db, "SELECT t.name, count(*) FROM EMU_EVENT e JOIN EMU_EVENT_TYPE t ON t.id = e.type "
                           "WHERE t.name IN ('alloc', 'free') GROUP BY t.name ORDER BY 1").output,
            "alloc|2400\nfree|2400\n");
  EXPECT_EQ(sqlite(run.db, "SELECT count(*) FROM EMU_EVENT e LEFT JOIN EMU_EVENT_TYPE t ON t.id = e.type "
                           "WHERE t.id IS NULL").output, "0\n");
  auto report = run_command(prof() + " report " + run.dir + " --section findings");
  ASSERT_EQ(report.exit_code, 0) << report.output;
  EXPECT_NE(report.output.find("HBM allocator churn: 800 allocations per step across the node (2400 in 3 steps)"),
            std::string::npos)
      << report.output;
}

TEST(Record, ParsesDurations) {
  EXPECT_EQ(prof::parse_duration("10s")->count(), 10'000'000'000);
  EXPECT_EQ(prof::parse_duration("250ms")->count(), 250'000'000);
  EXPECT_EQ(prof::parse_duration("1.5")->count(), 1'500'000'000);
  EXPECT_EQ(prof::parse_duration("2m")->count(), 120'000'000'000);
  for (const char* bad : {"", "x", "10q", "-1s", "0"}) EXPECT_FALSE(prof::parse_duration(bad).ok()) << bad;
}

}  // namespace
}  // namespace npukit::testing

namespace npukit::testing {
namespace {

// The profiler shows a fused kernel by its fused names: its op type joins its parts' kernel types
// (MatMulV2_Gelu, Add_LayerNorm) and its op name their framework names; its input shapes are the
// chain's outside inputs. The same workload with --no-fusion has every part as its own task.
TEST(Record, FusedKernelsAreNamedByTheirParts) {
  RecordedRun fused = record_on_fresh_node("fused", data_path("fused-train.json"));
  ASSERT_EQ(fused.dbs.size(), 1u) << fused.record.output;
  const std::string types = "SELECT DISTINCT o.value FROM COMPUTE_TASK_INFO c JOIN STRING_IDS o ON o.id = c.opType ORDER BY 1";
  EXPECT_EQ(sqlite(fused.db, types).output,
            "Add\nAdd_LayerNorm\nGeluGrad\nLayerNormGrad\nMatMulV2\nMatMulV2_Gelu\n");
  EXPECT_EQ(sqlite(fused.db, "SELECT DISTINCT n.value || ' ' || s.value FROM COMPUTE_TASK_INFO c "
                             "JOIN STRING_IDS n ON n.id = c.name JOIN STRING_IDS o ON o.id = c.opType "
                             "JOIN STRING_IDS s ON s.id = c.inputShapes WHERE o.value LIKE '%\\_%' ESCAPE '\\' ORDER BY 1").output,
            "aten::add_aten::layer_norm 2048,1024;2048,1024;1024;1024\naten::mm_aten::gelu 2048,1024;1024,1024\n");
  auto report = run_command(prof() + " report " + fused.dir);  // a one-device run says so in the singular
  EXPECT_NE(report.output.find("(Ascend910B2-emu), 1 device, run "), std::string::npos) << report.output;
  RecordedRun apart = record_on_fresh_node("unfused", data_path("fused-train.json") + " --no-fusion");
  ASSERT_EQ(apart.dbs.size(), 1u) << apart.record.output;
  EXPECT_EQ(sqlite(apart.db, types).output, "Add\nGelu\nGeluGrad\nLayerNorm\nLayerNormGrad\nMatMulV2\n");
}

}  // namespace
}  // namespace npukit::testing
