// The control channel's transport: the socket server's poll loop and the client.
#include "telemetry/control.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <list>

#include "telemetry/naming.hpp"

namespace npukit::telemetry {

namespace {

constexpr std::size_t kMaxPendingOutput = 256u << 20;  // a peer that never reads is dropped

std::string errno_text() { return std::strerror(errno); }

Result<sockaddr_un> unix_address(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) {
    return InvalidArgument("control socket path '" + path + "' is longer than " +
                           std::to_string(sizeof addr.sun_path - 1) + " bytes");
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  return addr;
}

// 0 connected, else the errno of connect().
int try_connect(int fd, const sockaddr_un& addr) {
  return ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0 ? 0 : errno;
}

bool someone_listens(const sockaddr_un& addr) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  bool live = fd >= 0 && try_connect(fd, addr) == 0;
  if (fd >= 0) ::close(fd);
  return live;
}

mode_t socket_mode(AccessScope scope) {
  switch (scope) {
    case AccessScope::kOwner: return 0600;
    case AccessScope::kGroup: return 0660;
    case AccessScope::kAll: return 0666;
  }
  return 0600;
}

// A name the server may take over: absent, or a socket of this user (a killed daemon's). Anything
// else there (another user's file, a symlink, a directory) is refused and left alone, so a name
// placed in a shared directory like /tmp can never redirect or clobber anything.
Status may_replace(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return Status::Ok();  // absent
  if (!S_ISSOCK(st.st_mode)) {
    return Status(Code::kPermissionDenied, "control socket path " + path + " exists and is not a socket" +
                                               (S_ISLNK(st.st_mode) ? " (a symlink)" : "") +
                                               ": refusing to replace it (remove it, or set $XDG_RUNTIME_DIR)");
  }
  if (st.st_uid != ::geteuid()) {
    return Status(Code::kPermissionDenied, "control socket path " + path + " belongs to uid " +
                                               std::to_string(st.st_uid) + ", not this user (uid " +
                                               std::to_string(::geteuid()) + "): refusing to replace it");
  }
  return Status::Ok();
}

// Binds under a temporary name, sets mode and group, renames into place.
Result<int> bind_socket(const std::string& path, const Access& access) {
  auto final_addr = unix_address(path);
  if (!final_addr.ok()) return final_addr.status();
  const std::string tmp = path + ".tmp" + std::to_string(::getpid());
  auto tmp_addr = unix_address(tmp);
  if (!tmp_addr.ok()) return tmp_addr.status();
  NPUKIT_RETURN_IF_ERROR(may_replace(path));
  NPUKIT_RETURN_IF_ERROR(may_replace(tmp));
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return Status(Code::kInternal, "cannot create a Unix socket: " + errno_text());
  ::unlink(tmp.c_str());
  auto fail = [&](const std::string& what) {
    Status s(Code::kFailedPrecondition, what + " " + tmp + ": " + errno_text());
    ::close(fd);
    ::unlink(tmp.c_str());
    return s;
  };
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&*tmp_addr), sizeof *tmp_addr) != 0) {
    return fail("cannot bind control socket");
  }
  if (access.scope == AccessScope::kGroup && access.group != static_cast<gid_t>(-1) &&
      ::chown(tmp.c_str(), static_cast<uid_t>(-1), access.group) != 0) {
    return fail("cannot give group " + std::to_string(access.group) + " to control socket");
  }
  if (::chmod(tmp.c_str(), socket_mode(access.scope)) != 0) return fail("cannot chmod control socket");
  if (::listen(fd, 64) != 0) return fail("cannot listen on control socket");
  if (::rename(tmp.c_str(), path.c_str()) != 0) return fail("cannot move control socket to " + path + " from");
  return fd;
}

uint64_t now_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch()).count());
}

struct Conn {
  int fd = -1;
  Peer peer;
  uint64_t last_active_ns = 0;  // last byte in or out
  std::string in;
  std::string out;
  bool discarding = false;  // inside a too-long line: drop bytes up to its newline
  bool eof = false;
  bool broken = false;
  uint64_t lines = 0;     // complete lines read
  uint64_t replies = 0;   // reply lines queued
  uint64_t bytes_in = 0;  // read in all
  uint64_t wakeups = 0;   // rounds in which poll said it was readable
  uint64_t invalid = 0;   // rounds in which poll said the fd was not open (POLLNVAL)
  ino_t inode = 0;        // the accepted socket's, to match against a client's peer in a report
};

