// Training kernels (vector unit): the softmax cross-entropy loss, the Adam and LAMB updates and
// gradient clipping by norm.
//
// SoftmaxCrossEntropyWithLogits(logits [N,C] float32, labels [N] int32/int64 class ids)
//   -> loss [N] = logsumexp(logits[n]) - logits[n, label], backprop [N,C] = softmax - onehot.
//   A label outside [0, C) fails the launch.
// ApplyAdam(param, m, v, grad; all one shape) -> param, m, v. Attrs lr (1e-3), beta1 (0.9),
//   beta2 (0.999), epsilon (1e-8), step (int >= 1, the 1-based step for bias correction):
//     m = beta1 m + (1 - beta1) g;  v = beta2 v + (1 - beta2) g^2
//     param -= lr * (m / (1 - beta1^step)) / (sqrt(v / (1 - beta2^step)) + epsilon)
//   (PyTorch's placement of epsilon). Outputs may alias the inputs of the same name.
// ApplyLamb(param, m, v, grad) -> param, m, v: Adam's moments, then the layer-wise trust ratio
//   (You et al. 2019) over the whole tensor. Attrs as ApplyAdam but epsilon 1e-6, plus
//   weight_decay (0.01; ApplyAdam refuses it):
//     r = m_hat / (sqrt(v_hat) + epsilon) + weight_decay * param
//     param -= lr * (|param| / |r|) * r     (ratio 1 when either norm is 0)
//   Two passes: the moments and r with both norms, then the update; r is written between them
//   (HBM: 40 bytes per fp32 element, Adam's 28 plus r written and read and param read again).
// ClipByNorm(grad) -> grad * min(1, clip_norm / |grad|). Attr clip_norm (1.0, > 0). Two passes:
//   the norm, then the scale (12 bytes per fp32 element).
#include <algorithm>
#include <cmath>
#include <string_view>

#include "emulator/kernels/common.hpp"

