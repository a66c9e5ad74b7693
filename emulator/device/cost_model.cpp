#include "emulator/device/cost_model.hpp"

#include <algorithm>
#include <cmath>

namespace npukit::emu {

const char* copy_kind_name(CopyKind k) {
  switch (k) {
    case CopyKind::kHostToDevice: return "H2D";
    case CopyKind::kDeviceToHost: return "D2H";
    case CopyKind::kDeviceToDevice: return "D2D";
  }
  return "?";
}

namespace {

double peak_of(const PeakSpec& p, DType dtype) {
  switch (dtype) {
    case DType::kFloat16: return p.fp16;
    case DType::kBFloat16: return p.bf16;
    case DType::kInt8:
    case DType::kBool: return p.int8;
    case DType::kFloat32:
    case DType::kInt32:
    case DType::kInt64: return p.fp32;
  }
  return p.fp32;
}

}  // namespace

double unit_peak(const DeviceSpec& spec, Unit unit, DType dtype) {
  switch (unit) {
    case Unit::kCube: {
      double cube = peak_of(spec.cube_peak, dtype);
      if (cube > 0) return cube;
      double vec = peak_of(spec.vector_peak, dtype);
      return vec > 0 ? vec : spec.vector_peak.fp32;
    }
    case Unit::kVector: {
      double vec = peak_of(spec.vector_peak, dtype);
      return vec > 0 ? vec : spec.vector_peak.fp32;
    }
    case Unit::kAiCpu: return spec.aicpu_flops_per_core * spec.aicpu_count;
  }
  return 1;
}

KernelTiming time_kernel(const DeviceSpec& spec, Unit unit, DType dtype, const OpCost& cost,
                         uint32_t block_dim, bool convolution) {
  KernelTiming t;
  bool aicpu = unit == Unit::kAiCpu;
  auto pool = static_cast<uint32_t>(unit_pool(spec, unit));
  uint32_t blocks = block_dim == 0 ? pool : block_dim;
  t.cores = std::min(blocks, pool);
  double waves = std::ceil(static_cast<double>(blocks) / t.cores);
  double tail = blocks / (waves * t.cores);
  double share = static_cast<double>(t.cores) / pool * tail;
  double cube = convolution && spec.efficiency.conv > 0 ? spec.efficiency.conv : spec.efficiency.cube;
  double efficiency = aicpu ? spec.efficiency.aicpu : unit == Unit::kCube ? cube : spec.efficiency.vector;
  double flops_per_s = unit_peak(spec, unit, dtype) * efficiency * share;
  t.compute_ns_at_max_clock = cost.flops > 0 ? cost.flops / flops_per_s * 1e9 : 0;
  double bytes_per_s = spec.hbm.bandwidth_bps * spec.efficiency.hbm * (aicpu ? 1.0 : share);
  t.memory_ns = cost.bytes > 0 ? cost.bytes / bytes_per_s * 1e9 : 0;
  t.overhead_ns = aicpu ? spec.runtime.aicpu_launch_ns : spec.runtime.kernel_launch_ns;
  return t;
}

Nanos kernel_duration(const KernelTiming& t, double clock_ratio) {
  double compute = t.compute_ns_at_max_clock / clock_ratio;
  return t.overhead_ns + static_cast<Nanos>(std::max(compute, t.memory_ns));
}

Nanos copy_duration(const DeviceSpec& spec, CopyKind kind, uint64_t bytes, double pcie_share) {
  double b = static_cast<double>(bytes);
  if (kind == CopyKind::kDeviceToDevice) {
    return spec.runtime.kernel_launch_ns +
           static_cast<Nanos>(2 * b / (spec.hbm.bandwidth_bps * spec.efficiency.hbm) * 1e9);
  }
  return spec.pcie.latency_ns +
         static_cast<Nanos>(b / (spec.pcie.bandwidth_bps * spec.efficiency.pcie * pcie_share) * 1e9);
}

}  // namespace npukit::emu
