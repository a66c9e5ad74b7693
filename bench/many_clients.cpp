// Many clients on one node: an 8-NPU node running ernie3-train continuously (one long npu-run)
// while --readers real reader processes read it at once:
//   2 npu-prof recorders (--attach, lossless: the node waits for them rather than drop events),
//   4 npu-top (curses, 200x60 panes of one tmux server, --interval 0.5),
//   4 npu-exporter, each scraped at 10 Hz by this program (one GET per connection, fixed rate),
//   the rest npu-smi info loops (each runs npu-smi info every --smi-period s, random phase;
//   0 = back to back).
// Measured here:
//   lossless recorders lose nothing: each recording's EMU_RUN events_missed and lossless_lost are
//     0, and the bus counts no lossless reader timed out or found dead;
//   the publisher's period: a thread polls the segment's heartbeat (the writer's CLOCK_MONOTONIC
//     stamp at the end of each publish) every 1 ms; the intervals between successive stamps
//     against the nominal period (--rate, default 10 Hz), max and p99 within +10%;
//   exporter scrape latency p99 <= 10 ms; npu-smi info wall time (spawn to exit) p99 <= 10 ms;
//   every client answered: no failed npu-smi (exit code or stderr), no failed scrape, every
//     npu-top alive and drawing, both recorders exit 0.
// Prints each figure beside its budget. Exit: 0 all met; 1 a check failed (with --check only the
// robust ones count: losses, errors, clients that died or never answered, a writer that stopped;
// the timing budgets are printed but not judged, for loaded CI machines); 2 usage; 3 setup.
// --recorders 0 (the rest npu-smi loops) separates what the lossless readers cost the publisher.
//   many_clients [--seconds 30] [--readers 64] [--smi-period 1] [--rate 10] [--recorders 2] [--check]
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "telemetry/client.hpp"
#include "telemetry/segment.hpp"

extern char** environ;

namespace {

namespace tm = npukit::telemetry;
using Clock = std::chrono::steady_clock;
using Ms = std::chrono::duration<double, std::milli>;

struct Options {
  double seconds = 30;
  int readers = 64;
  double smi_period = 1.0;
  double rate = 10;
  int recorders = 2;
  bool check_only = false;
};

std::string run(const std::string& command) {
  std::string out;
  if (FILE* p = popen((command + " 2>&1").c_str(), "r")) {
    char buf[4096];
    while (true) {
      std::size_t n = std::fread(buf, 1, sizeof buf, p);
      out.append(buf, n);
      if (n > 0) continue;
      if (std::ferror(p) && errno == EINTR) {  // see scrape(): a stop and continue interrupts reads
        std::clearerr(p);
        continue;
      }
      break;
    }
    pclose(p);
  }
  return out;
}

// Spawns argv with stdout to /dev/null (or `out_path`) and, when err_fd is given, stderr to a
// pipe whose read end is returned there (else /dev/null). -1 when spawning failed (the error in
// *spawn_error when given).
pid_t spawn(const std::vector<std::string>& args, int* err_fd = nullptr, const std::string& out_path = "/dev/null",
            int* spawn_error = nullptr) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  int pipe_fds[2] = {-1, -1};
  if (err_fd != nullptr && ::pipe2(pipe_fds, O_CLOEXEC) == 0) {
    posix_spawn_file_actions_adddup2(&fa, pipe_fds[1], 2);
  } else {
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  }
  pid_t pid = -1;
  int e = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  if (e != 0) pid = -1;
  if (spawn_error != nullptr) *spawn_error = e;
  posix_spawn_file_actions_destroy(&fa);
  if (pipe_fds[1] >= 0) ::close(pipe_fds[1]);
  if (err_fd != nullptr) *err_fd = pipe_fds[0];
  return pid;
}

// The exit code of pid (128 + signal when killed); -1000 - errno when waitpid failed.
int wait_exit(pid_t pid) {
  int status = 0;
  pid_t r;
  while ((r = ::waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
  }
  if (r != pid) return -1000 - errno;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string drain(int fd) {
  std::string s;
  char buf[1024];
  for (ssize_t n; fd >= 0 && (n = ::read(fd, buf, sizeof buf)) > 0;) s.append(buf, static_cast<std::size_t>(n));
  if (fd >= 0) ::close(fd);
  return s;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())))];
}

