#include "telemetry/op_families.hpp"

#include <map>

namespace npukit::telemetry {

namespace {

const std::map<std::string, Family, std::less<>>& families() {
  static const std::map<std::string, Family, std::less<>> table = {
      {"matmul", Family::kMatmul},          {"matmul_v2", Family::kMatmul},      {"aten::mm", Family::kMatmul},
      {"aten::matmul", Family::kMatmul},    {"bmm", Family::kBatchMatmul},       {"aten::bmm", Family::kBatchMatmul},
      {"conv2d", Family::kConv},            {"aten::conv2d", Family::kConv},     {"aten::convolution", Family::kConv},
      {"relu", Family::kRelu},              {"aten::relu", Family::kRelu},       {"gelu", Family::kGelu},
      {"aten::gelu", Family::kGelu},        {"softmax", Family::kSoftmax},       {"aten::softmax", Family::kSoftmax},
      {"layer_norm", Family::kLayerNorm},   {"aten::layer_norm", Family::kLayerNorm},
      {"batch_norm", Family::kBatchNorm},   {"aten::batch_norm", Family::kBatchNorm},
      {"add", Family::kEltwise},            {"aten::add", Family::kEltwise},     {"elementwise_add", Family::kEltwise},
      {"mul", Family::kEltwise},            {"aten::mul", Family::kEltwise},     {"multiply", Family::kEltwise},
      {"embedding", Family::kEmbedding},    {"aten::embedding", Family::kEmbedding},
      {"lookup_table_v2", Family::kEmbedding},
      {"softmax_with_cross_entropy", Family::kLoss}, {"cross_entropy", Family::kLoss},
      {"aten::cross_entropy_loss", Family::kLoss},
      {"mean", Family::kReduce},            {"aten::mean", Family::kReduce},     {"reduce_mean", Family::kReduce},
      {"sum", Family::kReduce},             {"aten::sum", Family::kReduce},
      {"ReluGrad", Family::kActivationGrad}, {"GeluGrad", Family::kActivationGrad},
      {"BatchNormGrad", Family::kBatchNormGrad},
      {"dropout", Family::kDropout},        {"aten::dropout", Family::kDropout}, {"DropOutDoMask", Family::kDropout},
      {"transpose", Family::kTranspose},    {"transpose2", Family::kTranspose},  {"Transpose", Family::kTranspose},
  };
  return table;
}

}  // namespace

Family family_of(std::string_view name) {
  auto it = families().find(name);
  return it == families().end() ? Family::kOther : it->second;
}

const std::vector<FusionPattern>& fusion_patterns() {
  using F = Family;
  static const std::vector<FusionPattern> table = {
      {"conv + batch_norm [+ add] [+ relu]", {F::kConv}, {{F::kBatchNorm}, {F::kEltwise}, {F::kRelu}}, false},
      {"batch_norm [+ add] [+ relu]", {F::kBatchNorm}, {{F::kEltwise}, {F::kRelu}}, false},
      {"matmul + gelu | relu", {F::kMatmul}, {{F::kGelu, F::kRelu}}, false},
      {"add + layer_norm", {F::kEltwise}, {{F::kLayerNorm}}, false},
      {"relu | gelu | add | mul chain", {F::kRelu, F::kGelu, F::kEltwise}, {}, true},
      {"relu_grad | gelu_grad + batch_norm_grad", {F::kActivationGrad}, {{F::kBatchNormGrad}}, false},
  };
  return table;
}

}  // namespace npukit::telemetry
