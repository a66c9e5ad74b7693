// Reading JSON documents (specs, workloads, programs) with errors that name the file, the
// line:column of a syntax error, or the dotted path of a bad field.
//
// FieldReader records the FIRST problem and keeps returning neutral values afterwards, so a
// loader reads every field straight through and checks status() once at the end.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "telemetry/status.hpp"

namespace npukit {

// The deepest nesting of arrays and objects an outside document may have: every reader of one
// walks it recursively, so a document nested 100,000 deep would exhaust the stack.
inline constexpr int kMaxJsonDepth = 128;
// The byte offset (1-based) where `text` first nests deeper than kMaxJsonDepth, 0 when it
// never does (strings are skipped, as the parser reads them).
std::size_t too_deep_at(std::string_view text);

// `j` as text (indent < 0: one line); never throws: invalid UTF-8 in a string (from a corrupted
// database, a hostile segment or request) is written as U+FFFD instead of ending the program.
std::string json_text(const nlohmann::json& j, int indent = -1);

// nlohmann throws out_of_range, not parse_error, for a number too large for a double (1e999):
// "number overflow parsing '1e999'". Where that number is in `text` (1-based byte offset; 1 when
// it cannot be found) and a short message naming it ("number too large: '1e999'").
std::size_t number_overflow_at(std::string_view text, const std::string& what);
std::string number_overflow_message(const std::string& what);

// Parses `text`; on a syntax error (a number too large included): "<prefix>: <file>:<line>:<col>: <what>" (nesting deeper than
// kMaxJsonDepth is one).
Result<nlohmann::json> parse_json_text(const std::string& text, const std::string& file,
                                       std::string_view prefix);
// Reads and parses a file; a missing file: "<prefix>: <file>: cannot open (<errno text>)".
Result<nlohmann::json> parse_json_file(const std::string& file, std::string_view prefix);

class FieldReader {
 public:
  // Messages read "<prefix>: <file>: field '<path>': <what>".
  FieldReader(const nlohmann::json& root, std::string file, std::string prefix);

  // Required fields: record an error when missing or of the wrong type.
  double number(std::string_view path);
  int64_t integer(std::string_view path);
  std::string string(std::string_view path);
  // Optional fields: the fallback when absent; a present field of the wrong type is an error.
  double number_or(std::string_view path, double fallback);
  int64_t integer_or(std::string_view path, int64_t fallback);
  std::string string_or(std::string_view path, std::string fallback);
  // The node at a dotted path, or nullptr when absent (no error recorded).
  const nlohmann::json* find(std::string_view path) const;

  // Record a semantic problem with a field ("must be > 0").
  void fail(std::string_view path, std::string_view what);
  // Records "unknown field" for a member of the object at `path` ("" = the root) that is not in
  // `allowed`, so a misspelt field is an error, not a default taken in silence.
  void only(std::string_view path, std::initializer_list<const char*> allowed);
  // Require a numeric field to lie in [lo, hi].
  void check_range(std::string_view path, double value, double lo, double hi);

  const Status& status() const { return status_; }
  bool ok() const { return status_.ok(); }
  const std::string& file() const { return file_; }

 private:
  const nlohmann::json* require(std::string_view path, bool (nlohmann::json::*is)() const noexcept,
                                const char* expected);
  const nlohmann::json& root_;
  std::string file_;
  std::string prefix_;
  Status status_;
};

// Reads the members of one JSON object whose place in the document is `path`
// ("ranks[0].step[3]"), recording the first problem in the shared `err` as
// "<prefix><path>.<member>: <what>". Several readers share one `err`, so a loader walks a whole
// document and checks once.
class ObjectReader {
 public:
  ObjectReader(const nlohmann::json& j, std::string path, Status& err, std::string prefix);
  void fail(const std::string& member, const std::string& what);
  bool has(const char* member) const { return j_.is_object() && j_.contains(member); }
  int64_t integer(const char* member, int64_t fallback, bool required = false);
  // An integer in [lo, hi] (the fallback when absent); outside it: "must be in [lo, hi]".
  int64_t integer_in(const char* member, int64_t fallback, int64_t lo, int64_t hi);
  double number(const char* member, double fallback, bool required = false);
  std::string text(const char* member, std::string fallback, bool required = false);
  bool boolean(const char* member, bool fallback);
  const nlohmann::json& raw(const char* member) const { return j_[member]; }
  // Records an "unknown field" error for any member not in `allowed` (typos surface).
  void only(std::initializer_list<const char*> allowed);
  const std::string& path() const { return path_; }

 private:
  const nlohmann::json& j_;
  std::string path_;
  Status& err_;
  std::string prefix_;
};

}  // namespace npukit
