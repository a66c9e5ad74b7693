// The kernel registry: one table of operator -> (infer-shape, cost, optional CPU implementation).
//
// Kernel names follow CANN's op types as msprof reports them (MatMulV2, Conv2D, SoftmaxV2, ...).
// Framework op names (Paddle `matmul`, PyTorch `aten::mm`) map onto kernels through the tables in
// op_mapping.cpp. Everything here is immutable after start-up and safe to read from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "emulator/kernels/attrs.hpp"
#include "emulator/kernels/tensor.hpp"
#include "telemetry/status.hpp"

namespace npukit::emu {

// Which execution unit a kernel occupies (and whose roofline prices it).
enum class Unit : uint8_t {
  kCube,    // AI Core cube unit (matmul, conv): priced against the spec's cube peak
  kVector,  // AI Core vector unit (elementwise, norms, softmax, reductions)
  kAiCpu,   // AI CPU fallback: few slow cores, large launch overhead
};
const char* unit_name(Unit u);  // "cube", "vector", "aicpu"

// Work a kernel does, for the roofline: arithmetic on its unit and HBM traffic.
struct OpCost {
  double flops = 0;  // floating-point (or integer) operations on the kernel's unit
  double bytes = 0;  // bytes read + written in HBM
};

// Raw buffers of a functional launch, in the order of the descriptors. Kernels check dtypes
// (most accept only float32) and return a Status naming the op when they cannot run.
struct CpuArgs {
  std::vector<const void*> in;
  std::vector<void*> out;  // may alias inputs (in-place ops such as ApplyAdam)
  const std::vector<TensorDesc>& in_desc;
  const std::vector<TensorDesc>& out_desc;
  const Attrs& attrs;
};

using InferShapeFn = Result<std::vector<TensorDesc>> (*)(const std::vector<TensorDesc>& in,
                                                         const Attrs& attrs);
using CostFn = OpCost (*)(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out,
                          const Attrs& attrs);
using ComputeFn = Status (*)(const CpuArgs& args);

struct KernelDef {
  std::string name;               // CANN op type, e.g. "MatMulV2"
  Unit unit = Unit::kVector;
  bool supports_dynamic = false;  // may run with dynamic (-1) dims / produce them
  // Passes over input 0 before any output is final: 1 for most kernels; 2 for a kernel that needs
  // statistics of the whole input first (BatchNorm in training). Fusion reads it (fusion.hpp).
  uint8_t input_passes = 1;
  bool convolution = false;       // priced at the chip's convolution efficiency (cost_model.hpp)
  InferShapeFn infer = nullptr;   // required
  CostFn cost = nullptr;          // required
  ComputeFn compute = nullptr;    // optional: functional mode needs it
};

// A framework op resolved to its kernel, with the output descriptors inferred.
struct ResolvedOp {
  const KernelDef* kernel = nullptr;
  std::vector<TensorDesc> outputs;
  OpCost cost;
};

class KernelRegistry {
 public:
  // The process-wide registry with every built-in kernel and mapping (built on first use).
  static const KernelRegistry& builtin();

  // Looks `op` up as a framework name (Paddle or PyTorch) first, then as a kernel name.
  // nullptr when unknown.
  const KernelDef* find(std::string_view op) const;

  // find + infer-shape + cost. Errors (exact texts are part of the interface):
  //   NotFound: Operator <op> does not have kernel for NPU
  //   ShapeInferenceError: output shape is dynamic, but operator <kernel> does not support dynamic shape.
  //   ShapeInferenceError: <kernel>: <what is wrong with which input shapes>
  Result<ResolvedOp> resolve(std::string_view op, const std::vector<TensorDesc>& inputs,
                             const Attrs& attrs) const;

  const std::vector<KernelDef>& kernels() const { return kernels_; }
  // (framework op, kernel name) pairs.
  const std::vector<std::pair<std::string, std::string>>& mappings() const { return mappings_; }

  void add_kernel(KernelDef def);
  void add_mapping(std::string framework_op, std::string kernel);

 private:
  std::vector<KernelDef> kernels_;
  std::vector<std::pair<std::string, std::string>> mappings_;
};

// Registration lists, one per kernel family (explicit, no static-constructor magic).
void register_cube_kernels(KernelRegistry& r);
void register_vector_kernels(KernelRegistry& r);
void register_training_kernels(KernelRegistry& r);
void register_aicpu_kernels(KernelRegistry& r);
void register_framework_mappings(KernelRegistry& r);

// Shape-error helper for kernels: "ShapeInferenceError: <kernel>: <detail>".
Status shape_error(std::string_view kernel, std::string_view detail);

}  // namespace npukit::emu
