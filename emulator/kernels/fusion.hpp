// Operator fusion as CANN's graph compiler does it: a main kernel and an epilogue of kernels, each
// taking the previous one's first output as its first input, launched as one kernel.
//
// What fusion saves is HBM traffic and launches (one launch for the chain):
//   - an intermediate that only the next kernel reads is neither written nor read back;
//   - a next kernel that reads its whole input before any output (KernelDef::input_passes 2,
//     BatchNorm in training: statistics first) has its first pass folded into the producer's
//     epilogue, but the intermediate is still written and read once more (recomputing a cheap
//     element-wise producer in the second pass instead would read its inputs again: as many bytes
//     for ReluGrad, which reads dy and the activation);
//   - the main kernel's arithmetic runs on its unit, the epilogue's on the vector unit beside it
//     (the AIV cores next to each cube on a 910B), so a cube-led kernel's compute time is the
//     larger of the two and a vector chain's is their sum (runtime.cpp, Context::prepare_fused).
// The fused kernel is named by its parts' kernel names joined with '_' ("Conv2D_BatchNorm_Relu"),
// as the profiler shows it; it has no functional (CPU) implementation.
#pragma once

#include <string>
#include <vector>

#include "emulator/kernels/kernel.hpp"

namespace npukit::emu {

// One kernel of an epilogue: its op and its inputs after the first (the chain's value).
struct FusedPart {
  std::string op;
  std::vector<TensorDesc> extra_inputs;
  Attrs attrs;
};

struct FusedOp {
  const KernelDef* kernel = nullptr;  // interned for the life of the process; unit of the main kernel
  std::vector<TensorDesc> inputs;     // the main kernel's, then each part's extra inputs
  std::vector<TensorDesc> outputs;    // the last part's
  OpCost cost;                        // flops: the main kernel's; bytes: the chain's HBM traffic
  double epilogue_flops = 0;          // the parts' arithmetic, on the vector unit
};

// With no parts it is the main kernel alone (its own KernelDef and CPU implementation).
// Resolves the main op and each part in turn (errors as KernelRegistry::resolve, or a part whose
// first input does not match the previous output: "ShapeInferenceError: <kernel>: ...").
Result<FusedOp> resolve_fused(const KernelRegistry& registry, std::string_view op,
                              const std::vector<TensorDesc>& inputs, const Attrs& attrs,
                              const std::vector<FusedPart>& parts);

}  // namespace npukit::emu
