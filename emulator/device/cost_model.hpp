// The roofline cost model: how long a kernel or copy takes on a device.
//
// kernel time = max(flops / (unit peak x efficiency x share), bytes / (HBM bw x efficiency x share))
//               + launch overhead
// where `share` is the fraction of the chip's cores the task occupies (each AI core brings its
// slice of compute and of memory bandwidth) times the tail efficiency of its last wave of blocks.
// Compute time scales with the AI-core clock (DVFS); memory time does not.
#pragma once

#include <cstdint>

#include "emulator/kernels/kernel.hpp"
#include "emulator/device/spec.hpp"

namespace npukit::emu {

enum class CopyKind : uint8_t { kHostToDevice, kDeviceToHost, kDeviceToDevice };
const char* copy_kind_name(CopyKind k);  // "H2D", "D2H", "D2D"

// A kernel's timing, computed once at launch; the duration is settled at dispatch.
struct KernelTiming {
  double compute_ns_at_max_clock = 0;
  double memory_ns = 0;
  Nanos overhead_ns = 0;
  uint32_t cores = 0;  // cores of its unit's pool (unit_pool) occupied while it runs
};

// The cores a kernel of `unit` is launched over: AI CPUs, the AI cores for cube kernels, and for
// vector kernels the AIVs where the chip has them apart (DeviceSpec::vector_pool).
inline int unit_pool(const DeviceSpec& spec, Unit unit) {
  if (unit == Unit::kAiCpu) return spec.aicpu_count;
  return unit == Unit::kVector ? spec.vector_pool() : spec.aicore_count;
}

// Peak FLOP/s of `unit` for `dtype` on the whole chip; falls back from cube to vector where the
// chip has no cube path for the dtype (fp32 matmul on the first-generation 910).
double unit_peak(const DeviceSpec& spec, Unit unit, DType dtype);

// `block_dim` 0 means "all cores" of the unit's pool; a kernel occupies min(block_dim, pool) of them.
// `convolution`: a cube kernel that is a convolution, priced at the chip's convolution efficiency
// where its spec has one (efficiency.conv), else at the cube's.
KernelTiming time_kernel(const DeviceSpec& spec, Unit unit, DType dtype, const OpCost& cost,
                         uint32_t block_dim, bool convolution = false);
// Duration at the current clock (clock_ratio = current / max AI-core clock, in (0, 1]).
Nanos kernel_duration(const KernelTiming& t, double clock_ratio);

// H2D/D2H over PCIe (latency + bytes / effective bandwidth); D2D reads and writes HBM.
// `pcie_share`: of its line rate, what the device's PCIe link runs at (host copies only).
Nanos copy_duration(const DeviceSpec& spec, CopyKind kind, uint64_t bytes, double pcie_share = 1);

}  // namespace npukit::emu
