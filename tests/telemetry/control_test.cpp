// The control channel: framing, malformed and oversized requests (error reply, server keeps
// serving), peer-credential permissions (an unprivileged user cannot mutate), socket
// permissions, stale sockets, and clean shutdown.
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <thread>

#include <atomic>
#include <cstdio>

#include "telemetry/control.hpp"
#include "telemetry/naming.hpp"
#include "tests/telemetry/bus_test_util.hpp"

namespace npukit::telemetry {
namespace {

using nlohmann::json;
using testing::Child;
using testing::unique_node;

constexpr uid_t kNobody = 65534;

std::string socket_path(const std::string& node) { return "/tmp/npukit-" + node + ".sock"; }

// A server whose handler counts calls and echoes the op; its socket is removed at the end even
// when the test failed half-way.
struct Server {
  std::atomic<int> calls{0};
  std::string path;
  std::unique_ptr<ControlServer> server;

  ~Server() {
    server.reset();
    ::unlink(path.c_str());
  }

  explicit Server(const std::string& node, Access access = {}, std::size_t max_request = 16u << 20,
                  std::size_t max_connections = 64, std::chrono::milliseconds idle = std::chrono::seconds(5)) {
    ControlServerOptions o;
    o.node = node;
    o.path = path = socket_path(node);
    o.access = access;
    o.max_request_bytes = max_request;
    o.max_connections = max_connections;
    o.idle_timeout = idle;
    auto s = ControlServer::start(o, [this](const Request& r) -> json {
      ++calls;
      if (r.op == "boom") throw std::runtime_error("kaboom");
      return {{"echo", r.op}, {"peer_uid", r.peer.uid}, {"peer_pid", r.peer.pid}};
    });
    EXPECT_TRUE(s.ok()) << s.status().message();
    if (s.ok()) server = std::move(*s);
  }
};

// A raw connection for sending bytes the client would never produce.
class Raw {
 public:
  explicit Raw(const std::string& path) {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::snprintf(a.sun_path, sizeof a.sun_path, "%s", path.c_str());
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  }
  ~Raw() { ::close(fd_); }
  bool connected() const { return connected_; }
  void send(const std::string& bytes) {
    std::size_t off = 0;
    while (off < bytes.size()) {
      ssize_t n = ::send(fd_, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
      if (n <= 0) return;
      off += static_cast<std::size_t>(n);
    }
  }
  std::string line() {
    std::string out;
    char c;
    while (::recv(fd_, &c, 1, 0) == 1 && c != '\n') out += c;
    return out;
  }
  json reply() { return json::parse(line()); }

 private:
  int fd_ = -1;
  bool connected_ = false;
};

Result<json> call(const std::string& node, const json& request) {
  auto c = ControlClient::connect(node, socket_path(node), std::chrono::seconds(10));
  if (!c.ok()) return c.status();
  return (*c)->call(request);
}

TEST(Control, PingAndHandlerRoundTrip) {
  std::string node = unique_node();
  Server s(node);
  ASSERT_TRUE(s.server);
  auto pong = call(node, {{"op", "ping"}});
  ASSERT_TRUE(pong.ok()) << pong.status().message();
  EXPECT_EQ((*pong)["ok"], true);
  EXPECT_EQ((*pong)["pong"], true);
  EXPECT_EQ((*pong)["pid"], ::getpid());
  EXPECT_EQ(s.calls.load(), 0) << "ping is answered by the server itself";
  auto r = call(node, {{"op", "inject"}, {"id", 17}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)["ok"], true);
  EXPECT_EQ((*r)["echo"], "inject");
  EXPECT_EQ((*r)["id"], 17);
  EXPECT_EQ((*r)["peer_uid"], ::geteuid());
  EXPECT_EQ((*r)["peer_pid"], ::getpid());
  EXPECT_TRUE(reply_status(*r).ok());
}

TEST(Control, MalformedRequestGetsAnErrorAndTheServerKeepsServing) {
  std::string node = unique_node();
  Server s(node);
  ASSERT_TRUE(s.server);
  Raw raw(socket_path(node));
  ASSERT_TRUE(raw.connected());
  raw.send("{\"op\": \"status\", oops}\n");
  json bad = raw.reply();
  EXPECT_EQ(bad["ok"], false);
  EXPECT_EQ(bad["code"], "malformed_request");
  std::string error = bad["error"];
  EXPECT_EQ(error.rfind("malformed request: ", 0), 0u) << error;
  EXPECT_NE(error.find(" at line 1 column 18"), std::string::npos) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos);
  EXPECT_EQ(reply_status(bad).message(), error);
  raw.send("[1, 2]\n{\"id\": 3}\n{\"op\": 5}\n");
  EXPECT_EQ(raw.reply()["error"], "malformed request: expected a JSON object, got array at line 1 column 1");
  json missing = raw.reply();
  EXPECT_EQ(missing["error"], "malformed request: missing string member \"op\" at line 1 column 1");
  EXPECT_EQ(missing["id"], 3);
  EXPECT_EQ(raw.reply()["code"], "malformed_request");
  // Deep nesting would recurse through the parser and every reader: refused past 128 levels.
  raw.send("{\"op\": \"status\", \"x\": " + std::string(1000, '[') + std::string(1000, ']') + "}\n");
  EXPECT_EQ(raw.reply()["error"], "malformed request: nested deeper than 128 levels at line 1 column 150");
  // A number too large for a double: nlohmann throws out_of_range, which once killed the daemon
  // (found by tests/fuzz/control).
  raw.send("{\"op\": \"status\", \"x\": 1e999}\n");
  EXPECT_EQ(raw.reply()["error"], "malformed request: number too large: '1e999' at line 1 column 23");
  raw.send("{\"op\": \"status\"}\r\n");  // same connection still served
  EXPECT_EQ(raw.reply()["echo"], "status");
  auto other = call(node, {{"op", "status"}});  // and new connections too
  ASSERT_TRUE(other.ok());
  EXPECT_EQ((*other)["echo"], "status");
  EXPECT_EQ(s.calls.load(), 2);
}

// Silent clients at the connection limit: each new connection evicts the one idle longest (told
// why), so the owner's request still gets through (64 silent clients locked out stop and inject).
TEST(Control, SilentClientsCannotLockTheOwnerOut) {
  std::string node = unique_node();
  Server s(node, {}, 16u << 20, 4);
  ASSERT_TRUE(s.server);
  std::vector<std::unique_ptr<Raw>> silent;
  for (int i = 0; i < 8; ++i) {
    silent.push_back(std::make_unique<Raw>(socket_path(node)));
    ASSERT_TRUE(silent.back()->connected());
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  auto owner = call(node, {{"op", "stop"}});
  ASSERT_TRUE(owner.ok()) << owner.status().message();
  EXPECT_EQ((*owner)["echo"], "stop");
  json evicted = silent.front()->reply();
  EXPECT_EQ(evicted["code"], "too_many_connections");
  EXPECT_EQ(evicted["error"], "connection closed: node '" + node + "' has 4 connections and this one was idle longest");
}

// A connection that says nothing is closed after the idle timeout; a blank line gets a reply.
TEST(Control, IdleConnectionsAreClosedAndBlankLinesAnswered) {
  std::string node = unique_node();
  Server s(node, {}, 16u << 20, 64, std::chrono::milliseconds(200));
  ASSERT_TRUE(s.server);
  Raw blank(socket_path(node));
  blank.send("\n");
  EXPECT_EQ(blank.reply()["error"], "malformed request: empty line (expected one JSON object per line)");
  Raw idle(socket_path(node));
  ASSERT_TRUE(idle.connected());
  auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(idle.line(), "");  // EOF: the server closed it
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(3));
  EXPECT_TRUE(call(node, {{"op", "status"}}).ok());
}

TEST(Control, OversizedRequestIsRefusedAndTheConnectionResyncs) {
  std::string node = unique_node();
  Server s(node, {}, 1024);
  ASSERT_TRUE(s.server);
  Raw raw(socket_path(node));
  raw.send(std::string(3000, 'x'));
  json r = raw.reply();
  EXPECT_EQ(r["code"], "request_too_large");
  EXPECT_EQ(r["error"], "request too large: more than 1024 bytes without a newline");
  raw.send(std::string(3000, 'y') + "\n{\"op\": \"status\"}\n");
  EXPECT_EQ(raw.reply()["echo"], "status");
  raw.send("{\"op\": \"set\", \"pad\": \"" + std::string(2000, 'z') + "\"}\n{\"op\": \"list_jobs\"}\n");
  EXPECT_EQ(raw.reply()["code"], "request_too_large");
  EXPECT_EQ(raw.reply()["echo"], "list_jobs");
}

TEST(Control, PipelinedRequestsAreAnsweredInOrder) {
  std::string node = unique_node();
  Server s(node);
  ASSERT_TRUE(s.server);
  Raw raw(socket_path(node));
  std::string batch;
  for (int i = 0; i < 200; ++i) batch += "{\"op\": \"status\", \"id\": " + std::to_string(i) + "}\n";
  raw.send(batch);
  for (int i = 0; i < 200; ++i) EXPECT_EQ(raw.reply()["id"], i);
}

TEST(Control, HandlerExceptionBecomesAnErrorReply) {
  std::string node = unique_node();
  Server s(node);
  ASSERT_TRUE(s.server);
  auto r = call(node, {{"op", "boom"}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)["ok"], false);
  EXPECT_EQ((*r)["code"], "internal");
  EXPECT_EQ((*r)["error"], "internal error handling 'boom': kaboom");
  EXPECT_TRUE(call(node, {{"op", "status"}}).ok());
}

TEST(Control, UnprivilegedUserCannotMutateButCanRead) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to switch a child to uid 65534 (running as uid " << ::geteuid() << ")";
  std::string node = unique_node();
  Server s(node, {AccessScope::kGroup, kNobody});
  ASSERT_TRUE(s.server);
  Child mutate({"control-as", std::to_string(kNobody), node, socket_path(node), R"({"op":"stop"})"});
  std::string line = mutate.read_line();
  EXPECT_EQ(mutate.wait(), 0) << line;
  json denied = json::parse(line);
  EXPECT_EQ(denied["ok"], false);
  EXPECT_EQ(denied["error"], "permission denied: uid 65534 may not stop");
  EXPECT_EQ(denied["code"], "permission_denied");
  EXPECT_EQ(s.calls.load(), 0) << "a refused request must not reach the handler";
  Child read({"control-as", std::to_string(kNobody), node, socket_path(node), R"({"op":"status"})"});
  line = read.read_line();
  EXPECT_EQ(read.wait(), 0) << line;
  json ok = json::parse(line);
  EXPECT_EQ(ok["ok"], true);
  EXPECT_EQ(ok["peer_uid"], kNobody);
  EXPECT_EQ(s.calls.load(), 1);
}

TEST(Control, OwnerOnlySocketRefusesOtherUsers) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to switch a child to uid 65534 (running as uid " << ::geteuid() << ")";
  std::string node = unique_node();
  Server s(node, {AccessScope::kOwner});
  ASSERT_TRUE(s.server);
  Child c({"control-as", std::to_string(kNobody), node, socket_path(node), R"({"op":"status"})"});
  std::string line = c.read_line();
  EXPECT_EQ(c.wait(), 2) << line;
  EXPECT_EQ(line, "error: permission denied connecting to the control socket " + socket_path(node) +
                      " of node '" + node + "'");
}

