// Test helpers for the kernel registry: host tensors, launching a kernel's CPU implementation
// through KernelRegistry::builtin(), random inputs and element-wise tolerance checks.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "emulator/kernels/kernel.hpp"

namespace npukit::emu::ktest {

// A tensor in host memory: a descriptor and its raw bytes.
struct HostTensor {
  TensorDesc desc;
  std::vector<unsigned char> bytes;

  template <typename T>
  static HostTensor of(Shape shape, DType dtype, const std::vector<T>& values) {
    HostTensor t{{std::move(shape), dtype}, {}};
    EXPECT_EQ(sizeof(T), dtype_size(dtype));
    EXPECT_EQ(static_cast<int64_t>(values.size()), t.desc.elements());
    t.bytes.resize(values.size() * sizeof(T));
    std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
    return t;
  }
  template <typename T>
  std::vector<T> values() const {
    std::vector<T> out(bytes.size() / sizeof(T));
    std::memcpy(out.data(), bytes.data(), out.size() * sizeof(T));
    return out;
  }
};

inline HostTensor f32(Shape shape, const std::vector<float>& v) {
  return HostTensor::of(std::move(shape), DType::kFloat32, v);
}
inline HostTensor i32(Shape shape, const std::vector<int32_t>& v) {
  return HostTensor::of(std::move(shape), DType::kInt32, v);
}
inline HostTensor i64(Shape shape, const std::vector<int64_t>& v) {
  return HostTensor::of(std::move(shape), DType::kInt64, v);
}

inline std::vector<TensorDesc> descs_of(const std::vector<HostTensor>& ts) {
  std::vector<TensorDesc> out;
  for (const auto& t : ts) out.push_back(t.desc);
  return out;
}

// Resolves `op` (framework or kernel name) and runs its CPU implementation on fresh outputs.
inline Result<std::vector<HostTensor>> run(std::string_view op,
                                           const std::vector<HostTensor>& inputs,
                                           const Attrs& attrs = {}) {
  std::vector<TensorDesc> in_desc = descs_of(inputs);
  auto resolved = KernelRegistry::builtin().resolve(op, in_desc, attrs);
  if (!resolved.ok()) return resolved.status();
  if (resolved->kernel->compute == nullptr) {
    return InternalError(resolved->kernel->name + " has no CPU implementation");
  }
  std::vector<HostTensor> outputs;
  for (const auto& d : resolved->outputs)
    outputs.push_back({d, std::vector<unsigned char>(d.bytes())});
  std::vector<const void*> in_ptrs;
  std::vector<void*> out_ptrs;
  for (const auto& t : inputs) in_ptrs.push_back(t.bytes.data());
  for (auto& t : outputs) out_ptrs.push_back(t.bytes.data());
  CpuArgs args{in_ptrs, out_ptrs, in_desc, resolved->outputs, attrs};
  Status s = resolved->kernel->compute(args);
  if (!s.ok()) return s;
  return outputs;
}

// Runs `op` and returns output `index` as floats; a failed launch fails the test.
inline std::vector<float> run_f32(std::string_view op, const std::vector<HostTensor>& inputs,
                                  const Attrs& attrs = {}, std::size_t index = 0) {
  auto out = run(op, inputs, attrs);
  EXPECT_TRUE(out.ok()) << out.status().message();
  if (!out.ok() || index >= out->size()) return {};
  return (*out)[index].values<float>();
}

inline std::vector<float> random_floats(std::mt19937& rng, int64_t n, float lo = -1.0f,
                                        float hi = 1.0f) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = dist(rng);
  return v;
}

// |actual[i] - expected[i]| <= abs_tol + rel_tol * |expected[i]| for every i.
inline ::testing::AssertionResult all_near(const std::vector<float>& actual,
                                           const std::vector<double>& expected, double abs_tol,
                                           double rel_tol) {
  if (actual.size() != expected.size()) {
    return ::testing::AssertionFailure() << "size " << actual.size() << " != " << expected.size();
  }
  for (std::size_t i = 0; i < actual.size(); ++i) {
    double err = std::abs(actual[i] - expected[i]);
    if (!(err <= abs_tol + rel_tol * std::abs(expected[i]))) {
      return ::testing::AssertionFailure() << "element " << i << ": " << actual[i] << " vs "
                                           << expected[i] << " (error " << err << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace npukit::emu::ktest
