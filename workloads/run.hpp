// Running compiled workloads: submit each program to a backend (the daemon over the bus, or an
// in-process node), follow its steps, print progress and a summary.
//
// Output (the user interface; tests parse it):
//   step 3/20  121.34 ms  16874.5 img/s  ETA 2.4 s
//   resnet50-train: done, 20 steps on 8 devices (dp 8 x tp 1), allocator caching
//     step time   121.40 ms mean over steps 2-20 (first step 125.21 ms)
//     throughput  16868.1 img/s (2108.5 img/s per device)
// Sweeps print tables (nccl-tests columns for allreduce-sweep; --hccl-format for HCCL test's).
// Exit codes: 0 ok, 1 the job failed (the runtime's error is printed), 2 usage or bad workload,
// 3 no node to run on, 4 the node is another user's (it cannot be read, or it refuses this user's
// jobs: only its owner may submit), 130 interrupted (the job is cancelled and its memory released).
#pragma once

#include "telemetry/exit_codes.hpp"
#include <atomic>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "telemetry/client.hpp"
#include "workloads/compiler.hpp"

namespace npukit::work {

inline constexpr int kExitOk = exit_code::kOk;
inline constexpr int kExitJobFailed = 1;
inline constexpr int kExitUsage = exit_code::kUsage;
inline constexpr int kExitNoNode = exit_code::kNoNode;
inline constexpr int kExitPermission = exit_code::kNoAccess;
inline constexpr int kExitInterrupted = exit_code::kInterrupted;

struct JobPoll {
  std::string state;            // running, done, failed, cancelled
  std::vector<double> step_ms;  // steps completed since the `since_step` asked for
  int64_t steps_done = 0;
  std::string error;
  uint64_t peak_reserved_bytes = 0;
};

class JobBackend {
 public:
  virtual ~JobBackend() = default;
  virtual Result<int> submit(const telemetry::Program& program) = 0;
  virtual Result<JobPoll> poll(int job, std::size_t since_step) = 0;
  virtual Status cancel(int job) = 0;
  // Lets time pass until there may be news (the daemon: sleep; in-process: simulate).
  virtual void wait(int job) = 0;
  virtual std::string describe() const = 0;  // "node 'npukit' (8x910B2)"
  virtual std::string spec_name() const = 0;  // the node's spec, as load_node_spec takes it ("2x8x910B2")
};

// Jobs on a running npu-emud, through its control socket.
class DaemonBackend final : public JobBackend {
 public:
  static Result<std::unique_ptr<DaemonBackend>> connect(const std::string& node);
  Result<int> submit(const telemetry::Program& program) override;
  Result<JobPoll> poll(int job, std::size_t since_step) override;
  Status cancel(int job) override;
  void wait(int job) override;
  std::string describe() const override;
  std::string spec_name() const override { return spec_; }

 private:
  Result<nlohmann::json> control(const nlohmann::json& request);
  std::unique_ptr<telemetry::Client> client_;          // a node's (or one host's) bus
  std::unique_ptr<telemetry::ControlClient> cluster_;  // a cluster's own name: its socket alone
  std::string node_;
  std::string spec_;
};

struct RunOptions {
  bool hccl_format = false;
  const std::atomic<bool>* interrupted = nullptr;
  std::FILE* out = stdout;
  std::FILE* err = stderr;
};

// Runs every point of a compiled workload; returns the exit code.
int run_workload(const Workload& w, const std::vector<CompiledPoint>& points, JobBackend& backend,
                 const RunOptions& options);

}  // namespace npukit::work
