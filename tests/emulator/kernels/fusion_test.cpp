// Fused kernels (emulator/kernels/fusion.hpp): the chain's name, inputs, outputs and what fusion
// saves: no HBM round trip for a value only the next part reads; one pass saved (not two) for a
// part that reads its input twice (BatchNorm's statistics).
#include "emulator/kernels/fusion.hpp"

#include <gtest/gtest.h>

namespace npukit::emu {
namespace {

TensorDesc fp16(Shape s) { return {std::move(s), DType::kFloat16}; }

const KernelRegistry& reg() { return KernelRegistry::builtin(); }

TEST(Fusion, MatmulAndGeluSkipTheIntermediatesRoundTrip) {
  std::vector<TensorDesc> in{fp16({4096, 1024}), fp16({1024, 4096})};
  auto mm = reg().resolve("aten::mm", in, {});
  auto gelu = reg().resolve("aten::gelu", {fp16({4096, 4096})}, {});
  ASSERT_TRUE(mm.ok() && gelu.ok());
  auto f = resolve_fused(reg(), "aten::mm", in, {}, {{"aten::gelu", {}, {}}});
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->kernel->name, "MatMulV2_Gelu");
  EXPECT_EQ(f->kernel->unit, Unit::kCube);
  double value = 4096.0 * 4096 * 2;  // the matmul's output, fp16
  EXPECT_DOUBLE_EQ(f->cost.bytes, mm->cost.bytes + gelu->cost.bytes - 2 * value);
  EXPECT_DOUBLE_EQ(f->cost.flops, mm->cost.flops);
  EXPECT_DOUBLE_EQ(f->epilogue_flops, gelu->cost.flops);
  ASSERT_EQ(f->outputs.size(), 1u);
  EXPECT_EQ(f->outputs[0].shape, (Shape{4096, 4096}));
  EXPECT_EQ(f->inputs.size(), 2u);
}

// conv + BatchNorm + ReLU: the activation moves 3 times (conv write; BatchNorm's second read and
// the ReLU's write) instead of 6 (conv write; BatchNorm read, read, write; ReLU read, write).
TEST(Fusion, ConvBatchNormReluMovesTheActivationThreeTimesInsteadOfSix) {
  std::vector<TensorDesc> in{fp16({32, 64, 56, 56}), fp16({64, 64, 3, 3})};
  Attrs conv_attrs{{"strides", std::vector<int64_t>{1, 1}}, {"pads", std::vector<int64_t>{1, 1}}};
  std::vector<FusedPart> parts{{"batch_norm", {fp16({64}), fp16({64})}, {}}, {"relu", {}, {}}};
  auto f = resolve_fused(reg(), "conv2d", in, conv_attrs, parts);
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->kernel->name, "Conv2D_BatchNorm_Relu");
  auto conv = reg().resolve("conv2d", in, conv_attrs);
  ASSERT_TRUE(conv.ok());
  double act = 32.0 * 64 * 56 * 56 * 2;
  double conv_without_output = conv->cost.bytes - act;
  double others = f->cost.bytes - conv_without_output;  // the activation passes and the small tensors
  double small = 2 * 64 * 2 + 2 * 64 * 4;               // scale, offset (fp16); mean, var (fp32)
  EXPECT_NEAR(others - small, 3 * act, 1.0);
  // Unfused, the same three kernels move it six times.
  auto bn = reg().resolve("batch_norm", {fp16({32, 64, 56, 56}), fp16({64}), fp16({64})}, {});
  auto relu = reg().resolve("relu", {fp16({32, 64, 56, 56})}, {});
  ASSERT_TRUE(bn.ok() && relu.ok());
  EXPECT_NEAR(act + bn->cost.bytes + relu->cost.bytes - small, 6 * act, 1.0);
  EXPECT_EQ(f->inputs.size(), 4u) << "x, filter, then the BatchNorm's scale and offset";
}

TEST(Fusion, APartThatDoesNotTakeThePreviousOutputIsRefused) {
  std::vector<TensorDesc> in{fp16({64, 128}), fp16({128, 256})};
  auto f = resolve_fused(reg(), "aten::mm", in, {}, {{"aten::add", {fp16({64, 128})}, {}}});
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("ShapeInferenceError: Add"), std::string::npos) << f.status().message();
  auto unknown = resolve_fused(reg(), "aten::mm", in, {}, {{"no_such_op", {}, {}}});
  EXPECT_EQ(unknown.status().message(), "NotFound: Operator no_such_op does not have kernel for NPU");
}

TEST(Fusion, TheSameChainIsOneKernelDefinition) {
  std::vector<TensorDesc> in{fp16({64, 128}), fp16({128, 256})};
  auto a = resolve_fused(reg(), "aten::mm", in, {}, {{"relu", {}, {}}});
  auto b = resolve_fused(reg(), "matmul", {fp16({32, 128}), fp16({128, 64})}, {}, {{"aten::relu", {}, {}}});
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->kernel, b->kernel);
  EXPECT_EQ(a->kernel->name, "MatMulV2_Relu");
}

}  // namespace
}  // namespace npukit::emu
