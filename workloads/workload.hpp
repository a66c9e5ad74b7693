// Workload files: one training or inference step of a model as framework-level layers, plus how
// to run it (steps, batch, parallel layout, input pipeline, allocator, faults). The format is
// documented in docs/workloads.md; built-ins live in workloads/builtin/*.json.
//
// Loading reports the first problem as one line naming the file and either the line:column of a
// JSON syntax error or the JSON path of a bad field:
//   "workload error: resnet.json:12:7: unexpected '}'"
//   "workload error: resnet.json: layers[3].inputs[1]: expected an array of dims"
#pragma once

#include <cstdint>
#include <array>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "telemetry/program.hpp"
#include "telemetry/status.hpp"

namespace npukit::work {

struct Layer {
  std::string op;                               // framework op (Paddle or PyTorch name)
  std::vector<std::vector<int64_t>> inputs;     // input shapes
  nlohmann::json raw_inputs = nlohmann::json::array();  // as written (shapes or {shape, dtype})
  nlohmann::json attrs = nlohmann::json::object();
  int64_t repeat = 1;                           // consecutive copies of this layer
  bool trainable = true;                        // train: gets backward ops
  // A dim of the forward kernel's input that changes from step to step (the program's "vary":
  // values[k % n] in step k). Backward ops keep the written shape: give such a layer
  // "trainable": false for an exact model.
  telemetry::ProgramOp::Vary vary;
};

struct FaultAt {
  double at_ms = 0;
  int device = 0;
  int peer = -2;                  // "link": "A-B" sets device A, peer B (-1: A's host link, "A-roce":
                                  // its RoCE port, telemetry::kRocePort; "A-switch": its port into
                                  // the node's switch, telemetry::kSwitchPort)
  std::string action = "inject";  // inject, clear, reset, power-limit
  std::string fault;
  double watts = 0;               // power-limit
};

// The settings of the workloads that are not models (`extra`), read and bounded with the workload.
// An absent optional takes the kind's default (compiler.hpp).
struct Extra {
  std::optional<int64_t> m;               // burn 8192, allocator-churn 2048: square matmul size
  int64_t matmuls_per_step = 20;          // burn
  std::optional<int64_t> bytes;           // hbm-bandwidth 1 GiB, allocator-churn 64 KiB
  int64_t copies_per_step = 8;            // hbm-bandwidth
  int64_t allocs_per_step = 500;          // allocator-churn
  int64_t iters = 5;                      // sweeps: repetitions per point
  std::string dtype = "float32";          // allreduce-sweep
  int64_t min_bytes = 8, max_bytes = int64_t{1} << 30, factor = 2;
  std::string algo = "auto", redop = "sum";
  std::vector<std::array<int64_t, 3>> sizes;  // matmul-sweep: [m, k, n] per point
};

struct Workload {
  std::string name;
  std::string description;
  std::string kind = "train";     // train, infer, allreduce-sweep, matmul-sweep, hbm-bandwidth, burn,
                                  // allocator-churn
  std::string dtype = "float16";
  int64_t steps = 10;
  int64_t samples_per_step = 1;   // per data-parallel rank
  std::string unit = "samples/s";
  int dp = 1, tp = 1, pp = 1;
  // Micro-batches per step (Paddle's accumulate_steps); the layers' shapes are one micro-batch's.
  // pp > 1: the pipeline's (default pp); pp 1: gradient accumulation (default 1), each
  // micro-batch's forward and backward in turn, the data-parallel allreduce and the optimizer once.
  int micro_batches = 1;
  std::vector<int> devices;       // rank -> device (default 0..ranks-1)
  int64_t input_bytes_per_sample = 0;
  double loader_ms = 0;           // host-side time per step before the input is ready
  // Samples per second each host's input pipeline prepares for all the job's ranks on it (data
  // loader workers on the host's CPUs); 0: no limit (telemetry::Program::host_input_samples_per_s).
  double host_input_samples_per_s = 0;
  double host_sync_ms = 0;        // after the forward pass: the host syncs (loss.item()) and works this long
  std::string launch = "eager";   // eager: one host launch per op; graph: the step's ops captured once
  double op_dispatch_us = 0;      // eager: the framework's host time per op (Python, op selection)
  bool jit_compile = false;       // eager: ops compiled online for each new static shape (torch_npu jit_compile=True)
  bool fusion = true;             // the graph compiler fuses ops into one kernel (workloads/fusion.hpp)
  int64_t resident_mib = 0;       // HBM each rank holds from the start without computing on it (a frozen
                                  // reference model, a cache): allocated in the setup, as "resident"
  std::string allocator = "caching";
  int64_t params = 0;             // parameters per model replica (gradients, optimizer state)
  std::string optimizer = "adam"; // adam, lamb, sgd, none
  double loss_scale = 0;          // mixed precision's loss scale: the gradients are unscaled (a Mul
                                  // by 1/loss_scale) before the optimizer; 0: no loss scaling
  double clip_grad_norm = 0;      // the gradients clipped to this norm (the norm of the rank's shard)
                                  // before the optimizer; 0: none
  bool master_weights = false;    // mixed precision keeps float32 weights: each step casts the gradients
                                  // to float32 for the update and the updated weights back to `dtype`
  int grad_buckets = 4;           // gradient allreduce buckets, issued during backward
  int64_t tp_allreduce_bytes = 0; // per tensor-parallel layer boundary, per step
  std::vector<Layer> layers;
  std::vector<FaultAt> faults;
  Extra extra;                    // kind-specific settings (sizes of a sweep...)

  int ranks() const { return dp * tp * pp; }
  bool keeps_optimizer_state() const { return optimizer == "adam" || optimizer == "lamb"; }
};

// The bytes each copy of an hbm-bandwidth workload moves (extra.bytes, default 1 GiB).
inline int64_t hbm_bandwidth_bytes(const Workload& w) { return w.extra.bytes.value_or(int64_t{1} << 30); }

// Parses a workload document; `file` names it in messages.
Result<Workload> parse_workload(const nlohmann::json& doc, const std::string& file);
// Reads and parses a workload file.
Result<Workload> load_workload_file(const std::string& path);
// A built-in by name (workloads/builtin/<name>.json) or a path to a file.
Result<Workload> load_workload(const std::string& name_or_path);
// The built-in names: the workload files, sorted, then the programs npu-run builds in code
// (kInProcessBuiltins).
std::vector<std::string> builtin_names();
// Built-ins that are programs, not files: npu-run runs them on a node inside itself.
inline constexpr const char* kInProcessBuiltins[] = {"mlp-train"};
std::string builtin_dir();  // $NPUKIT_WORKLOAD_DIR or the source tree's workloads/builtin

}  // namespace npukit::work
