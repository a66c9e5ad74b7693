// CPU used by an idle npu-emud publishing at 10 Hz, measured from /proc/<pid>/stat over a
// window. Budget (DESIGN.md section 9): <= 1% of one core.
//   daemon_idle [--seconds 10] [--emud PATH]
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "telemetry/control.hpp"
#include "telemetry/naming.hpp"

namespace {

// utime + stime of `pid`, in clock ticks.
long cpu_ticks(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(in, line);
  std::istringstream fields(line.substr(line.rfind(')') + 2));
  std::string skip;
  for (int i = 0; i < 11; ++i) fields >> skip;  // fields 3..13
  long utime = 0, stime = 0;
  fields >> utime >> stime;
  return utime + stime;
}

}  // namespace

int main(int argc, char** argv) {
  int seconds = 10;
  std::string emud = NPU_EMUD_PATH;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--seconds")) seconds = std::stoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--emud")) emud = argv[i + 1];
  }
  std::string node = "bench-idle-" + std::to_string(getpid());
  if (std::system((emud + " start --node-name " + node + " --rate 10 > /dev/null").c_str()) != 0) {
    std::fprintf(stderr, "daemon_idle: could not start %s\n", emud.c_str());
    return 3;
  }
  auto client = npukit::telemetry::ControlClient::connect(node, npukit::telemetry::control_socket_path(node),
                                                          std::chrono::seconds(5));
  int pid = client.ok() ? (*client)->call({{"op", "status"}})->value("pid", 0) : 0;
  std::this_thread::sleep_for(std::chrono::seconds(1));  // past start-up
  long before = cpu_ticks(pid);
  auto t0 = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::seconds(seconds));
  long after = cpu_ticks(pid);
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::system((emud + " stop --node-name " + node + " > /dev/null").c_str());
  double percent = static_cast<double>(after - before) / static_cast<double>(sysconf(_SC_CLK_TCK)) / wall * 100.0;
  std::printf("%-48s %10.3f %-5s %24s  %s  (%s)\n", "npu-emud idle, 8 devices, 10 Hz publish", percent, "%",
              "<= 1 %", percent <= 1.0 ? "OK" : "OVER BUDGET", "DESIGN.md 9: daemon idle at 10 Hz");
  return 0;
}
