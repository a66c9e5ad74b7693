// Data-movement kernels (vector unit): GatherV2 (embedding lookup), Transpose, Reshape, Cast.
//
// GatherV2(table [V,D], ids int32/int64 any shape) -> ids.shape + [D]; an id outside [0, V)
// fails the launch. Transpose: attr perm (default: reversed dims). Reshape: attr shape, one
// entry may be -1 and is inferred from the element count (a -1 left in the output only when the
// input itself is dynamic); Reshape is a view: 0 flops, 0 bytes. Cast: attr dst_type, a dtype
// name ("float16"). The CPU implementations of GatherV2, Transpose and Reshape move bytes and
// accept every dtype; Cast converts float32 <-> float16 and float32 <-> int32 (or copies when
// the dtypes agree). Only Reshape may run in place (out aliasing in).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "emulator/kernels/common.hpp"

namespace npukit::emu::kern {
namespace {

constexpr const char kGather[] = "GatherV2";
constexpr const char kTranspose[] = "Transpose";
constexpr const char kReshape[] = "Reshape";
constexpr const char kCast[] = "Cast";

const unsigned char* bytes_in(const CpuArgs& args, std::size_t i) {
  return static_cast<const unsigned char*>(args.in[i]);
}
unsigned char* bytes_out(const CpuArgs& args, std::size_t i) {
  return static_cast<unsigned char*>(args.out[i]);
}

// ---- GatherV2 ----

Result<std::vector<TensorDesc>> infer_gather(const std::vector<TensorDesc>& in, const Attrs&) {
  NPUKIT_RETURN_IF_ERROR(check_input_count(kGather, in, 2));
  NPUKIT_RETURN_IF_ERROR(check_rank(kGather, "table", in[0].shape, 2));
  NPUKIT_RETURN_IF_ERROR(check_index_dtype(kGather, "ids", in[1].dtype));
  Shape out = in[1].shape;
  out.push_back(in[0].shape[1]);
  return std::vector<TensorDesc>{{out, in[0].dtype}};
}

// No arithmetic; reads the ids and the selected rows, writes the rows.
OpCost gather_cost(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out,
                   const Attrs&) {
  return {0, static_cast<double>(in[1].bytes() + 2 * out[0].bytes())};
}

Status compute_gather(const CpuArgs& args) {
  NPUKIT_RETURN_IF_ERROR(check_buffers(kGather, args));
  const TensorDesc& table = args.in_desc[0];
  const TensorDesc& ids = args.in_desc[1];
  NPUKIT_RETURN_IF_ERROR(check_index_dtype(kGather, "ids", ids.dtype));
  int64_t vocab = table.shape[0];
  auto row_bytes = static_cast<std::size_t>(table.shape[1]) * dtype_size(table.dtype);
  for (int64_t i = 0; i < ids.elements(); ++i) {
    int64_t id = index_at(args.in[1], ids.dtype, i);
    if (id < 0 || id >= vocab) {
      return InvalidArgument(std::string(kGather) + ": id " + std::to_string(id) + " at position " +
                             std::to_string(i) + " is out of range [0, " + std::to_string(vocab) +
                             ")");
    }
    std::memcpy(bytes_out(args, 0) + i * row_bytes, bytes_in(args, 0) + id * row_bytes, row_bytes);
  }
  return Status::Ok();
}

// ---- Transpose ----

Result<std::vector<int64_t>> transpose_perm(const Shape& s, const Attrs& attrs) {
  std::vector<int64_t> reversed(s.size());
  std::iota(reversed.rbegin(), reversed.rend(), 0);
  std::vector<int64_t> perm = attrs.get_ints("perm", reversed);
  std::vector<bool> seen(s.size(), false);
  bool valid = perm.size() == s.size();
  for (std::size_t d = 0; valid && d < perm.size(); ++d) {
    valid = perm[d] >= 0 && perm[d] < std::ssize(s) && !seen[static_cast<std::size_t>(perm[d])];
    if (valid) seen[static_cast<std::size_t>(perm[d])] = true;
  }
  if (valid) return perm;
  return shape_error(kTranspose, "perm " + dims_str(perm) +
                                     " is not a permutation of the dims: got " + dims_str(s));
}

Result<std::vector<TensorDesc>> infer_transpose(const std::vector<TensorDesc>& in,
                                                const Attrs& attrs) {
  NPUKIT_RETURN_IF_ERROR(check_input_count(kTranspose, in, 1));
  auto perm = transpose_perm(in[0].shape, attrs);
  if (!perm.ok()) return perm.status();
  Shape out;
  for (int64_t d : *perm) out.push_back(in[0].shape[static_cast<std::size_t>(d)]);
  return std::vector<TensorDesc>{{out, in[0].dtype}};
}

// out[i] = in[src_at[i]], elements of `size` bytes.
void gather_elements(const unsigned char* in, unsigned char* out,
                     const std::vector<int64_t>& src_at, std::size_t size) {
  for (std::size_t i = 0; i < src_at.size(); ++i) {
    std::memcpy(out + i * size, in + static_cast<std::size_t>(src_at[i]) * size, size);
  }
}

Status compute_transpose(const CpuArgs& args) {
  NPUKIT_RETURN_IF_ERROR(check_buffers(kTranspose, args));
  const TensorDesc& x = args.in_desc[0];
  auto perm = transpose_perm(x.shape, args.attrs);
  if (!perm.ok()) return perm.status();
  std::vector<int64_t> in_strides = contiguous_strides(x.shape);
  std::vector<int64_t> strides;  // in's stride along each output dim
  for (int64_t d : *perm) strides.push_back(in_strides[static_cast<std::size_t>(d)]);
  gather_elements(bytes_in(args, 0), bytes_out(args, 0),
                  strided_offsets(args.out_desc[0].shape, strides), dtype_size(x.dtype));
  return Status::Ok();
}

// ---- Reshape ----

Status reshape_error(const Shape& in, const Shape& target) {
  return shape_error(kReshape, "cannot reshape " + dims_str(in) + " to attr shape " +
                                   dims_str(target));
}

// attr shape with its -1 (at most one) resolved against the element count of a static input.
Result<Shape> reshape_target(const Shape& in, const Attrs& attrs) {
  if (!attrs.has("shape"))
    return InvalidArgument(std::string(kReshape) + ": attr shape is required");
  Shape target = attrs.get_ints("shape", {});
  auto inferred = std::find(target.begin(), target.end(), kDynamicDim);
  bool bad_dims = std::count(target.begin(), target.end(), kDynamicDim) > 1 ||
                  std::any_of(target.begin(), target.end(), [](int64_t d) { return d < -1; });
  if (bad_dims) return reshape_error(in, target);
  if (is_dynamic(in)) return target;  // the -1 stays: the output is as dynamic as the input
  int64_t known = 1;
  for (int64_t d : target) known *= d == kDynamicDim ? 1 : d;
  int64_t total = num_elements(in);
  if (inferred == target.end()) {
    if (known != total) return reshape_error(in, target);
    return target;
  }
  if (known == 0 || total % known != 0) return reshape_error(in, target);
  *inferred = total / known;
  return target;
}

Result<std::vector<TensorDesc>> infer_reshape(const std::vector<TensorDesc>& in,
                                              const Attrs& attrs) {
  NPUKIT_RETURN_IF_ERROR(check_input_count(kReshape, in, 1));
  auto target = reshape_target(in[0].shape, attrs);
  if (!target.ok()) return target.status();
  return std::vector<TensorDesc>{{*target, in[0].dtype}};
}

OpCost view_cost(const std::vector<TensorDesc>&, const std::vector<TensorDesc>&, const Attrs&) {
  return {};
}

// The data is unchanged; copies only when the output is a separate buffer.
Status compute_reshape(const CpuArgs& args) {
  NPUKIT_RETURN_IF_ERROR(check_buffers(kReshape, args));
  if (args.out[0] != args.in[0]) std::memmove(args.out[0], args.in[0], args.in_desc[0].bytes());
  return Status::Ok();
}

// ---- Cast ----

Result<DType> cast_target(const Attrs& attrs) {
  if (!attrs.has("dst_type"))
    return InvalidArgument(std::string(kCast) + ": attr dst_type is required");
  auto dtype = parse_dtype(attrs.get_string("dst_type", ""));
  if (!dtype.ok()) return InvalidArgument(std::string(kCast) + ": " + dtype.status().message());
  return dtype;
}

Result<std::vector<TensorDesc>> infer_cast(const std::vector<TensorDesc>& in, const Attrs& attrs) {
  NPUKIT_RETURN_IF_ERROR(check_input_count(kCast, in, 1));
  auto dtype = cast_target(attrs);
  if (!dtype.ok()) return dtype.status();
  return std::vector<TensorDesc>{{in[0].shape, *dtype}};
}

float int32_to_float(int32_t v) { return static_cast<float>(v); }

// Truncates toward zero; NaN -> 0 and out-of-range values saturate (C++ leaves them undefined).
int32_t float_to_int32(float v) {
  if (std::isnan(v)) return 0;
  if (v >= 2147483648.0f) return std::numeric_limits<int32_t>::max();
  if (v <= -2147483648.0f) return std::numeric_limits<int32_t>::min();
  return static_cast<int32_t>(v);
}

using ConvertFn = void (*)(const void* src, void* dst, int64_t count);

template <typename From, typename To, To (*kConvert)(From)>
void convert_all(const void* src, void* dst, int64_t count) {
  const auto* from = static_cast<const From*>(src);
  auto* to = static_cast<To*>(dst);
  for (int64_t i = 0; i < count; ++i) to[i] = kConvert(from[i]);
}

struct Conversion {
  DType from, to;
  ConvertFn convert;
};

constexpr Conversion kConversions[] = {
    {DType::kFloat32, DType::kFloat16, convert_all<float, uint16_t, float_to_half>},
    {DType::kFloat16, DType::kFloat32, convert_all<uint16_t, float, half_to_float>},
    {DType::kFloat32, DType::kInt32, convert_all<float, int32_t, float_to_int32>},
    {DType::kInt32, DType::kFloat32, convert_all<int32_t, float, int32_to_float>},
};

Status compute_cast(const CpuArgs& args) {
  NPUKIT_RETURN_IF_ERROR(check_buffers(kCast, args));
  DType from = args.in_desc[0].dtype, to = args.out_desc[0].dtype;
  int64_t count = args.in_desc[0].elements();
  if (from == to) {
    std::memmove(args.out[0], args.in[0], args.in_desc[0].bytes());
    return Status::Ok();
  }
  for (const auto& c : kConversions) {
    if (c.from == from && c.to == to) {
      c.convert(args.in[0], args.out[0], count);
      return Status::Ok();
    }
  }
  return InvalidArgument(
      std::string(kCast) +
      ": functional mode supports float32 <-> float16 and float32 <-> int32, got " +
      dtype_name(from) + " -> " + dtype_name(to));
}

}  // namespace

void register_layout_kernels(KernelRegistry& r) {
  r.add_kernel({.name = kGather, .unit = Unit::kVector, .infer = infer_gather,
                .cost = gather_cost, .compute = compute_gather});
  r.add_kernel({.name = kTranspose, .unit = Unit::kVector, .infer = infer_transpose,
                .cost = per_element_cost<0>, .compute = compute_transpose});
  r.add_kernel({.name = kReshape, .unit = Unit::kVector, .infer = infer_reshape,
                .cost = view_cost, .compute = compute_reshape});
  r.add_kernel({.name = kCast, .unit = Unit::kVector, .infer = infer_cast,
                .cost = per_element_cost<1>, .compute = compute_cast});
}

}  // namespace npukit::emu::kern
