// Normalisation kernels (vector unit): LayerNorm, BatchNorm (training mode) and their grads.
//
// LayerNorm(x, gamma, beta) normalises over x[begin_norm_axis:] (attr, default -1 = last dim);
// gamma and beta have exactly those trailing dims. Outputs y (like x), mean and rstd: float32,
// shape = x's leading dims followed by 1s, i.e. keepdim (PyTorch native_layer_norm layout;
// [2,3,8] with begin_norm_axis 2 gives [2,3,1]). rstd = 1/sqrt(var + epsilon).
// LayerNormGrad(dy, x, gamma, mean, rstd) -> dx, dgamma, dbeta; mean/rstd may have any shape
// holding one value per normalised row (keepdim, squeezed or flat).
//
// BatchNorm(x [N,C,...], scale [C], offset [C]) -> y, batch_mean [C], batch_var [C] (float32).
// batch_var is the biased (population) variance that y was normalised with; a framework that
// keeps an unbiased running variance scales it by m/(m-1), m = N*H*W.
// BatchNormGrad(dy, x, scale, batch_mean, batch_var) -> dx, dscale, doffset.
// Both take attr epsilon (default 1e-5). x may have rank 2..N with channels on axis 1.
#include <algorithm>
#include <cmath>

#include "emulator/kernels/common.hpp"

