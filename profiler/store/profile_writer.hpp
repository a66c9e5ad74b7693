// ProfileWriter: appends rows to a new profile database (schema.hpp) with one prepared
// statement per table, interning every text value in STRING_IDS, one transaction per batch.
//
// Lifecycle: create() makes the file, switches it to WAL (synchronous=NORMAL, so a killed
// recorder loses at most the batch in flight and the file stays consistent; no automatic
// checkpoints while recording: the WAL is folded into the file once, at finalize), creates the
// schema and marks META_DATA RECORDING_STATE = recording. Each begin_batch()/commit_batch()
// pair is one transaction; the commit also widens SESSION_TIME_INFO to every timestamp seen,
// so a database left by a killed recorder still brackets everything it holds. finalize()
// (finalize.cpp) derives the analysis tables, builds the indexes, marks the state complete,
// checkpoints the WAL and switches back to a single self-contained file (journal_mode=DELETE).
//
// Thread-safety: one thread owns a writer.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "profiler/store/intervals.hpp"
#include "profiler/store/sqlite_db.hpp"

namespace npukit::prof {

using SqlValue = std::variant<std::monostate, int64_t, double, std::string_view>;

// One table's INSERT statements. Rows of numbers only are buffered and written kRowsPerInsert at
// a time by one multi-row INSERT (SQLite's per-statement cost dominates narrow rows); a row
// with text is written at once, after the buffered ones, unless the caller says its text
// outlives the next flush() (then it is buffered too). flush() writes what is buffered: the
// writer calls it before every commit, so a committed batch holds every row given to it.
class RowInserter {
 public:
  static constexpr std::size_t kRowsPerInsert = 32;

  RowInserter() = default;
  static Result<RowInserter> create(Db& db, std::string_view table);
  // Values for the columns in order (the count must match the table's). `text_outlives_flush`:
  // the text values stay valid until the next flush(), so the row may wait in the buffer.
  Status insert(std::initializer_list<SqlValue> values, bool text_outlives_flush = false);
  Status flush();
  uint64_t rows() const { return rows_; }

 private:
  Stmt one_, many_;
  std::string table_;
  std::size_t columns_ = 0;
  std::vector<SqlValue> pending_;  // row-major; text only where the caller keeps it valid
  uint64_t rows_ = 0;
};

// STRING_IDS: dense ids from 0, one per distinct value. New values are written by the
// buffered multi-row INSERT (their text lives in the map's keys); flush() writes them.
class StringIds {
 public:
  static Result<StringIds> create(Db& db);
  Result<int64_t> id(std::string_view value);
  std::size_t size() const { return ids_.size(); }
  Status flush() { return insert_.flush(); }

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, int64_t, Hash, std::equal_to<>> ids_;
  RowInserter insert_;
};

// Tables the recorder appends to (the derived ones are written by finalize()).
enum class Table {
  kCannApi, kTask, kComputeTaskInfo, kCommunicationOp, kCommunicationTaskInfo, kMemcpyInfo,
  kTaskPmuInfo, kNpuMem, kNpuOpMem, kMstxEvents, kAicoreFreq, kHbm, kHccs, kNpuInfo, kHostInfo,
  kEmuEvent, kEmuStep, kEmuCounter, kEmuLink, kCount
};

struct FinalizeStats {
  uint64_t orphan_launches = 0;  // CANN_API rows whose task never ran while recording (removed)
  uint64_t overlap_rows = 0;
  uint64_t steps = 0;
  // Databases left in WAL mode, complete, because a reader held them open at the hand-over.
  uint64_t left_in_wal = 0;
};

class ProfileWriter {
 public:
  // Creates `path` (which must not exist). `session_start_ns` opens SESSION_TIME_INFO.
  static Result<std::unique_ptr<ProfileWriter>> create(const std::string& path, int64_t session_start_ns);

  Status begin_batch();
  Status commit_batch();
  Status insert(Table table, std::initializer_list<SqlValue> values) {
    return inserters_[static_cast<std::size_t>(table)].insert(values);
  }
  // Writes every buffered row (commit_batch() does this first).
  Status flush();
  Result<int64_t> intern(std::string_view value) { return strings_.id(value); }
  int64_t next_global_task_id() { return next_task_++; }
  int64_t next_op_id() { return next_op_++; }
  // A TASK row's span, kept in memory for finalize's overlap analysis (so it need not read the
  // table back). Every TASK row written must be noted.
  void note_task(int device, int64_t start_ns, int64_t end_ns, bool communication, int64_t connection) {
    spans_[device].push_back({start_ns, end_ns, communication});
    task_connections_.push_back(connection);
  }
  // A CANN_API row's connectionId: finalize removes launches whose task never ran, and skips
  // that search when every launch noted here met a noted task.
  void note_launch(int64_t connection) { launch_connections_.push_back(connection); }
  // Widens the session window to [start, end].
  void note_time(int64_t start_ns, int64_t end_ns) {
    if (start_ns < session_start_) session_start_ = start_ns;
    if (end_ns > session_end_) session_end_ = end_ns;
  }
  // EMU_RUN key = value (replaced when present; written in the current or a new transaction).
  Status set_run(std::string_view key, std::string_view value);
  // Derives OVERLAP_ANALYSIS, STEP_TIME, RANK_DEVICE_MAP and COMMUNICATION_OP.rankSize, builds
  // the indexes, marks the recording complete and leaves one self-contained file. `rank`: the
  // rank of a one-rank database (-1: number the devices of the main job).
  Result<FinalizeStats> finalize(int rank = -1);

  Db& db() { return db_; }
  uint64_t rows(Table table) const { return inserters_[static_cast<std::size_t>(table)].rows(); }

 private:
  explicit ProfileWriter(Db db) : db_(std::move(db)) {}
  Status prepare_all();
  Status write_session();

  Db db_;
  StringIds strings_;
  std::vector<RowInserter> inserters_;
  Stmt session_update_;
  int64_t session_start_ = 0;
  int64_t session_end_ = 0;
  int64_t next_task_ = 0;
  int64_t next_op_ = 0;
  bool in_batch_ = false;
  std::map<int, std::vector<TaskSpan>> spans_;  // note_task(), by device
  std::vector<int64_t> task_connections_, launch_connections_;  // note_task(), note_launch()
};

}  // namespace npukit::prof
