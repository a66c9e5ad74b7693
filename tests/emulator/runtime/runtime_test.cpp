#include "emulator/runtime/runtime.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "emulator/kernels/op_descriptor.hpp"
#include "tests/emulator/test_util.hpp"

namespace npukit::emu {
namespace {

using testing::duration;
using testing::fp16;
using testing::fp32;
using testing::make_context;
using testing::make_node;

// One kernel alone on a fresh node; returns its record.
TaskRecord run_alone(Node& node, Context& ctx, const std::string& op, std::vector<TensorDesc> in,
                     const Attrs& attrs = {}, uint32_t block_dim = 0) {
  TimelineRecorder rec;
  node.engine().add_observer(&rec);
  StreamId s = ctx.create_stream();
  auto k = ctx.prepare(op, in, attrs, block_dim);
  EXPECT_TRUE(k.ok()) << k.status().message();
  EXPECT_TRUE(ctx.enqueue(s, *k).ok());
  EXPECT_TRUE(ctx.synchronize_stream(s).ok());
  node.engine().remove_observer(&rec);
  EXPECT_EQ(rec.records().size(), 1u);
  return rec.records().back();
}

// Host time of launching `n` small kernels: eager pays the runtime's launch and the framework's
// dispatch per op; graph mode pays neither per op.
Nanos host_time_of(bool graph, Nanos dispatch_ns, int n) {
  auto node = make_node();
  Context& ctx = make_context(*node);
  ctx.set_graph_launch(graph);
  ctx.set_dispatch_ns(dispatch_ns);
  StreamId s = ctx.create_stream();
  auto k = ctx.prepare("add", {fp16({64, 64}), fp16({64, 64})});
  EXPECT_TRUE(k.ok());
  Nanos before = ctx.host_free();
  for (int i = 0; i < n; ++i) EXPECT_TRUE(ctx.enqueue(s, *k).ok());
  return ctx.host_free() - before;
}

TEST(Runtime, EagerLaunchesCostTheHostPerOpAndGraphModeDoesNot) {
  Nanos launch = make_node()->device(0).spec().runtime.kernel_launch_ns;
  EXPECT_EQ(host_time_of(false, 0, 10), 10 * launch);
  EXPECT_EQ(host_time_of(false, 10'000, 10), 10 * (launch + 10'000));
  EXPECT_EQ(host_time_of(true, 10'000, 10), 0);
}

TEST(Runtime, LargeFp16MatmulReachesTheSpecsAchievedTflops) {
  auto node = make_node({.seed = 7});
  Context& ctx = make_context(*node);
  auto r = run_alone(*node, ctx, "matmul", {fp16({4096, 4096}), fp16({4096, 4096})});
  const DeviceSpec& d = node->device(0).spec();
  double achieved = 2.0 * 4096.0 * 4096.0 * 4096.0 / (static_cast<double>(duration(r)) * 1e-9);
  double expected = d.cube_peak.fp16 * d.efficiency.cube;  // 376 x 0.836 = 314 TFLOPS
  EXPECT_NEAR(achieved / expected, 1.0, 0.05) << "achieved " << achieved / 1e12 << " TFLOPS";
  EXPECT_EQ(r.kernel->name, "MatMulV2");
  EXPECT_EQ(r.cores, 24u);
}

TEST(Runtime, LargeElementwiseAddReachesHbmBandwidth) {
  auto node = make_node({.seed = 7});
  Context& ctx = make_context(*node);
  Shape s{256, 1024, 1024};  // 256 Mi fp16 elements: 512 MiB per tensor
  auto r = run_alone(*node, ctx, "elementwise_add", {fp16(s), fp16(s)});
  const DeviceSpec& d = node->device(0).spec();
  double bytes = 3.0 * 2.0 * static_cast<double>(num_elements(s));  // read a, b; write out
  double achieved = bytes / (static_cast<double>(duration(r)) * 1e-9);
  double expected = d.hbm.bandwidth_bps * d.efficiency.hbm;
  EXPECT_NEAR(achieved / expected, 1.0, 0.05) << "achieved " << achieved / 1e9 << " GB/s";
}

TEST(Runtime, SlowerClockSlowsComputeBoundKernels) {
  auto node = make_node({.jitter = 0});
  Context& ctx = make_context(*node);
  std::vector<TensorDesc> in{fp16({4096, 4096}), fp16({4096, 4096})};
  auto fast = run_alone(*node, ctx, "aten::mm", in);
  node->device(0).set_clock_mhz(925);  // half of 1850
  auto slow = run_alone(*node, ctx, "aten::mm", in);
  Nanos overhead = node->device(0).spec().runtime.kernel_launch_ns;
  EXPECT_NEAR(static_cast<double>(duration(slow) - overhead) / (duration(fast) - overhead), 2.0, 0.01);
}

// Kernel `first` on one stream and `second` on another of device 0 of a `spec` node; their
// records in stream order.
std::vector<TaskRecord> on_two_streams(const std::string& spec, const std::pair<std::string, std::vector<TensorDesc>>& first,
                                       const std::pair<std::string, std::vector<TensorDesc>>& second,
                                       uint32_t block_dim = 0) {
  auto node = make_node({.spec = spec, .jitter = 0});
  Context& ctx = make_context(*node);
  TimelineRecorder rec;
  node->engine().add_observer(&rec);
  StreamId a = ctx.create_stream();
  StreamId b = ctx.create_stream();
  auto k1 = ctx.prepare(first.first, first.second, {}, block_dim);
  auto k2 = ctx.prepare(second.first, second.second, {}, block_dim);
  EXPECT_TRUE(k1.ok() && k2.ok());
  EXPECT_TRUE(ctx.enqueue(a, *k1).ok());
  EXPECT_TRUE(ctx.enqueue(b, *k2).ok());
  EXPECT_TRUE(ctx.synchronize_device().ok());
  node->engine().remove_observer(&rec);
  auto records = rec.records();
  std::sort(records.begin(), records.end(), [](auto& x, auto& y) { return x.stream < y.stream; });
  return records;
}

// Two 4096^3 matmuls on two streams of one device; returns (start, end) of each.
std::vector<TaskRecord> two_streams(uint32_t block_dim) {
  std::pair<std::string, std::vector<TensorDesc>> mm{"matmul", {fp16({4096, 4096}), fp16({4096, 4096})}};
  return on_two_streams("8x910B2", mm, mm, block_dim);
}

TEST(Runtime, TwoStreamsOverlapWhenCoresAllow) {
  auto r = two_streams(12);  // 12 + 12 of 24 AI cores
  ASSERT_EQ(r.size(), 2u);
  // The second starts once its host call returned, one launch after the first, and both run at
  // once at full speed.
  Nanos launch = make_node({})->device(0).spec().runtime.kernel_launch_ns;
  EXPECT_EQ(r[1].start, r[0].start + launch);
  EXPECT_EQ(r[1].end, r[0].end + launch);
  EXPECT_LT(r[1].start, r[0].end);
}

TEST(Runtime, TwoStreamsSerializeWhenCoresDoNotAllow) {
  auto r = two_streams(24);  // each needs the whole chip
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[1].start, r[0].end);
  // Half the cores each take twice as long: the total is the same either way (but for one
  // launch overhead more when serialized).
  auto overlapped = two_streams(12);
  EXPECT_NEAR(static_cast<double>(r[1].end), static_cast<double>(overlapped[1].end),
              0.02 * static_cast<double>(r[1].end));
}

// A vector kernel and a whole-chip matmul on two streams of one device of `spec`.
std::vector<TaskRecord> vector_beside_cube(const std::string& spec) {
  return on_two_streams(spec, {"add", {fp16({8192, 8192}), fp16({8192, 8192})}},
                        {"matmul", {fp16({4096, 4096}), fp16({4096, 4096})}});
}

TEST(Runtime, VectorKernelsRunOverThe910B2sAivsApartFromItsAiCores) {
  // The 910B2 has 24 AIC and 48 AIV cores: a vector kernel is launched over the 48 AIVs and leaves
  // the AI cores to a matmul on another stream.
  auto split = vector_beside_cube("8x910B2");
  ASSERT_EQ(split.size(), 2u);
  EXPECT_EQ(split[0].cores, 48u);
  EXPECT_EQ(split[1].cores, 24u);
  EXPECT_LT(split[1].start, split[0].end);  // they overlap
  // The first 910's 32 DaVinci cores hold both units: the two kernels take turns.
  auto shared = vector_beside_cube("8x910");
  ASSERT_EQ(shared.size(), 2u);
  EXPECT_EQ(shared[0].cores, 32u);
  EXPECT_EQ(shared[1].cores, 32u);
  EXPECT_GE(shared[1].start, shared[0].end);
}

TEST(Runtime, A910B2VectorKernelBusiesEachAivOnceAndTheAiCoresAtMostOnce) {
  auto node = make_node({.jitter = 0});
  Context& ctx = make_context(*node);
  auto r = run_alone(*node, ctx, "add", {fp16({8192, 8192}), fp16({8192, 8192})});
  const DeviceCounters& c = node->device(0).counters();
  EXPECT_EQ(c.vector_busy_core_ns, 48 * duration(r));  // over the vector pool
  EXPECT_EQ(c.aicore_busy_core_ns, 24 * duration(r));  // all AI cores' worth, not twice that
  EXPECT_EQ(c.cube_busy_core_ns, 0);
}

// The HBM counters split what is written from what is read: a kernel writes its outputs (an add
// of two n-element tensors reads 2n and writes n elements), a device-to-device copy writes its
// destination. The profile's HBM table has read and write rows from these.
TEST(Runtime, HbmCountsWhatKernelsAndCopiesWriteApartFromWhatTheyRead) {
  auto node = make_node({.jitter = 0});
  Context& ctx = make_context(*node);
  run_alone(*node, ctx, "add", {fp16({1 << 20}), fp16({1 << 20})});
  const DeviceCounters& c = node->device(0).counters();
  EXPECT_EQ(c.hbm_bytes_total, 3u << 21);
  EXPECT_EQ(c.hbm_write_bytes_total, 1u << 21);
  auto a = ctx.malloc(1 << 20);
  auto b = ctx.malloc(1 << 20);
  ASSERT_TRUE(a.ok() && b.ok());
  StreamId s = ctx.create_stream();
  ASSERT_TRUE(ctx.memcpy_d2d(s, *b, *a, 1 << 20).ok());
  ASSERT_TRUE(ctx.synchronize_stream(s).ok());
  EXPECT_EQ(c.hbm_bytes_total, (3u << 21) + (2u << 20));
  EXPECT_EQ(c.hbm_write_bytes_total, (1u << 21) + (1u << 20));
}

TEST(Runtime, EventOrdersWorkAcrossStreams) {
  auto node = make_node({.jitter = 0});
  Context& ctx = make_context(*node);
  TimelineRecorder rec;
  node->engine().add_observer(&rec);
  StreamId a = ctx.create_stream();
  StreamId b = ctx.create_stream();
  EventId e = ctx.create_event();
  auto k = ctx.prepare("matmul", {fp16({1024, 1024}), fp16({1024, 1024})}, {}, 8);
  ASSERT_TRUE(k.ok());
  ASSERT_TRUE(ctx.enqueue(a, *k).ok());
  ASSERT_TRUE(ctx.record_event(a, e).ok());
  ASSERT_TRUE(ctx.wait_event(b, e).ok());
  ASSERT_TRUE(ctx.enqueue(b, *k).ok());  // would overlap (8 + 8 cores) without the event
  ASSERT_TRUE(ctx.synchronize_event(e).ok());
  EXPECT_TRUE(ctx.synchronize_device().ok());
  ASSERT_EQ(rec.records().size(), 2u);
  EXPECT_EQ(rec.records()[1].start, rec.records()[0].end);
  node->engine().remove_observer(&rec);
}

// The timeline of a mixed program, as comparable tuples.
std::vector<std::tuple<uint64_t, int, Nanos, Nanos>> timeline_for_seed(uint64_t seed) {
  auto node = make_node({.seed = seed});
  TimelineRecorder rec;
  node->engine().add_observer(&rec);
  for (int dev = 0; dev < node->device_count(); ++dev) {
    Context& ctx = make_context(*node, dev, 2000 + dev);
    StreamId s1 = ctx.create_stream();
    StreamId s2 = ctx.create_stream();
    auto mm = ctx.prepare("matmul", {fp16({1024, 4096}), fp16({4096, 1024})}, {}, 16);
    auto add = ctx.prepare("aten::add", {fp16({1 << 20}), fp16({1 << 20})}, {}, 16);
    for (int i = 0; i < 20; ++i) {
      EXPECT_TRUE(ctx.enqueue(s1, *mm).ok());
      EXPECT_TRUE(ctx.enqueue(s2, *add).ok());
      EXPECT_TRUE(ctx.memcpy_h2d(s2, 0, nullptr, 1 << 20).ok());
    }
  }
  node->run_until_idle();
  std::vector<std::tuple<uint64_t, int, Nanos, Nanos>> out;
  for (const auto& r : rec.records()) out.emplace_back(r.id, r.device, r.start, r.end);
  node->engine().remove_observer(&rec);
  return out;
}

TEST(Runtime, SameSeedGivesAnIdenticalTimeline) {
  auto first = timeline_for_seed(42);
  auto second = timeline_for_seed(42);
  ASSERT_EQ(first.size(), 8u * 60u);
  EXPECT_EQ(first, second);
  EXPECT_NE(first, timeline_for_seed(43));  // the seed really matters
}

TEST(Runtime, FunctionalMatmulComputesRealResults) {
  auto node = make_node({.functional = true});
  Context& ctx = make_context(*node);
  StreamId s = ctx.create_stream();
  std::vector<float> a{1, 2, 3, 4, 5, 6};        // 2x3
  std::vector<float> b{7, 8, 9, 10, 11, 12};     // 3x2
  std::vector<float> out(4, -1.0f);
  auto da = ctx.malloc(a.size() * 4), db = ctx.malloc(b.size() * 4), dc = ctx.malloc(16);
  ASSERT_TRUE(da.ok() && db.ok() && dc.ok());
  ASSERT_TRUE(ctx.memcpy_h2d(s, *da, a.data(), 24).ok());
  ASSERT_TRUE(ctx.memcpy_h2d(s, *db, b.data(), 24).ok());
  ASSERT_TRUE(ctx.launch(s, "aten::mm", {{*da, fp32({2, 3})}, {*db, fp32({3, 2})}},
                         {{*dc, fp32({2, 2})}}).ok());
  ASSERT_TRUE(ctx.memcpy_d2h(s, out.data(), *dc, 16).ok());
  EXPECT_EQ(out, std::vector<float>(4, -1.0f));  // nothing happens before the stream runs
  ASSERT_TRUE(ctx.synchronize_stream(s).ok());
  EXPECT_EQ(out, (std::vector<float>{58, 64, 139, 154}));
}

TEST(Runtime, FunctionalErrorIsReportedBySynchronize) {
  auto node = make_node({.functional = true});
  Context& ctx = make_context(*node);
  StreamId s = ctx.create_stream();
  auto x = ctx.malloc(8), y = ctx.malloc(8);
  ASSERT_TRUE(x.ok() && y.ok());
  // fp16 data reaches a float32-only CPU kernel: launch is accepted, synchronize reports it.
  ASSERT_TRUE(ctx.launch(s, "relu", {{*x, fp16({4})}}, {{*y, fp16({4})}}).ok());
  Status st = ctx.synchronize_stream(s);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("Relu"), std::string::npos) << st.message();
  EXPECT_TRUE(ctx.synchronize_stream(s).ok());  // reported once
}

TEST(Runtime, LaunchChecksOutputDescriptors) {
  auto node = make_node({.functional = true});
  Context& ctx = make_context(*node);
  StreamId s = ctx.create_stream();
  auto a = ctx.malloc(64), c = ctx.malloc(64);
  Status st = ctx.launch(s, "matmul", {{*a, fp32({2, 2})}, {*a, fp32({2, 2})}}, {{*c, fp32({2, 3})}});
  EXPECT_EQ(st.message(), "MatMulV2: outputs 0 is [2,3] float32, expected [2,2] float32");
}

TEST(Runtime, OutOfRangeBufferIsRefusedAtLaunch) {
  auto node = make_node({.functional = true});
  // Ranges are checked against device segments; with `direct` a segment is exactly the
  // allocation (a caching allocator's block sits inside a larger segment, as on hardware).
  Context& ctx = make_context(*node, 0, 1000, AllocatorPolicy::kDirect);
  StreamId s = ctx.create_stream();
  auto small = ctx.malloc(16);
  ASSERT_TRUE(small.ok());
  std::vector<float> host(64);
  Status st = ctx.memcpy_h2d(s, *small, host.data(), 256);
  EXPECT_EQ(st.code(), Code::kInvalidArgument);
  EXPECT_NE(st.message().find("memcpy H2D destination: 256 bytes at 0x"), std::string::npos)
      << st.message();
}

TEST(Runtime, UnknownOpAndDynamicShapeMessages) {
  auto node = make_node();
  Context& ctx = make_context(*node);
  auto unknown = ctx.prepare("roi_align_v9", {fp16({4, 4})});
  EXPECT_EQ(unknown.status().message(), "NotFound: Operator roi_align_v9 does not have kernel for NPU");
  EXPECT_EQ(unknown.status().code(), Code::kNotFound);
  auto dynamic = ctx.prepare("matmul", {fp16({kDynamicDim, 1024}), fp16({1024, 1024})});
  EXPECT_EQ(dynamic.status().message(),
            "ShapeInferenceError: output shape is dynamic, but operator MatMulV2 does not support "
            "dynamic shape.");
  EXPECT_EQ(dynamic.status().code(), Code::kShapeInference);
}

TEST(Runtime, AiCpuFallbackIsVisiblySlower) {
  auto node = make_node({.jitter = 0});
  Context& ctx = make_context(*node);
  Shape s{1 << 20};
  auto aicpu = run_alone(*node, ctx, "aten::cumsum", {fp32(s)}, {{"axis", int64_t{0}}});
  auto aicore = run_alone(*node, ctx, "aten::add", {fp32(s), fp32(s)});
  EXPECT_EQ(aicpu.unit, Unit::kAiCpu);
  EXPECT_GT(duration(aicpu), 10 * duration(aicore));
}

TEST(Runtime, HostToDeviceCopyFollowsThePcieModel) {
  auto node = make_node({.jitter = 0});
  Context& ctx = make_context(*node);
  TimelineRecorder rec;
  node->engine().add_observer(&rec);
  StreamId s = ctx.create_stream();
  ASSERT_TRUE(ctx.memcpy_h2d(s, 0, nullptr, 1ull << 30).ok());
  ASSERT_TRUE(ctx.synchronize_stream(s).ok());
  const DeviceSpec& d = node->device(0).spec();
  double expected_s = (1ull << 30) / (d.pcie.bandwidth_bps * d.efficiency.pcie);
  EXPECT_NEAR(duration(rec.records()[0]) * 1e-9, expected_s, expected_s * 0.01);
  EXPECT_EQ(node->device(0).counters().pcie_h2d_bytes_total, 1ull << 30);
  node->engine().remove_observer(&rec);
}

TEST(Runtime, BlockDimBeyondTheCoresRunsInWaves) {
  auto node = make_node({.jitter = 0});
  Context& ctx = make_context(*node);
  std::vector<TensorDesc> in{fp16({4096, 4096}), fp16({4096, 4096})};
  auto full = run_alone(*node, ctx, "matmul", in, {}, 24);
  auto ragged = run_alone(*node, ctx, "matmul", in, {}, 25);  // 2 waves, the second 1/24 full
  EXPECT_GT(duration(ragged), duration(full) * 19 / 10);
}

TEST(Runtime, InvalidDeviceIdIsRefused) {
  auto node = make_node();
  auto ctx = node->create_context(8, 1, "x");
  EXPECT_EQ(ctx.status().message(), "invalid device id 8 (this node has devices 0-7)");
}

TEST(Runtime, CountersAccumulateBusyTime) {
  auto node = make_node({.jitter = 0});
  Context& ctx = make_context(*node);
  auto r = run_alone(*node, ctx, "matmul", {fp16({2048, 2048}), fp16({2048, 2048})});
  const auto& c = node->device(0).counters();
  EXPECT_EQ(c.cube_busy_core_ns, duration(r) * 24);
  EXPECT_EQ(c.aicore_busy_core_ns, c.cube_busy_core_ns);
  EXPECT_EQ(c.kernels_total, 1u);
  EXPECT_DOUBLE_EQ(c.flops_total, 2.0 * 2048 * 2048 * 2048);
}

// What profilers are told of a prepared kernel: outputs, the shape mode (a dim unknown at launch
// makes an op dynamic, as NonZero's data-dependent output is), HF32 eligibility (cube kernels on
// FLOAT inputs).
TEST(Runtime, OpDescriptorsCarryOutputsShapeModeAndHf32) {
  auto node = make_node({});
  Context& ctx = make_context(*node, 0);
  auto mm32 = ctx.prepare("matmul", {fp32({64, 32}), fp32({32, 16})});
  ASSERT_TRUE(mm32.ok()) << mm32.status().message();
  OpDescriptor d = op_descriptor(mm32->descriptor);
  EXPECT_EQ(d.bus_text(), "matmul|64,32;32,16|FLOAT;FLOAT|64,16|FLOAT|static|YES");
  auto mm16 = ctx.prepare("matmul", {fp16({64, 32}), fp16({32, 16})});
  ASSERT_TRUE(mm16.ok());
  EXPECT_EQ(op_descriptor(mm16->descriptor).hf32, "NO");
  auto add32 = ctx.prepare("aten::add", {fp32({8}), fp32({8})});
  ASSERT_TRUE(add32.ok());
  EXPECT_EQ(op_descriptor(add32->descriptor).hf32, "NO") << "a vector kernel is never HF32-eligible";
  auto nonzero = ctx.prepare("aten::nonzero", {fp32({128})});
  ASSERT_TRUE(nonzero.ok()) << nonzero.status().message();
  OpDescriptor z = op_descriptor(nonzero->descriptor);
  EXPECT_EQ(z.state, "dynamic") << z.bus_text();
}

}  // namespace
}  // namespace npukit::emu

