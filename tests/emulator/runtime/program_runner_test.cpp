#include "emulator/runtime/program_runner.hpp"

#include <gtest/gtest.h>

#include "emulator/engine/timeline.hpp"
#include "tests/emulator/test_util.hpp"

namespace npukit::emu {
namespace {

using nlohmann::json;
using testing::make_node;

json mm_op(int stream, int64_t m) {
  return {{"op", "kernel"}, {"stream", stream}, {"name", "aten::mm"},
          {"inputs", {{{"shape", {m, 4096}}, {"dtype", "float16"}}, {{"shape", {4096, 4096}}, {"dtype", "float16"}}}}};
}

// A data-parallel training-like program: per step an input copy, compute, a gradient allreduce.
json train_program(int ranks, int64_t repeat, int64_t host_delay_ns = 0) {
  json rank_list = json::array();
  for (int r = 0; r < ranks; ++r) {
    json step = json::array();
    if (host_delay_ns > 0) step.push_back({{"op", "host_delay"}, {"ns", host_delay_ns}});
    step.push_back({{"op", "memcpy"}, {"stream", 1}, {"kind", "H2D"}, {"bytes", 64 << 20}});
    step.push_back({{"op", "record"}, {"stream", 1}, {"event", 0}});
    step.push_back({{"op", "wait"}, {"stream", 0}, {"event", 0}});
    for (int i = 0; i < 10; ++i) step.push_back(mm_op(0, 8192));
    step.push_back({{"op", "collective"}, {"stream", 0}, {"kind", "AllReduce"}, {"count", 64 << 20}, {"dtype", "float16"}});
    rank_list.push_back({{"device", r}, {"streams", 2}, {"events", 1},
                         {"setup", {{{"op", "alloc"}, {"buf", "weights"}, {"bytes", 1ll << 30}}}},
                         {"step", step}});
  }
  return {{"name", "test-train"}, {"repeat", repeat}, {"process", {{"pid", 4242}, {"name", "python3"}}},
          {"comm", {{"name", "world"}, {"algo", "auto"}}}, {"ranks", rank_list}};
}

telemetry::Program parse(const json& j) {
  auto p = telemetry::parse_program(j);
  EXPECT_TRUE(p.ok()) << p.status().message();
  return *p;
}

struct Outcome {
  std::vector<StepReport> steps;
  Status status;
  bool done = false;
};

Outcome run(Node& node, const json& program) {
  auto runner = ProgramRunner::create(node, parse(program));
  EXPECT_TRUE(runner.ok()) << runner.status().message();
  Outcome out;
  (*runner)->start([&](const StepReport& s) { out.steps.push_back(s); },
                   [&](const Status& s) { out.status = s; out.done = true; });
  node.run_until_idle();
  return out;
}

TEST(ProgramRunner, RunsEveryRankForEveryStepAndReleasesMemory) {
  auto node = make_node();
  auto out = run(*node, train_program(4, 3));
  ASSERT_TRUE(out.done);
  EXPECT_TRUE(out.status.ok()) << out.status.message();
  EXPECT_EQ(out.steps.size(), 12u);
  for (const auto& s : out.steps) EXPECT_GT(s.end, s.start);
  for (int d = 0; d < 4; ++d) {
    EXPECT_EQ(node->device(d).memory().used_by(4242), 0u);
    EXPECT_EQ(node->device(d).counters().collectives_total, 3u);
  }
  EXPECT_EQ(node->device(4).counters().kernels_total, 0u);
}

TEST(ProgramRunner, RanksRunConcurrentlyAndStepsLineUp) {
  auto node = make_node({.jitter = 0});
  auto out = run(*node, train_program(8, 2));
  ASSERT_TRUE(out.status.ok()) << out.status.message();
  // The allreduce ends each step on every rank at the same moment.
  std::map<int64_t, std::set<Nanos>> ends;
  for (const auto& s : out.steps) ends[s.step].insert(s.end);
  EXPECT_EQ(ends[0].size(), 1u);
  EXPECT_EQ(ends[1].size(), 1u);
}

TEST(ProgramRunner, HostDelayShowsUpAsStepTimeAndIdleCores) {
  auto node = make_node({.jitter = 0});
  auto fast = run(*node, train_program(2, 2));
  auto node2 = make_node({.jitter = 0});
  auto slow = run(*node2, train_program(2, 2, 50'000'000));  // a 50 ms data loader
  Nanos fast_step = fast.steps.back().end - fast.steps.back().start;
  Nanos slow_step = slow.steps.back().end - slow.steps.back().start;
  EXPECT_NEAR(static_cast<double>(slow_step - fast_step), 50e6, 1e6);
}

TEST(ProgramRunner, UnknownOpFailsBeforeAnythingRuns) {
  auto node = make_node();
  json p = train_program(2, 1);
  p["ranks"][1]["step"].push_back({{"op", "kernel"}, {"stream", 0}, {"name", "roi_align_v9"},
                                   {"inputs", {{{"shape", {4}}, {"dtype", "float16"}}}}});
  auto runner = ProgramRunner::create(*node, parse(p));
  ASSERT_FALSE(runner.ok());
  EXPECT_EQ(runner.status().message(), "NotFound: Operator roi_align_v9 does not have kernel for NPU");
  EXPECT_EQ(node->engine().tasks_completed(), 0u);
  EXPECT_TRUE(node->contexts().empty());
}

// A dtype that is not a string threw nlohmann's type_error out of create() (found by
// tests/fuzz/program); attributes that are not integer arrays are ignored like other unknown values.
TEST(ProgramRunner, MistypedKernelInputsAndAttributesAreRefusedOrIgnored) {
  auto node = make_node();
  json p = train_program(1, 1);
  json op = mm_op(0, 64);
  op["inputs"][0]["dtype"] = 111;
  p["ranks"][0]["step"].push_back(op);
  auto runner = ProgramRunner::create(*node, parse(p));
  ASSERT_FALSE(runner.ok());
  EXPECT_NE(runner.status().message().find("inputs[0].dtype: expected a string"), std::string::npos) << runner.status().message();
  op = mm_op(0, 64);
  op["inputs"][0]["shape"] = {2522211111110111116ll, 4096};  // kernels multiplied the dims: a signed overflow
  p = train_program(1, 1);
  p["ranks"][0]["step"].push_back(op);
  runner = ProgramRunner::create(*node, parse(p));
  ASSERT_FALSE(runner.ok());
  EXPECT_NE(runner.status().message().find("inputs[0].shape: dims must be in [0, 2^48], or -1 for dynamic"), std::string::npos)
      << runner.status().message();
  p = train_program(1, 1);
  op = mm_op(0, 64);
  op["attrs"] = {{"strides", {"x", 1}}, {"pads", {1.5, 2}}};
  p["ranks"][0]["step"].push_back(op);
  EXPECT_TRUE(ProgramRunner::create(*node, parse(p)).ok());
}

// A fused kernel's epilogue (attrs "epilogue", emulator/kernels/fusion.hpp) arrives over the socket
// unchecked like everything else: a mistyped one is one line naming the member, a good one is one
// launch per step.
TEST(ProgramRunner, AFusedEpilogueIsCheckedAndRunsAsOneKernel) {
  auto node = make_node();
  auto with_epilogue = [](json epilogue) {
    json p = train_program(1, 1);
    json op = mm_op(0, 64);
    op["attrs"] = {{"epilogue", epilogue}};
    p["ranks"][0]["step"].push_back(op);
    return p;
  };
  struct Bad {
    json epilogue;
    std::string says;
  };
  for (const Bad& b : {Bad{"relu", "attrs.epilogue: expected an array of 1 to 8 fused ops"},
                       Bad{json::array(), "attrs.epilogue: expected an array of 1 to 8 fused ops"},
                       Bad{{{{"op", 7}}}, "attrs.epilogue[0]: expected {\"op\": \"...\", \"inputs\": [...]}"},
                       Bad{{{{"op", "aten::add"}, {"inputs", "x"}}}, "attrs.epilogue[0].inputs: expected an array"},
                       Bad{{{{"op", "aten::add"}, {"inputs", {{{"shape", {64, 4096}}, {"dtype", 3}}}}}},
                           "attrs.epilogue[0].inputs[0].dtype: expected a string"},
                       Bad{{{{"op", "aten::relu"}, {"attrs", 1}}}, "attrs.epilogue[0].attrs: expected an object"}}) {
    auto runner = ProgramRunner::create(*node, parse(with_epilogue(b.epilogue)));
    ASSERT_FALSE(runner.ok()) << b.epilogue.dump();
    EXPECT_NE(runner.status().message().find(b.says), std::string::npos) << runner.status().message();
  }
  auto shape = ProgramRunner::create(*node, parse(with_epilogue({{{"op", "aten::add"}, {"inputs", {{{"shape", {3, 3}}}}}}})));
  ASSERT_FALSE(shape.ok());
  EXPECT_NE(shape.status().message().find("ShapeInferenceError: Add"), std::string::npos) << shape.status().message();
  TimelineRecorder rec;
  node->engine().add_observer(&rec);
  Outcome out = run(*node, with_epilogue({{{"op", "aten::gelu"}}}));
  node->engine().remove_observer(&rec);
  ASSERT_TRUE(out.done && out.status.ok()) << out.status.message();
  int fused = 0;
  for (const auto& r : rec.records()) fused += r.kernel != nullptr && r.kernel->name == "MatMulV2_Gelu";
  EXPECT_EQ(fused, 1);
}

TEST(ProgramRunner, OutOfMemoryFailsTheJobWithTheRuntimeMessage) {
  auto node = make_node();
  json p = train_program(2, 1);
  p["ranks"][1]["setup"].push_back({{"op", "alloc"}, {"buf", "huge"}, {"bytes", 70ll << 30}});
  auto out = run(*node, p);
  ASSERT_TRUE(out.done);
  EXPECT_EQ(out.status.code(), Code::kOutOfMemory);
  EXPECT_EQ(out.status.message().rfind("acl_rt_malloc failed, size=75161927680; device 1: ", 0), 0u)
      << out.status.message();
  EXPECT_EQ(node->device(0).memory().used_by(4242), 0u);  // every rank released
}

TEST(ProgramRunner, HungDeviceFailsTheJobWithTheTimeout) {
  auto node = make_node();
  ASSERT_TRUE(node->inject_fault(1, FaultKind::kAicoreHang).ok());
  auto out = run(*node, train_program(2, 2));
  ASSERT_TRUE(out.done);
  EXPECT_NE(out.status.message().find("AI Core task timeout"), std::string::npos) << out.status.message();
  EXPECT_NE(out.status.message().find("on device 1"), std::string::npos);
}

// A failed job leaves streams stuck: rank 0 waits in an allreduce rank 1 never reaches. Its
// streams, calls and communicator must still be reused by the next job (each failed job kept
// them before: the daemon grew ~30 kB per failed job under bench/soak.sh's link faults).
TEST(ProgramRunner, AFailedJobsStuckStreamsAndCallsAreReusedByTheNext) {
  auto node = make_node();
  ASSERT_TRUE(node->inject_fault(1, FaultKind::kAicoreHang).ok());
  ASSERT_FALSE(run(*node, train_program(2, 2)).status.ok());
  std::size_t streams = node->engine().stream_count(), comms = node->collectives().comm_count();
  for (int i = 0; i < 3; ++i) {
    auto out = run(*node, train_program(2, 2));
    ASSERT_TRUE(out.done);
    EXPECT_NE(out.status.message().find("AI Core task timeout"), std::string::npos) << out.status.message();
  }
  EXPECT_EQ(node->engine().stream_count(), streams);
  EXPECT_EQ(node->collectives().comm_count(), comms);
  ASSERT_TRUE(node->reset_device(1).ok());  // a hang lasts until a reset
  auto healthy = run(*node, train_program(2, 2));  // nothing left behind disturbs the next job
  EXPECT_TRUE(healthy.status.ok()) << healthy.status.message();
  EXPECT_EQ(healthy.steps.size(), 4u);
  EXPECT_EQ(node->engine().stream_count(), streams);
}

// Online compile: each op's first launch for a static shape is compiled on the host (the spec's
// runtime.op_compile_ns before the launch); a kernel whose dim varies by step compiles again for
// each value it has not had, and never with prebuilt kernels or in graph mode.
TEST(ProgramRunner, OnlineCompilePaysOncePerOpAndShape) {
  json varying = mm_op(0, 1024);
  varying["vary"] = {{"input", 0}, {"dim", 0}, {"values", {2048, 1024, 512}}};
  json rank = {{"device", 0}, {"streams", 1}, {"step", {mm_op(0, 4096), varying}}};
  json program = {{"name", "jit"}, {"repeat", 4}, {"jit_compile", true}, {"ranks", {rank}}};
  auto compiles = [](const json& p, std::vector<Nanos>* steps) {
    auto node = make_node({.jitter = 0});
    TimelineRecorder rec;
    node->engine().add_observer(&rec);
    auto out = run(*node, p);
    EXPECT_TRUE(out.status.ok()) << out.status.message();
    std::vector<Nanos> each;
    for (const TaskRecord& r : rec.records()) {
      if (r.compile_ns > 0) each.push_back(r.compile_ns);
    }
    for (const StepReport& s : out.steps) steps->push_back(s.end - s.start);
    node->engine().remove_observer(&rec);
    return std::make_pair(each, node->device(0).spec().runtime.op_compile_ns);
  };
  std::vector<Nanos> steps;
  auto [each, cost] = compiles(program, &steps);
  ASSERT_GT(cost, 0);
  // step 0: both ops; steps 1 and 2: the varying one's new rows; step 3: its first shape again
  EXPECT_EQ(each, std::vector<Nanos>(4, cost));
  ASSERT_EQ(steps.size(), 4u);
  EXPECT_GT(steps[1], steps[3] + cost / 2);
  EXPECT_LT(steps[3], cost / 2);  // nothing compiled
  program["jit_compile"] = false;
  std::vector<Nanos> prebuilt_steps;
  EXPECT_TRUE(compiles(program, &prebuilt_steps).first.empty());
  program["jit_compile"] = true;
  program["launch"] = "graph";
  EXPECT_TRUE(compiles(program, &prebuilt_steps).first.empty());
}

// A non-caching free synchronizes the device (aclrtFree, like cudaFree): the memory may still be
// in use by queued work. The kernel enqueued after the free starts only once the one before it
// ended and the free was paid; a caching free returns the block to the cache and the two kernels
// run back to back.
TEST(ProgramRunner, ADirectFreeWaitsForTheDeviceACachingFreeDoesNot) {
  json step = {{{"op", "alloc"}, {"buf", "t"}, {"bytes", 64 << 20}}, mm_op(0, 4096),
               {{"op", "free"}, {"buf", "t"}}, mm_op(0, 4096)};
  json rank = {{"device", 0}, {"streams", 1}, {"step", step}};
  auto gap_between_kernels = [&](const char* allocator) {
    json program = {{"name", "frees"}, {"repeat", 1}, {"allocator", allocator}, {"ranks", {rank}}};
    auto node = make_node({.jitter = 0});
    TimelineRecorder rec;
    node->engine().add_observer(&rec);
    auto out = run(*node, program);
    EXPECT_TRUE(out.status.ok()) << out.status.message();
    node->engine().remove_observer(&rec);
    std::vector<TaskRecord> kernels;
    for (const TaskRecord& r : rec.records()) {
      if (r.kind == TaskKind::kKernel) kernels.push_back(r);
    }
    EXPECT_EQ(kernels.size(), 2u);
    return kernels.size() == 2 ? kernels[1].start - kernels[0].end : Nanos{-1};
  };
  auto node = make_node();
  Nanos free_ns = node->device(0).spec().runtime.free_ns;
  EXPECT_EQ(gap_between_kernels("caching"), 0) << "queued back to back";
  EXPECT_GE(gap_between_kernels("direct"), free_ns) << "the free waited for the first kernel";
}

TEST(ProgramRunner, AfterATimeoutTheRestOfTheStreamIsSkippedNotTimedOutOneByOne) {
  auto node = make_node();
  ASSERT_TRUE(node->inject_fault(0, FaultKind::kAicoreHang).ok());
  Nanos start = node->now();
  auto out = run(*node, train_program(1, 1));  // 10 matmuls: one 2 s timeout, not ten
  ASSERT_TRUE(out.done);
  EXPECT_NE(out.status.message().find("AI Core task timeout"), std::string::npos) << out.status.message();
  EXPECT_LT(node->now() - start, 3'000'000'000);
}

// A memtest over `bytes` of device 0 (with `patterns`), as npu-smi diag -r 2 submits it.
json memtest_program(uint64_t bytes, int patterns = 4) {
  json rank = {{"device", 0}, {"streams", 1},
               {"setup", {{{"op", "alloc"}, {"buf", "hbm"}, {"bytes", bytes}}}},
               {"step", {{{"op", "memtest"}, {"stream", 0}, {"buf", "hbm"}, {"patterns", patterns}}}}};
  return {{"name", "memtest"}, {"allocator", "direct"}, {"ranks", {rank}}};
}

std::vector<Finding> memtest(Node& node, uint64_t bytes, int patterns = 4) {
  auto runner = ProgramRunner::create(node, parse(memtest_program(bytes, patterns)));
  EXPECT_TRUE(runner.ok()) << runner.status().message();
  bool done = false;
  (*runner)->start(nullptr, [&](const Status& s) { EXPECT_TRUE(s.ok()) << s.message(); done = true; });
  node.run_until_idle();
  EXPECT_TRUE(done);
  return (*runner)->findings();
}

TEST(ProgramRunner, MemtestFindsTheInjectedBadPageUntilAResetIsolatesIt) {
  auto node = make_node();
  uint64_t all = node->device(0).memory().app_capacity_bytes() / kHbmPageBytes * kHbmPageBytes;
  EXPECT_TRUE(memtest(*node, all).empty());
  ASSERT_TRUE(node->inject_fault(0, FaultKind::kHbmDoubleBit).ok());
  const auto& bad = node->device(0).health().bad_pages();
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0].offset % kHbmPageBytes, 0u);
  EXPECT_LT(bad[0].offset, all);
  auto found = memtest(*node, all);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].offset, bad[0].offset);
  EXPECT_EQ(found[0].wrote, 0xFFFFFFFFFFFFFFFFull);  // stuck at 0: the all-ones pattern is the first to see it
  EXPECT_EQ(found[0].wrote & ~found[0].read, 1ull << bad[0].stuck_bit);
  EXPECT_EQ(found[0].text.rfind("HBM page at offset 0x", 0), 0u) << found[0].text;
  EXPECT_TRUE(memtest(*node, all, 1).empty());  // zeros alone cannot find a stuck-at-0 bit
  // A buffer below the page does not cover it.
  if (bad[0].offset >= kHbmPageBytes) {
    EXPECT_TRUE(memtest(*node, bad[0].offset).empty());
  }
  ASSERT_TRUE(node->clear_faults(0).ok());
  EXPECT_EQ(memtest(*node, all).size(), 1u);  // clearing lifts the alarm, not the page
  ASSERT_TRUE(node->reset_device(0).ok());
  EXPECT_TRUE(memtest(*node, all).empty());
  EXPECT_EQ(node->device(0).health().retired_pages().size(), 1u);
}