// One connection as activity() reports it.
std::string describe(const Conn& c) {
  return "fd " + std::to_string(c.fd) + " (pid " + std::to_string(c.peer.pid) + "): " + std::to_string(c.lines) +
         " lines, " + std::to_string(c.replies) + " replies, " + std::to_string(c.bytes_in) + " B read in " +
         std::to_string(c.wakeups) + " wake-ups, " + std::to_string(c.in.size()) + " B unread, " +
         std::to_string(c.out.size()) + " B unsent, socket inode " + std::to_string(c.inode) +
         (c.invalid ? ", POLLNVAL " + std::to_string(c.invalid) + " times" : "") + (c.eof ? ", input ended" : "") +
         (c.discarding ? ", discarding" : "");
}

std::string too_large(std::size_t max) {
  return to_line(error_reply("request too large: more than " + std::to_string(max) +
                                 " bytes without a newline", "request_too_large")) + "\n";
}

// Answers every complete line in conn.in; starts discarding a line that grows past `max`.
void process_input(Conn& c, const ControlDispatcher& d, std::size_t max) {
  std::size_t start = 0;
  for (std::size_t nl; (nl = c.in.find('\n', start)) != std::string::npos; start = nl + 1) {
    std::string_view line(c.in.data() + start, nl - start);
    ++c.lines;
    if (c.discarding) {
      c.discarding = false;
      continue;
    }
    ++c.replies;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.size() > max) {
      c.out += too_large(max);
    } else if (line.empty()) {  // every line gets its reply, so a client never waits on one
      c.out += to_line(error_reply("malformed request: empty line (expected one JSON object per line)", "malformed_request")) + "\n";
    } else {
      c.out += d.handle_line(line, c.peer) + "\n";
    }
  }
  c.in.erase(0, start);
  if (!c.discarding && c.in.size() > max) {
    ++c.replies;
    c.out += too_large(max);
    c.discarding = true;
  }
  if (c.discarding) c.in.clear();
}

void read_input(Conn& c, const ControlDispatcher& d, std::size_t max) {
  char buf[65536];
  for (int i = 0; i < 64; ++i) {  // bounded, so one busy peer cannot starve the others
    ssize_t n = ::read(c.fd, buf, sizeof buf);
    if (n > 0) {
      c.last_active_ns = now_ns();
      c.bytes_in += static_cast<uint64_t>(n);
      c.in.append(buf, static_cast<std::size_t>(n));
      process_input(c, d, max);
      continue;
    }
    if (n == 0) {
      c.eof = true;
      if (!c.discarding && !c.in.empty()) {  // a last request without its newline
        c.in += '\n';
        process_input(c, d, max);
      }
    } else if (errno != EAGAIN && errno != EINTR) {
      c.broken = true;
    }
    return;
  }
}

void flush_output(Conn& c) {
  while (!c.out.empty()) {
    ssize_t n = ::send(c.fd, c.out.data(), c.out.size(), MSG_NOSIGNAL);
    if (n > 0) {
      c.last_active_ns = now_ns();
      c.out.erase(0, static_cast<std::size_t>(n));
    } else {
      if (n < 0 && errno != EAGAIN && errno != EINTR) c.broken = true;
      return;
    }
  }
  if (c.out.capacity() > kMaxPendingOutput) c.out.shrink_to_fit();
}

Conn accept_conn(int listen_fd) {
  Conn c;
  c.fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (c.fd < 0) return c;
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(c.fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
    ::close(c.fd);
    c.fd = -1;
    return c;
  }
  c.peer = {cred.pid, cred.uid, cred.gid};
  c.last_active_ns = now_ns();
  struct stat st{};
  if (::fstat(c.fd, &st) == 0) c.inode = st.st_ino;
  return c;
}

