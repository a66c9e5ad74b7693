// CPU implementations of the cube, element-wise, softmax, reduction and layout kernels against
// naive references written here (plain loops in double precision).
//
// Tolerances: the kernels compute in float32. A float32 dot product of K terms of magnitude
// <= 1 is off by at most ~K * 2^-24 * sum|terms|, about 1e-5 for the sizes used here, so
// sums of products are checked with abs 1e-4 + rel 1e-5; single transcendental functions
// (exp, tanh) with abs 1e-6 + rel 1e-5.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "tests/emulator/kernels/kernels_test_util.hpp"

namespace npukit::emu {
namespace {

using namespace ktest;

constexpr double kSumAbs = 1e-4, kSumRel = 1e-5;
constexpr double kFnAbs = 1e-6, kFnRel = 1e-5;

double dot(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += static_cast<double>(a[i]) * b[i];
  return s;
}

// C = op(A) op(B) where op(A)(i,k) is read from A stored [M,K], or [K,M] when transposed.
std::vector<double> ref_matmul(const std::vector<float>& a, const std::vector<float>& b,
                               int64_t m, int64_t k, int64_t n, bool ta, bool tb) {
  std::vector<double> c(static_cast<std::size_t>(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t p = 0; p < k; ++p) {
        double av = ta ? a[p * m + i] : a[i * k + p];
        double bv = tb ? b[j * k + p] : b[p * n + j];
        c[i * n + j] += av * bv;
      }
  return c;
}

TEST(KernelsFunctional, MatMulV2MatchesNaiveReferenceForAllTransposes) {
  std::mt19937 rng(1);
  const int64_t m = 5, k = 7, n = 3;
  for (int ta = 0; ta <= 1; ++ta) {
    for (int tb = 0; tb <= 1; ++tb) {
      auto a = random_floats(rng, m * k), b = random_floats(rng, k * n);
      Shape a_shape = ta ? Shape{k, m} : Shape{m, k};
      Shape b_shape = tb ? Shape{n, k} : Shape{k, n};
      Attrs attrs{{"transpose_a", int64_t{ta}}, {"transpose_b", int64_t{tb}}};
      auto c = run_f32("MatMulV2", {f32(a_shape, a), f32(b_shape, b)}, attrs);
      EXPECT_TRUE(all_near(c, ref_matmul(a, b, m, k, n, ta, tb), kSumAbs, kSumRel))
          << "transpose_a=" << ta << " transpose_b=" << tb;
    }
  }
}

TEST(KernelsFunctional, BatchMatMulV2MatchesPerBatchReference) {
  std::mt19937 rng(2);
  const int64_t batch = 6, m = 3, k = 4, n = 5;
  auto a = random_floats(rng, batch * m * k);
  auto b = random_floats(rng, batch * k * n);
  auto b_shared = random_floats(rng, k * n);
  auto c = run_f32("BatchMatMulV2", {f32({2, 3, m, k}, a), f32({2, 3, k, n}, b)});
  auto c_shared = run_f32("aten::bmm", {f32({2, 3, m, k}, a), f32({k, n}, b_shared)});
  std::vector<double> expected, expected_shared;
  for (int64_t i = 0; i < batch; ++i) {
    std::vector<float> a_i(a.begin() + i * m * k, a.begin() + (i + 1) * m * k);
    std::vector<float> b_i(b.begin() + i * k * n, b.begin() + (i + 1) * k * n);
    auto r = ref_matmul(a_i, b_i, m, k, n, false, false);
    auto r_shared = ref_matmul(a_i, b_shared, m, k, n, false, false);
    expected.insert(expected.end(), r.begin(), r.end());
    expected_shared.insert(expected_shared.end(), r_shared.begin(), r_shared.end());
  }
  EXPECT_TRUE(all_near(c, expected, kSumAbs, kSumRel));
  EXPECT_TRUE(all_near(c_shared, expected_shared, kSumAbs, kSumRel));
}

struct ConvCase {
  int64_t n, c, h, w, o, kh, kw, groups, sh, sw, ph, pw, dh, dw;
  int64_t oh() const { return (h + 2 * ph - dh * (kh - 1) - 1) / sh + 1; }
  int64_t ow() const { return (w + 2 * pw - dw * (kw - 1) - 1) / sw + 1; }
  Shape x_shape() const { return {n, c, h, w}; }
  Shape w_shape() const { return {o, c / groups, kh, kw}; }
  Shape y_shape() const { return {n, o, oh(), ow()}; }
  Attrs attrs() const {
    return {{"strides", std::vector<int64_t>{sh, sw}}, {"pads", std::vector<int64_t>{ph, pw}},
            {"dilations", std::vector<int64_t>{dh, dw}}, {"groups", groups}};
  }
};

const ConvCase kConvCases[] = {
    {2, 4, 7, 6, 6, 3, 3, 2, 2, 1, 1, 2, 1, 2},  // groups, stride, asymmetric pad, dilation
    {1, 3, 5, 5, 2, 2, 2, 1, 1, 1, 0, 0, 2, 2},  // dilation only
    {2, 3, 6, 8, 3, 3, 2, 3, 2, 3, 2, 1, 1, 1},  // depthwise, strides [2,3]
};

// Direct convolution over a zero-padded copy of x (no bounds checks in the inner loop).
std::vector<double> ref_conv2d(const std::vector<float>& x, const std::vector<float>& w,
                               const ConvCase& p) {
  int64_t hp = p.h + 2 * p.ph, wp = p.w + 2 * p.pw;
  std::vector<double> padded(static_cast<std::size_t>(p.n * p.c * hp * wp), 0.0);
  for (int64_t i = 0; i < p.n * p.c; ++i)
    for (int64_t y = 0; y < p.h; ++y)
      for (int64_t z = 0; z < p.w; ++z)
        padded[(i * hp + y + p.ph) * wp + z + p.pw] = x[(i * p.h + y) * p.w + z];
  int64_t cg = p.c / p.groups, og = p.o / p.groups;
  std::vector<double> out;
  for (int64_t n = 0; n < p.n; ++n)
    for (int64_t o = 0; o < p.o; ++o)
      for (int64_t oy = 0; oy < p.oh(); ++oy)
        for (int64_t ox = 0; ox < p.ow(); ++ox) {
          double s = 0;
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t ky = 0; ky < p.kh; ++ky)
              for (int64_t kx = 0; kx < p.kw; ++kx) {
                int64_t c = (o / og) * cg + ci;
                s += padded[((n * p.c + c) * hp + oy * p.sh + ky * p.dh) * wp + ox * p.sw +
                            kx * p.dw] *
                     w[((o * cg + ci) * p.kh + ky) * p.kw + kx];
              }
          out.push_back(s);
        }
  return out;
}

TEST(KernelsFunctional, Conv2DMatchesPaddedDirectConvolution) {
  std::mt19937 rng(3);
  for (const ConvCase& p : kConvCases) {
    auto x = random_floats(rng, num_elements(p.x_shape()));
    auto w = random_floats(rng, num_elements(p.w_shape()));
    auto y = run("Conv2D", {f32(p.x_shape(), x), f32(p.w_shape(), w)}, p.attrs());
    ASSERT_TRUE(y.ok()) << y.status().message();
    EXPECT_EQ((*y)[0].desc.shape, p.y_shape());
    EXPECT_TRUE(all_near((*y)[0].values<float>(), ref_conv2d(x, w, p), kSumAbs, kSumRel));
  }
}

// Both gradients are adjoints of the forward conv: <conv(x,w), dy> = <x, dx> = <w, dw>.
TEST(KernelsFunctional, Conv2DBackpropKernelsAreAdjointsOfTheForwardConv) {
  std::mt19937 rng(4);
  for (const ConvCase& p : kConvCases) {
    auto x = random_floats(rng, num_elements(p.x_shape()));
    auto w = random_floats(rng, num_elements(p.w_shape()));
    auto dy = random_floats(rng, num_elements(p.y_shape()));
    Attrs bp_input = p.attrs().set("input_size", p.x_shape());
    Attrs bp_filter = p.attrs().set("filter_size", p.w_shape());
    auto y = run_f32("Conv2D", {f32(p.x_shape(), x), f32(p.w_shape(), w)}, p.attrs());
    auto dx = run_f32("conv2d_grad_input", {f32(p.y_shape(), dy), f32(p.w_shape(), w)}, bp_input);
    auto dw = run_f32("conv2d_grad_filter", {f32(p.x_shape(), x), f32(p.y_shape(), dy)}, bp_filter);
    double forward = dot(y, dy);
    double scale = 1e-5 * static_cast<double>(y.size());  // float32 error on the sums
    EXPECT_NEAR(dot(x, dx), forward, scale);
    EXPECT_NEAR(dot(w, dw), forward, scale);
    EXPECT_GT(std::abs(forward), 1e-3);  // a non-trivial identity
  }
}

TEST(KernelsFunctional, AddBroadcastsLikeNumPy) {
  std::mt19937 rng(5);
  auto a = random_floats(rng, 24);
  auto trailing = random_floats(rng, 4), column = random_floats(rng, 3),
       scalar = random_floats(rng, 1);
  std::vector<double> with_trailing, with_column, with_scalar, outer;
  // One correctly rounded float32 operation per element: the results must be identical.
  for (int64_t i = 0; i < 24; ++i) {
    with_trailing.push_back(a[i] + trailing[i % 4]);
    with_column.push_back(a[i] + column[(i / 4) % 3]);
    with_scalar.push_back(a[i] * scalar[0]);
  }
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 4; ++j) outer.push_back(column[i] - trailing[j]);
  Shape s{2, 3, 4};
  EXPECT_TRUE(all_near(run_f32("Add", {f32(s, a), f32({4}, trailing)}), with_trailing, 0, 0));
  EXPECT_TRUE(all_near(run_f32("aten::add", {f32(s, a), f32({3, 1}, column)}), with_column, 0, 0));
  EXPECT_TRUE(all_near(run_f32("Mul", {f32(s, a), f32({}, scalar)}), with_scalar, 0, 0));
  EXPECT_TRUE(all_near(run_f32("Sub", {f32({3, 1}, column), f32({1, 4}, trailing)}), outer, 0, 0));
}

TEST(KernelsFunctional, ActivationsMatchTheirFormulas) {
  std::mt19937 rng(6);
  auto x = random_floats(rng, 64, -4.0f, 4.0f);
  std::vector<double> relu, sigmoid, tanh_ref, gelu;
  for (float v : x) {
    double d = v;
    relu.push_back(std::max(d, 0.0));
    sigmoid.push_back(1.0 / (1.0 + std::exp(-d)));
    tanh_ref.push_back(std::tanh(d));
    gelu.push_back(0.5 * d * (1 + std::tanh(std::sqrt(2 / M_PI) * (d + 0.044715 * d * d * d))));
  }
  EXPECT_TRUE(all_near(run_f32("Relu", {f32({64}, x)}), relu, 0, 0));
  EXPECT_TRUE(all_near(run_f32("Sigmoid", {f32({64}, x)}), sigmoid, kFnAbs, kFnRel));
  EXPECT_TRUE(all_near(run_f32("Tanh", {f32({64}, x)}), tanh_ref, kFnAbs, kFnRel));
  EXPECT_TRUE(all_near(run_f32("Gelu", {f32({64}, x)}), gelu, kFnAbs, kFnRel));
}

// GeluGrad against central differences of Gelu; ReluGrad passes dy where x > 0.
TEST(KernelsFunctional, ActivationGradsMatchDerivatives) {
  std::mt19937 rng(7);
  auto x = random_floats(rng, 32, -3.0f, 3.0f), dy = random_floats(rng, 32);
  auto gelu = [](double v) {
    return 0.5 * v * (1 + std::tanh(0.7978845608 * (v + 0.044715 * v * v * v)));
  };
  std::vector<double> gelu_grad, relu_grad;
  for (std::size_t i = 0; i < x.size(); ++i) {
    double h = 1e-5;  // truncation ~h^2, rounding ~1e-16/h: both far below the tolerance
    gelu_grad.push_back(dy[i] * (gelu(x[i] + h) - gelu(x[i] - h)) / (2 * h));
    relu_grad.push_back(x[i] > 0 ? dy[i] : 0.0);
  }
  EXPECT_TRUE(
      all_near(run_f32("GeluGrad", {f32({32}, dy), f32({32}, x)}), gelu_grad, kFnAbs, kFnRel));
  EXPECT_TRUE(all_near(run_f32("aten::threshold_backward", {f32({32}, dy), f32({32}, x)}),
                       relu_grad, 0, 0));
}

// Softmax of [2,3,4] along `axis` in double.
std::vector<double> ref_softmax(const std::vector<float>& x, int axis) {
  const int64_t dims[3] = {2, 3, 4};
  int64_t stride = axis == 2 ? 1 : (axis == 1 ? 4 : 12);
  std::vector<double> y(x.size());
  for (int64_t i = 0; i < 24; ++i) {
    int64_t first = i - ((i / stride) % dims[axis]) * stride;  // same row, index 0 on the axis
    double sum = 0;
    for (int64_t j = 0; j < dims[axis]; ++j)
      sum += std::exp(static_cast<double>(x[first + j * stride]));
    y[i] = std::exp(static_cast<double>(x[i])) / sum;
  }
  return y;
}

TEST(KernelsFunctional, SoftmaxV2RowsSumToOneAndMatchReference) {
  std::mt19937 rng(8);
  auto x = random_floats(rng, 24, -5.0f, 5.0f);
  for (int axis : {2, 1, 0}) {
    auto y = run_f32("SoftmaxV2", {f32({2, 3, 4}, x)}, {{"axis", int64_t{axis - 3}}});
    auto expected = ref_softmax(x, axis);
    EXPECT_TRUE(all_near(y, expected, kFnAbs, kFnRel)) << "axis " << axis;
    double total = 0;
    for (float v : y) total += v;
    EXPECT_NEAR(total, 24.0 / (axis == 2 ? 4 : (axis == 1 ? 3 : 2)), 1e-5);  // one per row
  }
}

TEST(KernelsFunctional, SoftmaxGradIsTheSoftmaxJacobianTransposeProduct) {
  std::mt19937 rng(9);
  auto x = random_floats(rng, 24), dy = random_floats(rng, 24);
  auto y = run_f32("SoftmaxV2", {f32({6, 4}, x)});
  auto dx = run_f32("SoftmaxGrad", {f32({6, 4}, y), f32({6, 4}, dy)});
  std::vector<double> expected;
  for (int64_t i = 0; i < 24; ++i) {
    double s = 0;  // dx_i = sum_j dy_j * dy_j/dx_i = sum_j dy_j * y_j * (delta_ij - y_i)
    for (int64_t j = i / 4 * 4; j < i / 4 * 4 + 4; ++j) s += dy[j] * y[j] * ((i == j) - y[i]);
    expected.push_back(s);
  }
  EXPECT_TRUE(all_near(dx, expected, kFnAbs, kFnRel));
}

TEST(KernelsFunctional, ReductionsMatchLoops) {
  std::mt19937 rng(10);
  auto x = random_floats(rng, 24);
  std::vector<double> sum(3, 0.0), max(3, -1e9);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t k = 0; k < 4; ++k) {
        sum[j] += x[(i * 3 + j) * 4 + k];
        max[j] = std::max<double>(max[j], x[(i * 3 + j) * 4 + k]);
      }
  std::vector<double> mean;
  for (double s : sum) mean.push_back(s / 8);
  Attrs axes{{"axes", std::vector<int64_t>{0, -1}}};
  EXPECT_TRUE(all_near(run_f32("ReduceSum", {f32({2, 3, 4}, x)}, axes), sum, kSumAbs, kSumRel));
  EXPECT_TRUE(all_near(run_f32("ReduceMean", {f32({2, 3, 4}, x)}, axes), mean, kSumAbs, kSumRel));
  EXPECT_TRUE(all_near(run_f32("ReduceMax", {f32({2, 3, 4}, x)}, axes), max, 0, 0));
  double total = sum[0] + sum[1] + sum[2];
  EXPECT_TRUE(all_near(run_f32("sum", {f32({2, 3, 4}, x)}), {total}, kSumAbs, kSumRel));
}

