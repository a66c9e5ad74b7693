// Helpers shared by the kernel families (the other .cpp files of this room): shape checks that
// tolerate dynamic dims, cost formulas, launch checks and strided index walks for the CPU implementations.
// Internal to the emulator library; the registry interface is kernel.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "emulator/kernels/kernel.hpp"

namespace npukit::emu::kern {

// ---- families registered by register_vector_kernels / register_cube_kernels ----
void register_conv_kernels(KernelRegistry& r);    // conv.cpp
void register_norm_kernels(KernelRegistry& r);    // norm.cpp
void register_reduce_kernels(KernelRegistry& r);  // reduce.cpp
void register_layout_kernels(KernelRegistry& r);  // layout.cpp
void register_dropout_kernels(KernelRegistry& r);  // dropout.cpp

// ---- infer-shape checks: errors are shape_error(kernel, "<what>: got [..] ...") ----

// "[2,3]": a shape as it appears in error messages.
std::string dims_str(const Shape& s);

Status check_input_count(std::string_view kernel, const std::vector<TensorDesc>& in,
                         std::size_t count);
// `what` names the input ("a", "x", "gamma").
Status check_rank(std::string_view kernel, std::string_view what, const Shape& s,
                  std::size_t rank);
Status check_min_rank(std::string_view kernel, std::string_view what, const Shape& s,
                      std::size_t rank);
// Index inputs (ids, labels) must be int32 or int64 (InvalidArgument otherwise).
Status check_index_dtype(std::string_view kernel, std::string_view what, DType t);

// Two dims that can be equal at run time: equal, or either is dynamic.
bool dims_match(int64_t a, int64_t b);
// Same rank and every dim pair matches.
bool shapes_match(const Shape& a, const Shape& b);
// The known one of two matching dims; dynamic only when both are.
int64_t merged_dim(int64_t a, int64_t b);
Shape merged_shape(const Shape& a, const Shape& b);

// in[0..count) have matching shapes; returns their merge. The caller checks the input count
// first (fewer than `count` inputs is reported as a count error).
Result<Shape> same_shape_inputs(std::string_view kernel, const std::vector<TensorDesc>& in,
                                std::size_t count);
// NumPy broadcasting of a and b (right-aligned; a dim of 1 stretches). A dynamic dim against
// 1 stays dynamic; against a known n > 1 it becomes n (the only value that can broadcast).
Result<Shape> broadcast_shape(std::string_view kernel, const Shape& a, const Shape& b);
// Axis in [-rank, rank) mapped to [0, rank).
Result<std::size_t> normalize_axis(std::string_view kernel, int64_t axis, const Shape& s);

// ---- costs (static shapes) ----

// Bytes of every input plus every output.
double io_bytes(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out);

// kFlops operations per element of the first output; HBM traffic = inputs + outputs.
template <int kFlops>
OpCost per_element_cost(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out,
                        const Attrs& /*attrs*/) {
  return {kFlops * static_cast<double>(out[0].elements()), io_bytes(in, out)};
}

// ---- CPU implementations ----

// Buffer counts match the descriptors and no buffer is null.
Status check_buffers(std::string_view kernel, const CpuArgs& args);
// "<kernel>: functional mode supports float32 only, got <dtype>" unless t is float32.
Status require_float32(std::string_view kernel, DType t);
// check_buffers + every input and output descriptor is float32.
Status float32_launch(std::string_view kernel, const CpuArgs& args);

inline const float* f32_in(const CpuArgs& args, std::size_t i) {
  return static_cast<const float*>(args.in[i]);
}
inline float* f32_out(const CpuArgs& args, std::size_t i) {
  return static_cast<float*>(args.out[i]);
}
// Element i of an int32 or int64 buffer.
int64_t index_at(const void* data, DType t, int64_t i);

// Row-major strides in elements.
std::vector<int64_t> contiguous_strides(const Shape& s);
// Strides that read a tensor of shape `in` while walking the broadcast shape `out`
// (0 along dims that `in` lacks or stretches from 1).
std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out);
// For every index of `shape` in row-major order, sum(index[d] * strides[d]).
std::vector<int64_t> strided_offsets(const Shape& shape, const std::vector<int64_t>& strides);

// A shape viewed as [outer, extent, inner] around one axis.
struct AxisSplit {
  int64_t outer = 1;
  int64_t extent = 1;
  int64_t inner = 1;
};
AxisSplit split_at_axis(const Shape& s, std::size_t axis);

}  // namespace npukit::emu::kern
