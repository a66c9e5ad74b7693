// AI CPU kernels: operators with no AI Core implementation, so they always fall back to the
// few, slow AI CPU cores.
//
// NonZero(x, any shape and dtype) -> [-1, rank] int64 indices, and Unique(x 1-D) -> [-1] of
// x's dtype, have data-dependent output sizes: they are dynamic-shape kernels and have no CPU
// implementation (compute is null: a functional launch cannot size their output in advance).
// Cumsum(x float32, attr axis default 0) -> same shape, inclusive running sum; static.
#include <algorithm>
#include <cmath>

#include "emulator/kernels/common.hpp"

namespace npukit::emu {
namespace {

constexpr const char kNonZero[] = "NonZero";
constexpr const char kUnique[] = "Unique";
constexpr const char kCumsum[] = "Cumsum";

Result<std::vector<TensorDesc>> infer_nonzero(const std::vector<TensorDesc>& in, const Attrs&) {
  NPUKIT_RETURN_IF_ERROR(kern::check_input_count(kNonZero, in, 1));
  return std::vector<TensorDesc>{
      {{kDynamicDim, static_cast<int64_t>(in[0].shape.size())}, DType::kInt64}};
}

// One comparison per element; the output size is unknown, so only the input is counted.
OpCost nonzero_cost(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>&,
                    const Attrs&) {
  return {static_cast<double>(in[0].elements()), static_cast<double>(in[0].bytes())};
}

Result<std::vector<TensorDesc>> infer_unique(const std::vector<TensorDesc>& in, const Attrs&) {
  NPUKIT_RETURN_IF_ERROR(kern::check_input_count(kUnique, in, 1));
  NPUKIT_RETURN_IF_ERROR(kern::check_rank(kUnique, "x", in[0].shape, 1));
  return std::vector<TensorDesc>{{{kDynamicDim}, in[0].dtype}};
}

// A sort: n * log2(n) comparisons; only the input is counted (output size unknown).
OpCost unique_cost(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>&,
                   const Attrs&) {
  auto n = static_cast<double>(in[0].elements());
  return {n * std::log2(std::max(n, 2.0)), static_cast<double>(in[0].bytes())};
}

Result<std::size_t> cumsum_axis(const Shape& s, const Attrs& attrs) {
  return kern::normalize_axis(kCumsum, attrs.get_int("axis", 0), s);
}

Result<std::vector<TensorDesc>> infer_cumsum(const std::vector<TensorDesc>& in,
                                             const Attrs& attrs) {
  NPUKIT_RETURN_IF_ERROR(kern::check_input_count(kCumsum, in, 1));
  NPUKIT_RETURN_IF_ERROR(cumsum_axis(in[0].shape, attrs).status());
  return std::vector<TensorDesc>{in[0]};
}

// Running sums in double along the axis; out may alias x.
Status compute_cumsum(const CpuArgs& args) {
  NPUKIT_RETURN_IF_ERROR(kern::float32_launch(kCumsum, args));
  auto axis = cumsum_axis(args.in_desc[0].shape, args.attrs);
  if (!axis.ok()) return axis.status();
  kern::AxisSplit s = kern::split_at_axis(args.in_desc[0].shape, *axis);
  const float* x = kern::f32_in(args, 0);
  float* y = kern::f32_out(args, 0);
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int64_t i = 0; i < s.inner; ++i) {
      double sum = 0;
      for (int64_t j = 0; j < s.extent; ++j) {
        int64_t k = (o * s.extent + j) * s.inner + i;
        sum += x[k];
        y[k] = static_cast<float>(sum);
      }
    }
  }
  return Status::Ok();
}

}  // namespace

void register_aicpu_kernels(KernelRegistry& r) {
  r.add_kernel({.name = kNonZero, .unit = Unit::kAiCpu, .supports_dynamic = true,
                .infer = infer_nonzero, .cost = nonzero_cost});
  r.add_kernel({.name = kUnique, .unit = Unit::kAiCpu, .supports_dynamic = true,
                .infer = infer_unique, .cost = unique_cost});
  r.add_kernel({.name = kCumsum, .unit = Unit::kAiCpu, .infer = infer_cumsum,
                .cost = kern::per_element_cost<1>, .compute = compute_cumsum});
}

}  // namespace npukit::emu
