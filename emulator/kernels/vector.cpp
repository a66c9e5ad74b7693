// Vector-unit kernels: broadcasting arithmetic, activations and their gradients, softmax.
// Norms, reductions and layout ops (also vector unit) live in norm.cpp,
// reduce.cpp and layout.cpp; register_vector_kernels registers them all.
//
// Every element-wise op is a small struct: kName (the CANN op type), kFlops (operations per
// output element, for the roofline) and apply(). Gradients take (dy, x) and return dx.
#include <algorithm>
#include <cmath>

#include "emulator/kernels/common.hpp"

namespace npukit::emu {
namespace {

using kern::f32_in;
using kern::f32_out;

// ---- binary arithmetic: NumPy broadcasting, output dtype = a's dtype ----

struct AddOp {
  static constexpr const char* kName = "Add";
  static constexpr int kFlops = 1;
  static float apply(float a, float b) { return a + b; }
};
struct SubOp {
  static constexpr const char* kName = "Sub";
  static constexpr int kFlops = 1;
  static float apply(float a, float b) { return a - b; }
};
struct MulOp {
  static constexpr const char* kName = "Mul";
  static constexpr int kFlops = 1;
  static float apply(float a, float b) { return a * b; }
};
struct RealDivOp {
  static constexpr const char* kName = "RealDiv";
  static constexpr int kFlops = 1;
  static float apply(float a, float b) { return a / b; }
};

// ---- activations ----

constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kGeluCubic = 0.044715f;

float sigmoid(float x) {
  if (x >= 0) return 1.0f / (1.0f + std::exp(-x));
  float e = std::exp(x);  // never overflows for x < 0
  return e / (1.0f + e);
}

struct ReluOp {
  static constexpr const char* kName = "Relu";
  static constexpr int kFlops = 1;
  static float apply(float x) { return x > 0 ? x : 0.0f; }
};
struct SigmoidOp {
  static constexpr const char* kName = "Sigmoid";
  static constexpr int kFlops = 4;
  static float apply(float x) { return sigmoid(x); }
};
struct TanhOp {
  static constexpr const char* kName = "Tanh";
  static constexpr int kFlops = 4;
  static float apply(float x) { return std::tanh(x); }
};
// tanh approximation: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
struct GeluOp {
  static constexpr const char* kName = "Gelu";
  static constexpr int kFlops = 8;
  static float apply(float x) {
    return 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * (x + kGeluCubic * x * x * x)));
  }
};

struct ReluGradOp {
  static constexpr const char* kName = "ReluGrad";
  static constexpr int kFlops = 1;
  static float apply(float dy, float x) { return x > 0 ? dy : 0.0f; }
};
// Derivative of GeluOp's tanh approximation.
struct GeluGradOp {
  static constexpr const char* kName = "GeluGrad";
  static constexpr int kFlops = 12;
  static float apply(float dy, float x) {
    float t = std::tanh(kSqrt2OverPi * (x + kGeluCubic * x * x * x));
    float dt = kSqrt2OverPi * (1.0f + 3.0f * kGeluCubic * x * x);
    return dy * (0.5f * (1.0f + t) + 0.5f * x * (1.0f - t * t) * dt);
  }
};

// ---- element-wise templates ----

template <typename Op>
Result<std::vector<TensorDesc>> infer_broadcast(const std::vector<TensorDesc>& in, const Attrs&) {
  NPUKIT_RETURN_IF_ERROR(kern::check_input_count(Op::kName, in, 2));
  auto shape = kern::broadcast_shape(Op::kName, in[0].shape, in[1].shape);
  if (!shape.ok()) return shape.status();
  return std::vector<TensorDesc>{{*shape, in[0].dtype}};
}

// Gradients: dy and x of one shape.
template <typename Op>
Result<std::vector<TensorDesc>> infer_same_shape(const std::vector<TensorDesc>& in, const Attrs&) {
  NPUKIT_RETURN_IF_ERROR(kern::check_input_count(Op::kName, in, 2));
  auto shape = kern::same_shape_inputs(Op::kName, in, 2);
  if (!shape.ok()) return shape.status();
  return std::vector<TensorDesc>{{*shape, in[0].dtype}};
}