TEST(Control, SocketPermissionsFollowTheAccessScope) {
  struct Case {
    AccessScope scope;
    mode_t mode;
  };
  for (Case c : {Case{AccessScope::kOwner, 0600}, Case{AccessScope::kGroup, 0660}, Case{AccessScope::kAll, 0666}}) {
    std::string node = unique_node(std::to_string(c.mode));
    Server s(node, {c.scope});
    ASSERT_TRUE(s.server);
    struct stat st{};
    ASSERT_EQ(::stat(socket_path(node).c_str(), &st), 0);
    EXPECT_TRUE(S_ISSOCK(st.st_mode));
    EXPECT_EQ(st.st_mode & 0777, c.mode);
  }
}

TEST(Control, NoDaemonIsUnavailable) {
  std::string node = unique_node();
  auto r = call(node, {{"op", "status"}});
  EXPECT_EQ(r.status().code(), Code::kUnavailable);
  EXPECT_EQ(r.status().message(),
            "no npukit node '" + node + "' is running (start one with: npu-emud start --node-name " + node + ")");
}

TEST(Control, LeftoverSocketIsReplacedLiveOneRefused) {
  std::string node = unique_node();
  {  // a socket file nobody listens on, as a SIGKILLed daemon leaves behind
    int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::snprintf(a.sun_path, sizeof a.sun_path, "%s", socket_path(node).c_str());
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    ::close(fd);
  }
  Server s(node);
  ASSERT_TRUE(s.server);
  EXPECT_TRUE(call(node, {{"op", "ping"}}).ok());
  ControlServerOptions o;
  o.node = node;
  o.path = socket_path(node);
  auto second = ControlServer::start(o, nullptr);
  EXPECT_EQ(second.status().code(), Code::kFailedPrecondition);
  EXPECT_EQ(second.status().message(),
            "node '" + node + "' is already running: its control socket " + socket_path(node) + " answers");
}

