// Tensor descriptions shared by the kernel registry, the runtime and (later) the program format.
//
// A Shape is a list of dims; a dim of -1 is dynamic (unknown until run time). Element counts
// and byte sizes are only defined for static shapes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "telemetry/status.hpp"

namespace npukit::emu {

enum class DType : uint8_t { kFloat16, kBFloat16, kFloat32, kInt8, kInt32, kInt64, kBool };

std::size_t dtype_size(DType t);
// Lower-case framework spelling: "float16", "bfloat16", "float32", "int8", "int32", "int64", "bool".
const char* dtype_name(DType t);
// Accepts the spellings above plus "fp16", "bf16", "fp32", "half", "float".
Result<DType> parse_dtype(std::string_view s);

using Shape = std::vector<int64_t>;
inline constexpr int64_t kDynamicDim = -1;

bool is_dynamic(const Shape& s);
int64_t num_elements(const Shape& s);  // 1 for a scalar (rank 0); requires a static shape
std::string shape_str(const Shape& s);  // msprof style: "4096,4096"; "" for a scalar

struct TensorDesc {
  Shape shape;
  DType dtype = DType::kFloat32;

  int64_t elements() const { return num_elements(shape); }
  uint64_t bytes() const { return static_cast<uint64_t>(elements()) * dtype_size(dtype); }
};

bool operator==(const TensorDesc& a, const TensorDesc& b);

// IEEE half <-> float, round-to-nearest-even (used by Cast's CPU implementation).
uint16_t float_to_half(float f);
float half_to_float(uint16_t h);

}  // namespace npukit::emu
