// The real npu-exporter as a child process listening on a free loopback port, scraped with
// cpp-httplib's client (end-to-end and fault-matrix tests).
#pragma once

#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace npukit::smi::exporter::testing {

inline const std::string kExporter = std::string(NPUKIT_BUILD_DIR) + "/smi/npu-exporter";

// The exporter as a child process listening on a free loopback port.
struct ExporterProcess {
  pid_t pid = -1;
  int port = 0;
  explicit ExporterProcess(const std::string& node) {
    int fds[2];
    if (pipe(fds) != 0) return;
    pid = fork();
    if (pid == 0) {
      dup2(fds[1], STDOUT_FILENO);
      close(fds[0]);
      execl(kExporter.c_str(), kExporter.c_str(), "--listen", "127.0.0.1:0", "--node-name", node.c_str(), nullptr);
      _exit(127);
    }
    close(fds[1]);
    std::string line;
    char c;
    while (read(fds[0], &c, 1) == 1 && c != '\n') line += c;
    close(fds[0]);
    std::size_t colon = line.rfind(':');
    if (colon != std::string::npos) port = std::atoi(line.c_str() + colon + 1);
    EXPECT_GT(port, 0) << "exporter said: " << line;
  }
  int stop() {
    if (pid <= 0) return -1;
    kill(pid, SIGTERM);
    int status = 0;
    pid_t waited = waitpid(pid, &status, 0);
    pid = -1;
    return waited > 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  ~ExporterProcess() { stop(); }
  std::string scrape() const {
    httplib::Client cli("127.0.0.1", port);
    auto res = cli.Get("/metrics");
    EXPECT_TRUE(res) << "scrape failed";
    if (!res) return "";
    EXPECT_EQ(res->status, 200);
    EXPECT_EQ(res->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
    return res->body;
  }
};

}  // namespace npukit::smi::exporter::testing
