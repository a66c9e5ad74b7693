// Dropout as CANN runs it in training: DropOutDoMask(x, mask) -> y = x / keep_prob where the mask
// keeps the element, else 0. The mask (bool, one byte per element here; DropOutGenMask makes it
// once per step) has x's shape; attr keep_prob (default 0.9). The backward applies the same mask
// to dy (the compiler emits DropOutDoMask again). Vector unit: a read of x and the mask, a write.
#include "emulator/kernels/common.hpp"

namespace npukit::emu::kern {
namespace {

constexpr const char kDropOutDoMask[] = "DropOutDoMask";

Result<std::vector<TensorDesc>> infer_do_mask(const std::vector<TensorDesc>& in, const Attrs& attrs) {
  NPUKIT_RETURN_IF_ERROR(check_input_count(kDropOutDoMask, in, 2));
  auto shape = same_shape_inputs(kDropOutDoMask, in, 2);
  if (!shape.ok()) return shape.status();
  double keep = attrs.get_float("keep_prob", 0.9);
  if (!(keep > 0 && keep <= 1)) return shape_error(kDropOutDoMask, "keep_prob must be in (0, 1]");
  return std::vector<TensorDesc>{{*shape, in[0].dtype}};
}

Status compute_do_mask(const CpuArgs& args) {
  NPUKIT_RETURN_IF_ERROR(check_buffers(kDropOutDoMask, args));
  NPUKIT_RETURN_IF_ERROR(require_float32(kDropOutDoMask, args.in_desc[0].dtype));
  const float* x = f32_in(args, 0);
  const auto* mask = static_cast<const uint8_t*>(args.in[1]);
  float* y = f32_out(args, 0);
  auto scale = static_cast<float>(1.0 / args.attrs.get_float("keep_prob", 0.9));
  int64_t count = args.out_desc[0].elements();
  for (int64_t i = 0; i < count; ++i) y[i] = mask[i] != 0 ? x[i] * scale : 0.0f;
  return Status::Ok();
}

}  // namespace

void register_dropout_kernels(KernelRegistry& r) {
  r.add_kernel({.name = kDropOutDoMask, .unit = Unit::kVector, .infer = infer_do_mask,
                .cost = per_element_cost<1>, .compute = compute_do_mask});
}

}  // namespace npukit::emu::kern
