// Helpers for tests that drive the real npu-emud binary.
#pragma once

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "telemetry/client.hpp"
#include "telemetry/control.hpp"
#include "telemetry/naming.hpp"

namespace npukit::testing {

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr
};

inline CommandResult run_command(const std::string& command) {
  CommandResult r;
  std::FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 4096> buf;
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.output.append(buf.data(), n);
  int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// Makes `command` available by installing Debian's `package` when it is missing; "" when it is
// there, else why not. Test binaries run in parallel under ctest: one install at a time (apt's own
// lock fails the others at once), the later ones find the command installed.
// `check` is the shell command that succeeds once the package is there (default: command -v).
inline std::string ensure_debian_package(const std::string& command, const std::string& package, std::string check = "") {
  if (check.empty()) check = "command -v " + command;
  if (run_command(check).exit_code == 0) return "";
  if (geteuid() != 0) return command + " is missing and installing Debian's " + package + " needs root";
  CommandResult r = run_command("flock /tmp/npukit-apt-install.lock sh -c '" + check +
                                " >/dev/null 2>&1 || DEBIAN_FRONTEND=noninteractive apt-get install -y " + package + "'");
  if (run_command(check).exit_code == 0) return "";
  return "apt-get install -y " + package + " failed: " + r.output.substr(0, 400);
}

inline std::string emud() { return NPU_EMUD_PATH; }

// A node name no other test (or parallel ctest process) uses.
inline std::string unique_node(const std::string& tag) {
  return "t" + std::to_string(getpid()) + "-" + tag;
}

// Starts a daemon for the test's lifetime; stops it (or cleans up after a kill) at the end.
class ScopedNode {
 public:
  explicit ScopedNode(const std::string& tag, const std::string& extra = "")
      : name_(unique_node(tag)) {
    auto r = run_command(emud() + " start --node-name " + name_ + " " + extra);
    EXPECT_EQ(r.exit_code, 0) << r.output;
  }
  ~ScopedNode() {
    run_command(emud() + " stop --node-name " + name_);
    ::shm_unlink(telemetry::shm_name(name_).c_str());  // a segment a test's SIGKILL left behind
    std::string sock = telemetry::control_socket_path(name_);
    ::unlink(sock.c_str());
    ::unlink((sock.substr(0, sock.size() - 5) + ".log").c_str());
  }
  const std::string& name() const { return name_; }
  std::unique_ptr<telemetry::Client> client() const {
    auto c = telemetry::ShmClient::open({.node = name_});
    EXPECT_TRUE(c.ok()) << c.status().message();
    return c.ok() ? std::move(*c) : nullptr;
  }
  nlohmann::json control(const nlohmann::json& request) const {
    auto c = client();
    auto reply = c->control(request);
    EXPECT_TRUE(reply.ok()) << reply.status().message();
    return reply.ok() ? *reply : nlohmann::json();
  }
  // The daemon's pid from its status reply, or -1 (the reply is printed) when it has none: a
  // test that signals the daemon must never send to pid 0 or -1 (its own process group, or all).
  int daemon_pid() const {
    nlohmann::json status = control({{"op", "status"}});
    if (status.is_object() && status.contains("pid") && status["pid"].is_number_integer() && status["pid"].get<int>() > 1) {
      return status["pid"].get<int>();
    }
    ADD_FAILURE() << "node '" << name_ << "': status reply without a daemon pid: " << status.dump();
    return -1;
  }

 private:
  std::string name_;
};

// Polls `pred` every 20 ms for up to `limit`.
template <typename Pred>
bool eventually(Pred pred, std::chrono::milliseconds limit = std::chrono::seconds(5)) {
  auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return pred();
}

}  // namespace npukit::testing
