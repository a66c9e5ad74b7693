// npu-run --standalone: the jobs run on a node inside this process (no daemon), in fast mode
// (as fast as possible) or paced (virtual time follows wall time x speed).
#pragma once

#include <chrono>
#include <map>
#include <memory>

#include "emulator/runtime/job_steps.hpp"
#include "emulator/runtime/node.hpp"
#include "emulator/runtime/program_runner.hpp"
#include "workloads/run.hpp"

namespace npukit::work {

class StandaloneBackend final : public JobBackend {
 public:
  static Result<std::unique_ptr<StandaloneBackend>> create(const emu::NodeOptions& options, bool fast);
  Result<int> submit(const telemetry::Program& program) override;
  Result<JobPoll> poll(int job, std::size_t since_step) override;
  Status cancel(int job) override;
  void wait(int job) override;
  std::string describe() const override;
  std::string spec_name() const override { return node_->spec().name; }
  emu::Node& node() { return *node_; }

 private:
  struct Job {
    std::unique_ptr<emu::ProgramRunner> runner;
    std::vector<double> step_ms;  // the job's step times (every rank done), virtual ms
    emu::JobSteps steps;
    std::string state = "running";
    std::string error;
  };
  std::unique_ptr<emu::Node> node_;
  bool fast_ = true;
  double speed_ = 1.0;
  std::chrono::steady_clock::time_point wall_start_;
  emu::Nanos virtual_start_ = 0;
  std::map<int, Job> jobs_;
  int next_ = 1;
};

// mlp-train: a small MLP trained with real numbers on the emulated device (functional mode).
int run_mlp_train(int steps, uint64_t seed, const std::string& spec, std::FILE* out, std::FILE* err);

}  // namespace npukit::work
