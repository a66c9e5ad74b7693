#include "telemetry/json_reader.hpp"

#include <algorithm>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace npukit {

namespace {

// 1-based line and column of byte offset `byte` (nlohmann reports the offset just past the error).
std::pair<int, int> line_col(const std::string& text, std::size_t byte) {
  int line = 1;
  int col = 1;
  std::size_t end = std::min(byte == 0 ? 0 : byte - 1, text.size());
  for (std::size_t i = 0; i < end; ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return {line, col};
}

// nlohmann's message is "[json.exception.parse_error.101] parse error at line 3, column 5: ...";
// keep only the part after the location.
std::string short_parse_message(const std::string& what) {
  auto pos = what.find(": ");
  std::string rest = pos == std::string::npos ? what : what.substr(pos + 2);
  if (rest.rfind("syntax error while parsing value - ", 0) == 0) rest = rest.substr(35);
  return rest;
}

// The number nlohmann names in "...number overflow parsing '<number>'" ("" when none).
std::string overflowing_number(const std::string& what) {
  auto open = what.find('\'');
  auto close = open == std::string::npos ? std::string::npos : what.find('\'', open + 1);
  return close == std::string::npos ? "" : what.substr(open + 1, close - open - 1);
}

}  // namespace

std::string json_text(const nlohmann::json& j, int indent) {
  return j.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::size_t number_overflow_at(std::string_view text, const std::string& what) {
  std::string number = overflowing_number(what);
  auto at = number.empty() ? std::string_view::npos : text.find(number);
  return at == std::string_view::npos ? 1 : at + 1;
}

std::string number_overflow_message(const std::string& what) {
  std::string number = overflowing_number(what);
  if (number.size() > 32) number = number.substr(0, 29) + "...";
  return "number too large: '" + number + "'";
}

std::size_t too_deep_at(std::string_view text) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) return i + 1;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return 0;
}

Result<nlohmann::json> parse_json_text(const std::string& text, const std::string& file,
                                       std::string_view prefix) {
  if (std::size_t at = too_deep_at(text); at != 0) {
    auto [line, col] = line_col(text, at);
    return InvalidArgument(std::string(prefix) + ": " + file + ":" + std::to_string(line) + ":" + std::to_string(col) +
                           ": nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
  }
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    auto [line, col] = line_col(text, e.byte);
    return InvalidArgument(std::string(prefix) + ": " + file + ":" + std::to_string(line) + ":" +
                           std::to_string(col) + ": " + short_parse_message(e.what()));
  } catch (const nlohmann::json::out_of_range& e) {
    auto [line, col] = line_col(text, number_overflow_at(text, e.what()));  // 1-based: the number's first byte
    return InvalidArgument(std::string(prefix) + ": " + file + ":" + std::to_string(line) + ":" +
                           std::to_string(col) + ": " + number_overflow_message(e.what()));
  }
}

Result<nlohmann::json> parse_json_file(const std::string& file, std::string_view prefix) {
  std::ifstream in(file);
  if (!in) {
    return Status(Code::kNotFound, std::string(prefix) + ": " + file + ": cannot open (" +
                                       std::strerror(errno) + ")");
  }
  std::ostringstream buf;
  buf << in.rdbuf();
  return parse_json_text(buf.str(), file, prefix);
}

FieldReader::FieldReader(const nlohmann::json& root, std::string file, std::string prefix)
    : root_(root), file_(std::move(file)), prefix_(std::move(prefix)) {}

const nlohmann::json* FieldReader::find(std::string_view path) const {
  const nlohmann::json* node = &root_;
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t dot = path.find('.', start);
    std::string key(path.substr(start, dot == std::string_view::npos ? path.npos : dot - start));
    if (!node->is_object()) return nullptr;
    auto it = node->find(key);
    if (it == node->end()) return nullptr;
    node = &*it;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return node;
}

void FieldReader::fail(std::string_view path, std::string_view what) {
  if (!status_.ok()) return;
  status_ = InvalidArgument(prefix_ + ": " + file_ + ": field '" + std::string(path) + "': " +
                            std::string(what));
}

void FieldReader::only(std::string_view path, std::initializer_list<const char*> allowed) {
  const nlohmann::json* node = path.empty() ? &root_ : find(path);
  if (node == nullptr || !node->is_object()) return;
  for (const auto& item : node->items()) {
    const std::string& key = item.key();
    bool known = std::any_of(allowed.begin(), allowed.end(), [&](const char* a) { return key == a; });
    if (!known) fail(path.empty() ? key : std::string(path) + "." + key, "unknown field");
  }
}

