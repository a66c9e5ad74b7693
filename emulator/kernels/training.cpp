// Training kernels (vector unit): the softmax cross-entropy loss and the Adam update.
//
// SoftmaxCrossEntropyWithLogits(logits [N,C] float32, labels [N] int32/int64 class ids)
//   -> loss [N] = logsumexp(logits[n]) - logits[n, label], backprop [N,C] = softmax - onehot.
//   A label outside [0, C) fails the launch.
// ApplyAdam(param, m, v, grad; all one shape) -> param, m, v. Attrs lr (1e-3), beta1 (0.9),
//   beta2 (0.999), epsilon (1e-8), step (int >= 1, the 1-based step for bias correction):
//     m = beta1 m + (1 - beta1) g;  v = beta2 v + (1 - beta2) g^2
//     param -= lr * (m / (1 - beta1^step)) / (sqrt(v / (1 - beta2^step)) + epsilon)
//   (PyTorch's placement of epsilon). Outputs may alias the inputs of the same name.
#include <algorithm>
#include <cmath>

#include "emulator/kernels/common.hpp"

namespace npukit::emu {
namespace {

using kern::dims_str;
using kern::f32_in;
using kern::f32_out;

constexpr const char kSoftmaxCe[] = "SoftmaxCrossEntropyWithLogits";
constexpr const char kAdam[] = "ApplyAdam";

// ---- SoftmaxCrossEntropyWithLogits ----

Result<std::vector<TensorDesc>> infer_softmax_ce(const std::vector<TensorDesc>& in,
                                                 const Attrs&) {
  NPUKIT_RETURN_IF_ERROR(kern::check_input_count(kSoftmaxCe, in, 2));
  const Shape& logits = in[0].shape;
  const Shape& labels = in[1].shape;
  NPUKIT_RETURN_IF_ERROR(kern::check_rank(kSoftmaxCe, "logits", logits, 2));
  NPUKIT_RETURN_IF_ERROR(kern::check_rank(kSoftmaxCe, "labels", labels, 1));
  NPUKIT_RETURN_IF_ERROR(kern::check_index_dtype(kSoftmaxCe, "labels", in[1].dtype));
  if (!kern::dims_match(logits[0], labels[0])) {
    return shape_error(kSoftmaxCe, "labels must be [N] for logits [N,C]: got " + dims_str(logits) +
                                       " and " + dims_str(labels));
  }
  int64_t n = kern::merged_dim(logits[0], labels[0]);
  return std::vector<TensorDesc>{{{n}, in[0].dtype}, {{n, logits[1]}, in[0].dtype}};
}

// Max, subtract, exp, sum and the backprop subtraction per logit.
OpCost softmax_ce_cost(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out,
                       const Attrs&) {
  return {5.0 * static_cast<double>(in[0].elements()), kern::io_bytes(in, out)};
}

Status check_softmax_ce_launch(const CpuArgs& args) {
  NPUKIT_RETURN_IF_ERROR(kern::check_buffers(kSoftmaxCe, args));
  NPUKIT_RETURN_IF_ERROR(kern::require_float32(kSoftmaxCe, args.in_desc[0].dtype));
  NPUKIT_RETURN_IF_ERROR(kern::check_index_dtype(kSoftmaxCe, "labels", args.in_desc[1].dtype));
  for (const auto& d : args.out_desc)
    NPUKIT_RETURN_IF_ERROR(kern::require_float32(kSoftmaxCe, d.dtype));
  return Status::Ok();
}

// One row: loss = lse - z[label]; backprop = exp(z - lse) - onehot(label).
void softmax_ce_row(const float* z, int64_t classes, int64_t label, float* loss, float* backprop) {
  float max = *std::max_element(z, z + classes);
  double sum = 0;
  for (int64_t j = 0; j < classes; ++j) sum += std::exp(static_cast<double>(z[j]) - max);
  double lse = max + std::log(sum);
  *loss = static_cast<float>(lse - z[label]);
  for (int64_t j = 0; j < classes; ++j) {
    backprop[j] = static_cast<float>(std::exp(z[j] - lse) - (j == label ? 1.0 : 0.0));
  }
}

Status compute_softmax_ce(const CpuArgs& args) {
  NPUKIT_RETURN_IF_ERROR(check_softmax_ce_launch(args));
  int64_t rows = args.in_desc[0].shape[0], classes = args.in_desc[0].shape[1];
  for (int64_t n = 0; n < rows; ++n) {
    int64_t label = kern::index_at(args.in[1], args.in_desc[1].dtype, n);
    if (label < 0 || label >= classes) {
      return InvalidArgument(std::string(kSoftmaxCe) + ": label " + std::to_string(label) +
                             " in row " + std::to_string(n) + " is out of range [0, " +
                             std::to_string(classes) + ")");
    }
    softmax_ce_row(f32_in(args, 0) + n * classes, classes, label, f32_out(args, 0) + n,
                   f32_out(args, 1) + n * classes);
  }
  return Status::Ok();
}

// ---- ApplyAdam ----

struct AdamConfig {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8;
  int64_t step = 1;
};

Result<AdamConfig> adam_config(const Attrs& attrs) {
  AdamConfig c;
  c.lr = attrs.get_float("lr", c.lr);
  c.beta1 = attrs.get_float("beta1", c.beta1);
  c.beta2 = attrs.get_float("beta2", c.beta2);
  c.epsilon = attrs.get_float("epsilon", c.epsilon);
  c.step = attrs.get_int("step", c.step);
  if (c.step >= 1) return c;
  return InvalidArgument(std::string(kAdam) + ": attr step must be >= 1, got " +
                         std::to_string(c.step));
}

Result<std::vector<TensorDesc>> infer_adam(const std::vector<TensorDesc>& in,
                                           const Attrs& attrs) {
  NPUKIT_RETURN_IF_ERROR(kern::check_input_count(kAdam, in, 4));
  auto shape = kern::same_shape_inputs(kAdam, in, 4);
  if (!shape.ok()) return shape.status();
  NPUKIT_RETURN_IF_ERROR(adam_config(attrs).status());
  return std::vector<TensorDesc>{{*shape, in[0].dtype}, {*shape, in[1].dtype},
                                 {*shape, in[2].dtype}};
}

Status compute_adam(const CpuArgs& args) {
  NPUKIT_RETURN_IF_ERROR(kern::float32_launch(kAdam, args));
  auto c = adam_config(args.attrs);
  if (!c.ok()) return c.status();
  double m_scale = 1.0 / (1.0 - std::pow(c->beta1, static_cast<double>(c->step)));
  double v_scale = 1.0 / (1.0 - std::pow(c->beta2, static_cast<double>(c->step)));
  int64_t count = args.in_desc[0].elements();
  for (int64_t i = 0; i < count; ++i) {
    // Every input element is read before any output element is written (outputs may alias).
    double param = f32_in(args, 0)[i], m = f32_in(args, 1)[i], v = f32_in(args, 2)[i];
    double g = f32_in(args, 3)[i];
    m = c->beta1 * m + (1 - c->beta1) * g;
    v = c->beta2 * v + (1 - c->beta2) * g * g;
    param -= c->lr * (m * m_scale) / (std::sqrt(v * v_scale) + c->epsilon);
    f32_out(args, 0)[i] = static_cast<float>(param);
    f32_out(args, 1)[i] = static_cast<float>(m);
    f32_out(args, 2)[i] = static_cast<float>(v);
  }
  return Status::Ok();
}

}  // namespace

void register_training_kernels(KernelRegistry& r) {
  r.add_kernel({.name = kSoftmaxCe, .unit = Unit::kVector, .infer = infer_softmax_ce,
                .cost = softmax_ce_cost, .compute = compute_softmax_ce});
  r.add_kernel({.name = kAdam, .unit = Unit::kVector, .infer = infer_adam,
                .cost = kern::per_element_cost<12>, .compute = compute_adam});
}

}  // namespace npukit::emu
