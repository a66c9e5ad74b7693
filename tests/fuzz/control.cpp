// Fuzz target: control-socket requests, as anyone who can reach a node's socket sends them. A
// real daemon (npu-emud's Daemon, 8x910B2, paced) runs in this process; each input line goes over
// the socket as one request and must get exactly one reply line within 5 s, whatever it holds.
// A `stop` ends the daemon; the next input starts a new one. Jobs an input submitted are
// cancelled afterwards so they do not pile up.
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <cerrno>
#include <cstdio>
#include <deque>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "tests/fuzz/fuzz_daemon.hpp"
#include "tests/fuzz/fuzz_util.hpp"

namespace {

using nlohmann::json;

std::unique_ptr<npukit::fuzz::RunningDaemon> start_daemon() {
  return std::make_unique<npukit::fuzz::RunningDaemon>("fz-ctl-" + std::to_string(::getpid()));
}

int connect_to(const std::string& path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::snprintf(a.sun_path, sizeof(a.sun_path), "%s", path.c_str());
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    std::fprintf(stderr, "control fuzz: cannot connect to %s\n", path.c_str());
    std::abort();
  }
  return fd;
}

// The inputs run before this one (a stall can be left behind by an earlier input's job): printed
// when the daemon stops answering, so the sequence can be replayed.
std::deque<std::string> g_recent;

void print_recent_inputs() {
  std::fprintf(stderr, "control fuzz: the %zu inputs before it, oldest first:\n", g_recent.size());
  for (const auto& in : g_recent) std::fprintf(stderr, "  %s\n", nlohmann::json(in).dump(-1, ' ', true, nlohmann::json::error_handler_t::replace).c_str());
}

std::string node_thread_activity();

// Sends one line and returns its reply line; aborts (a finding) when none comes within 5 s.
std::string call(int fd, std::string_view line, std::string& pending) {
  std::string out(line);
  out += '\n';
  if (::send(fd, out.data(), out.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(out.size())) return "";
  const auto sent = std::chrono::steady_clock::now();
  const auto deadline = sent + std::chrono::seconds(5);
  for (;;) {
    if (auto nl = pending.find('\n'); nl != std::string::npos) {
      std::string reply = pending.substr(0, nl);
      pending.erase(0, nl + 1);
      return reply;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd p{fd, POLLIN, 0};
    int ready = left.count() <= 0 ? 0 : ::poll(&p, 1, static_cast<int>(left.count()));
    // libFuzzer's timers (-timeout, the RSS watch) interrupt the poll: that is no timeout. Taking
    // EINTR for one was this target's "stall" (the reply sat unread in the socket).
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) {
      std::fprintf(stderr, "control fuzz: no reply within 5 s (%.3f s waited) to: %.200s\n",
                   std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count(), std::string(line).c_str());
      std::fprintf(stderr, "control fuzz: the daemon's threads: %s\n", node_thread_activity().c_str());
      struct stat st{};
      std::fprintf(stderr, "control fuzz: this client's fd %d, socket inode %llu; this process's Unix sockets:\n", fd,
                   ::fstat(fd, &st) == 0 ? static_cast<unsigned long long>(st.st_ino) : 0ull);
      std::fflush(stderr);
      std::string ss = "ss -xpn 2>/dev/null | grep 'pid=" + std::to_string(::getpid()) + ",' >&2";
      (void)!std::system(ss.c_str());
      print_recent_inputs();
      std::abort();
    }
    char buf[65536];
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return "";  // the daemon closed the connection (it is stopping)
    pending.append(buf, static_cast<std::size_t>(n));
  }
}

void expect_reply_object(const std::string& reply, std::string_view request) {
  json j = json::parse(reply, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("ok") || !j["ok"].is_boolean()) {
    std::fprintf(stderr, "control fuzz: reply without a boolean ok: %.200s\n  to: %.200s\n", reply.c_str(),
                 std::string(request).c_str());
    std::abort();
  }
}

void cancel_running_jobs(int fd, std::string& pending) {
  json list = json::parse(call(fd, R"({"op":"list_jobs"})", pending), nullptr, false);
  if (!list.is_object() || !list.contains("jobs") || !list["jobs"].is_array()) return;
  for (const auto& job : list["jobs"]) {
    if (job.value("state", "") == "running") {
      call(fd, json{{"op", "cancel"}, {"job", job.value("id", 0)}}.dump(), pending);
    }
  }
}

std::unique_ptr<npukit::fuzz::RunningDaemon> g_daemon;

// What the daemon was doing when it did not answer (its node thread serves requests between
// simulation slices and publishes): the stall's report names the phase and how long it lasted.
std::string node_thread_activity() { return g_daemon ? g_daemon->daemon().activity() : "no daemon"; }

// After a `stop` was answered: the daemon must end within 10 s.
void wait_until_ended() {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!g_daemon->ended() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  if (!g_daemon->ended()) {
    std::fprintf(stderr, "control fuzz: the daemon answered stop but did not end within 10 s\n");
    std::abort();
  }
  g_daemon.reset();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  if (!g_daemon) g_daemon = start_daemon();
  int fd = connect_to(g_daemon->daemon().socket_path());
  std::string pending;
  std::string_view input = npukit::fuzz::as_text(data, size);
  bool submitted = input.find("submit") != std::string_view::npos;
  bool stopping = false;
  for (int lines = 0; !input.empty() && lines < 32 && !stopping; ++lines) {
    auto nl = input.find('\n');
    std::string_view line = input.substr(0, nl);
    input = nl == std::string_view::npos ? std::string_view() : input.substr(nl + 1);
    std::string reply = call(fd, line, pending);
    if (reply.empty()) {
      stopping = true;  // the daemon closed the connection: it must be ending
      break;
    }
    expect_reply_object(reply, line);
    stopping = json::parse(reply, nullptr, false).value("stopping", false);
  }
  if (submitted && !stopping) cancel_running_jobs(fd, pending);
  ::close(fd);
  if (stopping) wait_until_ended();
  g_recent.emplace_back(npukit::fuzz::as_text(data, size));
  if (g_recent.size() > 16) g_recent.pop_front();
  return 0;
}
