#include "emulator/kernels/fusion.hpp"

#include <deque>
#include <mutex>

namespace npukit::emu {

namespace {

Result<std::vector<TensorDesc>> no_infer(const std::vector<TensorDesc>& in, const Attrs&) { return in; }
OpCost no_cost(const std::vector<TensorDesc>&, const std::vector<TensorDesc>&, const Attrs&) { return {}; }

// One KernelDef per distinct chain, kept for the process's life (tasks point at it).
const KernelDef* intern_fused_kernel(const std::vector<const KernelDef*>& chain) {
  static std::mutex mu;
  static auto* defs = new std::deque<KernelDef>();  // never destroyed: tasks may outlive statics
  std::string name;
  bool dynamic = true;
  for (const KernelDef* k : chain) {
    name += (name.empty() ? "" : "_") + k->name;
    dynamic = dynamic && k->supports_dynamic;
  }
  std::lock_guard lock(mu);
  for (const KernelDef& d : *defs) {
    if (d.name == name) return &d;
  }
  defs->push_back({.name = name, .unit = chain.front()->unit, .supports_dynamic = dynamic,
                   .convolution = chain.front()->convolution, .infer = no_infer, .cost = no_cost});
  return &defs->back();
}

}  // namespace

Result<FusedOp> resolve_fused(const KernelRegistry& registry, std::string_view op,
                              const std::vector<TensorDesc>& inputs, const Attrs& attrs,
                              const std::vector<FusedPart>& parts) {
  auto head = registry.resolve(op, inputs, attrs);
  if (!head.ok()) return head.status();
  FusedOp f;
  f.inputs = inputs;
  f.outputs = head->outputs;
  f.cost = head->cost;
  std::vector<const KernelDef*> chain{head->kernel};
  for (const FusedPart& part : parts) {
    std::vector<TensorDesc> in{f.outputs.front()};
    in.insert(in.end(), part.extra_inputs.begin(), part.extra_inputs.end());
    auto next = registry.resolve(part.op, in, part.attrs);
    if (!next.ok()) return next.status();
    double value_bytes = static_cast<double>(in.front().bytes());
    // Not read back (its first pass rides in the producer's epilogue) and, when that was its only
    // pass, never written either.
    f.cost.bytes += next->cost.bytes - value_bytes * (next->kernel->input_passes > 1 ? 1 : 2);
    f.epilogue_flops += next->cost.flops;
    f.inputs.insert(f.inputs.end(), part.extra_inputs.begin(), part.extra_inputs.end());
    f.outputs = next->outputs;
    chain.push_back(next->kernel);
  }
  f.kernel = parts.empty() ? head->kernel : intern_fused_kernel(chain);  // alone, the kernel itself
  return f;
}

}  // namespace npukit::emu