// The connection idle longest, another user's before the owner's; end() when none.
std::list<Conn>::iterator longest_idle(std::list<Conn>& conns, uid_t owner) {
  auto best = conns.end();
  for (auto it = conns.begin(); it != conns.end(); ++it) {
    auto rank = [&](const Conn& c) { return std::pair{c.peer.uid == owner || c.peer.uid == 0, c.last_active_ns}; };
    if (best == conns.end() || rank(*it) < rank(*best)) best = it;
  }
  return best;
}

}  // namespace

Result<std::unique_ptr<ControlServer>> ControlServer::start(const ControlServerOptions& options,
                                                            ControlHandler handler) {
  NPUKIT_RETURN_IF_ERROR(validate_node_name(options.node));
  std::unique_ptr<ControlServer> s(new ControlServer());
  s->options_ = options;
  s->path_ = options.path.empty() ? control_socket_path(options.node) : options.path;
  auto addr = unix_address(s->path_);
  if (!addr.ok()) return addr.status();
  if (someone_listens(*addr)) {
    return Status(Code::kFailedPrecondition, "node '" + options.node + "' is already running: its control socket " +
                                                 s->path_ + " answers");
  }
  auto fd = bind_socket(s->path_, options.access);
  if (!fd.ok()) return fd.status();
  s->listen_fd_ = *fd;
  struct stat st{};
  if (::stat(s->path_.c_str(), &st) == 0) s->socket_ino_ = st.st_ino;
  s->wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (s->wake_fd_ < 0) return Status(Code::kInternal, "cannot create an eventfd: " + errno_text());
  s->dispatcher_ = std::make_unique<ControlDispatcher>(std::move(handler), ::geteuid());
  s->thread_ = std::thread([srv = s.get()] { srv->run(); });
  return s;
}

void ControlServer::run() {
  std::list<Conn> conns;
  std::vector<pollfd> fds;
  for (;;) {
    fds.assign({{wake_fd_, POLLIN, 0}, {listen_fd_, POLLIN, 0}});
    for (const Conn& c : conns) {
      short ev = static_cast<short>((c.eof ? 0 : POLLIN) | (c.out.empty() ? 0 : POLLOUT));
      fds.push_back({c.fd, ev, 0});
    }
    // Wake at least every second to close idle connections.
    clock_.enter("polling");
    if (::poll(fds.data(), fds.size(), 1000) < 0 && errno != EINTR) break;
    if (fds[0].revents != 0) break;
    if ((fds[1].revents & POLLIN) != 0) {
      clock_.enter("accepting");
      Conn c = accept_conn(listen_fd_);
      if (c.fd >= 0 && conns.size() >= options_.max_connections) {
        auto victim = longest_idle(conns, dispatcher_->owner());
        victim->out = to_line(error_reply("connection closed: node '" + options_.node + "' has " +
                                          std::to_string(options_.max_connections) +
                                          " connections and this one was idle longest", "too_many_connections")) + "\n";
        flush_output(*victim);
        ::close(victim->fd);
        conns.erase(victim);
        fds.resize(2);  // the poll results no longer line up with the connections: read them next round
      }
      if (c.fd >= 0) conns.push_back(std::move(c));
    }
    const uint64_t now = now_ns();
    const auto idle_ns = static_cast<uint64_t>(std::chrono::nanoseconds(options_.idle_timeout).count());
    std::size_t i = 2;
    for (auto it = conns.begin(); it != conns.end(); ++i) {
      Conn& c = *it;
      short re = i < fds.size() ? fds[i].revents : 0;
      if ((re & (POLLIN | POLLHUP)) != 0 && !c.eof) {
        clock_.enter("reading and handling requests");
        ++c.wakeups;
        read_input(c, *dispatcher_, options_.max_request_bytes);
      }
      if ((re & POLLERR) != 0) c.broken = true;
      if ((re & POLLNVAL) != 0) ++c.invalid;  // reported, not acted on: see the fuzz stall in RESULTS
      clock_.enter("flushing replies");
      flush_output(c);
      bool idle = now > c.last_active_ns && now - c.last_active_ns > idle_ns;
      bool done = c.broken || (c.eof && c.out.empty()) || c.out.size() > kMaxPendingOutput || idle;
      if (done) {
        ::close(c.fd);
        it = conns.erase(it);
      } else {
        ++it;
      }
    }
    std::string summary = std::to_string(conns.size()) + " connections";
    for (const Conn& c : conns) summary += "; " + describe(c);
    std::lock_guard lock(connections_mu_);
    connections_ = std::move(summary);
  }
  for (Conn& c : conns) ::close(c.fd);
}

