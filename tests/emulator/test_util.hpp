// Helpers shared by the emulator tests.
#pragma once

#include <gtest/gtest.h>

#include <memory>

#include "emulator/runtime/node.hpp"
#include "emulator/runtime/runtime.hpp"
#include "emulator/engine/timeline.hpp"

namespace npukit::emu::testing {

inline std::unique_ptr<Node> make_node(NodeOptions options = {}) {
  auto node = Node::create(options);
  EXPECT_TRUE(node.ok()) << node.status().message();
  return node.ok() ? std::move(*node) : nullptr;
}

inline Context& make_context(Node& node, int device = 0, uint32_t pid = 1000,
                             AllocatorPolicy policy = AllocatorPolicy::kCaching) {
  auto ctx = node.create_context(device, pid, "test", policy);
  EXPECT_TRUE(ctx.ok()) << ctx.status().message();
  return **ctx;
}

inline TensorDesc fp16(Shape s) { return {std::move(s), DType::kFloat16}; }
inline TensorDesc fp32(Shape s) { return {std::move(s), DType::kFloat32}; }

inline Nanos duration(const TaskRecord& r) { return r.end - r.start; }

}  // namespace npukit::emu::testing
