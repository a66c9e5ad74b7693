#include "workloads/run.hpp"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <thread>


namespace npukit::work {

using nlohmann::json;

Result<std::unique_ptr<DaemonBackend>> DaemonBackend::connect(const std::string& node) {
  auto client = telemetry::ShmClient::open({.node = node});
  if (!client.ok()) {
    // A cluster's own name has a control socket (cluster-wide device ids) and no bus: each host
    // publishes its own.
    auto cluster = telemetry::open_cluster(node, std::chrono::seconds(30));
    if (!cluster.ok()) return client.status();
    std::unique_ptr<DaemonBackend> b(new DaemonBackend());
    b->spec_ = cluster->status.value("spec", std::string());
    b->cluster_ = std::move(cluster->control);
    b->node_ = node;
    return b;
  }
  auto snap = (*client)->snapshot();
  if (!snap.ok()) return snap.status();
  if (snap->stale()) {
    return Status(Code::kUnavailable, "node '" + node + "' is stale (" + snap->stale_reason() +
                                          "); restart it with: npu-emud start --node-name " + node);
  }
  std::unique_ptr<DaemonBackend> b(new DaemonBackend());
  b->spec_ = snap->node().node_spec;
  b->client_ = std::move(*client);
  b->node_ = node;
  return b;
}

std::string DaemonBackend::describe() const { return "node '" + node_ + "' (" + spec_ + ")"; }

Result<json> DaemonBackend::control(const json& request) {
  return cluster_ ? cluster_->call(request) : client_->control(request);
}

Result<int> DaemonBackend::submit(const telemetry::Program& program) {
  auto reply = control({{"op", "submit"}, {"program", telemetry::program_to_json(program)}});
  if (!reply.ok()) return reply.status();
  if (Status s = telemetry::reply_status(*reply); !s.ok()) return s;  // PermissionDenied for another user
  return reply->value("job", 0);
}

Result<JobPoll> DaemonBackend::poll(int job, std::size_t since_step) {
  auto reply = control({{"op", "job_status"}, {"job", job}, {"since_step", since_step}});
  if (!reply.ok()) return reply.status();
  if (!reply->value("ok", false)) return InvalidArgument(reply->value("error", std::string("job_status refused")));
  const json& j = (*reply)["job"];
  JobPoll p;
  p.state = j.value("state", std::string());
  p.step_ms = j.value("step_ms", std::vector<double>{});
  p.steps_done = j.value("steps_done", int64_t{0});
  p.error = j.value("error", std::string());
  p.peak_reserved_bytes = j.value("peak_reserved_bytes", uint64_t{0});
  return p;
}

Status DaemonBackend::cancel(int job) {
  auto reply = control({{"op", "cancel"}, {"job", job}});
  return reply.ok() ? Status::Ok() : reply.status();
}

void DaemonBackend::wait(int) { std::this_thread::sleep_for(std::chrono::milliseconds(100)); }

namespace {

// A submit the node did not take: no node, another user's node, or a program it refused.
int exit_for_refused_submit(const Status& s) {
  if (s.code() == Code::kUnavailable) return kExitNoNode;
  return s.code() == Code::kPermissionDenied ? kExitPermission : kExitJobFailed;
}

// Follows one job to its end; returns its state and every step time.
struct Outcome {
  JobPoll last;
  std::vector<double> steps;
  bool interrupted = false;
};

Result<Outcome> follow(JobBackend& backend, int job, int64_t total, const RunOptions& o,
                       const std::function<void(std::size_t, double, double)>& on_step) {
  Outcome out;
  auto t0 = std::chrono::steady_clock::now();
  while (true) {
    if (o.interrupted && o.interrupted->load()) {
      (void)backend.cancel(job);
      out.interrupted = true;
    }
    auto p = backend.poll(job, out.steps.size());
    if (!p.ok()) return p.status();
    for (double ms : p->step_ms) {
      out.steps.push_back(ms);
      double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      double eta = wall / static_cast<double>(out.steps.size()) * static_cast<double>(total - static_cast<int64_t>(out.steps.size()));
      if (on_step) on_step(out.steps.size(), ms, eta);
    }
    out.last = *p;
    if (p->state != "running") return out;
    backend.wait(job);
  }
}

double steady_mean(const std::vector<double>& steps) {
  if (steps.empty()) return 0;
  std::size_t from = steps.size() > 1 ? 1 : 0;  // the first step warms caches and allocators
  return std::accumulate(steps.begin() + static_cast<long>(from), steps.end(), 0.0) /
         static_cast<double>(steps.size() - from);
}

int report_failure(const Outcome& r, const Workload& w, const RunOptions& o) {
  if (r.interrupted || r.last.state == "cancelled") {
    std::fprintf(o.err, "npu-run: %s interrupted after %zu steps; job cancelled, device memory released\n",
                 w.name.c_str(), r.steps.size());
    return kExitInterrupted;
  }
  std::fprintf(o.err, "npu-run: %s failed: %s\n", w.name.c_str(), r.last.error.c_str());
  return kExitJobFailed;
}

// What one step produces, in the workload's unit: samples over every data-parallel rank, or for
// hbm-bandwidth the GB every device moves (each D2D copy reads and writes its bytes).
double per_step(const Workload& w, int dp) {
  if (w.kind == "hbm-bandwidth") {
    return 2.0 * static_cast<double>(hbm_bandwidth_bytes(w)) * static_cast<double>(w.extra.copies_per_step) / 1e9;
  }
  // samples_per_step is one micro-batch's (a pipeline's or an accumulation's), as the layers' shapes are.
  return static_cast<double>(w.samples_per_step) * dp * w.micro_batches;
}

int run_model(const Workload& w, const CompiledPoint& point, JobBackend& backend, const RunOptions& o) {
  const auto& prog = point.program;
  int dp = static_cast<int>(prog.ranks.size()) / std::max(1, w.tp * w.pp);
  double samples = per_step(w, dp);
  auto job = backend.submit(prog);
  if (!job.ok()) {
    std::fprintf(o.err, "npu-run: %s\n", job.status().message().c_str());
    return exit_for_refused_submit(job.status());
  }
  std::string pipeline = w.pp > 1 ? " x pp " + std::to_string(w.pp) + ", " + std::to_string(w.micro_batches) + " micro-batches"
                         : w.micro_batches > 1 ? ", " + std::to_string(w.micro_batches) + " accumulation steps" : "";
  std::fprintf(o.out, "%s: %lld steps on %s, %zu devices (dp %d x tp %d%s), allocator %s\n", w.name.c_str(),
               static_cast<long long>(prog.repeat), backend.describe().c_str(), prog.ranks.size(), dp, w.tp,
               pipeline.c_str(), prog.allocator.c_str());
  auto result = follow(backend, *job, prog.repeat, o, [&](std::size_t i, double ms, double eta) {
    std::fprintf(o.out, "step %zu/%lld  %.2f ms  %.1f %s  ETA %.1f s\n", i, static_cast<long long>(prog.repeat), ms,
                 samples / (ms / 1000.0), w.unit.c_str(), eta);
    std::fflush(o.out);
  });
  if (!result.ok()) {
    std::fprintf(o.err, "npu-run: %s\n", result.status().message().c_str());
    return kExitNoNode;
  }
  if (result->last.state != "done") return report_failure(*result, w, o);
  double mean = steady_mean(result->steps);
  if (result->steps.size() < 2) {  // no steady step: say so rather than "mean over steps 2-1"
    std::fprintf(o.out, "%s: done\n  step time   %.2f ms (one step, the first: it includes the warm-up)\n",
                 w.name.c_str(), mean);
  } else {
    std::fprintf(o.out, "%s: done\n  step time   %.2f ms mean over steps 2-%zu (first step %.2f ms)\n", w.name.c_str(),
                 mean, result->steps.size(), result->steps.front());
  }
  std::fprintf(o.out, "  throughput  %.1f %s (%.1f %s per device)\n", samples / (mean / 1000.0), w.unit.c_str(),
               samples / (mean / 1000.0) / static_cast<double>(prog.ranks.size()), w.unit.c_str());
  std::fprintf(o.out, "  memory      %.0f MiB peak reserved per device\n",
               static_cast<double>(result->last.peak_reserved_bytes) / (1 << 20));
  return kExitOk;
}

void print_sweep_header(const Workload& w, const RunOptions& o) {
  if (w.kind == "matmul-sweep") {
    std::fprintf(o.out, "#%18s %12s %10s\n", "m x k x n", "time(us)", "TFLOPS");
  } else if (o.hccl_format) {
    std::fprintf(o.out, "%-16s %-14s %-18s %-18s %-10s\n", "data_size(Bytes):", "aveg_time(us):", "alg_bandwidth(GB/s):",
                 "bus_bandwidth(GB/s):", "check_result:");
  } else {
    std::fprintf(o.out, "#%12s %12s %8s %6s %10s %8s %8s\n", "size", "count", "type", "redop", "time", "algbw", "busbw");
    std::fprintf(o.out, "#%12s %12s %8s %6s %10s %8s %8s\n", "(B)", "(elements)", "", "", "(us)", "(GB/s)", "(GB/s)");
  }
}

int run_sweep(const Workload& w, const std::vector<CompiledPoint>& points, JobBackend& backend, const RunOptions& o) {
  print_sweep_header(w, o);
  for (const auto& point : points) {
    auto job = backend.submit(point.program);
    if (!job.ok()) {
      std::fprintf(o.err, "npu-run: %s\n", job.status().message().c_str());
      return exit_for_refused_submit(job.status());
    }
    auto r = follow(backend, *job, point.program.repeat, o, nullptr);
    if (!r.ok()) return kExitNoNode;
    if (r->last.state != "done") return report_failure(*r, w, o);
    double us = steady_mean(r->steps) * 1000.0;
    if (w.kind == "matmul-sweep") {
      std::fprintf(o.out, " %18s %12.2f %10.1f\n", point.label.c_str(), us, point.flops_per_step / (us * 1e-6) / 1e12);
      continue;
    }
    double n = static_cast<double>(point.program.ranks.size());
    double algbw = point.bytes_per_step / (us * 1e-6) / 1e9;
    double busbw = algbw * 2.0 * (n - 1) / std::max(1.0, n);
    if (o.hccl_format) {
      std::fprintf(o.out, "%-16.0f %-14.2f %-18.5f %-18.5f %s\n", point.bytes_per_step, us, algbw, busbw, "success");
    } else {
      std::fprintf(o.out, " %12.0f %12llu %8s %6s %10.2f %8.2f %8.2f\n", point.bytes_per_step,
                   static_cast<unsigned long long>(point.count), "float", "sum", us, algbw, busbw);
    }
    std::fflush(o.out);
  }
  return kExitOk;
}

}  // namespace

int run_workload(const Workload& w, const std::vector<CompiledPoint>& points, JobBackend& backend,
                 const RunOptions& o) {
  if (w.kind == "allreduce-sweep" || w.kind == "matmul-sweep") return run_sweep(w, points, backend, o);
  return run_model(w, points.front(), backend, o);
}

}  // namespace npukit::work
