// Pipeline parallelism as Paddle's PipelineParallel runs it with the 1F1B schedule: the layers
// are cut into `pp` stages (contiguous, as even in op count as the layers allow), a step runs
// `micro_batches` micro-batches (the layers' shapes are one micro-batch's), and each stage
//   - runs min(pp - s - 1, M) forwards first (warm-up),
//   - then alternates one forward and one backward until every forward is done (steady 1F1B),
//   - then the remaining backwards (cool-down);
// a forward receives its input activation from the previous stage and sends its output to the
// next (point-to-point on the pipeline's communicator), a backward the other way round. The
// stages wait for each other at the Recvs: that wait is the pipeline's bubble, about
// (pp - 1) / (M + pp - 1) of the step. Gradients accumulate over the micro-batches and are
// reduced once across the data-parallel group after the last backward; then the optimizer.
#include <algorithm>

#include "workloads/compiler_parts.hpp"
#include "workloads/fusion.hpp"
#include "workloads/program_ops.hpp"

namespace npukit::work::detail {

namespace {

using telemetry::ProgramOp;

int matmuls(const std::vector<StepOp>& ops) {
  return static_cast<int>(std::count_if(ops.begin(), ops.end(), [](const StepOp& op) { return family_of(op.name) == Family::kMatmul; }));
}

// One stage of one pipeline, as its rank sees it.
struct Stage {
  Workload w;        // the stage's share: its parameters, its tensor-parallel syncs; dp 1 inside a step
  Forward fwd;       // its forward ops
  int stage = 0, stages = 1, rank = 0, pipe = 0;  // pipe: the pipeline's communicator
  uint64_t boundary = 1;  // elements of the activation (and its gradient) between this stage and the next
  uint64_t prev_boundary = 1;  // ... between the previous stage and this one
};

ProgramOp p2p(const Stage& st, const char* kind, uint64_t count, int peer, int stream) {
  ProgramOp op = p2p_op(kind, count, st.w.dtype, peer, stream);
  op.comm = st.pipe;
  return op;
}

// A send leaves the compute stream free: it waits for the compute that made its data on a stream
// of its own direction (forward sends on the comm stream, backward on the copy stream, as NCCL
// keeps a channel per peer). On one stream, a stage's send to the next would wait for that stage
// to receive while it waits to send its gradient back: 1F1B's deadlock, which batched p2p avoids.
void send(const Stage& st, uint64_t count, int peer, bool forward, std::vector<ProgramOp>& step) {
  const int stream = forward ? kComm : kCopy, id = forward ? 0 : 1;
  step.push_back(event_op(ProgramOp::Kind::kRecord, kCompute, id));
  step.push_back(event_op(ProgramOp::Kind::kWait, stream, id));
  step.push_back(p2p(st, "Send", count, peer, stream));
}

void forward(const Stage& st, int rank, std::vector<ProgramOp>& step) {
  if (st.stage > 0) step.push_back(p2p(st, "Recv", st.prev_boundary, st.stage - 1, kCompute));
  int syncs = matmuls(st.fwd.ops);
  for (const FusionGroup& g : fusion_groups(st.fwd.ops, st.w.fusion)) {
    step.push_back(kernel(fused_op(st.fwd.ops, g)));
    if (st.w.tp > 1 && family_of(st.fwd.ops[g.first].name) == Family::kMatmul && syncs > 0) {
      step.push_back(allreduce(static_cast<uint64_t>(st.w.tp_allreduce_bytes / 2 / syncs / dtype_bytes(st.w.dtype)),
                               tp_comm(st.w, rank), st.w.dtype, kCompute));
    }
  }
  if (st.stage + 1 < st.stages) send(st, st.boundary, st.stage + 1, true, step);
}

void backward(const Stage& st, int rank, std::vector<ProgramOp>& step) {
  if (st.stage + 1 < st.stages) step.push_back(p2p(st, "Recv", st.boundary, st.stage + 1, kCompute));
  add_backward(st.w, st.fwd, rank, step, nullptr, /*sync_grads=*/false);  // st.w.dp is 1: reduced below
  if (st.stage > 0) send(st, st.prev_boundary, st.stage - 1, false, step);
}

Stage stage_for(const Workload& w, const Forward& fwd, int rank) {
  Stage st;
  st.stage = stage_of(w, rank), st.stages = w.pp, st.rank = rank, st.pipe = pp_comm(w, rank);
  const std::size_t n = fwd.ops.size();
  const std::size_t lo = n * static_cast<std::size_t>(st.stage) / static_cast<std::size_t>(w.pp);
  const std::size_t hi = n * static_cast<std::size_t>(st.stage + 1) / static_cast<std::size_t>(w.pp);
  for (std::size_t i = lo; i < hi; ++i) {
    st.fwd.ops.push_back(fwd.ops[i]);
    st.fwd.trainable.push_back(fwd.trainable[i]);
    st.fwd.vary.push_back(fwd.vary[i]);
  }
  st.fwd.activation_bytes = n == 0 ? 0 : fwd.activation_bytes * (hi - lo) / n;
  auto elements_out = [&](std::size_t i) { return std::max<uint64_t>(output_bytes(fwd.ops[i], w.dtype) / dtype_bytes(w.dtype), 1); };
  if (hi > lo) st.boundary = elements_out(hi - 1);
  if (lo > 0) st.prev_boundary = elements_out(lo - 1);
  st.w = w;
  st.w.dp = 1;  // gradients are reduced once per step, after the last micro-batch (below)
  st.w.params = w.params / w.pp;
  const int all = matmuls(fwd.ops);
  st.w.tp_allreduce_bytes = all > 0 ? w.tp_allreduce_bytes * matmuls(st.fwd.ops) / all : 0;
  return st;
}

}  // namespace

telemetry::RankProgram pipeline_rank(const Workload& w, const Forward& fwd, int rank, bool train) {
  const Stage st = stage_for(w, fwd, rank);
  const int micro = w.micro_batches, warmup = std::min(w.pp - st.stage - 1, micro);
  telemetry::RankProgram rp;
  rp.streams = 3;
  rp.events = 2;
  const auto shard = static_cast<uint64_t>(st.w.params / w.tp);
  add_model_state(w, shard, train, rp.setup);
  auto& step = rp.step;
  if (st.stage == 0) {  // the first stage reads the input
    if (w.loader_ms > 0) step.push_back(delay(w.loader_ms));
    if (w.host_input_samples_per_s > 0 && rank % w.tp == 0) step.push_back(input_op(w.samples_per_step * w.micro_batches));
    // Every micro-batch's input (samples_per_step is one micro-batch's).
    step.push_back(memcpy_op("H2D", std::max<uint64_t>(static_cast<uint64_t>(w.input_bytes_per_sample * w.samples_per_step * w.micro_batches), 1), kCompute));
  }
  // 1F1B holds at most (stages - stage) micro-batches' activations at a time.
  const auto in_flight = static_cast<uint64_t>(std::min(w.pp - st.stage, micro));
  step.push_back(alloc("activations", std::max<uint64_t>(st.fwd.activation_bytes * (train ? in_flight : 1), 512)));
  if (!train) {
    for (int m = 0; m < micro; ++m) forward(st, rank, step);
  } else {
    for (int m = 0; m < warmup; ++m) forward(st, rank, step);
    for (int m = warmup; m < micro; ++m) {
      forward(st, rank, step);
      backward(st, rank, step);
    }
    for (int m = 0; m < warmup; ++m) backward(st, rank, step);
    if (w.dp > 1) step.push_back(allreduce(shard, dp_comm(w, rank), w.dtype, kCompute));
    add_optimizer(st.w, step);
  }
  step.push_back(buffer_op(ProgramOp::Kind::kFree, "activations"));
  return rp;
}

}  // namespace npukit::work::detail
