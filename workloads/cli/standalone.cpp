#include "workloads/cli/standalone.hpp"

#include <thread>

namespace npukit::work {

Result<std::unique_ptr<StandaloneBackend>> StandaloneBackend::create(const emu::NodeOptions& options, bool fast) {
  emu::NodeOptions o = options;
  o.mode = emu::TimeMode::kFast;  // pacing is done here, in wait(), so polling never blocks
  auto node = emu::Node::create(o);
  if (!node.ok()) return node.status();
  std::unique_ptr<StandaloneBackend> b(new StandaloneBackend());
  b->node_ = std::move(*node);
  b->fast_ = fast;
  b->speed_ = options.speed;
  b->wall_start_ = std::chrono::steady_clock::now();
  return b;
}

std::string StandaloneBackend::describe() const {
  return "an in-process " + node_->spec().name + " node (" + (fast_ ? "fast" : "paced") + ")";
}

Result<int> StandaloneBackend::submit(const telemetry::Program& program) {
  auto runner = emu::ProgramRunner::create(*node_, program);
  if (!runner.ok()) return runner.status();
  int id = next_++;
  Job& job = jobs_[id];
  job.runner = std::move(*runner);
  job.steps = emu::JobSteps(program.ranks.size());
  job.runner->start(
      [this, id](const emu::StepReport& s) {
        Job& j = jobs_[id];
        j.steps.add(s, j.step_ms);
      },
      [this, id](const Status& s) {
        Job& j = jobs_[id];
        j.state = s.ok() ? "done" : s.message() == "cancelled" ? "cancelled" : "failed";
        j.error = s.ok() ? "" : s.message();
      });
  wall_start_ = std::chrono::steady_clock::now();
  virtual_start_ = node_->now();
  return id;
}

Result<JobPoll> StandaloneBackend::poll(int job, std::size_t since_step) {
  auto it = jobs_.find(job);
  if (it == jobs_.end()) return NotFoundError("no job " + std::to_string(job));
  JobPoll p;
  const Job& j = it->second;
  p.state = j.state;
  p.error = j.error;
  p.steps_done = static_cast<int64_t>(j.step_ms.size());
  for (std::size_t i = std::min(since_step, j.step_ms.size()); i < j.step_ms.size(); ++i) p.step_ms.push_back(j.step_ms[i]);
  p.peak_reserved_bytes = j.runner->peak_reserved_bytes();
  return p;
}

Status StandaloneBackend::cancel(int job) {
  auto it = jobs_.find(job);
  if (it != jobs_.end() && it->second.state == "running") it->second.runner->cancel();
  return Status::Ok();
}

void StandaloneBackend::wait(int job) {
  Job& j = jobs_[job];
  if (fast_) {  // run until the next step completes (or the job ends)
    std::size_t before = j.step_ms.size();
    node_->scheduler().run_while([&] { return j.state == "running" && j.step_ms.size() == before; });
    if (j.state == "running" && j.step_ms.size() == before) {  // nothing left to run: a stuck job
      j.runner->cancel();
      j.state = "failed";
      j.error = "the job stopped making progress";
    }
    return;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  auto wall = std::chrono::steady_clock::now() - wall_start_;
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(wall).count();
  node_->scheduler().run_until(virtual_start_ + static_cast<emu::Nanos>(static_cast<double>(ns) * speed_));
}

}  // namespace npukit::work
