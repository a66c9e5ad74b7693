// The system ProcessControl (input.hpp): ownership from /proc/<pid>/status, signals with
// kill(2).
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "smi/top/input.hpp"

namespace npukit::top {

namespace {

// The real uid of `pid` from /proc; -1 when the process is gone or unreadable.
long owner_of(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("Uid:", 0) != 0) continue;
    std::istringstream fields(line.substr(4));
    long uid = -1;
    fields >> uid;
    return uid;
  }
  return -1;
}

class SystemProcessControl final : public ProcessControl {
 public:
  Status may_signal(int pid) override {
    std::string who = "pid " + std::to_string(pid);
    if (pid <= 1) return InvalidArgument("refusing to signal " + who);
    long uid = owner_of(pid);
    if (uid < 0) return NotFoundError(who + " is not running on this host");
    if (geteuid() != 0 && static_cast<uid_t>(uid) != geteuid()) {
      return Status(Code::kFailedPrecondition,
                    who + " belongs to uid " + std::to_string(uid) + ", not to you (uid " + std::to_string(geteuid()) + ")");
    }
    return Status::Ok();
  }

  Status send(int pid, int signal) override {
    if (pid <= 1) return InvalidArgument("refusing to signal pid " + std::to_string(pid));
    if (::kill(pid, signal) != 0) {
      return Status(Code::kFailedPrecondition, "kill(" + std::to_string(pid) + "): " + std::strerror(errno));
    }
    return Status::Ok();
  }
};

}  // namespace

std::unique_ptr<ProcessControl> system_process_control() { return std::make_unique<SystemProcessControl>(); }

}  // namespace npukit::top
