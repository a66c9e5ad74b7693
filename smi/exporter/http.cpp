// The HTTP side of npu-exporter (server.hpp) on cpp-httplib's Server. Connections are
// served by a pool of workers, so a slow or silent client holds one worker for at most the
// timeouts below and never delays the other scrapes.
#include <arpa/inet.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ostream>
#include <thread>

#include <httplib.h>

#include "smi/exporter/server.hpp"
#include "smi/exporter/text.hpp"
#include "telemetry/exit_codes.hpp"
#include "telemetry/naming.hpp"
#include "telemetry/version.hpp"

namespace npukit::smi::exporter {

namespace {

using Handled = httplib::Server::HandlerResponse;

constexpr std::size_t kWorkers = 8;              // connections served at once; more wait queued
constexpr time_t kReadTimeoutSeconds = 2;        // for the request's first byte and for each read
constexpr time_t kWriteTimeoutSeconds = 5;       // for each write of the reply
constexpr std::size_t kMaxBodyBytes = 16 * 1024;  // no route takes a body

// Timeouts, one request per connection ("Connection: close", as Prometheus scrapes without
// keep-alive and a kept-alive idle connection would hold a worker), and the worker pool.
void configure(httplib::Server& server) {
  server.new_task_queue = [] { return new httplib::ThreadPool(kWorkers); };
  server.set_keep_alive_max_count(1);
  // httplib waits this long for the first byte of every request, the first one included.
  server.set_keep_alive_timeout(kReadTimeoutSeconds);
  server.set_read_timeout(kReadTimeoutSeconds, 0);
  server.set_write_timeout(kWriteTimeoutSeconds, 0);
  server.set_payload_max_length(kMaxBodyBytes);
  server.set_tcp_nodelay(true);
  server.set_address_family(AF_INET);
  // SO_REUSEADDR only: httplib's default SO_REUSEPORT would let a second exporter bind a port
  // that is already served, and share it, instead of failing with "Address already in use".
  server.set_socket_options([](socket_t sock) {
    int one = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  });
}

void add_routes(httplib::Server& server, Exporter& exporter) {
  server.set_pre_routing_handler([](const httplib::Request& req, httplib::Response& res) {
    if (req.method == "GET" || req.method == "HEAD") return Handled::Unhandled;
    res.status = 405;
    res.set_header("Allow", "GET, HEAD");
    res.set_content("only GET and HEAD\n", "text/plain");
    return Handled::Handled;
  });
  // GET handlers serve HEAD too; httplib then sends the headers only.
  server.Get("/metrics", [&exporter](const httplib::Request&, httplib::Response& res) {
    res.body = exporter.scrape();
    res.set_header("Content-Type", std::string(kContentType));
  });
  server.Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("<html><body><h1>npu-exporter</h1><a href=\"/metrics\">/metrics</a></body></html>\n",
                    "text/html");
  });
  server.Get(".*", [](const httplib::Request& req, httplib::Response& res) {
    res.status = 404;
    res.set_content("not found: " + req.path + " (try /metrics)\n", "text/plain");
  });
}

// Binds `server` to host:port (port 0: any free one): the bound port, or -1 with `error` set.
int bind_server(httplib::Server& server, const std::string& host, int port, std::string& error) {
  std::optional<std::string> address = listen_address(host);
  if (!address) {
    error = "'" + host + "' is not an IPv4 address";
    return -1;
  }
  const std::string& ip = *address;
  // httplib reports only failure; errno is still bind()'s or listen()'s (close() keeps it).
  errno = 0;
  int bound = port == 0 ? server.bind_to_any_port(ip) : (server.bind_to_port(ip, port) ? port : -1);
  if (bound < 0) error = errno != 0 ? std::strerror(errno) : "bind failed";
  return bound;
}

// Stops `server` on SIGINT/SIGTERM. Construct it before the server starts its workers: the
// signals are blocked in the constructing thread and every thread created after it, so only
// the waiter's sigwait() receives them. Not copyable; the destructor joins the waiter.
class StopOnSignal {
 public:
  explicit StopOnSignal(httplib::Server& server) {
    sigemptyset(&signals_);
    sigaddset(&signals_, SIGINT);
    sigaddset(&signals_, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals_, nullptr);
    waiter_ = std::thread([this, &server] { wait(server); });
  }
  StopOnSignal(const StopOnSignal&) = delete;
  StopOnSignal& operator=(const StopOnSignal&) = delete;
  ~StopOnSignal() {
    done_ = true;
    if (!requested_) pthread_kill(waiter_.native_handle(), SIGTERM);  // wakes sigwait()
    waiter_.join();
  }
  bool requested() const { return requested_; }

 private:
  void wait(httplib::Server& server) {
    int sig = 0;
    sigwait(&signals_, &sig);
    if (done_) return;
    requested_ = true;
    // stop() is a no-op until listen_after_bind() runs; a signal may come just before it.
    while (!done_ && !server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (!done_) server.stop();
  }

  sigset_t signals_;
  std::atomic<bool> requested_{false};
  std::atomic<bool> done_{false};
  std::thread waiter_;
};

}  // namespace

int run_exporter(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  if (auto rc = cli::answer_meta_request(argc, argv, exporter_program, out)) return *rc;
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
  if (o.version) {
    out << telemetry::version_line("npu-exporter") << "\n";
    return 0;
  }
  std::string node = o.node;
  // A cluster's own name has no bus (each host has one): say which to name, as npu-smi does,
  // rather than serve npu_exporter_node_up 0 for a cluster that is up.
  if (telemetry::cluster_host_count(node) > 0) {
    err << "npu-exporter: " << telemetry::no_bus_message(node) << "\n";
    return exit_code::kNoNode;
  }
  Exporter exporter(node, [node] { return telemetry::ShmClient::open({.node = node}); });
  httplib::Server server;
  configure(server);
  int port = bind_server(server, o.host, o.port, error);
  if (port < 0) {
    err << "npu-exporter: cannot listen on " << o.host << ":" << o.port << ": " << error << "\n";
    return kExitListenFailed;
  }
  add_routes(server, exporter);
  StopOnSignal stop(server);
  out << "npu-exporter: listening on http://" << o.host << ":" << port << "/metrics (node " << node << ")" << std::endl;
  server.listen_after_bind();  // returns after stop(), or when accept() fails for good
  if (!stop.requested()) {
    err << "npu-exporter: stopped listening on " << o.host << ":" << port << ": accept failed\n";
    return kExitListenFailed;
  }
  return 0;
}

}  // namespace npukit::smi::exporter
