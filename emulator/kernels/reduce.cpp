// Reductions (vector unit): ReduceSum, ReduceMean, ReduceMax.
//
// Attrs: axes (list, negative counts from the end; absent or empty = every axis), keep_dims
// (int 0/1, default 0: reduced dims are dropped; 1: they stay as 1). Dynamic dims that are not
// reduced stay dynamic. Cost: one operation per input element; bytes = input + output.
#include <algorithm>
#include <cmath>
#include <limits>

#include "emulator/kernels/common.hpp"

namespace npukit::emu::kern {
namespace {

struct ReduceSumOp {
  static constexpr const char* kName = "ReduceSum";
  static constexpr double kInit = 0;
  static double combine(double acc, float x) { return acc + x; }
  static double finish(double acc, int64_t /*count*/) { return acc; }
};
struct ReduceMeanOp {
  static constexpr const char* kName = "ReduceMean";
  static constexpr double kInit = 0;
  static double combine(double acc, float x) { return acc + x; }
  static double finish(double acc, int64_t count) { return acc / static_cast<double>(count); }
};
struct ReduceMaxOp {
  static constexpr const char* kName = "ReduceMax";
  static constexpr double kInit = -std::numeric_limits<double>::infinity();
  static double combine(double acc, float x) { return std::max<double>(acc, x); }
  static double finish(double acc, int64_t /*count*/) { return acc; }
};

// One flag per dim of `s`: true when attr axes names it.
Result<std::vector<bool>> reduced_dims(std::string_view kernel, const Shape& s,
                                       const Attrs& attrs) {
  std::vector<int64_t> axes = attrs.get_ints("axes", {});
  std::vector<bool> reduced(s.size(), axes.empty());
  for (int64_t axis : axes) {
    auto d = normalize_axis(kernel, axis, s);
    if (!d.ok()) return d.status();
    reduced[*d] = true;
  }
  return reduced;
}

Shape reduced_shape(const Shape& s, const std::vector<bool>& reduced, bool keep_dims) {
  Shape out;
  for (std::size_t d = 0; d < s.size(); ++d) {
    if (!reduced[d]) out.push_back(s[d]);
    else if (keep_dims) out.push_back(1);
  }
  return out;
}

template <typename Op>
Result<std::vector<TensorDesc>> infer_reduce(const std::vector<TensorDesc>& in,
                                             const Attrs& attrs) {
  NPUKIT_RETURN_IF_ERROR(check_input_count(Op::kName, in, 1));
  auto reduced = reduced_dims(Op::kName, in[0].shape, attrs);
  if (!reduced.ok()) return reduced.status();
  bool keep_dims = attrs.get_int("keep_dims", 0) != 0;
  return std::vector<TensorDesc>{{reduced_shape(in[0].shape, *reduced, keep_dims), in[0].dtype}};
}

OpCost reduce_cost(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out,
                   const Attrs&) {
  return {static_cast<double>(in[0].elements()), io_bytes(in, out)};
}

// Accumulates in double; each input element lands on the output element that has its index
// with the reduced dims set to 0.
template <typename Op>
Status compute_reduce(const CpuArgs& args) {
  NPUKIT_RETURN_IF_ERROR(float32_launch(Op::kName, args));
  const Shape& shape = args.in_desc[0].shape;
  auto reduced = reduced_dims(Op::kName, shape, args.attrs);
  if (!reduced.ok()) return reduced.status();
  std::vector<int64_t> strides = contiguous_strides(reduced_shape(shape, *reduced, true));
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if ((*reduced)[d]) strides[d] = 0;
  }
  auto out_at = strided_offsets(shape, strides);
  const float* x = f32_in(args, 0);
  std::vector<double> acc(static_cast<std::size_t>(args.out_desc[0].elements()), Op::kInit);
  for (std::size_t i = 0; i < out_at.size(); ++i)
    acc[out_at[i]] = Op::combine(acc[out_at[i]], x[i]);
  int64_t count = acc.empty() ? 0 : static_cast<int64_t>(out_at.size() / acc.size());
  float* y = f32_out(args, 0);
  for (std::size_t i = 0; i < acc.size(); ++i) y[i] = static_cast<float>(Op::finish(acc[i], count));
  return Status::Ok();
}

template <typename Op>
void add_reduce_kernel(KernelRegistry& r) {
  r.add_kernel({.name = Op::kName, .unit = Unit::kVector, .infer = infer_reduce<Op>,
                .cost = reduce_cost, .compute = compute_reduce<Op>});
}

}  // namespace

void register_reduce_kernels(KernelRegistry& r) {
  add_reduce_kernel<ReduceSumOp>(r);
  add_reduce_kernel<ReduceMeanOp>(r);
  add_reduce_kernel<ReduceMaxOp>(r);
}

}  // namespace npukit::emu::kern
