// Conv2D and its two gradients (cube unit), NCHW.
//
// x [N,C,H,W], w [O,C/groups,KH,KW], y/dy [N,O,OH,OW]. Attrs: strides [sh,sw] (default 1,1),
// pads [ph,pw] (symmetric, default 0,0), dilations [dh,dw] (default 1,1), groups (default 1).
// OH = (H + 2*ph - dh*(KH-1) - 1) / sh + 1, likewise OW.
// Conv2DBackpropInput (dy, w) needs attr input_size [N,C,H,W]; Conv2DBackpropFilter (x, dy)
// needs attr filter_size [O,C/groups,KH,KW]. All three cost 2*N*O*OH*OW*(C/groups)*KH*KW flops.
#include <algorithm>

#include "emulator/kernels/common.hpp"

namespace npukit::emu::kern {
namespace {

constexpr const char kConv[] = "Conv2D";
constexpr const char kConvInput[] = "Conv2DBackpropInput";
constexpr const char kConvFilter[] = "Conv2DBackpropFilter";

struct ConvGeometry {
  int64_t n = 0, c = 0, h = 0, w = 0;  // input [N,C,H,W]
  int64_t o = 0, kh = 0, kw = 0;       // filter [O,C/groups,KH,KW]
  int64_t oh = 0, ow = 0;              // output spatial dims; -1 when they depend on a -1
  int64_t groups = 1, sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
};

// A two-value attr whose values are all >= min_value.
Result<std::vector<int64_t>> pair_attr(std::string_view kernel, const Attrs& attrs,
                                       const std::string& key, int64_t fallback,
                                       int64_t min_value) {
  auto v = attrs.get_ints(key, {fallback, fallback});
  bool ok =
      v.size() == 2 && std::all_of(v.begin(), v.end(), [&](int64_t x) { return x >= min_value; });
  if (ok) return v;
  return InvalidArgument(std::string(kernel) + ": attr " + key + " must be 2 values >= " +
                         std::to_string(min_value) + ", got " + dims_str(v));
}

Status read_conv_attrs(std::string_view kernel, const Attrs& attrs, ConvGeometry& g) {
  auto strides = pair_attr(kernel, attrs, "strides", 1, 1);
  auto pads = pair_attr(kernel, attrs, "pads", 0, 0);
  auto dilations = pair_attr(kernel, attrs, "dilations", 1, 1);
  if (!strides.ok()) return strides.status();
  if (!pads.ok()) return pads.status();
  if (!dilations.ok()) return dilations.status();
  g.groups = attrs.get_int("groups", 1);
  if (g.groups < 1) {
    return InvalidArgument(std::string(kernel) + ": attr groups must be >= 1, got " +
                           std::to_string(g.groups));
  }
  g.sh = (*strides)[0], g.sw = (*strides)[1];
  g.ph = (*pads)[0], g.pw = (*pads)[1];
  g.dh = (*dilations)[0], g.dw = (*dilations)[1];
  return Status::Ok();
}

// Output extent of one spatial dim: -1 when in or k is dynamic, -2 when the dilated filter does
// not fit in the padded input.
int64_t conv_out_dim(int64_t in, int64_t k, int64_t stride, int64_t pad, int64_t dilation) {
  if (in < 0 || k < 0) return kDynamicDim;
  int64_t span = in + 2 * pad - dilation * (k - 1) - 1;
  return span < 0 ? -2 : span / stride + 1;
}

Status check_channels(std::string_view kernel, const ConvGeometry& g, const Shape& x,
                      const Shape& w) {
  std::string got = ": got x " + dims_str(x) + " and w " + dims_str(w);
  if (g.c >= 0 && g.c % g.groups != 0) {
    return shape_error(kernel, "C is not divisible by groups=" + std::to_string(g.groups) + got);
  }
  if (g.c >= 0 && !dims_match(w[1], g.c / g.groups)) {
    return shape_error(kernel, "w dim 1 must be C/groups=" + std::to_string(g.c / g.groups) + got);
  }
  if (g.o >= 0 && g.o % g.groups != 0) {
    return shape_error(kernel, "O is not divisible by groups=" + std::to_string(g.groups) + got);
  }
  return Status::Ok();
}

// Validates x and w against the conv attrs and derives the output size.
Result<ConvGeometry> conv_geometry(std::string_view kernel, const Shape& x, const Shape& w,
                                   const Attrs& attrs) {
  NPUKIT_RETURN_IF_ERROR(check_rank(kernel, "x", x, 4));
  NPUKIT_RETURN_IF_ERROR(check_rank(kernel, "w", w, 4));
  ConvGeometry g;
  NPUKIT_RETURN_IF_ERROR(read_conv_attrs(kernel, attrs, g));
  g.n = x[0], g.c = x[1], g.h = x[2], g.w = x[3];
  g.o = w[0], g.kh = w[2], g.kw = w[3];
  NPUKIT_RETURN_IF_ERROR(check_channels(kernel, g, x, w));
  g.oh = conv_out_dim(g.h, g.kh, g.sh, g.ph, g.dh);
  g.ow = conv_out_dim(g.w, g.kw, g.sw, g.pw, g.dw);
  if (g.oh < -1 || g.ow < -1) {
    return shape_error(kernel, "dilated filter is larger than the padded input: got x " +
                                   dims_str(x) + " and w " + dims_str(w));
  }
  return g;
}

Shape output_shape(const ConvGeometry& g) { return {g.n, g.o, g.oh, g.ow}; }

// The gradient kernels get dy; it must be the forward output's shape.
Status check_dy(std::string_view kernel, const ConvGeometry& g, const Shape& dy) {
  if (shapes_match(dy, output_shape(g))) return Status::Ok();
  return shape_error(kernel, "dy must be [N,O,OH,OW]=" + dims_str(output_shape(g)) +
                                 " for the given conv: got " + dims_str(dy));
}

// A required 4-value shape attr (input_size, filter_size).
Result<Shape> shape_attr(std::string_view kernel, const Attrs& attrs, const std::string& key) {
  Shape s = attrs.get_ints(key, {});
  if (s.size() == 4) return s;
  return InvalidArgument(std::string(kernel) + ": attr " + key + " (4 dims) is required, got " +
                         dims_str(s));
}

Result<std::vector<TensorDesc>> infer_conv(const std::vector<TensorDesc>& in, const Attrs& attrs) {
  NPUKIT_RETURN_IF_ERROR(check_input_count(kConv, in, 2));
  auto g = conv_geometry(kConv, in[0].shape, in[1].shape, attrs);
  if (!g.ok()) return g.status();
  return std::vector<TensorDesc>{{output_shape(*g), in[0].dtype}};
}

// Inputs dy, w; output dx shaped like attr input_size.
Result<std::vector<TensorDesc>> infer_conv_input(const std::vector<TensorDesc>& in,
                                                 const Attrs& attrs) {
  NPUKIT_RETURN_IF_ERROR(check_input_count(kConvInput, in, 2));
  auto x = shape_attr(kConvInput, attrs, "input_size");
  if (!x.ok()) return x.status();
  auto g = conv_geometry(kConvInput, *x, in[1].shape, attrs);
  if (!g.ok()) return g.status();
  NPUKIT_RETURN_IF_ERROR(check_dy(kConvInput, *g, in[0].shape));
  return std::vector<TensorDesc>{{*x, in[0].dtype}};
}

// Inputs x, dy; output dw shaped like attr filter_size.
Result<std::vector<TensorDesc>> infer_conv_filter(const std::vector<TensorDesc>& in,
                                                  const Attrs& attrs) {
  NPUKIT_RETURN_IF_ERROR(check_input_count(kConvFilter, in, 2));
  auto w = shape_attr(kConvFilter, attrs, "filter_size");
  if (!w.ok()) return w.status();
  auto g = conv_geometry(kConvFilter, in[0].shape, *w, attrs);
  if (!g.ok()) return g.status();
  NPUKIT_RETURN_IF_ERROR(check_dy(kConvFilter, *g, in[1].shape));
  return std::vector<TensorDesc>{{*w, in[0].dtype}};
}

// 2 * (elements of y) * (C/groups)*KH*KW multiply-adds.
double conv_flops(const TensorDesc& y, const Shape& w) {
  return 2.0 * static_cast<double>(y.elements()) * static_cast<double>(w[1] * w[2] * w[3]);
}

OpCost conv_cost(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out,
                 const Attrs&) {
  return {conv_flops(out[0], in[1].shape), io_bytes(in, out)};
}
OpCost conv_input_cost(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out,
                       const Attrs&) {
  return {conv_flops(in[0], in[1].shape), io_bytes(in, out)};
}
OpCost conv_filter_cost(const std::vector<TensorDesc>& in, const std::vector<TensorDesc>& out,
                        const Attrs&) {
  return {conv_flops(in[1], out[0].shape), io_bytes(in, out)};
}

// Calls tap(x_index, w_index, y_index) for every multiply-add of the forward conv whose
// input position lies inside x (taps that land in the padding are skipped).
template <typename Tap>
void for_each_tap(const ConvGeometry& g, Tap tap) {
  int64_t c_per_group = g.c / g.groups, o_per_group = g.o / g.groups;
  for (int64_t n = 0; n < g.n; ++n) {
    for (int64_t o = 0; o < g.o; ++o) {
      int64_t c_first = (o / o_per_group) * c_per_group;
      for (int64_t oy = 0; oy < g.oh; ++oy) {
        for (int64_t ox = 0; ox < g.ow; ++ox) {
          int64_t y_index = ((n * g.o + o) * g.oh + oy) * g.ow + ox;
          for (int64_t ci = 0; ci < c_per_group; ++ci) {
            for (int64_t ky = 0; ky < g.kh; ++ky) {
              int64_t iy = oy * g.sh - g.ph + ky * g.dh;
              if (iy < 0 || iy >= g.h) continue;
              for (int64_t kx = 0; kx < g.kw; ++kx) {
                int64_t ix = ox * g.sw - g.pw + kx * g.dw;
                if (ix < 0 || ix >= g.w) continue;
                tap(((n * g.c + c_first + ci) * g.h + iy) * g.w + ix,
                    ((o * c_per_group + ci) * g.kh + ky) * g.kw + kx, y_index);
              }
            }
          }
        }
      }
    }
  }
}

// Shared launch of the three convs: x and w are the descriptors' shapes of the forward conv's
// input and filter. Zeroes output 0, then calls tap(in0, in1, out0, x_index, w_index, y_index)
// for every multiply-add.
template <typename Tap>
Status run_conv(std::string_view kernel, const CpuArgs& args, const Shape& x, const Shape& w,
                Tap tap) {
  NPUKIT_RETURN_IF_ERROR(float32_launch(kernel, args));
  auto g = conv_geometry(kernel, x, w, args.attrs);
  if (!g.ok()) return g.status();
  const float *a = f32_in(args, 0), *b = f32_in(args, 1);
  float* out = f32_out(args, 0);
  std::fill_n(out, args.out_desc[0].elements(), 0.0f);
  for_each_tap(*g, [&](int64_t xi, int64_t wi, int64_t yi) { tap(a, b, out, xi, wi, yi); });
  return Status::Ok();
}

// Inputs x, w; output y.
Status compute_conv(const CpuArgs& args) {
  return run_conv(kConv, args, args.in_desc[0].shape, args.in_desc[1].shape,
                  [](const float* x, const float* w, float* y, int64_t xi, int64_t wi,
                     int64_t yi) { y[yi] += x[xi] * w[wi]; });
}

// Inputs dy, w; output dx.
Status compute_conv_input(const CpuArgs& args) {
  return run_conv(kConvInput, args, args.out_desc[0].shape, args.in_desc[1].shape,
                  [](const float* dy, const float* w, float* dx, int64_t xi, int64_t wi,
                     int64_t yi) { dx[xi] += dy[yi] * w[wi]; });
}

// Inputs x, dy; output dw.
Status compute_conv_filter(const CpuArgs& args) {
  return run_conv(kConvFilter, args, args.in_desc[0].shape, args.out_desc[0].shape,
                  [](const float* x, const float* dy, float* dw, int64_t xi, int64_t wi,
                     int64_t yi) { dw[wi] += dy[yi] * x[xi]; });
}

}  // namespace

void register_conv_kernels(KernelRegistry& r) {
  r.add_kernel({.name = kConv, .unit = Unit::kCube, .convolution = true, .infer = infer_conv, .cost = conv_cost,
                .compute = compute_conv});
  r.add_kernel({.name = kConvInput, .unit = Unit::kCube, .convolution = true, .infer = infer_conv_input,
                .cost = conv_input_cost, .compute = compute_conv_input});
  r.add_kernel({.name = kConvFilter, .unit = Unit::kCube, .convolution = true, .infer = infer_conv_filter,
                .cost = conv_filter_cost, .compute = compute_conv_filter});
}

}  // namespace npukit::emu::kern
