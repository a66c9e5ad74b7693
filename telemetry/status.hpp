// Status and Result<T>: errors as values across module seams (STYLE.md item 9).
//
// A Status is either ok or carries a code and a one-line message that already names what
// failed and where ("spec error: <file>: field 'aicore.count': ..."). Libraries never throw
// across their boundary; they return Status or Result<T>. Both types are cheap to move and
// are not thread-safe to share mutably (like any value type).
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace npukit {

enum class Code {
  kOk = 0,
  kInvalidArgument,   // bad input from a user: arguments, files, shapes
  kNotFound,          // an operator, spec, device or node that does not exist
  kShapeInference,    // a shape the kernel cannot handle
  kOutOfMemory,       // device memory exhausted
  kFailedPrecondition,
  kUnavailable,       // no daemon, stale node
  kPermissionDenied,  // the node is another user's and does not let this one do that
  kInternal,
};

// Stable name of a code, e.g. "NotFound" (for logs and JSON, not for matching messages).
const char* code_name(Code code);

class Status {
 public:
  Status() = default;
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return {}; }
  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  // The one-line, user-facing message (empty when ok).
  const std::string& message() const { return message_; }

 private:
  Code code_ = Code::kOk;
  std::string message_;
};

inline Status InvalidArgument(std::string m) { return {Code::kInvalidArgument, std::move(m)}; }
inline Status NotFoundError(std::string m) { return {Code::kNotFound, std::move(m)}; }
inline Status InternalError(std::string m) { return {Code::kInternal, std::move(m)}; }

// Either a value or a non-ok Status.
template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) { assert(!std::get<Status>(v_).ok()); }  // NOLINT

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::get<T>(std::move(v_)); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace npukit

// Propagate a non-ok Status from an expression returning Status.
#define NPUKIT_RETURN_IF_ERROR(expr)          \
  do {                                         \
    ::npukit::Status npukit_s_ = (expr);       \
    if (!npukit_s_.ok()) return npukit_s_;     \
  } while (0)
