// Compiles a workload into per-rank programs (telemetry/program.hpp) for the emulator.
//
// Training step per rank (streams: 0 compute, 1 input copy, 2 communication):
//   host loader delay -> input H2D (stream 1) -> event -> forward layers (stream 0)
//   -> backward ops in reverse, and after each 1/B of them a gradient bucket AllReduce on the
//   data-parallel communicator (stream 2, overlapping the rest of backward)
//   -> compute waits for the last bucket -> optimizer update -> activations freed.
// Ops fuse into one kernel as CANN's graph compiler fuses them (fusion.hpp) unless the workload
// or the options turn fusion off.
// Tensor parallelism (tp > 1) shards the layers as the workload file describes them and adds
// AllReduces on the tensor-parallel communicator after each matmul, forward and backward,
// `tp_allreduce_bytes` per step in all. Inference: loader, H2D, forward, D2H.
// Sweeps (allreduce-sweep, matmul-sweep) compile to one program per point.
#pragma once

#include <string>
#include <vector>

#include "telemetry/program.hpp"
#include "workloads/workload.hpp"

namespace npukit::work {

struct CompileOptions {
  int64_t steps = 0;             // 0: the workload's
  std::vector<int> devices;      // empty: the workload's, else 0..ranks-1
  std::string allocator;         // empty: the workload's
  bool fusion = true;            // false: no op fusion whatever the workload says (npu-run --no-fusion)
  double host_input_samples_per_s = -1;  // >= 0: replaces the workload's (npu-run --host-input-rate)
  std::string process_name = "npu-run";
};

// One program to run, with what its steps mean.
struct CompiledPoint {
  telemetry::Program program;
  std::string label;            // sweep point ("8 B", "4096x4096x4096"); empty for a model
  double flops_per_step = 0;    // matmul-sweep: arithmetic per step
  double bytes_per_step = 0;    // hbm-bandwidth / allreduce-sweep: bytes per step (per rank)
  uint64_t count = 0;           // allreduce-sweep: elements
};

Result<std::vector<CompiledPoint>> compile_workload(const Workload& w, const CompileOptions& options);

}  // namespace npukit::work
