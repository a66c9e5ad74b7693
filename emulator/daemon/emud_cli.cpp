#include "emulator/daemon/emud_cli.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

#include <cstdio>
#include <thread>

#include "telemetry/client.hpp"
#include "telemetry/json_reader.hpp"
#include "telemetry/naming.hpp"

namespace npukit::emu::emud {

namespace tf = telemetry;
using nlohmann::json;

namespace {

void say(const std::string& line) { std::fprintf(stdout, "npu-emud: %s\n", line.c_str()); }
void complain(const std::string& line) { std::fprintf(stderr, "npu-emud: %s\n", line.c_str()); }

Result<json> call(const std::string& node, const json& request, std::chrono::milliseconds timeout) {
  auto client = tf::ControlClient::connect(node, tf::control_socket_path(node), timeout);
  if (!client.ok()) return client.status();
  return (*client)->call(request);
}

// No node (or a stale one) is 1; another user's node that does not let us in is 4.
int exit_for_status(const Status& s) { return s.code() == Code::kPermissionDenied ? kExitPermission : kExitNoNode; }

int exit_for_reply(const json& reply) {
  if (reply.value("ok", false)) return kExitOk;
  return reply.value("code", std::string()) == "permission_denied" ? kExitPermission : kExitFailed;
}

// Blocks SIGINT/SIGTERM/SIGHUP in every thread and turns them into request_stop().
class StopOnSignals {
 public:
  explicit StopOnSignals(Daemon& daemon) {
    sigset_t set = signals();
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    thread_ = std::thread([&daemon, set] {
      int sig = 0;
      while (sigwait(&set, &sig) == 0) {
        daemon.request_stop();
        if (sig == SIGUSR2) return;  // our own wake-up at shutdown
      }
    });
  }
  ~StopOnSignals() {
    pthread_kill(thread_.native_handle(), SIGUSR2);
    thread_.join();
  }
  static sigset_t signals() {
    sigset_t set;
    sigemptyset(&set);
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGUSR2}) sigaddset(&set, s);
    return set;
  }

 private:
  std::thread thread_;
};

std::string ready_line(const Daemon& d, const std::string& node) {
  return "node '" + node + "' (" + d.node().spec().name + ", " + std::to_string(d.node().device_count()) +
         " devices) is ready, pid " + std::to_string(getpid());
}

int serve(std::unique_ptr<Daemon> daemon) {
  StopOnSignals signals(*daemon);
  daemon->run();
  return kExitOk;
}

}  // namespace

namespace {

int start_in_foreground(const DaemonOptions& options) {
  auto d = Daemon::create(options);
  if (!d.ok()) {
    complain(d.status().message());
    return kExitFailed;
  }
  say(ready_line(**d, options.node_name));
  std::fflush(stdout);
  return serve(std::move(*d));
}

// The node's log for appending: created 0600, never opened through a symlink and never another
// user's file (it lives in /tmp when $XDG_RUNTIME_DIR is unset). -1 when it cannot be used.
int open_log(const std::string& path) {
  int fd = open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  struct stat st {};
  if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid())) {
    close(fd);
    return -1;
  }
  return fd;
}

// The forked daemon: a session of its own, stdin from /dev/null, stdout and stderr to the node's
// log beside its socket. Tells the parent "R<ready line>" or "E<error>" through `ready_fd`.
[[noreturn]] void become_daemon(const DaemonOptions& options, int ready_fd) {
  setsid();
  std::string log = tf::control_socket_path(options.node_name);
  log = log.substr(0, log.size() - 5) + ".log";
  int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
  int log_fd = open_log(log);
  if (null_fd >= 0) dup2(null_fd, 0);
  if (int out = log_fd >= 0 ? log_fd : null_fd; out >= 0) {
    dup2(out, 1);
    dup2(out, 2);
  }
  auto d = Daemon::create(options);
  std::string msg = d.ok() ? "R" + ready_line(**d, options.node_name) : "E" + d.status().message();
  (void)!write(ready_fd, msg.data(), msg.size());
  close(ready_fd);
  if (!d.ok()) _exit(kExitFailed);
  int rc = serve(std::move(*d));  // not inside _exit(): the daemon must be destroyed first
  _exit(rc);
}

// Forks the daemon and returns once it is ready (or has failed to start).
int start_in_background(const DaemonOptions& options) {
  int fds[2];
  if (pipe(fds) != 0) {
    complain("cannot create a pipe");
    return kExitFailed;
  }
  pid_t child = fork();
  if (child < 0) {
    complain("cannot fork");
    return kExitFailed;
  }
  if (child == 0) {
    close(fds[0]);
    become_daemon(options, fds[1]);
  }
  close(fds[1]);
  std::string msg;
  char buf[512];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) msg.append(buf, static_cast<std::size_t>(n));
  close(fds[0]);
  if (msg.empty() || msg[0] != 'R') {
    complain(msg.empty() ? "the daemon exited before it was ready" : msg.substr(1));
    waitpid(child, nullptr, 0);
    return kExitFailed;
  }
  say(msg.substr(1));
  return kExitOk;
}

}  // namespace

