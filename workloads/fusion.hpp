// Operator fusion as CANN's graph compiler applies it to a step, before kernels are emitted: an op
// joins the kernel before it when it takes that kernel's output as its first input (the layer
// list's data flow) and the pair is in the pattern table below (fusion_patterns(), in
// telemetry/op_families.hpp: data read by the compiler, the profiler and docs/workloads.md):
//   conv + batch_norm [+ add] [+ relu]   the convolution's epilogue computes the batch statistics
//   batch_norm [+ add] [+ relu]          normalise, add the shortcut, activate in one pass
//   matmul + gelu | relu                 matmul with its activation
//   add + layer_norm                     AddLayerNorm
//   relu | gelu | add | mul chains       one element-wise kernel
//   relu_grad | gelu_grad + batch_norm_grad   backward
// The emulator prices a fused kernel (emulator/kernels/fusion.hpp): no HBM round trip for the
// values between its parts, one launch. `"fusion": false` in a workload or `npu-run --no-fusion`
// leaves every op its own kernel (an eager framework).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "telemetry/op_families.hpp"
#include "workloads/ops.hpp"

namespace npukit::work {

using telemetry::FusionPattern;
using telemetry::fusion_patterns;

// Consecutive runs of `ops` that form one kernel each: {first index, count}, covering every op in
// order. With `enabled` false, or where no pattern applies, a run is one op. `fusible[i]` false
// keeps op i alone (an op whose shape varies by step); empty: every op may fuse.
struct FusionGroup {
  std::size_t first = 0;
  std::size_t count = 1;
};
std::vector<FusionGroup> fusion_groups(const std::vector<StepOp>& ops, bool enabled,
                                       const std::vector<bool>& fusible = {});

// The group as one kernel op: the first op, with attrs "epilogue" listing the others and their
// inputs after the first (the program format the emulator reads, emulator/runtime/program_parse.hpp).
StepOp fused_op(const std::vector<StepOp>& ops, const FusionGroup& g);

}  // namespace npukit::work
