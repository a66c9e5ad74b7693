#include "profiler/record/child_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
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

Status ChildProcess::check_runnable(const std::string& command) {
  auto fail = [&](int e) { return InvalidArgument("cannot run '" + command + "': " + std::strerror(e)); };
  if (command.empty()) return InvalidArgument("no command to run");
  if (command.find('/') != std::string::npos) return ::access(command.c_str(), X_OK) == 0 ? Status::Ok() : fail(errno);
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  int last = ENOENT;
  for (std::size_t from = 0; from <= dirs.size();) {
    std::size_t to = std::min(dirs.find(':', from), dirs.size());
    std::string dir = to > from ? dirs.substr(from, to - from) : ".";  // an empty entry is the current directory
    if (::access((dir + "/" + command).c_str(), X_OK) == 0) return Status::Ok();
    if (errno == EACCES) last = EACCES;  // found but not executable, as execvp reports it
    from = to + 1;
  }
  return fail(last);
}

// fork + exec rather than posix_spawn, for PR_SET_PDEATHSIG: when the recorder dies, even by
// SIGKILL, the command gets SIGTERM instead of living on as an orphan whose job holds the devices.
// An exec failure comes back through a close-on-exec pipe.
Result<ChildProcess> ChildProcess::spawn(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  if (argv.empty()) return InvalidArgument("no command to run");
  std::vector<std::string> args = argv;
  std::vector<std::string> environment = merged_environment(env);
  std::vector<char*> arg_ptrs = pointers(args);
  std::vector<char*> env_ptrs = pointers(environment);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return InvalidArgument("cannot run '" + argv[0] + "': " + std::strerror(errno));
  const pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) {
    int e = errno;
    ::close(fds[0]), ::close(fds[1]);
    return InvalidArgument("cannot run '" + argv[0] + "': " + std::strerror(e));
  }
  if (pid == 0) {  // the child: async-signal-safe calls only
    ::close(fds[0]);
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(127);  // the recorder died before the line above
    ::execvpe(arg_ptrs[0], arg_ptrs.data(), env_ptrs.data());
    int e = errno;
    ssize_t n = ::write(fds[1], &e, sizeof e);
    (void)n;
    ::_exit(127);
  }
  ::close(fds[1]);
  int e = 0;
  ssize_t n;
  do n = ::read(fds[0], &e, sizeof e); while (n < 0 && errno == EINTR);
  ::close(fds[0]);
  if (n == static_cast<ssize_t>(sizeof e)) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    return InvalidArgument("cannot run '" + argv[0] + "': " + std::strerror(e));
  }
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