void FieldReader::check_range(std::string_view path, double value, double lo, double hi) {
  if (value < lo || value > hi) {
    std::ostringstream what;
    what << "value " << value << " is out of range [" << lo << ", " << hi << "]";
    fail(path, what.str());
  }
}

const nlohmann::json* FieldReader::require(std::string_view path,
                                           bool (nlohmann::json::*is)() const noexcept,
                                           const char* expected) {
  const nlohmann::json* node = find(path);
  if (node == nullptr) {
    fail(path, "missing");
    return nullptr;
  }
  if (!(node->*is)()) {
    fail(path, std::string("expected ") + expected + ", got " + node->type_name());
    return nullptr;
  }
  return node;
}

double FieldReader::number(std::string_view path) {
  const auto* n = require(path, &nlohmann::json::is_number, "a number");
  return n ? n->get<double>() : 0.0;
}

int64_t FieldReader::integer(std::string_view path) {
  const auto* n = require(path, &nlohmann::json::is_number_integer, "an integer");
  return n ? n->get<int64_t>() : 0;
}

std::string FieldReader::string(std::string_view path) {
  const auto* n = require(path, &nlohmann::json::is_string, "a string");
  return n ? n->get<std::string>() : std::string();
}

double FieldReader::number_or(std::string_view path, double fallback) {
  return find(path) ? number(path) : fallback;
}

int64_t FieldReader::integer_or(std::string_view path, int64_t fallback) {
  return find(path) ? integer(path) : fallback;
}

std::string FieldReader::string_or(std::string_view path, std::string fallback) {
  return find(path) ? string(path) : fallback;
}

ObjectReader::ObjectReader(const nlohmann::json& j, std::string path, Status& err, std::string prefix)
    : j_(j), path_(std::move(path)), err_(err), prefix_(std::move(prefix)) {
  if (err_.ok() && !j_.is_object()) fail("", "expected an object");
}

void ObjectReader::fail(const std::string& member, const std::string& what) {
  if (err_.ok()) err_ = InvalidArgument(prefix_ + path_ + (member.empty() ? "" : "." + member) + ": " + what);
}

int64_t ObjectReader::integer(const char* member, int64_t fallback, bool required) {
  if (!has(member)) {
    if (required) fail(member, "missing");
    return fallback;
  }
  const auto& v = j_[member];
  if (!v.is_number_integer()) fail(member, std::string("expected an integer, got ") + v.type_name());
  return v.is_number_integer() ? v.get<int64_t>() : fallback;
}

int64_t ObjectReader::integer_in(const char* member, int64_t fallback, int64_t lo, int64_t hi) {
  int64_t v = integer(member, fallback);
  if (v < lo || v > hi) {
    fail(member, "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + std::to_string(v));
    return fallback;
  }
  return v;
}

double ObjectReader::number(const char* member, double fallback, bool required) {
  if (!has(member)) {
    if (required) fail(member, "missing");
    return fallback;
  }
  const auto& v = j_[member];
  if (!v.is_number()) fail(member, std::string("expected a number, got ") + v.type_name());
  return v.is_number() ? v.get<double>() : fallback;
}

std::string ObjectReader::text(const char* member, std::string fallback, bool required) {
  if (!has(member)) {
    if (required) fail(member, "missing");
    return fallback;
  }
  const auto& v = j_[member];
  if (!v.is_string()) fail(member, std::string("expected a string, got ") + v.type_name());
  return v.is_string() ? v.get<std::string>() : fallback;
}

bool ObjectReader::boolean(const char* member, bool fallback) {
  if (!has(member)) return fallback;
  const auto& v = j_[member];
  if (!v.is_boolean()) fail(member, std::string("expected true or false, got ") + v.type_name());
  return v.is_boolean() ? v.get<bool>() : fallback;
}

void ObjectReader::only(std::initializer_list<const char*> allowed) {
  if (!j_.is_object()) return;
  for (const auto& [k, v] : j_.items()) {
    bool ok = false;
    for (const char* a : allowed) ok = ok || k == a;
    if (!ok) fail(k, "unknown field");
  }
}

}  // namespace npukit
