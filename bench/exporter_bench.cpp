// npu-exporter scrape latency under load: an 8-NPU node running a workload on every device, the
// real npu-exporter, and 100 scrapes/s for 10 s (fixed-rate, one HTTP/1.1 GET per connection as
// Prometheus does without keep-alive). Prints p50/p99/max and the error count.
// Budget (issue 9): p99 <= 10 ms, no errors.
//   exporter_bench [--seconds 10] [--rate 100]
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "telemetry/client.hpp"

extern char** environ;

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  socklen_t len = sizeof(a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

// One GET /metrics; true when the reply is a 200 with a body.
bool scrape(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bool ok = false;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0) {
    const char req[] = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/plain\r\n\r\n";
    if (::send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL) == static_cast<ssize_t>(sizeof(req) - 1)) {
      std::string reply;
      char buf[65536];
      for (ssize_t n; (n = ::recv(fd, buf, sizeof(buf), 0)) > 0;) reply.append(buf, static_cast<std::size_t>(n));
      ok = reply.rfind("HTTP/1.1 200", 0) == 0 && reply.find("npu_chip_info_utilization{") != std::string::npos;
    }
  }
  ::close(fd);
  return ok;
}

json load_program() {
  json mm = {{"op", "kernel"}, {"stream", 0}, {"name", "aten::mm"},
             {"inputs", {{{"shape", {4096, 4096}}, {"dtype", "float16"}}, {{"shape", {4096, 4096}}, {"dtype", "float16"}}}}};
  json ranks = json::array();
  for (int d = 0; d < 8; ++d) {
    ranks.push_back({{"device", d}, {"streams", 1}, {"setup", {{{"op", "alloc"}, {"buf", "w"}, {"bytes", 1ll << 30}}}},
                     {"step", {mm, mm, {{"op", "host_delay"}, {"ns", 10'000'000}}}}});
  }
  return {{"name", "bench-load"}, {"repeat", 1000000}, {"process", {{"pid", 0}, {"name", "train"}}}, {"ranks", ranks}};
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size())))];
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 10, rate = 100;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--seconds")) seconds = std::atof(argv[i + 1]);
    if (!std::strcmp(argv[i], "--rate")) rate = std::atof(argv[i + 1]);
  }
  std::string node = "bench-exp-" + std::to_string(getpid());
  std::string emud = NPU_EMUD_PATH;
  if (std::system((emud + " start --node-name " + node + " > /dev/null").c_str()) != 0) return 3;
  int port = free_port();
  std::string listen = "127.0.0.1:" + std::to_string(port);
  const char* args[] = {NPU_EXPORTER_PATH, "--listen", listen.c_str(), "--node", node.c_str(), nullptr};
  pid_t exporter = -1;
  posix_spawn(&exporter, args[0], nullptr, nullptr, const_cast<char**>(args), environ);
  auto client = npukit::telemetry::ShmClient::open({.node = node});
  json reply;
  if (client.ok()) {
    auto r = (*client)->control({{"op", "submit"}, {"program", load_program()}});
    if (r.ok()) reply = *r;
  }
  for (int i = 0; i < 100 && !scrape(port); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::vector<double> ms;
  int errors = 0;
  auto period = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / rate));
  auto next = Clock::now();
  for (int i = 0; i < static_cast<int>(seconds * rate); ++i, next += period) {
    std::this_thread::sleep_until(next);
    auto t0 = Clock::now();
    if (!scrape(port)) ++errors;
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  if (client.ok() && reply.is_object()) (void)(*client)->control({{"op", "cancel"}, {"job", reply.value("job", 0)}});
  kill(exporter, SIGTERM);
  waitpid(exporter, nullptr, 0);
  (void)!std::system((emud + " stop --node-name " + node + " > /dev/null").c_str());
  double p99 = percentile(ms, 0.99);
  std::printf("%-48s %10.3f %-5s %24s  %s  (p50 %.3f ms, max %.3f ms, %zu scrapes, workload %s)\n",
              "npu-exporter scrape under load (p99)", p99, "ms", "<= 10 ms", p99 <= 10.0 ? "OK" : "OVER BUDGET",
              percentile(ms, 0.5), percentile(ms, 1.0), ms.size(), reply.value("ok", false) ? "running" : "NOT RUNNING");
  std::printf("%-48s %10d %-5s %24s  %s\n", "npu-exporter scrape errors", errors, "", "== 0", errors == 0 ? "OK" : "OVER BUDGET");
  return 0;
}
