#include "emulator/kernels/common.hpp"

#include <algorithm>
#include <optional>

namespace npukit::emu::kern {

std::string dims_str(const Shape& s) { return "[" + shape_str(s) + "]"; }

Status check_input_count(std::string_view kernel, const std::vector<TensorDesc>& in,
                         std::size_t count) {
  if (in.size() == count) return Status::Ok();
  return shape_error(kernel, "expected " + std::to_string(count) + " inputs: got " +
                                 std::to_string(in.size()));
}

Status check_rank(std::string_view kernel, std::string_view what, const Shape& s,
                  std::size_t rank) {
  if (s.size() == rank) return Status::Ok();
  return shape_error(kernel, std::string(what) + " must have rank " + std::to_string(rank) +
                                 ": got " + dims_str(s));
}

Status check_min_rank(std::string_view kernel, std::string_view what, const Shape& s,
                      std::size_t rank) {
  if (s.size() >= rank) return Status::Ok();
  return shape_error(kernel, std::string(what) + " must have rank >= " + std::to_string(rank) +
                                 ": got " + dims_str(s));
}

Status check_index_dtype(std::string_view kernel, std::string_view what, DType t) {
  if (t == DType::kInt32 || t == DType::kInt64) return Status::Ok();
  return InvalidArgument(std::string(kernel) + ": " + std::string(what) +
                         " must be int32 or int64, got " + dtype_name(t));
}

bool dims_match(int64_t a, int64_t b) { return a < 0 || b < 0 || a == b; }

bool shapes_match(const Shape& a, const Shape& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), dims_match);
}

int64_t merged_dim(int64_t a, int64_t b) { return a >= 0 ? a : b; }

Shape merged_shape(const Shape& a, const Shape& b) {
  Shape out(a.size());
  std::transform(a.begin(), a.end(), b.begin(), out.begin(), merged_dim);
  return out;
}

Result<Shape> same_shape_inputs(std::string_view kernel, const std::vector<TensorDesc>& in,
                                std::size_t count) {
  if (in.size() < count) return check_input_count(kernel, in, count);
  Shape merged = in[0].shape;
  for (std::size_t i = 1; i < count; ++i) {
    if (!shapes_match(merged, in[i].shape)) {
      return shape_error(kernel, "input " + std::to_string(i) + " differs from input 0: got " +
                                     dims_str(in[0].shape) + " and " + dims_str(in[i].shape));
    }
    merged = merged_shape(merged, in[i].shape);
  }
  return merged;
}

namespace {

std::optional<int64_t> broadcast_dim(int64_t a, int64_t b) {
  if (a == b || b == 1) return a;
  if (a == 1) return b;
  if (a < 0) return b;
  if (b < 0) return a;
  return std::nullopt;
}

// Dim `i` counted from the right, 1 beyond the rank (how broadcasting pads shapes).
int64_t dim_from_right(const Shape& s, std::size_t i) {
  return i < s.size() ? s[s.size() - 1 - i] : 1;
}

}  // namespace

Result<Shape> broadcast_shape(std::string_view kernel, const Shape& a, const Shape& b) {
  Shape out(std::max(a.size(), b.size()));
  for (std::size_t i = 0; i < out.size(); ++i) {
    auto dim = broadcast_dim(dim_from_right(a, i), dim_from_right(b, i));
    if (!dim) {
      return shape_error(
          kernel, "shapes are not broadcastable: got " + dims_str(a) + " and " + dims_str(b));
    }
    out[out.size() - 1 - i] = *dim;
  }
  return out;
}

Result<std::size_t> normalize_axis(std::string_view kernel, int64_t axis, const Shape& s) {
  auto rank = static_cast<int64_t>(s.size());
  if (axis < -rank || axis >= rank) {
    return shape_error(kernel, "axis " + std::to_string(axis) + " is out of range for rank " +
                                   std::to_string(rank) + ": got " + dims_str(s));
  }
  return static_cast<std::size_t>(axis < 0 ? axis + rank : axis);
}

double io_bytes(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out) {
  double total = 0;
  for (const auto& t : in) total += static_cast<double>(t.bytes());
  for (const auto& t : out) total += static_cast<double>(t.bytes());
  return total;
}

Status check_buffers(std::string_view kernel, const CpuArgs& args) {
  bool counts_ok = args.in.size() == args.in_desc.size() && args.out.size() == args.out_desc.size();
  bool all_set = std::none_of(args.in.begin(), args.in.end(), [](const void* p) { return !p; }) &&
                 std::none_of(args.out.begin(), args.out.end(), [](void* p) { return !p; });
  if (counts_ok && all_set) return Status::Ok();
  return InvalidArgument(std::string(kernel) + ": launch needs " +
                         std::to_string(args.in_desc.size()) + " input and " +
                         std::to_string(args.out_desc.size()) + " output buffers, got " +
                         std::to_string(args.in.size()) + " and " +
                         std::to_string(args.out.size()) + (all_set ? "" : " (some null)"));
}

Status require_float32(std::string_view kernel, DType t) {
  if (t == DType::kFloat32) return Status::Ok();
  return InvalidArgument(std::string(kernel) + ": functional mode supports float32 only, got " +
                         dtype_name(t));
}

Status float32_launch(std::string_view kernel, const CpuArgs& args) {
  NPUKIT_RETURN_IF_ERROR(check_buffers(kernel, args));
  for (const auto& d : args.in_desc) NPUKIT_RETURN_IF_ERROR(require_float32(kernel, d.dtype));
  for (const auto& d : args.out_desc) NPUKIT_RETURN_IF_ERROR(require_float32(kernel, d.dtype));
  return Status::Ok();
}

int64_t index_at(const void* data, DType t, int64_t i) {
  if (t == DType::kInt32) return static_cast<const int32_t*>(data)[i];
  return static_cast<const int64_t*>(data)[i];
}

std::vector<int64_t> contiguous_strides(const Shape& s) {
  std::vector<int64_t> strides(s.size());
  int64_t step = 1;
  for (std::size_t d = s.size(); d-- > 0;) {
    strides[d] = step;
    step *= s[d];
  }
  return strides;
}

std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out) {
  std::vector<int64_t> in_strides = contiguous_strides(in);
  std::vector<int64_t> strides(out.size(), 0);
  for (std::size_t i = 0; i < in.size(); ++i) {
    std::size_t in_d = in.size() - 1 - i;
    std::size_t out_d = out.size() - 1 - i;
    strides[out_d] = in[in_d] == 1 ? 0 : in_strides[in_d];
  }
  return strides;
}

std::vector<int64_t> strided_offsets(const Shape& shape, const std::vector<int64_t>& strides) {
  std::vector<int64_t> offsets(static_cast<std::size_t>(num_elements(shape)));
  std::vector<int64_t> index(shape.size(), 0);
  int64_t offset = 0;
  for (auto& out : offsets) {
    out = offset;
    for (std::size_t d = shape.size(); d-- > 0;) {  // odometer increment, last dim fastest
      offset += strides[d];
      if (++index[d] < shape[d]) break;
      offset -= strides[d] * shape[d];
      index[d] = 0;
    }
  }
  return offsets;
}

AxisSplit split_at_axis(const Shape& s, std::size_t axis) {
  AxisSplit split;
  for (std::size_t d = 0; d < s.size(); ++d) {
    if (d < axis) split.outer *= s[d];
    if (d == axis) split.extent = s[d];
    if (d > axis) split.inner *= s[d];
  }
  return split;
}

}  // namespace npukit::emu::kern
