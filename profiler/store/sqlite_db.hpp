// RAII wrappers around sqlite3* and sqlite3_stmt* (in the spirit of perfetto's scoped_db.h).
//
// Db owns one connection; Stmt owns one prepared statement and must not outlive its Db.
// Errors come back as Status values whose message names the database file and the SQLite
// error ("<path>: database disk image is malformed"), never as exceptions.
//
// Thread-safety: a Db and its Stmts belong to one thread at a time (SQLite's "multi-thread"
// mode); open one Db per thread to read in parallel.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "telemetry/status.hpp"

struct sqlite3;
struct sqlite3_stmt;

namespace npukit::prof {

class Stmt {
 public:
  Stmt() = default;
  Stmt(sqlite3_stmt* stmt, std::string path) : stmt_(stmt), path_(std::move(path)) {}
  Stmt(Stmt&& other) noexcept;
  Stmt& operator=(Stmt&& other) noexcept;
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  ~Stmt();

  // Binds parameter `index` (1-based). Binding never fails for a valid index.
  Stmt& bind(int index, int64_t value);
  Stmt& bind(int index, double value);
  Stmt& bind(int index, std::string_view text);  // copied (SQLITE_TRANSIENT)
  Stmt& bind_null(int index);

  // Executes a statement that returns no rows, then resets it for the next bindings.
  Status run();
  // Steps a query: true while a row is available. After false, status() says whether the
  // query ended normally; the statement is reset for reuse.
  bool next();
  const Status& status() const { return status_; }

  int64_t i64(int column) const;
  double f64(int column) const;
  std::string text(int column) const;
  bool is_null(int column) const;
  sqlite3_stmt* handle() const { return stmt_; }

 private:
  Status fail(int rc);

  sqlite3_stmt* stmt_ = nullptr;
  std::string path_;
  Status status_;
};

class Db {
 public:
  enum class Mode { kCreate, kReadWrite, kReadOnly };
  // How long a statement waits for another connection's lock before it fails as busy.
  static constexpr int kBusyTimeoutMs = 2000;

  Db() = default;
  Db(Db&& other) noexcept;
  Db& operator=(Db&& other) noexcept;
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;
  ~Db();

  // kCreate creates the file (it must not exist); kReadWrite and kReadOnly need an existing
  // file. NotFound for a missing file; InvalidArgument when the file is not a SQLite database.
  static Result<Db> open(const std::string& path, Mode mode);

  Status exec(std::string_view sql);
  Result<Stmt> prepare(std::string_view sql);
  // The first column of the first row of `sql` as an integer (NotFound when no row).
  Result<int64_t> query_i64(std::string_view sql);
  // True when a table (or view) named `name` exists.
  Result<bool> has_table(std::string_view name);
  // Whether `table` has `column` (a profile written before the column was added has not).
  Result<bool> has_column(std::string_view table, std::string_view column);

  const std::string& path() const { return path_; }
  sqlite3* handle() const { return db_; }
  Status error(std::string_view context) const;  // "<path>: <sqlite message> (<context>)"

 private:
  sqlite3* db_ = nullptr;
  std::string path_;
};

// BEGIN on construction, ROLLBACK on destruction unless commit() succeeded.
class Transaction {
 public:
  explicit Transaction(Db& db);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  const Status& begun() const { return begun_; }
  Status commit();

 private:
  Db& db_;
  Status begun_;
  bool open_ = false;
};

}  // namespace npukit::prof