std::string ControlServer::activity() const {
  std::lock_guard lock(connections_mu_);
  return clock_.describe() + "; " + connections_;
}

void ControlServer::stop() {
  if (!thread_.joinable()) return;
  uint64_t one = 1;
  ssize_t n = ::write(wake_fd_, &one, sizeof one);
  (void)n;
  thread_.join();
  struct stat st{};
  if (::stat(path_.c_str(), &st) == 0 && st.st_ino == socket_ino_) ::unlink(path_.c_str());
  ::close(listen_fd_);
  ::close(wake_fd_);
  listen_fd_ = wake_fd_ = -1;
}

ControlServer::~ControlServer() {
  stop();
  if (listen_fd_ >= 0) ::close(listen_fd_);
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

Result<std::unique_ptr<ControlClient>> ControlClient::connect(const std::string& node, const std::string& path,
                                                              std::chrono::milliseconds timeout) {
  auto addr = unix_address(path);
  if (!addr.ok()) return addr.status();
  std::unique_ptr<ControlClient> c(new ControlClient());
  c->node_ = node;
  c->path_ = path;
  c->timeout_ = timeout;
  c->fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (c->fd_ < 0) return Status(Code::kInternal, "cannot create a Unix socket: " + errno_text());
  int err = try_connect(c->fd_, *addr);
  if (err == ENOENT || err == ECONNREFUSED) return Status(Code::kUnavailable, no_daemon_message(node));
  if (err == EACCES || err == EPERM) {
    return Status(Code::kPermissionDenied, "permission denied connecting to the control socket " + path +
                                                 " of node '" + node + "'");
  }
  if (err != 0) {
    return Status(Code::kUnavailable, "cannot connect to the control socket " + path + " of node '" +
                                          node + "': " + std::strerror(err));
  }
  return c;
}

ControlClient::~ControlClient() {
  if (fd_ >= 0) ::close(fd_);
}

Status ControlClient::send_all(const std::string& data) {
  std::size_t sent = 0;
  while (sent < data.size()) {
    pollfd p{fd_, POLLOUT, 0};
    int ready = ::poll(&p, 1, static_cast<int>(timeout_.count()));
    if (ready < 0 && errno == EINTR) continue;  // a signal (npu-top's SIGWINCH) is no refusal
    if (ready <= 0) {
      return Status(Code::kUnavailable, "node '" + node_ + "' did not accept the request within " +
                                            std::to_string(timeout_.count()) + " ms");
    }
    ssize_t n = ::send(fd_, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno != EINTR && errno != EAGAIN) {
      return Status(Code::kUnavailable, "node '" + node_ + "' closed the control connection: " + errno_text());
    }
    if (n > 0) sent += static_cast<std::size_t>(n);
  }
  return Status::Ok();
}

Result<std::string> ControlClient::read_line() {
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  for (;;) {
    if (auto nl = pending_.find('\n'); nl != std::string::npos) {
      std::string line = pending_.substr(0, nl);
      pending_.erase(0, nl + 1);
      return line;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd p{fd_, POLLIN, 0};
    if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) == 0) {
      return Status(Code::kUnavailable, "node '" + node_ + "' did not reply within " +
                                            std::to_string(timeout_.count()) + " ms");
    }
    char buf[65536];
    ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
      return Status(Code::kUnavailable, "node '" + node_ + "' closed the control connection");
    }
    if (n > 0) pending_.append(buf, static_cast<std::size_t>(n));
  }
}

Result<nlohmann::json> ControlClient::call(const nlohmann::json& request) {
  NPUKIT_RETURN_IF_ERROR(send_all(to_line(request) + "\n"));
  auto line = read_line();
  if (!line.ok()) return line.status();
  auto reply = nlohmann::json::parse(*line, nullptr, false);
  if (reply.is_discarded() || !reply.is_object()) {
    return InternalError("node '" + node_ + "' sent a control reply that is not a JSON object: " +
                         line->substr(0, 200));
  }
  return reply;
}

}  // namespace npukit::telemetry