template <typename Op>
Result<std::vector<TensorDesc>> infer_unary(const std::vector<TensorDesc>& in, const Attrs&) {
  NPUKIT_RETURN_IF_ERROR(kern::check_input_count(Op::kName, in, 1));
  return std::vector<TensorDesc>{in[0]};
}

// out = Op(a, b) with a and b broadcast to out's shape; out may alias a full-shape input.
template <typename Op>
Status compute_binary(const CpuArgs& args) {
  NPUKIT_RETURN_IF_ERROR(kern::float32_launch(Op::kName, args));
  const float *a = f32_in(args, 0), *b = f32_in(args, 1);
  float* out = f32_out(args, 0);
  const Shape& shape = args.out_desc[0].shape;
  const Shape& a_shape = args.in_desc[0].shape;
  const Shape& b_shape = args.in_desc[1].shape;
  int64_t count = num_elements(shape);
  if (a_shape == shape && b_shape == shape) {
    for (int64_t i = 0; i < count; ++i) out[i] = Op::apply(a[i], b[i]);
    return Status::Ok();
  }
  auto a_at = kern::strided_offsets(shape, kern::broadcast_strides(a_shape, shape));
  auto b_at = kern::strided_offsets(shape, kern::broadcast_strides(b_shape, shape));
  for (int64_t i = 0; i < count; ++i) out[i] = Op::apply(a[a_at[i]], b[b_at[i]]);
  return Status::Ok();
}

template <typename Op>
Status compute_unary(const CpuArgs& args) {
  NPUKIT_RETURN_IF_ERROR(kern::float32_launch(Op::kName, args));
  const float* x = f32_in(args, 0);
  float* y = f32_out(args, 0);
  int64_t count = args.out_desc[0].elements();
  for (int64_t i = 0; i < count; ++i) y[i] = Op::apply(x[i]);
  return Status::Ok();
}

template <typename Op>
void add_broadcast_kernel(KernelRegistry& r) {
  r.add_kernel({.name = Op::kName, .unit = Unit::kVector, .infer = infer_broadcast<Op>,
                .cost = kern::per_element_cost<Op::kFlops>, .compute = compute_binary<Op>});
}
template <typename Op>
void add_grad_kernel(KernelRegistry& r) {
  r.add_kernel({.name = Op::kName, .unit = Unit::kVector, .infer = infer_same_shape<Op>,
                .cost = kern::per_element_cost<Op::kFlops>, .compute = compute_binary<Op>});
}
template <typename Op>
void add_unary_kernel(KernelRegistry& r) {
  r.add_kernel({.name = Op::kName, .unit = Unit::kVector, .infer = infer_unary<Op>,
                .cost = kern::per_element_cost<Op::kFlops>, .compute = compute_unary<Op>});
}

// ---- a fused chain of unary element-wise ops (graph-mode fusion): one read, one write ----

constexpr const char kFusedElementwise[] = "FusedElementwise";

// attr "ops": how many unary ops were fused (>= 1); the chain is modelled as that many ReLUs.
OpCost fused_cost(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out, const Attrs& attrs) {
  double ops = static_cast<double>(std::max<int64_t>(1, attrs.get_int("ops", 1)));
  return {ops * static_cast<double>(out[0].elements()), kern::io_bytes(in, out)};
}

Result<std::vector<TensorDesc>> infer_fused(const std::vector<TensorDesc>& in, const Attrs& attrs) {
  NPUKIT_RETURN_IF_ERROR(kern::check_input_count(kFusedElementwise, in, 1));
  if (attrs.get_int("ops", 1) < 1) return InvalidArgument(std::string(kFusedElementwise) + ": attr ops must be >= 1");
  return std::vector<TensorDesc>{in[0]};
}

// ---- softmax over attr axis (default -1) ----

constexpr const char kSoftmax[] = "SoftmaxV2";
constexpr const char kSoftmaxGrad[] = "SoftmaxGrad";

Result<std::size_t> softmax_axis(std::string_view kernel, const Shape& s, const Attrs& attrs) {
  return kern::normalize_axis(kernel, attrs.get_int("axis", -1), s);
}

Result<std::vector<TensorDesc>> infer_softmax(const std::vector<TensorDesc>& in,
                                              const Attrs& attrs) {
  NPUKIT_RETURN_IF_ERROR(kern::check_input_count(kSoftmax, in, 1));
  NPUKIT_RETURN_IF_ERROR(softmax_axis(kSoftmax, in[0].shape, attrs).status());
  return std::vector<TensorDesc>{in[0]};
}

