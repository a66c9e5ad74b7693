#include "profiler/store/profile_writer.hpp"

#include <array>

#include "profiler/store/schema.hpp"

namespace npukit::prof {

namespace {

// Table order matches enum Table.
constexpr std::array<std::string_view, static_cast<std::size_t>(Table::kCount)> kTableNames = {
    "CANN_API",  "TASK",        "COMPUTE_TASK_INFO", "COMMUNICATION_OP", "COMMUNICATION_TASK_INFO",
    "MEMCPY_INFO", "TASK_PMU_INFO", "NPU_MEM",        "NPU_OP_MEM",       "MSTX_EVENTS",
    "AICORE_FREQ", "HBM",        "HCCS",              "NPU_INFO",         "HOST_INFO",
    "EMU_EVENT",  "EMU_STEP",    "EMU_COUNTER",       "EMU_LINK"};

struct Binder {
  Stmt& stmt;
  int index;
  void operator()(std::monostate) const { stmt.bind_null(index); }
  void operator()(int64_t v) const { stmt.bind(index, v); }
  void operator()(double v) const { stmt.bind(index, v); }
  void operator()(std::string_view v) const { stmt.bind(index, v); }
};

}  // namespace

Result<RowInserter> RowInserter::create(Db& db, std::string_view table) {
  const TableDef* def = find_table(table);
  if (def == nullptr) return InternalError("no table definition for " + std::string(table));
  std::string one = insert_sql(*def);
  std::string many = one;
  std::string tuple = one.substr(one.find(" VALUES ") + 8);
  for (std::size_t i = 1; i < kRowsPerInsert; ++i) many += ", " + tuple;
  auto a = db.prepare(one);
  if (!a.ok()) return a.status();
  auto b = db.prepare(many);
  if (!b.ok()) return b.status();
  RowInserter r;
  r.one_ = std::move(*a);
  r.many_ = std::move(*b);
  r.table_ = std::string(table);
  r.columns_ = def->columns.size();
  r.pending_.reserve(r.columns_ * kRowsPerInsert);
  return r;
}

Status RowInserter::insert(std::initializer_list<SqlValue> values, bool text_outlives_flush) {
  if (values.size() != columns_) {
    return InternalError(table_ + ": " + std::to_string(values.size()) + " values for " +
                         std::to_string(columns_) + " columns");
  }
  bool text = false;
  if (!text_outlives_flush) {
    for (const SqlValue& v : values) text = text || std::holds_alternative<std::string_view>(v);
  }
  ++rows_;
  if (!text) {
    pending_.insert(pending_.end(), values.begin(), values.end());
    if (pending_.size() < columns_ * kRowsPerInsert) return Status::Ok();
    int index = 1;
    for (const SqlValue& v : pending_) std::visit(Binder{many_, index++}, v);
    pending_.clear();
    return many_.run();
  }
  NPUKIT_RETURN_IF_ERROR(flush());
  int index = 1;
  for (const SqlValue& v : values) std::visit(Binder{one_, index++}, v);
  return one_.run();
}

Status RowInserter::flush() {
  for (std::size_t at = 0; at < pending_.size(); at += columns_) {
    for (std::size_t c = 0; c < columns_; ++c) std::visit(Binder{one_, static_cast<int>(c) + 1}, pending_[at + c]);
    Status s = one_.run();
    if (!s.ok()) {
      pending_.clear();
      return s;
    }
  }
  pending_.clear();
  return Status::Ok();
}

Result<StringIds> StringIds::create(Db& db) {
  auto ins = RowInserter::create(db, "STRING_IDS");
  if (!ins.ok()) return ins.status();
  StringIds s;
  s.insert_ = std::move(*ins);
  return s;
}

Result<int64_t> StringIds::id(std::string_view value) {
  auto it = ids_.find(value);
  if (it != ids_.end()) return it->second;
  auto id = static_cast<int64_t>(ids_.size());
  auto kept = ids_.emplace(std::string(value), id).first;  // a node's key never moves
  Status s = insert_.insert({id, std::string_view(kept->first)}, true);
  if (!s.ok()) {
    ids_.erase(kept);  // the batch that held it rolls back too: no id without its row
    return s;
  }
  return id;
}

Result<std::unique_ptr<ProfileWriter>> ProfileWriter::create(const std::string& path, int64_t session_start_ns) {
  auto db = Db::open(path, Db::Mode::kCreate);
  if (!db.ok()) return db.status();
  std::unique_ptr<ProfileWriter> w(new ProfileWriter(std::move(*db)));
  for (const char* pragma : {"PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL",
                             "PRAGMA cache_size=-65536", "PRAGMA temp_store=MEMORY", "PRAGMA wal_autocheckpoint=0"}) {
    NPUKIT_RETURN_IF_ERROR(w->db_.exec(pragma));
  }
  NPUKIT_RETURN_IF_ERROR(create_schema(w->db_));
  NPUKIT_RETURN_IF_ERROR(w->prepare_all());
  w->session_start_ = session_start_ns;
  w->session_end_ = session_start_ns;
  NPUKIT_RETURN_IF_ERROR(w->begin_batch());
  NPUKIT_RETURN_IF_ERROR(set_meta(w->db_, kMetaState, "recording"));
  NPUKIT_RETURN_IF_ERROR(
      w->db_.exec("INSERT INTO SESSION_TIME_INFO VALUES (" + std::to_string(session_start_ns) + ", " +
                  std::to_string(session_start_ns) + ")"));
  NPUKIT_RETURN_IF_ERROR(w->commit_batch());
  return w;
}

Status ProfileWriter::prepare_all() {
  auto strings = StringIds::create(db_);
  if (!strings.ok()) return strings.status();
  strings_ = std::move(*strings);
  for (std::string_view name : kTableNames) {
    auto ins = RowInserter::create(db_, name);
    if (!ins.ok()) return ins.status();
    inserters_.push_back(std::move(*ins));
  }
  auto update = db_.prepare("UPDATE SESSION_TIME_INFO SET startTimeNs = ?, endTimeNs = ?");
  if (!update.ok()) return update.status();
  session_update_ = std::move(*update);
  return Status::Ok();
}

Status ProfileWriter::begin_batch() {
  if (in_batch_) return Status::Ok();
  NPUKIT_RETURN_IF_ERROR(db_.exec("BEGIN"));
  in_batch_ = true;
  return Status::Ok();
}

Status ProfileWriter::write_session() {
  return session_update_.bind(1, session_start_).bind(2, session_end_).run();
}

Status ProfileWriter::flush() {
  NPUKIT_RETURN_IF_ERROR(strings_.flush());
  for (RowInserter& r : inserters_) NPUKIT_RETURN_IF_ERROR(r.flush());
  return Status::Ok();
}

Status ProfileWriter::commit_batch() {
  if (!in_batch_) return Status::Ok();
  NPUKIT_RETURN_IF_ERROR(flush());
  NPUKIT_RETURN_IF_ERROR(write_session());
  Status s = db_.exec("COMMIT");
  if (!s.ok()) {
    (void)db_.exec("ROLLBACK");
    in_batch_ = false;
    return s;
  }
  in_batch_ = false;
  return Status::Ok();
}

Status ProfileWriter::set_run(std::string_view key, std::string_view value) {
  auto stmt = db_.prepare("INSERT OR REPLACE INTO EMU_RUN VALUES (?, ?)");
  if (!stmt.ok()) return stmt.status();
  return stmt->bind(1, key).bind(2, value).run();
}

}  // namespace npukit::prof
