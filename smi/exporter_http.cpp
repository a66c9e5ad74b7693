// The HTTP side of npu-exporter: a minimal HTTP/1.1 server (exporter_server.hpp).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ostream>
#include <thread>

#include "smi/exporter_server.hpp"
#include "smi/exporter_text.hpp"

namespace npukit::smi::exporter {

namespace {

constexpr std::size_t kMaxRequestBytes = 16 * 1024;

// A listening socket on host:port (port 0: any); -1 with `error` set on failure.
int listen_on(const std::string& host, int port, int& bound_port, std::string& error) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (inet_pton(AF_INET, host == "localhost" ? "127.0.0.1" : host.c_str(), &addr.sin_addr) != 1) {
    error = "'" + host + "' is not an IPv4 address";
    return -1;
  }
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || ::listen(fd, 128) != 0) {
    error = std::string(std::strerror(errno));
    if (fd >= 0) ::close(fd);
    return -1;
  }
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  bound_port = ntohs(addr.sin_port);
  return fd;
}

// Reads the request head; false when the peer sent none (closed, timed out, too long).
bool read_head(int fd, std::string& head) {
  char buf[4096];
  while (head.find("\r\n\r\n") == std::string::npos) {
    ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0 || head.size() + static_cast<std::size_t>(n) > kMaxRequestBytes) return false;
    head.append(buf, static_cast<std::size_t>(n));
  }
  return true;
}

void send_all(int fd, const std::string& data) {
  std::size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return;
    off += static_cast<std::size_t>(n);
  }
}

std::string response(const char* status, std::string_view type, const std::string& body, bool head_only) {
  std::string out = std::string("HTTP/1.1 ") + status + "\r\nContent-Type: " + std::string(type) +
                    "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n";
  if (!head_only) out += body;
  return out;
}

void serve_connection(int fd, Exporter& exporter) {
  timeval timeout{2, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  std::string head;
  if (!read_head(fd, head)) return;
  std::string line = head.substr(0, head.find("\r\n"));
  std::size_t sp1 = line.find(' '), sp2 = line.find(' ', sp1 + 1);
  std::string method = line.substr(0, sp1);
  std::string target = sp1 == std::string::npos ? "" : line.substr(sp1 + 1, sp2 - sp1 - 1);
  std::string path = target.substr(0, target.find('?'));
  bool head_only = method == "HEAD";
  if (method != "GET" && !head_only) {
    send_all(fd, response("405 Method Not Allowed", "text/plain", "only GET and HEAD\n", false));
  } else if (path == "/metrics") {
    send_all(fd, response("200 OK", kContentType, exporter.scrape(), head_only));
  } else if (path == "/") {
    send_all(fd, response("200 OK", "text/html", "<html><body><h1>npu-exporter</h1><a href=\"/metrics\">/metrics</a></body></html>\n", head_only));
  } else {
    send_all(fd, response("404 Not Found", "text/plain", "not found: " + path + " (try /metrics)\n", head_only));
  }
}

}  // namespace

int run_exporter(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  ExporterOptions o;
  bool help = false;
  std::string error;
  if (!parse_exporter_args(argc, argv, o, help, error)) {
    err << "npu-exporter: " << error << " (see npu-exporter -h)\n";
    return kExitBadArguments;
  }
  if (help) {
    out << exporter_help();
    return 0;
  }
  int port = 0;
  int fd = listen_on(o.host, o.port, port, error);
  if (fd < 0) {
    err << "npu-exporter: cannot listen on " << o.host << ":" << o.port << ": " << error << "\n";
    return kExitListenFailed;
  }
  std::string node = o.node;
  Exporter exporter(node, [node] { return telemetry::ShmClient::open({.node = node}); });
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  std::atomic<bool> stopping{false};
  std::thread waiter([fd, stop_signals, &stopping] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    stopping = true;
    ::shutdown(fd, SHUT_RDWR);  // wakes accept()
  });
  out << "npu-exporter: listening on http://" << o.host << ":" << port << "/metrics (node " << node << ")" << std::endl;
  while (!stopping) {
    int conn = ::accept4(fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (conn < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (!stopping) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      continue;
    }
    serve_connection(conn, exporter);
    ::close(conn);
  }
  waiter.join();
  ::close(fd);
  return 0;
}

}  // namespace npukit::smi::exporter
