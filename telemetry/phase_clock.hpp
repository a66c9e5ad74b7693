// What a worker thread is doing and for how long, read from other threads for a stall's report:
// its current phase with its age, and the longest phase it went through in the last 10 s
// ("waiting for 0.051 s; longest recent: publishing, 0.012 s"). The daemon's node thread and the
// control server's thread keep one each (Daemon::activity reports both).
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

namespace npukit::telemetry {

class PhaseClock {
 public:
  PhaseClock();
  // `phase` must outlive the clock (a string literal).
  void enter(const char* phase);
  const char* phase() const { return phase_.load(); }
  // "<phase><detail> for S s; longest recent: <phase>, S s". Thread-safe.
  std::string describe(const std::string& detail = "") const;

 private:
  std::atomic<const char*> phase_{"starting"};
  std::atomic<int64_t> since_ns_;
  std::atomic<const char*> longest_{"none"};
  std::atomic<int64_t> longest_ns_{0};
  std::atomic<int64_t> longest_at_ns_{0};
};

}  // namespace npukit::telemetry
