#include "workloads/compiler.hpp"
#include "workloads/compiler_parts.hpp"
#include "workloads/program_ops.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <tuple>

#include "workloads/fusion.hpp"
#include "workloads/ops.hpp"

namespace npukit::work {

namespace detail {

using telemetry::ProgramOp;
using Kind = ProgramOp::Kind;
using nlohmann::json;

std::size_t dtype_bytes(const std::string& dtype) {
  if (dtype == "float32" || dtype == "int32") return 4;
  if (dtype == "int64") return 8;
  if (dtype == "int8" || dtype == "bool") return 1;
  return 2;
}

ProgramOp kernel(const StepOp& s, int stream) {
  ProgramOp op;
  op.kind = Kind::kKernel;
  op.stream = stream;
  op.name = s.name;
  op.inputs = json::array();
  for (std::size_t i = 0; i < s.inputs.size(); ++i) op.inputs.push_back({{"shape", s.inputs[i]}, {"dtype", s.dtypes[i]}});
  op.attrs = s.attrs.is_object() ? s.attrs : nlohmann::json::object();
  op.attrs.erase("comment");
  return op;
}

ProgramOp alloc(const std::string& buf, uint64_t bytes) {
  ProgramOp op = op_of(Kind::kAlloc);
  op.buffer = buf;
  op.bytes = std::max<uint64_t>(bytes, 512);
  return op;
}

ProgramOp event_op(Kind kind, int stream, int event) {
  ProgramOp op = op_of(kind, stream);
  op.event = event;
  return op;
}

ProgramOp allreduce(uint64_t count, int comm, const std::string& dtype, int stream) {
  ProgramOp op = op_of(Kind::kCollective, stream);
  op.name = "AllReduce";
  op.count = std::max<uint64_t>(count, 1);
  op.dtype = dtype;
  op.comm = comm;
  return op;
}

ProgramOp delay(double ms) {
  ProgramOp op = op_of(Kind::kHostDelay);
  op.ns = static_cast<int64_t>(ms * 1e6);
  return op;
}

ProgramOp input_op(int64_t samples) {
  ProgramOp op = op_of(Kind::kInput);
  op.count = static_cast<uint64_t>(std::max<int64_t>(samples, 1));
  return op;
}


// The activation bytes of the forward layers when each varying layer has its k-th value: each
// op's output, except a value passed inside a fused kernel (`materialized[i]` false), which never
// exists in HBM. Ops in expansion order (layers, then their repeats).
uint64_t activation_bytes_at(const Workload& w, const std::vector<bool>& materialized, std::size_t k) {
  uint64_t total = 0;
  std::size_t i = 0;
  for (const Layer& l : w.layers) {
    StepOp op = forward_op(l, w.dtype);
    if (!l.vary.values.empty()) {
      op.inputs[static_cast<std::size_t>(l.vary.input)][static_cast<std::size_t>(l.vary.dim)] = l.vary.values[k % l.vary.values.size()];
    }
    auto bytes = static_cast<uint64_t>(elements(output_shape(op))) * dtype_bytes(w.dtype);
    for (int64_t r = 0; r < l.repeat; ++r, ++i) total += materialized[i] ? bytes : 0;
  }
  return total;
}

// Per forward op: whether its output is written to HBM (the last op of its fusion group).
std::vector<bool> materialized_outputs(const Workload& w, const Forward& f) {
  std::vector<bool> fusible;
  for (const auto* vary : f.vary) fusible.push_back(vary->values.empty());
  std::vector<bool> out(f.ops.size(), false);
  for (const FusionGroup& g : fusion_groups(f.ops, w.fusion, fusible)) out[g.first + g.count - 1] = true;
  return out;
}

// How many steps the varying layers take to repeat (1 when none varies; 0 when more than a
// program can list: the activations are then allocated at their largest every step).
std::size_t vary_period(const Workload& w) {
  std::size_t n = 1;
  for (const Layer& l : w.layers) {
    if (l.vary.values.empty()) continue;
    n = std::lcm(n, l.vary.values.size());
    if (n > telemetry::kMaxVaryValues) return 0;
  }
  return n;
}

Forward expand(const Workload& w) {
  Forward f;
  for (const Layer& l : w.layers) {
    StepOp op = forward_op(l, w.dtype);
    for (int64_t r = 0; r < l.repeat; ++r) {
      f.ops.push_back(op);
      f.trainable.push_back(l.trainable);
      f.vary.push_back(&l.vary);
    }
  }
  std::vector<bool> materialized = materialized_outputs(w, f);
  std::size_t period = vary_period(w);
  if (period == 0) {  // too many combinations to list: every varying layer at its largest size
    Workload largest = w;
    for (Layer& l : largest.layers) {
      if (!l.vary.values.empty()) l.vary.values = {*std::max_element(l.vary.values.begin(), l.vary.values.end())};
    }
    f.activation_bytes_by_step = {activation_bytes_at(largest, materialized, 0)};
  }
  for (std::size_t k = 0; k < period; ++k) f.activation_bytes_by_step.push_back(activation_bytes_at(w, materialized, k));
  f.activation_bytes = *std::max_element(f.activation_bytes_by_step.begin(), f.activation_bytes_by_step.end());
  if (f.activation_bytes_by_step.size() == 1) f.activation_bytes_by_step.clear();
  return f;
}

// Rank layout, as Paddle's hybrid topology orders its axes (data outermost, then pipe, then
// model): rank = (dp_index x pp + stage) x tp + tp_index. Communicators: 0 world, then one per dp
// group (ranks sharing a stage and a tp index), one per tp group, and with pp > 1 one per
// pipeline (ranks sharing a dp and a tp index, in stage order).
int stage_of(const Workload& w, int rank) { return (rank / w.tp) % w.pp; }
int dp_comm(const Workload& w, int rank) { return 1 + stage_of(w, rank) * w.tp + rank % w.tp; }
int tp_comm(const Workload& w, int rank) { return 1 + w.tp * w.pp + rank / w.tp; }
int pp_comm(const Workload& w, int rank) { return 1 + w.tp * w.pp * (1 + w.dp) + (rank / (w.tp * w.pp)) * w.tp + rank % w.tp; }

std::vector<telemetry::CommSpec> communicators(const Workload& w) {
  std::vector<telemetry::CommSpec> comms{{"world", "auto", {}}};
  auto rank = [&w](int d, int s, int t) { return (d * w.pp + s) * w.tp + t; };
  for (int s = 0; s < w.pp; ++s) {
    for (int t = 0; t < w.tp; ++t) {
      telemetry::CommSpec c{"dp" + std::to_string(s * w.tp + t), "auto", {}};
      for (int d = 0; d < w.dp; ++d) c.ranks.push_back(rank(d, s, t));
      comms.push_back(c);
    }
  }
  for (int g = 0; g < w.dp * w.pp; ++g) {
    telemetry::CommSpec c{"tp" + std::to_string(g), "auto", {}};
    for (int t = 0; t < w.tp; ++t) c.ranks.push_back(g * w.tp + t);
    comms.push_back(c);
  }
  for (int d = 0; w.pp > 1 && d < w.dp; ++d) {
    for (int t = 0; t < w.tp; ++t) {
      telemetry::CommSpec c{"pp" + std::to_string(d * w.tp + t), "auto", {}};
      for (int s = 0; s < w.pp; ++s) c.ranks.push_back(rank(d, s, t));
      comms.push_back(c);
    }
  }
  return comms;
}

// Per-tensor allocation, as a framework without a caching allocator does it (Paddle's NPU
// allocator, the seed's case): every tensor a kernel makes is its own runtime allocation, freed
// when its last reader is done. Activations: each forward kernel's output, allocated before the
// kernel and freed once the backward of the kernel's first op is done. Gradients: each backward
// kernel's output, freed after the next backward kernel read it. (With a caching allocator those
// calls cost nothing on the device, so the compiler keeps one activation buffer per step.)
struct TensorAllocs {
  std::vector<std::pair<std::size_t, std::string>> live;  // (forward kernel's first op, buffer), in order
  int grads = 0;                                          // gradient buffers allocated so far
};

uint64_t output_bytes(const StepOp& op, const std::string& dtype) {
  return static_cast<uint64_t>(std::max<int64_t>(elements(output_shape(op)), 1)) * dtype_bytes(dtype);
}

// Before a backward kernel: its output's buffer.
void alloc_grad(const Workload& w, const StepOp& last, TensorAllocs& t, std::vector<ProgramOp>& step) {
  step.push_back(alloc("grad" + std::to_string(t.grads++), output_bytes(last, w.dtype)));
}

// After a backward kernel whose ops came from forward ops >= `origin`: the previous gradient and
// every activation whose backward is now complete are freed.
void free_consumed(std::size_t origin, TensorAllocs& t, std::vector<ProgramOp>& step) {
  if (t.grads > 1) step.push_back(buffer_op(Kind::kFree, "grad" + std::to_string(t.grads - 2)));
  while (!t.live.empty() && t.live.back().first > origin) {
    step.push_back(buffer_op(Kind::kFree, t.live.back().second));
    t.live.pop_back();
  }
}

void free_all(TensorAllocs& t, std::vector<ProgramOp>& step) {
  if (t.grads > 0) step.push_back(buffer_op(Kind::kFree, "grad" + std::to_string(t.grads - 1)));
  for (auto it = t.live.rbegin(); it != t.live.rend(); ++it) step.push_back(buffer_op(Kind::kFree, it->second));
  t.live.clear();
}

// `sync_grads`: this backward ends the step's accumulation, so its gradient buckets are allreduced
// across the data-parallel group as they complete (earlier micro-batches only accumulate).
void add_backward(const Workload& w, const Forward& fwd, int rank, std::vector<ProgramOp>& step, TensorAllocs* tensors,
                  bool sync_grads) {
  std::vector<StepOp> bwd;
  std::vector<bool> mm;              // a matmul's grad (a tensor-parallel sync follows it)
  std::vector<std::size_t> origin;   // the forward op it is the gradient of
  for (std::size_t i = fwd.ops.size(); i-- > 0;) {
    if (!fwd.trainable[i]) continue;
    for (auto& g : backward_ops(fwd.ops[i], w.dtype)) {
      bwd.push_back(g);
      mm.push_back(family_of(fwd.ops[i].name) == Family::kMatmul);
      origin.push_back(i);
    }
  }
  uint64_t grad_elems = static_cast<uint64_t>(w.params / w.tp);
  int buckets = w.dp > 1 && sync_grads ? w.grad_buckets : 0;
  std::size_t per_bucket = buckets ? std::max<std::size_t>(1, bwd.size() / buckets) : 0;
  int tp_syncs = static_cast<int>(std::count(mm.begin(), mm.end(), true));
  int bucket = 0;
  for (const FusionGroup& g : fusion_groups(bwd, w.fusion)) {
    std::size_t i = g.first + g.count - 1;  // the group's last op: buckets close after it
    if (tensors) alloc_grad(w, bwd[i], *tensors, step);
    step.push_back(kernel(fused_op(bwd, g)));
    if (tensors) free_consumed(origin[i], *tensors, step);
    if (w.tp > 1 && mm[g.first] && tp_syncs > 0) {
      step.push_back(allreduce(static_cast<uint64_t>(w.tp_allreduce_bytes / 2 / tp_syncs / dtype_bytes(w.dtype)),
                               tp_comm(w, rank), w.dtype, kCompute));
    }
    bool crossed = per_bucket && (i + 1) / per_bucket > g.first / per_bucket;  // a boundary inside the group
    bool bucket_done = buckets && (crossed || i + 1 == bwd.size()) && bucket < buckets;
    if (bucket_done) {
      step.push_back(event_op(Kind::kRecord, kCompute, 1 + bucket));
      step.push_back(event_op(Kind::kWait, kComm, 1 + bucket));
      step.push_back(allreduce(grad_elems / buckets, dp_comm(w, rank), w.dtype, kComm));
      ++bucket;
    }
  }
  if (buckets) {
    step.push_back(event_op(Kind::kRecord, kComm, 1 + w.grad_buckets));
    step.push_back(event_op(Kind::kWait, kCompute, 1 + w.grad_buckets));
  }
  if (tensors) free_all(*tensors, step);
}

// The step's update of the rank's parameter shard: with float32 master weights the gradients are
// cast to float32 first (into a buffer the step allocates and frees) and the updated weights back
// after; the gradients are unscaled (mixed precision's loss scale) and clipped by their norm when
// the workload says so; then the optimizer. The norm is the shard's: with tp or pp > 1 a global
// norm would also allreduce one scalar across the group, which is not modelled.
void add_optimizer(const Workload& w, std::vector<ProgramOp>& step) {
  int64_t n = std::max<int64_t>(1, w.params / w.tp);
  if (w.optimizer == "none") return;
  bool cast = w.master_weights && w.dtype != "float32";
  const std::string grads = cast ? "float32" : w.dtype;
  auto cast_op = [n](const std::string& from, const std::string& to) {
    return kernel({"Cast", {{n}}, {from}, {{"dst_type", to}}});
  };
  if (cast) {
    step.push_back(alloc("grads_fp32", static_cast<uint64_t>(n) * 4));
    step.push_back(cast_op(w.dtype, "float32"));
  }
  if (w.loss_scale > 0) step.push_back(kernel({"Mul", {{n}, {1}}, {grads, grads}, {}}));
  if (w.clip_grad_norm > 0) step.push_back(kernel({"ClipByNorm", {{n}}, {grads}, {{"clip_norm", w.clip_grad_norm}}}));
  if (w.keeps_optimizer_state()) {
    const char* op = w.optimizer == "lamb" ? "ApplyLamb" : "ApplyAdam";
    step.push_back(kernel({op, {{n}, {n}, {n}, {n}}, {"float32", "float32", "float32", "float32"}, {{"step", 1}}}));
  } else {
    step.push_back(kernel({"aten::add", {{n}, {n}}, {"float32", "float32"}, {}}));
  }
  if (cast) {
    step.push_back(buffer_op(ProgramOp::Kind::kFree, "grads_fp32"));
    step.push_back(cast_op("float32", w.dtype));
  }
}

// What a rank holds from its setup: its weight shard, and for training its gradients and the
// optimizer's state (float32 master weights and two moments: 12 bytes a parameter).
void add_model_state(const Workload& w, uint64_t shard, bool train, std::vector<ProgramOp>& setup) {
  setup.push_back(alloc("weights", shard * dtype_bytes(w.dtype)));
  if (!train) return;
  setup.push_back(alloc("grads", shard * dtype_bytes(w.dtype)));
  if (w.keeps_optimizer_state()) setup.push_back(alloc("optimizer", shard * 12));
}

// One micro-batch of a step (the whole step without accumulation): its input, forward and
// backward (or the inference's result copy), the optimizer after the `last` one's backward, with
// its activations allocated and freed.
void add_micro_batch(const Workload& w, const Forward& fwd, int rank, bool train, const ProgramOp& activation_alloc,
                     bool per_tensor, bool last, std::vector<ProgramOp>& step) {
  // The first rank of each tensor-parallel group takes the replica's batch from its host's input
  // pipeline (its tp peers wait for it at their first collective).
  if (w.host_input_samples_per_s > 0 && rank % w.tp == 0) step.push_back(input_op(w.samples_per_step));
  bool varying = !fwd.activation_bytes_by_step.empty();
  TensorAllocs tensors;
  if (!varying && !per_tensor) step.push_back(activation_alloc);
  step.push_back(memcpy_op("H2D", std::max<uint64_t>(static_cast<uint64_t>(w.input_bytes_per_sample * w.samples_per_step), 1), kCopy));
  step.push_back(event_op(Kind::kRecord, kCopy, 0));
  step.push_back(event_op(Kind::kWait, kCompute, 0));
  int tp_syncs = 0;
  for (const auto& op : fwd.ops) tp_syncs += family_of(op.name) == Family::kMatmul;
  std::vector<bool> fusible;  // an op whose shape varies by step stays its own kernel
  for (const auto* vary : fwd.vary) fusible.push_back(vary->values.empty());
  for (const FusionGroup& g : fusion_groups(fwd.ops, w.fusion, fusible)) {
    std::size_t i = g.first;
    const StepOp& op = fwd.ops[i];
    if (varying && !fwd.vary[i]->values.empty()) {
      step.push_back(activation_alloc);
      varying = false;
    }
    if (per_tensor) {
      tensors.live.emplace_back(i, "act" + std::to_string(i));
      step.push_back(alloc(tensors.live.back().second, output_bytes(fwd.ops[i + g.count - 1], w.dtype)));
    }
    step.push_back(kernel(fused_op(fwd.ops, g)));
    step.back().vary = *fwd.vary[i];
    if (w.tp > 1 && family_of(op.name) == Family::kMatmul && tp_syncs > 0) {
      step.push_back(allreduce(static_cast<uint64_t>(w.tp_allreduce_bytes / 2 / tp_syncs / dtype_bytes(w.dtype)),
                               tp_comm(w, rank), w.dtype, kCompute));
    }
  }
  if (w.host_sync_ms > 0) {  // loss.item() and host work before the backward is launched
    step.push_back(op_of(Kind::kSync));
    step.push_back(delay(w.host_sync_ms));
  }
  if (train) {
    add_backward(w, fwd, rank, step, per_tensor ? &tensors : nullptr, last);
    if (last) add_optimizer(w, step);
  } else {
    step.push_back(memcpy_op("D2H", static_cast<uint64_t>(w.samples_per_step) * 4, kCompute));
  }
  if (!per_tensor) step.push_back(buffer_op(Kind::kFree, "activations"));
}

telemetry::RankProgram model_rank(const Workload& w, const Forward& fwd, int rank, bool train) {
  telemetry::RankProgram rp;
  rp.streams = 3;
  rp.events = 2 + w.grad_buckets;
  uint64_t shard = static_cast<uint64_t>(w.params / w.tp);
  if (w.resident_mib > 0) rp.setup.push_back(alloc("resident", static_cast<uint64_t>(w.resident_mib) << 20));
  add_model_state(w, shard, train, rp.setup);
  auto& step = rp.step;
  if (w.loader_ms > 0) step.push_back(delay(w.loader_ms));
  // The activations: allocated at the step's start, or, when a layer varies, as the first varying
  // layer runs (its size is known only then), so an allocation that must flush the cache comes
  // with forward work already queued.
  auto activations = [train](uint64_t bytes) { return std::max<uint64_t>(bytes * (train ? 1 : 0) + bytes / 8, 512); };
  ProgramOp activation_alloc = alloc("activations", activations(fwd.activation_bytes));
  for (uint64_t bytes : fwd.activation_bytes_by_step) activation_alloc.bytes_by_step.push_back(activations(bytes));
  const bool per_tensor = train && w.allocator == "direct" && fwd.activation_bytes_by_step.empty();
  // Gradient accumulation (micro_batches > 1): each micro-batch's forward and backward in turn,
  // the data-parallel allreduce with the last one's backward, then the optimizer once.
  for (int m = 0; m < w.micro_batches; ++m) {
    add_micro_batch(w, fwd, rank, train, activation_alloc, per_tensor, m + 1 == w.micro_batches, step);
  }
  return rp;
}

}  // namespace detail

using namespace detail;

Result<std::vector<CompiledPoint>> compile_sweep(const Workload& w, const CompileOptions& o,
                                                 const telemetry::Program& base);
Result<telemetry::Program> compile_special(const Workload& w, const telemetry::Program& base);

Result<std::vector<CompiledPoint>> compile_workload(const Workload& w, const CompileOptions& o) {
  if (w.pp > 1) {
    bool varies = std::any_of(w.layers.begin(), w.layers.end(), [](const Layer& l) { return !l.vary.values.empty(); });
    if (varies) return InvalidArgument("workload " + w.name + ": pp > 1 takes layers of fixed shapes (one micro-batch's); a layer varies");
  }
  telemetry::Program base;
  base.name = w.name;
  base.process_name = o.process_name;
  base.allocator = o.allocator.empty() ? w.allocator : o.allocator;
  base.launch = w.launch;
  base.dispatch_ns = static_cast<int64_t>(w.op_dispatch_us * 1e3);
  base.jit_compile = w.jit_compile;
  base.host_input_samples_per_s = o.host_input_samples_per_s >= 0 ? o.host_input_samples_per_s : w.host_input_samples_per_s;
  base.repeat = o.steps > 0 ? o.steps : w.steps;
  std::vector<int> devices = !o.devices.empty() ? o.devices : w.devices;
  int ranks = w.ranks();
  if (devices.empty()) {
    for (int r = 0; r < ranks; ++r) devices.push_back(r);
  }
  Workload shaped = w;
  shaped.fusion = w.fusion && o.fusion;
  shaped.allocator = base.allocator;
  shaped.host_input_samples_per_s = base.host_input_samples_per_s;
  if (static_cast<int>(devices.size()) != ranks) {  // --devices chose fewer/more ranks: scale dp
    const int per_dp = w.tp * w.pp;  // data parallelism scales; tensor and pipeline stay
    if (devices.empty() || (per_dp > 1 && devices.size() % static_cast<std::size_t>(per_dp) != 0)) {
      return InvalidArgument("workload " + w.name + " needs " + std::to_string(ranks) + " devices (dp " +
                             std::to_string(w.dp) + " x tp " + std::to_string(w.tp) +
                             (w.pp > 1 ? " x pp " + std::to_string(w.pp) : "") + "), or a multiple of " +
                             std::to_string(per_dp) + ", got " + std::to_string(devices.size()));
    }
    shaped.dp = static_cast<int>(devices.size()) / per_dp;
  }
  for (const FaultAt& f : w.faults) {
    base.faults.push_back({static_cast<int64_t>(f.at_ms * 1e6), f.device, f.peer, f.action, f.fault, f.watts});
  }
  if (w.kind == "allreduce-sweep" || w.kind == "matmul-sweep") {
    for (int d : devices) base.ranks.push_back({d, 3, 2, {}, {}});
    return compile_sweep(shaped, o, base);
  }
  telemetry::Program p = base;
  if (w.kind == "train" || w.kind == "infer") {
    p.layout = "dp" + std::to_string(shaped.dp) + " x tp" + std::to_string(shaped.tp) +
               (shaped.pp > 1   ? " x pp" + std::to_string(shaped.pp) + " (" + std::to_string(shaped.micro_batches) + " micro-batches, 1F1B)"
                : shaped.micro_batches > 1 ? " (" + std::to_string(shaped.micro_batches) + " accumulation steps)" : "");
    p.comms = communicators(shaped);
    Forward fwd = expand(shaped);
    // A rank's program differs from another's only in its communicators: ranks that share them
    // run one copy (a 1,024-rank data-parallel job compiles and carries one rank, not 1,024).
    std::map<std::tuple<int, int, int>, std::size_t> built;  // (dp, tp, pp comm) -> first rank with them
    for (int r = 0; r < shaped.ranks(); ++r) {
      auto key = std::make_tuple(dp_comm(shaped, r), shaped.tp > 1 ? tp_comm(shaped, r) : 0, shaped.pp > 1 ? pp_comm(shaped, r) : 0);
      auto [it, fresh] = built.emplace(key, p.ranks.size());
      telemetry::RankProgram rp;
      if (fresh) {
        rp = shaped.pp > 1 ? pipeline_rank(shaped, fwd, r, w.kind == "train") : model_rank(shaped, fwd, r, w.kind == "train");
      } else {  // runs that rank's ops (RankProgram::ops_of)
        const telemetry::RankProgram& source = p.ranks[it->second];
        rp.streams = source.streams, rp.events = source.events, rp.ops_of = static_cast<int>(it->second);
      }
      rp.device = devices[r];
      p.ranks.push_back(std::move(rp));
    }
  } else {
    for (int d : devices) p.ranks.push_back({d, 3, 2, {}, {}});
    auto special = compile_special(shaped, p);
    if (!special.ok()) return special.status();
    p = std::move(*special);
  }
  return std::vector<CompiledPoint>{{std::move(p), "", 0, 0, 0}};
}

}  // namespace npukit::work
