// Convolutions run at the chip's convolution efficiency where its spec has a published one (the
// A100: 0.402, the CUTLASS profiler's fprop) and at the cube efficiency elsewhere; fused chains
// headed by a convolution keep it.
#include <gtest/gtest.h>

#include "emulator/device/cost_model.hpp"
#include "emulator/device/spec.hpp"
#include "emulator/kernels/fusion.hpp"

namespace npukit::emu {
namespace {

TensorDesc fp16(Shape s) { return {std::move(s), DType::kFloat16}; }

// Compute ns of a convolution and of a matmul of the same FLOPs on `chip`.
std::pair<double, double> conv_and_matmul_ns(const std::string& chip) {
  auto spec = load_device_spec(chip);
  EXPECT_TRUE(spec.ok()) << spec.status().message();
  const KernelRegistry& reg = KernelRegistry::builtin();
  Attrs pads{{"strides", std::vector<int64_t>{1, 1}}, {"pads", std::vector<int64_t>{1, 1}}};
  auto conv = reg.resolve("conv2d", {fp16({256, 128, 28, 28}), fp16({128, 128, 3, 3})}, pads);
  EXPECT_TRUE(conv.ok() && conv->kernel->convolution);
  OpCost compute_only{conv->cost.flops, 0};
  double c = time_kernel(*spec, Unit::kCube, DType::kFloat16, compute_only, 0, conv->kernel->convolution).compute_ns_at_max_clock;
  double m = time_kernel(*spec, Unit::kCube, DType::kFloat16, compute_only, 0).compute_ns_at_max_clock;
  return {c, m};
}

TEST(ConvEfficiency, TheA100RunsConvolutionsAtItsMeasuredEfficiency) {
  auto spec = load_device_spec("A100-SXM4-80GB");
  ASSERT_TRUE(spec.ok());
  EXPECT_DOUBLE_EQ(spec->efficiency.conv, 0.402);
  auto [conv, matmul] = conv_and_matmul_ns("A100-SXM4-80GB");
  EXPECT_NEAR(conv / matmul, spec->efficiency.cube / 0.402, 1e-9);
}

TEST(ConvEfficiency, ChipsWithoutAPublishedFigureRunThemAtTheCubeEfficiency) {
  for (const char* chip : {"Ascend910", "Ascend910B2"}) {
    auto [conv, matmul] = conv_and_matmul_ns(chip);
    EXPECT_DOUBLE_EQ(conv, matmul) << chip;
  }
}

TEST(ConvEfficiency, AFusedChainHeadedByAConvolutionIsOne) {
  Attrs pads{{"strides", std::vector<int64_t>{1, 1}}, {"pads", std::vector<int64_t>{1, 1}}};
  auto f = resolve_fused(KernelRegistry::builtin(), "conv2d", {fp16({32, 64, 56, 56}), fp16({64, 64, 3, 3})}, pads,
                         {{"relu", {}, {}}});
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_TRUE(f->kernel->convolution);
  auto mm = resolve_fused(KernelRegistry::builtin(), "aten::mm", {fp16({64, 64}), fp16({64, 64})}, {}, {{"relu", {}, {}}});
  ASSERT_TRUE(mm.ok()) << mm.status().message();
  EXPECT_FALSE(mm->kernel->convolution);
}

}  // namespace
}  // namespace npukit::emu
