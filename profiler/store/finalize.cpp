// ProfileWriter::finalize(): the derived tables and the hand-over to a single file.
#include <sqlite3.h>

#include <algorithm>

#include "profiler/store/derive.hpp"
#include "profiler/store/profile_writer.hpp"
#include "profiler/store/schema.hpp"

namespace npukit::prof {

namespace {

// Whether some launch in `launches` has no task in `tasks` (connectionIds; both are sorted here).
bool has_launch_without_task(std::vector<int64_t>& launches, std::vector<int64_t>& tasks) {
  for (auto* ids : {&launches, &tasks}) {
    if (!std::is_sorted(ids->begin(), ids->end())) std::sort(ids->begin(), ids->end());
  }
  return !std::includes(tasks.begin(), tasks.end(), launches.begin(), launches.end());
}

// Launches whose task never ran while recording (still queued when the recording ended) have
// no TASK row; they are removed so every CANN_API row links to a task. The table search runs
// only when the noted connectionIds say there is such a launch (it scanned every row: 50 ms of
// a rank's finalize for a 60-step job).
Result<uint64_t> remove_orphan_launches(Db& db, std::vector<int64_t>& launches, std::vector<int64_t>& tasks) {
  if (!has_launch_without_task(launches, tasks)) return uint64_t{0};
  NPUKIT_RETURN_IF_ERROR(db.exec("DELETE FROM CANN_API WHERE connectionId NOT IN (SELECT connectionId FROM TASK)"));
  return static_cast<uint64_t>(sqlite3_changes(db.handle()));
}

// rankSize of collectives recorded without their communicator (0): how many devices ran the
// same instance (same opName, see event_mapper.hpp).
Status fill_rank_sizes(Db& db) {
  return db.exec(
      "UPDATE COMMUNICATION_OP SET rankSize = r.n FROM (SELECT opName, count(DISTINCT deviceId) AS n "
      "FROM COMMUNICATION_OP GROUP BY opName) AS r WHERE r.opName = COMMUNICATION_OP.opName "
      "AND COMMUNICATION_OP.rankSize = 0");
}

// STEP_TIME: one row per step of the main job, spanning every device of the database.
// RANK_DEVICE_MAP: a one-rank database says its rank (`rank` >= 0); otherwise the main job's
// devices in device order are its ranks.
Result<uint64_t> write_steps(Db& db, int rank) {
  auto job = main_job(db);
  if (!job.ok()) return job.status();
  if (rank >= 0) {
    NPUKIT_RETURN_IF_ERROR(db.exec("INSERT INTO RANK_DEVICE_MAP SELECT DISTINCT " + std::to_string(rank) +
                                   ", deviceId FROM (SELECT deviceId FROM TASK UNION SELECT deviceId FROM EMU_STEP)"));
  }
  if (!job->has_value()) {
    if (rank >= 0) return uint64_t{0};
    NPUKIT_RETURN_IF_ERROR(db.exec("INSERT INTO RANK_DEVICE_MAP SELECT DISTINCT -1, deviceId FROM TASK ORDER BY deviceId"));
    return uint64_t{0};
  }
  std::string j = std::to_string(**job);
  NPUKIT_RETURN_IF_ERROR(db.exec("INSERT INTO STEP_TIME SELECT stepId + " + std::to_string(kFirstStep) + ", min(startNs), max(endNs) FROM EMU_STEP WHERE jobId = " +
                                 j + " GROUP BY stepId ORDER BY stepId"));
  if (rank < 0) {
    NPUKIT_RETURN_IF_ERROR(
        db.exec("INSERT INTO RANK_DEVICE_MAP SELECT row_number() OVER (ORDER BY deviceId) - 1, deviceId FROM "
                "(SELECT DISTINCT deviceId FROM EMU_STEP WHERE jobId = " + j + ")"));
  }
  auto n = db.query_i64("SELECT count(*) FROM STEP_TIME");
  if (!n.ok()) return n.status();
  return static_cast<uint64_t>(*n);
}

// Hands the database over as one self-contained file (journal_mode=DELETE). Leaving WAL mode
// needs the file to itself: a reader holding it open (an `npu-prof report` of the recording while
// it finishes) blocks the switch. After a short wait the database stays in WAL mode, complete and
// readable (SQLite folds the -wal file back when the last connection closes), rather than the
// recording failing over a reader. Returns whether the switch happened.
Result<bool> hand_over(Db& db) {
  NPUKIT_RETURN_IF_ERROR(db.exec("PRAGMA wal_checkpoint(TRUNCATE)"));
  constexpr int kSwitchWaitMs = 500;
  sqlite3_busy_timeout(db.handle(), kSwitchWaitMs);
  Status switched = db.exec("PRAGMA journal_mode=DELETE");
  int code = sqlite3_errcode(db.handle()) & 0xff;
  sqlite3_busy_timeout(db.handle(), Db::kBusyTimeoutMs);
  if (switched.ok()) return true;
  if (code == SQLITE_BUSY || code == SQLITE_LOCKED) return false;
  return switched;
}

}  // namespace

Result<FinalizeStats> ProfileWriter::finalize(int rank) {
  NPUKIT_RETURN_IF_ERROR(begin_batch());
  NPUKIT_RETURN_IF_ERROR(flush());
  FinalizeStats stats;
  auto orphans = remove_orphan_launches(db_, launch_connections_, task_connections_);
  if (!orphans.ok()) return orphans.status();
  stats.orphan_launches = *orphans;
  NPUKIT_RETURN_IF_ERROR(fill_rank_sizes(db_));
  auto steps = write_steps(db_, rank);
  if (!steps.ok()) return steps.status();
  stats.steps = *steps;
  std::map<int, Overlap> overlap;
  for (const auto& [device, spans] : spans_) overlap[device] = analyze_overlap(spans);
  auto rows = write_overlap(db_, overlap);
  if (!rows.ok()) return rows.status();
  stats.overlap_rows = *rows;
  NPUKIT_RETURN_IF_ERROR(set_run("orphan_launches_removed", std::to_string(stats.orphan_launches)));
  NPUKIT_RETURN_IF_ERROR(create_indexes(db_));
  NPUKIT_RETURN_IF_ERROR(set_meta(db_, kMetaState, "complete"));
  NPUKIT_RETURN_IF_ERROR(commit_batch());
  // The hand-over is not fsynced (two per database cost 0.3 s of the 1 s budget for a final
  // profile): the file is complete for every reader at once; like a compiler's output, reaching
  // the disk is the kernel's writeback. A process killed here leaves the WAL, which still opens.
  NPUKIT_RETURN_IF_ERROR(db_.exec("PRAGMA synchronous=OFF"));
  auto single_file = hand_over(db_);
  if (!single_file.ok()) return single_file.status();
  stats.left_in_wal = *single_file ? 0 : 1;
  return stats;
}

}  // namespace npukit::prof
