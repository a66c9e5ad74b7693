// CPU implementations of the norm and training kernels against double-precision references:
// forward passes against direct formulas, gradients against central differences of those
// formulas.
//
// Tolerances: the kernels compute statistics in double and store float32, so forward outputs
// of magnitude ~1-3 are within a few float32 ulps (abs 1e-5). Finite differences with h = 1e-4
// in double are accurate to ~1e-8; the gradient kernels' float32 sums of ~24 terms add ~1e-5.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include "tests/emulator/kernels/kernels_test_util.hpp"

namespace npukit::emu {
namespace {

using namespace ktest;

constexpr double kEps = 1e-5;
constexpr double kForwardAbs = 1e-5, kGradAbs = 1e-4;

using Vec = std::vector<double>;

Vec to_double(const std::vector<float>& v) { return Vec(v.begin(), v.end()); }

double dot(const Vec& a, const Vec& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

// Central-difference gradient of a scalar function f at p.
Vec numeric_grad(const std::function<double(const Vec&)>& f, Vec p) {
  const double h = 1e-4;
  Vec g(p.size());
  for (std::size_t i = 0; i < p.size(); ++i) {
    double saved = p[i];
    p[i] = saved + h;
    double up = f(p);
    p[i] = saved - h;
    double down = f(p);
    p[i] = saved;
    g[i] = (up - down) / (2 * h);
  }
  return g;
}

// Normalises `groups` groups; element e of group g is x[index(g, e)] and uses parameter
// param(g, e). Returns y = (x - mean) / sqrt(var + eps) * scale + shift.
template <typename Index, typename Param>
Vec ref_normalize(const Vec& x, const Vec& scale, const Vec& shift, int64_t groups, int64_t size,
                  Index index, Param param) {
  Vec y(x.size());
  for (int64_t g = 0; g < groups; ++g) {
    double mean = 0, var = 0;
    for (int64_t e = 0; e < size; ++e) mean += x[index(g, e)] / size;
    for (int64_t e = 0; e < size; ++e)
      var += (x[index(g, e)] - mean) * (x[index(g, e)] - mean) / size;
    for (int64_t e = 0; e < size; ++e) {
      int64_t k = index(g, e), p = param(g, e);
      y[k] = (x[k] - mean) / std::sqrt(var + kEps) * scale[p] + shift[p];
    }
  }
  return y;
}

// LayerNorm of rows x [rows, cols] over the last dim.
Vec ref_layer_norm(const Vec& x, const Vec& gamma, const Vec& beta, int64_t rows, int64_t cols) {
  return ref_normalize(
      x, gamma, beta, rows, cols, [&](int64_t r, int64_t c) { return r * cols + c; },
      [](int64_t, int64_t c) { return c; });
}

// BatchNorm of x [n, channels, inner] per channel.
Vec ref_batch_norm(const Vec& x, const Vec& scale, const Vec& offset, int64_t n,
                   int64_t channels, int64_t inner) {
  return ref_normalize(
      x, scale, offset, channels, n * inner,
      [&](int64_t c, int64_t e) { return (e / inner * channels + c) * inner + e % inner; },
      [](int64_t c, int64_t) { return c; });
}

struct NormCase {
  Shape x_shape;
  std::vector<float> x, scale, shift, dy;
};

NormCase make_case(std::mt19937& rng, Shape x_shape, int64_t params) {
  NormCase c{x_shape, {}, {}, {}, {}};
  int64_t n = num_elements(x_shape);
  c.x = random_floats(rng, n, -2.0f, 2.0f);
  c.scale = random_floats(rng, params, 0.5f, 1.5f);
  c.shift = random_floats(rng, params);
  c.dy = random_floats(rng, n);
  return c;
}

TEST(KernelsFunctional, LayerNormMatchesReferenceAndReturnsKeepdimStats) {
  std::mt19937 rng(20);
  NormCase c = make_case(rng, {2, 3, 8}, 24);
  Attrs attrs{{"begin_norm_axis", int64_t{1}}};  // normalise over [3,8]: 2 rows of 24
  auto out =
      run("LayerNorm", {f32(c.x_shape, c.x), f32({3, 8}, c.scale), f32({3, 8}, c.shift)}, attrs);
  ASSERT_TRUE(out.ok()) << out.status().message();
  Vec y = ref_layer_norm(to_double(c.x), to_double(c.scale), to_double(c.shift), 2, 24);
  EXPECT_TRUE(all_near((*out)[0].values<float>(), y, kForwardAbs, 0));
  EXPECT_EQ((*out)[1].desc.shape, (Shape{2, 1, 1}));
  EXPECT_EQ((*out)[2].desc.shape, (Shape{2, 1, 1}));
  for (int64_t r = 0; r < 2; ++r) {
    double mean = 0, var = 0;
    for (int64_t e = 0; e < 24; ++e) mean += c.x[r * 24 + e] / 24.0;
    for (int64_t e = 0; e < 24; ++e)
      var += (c.x[r * 24 + e] - mean) * (c.x[r * 24 + e] - mean) / 24.0;
    EXPECT_NEAR((*out)[1].values<float>()[r], mean, kForwardAbs);
    EXPECT_NEAR((*out)[2].values<float>()[r], 1 / std::sqrt(var + kEps), kForwardAbs);
  }
}

TEST(KernelsFunctional, LayerNormGradMatchesFiniteDifferences) {
  std::mt19937 rng(21);
  NormCase c = make_case(rng, {4, 6}, 6);
  auto fwd = run("layer_norm", {f32({4, 6}, c.x), f32({6}, c.scale), f32({6}, c.shift)});
  ASSERT_TRUE(fwd.ok()) << fwd.status().message();
  auto grads = run("LayerNormGrad", {f32({4, 6}, c.dy), f32({4, 6}, c.x), f32({6}, c.scale),
                                     (*fwd)[1], (*fwd)[2]});
  ASSERT_TRUE(grads.ok()) << grads.status().message();
  Vec x = to_double(c.x), gamma = to_double(c.scale), beta = to_double(c.shift),
      dy = to_double(c.dy);
  // Loss = <LayerNorm(x, gamma, beta), dy>; its gradients are dx, dgamma, dbeta.
  auto dx =
      numeric_grad([&](const Vec& v) { return dot(ref_layer_norm(v, gamma, beta, 4, 6), dy); }, x);
  auto dgamma =
      numeric_grad([&](const Vec& v) { return dot(ref_layer_norm(x, v, beta, 4, 6), dy); }, gamma);
  auto dbeta =
      numeric_grad([&](const Vec& v) { return dot(ref_layer_norm(x, gamma, v, 4, 6), dy); }, beta);
  EXPECT_TRUE(all_near((*grads)[0].values<float>(), dx, kGradAbs, 0));
  EXPECT_TRUE(all_near((*grads)[1].values<float>(), dgamma, kGradAbs, 0));
  EXPECT_TRUE(all_near((*grads)[2].values<float>(), dbeta, kGradAbs, 0));
}

TEST(KernelsFunctional, BatchNormMatchesReferenceAndGradMatchesFiniteDifferences) {
  std::mt19937 rng(22);
  NormCase c = make_case(rng, {2, 3, 2, 2}, 3);
  auto fwd = run("BatchNorm", {f32(c.x_shape, c.x), f32({3}, c.scale), f32({3}, c.shift)});
  ASSERT_TRUE(fwd.ok()) << fwd.status().message();
  Vec x = to_double(c.x), scale = to_double(c.scale), offset = to_double(c.shift),
      dy = to_double(c.dy);
  EXPECT_TRUE(all_near((*fwd)[0].values<float>(), ref_batch_norm(x, scale, offset, 2, 3, 4),
                       kForwardAbs, 0));
  EXPECT_EQ((*fwd)[1].desc.shape, (Shape{3}));
  auto grads = run("aten::native_batch_norm_backward", {f32(c.x_shape, c.dy), f32(c.x_shape, c.x),
                                                        f32({3}, c.scale), (*fwd)[1], (*fwd)[2]});
  ASSERT_TRUE(grads.ok()) << grads.status().message();
  auto dx = numeric_grad(
      [&](const Vec& v) { return dot(ref_batch_norm(v, scale, offset, 2, 3, 4), dy); }, x);
  auto dscale = numeric_grad(
      [&](const Vec& v) { return dot(ref_batch_norm(x, v, offset, 2, 3, 4), dy); }, scale);
  auto doffset = numeric_grad(
      [&](const Vec& v) { return dot(ref_batch_norm(x, scale, v, 2, 3, 4), dy); }, offset);
  EXPECT_TRUE(all_near((*grads)[0].values<float>(), dx, kGradAbs, 0));
  EXPECT_TRUE(all_near((*grads)[1].values<float>(), dscale, kGradAbs, 0));
  EXPECT_TRUE(all_near((*grads)[2].values<float>(), doffset, kGradAbs, 0));
}

TEST(KernelsFunctional, SoftmaxCrossEntropyMatchesLogSumExpReference) {
  std::mt19937 rng(23);
  auto logits = random_floats(rng, 4 * 5, -3.0f, 3.0f);
  std::vector<int32_t> labels = {0, 4, 2, 2};
  Vec loss, backprop;
  for (int64_t n = 0; n < 4; ++n) {
    double sum = 0;
    for (int64_t j = 0; j < 5; ++j) sum += std::exp(static_cast<double>(logits[n * 5 + j]));
    loss.push_back(std::log(sum) - logits[n * 5 + labels[n]]);
    for (int64_t j = 0; j < 5; ++j)
      backprop.push_back(std::exp(logits[n * 5 + j]) / sum - (j == labels[n]));
  }
  auto out = run("softmax_with_cross_entropy", {f32({4, 5}, logits), ktest::i32({4}, labels)});
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_TRUE(all_near((*out)[0].values<float>(), loss, kForwardAbs, 1e-6));
  EXPECT_TRUE(all_near((*out)[1].values<float>(), backprop, kForwardAbs, 1e-6));
  auto bad =
      run("SoftmaxCrossEntropyWithLogits", {f32({4, 5}, logits), ktest::i64({4}, {0, 1, 5, 2})});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "SoftmaxCrossEntropyWithLogits: label 5 in row 2 is out of range [0, 5)");
}

// Five in-place Adam steps (outputs alias param, m, v) against the textbook update in double.
TEST(KernelsFunctional, ApplyAdamInPlaceMatchesReferenceOverSeveralSteps) {
  std::mt19937 rng(24);
  const int64_t n = 16;
  const double lr = 0.01, b1 = 0.9, b2 = 0.999, eps = 1e-8;
  std::vector<float> param = random_floats(rng, n), m(n, 0.0f), v(n, 0.0f);
  Vec ref_p = to_double(param), ref_m(n, 0.0), ref_v(n, 0.0);
  const KernelDef* adam = KernelRegistry::builtin().find("adam");
  ASSERT_NE(adam, nullptr);
  std::vector<TensorDesc> in_desc(4, TensorDesc{{n}, DType::kFloat32});
  std::vector<TensorDesc> out_desc(3, TensorDesc{{n}, DType::kFloat32});
  for (int64_t step = 1; step <= 5; ++step) {
    auto grad = random_floats(rng, n);
    Attrs attrs{{"lr", lr}, {"beta1", b1}, {"beta2", b2}, {"epsilon", eps}, {"step", step}};
    CpuArgs args{{param.data(), m.data(), v.data(), grad.data()},
                 {param.data(), m.data(), v.data()},
                 in_desc,
                 out_desc,
                 attrs};
    ASSERT_TRUE(adam->compute(args).ok());
    for (int64_t i = 0; i < n; ++i) {
      ref_m[i] = b1 * ref_m[i] + (1 - b1) * grad[i];
      ref_v[i] = b2 * ref_v[i] + (1 - b2) * grad[i] * grad[i];
      double m_hat = ref_m[i] / (1 - std::pow(b1, step)),
             v_hat = ref_v[i] / (1 - std::pow(b2, step));
      ref_p[i] -= lr * m_hat / (std::sqrt(v_hat) + eps);
    }
  }
  // float32 storage between steps: relative 1e-6 per step on values of magnitude <= 1.
  EXPECT_TRUE(all_near(param, ref_p, 1e-5, 1e-5));
  EXPECT_TRUE(all_near(m, ref_m, 1e-6, 1e-5));
  EXPECT_TRUE(all_near(v, ref_v, 1e-7, 1e-5));
}

// Three in-place LAMB steps against the paper's update in double: Adam's moments, r = the
// bias-corrected step + weight decay x param, and param -= lr x (|param| / |r|) x r over the tensor.
TEST(KernelsFunctional, ApplyLambInPlaceMatchesReferenceOverSeveralSteps) {
  std::mt19937 rng(25);
  const int64_t n = 16;
  const double lr = 0.01, b1 = 0.9, b2 = 0.999, eps = 1e-6, wd = 0.1;  // not the default: the attr must be read
  std::vector<float> param = random_floats(rng, n), m(n, 0.0f), v(n, 0.0f);
  Vec ref_p = to_double(param), ref_m(n, 0.0), ref_v(n, 0.0);
  const KernelDef* lamb = KernelRegistry::builtin().find("lamb");
  ASSERT_NE(lamb, nullptr);
  std::vector<TensorDesc> in_desc(4, TensorDesc{{n}, DType::kFloat32});
  std::vector<TensorDesc> out_desc(3, TensorDesc{{n}, DType::kFloat32});
  for (int64_t step = 1; step <= 3; ++step) {
    auto grad = random_floats(rng, n);
    Attrs attrs{{"lr", lr}, {"beta1", b1}, {"beta2", b2}, {"epsilon", eps}, {"weight_decay", wd}, {"step", step}};
    CpuArgs args{{param.data(), m.data(), v.data(), grad.data()}, {param.data(), m.data(), v.data()},
                 in_desc, out_desc, attrs};
    ASSERT_TRUE(lamb->compute(args).ok());
    Vec r(n);
    double p_sq = 0, r_sq = 0;
    for (int64_t i = 0; i < n; ++i) {
      ref_m[i] = b1 * ref_m[i] + (1 - b1) * grad[i];
      ref_v[i] = b2 * ref_v[i] + (1 - b2) * grad[i] * grad[i];
      double m_hat = ref_m[i] / (1 - std::pow(b1, step)), v_hat = ref_v[i] / (1 - std::pow(b2, step));
      r[i] = m_hat / (std::sqrt(v_hat) + eps) + wd * ref_p[i];
      p_sq += ref_p[i] * ref_p[i];
      r_sq += r[i] * r[i];
    }
    double ratio = std::sqrt(p_sq / r_sq);
    EXPECT_NE(ratio, 1.0) << "the trust ratio scales the step (else this would be Adam with decay)";
    for (int64_t i = 0; i < n; ++i) ref_p[i] -= lr * ratio * r[i];
  }
  EXPECT_TRUE(all_near(param, ref_p, 1e-5, 1e-5));
  EXPECT_TRUE(all_near(m, ref_m, 1e-6, 1e-5));
  EXPECT_TRUE(all_near(v, ref_v, 1e-7, 1e-5));
  // Its HBM traffic: two passes, Adam's 28 bytes per float32 element and r written and read and
  // param read again.
  OpCost cost = lamb->cost(in_desc, out_desc, {});
  EXPECT_DOUBLE_EQ(cost.bytes, 40.0 * n);
  const KernelDef* adam = KernelRegistry::builtin().find("ApplyAdam");
  auto refused = adam->infer(in_desc, Attrs{{"weight_decay", 0.01}});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(), "ApplyAdam: attr weight_decay is ApplyLamb's (this Adam has no decay)");
}

TEST(KernelsFunctional, ClipByNormScalesOnlyAGradientAboveTheNorm) {
  auto clipped = run("clip_by_norm", {f32({2}, {3.0f, 4.0f})}, Attrs{{"clip_norm", 1.0}});
  ASSERT_TRUE(clipped.ok()) << clipped.status().message();
  EXPECT_TRUE(all_near((*clipped)[0].values<float>(), Vec{0.6, 0.8}, 1e-6, 1e-6));
  auto kept = run("ClipByNorm", {f32({2}, {0.3f, 0.4f})}, Attrs{{"clip_norm", 1.0}});
  ASSERT_TRUE(kept.ok());
  EXPECT_TRUE(all_near((*kept)[0].values<float>(), Vec{0.3, 0.4}, 1e-7, 1e-6));
  auto bad = run("ClipByNorm", {f32({2}, {3.0f, 4.0f})}, Attrs{{"clip_norm", 0.0}});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "ClipByNorm: attr clip_norm must be > 0");
  const KernelDef* clip = KernelRegistry::builtin().find("ClipByNorm");
  std::vector<TensorDesc> d{{{1000}, DType::kFloat32}};
  EXPECT_DOUBLE_EQ(clip->cost(d, d, {}).bytes, 12.0 * 1000) << "the norm's read, then the scale's read and write";
}

}  // namespace
}  // namespace npukit::emu