int start(const DaemonOptions& options, bool foreground) {  // the node name is valid (the command line checked it)
  if (auto ping = call(options.node_name, {{"op", "ping"}}, std::chrono::milliseconds(1000)); ping.ok()) {
    complain("node '" + options.node_name + "' is already running (pid " +
             std::to_string(ping->value("pid", 0)) + ")");
    return kExitFailed;
  }
  sigset_t set = StopOnSignals::signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);  // before any thread exists
  return foreground ? start_in_foreground(options) : start_in_background(options);
}

int stop(const std::string& node) {
  auto reply = call(node, {{"op", "stop"}}, std::chrono::milliseconds(5000));
  if (!reply.ok()) {
    complain(reply.status().message());
    return exit_for_status(reply.status());
  }
  if (!reply->value("ok", false)) {
    complain(reply->value("error", std::string("stop refused")));
    return exit_for_reply(*reply);
  }
  std::vector<std::string> segments;  // a cluster has one per host
  for (const json& bus : reply->value("buses", json::array({node}))) {
    if (bus.is_string()) segments.push_back(tf::shm_path(bus.get<std::string>()));
  }
  for (int i = 0; i < 200; ++i) {  // up to 10 s for the segments and sockets to go
    bool gone = std::none_of(segments.begin(), segments.end(), [](const std::string& shm) {
      struct stat st;
      return stat(shm.c_str(), &st) == 0;
    });
    if (gone) {
      say("node '" + node + "' stopped");
      return kExitOk;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  complain("node '" + node + "' did not stop within 10 s");
  return kExitFailed;
}

// The status reply of `node`: through its bus (refusing a stale one), or, for a cluster's own
// name (a control socket without a bus), through the socket alone.
Result<json> status_reply(const std::string& node) {
  auto client = tf::ShmClient::open({.node = node});
  if (!client.ok()) {
    auto cluster = tf::open_cluster(node, std::chrono::seconds(5));
    if (cluster.ok()) return std::move(cluster->status);
    return client.status();
  }
  auto snap = (*client)->snapshot();
  if (!snap.ok()) return snap.status();
  if (snap->stale()) return Status(Code::kUnavailable, "node '" + node + "' is stale: " + snap->stale_reason());
  return (*client)->control({{"op", "status"}});
}

int status(const std::string& node, bool as_json) {
  auto reply = status_reply(node);
  if (!reply.ok()) {
    complain(reply.status().message());
    return exit_for_status(reply.status());
  }
  if (!reply->value("ok", false)) {  // refused (too many connections, ...): say so, never print blanks
    complain(reply->value("error", std::string("the node refused the status request")));
    return exit_for_reply(*reply);
  }
  if (as_json) {
    std::printf("%s\n", json_text(*reply).c_str());
    return kExitOk;
  }
  std::printf("node '%s': %s, %d devices, pid %d, virtual time %.3f s, speed %gx, lag %.1f ms, %d job(s) running\n",
              node.c_str(), reply->value("spec", std::string()).c_str(), reply->value("devices", 0),
              reply->value("pid", 0), reply->value("virtual_time_ns", 0.0) / 1e9, reply->value("speed", 1.0),
              reply->value("lag_ns", 0.0) / 1e6, reply->value("jobs_running", 0));
  if (reply->contains("hosts")) {
    std::string hosts;
    for (const json& h : (*reply)["hosts"]) hosts += (hosts.empty() ? "" : ", ") + h.get<std::string>();
    std::printf("hosts: %s (%d devices each; NPU_NODE=<host> for one host's npu-smi)\n", hosts.c_str(),
                reply->value("devices_per_host", 0));
  }
  const json& faults = reply->contains("faults") ? (*reply)["faults"] : json::array();
  if (faults.empty()) std::printf("active faults: none\n");
  for (const json& f : faults) {
    std::string where = f.contains("link") ? "link " + f.value("link", std::string()) : "device " + std::to_string(f.value("device", -1));
    std::printf("active fault: %s %s since %.3f s (from %s)\n", where.c_str(), f.value("fault", std::string()).c_str(),
                f.value("since_ns", 0.0) / 1e9, f.value("source", std::string()).c_str());
  }
  return kExitOk;
}

int device_request(const std::string& node, const std::string& op, const json& target, json extra) {
  extra["op"] = op;
  extra.update(target);
  auto reply = call(node, extra, std::chrono::milliseconds(5000));
  if (!reply.ok()) {
    complain(reply.status().message());
    return exit_for_status(reply.status());
  }
  if (!reply->value("ok", false)) {
    complain(reply->value("error", std::string("request refused")));
    return exit_for_reply(*reply);
  }
  std::string what = target.contains("link")     ? "link " + target["link"].get<std::string>()
                     : target.contains("host")   ? "host " + std::to_string(target["host"].get<int>())
                     : target.contains("npu_id") ? "NPU " + std::to_string(target["npu_id"].get<int>()) + " chip " +
                                                       std::to_string(target["chip_id"].get<int>())
                                                 : "device " + std::to_string(target["device"].get<int>());
  say(op + " done on " + what);
  return kExitOk;
}
}  // namespace npukit::emu::emud
