// A real npu-emud daemon (8x910B2, paced) running in the fuzz target's process, for the targets
// that need a live node: its control socket and its shared-memory segment are the real ones.
#pragma once

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>

#include "emulator/daemon/daemon.hpp"

namespace npukit::fuzz {

class RunningDaemon {
 public:
  // Starts node `name` (aborts when it cannot: the target cannot run without it).
  explicit RunningDaemon(const std::string& name, double rate_hz = 10) {
    emu::DaemonOptions o;
    o.node_name = name;
    o.seed = 7;
    o.rate_hz = rate_hz;
    auto d = emu::Daemon::create(o);
    if (!d.ok()) {
      std::fprintf(stderr, "fuzz: cannot start the daemon: %s\n", d.status().message().c_str());
      std::abort();
    }
    daemon_ = std::move(*d);
    thread_ = std::thread([this] {
      daemon_->run();
      ended_ = true;
    });
  }
  ~RunningDaemon() {
    daemon_->request_stop();
    thread_.join();
  }
  RunningDaemon(const RunningDaemon&) = delete;
  RunningDaemon& operator=(const RunningDaemon&) = delete;

  emu::Daemon& daemon() { return *daemon_; }
  // True once run() returned (a `stop` request).
  bool ended() const { return ended_; }

 private:
  std::unique_ptr<emu::Daemon> daemon_;
  std::thread thread_;
  std::atomic<bool> ended_{false};
};

}  // namespace npukit::fuzz
