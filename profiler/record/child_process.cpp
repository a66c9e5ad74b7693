#include "profiler/record/child_process.hpp"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace npukit::prof {

namespace {

std::vector<std::string> merged_environment(const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string entry = *e;
    std::string name = entry.substr(0, entry.find('='));
    bool replaced = false;
    for (const std::string& x : extra) replaced = replaced || x.substr(0, x.find('=')) == name;
    if (!replaced) env.push_back(entry);
  }
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

Result<ChildProcess> ChildProcess::spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  if (argv.empty()) return InvalidArgument("no command to run");
  std::vector<std::string> args = argv;
  std::vector<std::string> environment = merged_environment(env);
  std::vector<char*> arg_ptrs = pointers(args);
  std::vector<char*> env_ptrs = pointers(environment);
  pid_t pid = -1;
  int rc = posix_spawnp(&pid, args[0].c_str(), nullptr, nullptr, arg_ptrs.data(), env_ptrs.data());
  if (rc != 0) return InvalidArgument("cannot run '" + argv[0] + "': " + std::strerror(rc));
  return ChildProcess(pid);
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !status_) {
    ::kill(pid_, SIGTERM);
    wait();
  }
}

int ChildProcess::decode(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

std::optional<int> ChildProcess::poll() {
  if (status_ || pid_ <= 0) return status_;
  int status = 0;
  pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r == pid_) status_ = decode(status);
  else if (r < 0 && errno == ECHILD) status_ = 1;
  return status_;
}

int ChildProcess::wait() {
  while (!status_ && pid_ > 0) {
    int status = 0;
    pid_t r = ::waitpid(pid_, &status, 0);
    if (r == pid_) status_ = decode(status);
    else if (r < 0 && errno != EINTR) status_ = 1;
  }
  return status_.value_or(1);
}

void ChildProcess::signal(int sig) const {
  if (pid_ > 0 && !status_) ::kill(pid_, sig);
}

}  // namespace npukit::prof