namespace npukit::emu {
namespace {

// A fused kernel is one launch whose epilogue runs on the vector unit beside the cube: a
// compute-bound matmul with its GeLU takes the matmul's time, not the sum of two kernels; a
// memory-bound chain takes one pass's time, not two.
TEST(Runtime, AFusedKernelIsOneLaunchPricedAsItsChain) {
  auto timed = [](bool fused, const std::string& op, std::vector<TensorDesc> in, const std::string& next) {
    auto node = make_node();
    Context& ctx = make_context(*node);
    TimelineRecorder rec;
    node->engine().add_observer(&rec);
    StreamId s = ctx.create_stream();
    if (fused) {
      auto k = ctx.prepare_fused(op, in, {}, {{next, {}, {}}});
      EXPECT_TRUE(k.ok()) << k.status().message();
      EXPECT_TRUE(ctx.enqueue(s, *k).ok());
    } else {
      auto a = ctx.prepare(op, in);
      EXPECT_TRUE(a.ok()) << a.status().message();
      auto b = ctx.prepare(next, {a->outputs[0]});
      EXPECT_TRUE(b.ok()) << b.status().message();
      EXPECT_TRUE(ctx.enqueue(s, *a).ok());
      EXPECT_TRUE(ctx.enqueue(s, *b).ok());
    }
    EXPECT_TRUE(ctx.synchronize_stream(s).ok());
    node->engine().remove_observer(&rec);
    Nanos busy = 0;
    for (const auto& r : rec.records()) busy += duration(r);
    return std::make_pair(rec.records().size(), busy);
  };
  std::vector<TensorDesc> mm{fp16({8192, 4096}), fp16({4096, 4096})};
  auto [fused_n, fused_ns] = timed(true, "aten::mm", mm, "aten::gelu");
  auto [apart_n, apart_ns] = timed(false, "aten::mm", mm, "aten::gelu");
  EXPECT_EQ(fused_n, 1u);
  EXPECT_EQ(apart_n, 2u);
  EXPECT_LT(fused_ns, apart_ns);
  // The epilogue hides under the cube's time: within 2% of the matmul alone.
  auto node = make_node();
  Context& ctx = make_context(*node);
  auto alone = ctx.prepare("aten::mm", mm);
  ASSERT_TRUE(alone.ok());
  double mm_alone = static_cast<double>(kernel_duration(alone->timing, 1.0));
  EXPECT_NEAR(static_cast<double>(fused_ns) / mm_alone, 1.0, 0.02) << fused_ns << " vs " << mm_alone;
  // A memory-bound pair (add then relu over 64 Mi elements): one read of each input and one
  // write instead of two kernels' reads and writes.
  std::vector<TensorDesc> add{fp16({8192, 8192}), fp16({8192, 8192})};
  auto [chain_n, chain_ns] = timed(true, "aten::add", add, "aten::relu");
  auto [pair_n, pair_ns] = timed(false, "aten::add", add, "aten::relu");
  EXPECT_EQ(chain_n, 1u);
  EXPECT_NEAR(static_cast<double>(chain_ns) / static_cast<double>(pair_ns), 3.0 / 5.0, 0.02)
      << "3 tensor passes fused (2 reads, 1 write) against 5 apart (add 2 reads + write, relu read + write)";
}

}  // namespace
}  // namespace npukit::emu
