// Cube-unit kernels: MatMulV2 and BatchMatMulV2 here, the Conv2D family in conv.cpp.
//
// Both matmuls take attrs transpose_a / transpose_b (int 0/1): a is [..,M,K] (or [..,K,M]
// when transposed), b is [..,K,N] (or [..,N,K]). The output dtype is a's dtype.
#include <algorithm>

#include "emulator/kernels/common.hpp"

namespace npukit::emu {
namespace {

using kern::dims_str;

constexpr const char kMatMul[] = "MatMulV2";
constexpr const char kBatchMatMul[] = "BatchMatMulV2";

struct MatMulDims {
  int64_t m = 0, k = 0, n = 0;
  bool transpose_a = false, transpose_b = false;
};

// M, K, N from the last two dims of a and b (both rank >= 2); K must match.
Result<MatMulDims> matmul_dims(std::string_view kernel, const Shape& a, const Shape& b,
                               const Attrs& attrs) {
  MatMulDims d;
  d.transpose_a = attrs.get_int("transpose_a", 0) != 0;
  d.transpose_b = attrs.get_int("transpose_b", 0) != 0;
  int64_t a_rows = a[a.size() - 2], a_cols = a.back();
  int64_t b_rows = b[b.size() - 2], b_cols = b.back();
  d.m = d.transpose_a ? a_cols : a_rows;
  int64_t k_of_a = d.transpose_a ? a_rows : a_cols;
  int64_t k_of_b = d.transpose_b ? b_cols : b_rows;
  d.n = d.transpose_b ? b_rows : b_cols;
  if (!kern::dims_match(k_of_a, k_of_b)) {
    return shape_error(kernel, "K of a (" + std::to_string(k_of_a) + ") != K of b (" +
                                   std::to_string(k_of_b) + ") with transpose_a=" +
                                   std::to_string(d.transpose_a) + ", transpose_b=" +
                                   std::to_string(d.transpose_b) + ": got " + dims_str(a) +
                                   " and " + dims_str(b));
  }
  d.k = kern::merged_dim(k_of_a, k_of_b);
  return d;
}

Result<std::vector<TensorDesc>> infer_matmul(const std::vector<TensorDesc>& in,
                                             const Attrs& attrs) {
  NPUKIT_RETURN_IF_ERROR(kern::check_input_count(kMatMul, in, 2));
  NPUKIT_RETURN_IF_ERROR(kern::check_rank(kMatMul, "a", in[0].shape, 2));
  NPUKIT_RETURN_IF_ERROR(kern::check_rank(kMatMul, "b", in[1].shape, 2));
  auto d = matmul_dims(kMatMul, in[0].shape, in[1].shape, attrs);
  if (!d.ok()) return d.status();
  return std::vector<TensorDesc>{{{d->m, d->n}, in[0].dtype}};
}

// a [...,M,K] with b [...,K,N] (same batch dims) or b [K,N] (shared by every batch).
Result<std::vector<TensorDesc>> infer_batch_matmul(const std::vector<TensorDesc>& in,
                                                   const Attrs& attrs) {
  NPUKIT_RETURN_IF_ERROR(kern::check_input_count(kBatchMatMul, in, 2));
  const Shape& a = in[0].shape;
  const Shape& b = in[1].shape;
  NPUKIT_RETURN_IF_ERROR(kern::check_min_rank(kBatchMatMul, "a", a, 2));
  NPUKIT_RETURN_IF_ERROR(kern::check_min_rank(kBatchMatMul, "b", b, 2));
  Shape batch(a.begin(), a.end() - 2);
  if (b.size() > 2) {
    Shape b_batch(b.begin(), b.end() - 2);
    if (!kern::shapes_match(batch, b_batch)) {
      return shape_error(kBatchMatMul, "batch dims differ (b must have a's batch dims or rank 2)"
                                       ": got " + dims_str(a) + " and " + dims_str(b));
    }
    batch = kern::merged_shape(batch, b_batch);
  }
  auto d = matmul_dims(kBatchMatMul, a, b, attrs);
  if (!d.ok()) return d.status();
  batch.push_back(d->m);
  batch.push_back(d->n);
  return std::vector<TensorDesc>{{batch, in[0].dtype}};
}

// flops = 2 * batch * M * N * K; bytes = a + b + out.
OpCost matmul_cost(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out,
                   const Attrs& attrs) {
  const Shape& a = in[0].shape;
  int64_t k = attrs.get_int("transpose_a", 0) != 0 ? a[a.size() - 2] : a.back();
  return {2.0 * static_cast<double>(out[0].elements()) * static_cast<double>(k),
          kern::io_bytes(in, out)};
}

// c[M,N] = op(a) * op(b) for one matrix pair, op = optional transpose of the stored matrix.
void matmul_f32(const float* a, const float* b, float* c, const MatMulDims& d) {
  // op(a)(i,k) = a[i*a_row + k*a_col]; op(b)(k,j) = b[k*b_row + j*b_col].
  int64_t a_row = d.transpose_a ? 1 : d.k, a_col = d.transpose_a ? d.m : 1;
  int64_t b_row = d.transpose_b ? 1 : d.n, b_col = d.transpose_b ? d.k : 1;
  std::fill(c, c + d.m * d.n, 0.0f);
  for (int64_t i = 0; i < d.m; ++i) {
    float* c_row = c + i * d.n;
    for (int64_t k = 0; k < d.k; ++k) {
      float a_ik = a[i * a_row + k * a_col];
      const float* b_k = b + k * b_row;
      for (int64_t j = 0; j < d.n; ++j) c_row[j] += a_ik * b_k[j * b_col];
    }
  }
}

// Shared by both matmuls: a batch of products, b shared when it is rank 2.
Status run_matmul(std::string_view kernel, const CpuArgs& args) {
  NPUKIT_RETURN_IF_ERROR(kern::float32_launch(kernel, args));
  const Shape& a = args.in_desc[0].shape;
  const Shape& b = args.in_desc[1].shape;
  auto d = matmul_dims(kernel, a, b, args.attrs);
  if (!d.ok()) return d.status();
  int64_t batch = num_elements(Shape(a.begin(), a.end() - 2));
  int64_t b_step = b.size() == 2 ? 0 : d->k * d->n;
  for (int64_t i = 0; i < batch; ++i) {
    matmul_f32(kern::f32_in(args, 0) + i * d->m * d->k, kern::f32_in(args, 1) + i * b_step,
               kern::f32_out(args, 0) + i * d->m * d->n, *d);
  }
  return Status::Ok();
}

Status compute_matmul(const CpuArgs& args) { return run_matmul(kMatMul, args); }
Status compute_batch_matmul(const CpuArgs& args) { return run_matmul(kBatchMatMul, args); }

}  // namespace

void register_cube_kernels(KernelRegistry& r) {
  r.add_kernel({.name = kMatMul, .unit = Unit::kCube, .infer = infer_matmul,
                .cost = matmul_cost, .compute = compute_matmul});
  r.add_kernel({.name = kBatchMatMul, .unit = Unit::kCube, .infer = infer_batch_matmul,
                .cost = matmul_cost, .compute = compute_batch_matmul});
  kern::register_conv_kernels(r);
}

}  // namespace npukit::emu
