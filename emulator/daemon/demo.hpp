// The runtime demo (the README's main job until workloads land): every device of a node runs
// the same matmul-heavy transformer-block program on two streams, and each device reports what
// the model says it achieved.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "emulator/device/allocator.hpp"
#include "emulator/runtime/node.hpp"

namespace npukit::emu {

struct DemoOptions {
  std::string node = "8x910B2";
  int steps = 20;
  int layers = 4;
  int64_t tokens = 8192;   // batch x sequence rows per matmul
  int64_t hidden = 4096;
  uint64_t seed = 1;
  AllocatorPolicy allocator = AllocatorPolicy::kCaching;
};

struct DemoDeviceReport {
  int device = 0;
  std::string bus_id;
  Nanos modelled_ns = 0;      // first task start to last task end on this device
  uint64_t kernels = 0;
  uint64_t copies = 0;
  double achieved_tflops = 0;  // flops_total / modelled time
  double hbm_gbps = 0;         // HBM bytes / modelled time, GB/s
  double aicore_util = 0;      // busy core-time / (cores x modelled time)
  AllocatorStats allocator;
};

struct DemoReport {
  std::string node;
  std::string chip;
  double peak_tflops_fp16 = 0;
  std::vector<DemoDeviceReport> devices;
  Nanos makespan_ns = 0;
  uint64_t tasks = 0;
};

Result<DemoReport> run_demo(const DemoOptions& options);

}  // namespace npukit::emu
