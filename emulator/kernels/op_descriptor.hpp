// Op descriptors: what a profiler shows of a prepared kernel (framework op name, input and output
// shapes and dtypes, shape mode, HF32 eligibility), interned once per distinct op so tasks can
// carry a 32-bit id to profilers instead of strings.
// Thread-safe (prepare may run on several nodes' threads); ids are stable for the process.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "emulator/kernels/tensor.hpp"

namespace npukit::emu {

struct OpDescriptor {
  std::string op;      // as launched: "aten::mm", "conv2d", or a kernel name
  std::string shapes;  // msprof style: "4096,4096;4096,4096"
  std::string dtypes;  // msprof style: "FLOAT16;FLOAT16"
  std::string out_shapes;
  std::string out_dtypes;
  std::string state;   // msprof OP State: "dynamic" when a dim is unknown (-1) at launch, else "static"
  std::string hf32;    // msprof HF32 Eligible: "YES" for cube kernels on FLOAT inputs, else "NO"

  // The bus form (the kernel event's aux, telemetry/events.cpp):
  // "<op>|<in shapes>|<in dtypes>|<out shapes>|<out dtypes>|<state>|<hf32>".
  std::string bus_text() const;
};

uint32_t intern_op_descriptor(const std::string& op, const std::vector<TensorDesc>& inputs,
                              const std::vector<TensorDesc>& outputs = {}, bool cube = false);
// The descriptor of `id` (id 0: the empty descriptor).
OpDescriptor op_descriptor(uint32_t id);

}  // namespace npukit::emu