namespace npukit::emu::kern {
namespace {

constexpr const char kLayerNorm[] = "LayerNorm";
constexpr const char kLayerNormGrad[] = "LayerNormGrad";
constexpr const char kBatchNorm[] = "BatchNorm";
constexpr const char kBatchNormGrad[] = "BatchNormGrad";
constexpr double kDefaultEpsilon = 1e-5;

// Training-mode BatchNorm reads its input twice (CANN splits it into BNTrainingReduce, the
// batch statistics, and BNTrainingUpdate, which normalises), and its grad reads dy and x twice
// (BNTrainingUpdateGrad, then BNTrainingReduceGrad): the first kReread inputs are read once more.
template <int kFlops, int kReread>
OpCost two_pass_cost(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out, const Attrs& attrs) {
  OpCost c = per_element_cost<kFlops>(in, out, attrs);
  for (std::size_t i = 0; i < static_cast<std::size_t>(kReread) && i < in.size(); ++i) c.bytes += static_cast<double>(in[i].bytes());
  return c;
}

// ---- shapes ----

Result<std::size_t> norm_axis(std::string_view kernel, const Shape& x, const Attrs& attrs) {
  NPUKIT_RETURN_IF_ERROR(check_min_rank(kernel, "x", x, 1));
  return normalize_axis(kernel, attrs.get_int("begin_norm_axis", -1), x);
}

// gamma / beta: the normalised trailing dims of x.
Status check_affine(std::string_view kernel, std::string_view what, const Shape& x,
                    std::size_t axis, const Shape& param) {
  Shape trailing(x.begin() + static_cast<std::ptrdiff_t>(axis), x.end());
  if (shapes_match(param, trailing)) return Status::Ok();
  return shape_error(kernel, std::string(what) + " must match x's normalised dims " +
                                 dims_str(trailing) + ": got " + dims_str(x) + " and " +
                                 dims_str(param));
}

// mean / rstd given to LayerNormGrad: one value per row (checked when both are static).
Status check_row_stats(std::string_view kernel, std::string_view what, const Shape& x,
                       std::size_t axis, const Shape& stats) {
  Shape leading(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(axis));
  if (is_dynamic(leading) || is_dynamic(stats) || num_elements(stats) == num_elements(leading)) {
    return Status::Ok();
  }
  return shape_error(kernel, std::string(what) + " must hold one value per row of " +
                                 dims_str(leading) + ": got " + dims_str(x) + " and " +
                                 dims_str(stats));
}

Shape keepdim_stats_shape(const Shape& x, std::size_t axis) {
  Shape s(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(axis));
  s.resize(x.size(), 1);
  return s;
}

Result<std::vector<TensorDesc>> infer_layer_norm(const std::vector<TensorDesc>& in,
                                                 const Attrs& attrs) {
  NPUKIT_RETURN_IF_ERROR(check_input_count(kLayerNorm, in, 3));
  const Shape& x = in[0].shape;
  auto axis = norm_axis(kLayerNorm, x, attrs);
  if (!axis.ok()) return axis.status();
  NPUKIT_RETURN_IF_ERROR(check_affine(kLayerNorm, "gamma", x, *axis, in[1].shape));
  NPUKIT_RETURN_IF_ERROR(check_affine(kLayerNorm, "beta", x, *axis, in[2].shape));
  TensorDesc stats{keepdim_stats_shape(x, *axis), DType::kFloat32};
  return std::vector<TensorDesc>{in[0], stats, stats};
}

// Inputs dy, x, gamma, mean, rstd; outputs dx, dgamma, dbeta.
Result<std::vector<TensorDesc>> infer_layer_norm_grad(const std::vector<TensorDesc>& in,
                                                      const Attrs& attrs) {
  NPUKIT_RETURN_IF_ERROR(check_input_count(kLayerNormGrad, in, 5));
  auto x = same_shape_inputs(kLayerNormGrad, in, 2);
  if (!x.ok()) return x.status();
  auto axis = norm_axis(kLayerNormGrad, *x, attrs);
  if (!axis.ok()) return axis.status();
  NPUKIT_RETURN_IF_ERROR(check_affine(kLayerNormGrad, "gamma", *x, *axis, in[2].shape));
  NPUKIT_RETURN_IF_ERROR(check_row_stats(kLayerNormGrad, "mean", *x, *axis, in[3].shape));
  NPUKIT_RETURN_IF_ERROR(check_row_stats(kLayerNormGrad, "rstd", *x, *axis, in[4].shape));
  return std::vector<TensorDesc>{{*x, in[1].dtype}, in[2], in[2]};
}

// x [N,C,...] at in[x_at]; in[first_param..] are [C]. Returns C (dynamic if unknown).
Result<int64_t> batch_norm_channels(std::string_view kernel, const std::vector<TensorDesc>& in,
                                    std::size_t x_at, std::size_t first_param) {
  const Shape& x = in[x_at].shape;
  NPUKIT_RETURN_IF_ERROR(check_min_rank(kernel, "x", x, 2));
  int64_t channels = x[1];
  for (std::size_t i = first_param; i < in.size(); ++i) {
    const Shape& p = in[i].shape;
    if (p.size() != 1 || !dims_match(p[0], channels)) {
      return shape_error(kernel, "input " + std::to_string(i) +
                                     " must be [C] for x [N,C,...]: got " + dims_str(x) + " and " +
                                     dims_str(p));
    }
    channels = merged_dim(channels, p[0]);
  }
  return channels;
}

Result<std::vector<TensorDesc>> infer_batch_norm(const std::vector<TensorDesc>& in,
                                                 const Attrs&) {
  NPUKIT_RETURN_IF_ERROR(check_input_count(kBatchNorm, in, 3));
  auto c = batch_norm_channels(kBatchNorm, in, 0, 1);
  if (!c.ok()) return c.status();
  TensorDesc per_channel{{*c}, DType::kFloat32};
  return std::vector<TensorDesc>{in[0], per_channel, per_channel};
}

// Inputs dy, x, scale, batch_mean, batch_var; outputs dx, dscale, doffset.
Result<std::vector<TensorDesc>> infer_batch_norm_grad(const std::vector<TensorDesc>& in,
                                                      const Attrs&) {
  NPUKIT_RETURN_IF_ERROR(check_input_count(kBatchNormGrad, in, 5));
  auto x = same_shape_inputs(kBatchNormGrad, in, 2);
  if (!x.ok()) return x.status();
  auto c = batch_norm_channels(kBatchNormGrad, in, 1, 2);
  if (!c.ok()) return c.status();
  TensorDesc per_channel{{*c}, in[2].dtype};
  return std::vector<TensorDesc>{{*x, in[1].dtype}, per_channel, per_channel};
}

// ---- CPU: both norms walk "groups" of elements that share one mean and variance ----

// One LayerNorm row or one BatchNorm channel: `blocks` runs of `len` contiguous elements,
// `stride` apart. Element i of a run uses affine parameter param(i).
struct Group {
  int64_t first = 0, blocks = 1, len = 0, stride = 0;
  int64_t channel = -1;  // BatchNorm: every element uses this parameter; LayerNorm: -1