// A leftover socket file nobody listens on, as a SIGKILLed daemon leaves behind.
void leave_dead_socket(const std::string& path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::snprintf(a.sun_path, sizeof a.sun_path, "%s", path.c_str());
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ::close(fd);
}

Result<std::unique_ptr<ControlServer>> start_at(const std::string& node) {
  ControlServerOptions o;
  o.node = node;
  o.path = socket_path(node);
  return ControlServer::start(o, nullptr);
}

TEST(Control, ASymlinkOrFileAtTheSocketPathIsRefusedAndLeftAlone) {
  std::string node = unique_node();
  const std::string path = socket_path(node), victim = "/tmp/npukit-victim-" + node;
  std::FILE* f = std::fopen(victim.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fputs("precious", f);
  std::fclose(f);
  ASSERT_EQ(::symlink(victim.c_str(), path.c_str()), 0);
  auto s = start_at(node);
  EXPECT_EQ(s.status().code(), Code::kPermissionDenied);
  EXPECT_EQ(s.status().message(), "control socket path " + path +
                                      " exists and is not a socket (a symlink): refusing to replace it (remove it, or set "
                                      "$XDG_RUNTIME_DIR)");
  struct stat st {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode)) << "the symlink was replaced";
  EXPECT_EQ(::stat(victim.c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 8) << "the symlink's target was touched";
  ::unlink(path.c_str());
  ::unlink(victim.c_str());
}

TEST(Control, AnotherUsersSocketAtThePathIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to give the socket to another user";
  std::string node = unique_node();
  const std::string path = socket_path(node);
  leave_dead_socket(path);
  ASSERT_EQ(::chown(path.c_str(), kNobody, kNobody), 0);
  auto s = start_at(node);
  EXPECT_EQ(s.status().code(), Code::kPermissionDenied);
  EXPECT_EQ(s.status().message(), "control socket path " + path + " belongs to uid 65534, not this user (uid 0): refusing to replace it");
  ::unlink(path.c_str());
  leave_dead_socket(path);  // the same leftover, this user's own: replaced
  EXPECT_TRUE(start_at(node).ok());
}

TEST(Control, StopClosesConnectionsAndRemovesTheSocket) {
  std::string node = unique_node();
  Server s(node);
  ASSERT_TRUE(s.server);
  auto client = ControlClient::connect(node, socket_path(node), std::chrono::seconds(5));
  ASSERT_TRUE(client.ok());
  ASSERT_TRUE((*client)->call({{"op", "ping"}}).ok());
  s.server->stop();
  auto after = (*client)->call({{"op", "ping"}});
  EXPECT_EQ(after.status().code(), Code::kUnavailable);
  struct stat st{};
  EXPECT_NE(::stat(socket_path(node).c_str(), &st), 0) << "socket file left behind";
  s.server.reset();  // stop() twice is fine
}

TEST(Control, ClientTimesOutOnASilentPeer) {
  std::string node = unique_node();
  ControlServerOptions o;
  o.node = node;
  o.path = socket_path(node);
  auto srv = ControlServer::start(o, [](const Request&) -> json {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    return {};
  });
  ASSERT_TRUE(srv.ok());
  auto c = ControlClient::connect(node, socket_path(node), std::chrono::milliseconds(50));
  ASSERT_TRUE(c.ok());
  auto r = (*c)->call({{"op", "stop"}});
  EXPECT_EQ(r.status().code(), Code::kUnavailable);
  EXPECT_EQ(r.status().message(), "node '" + node + "' did not reply within 50 ms");
}

TEST(Control, ReadOnlyOpsAreTheDocumentedOnes) {
  std::vector<std::string_view> ops(read_only_ops().begin(), read_only_ops().end());
  EXPECT_EQ(ops, (std::vector<std::string_view>{"ping", "status", "reference", "list_jobs", "job_status"}));
  EXPECT_FALSE(is_read_only_op("stop"));
  EXPECT_FALSE(is_read_only_op("submit"));
}

}  // namespace
}  // namespace npukit::telemetry
