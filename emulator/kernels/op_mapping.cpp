// Framework op name -> kernel, for Paddle and PyTorch (aten::) op names.
//
// Only names are mapped: a framework adapter translates attribute spellings (Paddle
// transpose_x, aten::transpose's dim0/dim1, aten::softmax's dim) to the kernel's attrs.
// conv2d_grad_input / conv2d_grad_filter and aten::conv2d_backward_input /
// aten::conv2d_backward_weight are this project's names for the two halves of a conv gradient
// (neither framework has a single op for each).
#include <string_view>
#include <utility>

#include "emulator/kernels/kernel.hpp"

namespace npukit::emu {
namespace {

using Mapping = std::pair<std::string_view, std::string_view>;  // (framework op, kernel)

constexpr Mapping kPaddleOps[] = {
    {"matmul", "MatMulV2"},
    {"matmul_v2", "MatMulV2"},
    {"bmm", "BatchMatMulV2"},
    {"conv2d", "Conv2D"},
    {"conv2d_grad_input", "Conv2DBackpropInput"},
    {"conv2d_grad_filter", "Conv2DBackpropFilter"},
    {"elementwise_add", "Add"},
    {"elementwise_sub", "Sub"},
    {"elementwise_mul", "Mul"},
    {"elementwise_div", "RealDiv"},
    {"add", "Add"},
    {"subtract", "Sub"},
    {"multiply", "Mul"},
    {"divide", "RealDiv"},
    {"relu", "Relu"},
    {"dropout", "DropOutDoMask"},
    {"fused_elementwise", "FusedElementwise"},
    {"relu_grad", "ReluGrad"},
    {"gelu", "Gelu"},
    {"gelu_grad", "GeluGrad"},
    {"sigmoid", "Sigmoid"},
    {"tanh", "Tanh"},
    {"softmax", "SoftmaxV2"},
    {"softmax_grad", "SoftmaxGrad"},
    {"layer_norm", "LayerNorm"},
    {"layer_norm_grad", "LayerNormGrad"},
    {"batch_norm", "BatchNorm"},
    {"batch_norm_grad", "BatchNormGrad"},
    {"reduce_sum", "ReduceSum"},
    {"sum", "ReduceSum"},
    {"reduce_mean", "ReduceMean"},
    {"mean", "ReduceMean"},
    {"max", "ReduceMax"},
    {"lookup_table_v2", "GatherV2"},
    {"embedding", "GatherV2"},
    {"transpose2", "Transpose"},
    {"transpose", "Transpose"},
    {"reshape2", "Reshape"},
    {"reshape", "Reshape"},
    {"cast", "Cast"},
    {"softmax_with_cross_entropy", "SoftmaxCrossEntropyWithLogits"},
    {"cross_entropy", "SoftmaxCrossEntropyWithLogits"},
    {"adam", "ApplyAdam"},
    {"lamb", "ApplyLamb"},
    {"clip_by_norm", "ClipByNorm"},
    {"nonzero", "NonZero"},
    {"where_index", "NonZero"},
    {"unique", "Unique"},
    {"cumsum", "Cumsum"},
};

constexpr Mapping kTorchOps[] = {
    {"aten::mm", "MatMulV2"},
    {"aten::matmul", "MatMulV2"},
    {"aten::bmm", "BatchMatMulV2"},
    {"aten::convolution", "Conv2D"},
    {"aten::conv2d", "Conv2D"},
    {"aten::conv2d_backward_input", "Conv2DBackpropInput"},
    {"aten::conv2d_backward_weight", "Conv2DBackpropFilter"},
    {"aten::add", "Add"},
    {"aten::sub", "Sub"},
    {"aten::mul", "Mul"},
    {"aten::div", "RealDiv"},
    {"aten::relu", "Relu"},
    {"aten::dropout", "DropOutDoMask"},
    {"aten::threshold_backward", "ReluGrad"},
    {"aten::gelu", "Gelu"},
    {"aten::gelu_backward", "GeluGrad"},
    {"aten::sigmoid", "Sigmoid"},
    {"aten::tanh", "Tanh"},
    {"aten::softmax", "SoftmaxV2"},
    {"aten::_softmax", "SoftmaxV2"},
    {"aten::_softmax_backward_data", "SoftmaxGrad"},
    {"aten::layer_norm", "LayerNorm"},
    {"aten::native_layer_norm", "LayerNorm"},
    {"aten::native_layer_norm_backward", "LayerNormGrad"},
    {"aten::batch_norm", "BatchNorm"},
    {"aten::native_batch_norm", "BatchNorm"},
    {"aten::native_batch_norm_backward", "BatchNormGrad"},
    {"aten::sum", "ReduceSum"},
    {"aten::mean", "ReduceMean"},
    {"aten::amax", "ReduceMax"},
    {"aten::embedding", "GatherV2"},
    {"aten::transpose", "Transpose"},
    {"aten::permute", "Transpose"},
    {"aten::view", "Reshape"},
    {"aten::reshape", "Reshape"},
    {"aten::to", "Cast"},
    {"aten::_to_copy", "Cast"},
    {"aten::cross_entropy_loss", "SoftmaxCrossEntropyWithLogits"},
    {"aten::_fused_adam_", "ApplyAdam"},
    {"aten::nonzero", "NonZero"},
    {"aten::unique", "Unique"},
    {"aten::_unique2", "Unique"},
    {"aten::cumsum", "Cumsum"},
};

}  // namespace

void register_framework_mappings(KernelRegistry& r) {
  for (const auto& [op, kernel] : kPaddleOps) r.add_mapping(std::string(op), std::string(kernel));
  for (const auto& [op, kernel] : kTorchOps) r.add_mapping(std::string(op), std::string(kernel));
}

}  // namespace npukit::emu