TEST(KernelsFunctional, GatherV2LooksUpRowsAndRejectsOutOfRangeIds) {
  std::mt19937 rng(11);
  auto table = random_floats(rng, 10 * 4);
  std::vector<int32_t> ids = {3, 0, 9, 3, 7, 1};
  std::vector<double> expected;
  for (int32_t id : ids)
    for (int64_t d = 0; d < 4; ++d) expected.push_back(table[id * 4 + d]);
  auto out32 = run("GatherV2", {f32({10, 4}, table), ktest::i32({2, 3}, ids)});
  ASSERT_TRUE(out32.ok()) << out32.status().message();
  EXPECT_EQ((*out32)[0].desc.shape, (Shape{2, 3, 4}));
  EXPECT_TRUE(all_near((*out32)[0].values<float>(), expected, 0, 0));
  std::vector<int64_t> ids64(ids.begin(), ids.end());
  auto out64 = run_f32("embedding", {f32({10, 4}, table), ktest::i64({6}, ids64)});
  EXPECT_TRUE(all_near(out64, expected, 0, 0));
  auto bad = run("GatherV2", {f32({10, 4}, table), ktest::i64({2}, {4, 10})});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Code::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("GatherV2"), std::string::npos);
  EXPECT_NE(bad.status().message().find("id 10"), std::string::npos) << bad.status().message();
}