// One GET /metrics on 127.0.0.1:port: "" on a 200 whose body has the chips' series, else why not.
std::string scrape(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::string why;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    why = std::string("connect: ") + std::strerror(errno);
  } else {
    const char req[] = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/plain\r\n\r\n";
    if (::send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof(req) - 1)) {
      why = std::string("send: ") + std::strerror(errno);
    } else {
      std::string reply;
      char buf[65536];
      ssize_t n;
      // EINTR without a handler: a socket call with SO_RCVTIMEO is not restarted after the
      // process was stopped and continued (signal(7)); retry it.
      while ((n = ::recv(fd, buf, sizeof(buf), 0)) > 0 || (n < 0 && errno == EINTR)) {
        if (n > 0) reply.append(buf, static_cast<std::size_t>(n));
      }
      if (n < 0) why = std::string("recv: ") + std::strerror(errno) + " after " + std::to_string(reply.size()) + " bytes";
      else if (reply.rfind("HTTP/1.1 200", 0) != 0) why = "reply: " + reply.substr(0, reply.find('\r'));
      else if (reply.find("\nnpu_chip_info_utilization{") == std::string::npos) {
        auto up = reply.find("\nnpu_exporter_node_up");
        why = "no chip series in " + std::to_string(reply.size()) + " bytes" +
              (up == std::string::npos ? "" : " (" + reply.substr(up + 1, reply.find('\n', up + 1) - up - 1) + ")");
      }
    }
  }
  ::close(fd);
  return why;
}

// Timings and failures one kind of client reports; each thread appends under the mutex.
struct Tally {
  std::mutex mu;
  std::vector<double> ms;
  int runs = 0, failures = 0;
  std::string first_failure;
  void add(double t, bool ok, const std::string& why) {
    std::lock_guard lock(mu);
    ms.push_back(t);
    ++runs;
    if (!ok && failures++ == 0) first_failure = why;
  }
};

// An npu-smi info loop: every `period` s (random phase; 0: back to back) until `end`.
void smi_loop(const std::string& node, double period, Clock::time_point end, unsigned seed, Tally* tally) {
  std::mt19937 rng(seed);
  auto step = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(period));
  auto next = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                 std::chrono::duration<double>(period * std::uniform_real_distribution<>(0, 1)(rng)));
  while (true) {
    if (period > 0) std::this_thread::sleep_until(next), next += step;
    if (Clock::now() >= end) return;
    int err = -1, spawn_error = 0;
    auto t0 = Clock::now();
    pid_t pid = spawn({NPU_SMI_PATH, "info", "--node-name", node}, &err, "/dev/null", &spawn_error);
    std::string stderr_text = drain(err);
    int code = pid > 0 ? wait_exit(pid) : -1;
    double ms = Ms(Clock::now() - t0).count();
    std::string why = pid > 0 ? "npu-smi info exit " + std::to_string(code) + ": " + stderr_text.substr(0, 200)
                              : std::string("cannot spawn npu-smi: ") + std::strerror(spawn_error);
    tally->add(ms, code == 0 && stderr_text.empty(), why);
  }
}

// Scrapes 127.0.0.1:port at `rate` Hz until `end`.
void scrape_loop(int port, double rate, Clock::time_point end, Tally* tally) {
  auto step = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / rate));
  for (auto next = Clock::now(); next < end; next += step) {
    std::this_thread::sleep_until(next);
    auto t0 = Clock::now();
    std::string why = scrape(port);
    tally->add(Ms(Clock::now() - t0).count(), why.empty(), "scrape of port " + std::to_string(port) + ": " + why);
  }
}

