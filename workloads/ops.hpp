// What the workload compiler knows about framework ops: their family (to derive output shapes
// and backward ops of training steps) and the grad ops each family produces. The kernels
// themselves (infer-shape, cost) live in the emulator's registry; the compiler only needs the
// output shape of each forward layer to shape its gradients, and the runtime re-checks
// everything when the program is prepared.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "telemetry/op_families.hpp"
#include "workloads/workload.hpp"

namespace npukit::work {

using Shape = std::vector<int64_t>;

// A kernel-level op of a compiled step: name (framework or kernel name), inputs, attrs.
struct StepOp {
  std::string name;
  std::vector<Shape> inputs;
  std::vector<std::string> dtypes;  // per input
  nlohmann::json attrs = nlohmann::json::object();
};

using telemetry::Family;  // the families and their table: telemetry/op_families.hpp
using telemetry::family_of;

// What is wrong with a forward op's inputs for its family ("" when nothing): the count and the
// ranks its output shape and gradient ops read (a matmul takes two 2-D inputs), and a
// convolution's strides and pads. The kernels check the rest when the program is built.
std::string input_problem(const std::string& op, const std::vector<Shape>& inputs, const nlohmann::json& attrs);

// The forward layer as a StepOp (input dtypes: the layer's own, else `dtype`).
StepOp forward_op(const Layer& layer, const std::string& dtype);
// Output shape of a forward op (empty when the family does not say).
Shape output_shape(const StepOp& op);
// The gradient ops of one forward op, in the order a framework issues them.
std::vector<StepOp> backward_ops(const StepOp& fwd, const std::string& dtype);
int64_t elements(const Shape& s);

}  // namespace npukit::work
