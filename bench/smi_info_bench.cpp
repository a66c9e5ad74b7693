// `npu-smi info` on an 8-NPU node with the daemon up: median wall time of the whole command
// (fork, exec, read the bus, print) beside /bin/true measured the same way in the same run.
// Budget (DESIGN.md section 9): median <= 5 ms and <= 10x /bin/true. Also `npu-smi diag` levels 1
// and 2 on the same idle node (issue budget: level 1 under 5 s; level 2 "about a minute").
//   smi_info_bench [--runs 100]
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <vector>

extern char** environ;

namespace {

// Median wall time of running `argv` `runs` times with stdout to /dev/null, in ms.
double median_ms(std::vector<const char*> argv, int runs) {
  argv.push_back(nullptr);
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    auto t0 = std::chrono::steady_clock::now();
    pid_t pid;
    if (posix_spawn(&pid, argv[0], &fa, nullptr, const_cast<char**>(argv.data()), environ) != 0) return -1;
    int status;
    waitpid(pid, &status, 0);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    posix_spawn_file_actions_destroy(&fa);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 100;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--runs")) runs = std::atoi(argv[i + 1]);
  }
  std::string node = "bench-smi-" + std::to_string(getpid());
  std::string emud = NPU_EMUD_PATH;
  if (std::system((emud + " start --node-name " + node + " > /dev/null").c_str()) != 0) return 3;
  setenv("NPU_NODE", node.c_str(), 1);
  median_ms({NPU_SMI_PATH, "info"}, 5);  // warm the page cache
  double smi = median_ms({NPU_SMI_PATH, "info"}, runs);
  double truth = median_ms({"/bin/true"}, runs);
  double diag1 = median_ms({NPU_SMI_PATH, "diag", "-r", "1"}, 5);
  double diag2 = median_ms({NPU_SMI_PATH, "diag", "-r", "2"}, 3);
  (void)!std::system((emud + " stop --node-name " + node + " > /dev/null").c_str());
  std::printf("%-48s %10.3f %-5s %24s  %s  (%s)\n", "npu-smi info, 8 NPUs, daemon up (median)", smi, "ms",
              "<= 5 ms", smi <= 5.0 ? "OK" : "OVER BUDGET", "DESIGN.md 9");
  std::printf("%-48s %10.3f %-5s %24s  %s  (/bin/true: %.3f ms)\n", "npu-smi info / /bin/true", smi / truth, "x",
              "<= 10 x", smi / truth <= 10.0 ? "OK" : "OVER BUDGET", truth);
  std::printf("%-48s %10.3f %-5s %24s  %s  (%s)\n", "npu-smi diag -r 1, 8 NPUs (median of 5)", diag1, "ms",
              "<= 5000 ms", diag1 <= 5000 ? "OK" : "OVER BUDGET", "issue: diagnostics");
  std::printf("%-48s %10.3f %-5s %24s  %s  (%s)\n", "npu-smi diag -r 2, 8 NPUs, speed 1 (median of 3)", diag2, "ms",
              "<= 60000 ms", diag2 <= 60000 ? "OK" : "OVER BUDGET", "issue: about a minute");
  return 0;
}
