// Infer-shape, cost and name resolution of the built-in kernels (no data is computed).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "emulator/kernels/kernel.hpp"

namespace npukit::emu {
namespace {

const KernelRegistry& registry() { return KernelRegistry::builtin(); }

TensorDesc f32(Shape s) { return {std::move(s), DType::kFloat32}; }

// The kernel's own infer function (resolve() would reject dynamic outputs of static kernels).
Result<std::vector<TensorDesc>> infer(std::string_view op, const std::vector<TensorDesc>& in,
                                      const Attrs& attrs = {}) {
  const KernelDef* k = registry().find(op);
  if (k == nullptr) return NotFoundError(std::string(op));
  return k->infer(in, attrs);
}

// Output shapes of a successful infer; a failure fails the test.
std::vector<Shape> shapes(std::string_view op, const std::vector<TensorDesc>& in,
                          const Attrs& attrs = {}) {
  auto out = infer(op, in, attrs);
  EXPECT_TRUE(out.ok()) << op << ": " << out.status().message();
  std::vector<Shape> s;
  if (out.ok()) for (const auto& d : *out) s.push_back(d.shape);
  return s;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(KernelsShape, RegistryIsConsistent) {
  std::set<std::string> names;
  for (const auto& k : registry().kernels()) {
    EXPECT_TRUE(names.insert(k.name).second) << "duplicate kernel " << k.name;
    EXPECT_NE(k.infer, nullptr) << k.name;
    EXPECT_NE(k.cost, nullptr) << k.name;
  }
  for (const auto& [op, kernel] : registry().mappings()) {
    EXPECT_TRUE(names.count(kernel)) << op << " maps to unknown kernel " << kernel;
  }
  for (const char* k : {"MatMulV2", "BatchMatMulV2", "Conv2D", "Conv2DBackpropInput",
                        "Conv2DBackpropFilter", "LayerNormGrad", "BatchNormGrad", "Cumsum"}) {
    ASSERT_NE(registry().find(k), nullptr) << k;
    EXPECT_NE(registry().find(k)->compute, nullptr) << k;
  }
}

TEST(KernelsShape, MatMulShapesFollowTransposes) {
  EXPECT_EQ(shapes("MatMulV2", {f32({2, 3}), f32({3, 4})}), (std::vector<Shape>{{2, 4}}));
  Attrs both{{"transpose_a", int64_t{1}}, {"transpose_b", int64_t{1}}};
  EXPECT_EQ(shapes("MatMulV2", {f32({3, 2}), f32({4, 3})}, both), (std::vector<Shape>{{2, 4}}));
  EXPECT_EQ(shapes("BatchMatMulV2", {f32({5, 2, 3}), f32({5, 3, 4})}),
            (std::vector<Shape>{{5, 2, 4}}));
  EXPECT_EQ(shapes("BatchMatMulV2", {f32({5, 6, 2, 3}), f32({3, 4})}),
            (std::vector<Shape>{{5, 6, 2, 4}}));
  // A dynamic dim skips its check and flows into the dims it determines.
  EXPECT_EQ(shapes("MatMulV2", {f32({-1, 3}), f32({-1, 4})}), (std::vector<Shape>{{-1, 4}}));
}

TEST(KernelsShape, MismatchedMatMulNamesKernelAndBothShapes) {
  auto r = registry().resolve("MatMulV2", {f32({2, 3}), f32({4, 5})}, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kShapeInference);
  const std::string& m = r.status().message();
  EXPECT_TRUE(contains(m, "ShapeInferenceError: MatMulV2: ")) << m;
  EXPECT_TRUE(contains(m, "[2,3]") && contains(m, "[4,5]")) << m;
  auto batch = registry().resolve("BatchMatMulV2", {f32({2, 2, 3}), f32({3, 3, 4})}, {});
  ASSERT_FALSE(batch.ok());
  EXPECT_TRUE(contains(batch.status().message(), "[2,2,3] and [3,3,4]"))
      << batch.status().message();
  EXPECT_EQ(registry().resolve("MatMulV2", {f32({2, 3, 4}), f32({4, 5})}, {}).status().code(),
            Code::kShapeInference);
}

TEST(KernelsShape, DynamicMatMulIsRejectedWithTheExactMessage) {
  auto r = registry().resolve("matmul", {f32({-1, 8}), f32({8, 16})}, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "ShapeInferenceError: output shape is dynamic, but operator MatMulV2 does not support "
            "dynamic shape.");
}

TEST(KernelsShape, UnknownOperatorIsNotFound) {
  auto r = registry().resolve("roi_align_xyz", {f32({1, 2})}, {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kNotFound);
  EXPECT_EQ(r.status().message(), "NotFound: Operator roi_align_xyz does not have kernel for NPU");
}

TEST(KernelsShape, FrameworkNamesResolveToKernels) {
  for (const char* op : {"aten::mm", "matmul", "matmul_v2", "aten::matmul"}) {
    auto r = registry().resolve(op, {f32({2, 3}), f32({3, 4})}, {});
    ASSERT_TRUE(r.ok()) << op << ": " << r.status().message();
    EXPECT_EQ(r->kernel->name, "MatMulV2") << op;
    EXPECT_EQ(r->kernel->unit, Unit::kCube);
  }
  EXPECT_EQ(registry().find("aten::threshold_backward")->name, "ReluGrad");
  EXPECT_EQ(registry().find("lookup_table_v2")->name, "GatherV2");
  EXPECT_EQ(registry().find("aten::_fused_adam_")->name, "ApplyAdam");
}

TEST(KernelsShape, NonZeroResolvesToAiCpuWithADynamicOutput) {
  auto r = registry().resolve("nonzero", {f32({4, 5, 6})}, {});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->kernel->name, "NonZero");
  EXPECT_EQ(r->kernel->unit, Unit::kAiCpu);
  ASSERT_EQ(r->outputs.size(), 1u);
  EXPECT_EQ(r->outputs[0].shape, (Shape{-1, 3}));
  EXPECT_EQ(r->outputs[0].dtype, DType::kInt64);
  auto unique = registry().resolve("aten::_unique2", {f32({10})}, {});
  ASSERT_TRUE(unique.ok()) << unique.status().message();
  EXPECT_EQ(unique->outputs[0].shape, (Shape{-1}));
  EXPECT_EQ(registry().find("cumsum")->unit, Unit::kAiCpu);
}

TEST(KernelsShape, ConvOutputSizeAndGradientShapes) {
  Attrs attrs{{"strides", std::vector<int64_t>{2, 2}}, {"pads", std::vector<int64_t>{1, 1}},
              {"dilations", std::vector<int64_t>{1, 1}}, {"groups", int64_t{2}}};
  EXPECT_EQ(shapes("Conv2D", {f32({8, 4, 32, 31}), f32({6, 2, 3, 3})}, attrs),
            (std::vector<Shape>{{8, 6, 16, 16}}));
  EXPECT_EQ(shapes("Conv2D", {f32({-1, 4, 32, -1}), f32({6, 2, 3, 3})}, attrs),
            (std::vector<Shape>{{-1, 6, 16, -1}}));
  Attrs bp_input = Attrs(attrs).set("input_size", std::vector<int64_t>{8, 4, 32, 31});
  EXPECT_EQ(shapes("Conv2DBackpropInput", {f32({8, 6, 16, 16}), f32({6, 2, 3, 3})}, bp_input),
            (std::vector<Shape>{{8, 4, 32, 31}}));
  Attrs bp_filter = Attrs(attrs).set("filter_size", std::vector<int64_t>{6, 2, 3, 3});
  EXPECT_EQ(shapes("Conv2DBackpropFilter", {f32({8, 4, 32, 31}), f32({8, 6, 16, 16})}, bp_filter),
            (std::vector<Shape>{{6, 2, 3, 3}}));
  auto wrong_dy =
      infer("Conv2DBackpropFilter", {f32({8, 4, 32, 31}), f32({8, 6, 15, 16})}, bp_filter);
  EXPECT_EQ(wrong_dy.status().code(), Code::kShapeInference);
  auto missing = infer("Conv2DBackpropInput", {f32({8, 6, 16, 16}), f32({6, 2, 3, 3})}, attrs);
  EXPECT_TRUE(contains(missing.status().message(), "input_size")) << missing.status().message();
  auto channels = infer("Conv2D", {f32({8, 4, 32, 32}), f32({6, 3, 3, 3})}, attrs);
  EXPECT_EQ(channels.status().code(), Code::kShapeInference);
  EXPECT_TRUE(contains(channels.status().message(), "Conv2D")) << channels.status().message();
}

TEST(KernelsShape, ElementwiseBroadcastAndDynamicDims) {
  EXPECT_EQ(shapes("Add", {f32({2, 3, 4}), f32({4})}), (std::vector<Shape>{{2, 3, 4}}));
  EXPECT_EQ(shapes("Mul", {f32({3, 1}), f32({1, 4})}), (std::vector<Shape>{{3, 4}}));
  EXPECT_EQ(shapes("RealDiv", {f32({-1, 4}), f32({1})}), (std::vector<Shape>{{-1, 4}}));
  EXPECT_EQ(shapes("Sub", {f32({-1, 4}), f32({5, 1})}), (std::vector<Shape>{{5, 4}}));
  auto bad = infer("Add", {f32({2, 3}), f32({4})});
  EXPECT_EQ(bad.status().message(),
            "ShapeInferenceError: Add: shapes are not broadcastable: got [2,3] and [4]");
  EXPECT_EQ(infer("ReluGrad", {f32({2, 3}), f32({3, 2})}).status().code(), Code::kShapeInference);
}

TEST(KernelsShape, ReductionsNormsAndLayout) {
  Attrs axes{{"axes", std::vector<int64_t>{0, 2}}};
  EXPECT_EQ(shapes("ReduceSum", {f32({-1, 3, 4})}, axes), (std::vector<Shape>{{3}}));
  EXPECT_EQ(shapes("ReduceMax", {f32({2, 3, 4})}, Attrs(axes).set("keep_dims", int64_t{1})),
            (std::vector<Shape>{{1, 3, 1}}));
  EXPECT_EQ(shapes("ReduceMean", {f32({2, 3, 4})}), (std::vector<Shape>{Shape{}}));
  EXPECT_EQ(shapes("LayerNorm", {f32({2, 3, 8}), f32({8}), f32({8})}),
            (std::vector<Shape>{{2, 3, 8}, {2, 3, 1}, {2, 3, 1}}));
  EXPECT_EQ(shapes("BatchNorm", {f32({2, 3, 4, 4}), f32({3}), f32({3})}),
            (std::vector<Shape>{{2, 3, 4, 4}, {3}, {3}}));
  EXPECT_EQ(infer("LayerNorm", {f32({2, 8}), f32({7}), f32({8})}).status().code(),
            Code::kShapeInference);
  EXPECT_EQ(shapes("Transpose", {f32({2, -1, 4})}, {{"perm", std::vector<int64_t>{2, 0, 1}}}),
            (std::vector<Shape>{{4, 2, -1}}));
  EXPECT_EQ(shapes("SoftmaxCrossEntropyWithLogits", {f32({4, 10}), {{4}, DType::kInt64}}),
            (std::vector<Shape>{{4}, {4, 10}}));
  EXPECT_EQ(shapes("GatherV2", {f32({100, 16}), {{2, 7}, DType::kInt32}}),
            (std::vector<Shape>{{2, 7, 16}}));
  EXPECT_EQ(infer("GatherV2", {f32({100, 16}), f32({2})}).status().code(), Code::kInvalidArgument);
}

TEST(KernelsShape, ReshapeInfersOneDimAndPropagatesDynamicInput) {
  EXPECT_EQ(shapes("Reshape", {f32({2, 3, 4})}, {{"shape", std::vector<int64_t>{-1, 4}}}),
            (std::vector<Shape>{{6, 4}}));
  EXPECT_EQ(shapes("Reshape", {f32({-1, 3, 4})}, {{"shape", std::vector<int64_t>{-1, 12}}}),
            (std::vector<Shape>{{-1, 12}}));
  auto resolved =
      registry().resolve("reshape", {f32({2, 3, 4})}, {{"shape", std::vector<int64_t>{4, -1}}});
  ASSERT_TRUE(resolved.ok()) << resolved.status().message();  // the attr -1 is not dynamic
  EXPECT_EQ(resolved->cost.flops, 0);
  EXPECT_EQ(resolved->cost.bytes, 0);
  EXPECT_EQ(
      infer("Reshape", {f32({2, 3})}, {{"shape", std::vector<int64_t>{4, -1}}}).status().code(),
      Code::kShapeInference);
  EXPECT_EQ(
      infer("Reshape", {f32({2, 3})}, {{"shape", std::vector<int64_t>{-1, -1}}}).status().code(),
      Code::kShapeInference);
}

TEST(KernelsShape, CostsFollowTheDocumentedFormulas) {
  auto mm = registry().resolve("MatMulV2", {f32({64, 128}), f32({128, 32})}, {});
  ASSERT_TRUE(mm.ok());
  EXPECT_EQ(mm->cost.flops, 2.0 * 64 * 128 * 32);
  EXPECT_EQ(mm->cost.bytes, 4.0 * (64 * 128 + 128 * 32 + 64 * 32));
  auto conv = registry().resolve("Conv2D", {f32({2, 4, 8, 8}), f32({6, 4, 3, 3})}, {});
  ASSERT_TRUE(conv.ok());
  EXPECT_EQ(conv->cost.flops, 2.0 * 2 * 6 * 6 * 6 * 4 * 3 * 3);
  auto add = registry().resolve("Add", {f32({10, 10}), f32({10})}, {});
  ASSERT_TRUE(add.ok());
  EXPECT_EQ(add->cost.flops, 100);
  EXPECT_EQ(add->cost.bytes, 4.0 * (100 + 10 + 100));
  auto cast = registry().resolve("Cast", {f32({10})}, {{"dst_type", std::string("float16")}});
  ASSERT_TRUE(cast.ok());
  EXPECT_EQ(cast->outputs[0].dtype, DType::kFloat16);
  EXPECT_EQ(cast->cost.bytes, 10 * 4 + 10 * 2);
}

}  // namespace
}  // namespace npukit::emu