TEST(KernelsFunctional, TransposeMovesElementsByPerm) {
  std::mt19937 rng(12);
  auto x = random_floats(rng, 24);  // [2,3,4] -> perm [2,0,1] -> [4,2,3]
  std::vector<double> expected;
  for (int64_t k = 0; k < 4; ++k)
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 3; ++j) expected.push_back(x[(i * 3 + j) * 4 + k]);
  auto out = run("Transpose", {f32({2, 3, 4}, x)}, {{"perm", std::vector<int64_t>{2, 0, 1}}});
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_EQ((*out)[0].desc.shape, (Shape{4, 2, 3}));
  EXPECT_TRUE(all_near((*out)[0].values<float>(), expected, 0, 0));
}

TEST(KernelsFunctional, CastFloat16RoundTrip) {
  std::mt19937 rng(13);
  auto x = random_floats(rng, 64, -100.0f, 100.0f);
  x.insert(x.end(), {1.0f, -2.5f, 65504.0f, 0.0f});  // exactly representable in fp16
  auto half = run("Cast", {f32({68}, x)}, {{"dst_type", std::string("float16")}});
  ASSERT_TRUE(half.ok()) << half.status().message();
  EXPECT_EQ((*half)[0].desc.dtype, DType::kFloat16);
  EXPECT_EQ((*half)[0].values<uint16_t>()[64], 0x3C00);  // 1.0 in IEEE half
  auto back = run_f32("cast", {(*half)[0]}, {{"dst_type", std::string("float32")}});
  ASSERT_EQ(back.size(), x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    // fp16 has an 11-bit significand: round-to-nearest is within 2^-11 relative.
    EXPECT_NEAR(back[i], x[i], std::abs(x[i]) * std::ldexp(1.0, -11)) << i;
  }
  EXPECT_EQ(back[65], -2.5f);
  EXPECT_EQ(back[66], 65504.0f);
}

