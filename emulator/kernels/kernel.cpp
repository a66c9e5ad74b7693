#include "emulator/kernels/kernel.hpp"

#include <algorithm>
#include <string>

namespace npukit::emu {

const char* unit_name(Unit u) {
  switch (u) {
    case Unit::kCube: return "cube";
    case Unit::kVector: return "vector";
    case Unit::kAiCpu: return "aicpu";
  }
  return "?";
}

Status shape_error(std::string_view kernel, std::string_view detail) {
  return {Code::kShapeInference,
          "ShapeInferenceError: " + std::string(kernel) + ": " + std::string(detail)};
}

const KernelRegistry& KernelRegistry::builtin() {
  static const KernelRegistry registry = [] {
    KernelRegistry r;
    register_cube_kernels(r);
    register_vector_kernels(r);
    register_training_kernels(r);
    register_aicpu_kernels(r);
    register_framework_mappings(r);
    return r;
  }();
  return registry;
}

void KernelRegistry::add_kernel(KernelDef def) { kernels_.push_back(std::move(def)); }

void KernelRegistry::add_mapping(std::string framework_op, std::string kernel) {
  mappings_.emplace_back(std::move(framework_op), std::move(kernel));
}

const KernelDef* KernelRegistry::find(std::string_view op) const {
  auto by_name = [this](std::string_view name) -> const KernelDef* {
    auto it = std::find_if(kernels_.begin(), kernels_.end(),
                           [&](const KernelDef& k) { return k.name == name; });
    return it == kernels_.end() ? nullptr : &*it;
  };
  auto mapped = std::find_if(mappings_.begin(), mappings_.end(),
                             [&](const auto& m) { return m.first == op; });
  if (mapped != mappings_.end()) return by_name(mapped->second);
  return by_name(op);
}

Result<ResolvedOp> KernelRegistry::resolve(std::string_view op,
                                           const std::vector<TensorDesc>& inputs,
                                           const Attrs& attrs) const {
  const KernelDef* kernel = find(op);
  if (kernel == nullptr) {
    return Status(Code::kNotFound,
                  "NotFound: Operator " + std::string(op) + " does not have kernel for NPU");
  }
  auto outputs = kernel->infer(inputs, attrs);
  if (!outputs.ok()) return outputs.status();
  bool dynamic = std::any_of(outputs->begin(), outputs->end(),
                             [](const TensorDesc& t) { return is_dynamic(t.shape); });
  if (dynamic && !kernel->supports_dynamic) {
    return Status(Code::kShapeInference,
                  "ShapeInferenceError: output shape is dynamic, but operator " + kernel->name +
                      " does not support dynamic shape.");
  }
  ResolvedOp resolved;
  resolved.kernel = kernel;
  resolved.outputs = std::move(*outputs);
  // Cost needs static shapes; a dynamic-capable kernel is priced when its shapes are known.
  if (!dynamic) resolved.cost = kernel->cost(inputs, resolved.outputs, attrs);
  return resolved;
}

}  // namespace npukit::emu