namespace npukit::emu {
namespace {

using kern::dims_str;
using kern::f32_in;
using kern::f32_out;

constexpr const char kSoftmaxCe[] = "SoftmaxCrossEntropyWithLogits";
constexpr const char kAdam[] = "ApplyAdam";
constexpr const char kLamb[] = "ApplyLamb";
constexpr const char kClip[] = "ClipByNorm";

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
  double weight_decay = 0;  // LAMB's only
  int64_t step = 1;
};

// The attrs of ApplyAdam or ApplyLamb (`kernel` names the op in errors). LAMB's defaults are
// the paper's: epsilon 1e-6, weight_decay 0.01; Adam here has no decay and refuses one.
Result<AdamConfig> adam_config(const char* kernel, const Attrs& attrs) {
  bool lamb = std::string_view(kernel) == kLamb;
  if (!lamb && attrs.has("weight_decay")) {
    return InvalidArgument(std::string(kernel) + ": attr weight_decay is ApplyLamb's (this Adam has no decay)");
  }
  AdamConfig c;
  c.lr = attrs.get_float("lr", c.lr);
  c.beta1 = attrs.get_float("beta1", c.beta1);
  c.beta2 = attrs.get_float("beta2", c.beta2);
  c.epsilon = attrs.get_float("epsilon", lamb ? 1e-6 : c.epsilon);
  c.weight_decay = lamb ? attrs.get_float("weight_decay", 0.01) : 0;
  c.step = attrs.get_int("step", c.step);
  if (c.step >= 1) return c;
  return InvalidArgument(std::string(kernel) + ": attr step must be >= 1, got " +
                         std::to_string(c.step));
}

// param, m, v, grad of one shape -> param, m, v.
template <const char* kName>
Result<std::vector<TensorDesc>> infer_moments_update(const std::vector<TensorDesc>& in,
                                                     const Attrs& attrs) {
  NPUKIT_RETURN_IF_ERROR(kern::check_input_count(kName, in, 4));
  auto shape = kern::same_shape_inputs(kName, in, 4);
  if (!shape.ok()) return shape.status();
  NPUKIT_RETURN_IF_ERROR(adam_config(kName, attrs).status());
  return std::vector<TensorDesc>{{*shape, in[0].dtype}, {*shape, in[1].dtype},
                                 {*shape, in[2].dtype}};
}

// Adam's moments of element i, written to m and v; returns the bias-corrected step direction
// m_hat / (sqrt(v_hat) + epsilon).
double update_moments(const AdamConfig& c, double m_scale, double v_scale, double g, float* m,
                      float* v) {
  double mi = c.beta1 * *m + (1 - c.beta1) * g;
  double vi = c.beta2 * *v + (1 - c.beta2) * g * g;
  *m = static_cast<float>(mi);
  *v = static_cast<float>(vi);
  return (mi * m_scale) / (std::sqrt(vi * v_scale) + c.epsilon);
}

struct BiasCorrection {
  double m_scale, v_scale;
  explicit BiasCorrection(const AdamConfig& c)
      : m_scale(1.0 / (1.0 - std::pow(c.beta1, static_cast<double>(c.step)))),
        v_scale(1.0 / (1.0 - std::pow(c.beta2, static_cast<double>(c.step)))) {}
};

Status compute_adam(const CpuArgs& args) {
  NPUKIT_RETURN_IF_ERROR(kern::float32_launch(kAdam, args));
  auto c = adam_config(kAdam, args.attrs);
  if (!c.ok()) return c.status();
  BiasCorrection bc(*c);
  int64_t count = args.in_desc[0].elements();
  for (int64_t i = 0; i < count; ++i) {
    // Every input element is read before any output element is written (outputs may alias).
    float m = f32_in(args, 1)[i], v = f32_in(args, 2)[i];
    double param = f32_in(args, 0)[i];
    double step = update_moments(*c, bc.m_scale, bc.v_scale, f32_in(args, 3)[i], &m, &v);
    f32_out(args, 0)[i] = static_cast<float>(param - c->lr * step);
    f32_out(args, 1)[i] = m;
    f32_out(args, 2)[i] = v;
  }
  return Status::Ok();
}

// ---- ApplyLamb ----

Status compute_lamb(const CpuArgs& args) {
  NPUKIT_RETURN_IF_ERROR(kern::float32_launch(kLamb, args));
  auto c = adam_config(kLamb, args.attrs);
  if (!c.ok()) return c.status();
  BiasCorrection bc(*c);
  int64_t count = args.in_desc[0].elements();
  std::vector<double> r(static_cast<std::size_t>(count));
  double param_sq = 0, r_sq = 0;
  for (int64_t i = 0; i < count; ++i) {  // pass 1: moments, r and both norms
    float m = f32_in(args, 1)[i], v = f32_in(args, 2)[i];
    double param = f32_in(args, 0)[i];
    double ri = update_moments(*c, bc.m_scale, bc.v_scale, f32_in(args, 3)[i], &m, &v) +
                c->weight_decay * param;
    r[static_cast<std::size_t>(i)] = ri;
    param_sq += param * param;
    r_sq += ri * ri;
    f32_out(args, 1)[i] = m;
    f32_out(args, 2)[i] = v;
  }
  double ratio = param_sq > 0 && r_sq > 0 ? std::sqrt(param_sq / r_sq) : 1.0;
  for (int64_t i = 0; i < count; ++i) {  // pass 2: the update
    f32_out(args, 0)[i] = static_cast<float>(f32_in(args, 0)[i] - c->lr * ratio * r[static_cast<std::size_t>(i)]);
  }
  return Status::Ok();
}

// Adam's traffic plus r written and read back and param read again: 40 bytes per fp32 element.
OpCost lamb_cost(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out,
                 const Attrs&) {
  double elements = static_cast<double>(out[0].elements());
  double extra = 3.0 * elements * static_cast<double>(dtype_size(in[0].dtype));
  return {20.0 * elements, kern::io_bytes(in, out) + extra};
}

// ---- ClipByNorm ----

Result<double> clip_norm_of(const Attrs& attrs) {
  double clip = attrs.get_float("clip_norm", 1.0);
  if (clip > 0) return clip;
  return InvalidArgument(std::string(kClip) + ": attr clip_norm must be > 0");
}

Result<std::vector<TensorDesc>> infer_clip(const std::vector<TensorDesc>& in, const Attrs& attrs) {
  NPUKIT_RETURN_IF_ERROR(kern::check_input_count(kClip, in, 1));
  NPUKIT_RETURN_IF_ERROR(clip_norm_of(attrs).status());
  return std::vector<TensorDesc>{in[0]};
}

Status compute_clip(const CpuArgs& args) {
  NPUKIT_RETURN_IF_ERROR(kern::float32_launch(kClip, args));
  auto clip = clip_norm_of(args.attrs);
  if (!clip.ok()) return clip.status();
  int64_t count = args.in_desc[0].elements();
  double sq = 0;
  for (int64_t i = 0; i < count; ++i) sq += static_cast<double>(f32_in(args, 0)[i]) * f32_in(args, 0)[i];
  double norm = std::sqrt(sq);
  double scale = norm > *clip ? *clip / norm : 1.0;
  for (int64_t i = 0; i < count; ++i) f32_out(args, 0)[i] = static_cast<float>(f32_in(args, 0)[i] * scale);
  return Status::Ok();
}

// The norm's read, then the scale's read and write.
OpCost clip_cost(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out, const Attrs&) {
  double elements = static_cast<double>(in[0].elements());
  return {3.0 * elements, kern::io_bytes(in, out) + elements * static_cast<double>(dtype_size(in[0].dtype))};
}

}  // namespace

void register_training_kernels(KernelRegistry& r) {
  r.add_kernel({.name = kSoftmaxCe, .unit = Unit::kVector, .infer = infer_softmax_ce,
                .cost = softmax_ce_cost, .compute = compute_softmax_ce});
  r.add_kernel({.name = kAdam, .unit = Unit::kVector, .infer = infer_moments_update<kAdam>,
                .cost = kern::per_element_cost<12>, .compute = compute_adam});
  r.add_kernel({.name = kLamb, .unit = Unit::kVector, .infer = infer_moments_update<kLamb>,
                .cost = lamb_cost, .compute = compute_lamb});
  r.add_kernel({.name = kClip, .unit = Unit::kVector, .infer = infer_clip, .cost = clip_cost,
                .compute = compute_clip});
}

}  // namespace npukit::emu
