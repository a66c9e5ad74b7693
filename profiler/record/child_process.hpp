// ChildProcess: the command `npu-prof record -- <command>` runs, started with posix_spawnp so a
// command that cannot be run is an error value here, not a message from a forked child.
//
// Thread-safety: one thread owns a ChildProcess.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "telemetry/status.hpp"

namespace npukit::prof {

class ChildProcess {
 public:
  // Runs argv[0] (searched in $PATH) with the current environment plus `env` ("NAME=value"
  // entries replace same-named variables). InvalidArgument "cannot run '<cmd>': <reason>".
  static Result<ChildProcess> spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env);
  // Whether spawn() would find `command` (argv[0]) as execvp does, before anything is set up for
  // it: the same InvalidArgument as spawn's when not.
  static Status check_runnable(const std::string& command);

  ChildProcess(ChildProcess&& other) noexcept : pid_(other.pid_), status_(other.status_) { other.pid_ = -1; }
  ChildProcess& operator=(ChildProcess&&) = delete;
  ~ChildProcess();

  pid_t pid() const { return pid_; }
  // Non-blocking: the exit code once the child ended (128 + signal when killed by a signal).
  std::optional<int> poll();
  // Blocks until the child ends.
  int wait();
  void signal(int sig) const;

 private:
  explicit ChildProcess(pid_t pid) : pid_(pid) {}
  static int decode(int status);

  pid_t pid_ = -1;
  std::optional<int> status_;
};

}  // namespace npukit::prof
