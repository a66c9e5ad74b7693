// The control channel: newline-delimited JSON requests and replies over a Unix stream socket
// beside the segment (naming.hpp: $XDG_RUNTIME_DIR or /tmp, "npukit-<node>.sock").
//
// Request:  one line, a JSON object with a string "op" and op-specific members; an optional
//           "id" (any JSON value) is echoed in the reply.
// Reply:    one line, a JSON object: {"ok": true, ...} or {"ok": false, "error": "<one line>",
//           "code": "<machine-readable code>"}. Codes produced here: "malformed_request",
//           "request_too_large", "permission_denied", "internal", "too_many_connections";
//           handlers add their own (e.g. "unknown_op", "invalid_argument", "not_found").
// Built in: {"op":"ping"} -> {"ok":true,"pong":true,"pid":<server pid>} (never reaches the handler).
// Read-only ops (read_only_ops(): ping, status, reference, list_jobs, job_status) are served to any peer
// that can connect; every other op mutates and is refused unless the peer's uid (SO_PEERCRED)
// is the server's effective uid or 0: "permission denied: uid N may not <op>".
// Malformed JSON, a non-object or a missing "op": "malformed request: <what> at line 1 column N";
// the connection stays open. A line longer than max_request_bytes (default 16 MiB) gets
// "request too large: ..." and the rest of that line is discarded.
//
// Socket permissions follow Access (segment.hpp): kOwner 0600, kGroup 0660 (+ group), kAll 0666.
// The socket is bound under a temporary name, given its mode and group, then renamed into
// place, so it is never reachable with looser permissions. A leftover socket from a killed
// daemon is replaced; a socket a live daemon answers on is refused.
//
// Thread-safety: ControlServer runs one thread (poll loop) and calls the handler there, one
// request at a time; a slow handler delays other clients. ControlClient is one connection and
// is not thread-safe; open one per thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <thread>

#include <nlohmann/json.hpp>

#include "telemetry/segment.hpp"
#include "telemetry/phase_clock.hpp"
#include "telemetry/status.hpp"

namespace npukit::telemetry {

struct Peer {
  int pid = 0;
  uid_t uid = 0;
  gid_t gid = 0;
};

struct Request {
  nlohmann::json body;  // the whole request object
  std::string op;
  Peer peer;
};

// Returns the reply object; a missing "ok" is filled in as true. Exceptions are caught and
// turned into {"ok":false,"code":"internal"} replies.
using ControlHandler = std::function<nlohmann::json(const Request&)>;

std::span<const std::string_view> read_only_ops();
bool is_read_only_op(std::string_view op);

nlohmann::json error_reply(const std::string& message, std::string_view code);
// Compact one-line JSON; never throws (invalid UTF-8 is replaced by U+FFFD).
std::string to_line(const nlohmann::json& j);
// Status of a reply: Ok for {"ok":true}, else FailedPrecondition carrying its "error".
Status reply_status(const nlohmann::json& reply);

// Framing-free request handling, shared by the socket server and the in-process bus.
class ControlDispatcher {
 public:
  ControlDispatcher(ControlHandler handler, uid_t owner_uid)
      : handler_(std::move(handler)), owner_uid_(owner_uid) {}
  // One request line (without the newline) -> one reply (serialised, without the newline).
  std::string handle_line(std::string_view line, const Peer& peer) const;
  nlohmann::json handle(const nlohmann::json& request, const Peer& peer) const;
  uid_t owner() const { return owner_uid_; }

 private:
  nlohmann::json answer(const nlohmann::json& request, const Peer& peer) const;
  ControlHandler handler_;
  uid_t owner_uid_;
};

struct ControlServerOptions {
  std::string node = "npukit";  // names the node in messages
  std::string path;             // "" = control_socket_path(node)
  Access access;
  std::size_t max_request_bytes = 16u << 20;
  // At the limit a new connection evicts the one idle longest (another user's first), so silent
  // clients can never lock the owner out of stop or inject.
  std::size_t max_connections = 64;
  // A connection that sends nothing and has nothing to receive for this long is closed.
  std::chrono::milliseconds idle_timeout{5000};
};

class ControlServer {
 public:
  static Result<std::unique_ptr<ControlServer>> start(const ControlServerOptions& options,
                                                      ControlHandler handler);
  // Stops the thread, closes every connection and removes the socket.
  ~ControlServer();
  void stop();
  const std::string& path() const { return path_; }
  // What its thread is doing and for how long (phase_clock.hpp): polling, accepting, reading and
  // handling requests, flushing replies; then its connections as of its last round (bytes
  // waiting, lines read, replies written, end of input seen). Thread-safe.
  std::string activity() const;

 private:
  ControlServer() = default;
  void run();
  PhaseClock clock_;
  mutable std::mutex connections_mu_;
  std::string connections_ = "0 connections";  // guarded by connections_mu_

  ControlServerOptions options_;
  std::unique_ptr<ControlDispatcher> dispatcher_;
  std::string path_;
  int listen_fd_ = -1;
  int wake_fd_ = -1;
  ino_t socket_ino_ = 0;
  std::thread thread_;
};

class ControlClient {
 public:
  // Unavailable (no_daemon_message) when nothing listens at `path`; `node` names the node in
  // messages.
  static Result<std::unique_ptr<ControlClient>> connect(const std::string& node, const std::string& path,
                                                        std::chrono::milliseconds timeout);
  ~ControlClient();
  // Sends one request and waits for its reply line (Unavailable on timeout or a closed
  // connection; Internal for a reply that is not JSON).
  Result<nlohmann::json> call(const nlohmann::json& request);

 private:
  ControlClient() = default;
  Status send_all(const std::string& data);
  Result<std::string> read_line();

  std::string node_;
  std::string path_;
  std::chrono::milliseconds timeout_{0};
  int fd_ = -1;
  std::string pending_;  // bytes read past the last reply
};

}  // namespace npukit::telemetry