// The heartbeat stamps the writer published, polled every 1 ms until `end`.
struct Beats {
  std::vector<double> intervals_ms;
  int stale_polls = 0;
  uint64_t lossless_timeouts = 0, lossless_dead = 0, publish_errors = 0;
};
void heartbeat_loop(tm::Client* client, Clock::time_point end, Beats* out) {
  uint64_t last = 0;
  while (Clock::now() < end) {
    auto r = client->snapshot();
    if (r.ok() && !r->stale()) {
      uint64_t beat = r->node_field(tm::fid::kNodeHeartbeatNs).as_u64();
      if (last != 0 && beat != last) out->intervals_ms.push_back(static_cast<double>(beat - last) / 1e6);
      last = beat;
      out->lossless_timeouts = r->node_field(tm::fid::kBusLosslessTimeoutsTotal).as_u64();
      out->lossless_dead = r->node_field(tm::fid::kBusLosslessDeadReadersTotal).as_u64();
      out->publish_errors = r->node_field(tm::fid::kBusPublishErrorsTotal).as_u64();
    } else {
      ++out->stale_polls;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

// An npu-exporter on a free port: its pid and port (0 when it did not come up).
struct Exporter {
  pid_t pid = -1;
  int port = 0;
};
Exporter start_exporter(const std::string& node, const std::string& log) {
  Exporter e;
  e.pid = spawn({NPU_EXPORTER_PATH, "--node-name", node, "--listen", "127.0.0.1:0"}, nullptr, log);
  for (int i = 0; i < 200 && e.port == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
    std::string text = run("cat " + log);
    auto at = text.find("http://127.0.0.1:");
    if (at != std::string::npos) e.port = std::atoi(text.c_str() + at + 17);
  }
  return e;
}

// What one recording says about losses, from its first rank's EMU_RUN.
struct Recording {
  int exit_code = -1;
  long long recorded = -1, missed = -1, lost = -1;
  std::string line;  // the report's Recording: line
  std::string odd;   // an EMU_RUN query that did not answer a number
};
Recording read_recording(const std::string& dir, int exit_code) {
  Recording r;
  r.exit_code = exit_code;
  // The first rank's msprof_*.db: each PROF_ tree also holds analyze/communication_analyzer.db,
  // and directory order is the file system's, so take the lowest PROF_ path by name.
  std::vector<std::string> dbs;
  std::error_code ec;
  for (auto& e : std::filesystem::recursive_directory_iterator(dir, ec))
    if (e.path().filename().string().rfind("msprof_", 0) == 0 && e.path().extension() == ".db") dbs.push_back(e.path().string());
  if (dbs.empty()) return r;
  const std::string db = *std::min_element(dbs.begin(), dbs.end());
  auto value = [&](const std::string& key) -> long long {
    std::string v = run("sqlite3 '" + db + "' \"SELECT value FROM EMU_RUN WHERE key = '" + key + "'\"");
    if (v.empty() || v.find_first_not_of("0123456789\n") != std::string::npos) {
      r.odd += key + ": '" + v.substr(0, 120) + "' ";
      return -1;
    }
    return std::atoll(v.c_str());
  };
  r.recorded = value("events_recorded");
  r.missed = value("events_missed");
  r.lost = value("lossless_lost");
  std::string report = run(std::string(NPU_PROF_PATH) + " report " + dir);
  auto at = report.find("Recording:");
  if (at != std::string::npos) r.line = report.substr(at, report.find('\n', at) - at);
  return r;
}

bool usage() {
  std::fprintf(stderr, "usage: many_clients [--seconds S] [--readers N>=11] [--smi-period S] [--rate HZ] [--recorders 0-8] [--check]\n");
  return false;
}

bool parse(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--check") { o->check_only = true; continue; }
    if (i + 1 >= argc) return usage();
    double v = std::atof(argv[++i]);
    if (a == "--seconds") o->seconds = v;
    else if (a == "--readers") o->readers = static_cast<int>(v);
    else if (a == "--smi-period") o->smi_period = v;
    else if (a == "--rate") o->rate = v;
    else if (a == "--recorders") o->recorders = static_cast<int>(v);
    else return usage();
  }
  return o->seconds >= 2 && o->readers >= 11 && o->smi_period >= 0 && o->rate > 0 && o->recorders >= 0 && o->recorders <= 8
             ? true : usage();
}

// One line of the result table; returns `ok`.
bool row(const char* figure, const std::string& measured, const char* budget, bool ok, bool judged = true) {
  std::printf("%-46s %32s  %-18s %s\n", figure, measured.c_str(), budget, ok ? "OK" : judged ? "FAIL" : "OVER BUDGET (not judged)");
  return ok || !judged;
}

std::string fmt(const char* f, double a) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, a);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!parse(argc, argv, &o)) return 2;
  ::signal(SIGPIPE, SIG_IGN);
  const std::string node = "mc-" + std::to_string(getpid());
  const std::string tmp = "/tmp/" + node;
  const std::string tmux = "tmux -L " + node + " ";
  std::filesystem::create_directories(tmp);
  const int tops = 4, exporters = 4, recorders = o.recorders, smis = o.readers - tops - exporters - recorders;
  std::printf("many_clients: node %s, %.0f s, %d readers (%d npu-smi info loops every %.2f s, %d npu-top, %d exporters at 10 Hz, %d recorders), publish %.0f Hz\n",
              node.c_str(), o.seconds, o.readers, smis, o.smi_period, tops, exporters, recorders, o.rate);
  std::fflush(stdout);
  char rate[32];
  std::snprintf(rate, sizeof rate, "%g", o.rate);
  if (run(std::string(NPU_EMUD_PATH) + " start --node-name " + node + " --seed 7 --rate " + rate).find("ready") == std::string::npos) {
    std::fprintf(stderr, "many_clients: cannot start node %s\n", node.c_str());
    return 3;
  }
  auto client = tm::ShmClient::open({.node = node});
  // The continuous workload: one long ernie3-train (about 2.9 steps/s at speed 1).
  pid_t workload = spawn({NPU_RUN_PATH, "ernie3-train", "--steps", "1000000", "--node-name", node});
  std::this_thread::sleep_for(std::chrono::seconds(1));

  std::vector<Exporter> exps;
  for (int i = 0; i < exporters; ++i) exps.push_back(start_exporter(node, tmp + "/exporter" + std::to_string(i) + ".log"));
  for (int i = 0; i < tops; ++i) {
    std::string cmd = "exec " + std::string(NPU_TOP_PATH) + " --node " + node + " --interval 0.5";
    run(tmux + "new-session -d -s top" + std::to_string(i) + " -x 200 -y 60 '" + cmd + "'");
  }
  auto end = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.seconds));
  std::vector<pid_t> recs;
  std::vector<std::string> rec_dirs;
  std::string duration = std::to_string(static_cast<int>(o.seconds)) + "s";
  for (int i = 0; i < recorders; ++i) {
    rec_dirs.push_back(tmp + "/prof" + std::to_string(i));
    recs.push_back(spawn({NPU_PROF_PATH, "record", "-o", rec_dirs.back(), "--node-name", node, "--attach", "--duration", duration},
                         nullptr, tmp + "/record" + std::to_string(i) + ".log"));
  }

  Tally smi, scrapes;
  Beats beats;
  std::vector<std::thread> threads;
  if (client.ok()) threads.emplace_back(heartbeat_loop, client->get(), end, &beats);
  for (const Exporter& e : exps) {
    if (e.port > 0) threads.emplace_back(scrape_loop, e.port, 10.0, end, &scrapes);
  }
  for (int i = 0; i < smis; ++i) threads.emplace_back(smi_loop, node, o.smi_period, end, 1000u + static_cast<unsigned>(i), &smi);
  for (auto& t : threads) t.join();

  // Every npu-top still running and drawing the node.
  int tops_ok = 0;
  for (int i = 0; i < tops; ++i) {
    std::string screen = run(tmux + "capture-pane -p -t top" + std::to_string(i));
    tops_ok += screen.find("8 NPUs") != std::string::npos;
  }
  std::string panes = run(tmux + "list-panes -a -F '#{pane_dead}'");
  int tops_dead = tops - static_cast<int>(std::count(panes.begin(), panes.end(), '0'));
  std::vector<Recording> recordings;
  for (std::size_t i = 0; i < recs.size(); ++i) recordings.push_back(read_recording(rec_dirs[i], wait_exit(recs[i])));
  int exporters_up = 0;
  for (const Exporter& e : exps) {
    exporters_up += e.port > 0 && ::kill(e.pid, 0) == 0;
    if (e.pid > 0) ::kill(e.pid, SIGTERM), wait_exit(e.pid);
  }
  run(tmux + "kill-server");
  const char* tmux_dir = std::getenv("TMUX_TMPDIR");
  ::unlink(((tmux_dir != nullptr ? tmux_dir : "/tmp") + std::string("/tmux-") + std::to_string(getuid()) + "/" + node).c_str());
  ::kill(workload, SIGTERM);
  int workload_exit = wait_exit(workload);
  run(std::string(NPU_EMUD_PATH) + " stop --node-name " + node);
  ::unlink(("/tmp/npukit-" + node + ".log").c_str());
  std::filesystem::remove_all(tmp);

  const double nominal = 1000.0 / o.rate, slip = nominal * 1.10;
  std::printf("\n%-46s %32s  %-18s %s\n", "figure", "measured", "budget", "verdict");
  bool ok = true;
  for (std::size_t i = 0; i < recordings.size(); ++i) {
    const Recording& r = recordings[i];
    std::string name = "recorder " + std::to_string(i + 1) + ": events missed / lossless lost";
    ok &= row(name.c_str(), std::to_string(r.missed) + " / " + std::to_string(r.lost), "0 / 0", r.missed == 0 && r.lost == 0);
    name = "recorder " + std::to_string(i + 1) + ": exit code, events recorded";
    ok &= row(name.c_str(), std::to_string(r.exit_code) + ", " + std::to_string(r.recorded), "0, > 0", r.exit_code == 0 && r.recorded > 0);
    std::printf("    %s\n", r.line.c_str());
    if (!r.odd.empty()) std::printf("    EMU_RUN: %s\n", r.odd.c_str());
  }
  ok &= row("bus: lossless readers timed out / found dead", std::to_string(beats.lossless_timeouts) + " / " + std::to_string(beats.lossless_dead),
            "0 / 0", beats.lossless_timeouts == 0 && beats.lossless_dead == 0);
  ok &= row("bus: publish errors", std::to_string(beats.publish_errors), "0", beats.publish_errors == 0);
  const double expected = o.seconds * o.rate;
  ok &= row("publishes seen (stale polls)", fmt("%.0f", static_cast<double>(beats.intervals_ms.size())) + " of ~" + fmt("%.0f", expected) +
            " (" + std::to_string(beats.stale_polls) + ")", ">= 50%, 0 stale",
            static_cast<double>(beats.intervals_ms.size()) >= expected / 2 && beats.stale_polls == 0);
  bool timing = !o.check_only;
  double pmax = percentile(beats.intervals_ms, 1.0), p99 = percentile(beats.intervals_ms, 0.99);
  std::string budget = fmt("<= %.1f ms", slip);
  std::string max_name = "publish interval max (nominal " + fmt("%.0f ms)", nominal);
  ok &= row(max_name.c_str(), fmt("%.2f ms", pmax), budget.c_str(), pmax <= slip, timing);
  ok &= row("publish interval p99", fmt("%.2f ms", p99) + fmt(" (p50 %.2f)", percentile(beats.intervals_ms, 0.5)), budget.c_str(), p99 <= slip, timing);
  int over = static_cast<int>(std::count_if(beats.intervals_ms.begin(), beats.intervals_ms.end(), [&](double v) { return v > slip; }));
  row("publish intervals over +10%", std::to_string(over) + " of " + std::to_string(beats.intervals_ms.size()), "0", over == 0, false);
  double sp99 = percentile(scrapes.ms, 0.99);
  ok &= row("exporter scrape p99", fmt("%.2f ms", sp99) + fmt(" (p50 %.2f,", percentile(scrapes.ms, 0.5)) + fmt(" max %.1f)", percentile(scrapes.ms, 1.0)),
            "<= 10 ms", sp99 <= 10, timing);
  ok &= row("exporter scrapes failed", std::to_string(scrapes.failures) + " of " + std::to_string(scrapes.runs), "0, all answered",
            scrapes.failures == 0 && scrapes.runs > 0 && exporters_up == exporters);
  double mp99 = percentile(smi.ms, 0.99);
  ok &= row("npu-smi info wall time p99", fmt("%.2f ms", mp99) + fmt(" (p50 %.2f,", percentile(smi.ms, 0.5)) + fmt(" max %.1f)", percentile(smi.ms, 1.0)),
            "<= 10 ms", mp99 <= 10, timing);
  ok &= row("npu-smi info failed", std::to_string(smi.failures) + " of " + std::to_string(smi.runs), "0, all answered",
            smi.failures == 0 && smi.runs >= smis);
  ok &= row("npu-top alive and drawing", std::to_string(tops_ok) + " of " + std::to_string(tops) + " (" + std::to_string(tops_dead) + " gone)", "all",
            tops_ok == tops && tops_dead == 0);
  ok &= row("workload ran throughout (npu-run exit on SIGTERM)", std::to_string(workload_exit), "130 or 143", workload_exit == 130 || workload_exit == 143);
  if (!smi.first_failure.empty()) std::printf("first npu-smi failure: %s\n", smi.first_failure.c_str());
  if (!scrapes.first_failure.empty()) std::printf("first scrape failure: %s\n", scrapes.first_failure.c_str());
  std::printf("many_clients: %s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