// Inputs y (the softmax output) and dy; output dx.
Result<std::vector<TensorDesc>> infer_softmax_grad(const std::vector<TensorDesc>& in,
                                                   const Attrs& attrs) {
  NPUKIT_RETURN_IF_ERROR(kern::check_input_count(kSoftmaxGrad, in, 2));
  auto shape = kern::same_shape_inputs(kSoftmaxGrad, in, 2);
  if (!shape.ok()) return shape.status();
  NPUKIT_RETURN_IF_ERROR(softmax_axis(kSoftmaxGrad, *shape, attrs).status());
  return std::vector<TensorDesc>{{*shape, in[0].dtype}};
}

// Calls row(base, stride, extent) once per softmax row: elements base + j*stride, j < extent.
template <typename Row>
Status for_each_row(std::string_view kernel, const CpuArgs& args, Row row) {
  NPUKIT_RETURN_IF_ERROR(kern::float32_launch(kernel, args));
  auto axis = softmax_axis(kernel, args.in_desc[0].shape, args.attrs);
  if (!axis.ok()) return axis.status();
  kern::AxisSplit s = kern::split_at_axis(args.in_desc[0].shape, *axis);
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int64_t i = 0; i < s.inner; ++i) row(o * s.extent * s.inner + i, s.inner, s.extent);
  }
  return Status::Ok();
}

// y = exp(x - max) / sum(exp(x - max)) along the axis.
Status compute_softmax(const CpuArgs& args) {
  const float* x = f32_in(args, 0);
  float* y = f32_out(args, 0);
  return for_each_row(kSoftmax, args, [&](int64_t base, int64_t stride, int64_t extent) {
    float max = -INFINITY;
    for (int64_t j = 0; j < extent; ++j) max = std::max(max, x[base + j * stride]);
    double sum = 0;
    for (int64_t j = 0; j < extent; ++j) {
      float e = std::exp(x[base + j * stride] - max);
      y[base + j * stride] = e;
      sum += e;
    }
    for (int64_t j = 0; j < extent; ++j) y[base + j * stride] /= static_cast<float>(sum);
  });
}

// dx = y * (dy - sum(dy * y)) along the axis.
Status compute_softmax_grad(const CpuArgs& args) {
  const float *y = f32_in(args, 0), *dy = f32_in(args, 1);
  float* dx = f32_out(args, 0);
  return for_each_row(kSoftmaxGrad, args, [&](int64_t base, int64_t stride, int64_t extent) {
    double dot = 0;
    for (int64_t j = 0; j < extent; ++j) dot += dy[base + j * stride] * y[base + j * stride];
    for (int64_t j = 0; j < extent; ++j) {
      int64_t k = base + j * stride;
      dx[k] = y[k] * (dy[k] - static_cast<float>(dot));
    }
  });
}

}  // namespace

void register_vector_kernels(KernelRegistry& r) {
  add_broadcast_kernel<AddOp>(r);
  add_broadcast_kernel<SubOp>(r);
  add_broadcast_kernel<MulOp>(r);
  add_broadcast_kernel<RealDivOp>(r);
  add_unary_kernel<ReluOp>(r);
  add_unary_kernel<SigmoidOp>(r);
  add_unary_kernel<TanhOp>(r);
  add_unary_kernel<GeluOp>(r);
  add_grad_kernel<ReluGradOp>(r);
  add_grad_kernel<GeluGradOp>(r);
  r.add_kernel({.name = kFusedElementwise, .unit = Unit::kVector, .infer = infer_fused, .cost = fused_cost,
                .compute = compute_unary<ReluOp>});
  r.add_kernel({.name = kSoftmax, .unit = Unit::kVector, .infer = infer_softmax,
                .cost = kern::per_element_cost<5>, .compute = compute_softmax});
  r.add_kernel({.name = kSoftmaxGrad, .unit = Unit::kVector, .infer = infer_softmax_grad,
                .cost = kern::per_element_cost<4>, .compute = compute_softmax_grad});
  kern::register_norm_kernels(r);
  kern::register_reduce_kernels(r);
  kern::register_layout_kernels(r);
  kern::register_dropout_kernels(r);
}

}  // namespace npukit::emu