  int64_t count() const { return blocks * len; }
  template <typename F>
  void for_each(F f) const {  // f(element index, parameter index)
    for (int64_t b = 0; b < blocks; ++b) {
      for (int64_t i = 0; i < len; ++i) f(first + b * stride + i, channel >= 0 ? channel : i);
    }
  }
};

std::vector<Group> layer_norm_groups(const Shape& x, std::size_t axis) {
  AxisSplit s = split_at_axis(x, axis);  // rows = outer, row length = extent * inner
  std::vector<Group> groups;
  for (int64_t r = 0; r < s.outer; ++r)
    groups.push_back({r * s.extent * s.inner, 1, s.extent * s.inner, 0, -1});
  return groups;
}

std::vector<Group> batch_norm_groups(const Shape& x) {
  AxisSplit s = split_at_axis(x, 1);  // [N, C, H*W...]
  std::vector<Group> groups;
  for (int64_t c = 0; c < s.extent; ++c)
    groups.push_back({c * s.inner, s.outer, s.inner, s.extent * s.inner, c});
  return groups;
}

struct Moments {
  double mean = 0, var = 0;  // biased variance
};

Moments moments(const float* x, const Group& g) {
  Moments m;
  g.for_each([&](int64_t k, int64_t) { m.mean += x[k]; });
  m.mean /= static_cast<double>(g.count());
  g.for_each([&](int64_t k, int64_t) { m.var += (x[k] - m.mean) * (x[k] - m.mean); });
  m.var /= static_cast<double>(g.count());
  return m;
}

double rstd_of(double var, double epsilon) { return 1.0 / std::sqrt(var + epsilon); }

// y = (x - mean) * rstd * scale + shift.
void normalize(const float* x, const float* scale, const float* shift, float* y, const Group& g,
               double mean, double rstd) {
  g.for_each([&](int64_t k, int64_t p) {
    y[k] = static_cast<float>((x[k] - mean) * rstd * scale[p] + shift[p]);
  });
}

// With xhat = (x - mean) * rstd and g = dy * scale over the group:
// dx = rstd * (g - avg(g) - xhat * avg(g * xhat)); dscale += dy * xhat; dshift += dy.
void normalize_backward(const float* dy, const float* x, const float* scale, float* dx,
                        float* dscale, float* dshift, const Group& g, double mean, double rstd) {
  double sum_g = 0, sum_gx = 0;
  g.for_each([&](int64_t k, int64_t p) {
    double xhat = (x[k] - mean) * rstd;
    sum_g += dy[k] * scale[p];
    sum_gx += dy[k] * scale[p] * xhat;
    dscale[p] += static_cast<float>(dy[k] * xhat);
    dshift[p] += dy[k];
  });
  double n = static_cast<double>(g.count());
  g.for_each([&](int64_t k, int64_t p) {
    double xhat = (x[k] - mean) * rstd;
    dx[k] = static_cast<float>(rstd * (dy[k] * scale[p] - sum_g / n - xhat * sum_gx / n));
  });
}

double epsilon_of(const Attrs& attrs) { return attrs.get_float("epsilon", kDefaultEpsilon); }

// Inputs x, gamma, beta; outputs y, mean, rstd (one per group).
Status compute_layer_norm(const CpuArgs& args) {
  NPUKIT_RETURN_IF_ERROR(float32_launch(kLayerNorm, args));
  auto axis = norm_axis(kLayerNorm, args.in_desc[0].shape, args.attrs);
  if (!axis.ok()) return axis.status();
  const float* x = f32_in(args, 0);
  auto groups = layer_norm_groups(args.in_desc[0].shape, *axis);
  for (std::size_t r = 0; r < groups.size(); ++r) {
    Moments m = moments(x, groups[r]);
    double rstd = rstd_of(m.var, epsilon_of(args.attrs));
    normalize(x, f32_in(args, 1), f32_in(args, 2), f32_out(args, 0), groups[r], m.mean, rstd);
    f32_out(args, 1)[r] = static_cast<float>(m.mean);
    f32_out(args, 2)[r] = static_cast<float>(rstd);
  }
  return Status::Ok();
}

// Inputs x, scale, offset; outputs y, batch_mean, batch_var (one per channel).
Status compute_batch_norm(const CpuArgs& args) {
  NPUKIT_RETURN_IF_ERROR(float32_launch(kBatchNorm, args));
  const float* x = f32_in(args, 0);
  auto groups = batch_norm_groups(args.in_desc[0].shape);
  for (std::size_t c = 0; c < groups.size(); ++c) {
    Moments m = moments(x, groups[c]);
    normalize(x, f32_in(args, 1), f32_in(args, 2), f32_out(args, 0), groups[c], m.mean,
              rstd_of(m.var, epsilon_of(args.attrs)));
    f32_out(args, 1)[c] = static_cast<float>(m.mean);
    f32_out(args, 2)[c] = static_cast<float>(m.var);
  }
  return Status::Ok();
}

// Shared by both grads: inputs dy, x, scale, stat_a, stat_b; outputs dx, dscale, dshift.
// rstd_from(stat_b value) turns the second statistic into rstd.
template <typename RstdFrom>
void run_norm_grad(const CpuArgs& args, const std::vector<Group>& groups, RstdFrom rstd_from) {
  std::fill_n(f32_out(args, 1), args.out_desc[1].elements(), 0.0f);
  std::fill_n(f32_out(args, 2), args.out_desc[2].elements(), 0.0f);
  for (std::size_t i = 0; i < groups.size(); ++i) {
    normalize_backward(f32_in(args, 0), f32_in(args, 1), f32_in(args, 2), f32_out(args, 0),
                       f32_out(args, 1), f32_out(args, 2), groups[i], f32_in(args, 3)[i],
                       rstd_from(f32_in(args, 4)[i]));
  }
}

Status compute_layer_norm_grad(const CpuArgs& args) {
  NPUKIT_RETURN_IF_ERROR(float32_launch(kLayerNormGrad, args));
  auto axis = norm_axis(kLayerNormGrad, args.in_desc[1].shape, args.attrs);
  if (!axis.ok()) return axis.status();
  run_norm_grad(args, layer_norm_groups(args.in_desc[1].shape, *axis),
                [](float rstd) { return static_cast<double>(rstd); });
  return Status::Ok();
}

Status compute_batch_norm_grad(const CpuArgs& args) {
  NPUKIT_RETURN_IF_ERROR(float32_launch(kBatchNormGrad, args));
  double epsilon = epsilon_of(args.attrs);
  run_norm_grad(args, batch_norm_groups(args.in_desc[1].shape),
                [epsilon](float var) { return rstd_of(var, epsilon); });
  return Status::Ok();
}

}  // namespace

void register_norm_kernels(KernelRegistry& r) {
  r.add_kernel({.name = kLayerNorm, .unit = Unit::kVector, .infer = infer_layer_norm,
                .cost = per_element_cost<8>, .compute = compute_layer_norm});
  r.add_kernel({.name = kLayerNormGrad, .unit = Unit::kVector, .infer = infer_layer_norm_grad,
                .cost = per_element_cost<10>, .compute = compute_layer_norm_grad});
  r.add_kernel({.name = kBatchNorm, .unit = Unit::kVector, .input_passes = 2, .infer = infer_batch_norm,
                .cost = two_pass_cost<8, 1>, .compute = compute_batch_norm});
  r.add_kernel({.name = kBatchNormGrad, .unit = Unit::kVector, .input_passes = 2, .infer = infer_batch_norm_grad,
                .cost = two_pass_cost<10, 2>, .compute = compute_batch_norm_grad});
}

}  // namespace npukit::emu::kern
