#include "emulator/kernels/tensor.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

namespace npukit::emu {

std::size_t dtype_size(DType t) {
  switch (t) {
    case DType::kFloat16:
    case DType::kBFloat16: return 2;
    case DType::kFloat32:
    case DType::kInt32: return 4;
    case DType::kInt64: return 8;
    case DType::kInt8:
    case DType::kBool: return 1;
  }
  return 0;
}

const char* dtype_name(DType t) {
  switch (t) {
    case DType::kFloat16: return "float16";
    case DType::kBFloat16: return "bfloat16";
    case DType::kFloat32: return "float32";
    case DType::kInt8: return "int8";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
    case DType::kBool: return "bool";
  }
  return "?";
}

Result<DType> parse_dtype(std::string_view s) {
  struct Name { std::string_view text; DType type; };
  static constexpr Name kNames[] = {
      {"float16", DType::kFloat16}, {"fp16", DType::kFloat16},   {"half", DType::kFloat16},
      {"bfloat16", DType::kBFloat16}, {"bf16", DType::kBFloat16}, {"float32", DType::kFloat32},
      {"fp32", DType::kFloat32},    {"float", DType::kFloat32},  {"int8", DType::kInt8},
      {"int32", DType::kInt32},     {"int64", DType::kInt64},    {"bool", DType::kBool},
  };
  for (const auto& n : kNames) {
    if (n.text == s) return n.type;
  }
  return InvalidArgument("unknown dtype '" + std::string(s) +
                         "' (expected float16, bfloat16, float32, int8, int32, int64 or bool)");
}

bool is_dynamic(const Shape& s) {
  return std::any_of(s.begin(), s.end(), [](int64_t d) { return d < 0; });
}

int64_t num_elements(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

std::string shape_str(const Shape& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(s[i]);
  }
  return out;
}

bool operator==(const TensorDesc& a, const TensorDesc& b) {
  return a.dtype == b.dtype && a.shape == b.shape;
}

uint16_t float_to_half(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t mant = x & 0x7fffffu;
  int32_t exp = static_cast<int32_t>((x >> 23) & 0xff);
  if (exp == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u : 0u));
  int32_t e = exp - 127 + 15;
  if (e >= 0x1f) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow -> inf
  if (e <= 0) {                                                  // subnormal or zero
    if (e < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000u;
    uint32_t shift = static_cast<uint32_t>(14 - e);
    uint32_t half = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1u))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = sign | (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) ++half;  // may carry into exponent: ok
  return static_cast<uint16_t>(half);
}

float half_to_float(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      int32_t e = -1;
      do { mant <<= 1; ++e; } while ((mant & 0x400u) == 0);
      bits = sign | static_cast<uint32_t>(127 - 15 - e) << 23 | (mant & 0x3ffu) << 13;
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | (exp - 15 + 127) << 23 | (mant << 13);
  }
  return std::bit_cast<float>(bits);
}

}  // namespace npukit::emu
