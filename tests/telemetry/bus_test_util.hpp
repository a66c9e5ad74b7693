// Shared helpers for the bus tests: unique node names (tests run in parallel under ctest -j),
// cleanup, a child-process handle for the helper executable, polling.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cctype>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "telemetry/naming.hpp"
#include "telemetry/reader.hpp"
#include "tests/telemetry/bus_fixtures.hpp"

extern char** environ;

namespace npukit::telemetry::testing {

// "t<pid>-<test name>", trimmed to the 48-character limit and the allowed characters.
inline std::string unique_node(const std::string& suffix = "") {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = "t" + std::to_string(::getpid()) + "-" + info->name() + suffix;
  for (char& c : name) {
    bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
    if (!ok) c = '_';
  }
  if (name.size() > 48) name = name.substr(0, 40) + "-" + std::to_string(std::hash<std::string>{}(name) % 10000000);
  return name;
}

// Removes the node's segment and socket when the test ends, whatever happened.
class NodeCleanup {
 public:
  explicit NodeCleanup(std::string node) : node_(std::move(node)) {}
  ~NodeCleanup() {
    ::shm_unlink(shm_name(node_).c_str());
    ::unlink(control_socket_path(node_).c_str());
  }

 private:
  std::string node_;
};

// A writer and a reader of one fresh node; the segment and socket are removed at the end.
struct TestBus {
  std::string node;
  NodeCleanup cleanup;
  std::unique_ptr<Writer> writer;  // null when creation failed (the test has already failed)
  std::unique_ptr<Reader> reader;
};

// `tune` adjusts small_options() before the writer is created.
inline std::unique_ptr<TestBus> open_test_bus(const std::function<void(WriterOptions&)>& tune = {}) {
  std::string node = unique_node();
  auto bus = std::unique_ptr<TestBus>(new TestBus{node, NodeCleanup(node), nullptr, nullptr});
  WriterOptions o = small_options(node);
  if (tune) tune(o);
  auto w = Writer::create(o);
  EXPECT_TRUE(w.ok()) << w.status().message();
  if (!w.ok()) return bus;
  auto r = Reader::open({node});
  EXPECT_TRUE(r.ok()) << r.status().message();
  if (!r.ok()) return bus;
  bus->writer = std::move(*w);
  bus->reader = std::move(*r);
  return bus;
}

// A helper process (tests/telemetry_helper) with its stdout on a pipe.
class Child {
 public:
  explicit Child(const std::vector<std::string>& args) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    std::vector<std::string> all = {TELEMETRY_HELPER_PATH};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (posix_spawn(&pid_, TELEMETRY_HELPER_PATH, &fa, nullptr, argv.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&fa);
    ::close(fds[1]);
    out_ = fds[0];
  }
  ~Child() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    if (out_ >= 0) ::close(out_);
  }
  pid_t pid() const { return pid_; }
  // The next line of the child's stdout ("" on EOF or timeout).
  std::string read_line(std::chrono::seconds timeout = std::chrono::seconds(60)) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    std::string line;
    char c;
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd p{out_, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      if (::read(out_, &c, 1) != 1) break;
      if (c == '\n') return line;
      line += c;
    }
    return line;
  }
  // Waits for exit; the exit status, or 128 + signal.
  int wait() {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  void signal(int sig) { ::kill(pid_, sig); }

 private:
  pid_t pid_ = -1;
  int out_ = -1;
};

// Polls `pred` until it holds or `timeout` passes.
template <typename Pred>
bool eventually(Pred pred, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return pred();
}

// Scales loop counts down under sanitizers, which run 5-20x slower.
inline uint64_t scaled(uint64_t n) {
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
  return n / 5;
#else
  return n;
#endif
}

}  // namespace npukit::telemetry::testing