TEST(KernelsFunctional, CastFloat32ToInt32TruncatesTowardZero) {
  auto out =
      run("Cast", {f32({4}, {2.7f, -2.7f, 0.5f, 3e10f})}, {{"dst_type", std::string("int32")}});
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_EQ((*out)[0].values<int32_t>(), (std::vector<int32_t>{2, -2, 0, 2147483647}));
  auto unsupported = run("Cast", {f32({1}, {1.0f})}, {{"dst_type", std::string("int8")}});
  ASSERT_FALSE(unsupported.ok());
  EXPECT_NE(unsupported.status().message().find("float32 -> int8"), std::string::npos);
}

TEST(KernelsFunctional, ReshapeCopiesBytesUnchanged) {
  std::vector<float> x = {1, 2, 3, 4, 5, 6};
  auto out = run("reshape2", {f32({2, 3}, x)}, {{"shape", std::vector<int64_t>{3, -1}}});
  ASSERT_TRUE(out.ok()) << out.status().message();
  EXPECT_EQ((*out)[0].desc.shape, (Shape{3, 2}));
  EXPECT_EQ((*out)[0].values<float>(), x);
}

TEST(KernelsFunctional, CumsumRunsAlongTheAxis) {
  std::vector<float> x = {1, 2, 3, 4, 5, 6};
  EXPECT_TRUE(all_near(run_f32("Cumsum", {f32({2, 3}, x)}), {1, 2, 3, 5, 7, 9}, 0, 0));
  EXPECT_TRUE(all_near(run_f32("cumsum", {f32({2, 3}, x)}, {{"axis", int64_t{1}}}),
                       {1, 3, 6, 4, 9, 15}, 0, 0));
}

TEST(KernelsFunctional, NonFloat32LaunchNamesKernelAndDtype) {
  auto a = ktest::HostTensor::of<uint16_t>({2, 2}, DType::kFloat16, {0, 0, 0, 0});
  auto out = run("MatMulV2", {a, a});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(out.status().message(), "MatMulV2: functional mode supports float32 only, got float16");
}

}  // namespace
}  // namespace npukit::emu
