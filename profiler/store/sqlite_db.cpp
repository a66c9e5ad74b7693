#include "profiler/store/sqlite_db.hpp"

#include <sqlite3.h>
#include <sys/stat.h>

#include <utility>

namespace npukit::prof {

Stmt::Stmt(Stmt&& other) noexcept
    : stmt_(std::exchange(other.stmt_, nullptr)), path_(std::move(other.path_)), status_(std::move(other.status_)) {}

Stmt& Stmt::operator=(Stmt&& other) noexcept {
  if (this != &other) {
    if (stmt_ != nullptr) sqlite3_finalize(stmt_);
    stmt_ = std::exchange(other.stmt_, nullptr);
    path_ = std::move(other.path_);
    status_ = std::move(other.status_);
  }
  return *this;
}

Stmt::~Stmt() {
  if (stmt_ != nullptr) sqlite3_finalize(stmt_);
}

Stmt& Stmt::bind(int index, int64_t value) {
  sqlite3_bind_int64(stmt_, index, value);
  return *this;
}

Stmt& Stmt::bind(int index, double value) {
  sqlite3_bind_double(stmt_, index, value);
  return *this;
}

Stmt& Stmt::bind(int index, std::string_view text) {
  sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  return *this;
}

Stmt& Stmt::bind_null(int index) {
  sqlite3_bind_null(stmt_, index);
  return *this;
}

Status Stmt::fail(int rc) {
  sqlite3* db = sqlite3_db_handle(stmt_);
  std::string sql = sqlite3_sql(stmt_);
  if (sql.size() > 60) sql = sql.substr(0, 60) + "...";
  status_ = Status(Code::kInternal, path_ + ": " + (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc)) + " (" + sql + ")");
  sqlite3_reset(stmt_);
  return status_;
}

Status Stmt::run() {
  int rc = sqlite3_step(stmt_);
  if (rc != SQLITE_DONE && rc != SQLITE_ROW) return fail(rc);
  sqlite3_reset(stmt_);
  return Status::Ok();
}

bool Stmt::next() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) {
    status_ = Status::Ok();
    sqlite3_reset(stmt_);
  } else {
    fail(rc);
  }
  return false;
}

int64_t Stmt::i64(int column) const { return sqlite3_column_int64(stmt_, column); }
double Stmt::f64(int column) const { return sqlite3_column_double(stmt_, column); }
bool Stmt::is_null(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }

std::string Stmt::text(int column) const {
  const unsigned char* p = sqlite3_column_text(stmt_, column);
  if (p == nullptr) return {};
  return std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)));
}

Db::Db(Db&& other) noexcept : db_(std::exchange(other.db_, nullptr)), path_(std::move(other.path_)) {}

Db& Db::operator=(Db&& other) noexcept {
  if (this != &other) {
    if (db_ != nullptr) sqlite3_close_v2(db_);
    db_ = std::exchange(other.db_, nullptr);
    path_ = std::move(other.path_);
  }
  return *this;
}

Db::~Db() {
  if (db_ != nullptr) sqlite3_close_v2(db_);
}

// SQLite counts every allocation under one global mutex unless told not to; the recorder writes
// its rank databases from several threads at once, which that mutex serialized.
void configure_sqlite_once() {
  static const int configured = sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
  (void)configured;  // SQLITE_MISUSE when SQLite was already in use: the default stays
}

Result<Db> Db::open(const std::string& path, Mode mode) {
  configure_sqlite_once();
  struct stat st {};
  bool exists = ::stat(path.c_str(), &st) == 0;
  if (mode == Mode::kCreate && exists) return Status(Code::kFailedPrecondition, path + ": already exists");
  if (mode != Mode::kCreate && !exists) return NotFoundError(path + ": no such file");
  if (mode != Mode::kCreate && !S_ISREG(st.st_mode)) return InvalidArgument(path + ": not a regular file");
  int flags = mode == Mode::kReadOnly ? SQLITE_OPEN_READONLY
              : mode == Mode::kReadWrite ? SQLITE_OPEN_READWRITE
                                         : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  Db db;
  db.path_ = path;
  int rc = sqlite3_open_v2(path.c_str(), &db.db_, flags | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) return InvalidArgument(path + ": cannot open: " + sqlite3_errstr(rc));
  sqlite3_busy_timeout(db.db_, kBusyTimeoutMs);
  // Reading the schema is the first thing that fails for a file that is not a database.
  if (Status s = db.exec("SELECT count(*) FROM sqlite_master"); !s.ok()) {
    // A SQLite file whose pages are damaged is not "not a database": say which it is.
    const bool damaged = (sqlite3_errcode(db.db_) & 0xff) == SQLITE_CORRUPT;
    return InvalidArgument(path + (damaged ? ": a damaged SQLite database (" : ": not a SQLite database (") +
                           sqlite3_errmsg(db.db_) + ")");
  }
  return db;
}

Status Db::error(std::string_view context) const {
  return Status(Code::kInternal, path_ + ": " + sqlite3_errmsg(db_) + " (" + std::string(context) + ")");
}

Status Db::exec(std::string_view sql) {
  std::string copy(sql);
  char* err = nullptr;
  int rc = sqlite3_exec(db_, copy.c_str(), nullptr, nullptr, &err);
  if (rc == SQLITE_OK) return Status::Ok();
  std::string message = err != nullptr ? err : sqlite3_errstr(rc);
  sqlite3_free(err);
  if (copy.size() > 60) copy = copy.substr(0, 60) + "...";
  return Status(Code::kInternal, path_ + ": " + message + " (" + copy + ")");
}

Result<Stmt> Db::prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) return error(std::string(sql.substr(0, 60)));
  return Stmt(stmt, path_);
}

Result<int64_t> Db::query_i64(std::string_view sql) {
  auto q = prepare(sql);
  if (!q.ok()) return q.status();
  if (!q->next()) {
    if (!q->status().ok()) return q->status();
    return NotFoundError(path_ + ": no row for " + std::string(sql.substr(0, 60)));
  }
  return q->i64(0);
}

Result<bool> Db::has_table(std::string_view name) {
  auto q = prepare("SELECT 1 FROM sqlite_master WHERE type IN ('table','view') AND name = ?");
  if (!q.ok()) return q.status();
  q->bind(1, name);
  bool found = q->next();
  if (!found && !q->status().ok()) return q->status();
  return found;
}

Result<bool> Db::has_column(std::string_view table, std::string_view column) {
  auto q = prepare("SELECT 1 FROM pragma_table_info(?) WHERE name = ?");
  if (!q.ok()) return q.status();
  q->bind(1, table);
  q->bind(2, column);
  bool found = q->next();
  if (!found && !q->status().ok()) return q->status();
  return found;
}

Transaction::Transaction(Db& db) : db_(db) {
  begun_ = db_.exec("BEGIN");
  open_ = begun_.ok();
}

Transaction::~Transaction() {
  if (open_) (void)db_.exec("ROLLBACK");
}

Status Transaction::commit() {
  if (!open_) return begun_.ok() ? InternalError("transaction already committed") : begun_;
  Status s = db_.exec("COMMIT");
  if (s.ok()) open_ = false;
  return s;
}

}  // namespace npukit::prof
