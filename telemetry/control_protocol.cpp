// Request validation, permission checks and reply shaping shared by every control transport.
#include <unistd.h>

#include <array>
#include <exception>

#include "telemetry/control.hpp"
#include "telemetry/json_reader.hpp"

namespace npukit::telemetry {

namespace {

constexpr std::array<std::string_view, 5> kReadOnlyOps = {"ping", "status", "reference", "list_jobs", "job_status"};

std::string malformed(const std::string& what, std::size_t column) {
  return "malformed request: " + what + " at line 1 column " + std::to_string(column);
}

// nlohmann: "[json.exception.parse_error.101] parse error at line 1, column 5: <what>".
std::string parse_error_what(const std::string& full) {
  auto col = full.find("column ");
  auto colon = full.find(": ", col == std::string::npos ? 0 : col);
  return colon == std::string::npos ? full : full.substr(colon + 2);
}

}  // namespace

std::span<const std::string_view> read_only_ops() { return kReadOnlyOps; }

bool is_read_only_op(std::string_view op) {
  for (auto r : kReadOnlyOps) {
    if (r == op) return true;
  }
  return false;
}

nlohmann::json error_reply(const std::string& message, std::string_view code) {
  return {{"ok", false}, {"error", message}, {"code", std::string(code)}};
}

std::string to_line(const nlohmann::json& j) {
  return json_text(j);
}

Status reply_status(const nlohmann::json& reply) {
  if (reply.is_object() && reply.value("ok", false)) return Status::Ok();
  std::string error = reply.is_object() && reply.contains("error") && reply["error"].is_string()
                          ? reply["error"].get<std::string>()
                          : "control reply without ok: " + to_line(reply);
  bool denied = reply.is_object() && reply.value("code", std::string()) == "permission_denied";
  return Status(denied ? Code::kPermissionDenied : Code::kFailedPrecondition, error);
}

std::string ControlDispatcher::handle_line(std::string_view line, const Peer& peer) const {
  nlohmann::json request;
  if (std::size_t at = too_deep_at(line); at != 0) {
    return to_line(error_reply(malformed("nested deeper than " + std::to_string(kMaxJsonDepth) + " levels", at), "malformed_request"));
  }
  try {
    request = nlohmann::json::parse(line);
  } catch (const nlohmann::json::parse_error& e) {
    std::size_t column = e.byte == 0 ? 1 : e.byte;
    return to_line(error_reply(malformed(parse_error_what(e.what()), column), "malformed_request"));
  } catch (const nlohmann::json::out_of_range& e) {  // a number too large for a double
    return to_line(error_reply(malformed(number_overflow_message(e.what()), number_overflow_at(line, e.what())),
                               "malformed_request"));
  }
  return to_line(handle(request, peer));
}

nlohmann::json ControlDispatcher::handle(const nlohmann::json& request, const Peer& peer) const {
  nlohmann::json reply = answer(request, peer);
  if (request.is_object()) {
    if (auto id = request.find("id"); id != request.end()) reply["id"] = *id;
  }
  return reply;
}

nlohmann::json ControlDispatcher::answer(const nlohmann::json& request, const Peer& peer) const {
  if (!request.is_object()) {
    return error_reply(malformed(std::string("expected a JSON object, got ") + request.type_name(), 1),
                       "malformed_request");
  }
  auto op_it = request.find("op");
  if (op_it == request.end() || !op_it->is_string()) {
    return error_reply(malformed("missing string member \"op\"", 1), "malformed_request");
  }
  Request r{request, op_it->get<std::string>(), peer};
  if (!is_read_only_op(r.op) && peer.uid != owner_uid_ && peer.uid != 0) {
    return error_reply("permission denied: uid " + std::to_string(peer.uid) + " may not " + r.op,
                       "permission_denied");
  }
  if (r.op == "ping") return {{"ok", true}, {"pong", true}, {"pid", ::getpid()}};
  if (!handler_) return error_reply("no handler for op '" + r.op + "'", "unknown_op");
  try {
    nlohmann::json reply = handler_(r);
    if (!reply.is_object()) reply = {{"ok", true}, {"result", reply}};
    if (!reply.contains("ok")) reply["ok"] = true;
    return reply;
  } catch (const std::exception& e) {
    return error_reply("internal error handling '" + r.op + "': " + e.what(), "internal");
  }
}

}  // namespace npukit::telemetry
