// Op descriptors: the framework op name and input shapes/dtypes of a prepared kernel, interned
// once per distinct op so tasks can carry a 32-bit id to profilers instead of strings.
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
};

uint32_t intern_op_descriptor(const std::string& op, const std::vector<TensorDesc>& inputs);
// The descriptor of `id` (id 0: the empty descriptor).
OpDescriptor op_descriptor(uint32_t id);

}  // namespace npukit::emu
