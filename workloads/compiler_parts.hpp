// The workload compiler's parts shared by its files (compiler.cpp: data and tensor parallel
// steps; pipeline.cpp: pipeline-parallel stages). Internal to workloads/.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "telemetry/program.hpp"
#include "workloads/ops.hpp"
#include "workloads/workload.hpp"

namespace npukit::work::detail {

inline constexpr int kCompute = 0, kCopy = 1, kComm = 2;  // a rank's streams

std::size_t dtype_bytes(const std::string& dtype);
telemetry::ProgramOp kernel(const StepOp& s, int stream = kCompute);
telemetry::ProgramOp alloc(const std::string& buf, uint64_t bytes);
telemetry::ProgramOp allreduce(uint64_t count, int comm, const std::string& dtype, int stream);
telemetry::ProgramOp event_op(telemetry::ProgramOp::Kind kind, int stream, int event);  // record / wait
telemetry::ProgramOp delay(double ms);
telemetry::ProgramOp input_op(int64_t samples);  // take samples from the host's input pipeline
uint64_t output_bytes(const StepOp& op, const std::string& dtype);

// The forward layers, expanded by their repeat counts, and the activation bytes they produce.
struct Forward {
  std::vector<StepOp> ops;
  std::vector<bool> trainable;
  std::vector<const telemetry::ProgramOp::Vary*> vary;  // per op: its layer's varying dim
  uint64_t activation_bytes = 0;                         // the largest step's
  std::vector<uint64_t> activation_bytes_by_step;        // varying layers: step k's is [k % n]
};
Forward expand(const Workload& w);

// Rank layout and communicator indices (compiler.cpp).
int stage_of(const Workload& w, int rank);
int dp_comm(const Workload& w, int rank);
int tp_comm(const Workload& w, int rank);
int pp_comm(const Workload& w, int rank);
std::vector<telemetry::CommSpec> communicators(const Workload& w);

struct TensorAllocs;
// The backward kernels of `fwd` (in reverse, fused), with their tensor-parallel syncs and, with
// dp > 1 and `sync_grads` (the step's last micro-batch), the gradient buckets' AllReduce;
// `tensors` allocates each tensor (direct allocator).
void add_backward(const Workload& w, const Forward& fwd, int rank, std::vector<telemetry::ProgramOp>& step,
                  TensorAllocs* tensors, bool sync_grads);
void add_optimizer(const Workload& w, std::vector<telemetry::ProgramOp>& step);
void add_model_state(const Workload& w, uint64_t shard, bool train, std::vector<telemetry::ProgramOp>& setup);

// One pipeline stage's rank (pipeline.cpp): its share of the layers, micro-batches in the 1F1B
// schedule with point-to-point sends of activations and gradients between stages.
telemetry::RankProgram pipeline_rank(const Workload& w, const Forward& fwd, int rank, bool train);

}  // namespace npukit::work::detail