TEST(ProgramRunner, BadPagesAreTheSameForTheSameSeed) {
  auto a = make_node(), b = make_node();
  ASSERT_TRUE(a->inject_fault(2, FaultKind::kHbmDoubleBit).ok());
  ASSERT_TRUE(b->inject_fault(2, FaultKind::kHbmDoubleBit).ok());
  EXPECT_EQ(a->device(2).health().bad_pages()[0].offset, b->device(2).health().bad_pages()[0].offset);
}

TEST(ProgramRunner, MemtestOfAnUnknownBufferFailsTheJob) {
  json p = memtest_program(1 << 20);
  p["ranks"][0]["setup"] = json::array();
  auto node = make_node();
  auto out = run(*node, p);
  ASSERT_TRUE(out.done);
  EXPECT_EQ(out.status.message(), "rank 0: memtest of unknown buffer 'hbm'");
}

TEST(ProgramRunner, CancelStopsAndReleases) {
  auto node = make_node();
  auto runner = ProgramRunner::create(*node, parse(train_program(2, 1000)));
  ASSERT_TRUE(runner.ok());
  Status final;
  (*runner)->start(nullptr, [&](const Status& s) { final = s; });
  node->scheduler().run_until(node->now() + 100'000'000);
  EXPECT_GT(node->device(0).memory().used_by(4242), 0u);
  (*runner)->cancel();
  EXPECT_EQ(final.message(), "cancelled");
  EXPECT_EQ(node->device(0).memory().used_by(4242), 0u);
  node->run_until_idle();  // queued device work drains; nothing more is issued
  EXPECT_LT((*runner)->steps_done(), 1000);
}

TEST(ProgramRunner, TwoJobsShareTheNode) {
  auto node = make_node({.jitter = 0});
  json a = train_program(2, 3);
  json b = train_program(2, 3);
  b["ranks"][0]["device"] = 4;
  b["ranks"][1]["device"] = 5;
  b["process"]["pid"] = 777;
  auto ra = ProgramRunner::create(*node, parse(a));
  auto rb = ProgramRunner::create(*node, parse(b));
  ASSERT_TRUE(ra.ok() && rb.ok());
  int done = 0;
  (*ra)->start(nullptr, [&](const Status& s) { done += s.ok(); });
  (*rb)->start(nullptr, [&](const Status& s) { done += s.ok(); });
  node->run_until_idle();
  EXPECT_EQ(done, 2);
  EXPECT_GT(node->device(5).counters().kernels_total, 0u);
}

}  // namespace
}  // namespace npukit::emu
