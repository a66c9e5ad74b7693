// Workload files and their compilation (library level).
#include "workloads/compiler.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "telemetry/incidents.hpp"
#include "telemetry/json_reader.hpp"
#include "workloads/fusion.hpp"

namespace npukit::work {
namespace {

std::string data(const std::string& f) { return std::string(NPUKIT_TEST_DATA_DIR) + "/workloads/" + f; }

std::string load_error(const std::string& f) {
  auto w = load_workload_file(data(f));
  return w.ok() ? "" : w.status().message();
}

TEST(Workload, EveryBuiltinLoadsAndCompiles) {
  auto names = builtin_names();
  EXPECT_GE(names.size(), 14u);
  for (const auto& n : names) {
    if (n == kInProcessBuiltins[0]) continue;  // a program npu-run builds in code (mlp-train)
    auto w = load_workload(n);
    ASSERT_TRUE(w.ok()) << w.status().message();
    auto points = compile_workload(*w, {});
    ASSERT_TRUE(points.ok()) << n << ": " << points.status().message();
    EXPECT_FALSE(points->empty());
    for (const auto& p : *points) {
      auto again = telemetry::parse_program(telemetry::program_to_json(p.program));
      EXPECT_TRUE(again.ok()) << n << ": " << again.status().message();
    }
  }
}

TEST(Workload, BrokenFilesGiveOneClearLine) {
  EXPECT_EQ(load_error("truncated.json").rfind("workload error: " + data("truncated.json") + ":5:1: ", 0), 0u)
      << load_error("truncated.json");
  EXPECT_EQ(load_error("wrong_type.json"),
            "workload error: " + data("wrong_type.json") + ": workload.steps: expected an integer, got string");
  EXPECT_EQ(load_error("bad_shape.json"), "workload error: " + data("bad_shape.json") +
                                              ": layers[0].inputs[1]: expected an array of at most 8 dims (integers in [1, 2^31], -1 for dynamic)");
  EXPECT_EQ(load_error("unknown_field.json"),
            "workload error: " + data("unknown_field.json") + ": workload.stepz: unknown field");
  EXPECT_EQ(load_error("no_layers.json"),
            "workload error: " + data("no_layers.json") + ": layers: a train workload needs at least one layer");
  EXPECT_EQ(load_error("bad_devices.json"), "workload error: " + data("bad_devices.json") +
                                                ": parallel.devices: expected 2 device ids (dp x tp x pp), got 1");
  EXPECT_EQ(load_error("missing.json"),
            "workload error: " + data("missing.json") + ": cannot open (No such file or directory)");
  auto unknown = load_workload("no-such-builtin");
  EXPECT_EQ(unknown.status().message().rfind("workload error: no built-in workload 'no-such-builtin' (built-ins: ", 0), 0u);
  // Every built-in npu-run --list shows, mlp-train among them (the list left it out).
  EXPECT_NE(unknown.status().message().find(", mlp-train)"), std::string::npos) << unknown.status().message();
}

// A burn's matmul operands and result live in HBM (it allocated none, so a 300 W burn showed no
// process memory anywhere): 3 matrices of 8192^2 fp16, 128 MiB each, per rank.
TEST(Workload, ABurnHoldsItsMatricesInHbm) {
  auto w = load_workload("burn");
  ASSERT_TRUE(w.ok()) << w.status().message();
  auto points = compile_workload(*w, {});
  ASSERT_TRUE(points.ok()) << points.status().message();
  for (const auto& rank : points->front().program.ranks) {
    uint64_t held = 0;
    for (const auto& op : rank.setup) held += op.kind == telemetry::ProgramOp::Kind::kAlloc ? op.bytes : 0;
    EXPECT_EQ(held, 3ull * 8192 * 8192 * 2);
  }
}

TEST(Workload, HostSideKnobsReachTheProgramAndBadValuesAreNamed) {
  nlohmann::json doc = {{"name", "t"}, {"kind", "train"}, {"params", 1024}, {"host_sync_ms", 0.5},
                        {"launch", "graph"}, {"op_dispatch_us", 12},
                        {"layers", {{{"op", "aten::relu"}, {"inputs", {{64, 64}}}}}}};
  auto w = parse_workload(doc, "t.json");
  ASSERT_TRUE(w.ok()) << w.status().message();
  auto points = compile_workload(*w, {});
  ASSERT_TRUE(points.ok()) << points.status().message();
  const auto& p = points->front().program;
  EXPECT_EQ(p.launch, "graph");
  EXPECT_EQ(p.dispatch_ns, 12000);
  // After the forward: a sync, then the host works 0.5 ms before launching the backward.
  const auto& step = p.ranks[0].step;
  auto sync = std::find_if(step.begin(), step.end(), [](const auto& op) { return op.kind == telemetry::ProgramOp::Kind::kSync; });
  ASSERT_NE(sync, step.end());
  ASSERT_NE(sync + 1, step.end());
  EXPECT_EQ((sync + 1)->kind, telemetry::ProgramOp::Kind::kHostDelay);
  EXPECT_EQ((sync + 1)->ns, 500000);
  EXPECT_EQ(std::count_if(step.begin(), step.end(), [](const auto& op) { return op.kind == telemetry::ProgramOp::Kind::kInput; }), 0)
      << "no input op without a pipeline rate";
  // A host input pipeline: the program carries its rate, each step starts by taking its batch.
  doc["host_input_samples_per_s"] = 5000, doc["samples_per_step"] = 64;
  auto fed = compile_workload(*parse_workload(doc, "t.json"), {});
  ASSERT_TRUE(fed.ok()) << fed.status().message();
  EXPECT_EQ(fed->front().program.host_input_samples_per_s, 5000);
  const auto& fed_step = fed->front().program.ranks[0].step;
  auto input = std::find_if(fed_step.begin(), fed_step.end(), [](const auto& op) { return op.kind == telemetry::ProgramOp::Kind::kInput; });
  ASSERT_NE(input, fed_step.end());
  EXPECT_EQ(input->count, 64u);
  auto round = telemetry::parse_program(telemetry::program_to_json(fed->front().program));
  ASSERT_TRUE(round.ok()) << round.status().message();
  EXPECT_EQ(round->host_input_samples_per_s, 5000);
  EXPECT_EQ(round->ranks[0].step[static_cast<std::size_t>(input - fed_step.begin())].count, 64u);
  CompileOptions off;
  off.host_input_samples_per_s = 0;  // npu-run --host-input-rate 0
  EXPECT_EQ(compile_workload(*parse_workload(doc, "t.json"), off)->front().program.host_input_samples_per_s, 0);
  doc["host_input_samples_per_s"] = -1;
  EXPECT_EQ(parse_workload(doc, "t.json").status().message(),
            "workload error: t.json: workload.host_input_samples_per_s: must be >= 0");
  doc.erase("host_input_samples_per_s");
  doc["launch"] = "lazy";
  EXPECT_EQ(parse_workload(doc, "t.json").status().message(),
            "workload error: t.json: workload.launch: expected eager or graph, got 'lazy'");
  doc["launch"] = "eager", doc["op_dispatch_us"] = -1;
  EXPECT_EQ(parse_workload(doc, "t.json").status().message(), "workload error: t.json: workload.op_dispatch_us: must be >= 0");
}

// A fault entry names a device or one link; the link reaches the program as device + peer, and
// the program's JSON round-trips it.
TEST(Workload, FaultEntriesNameADeviceOrALink) {
  nlohmann::json doc = {{"name", "t"}, {"kind", "train"}, {"params", 1024},
                        {"layers", {{{"op", "aten::relu"}, {"inputs", {{64, 64}}}}}},
                        {"faults", {{{"at_ms", 5}, {"link", "2-3"}, {"fault", "link-flapping"}},
                                    {{"at_ms", 9}, {"device", 1}, {"fault", "ecc-storm"}}}}};
  auto w = parse_workload(doc, "t.json");
  ASSERT_TRUE(w.ok()) << w.status().message();
  ASSERT_EQ(w->faults.size(), 2u);
  EXPECT_EQ(w->faults[0].device, 2);
  EXPECT_EQ(w->faults[0].peer, 3);
  EXPECT_EQ(w->faults[1].peer, -2);  // a device fault
  auto points = compile_workload(*w, {});
  ASSERT_TRUE(points.ok()) << points.status().message();
  auto back = telemetry::parse_program(telemetry::program_to_json(points->front().program));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->faults[0].peer, 3);
  EXPECT_EQ(back->faults[1].peer, -2);
  doc["faults"][0]["link"] = "2_3";
  EXPECT_EQ(parse_workload(doc, "t.json").status().message(),
            "workload error: t.json: faults[0].link: invalid link '2_3': expected A-B (two device ids, e.g. 2-3), A-host, "
            "A-roce (A's RoCE port) or A-switch (A's port into the node's switch)");
  // A RoCE port is a link too, never mistaken for "no link" (-2, a device fault), and round-trips.
  doc["faults"][0]["link"] = "2-roce";
  auto roce = parse_workload(doc, "t.json");
  ASSERT_TRUE(roce.ok()) << roce.status().message();
  EXPECT_EQ(roce->faults[0].peer, telemetry::kRocePort);
  EXPECT_NE(roce->faults[0].peer, roce->faults[1].peer) << "a link, not the device fault's marker";
  auto roce_points = compile_workload(*roce, {});
  ASSERT_TRUE(roce_points.ok()) << roce_points.status().message();
  auto roce_back = telemetry::parse_program(telemetry::program_to_json(roce_points->front().program));
  ASSERT_TRUE(roce_back.ok()) << roce_back.status().message();
  EXPECT_EQ(roce_back->faults[0].peer, telemetry::kRocePort);
}

// What a mutation fuzzer found: each once crashed, hung or silently misread npu-run; each is now
// one line naming the member.
TEST(Workload, HostileValuesAreRefusedNamingTheMember) {
  auto model = [](nlohmann::json layer) {
    return nlohmann::json{{"name", "t"}, {"kind", "train"}, {"params", 1024}, {"layers", {layer}}};
  };
  auto error = [](const nlohmann::json& doc) { return parse_workload(doc, "t.json").status().message(); };
  const std::string at = "workload error: t.json: ";
  EXPECT_EQ(error(model({{"op", "aten::mm"}, {"inputs", {nlohmann::json::array(), nlohmann::json::array()}}})),
            at + "layers[0].inputs: aten::mm takes 2 inputs of 2-D shapes, got 0-D, 0-D");  // was SIGSEGV
  EXPECT_EQ(error(model({{"op", "aten::batch_norm"}, {"inputs", {{-1}}}})),
            at + "layers[0].inputs: aten::batch_norm takes an input of 2+-D shape, got 1-D");  // spun for ever
  EXPECT_EQ(error(model({{"op", "aten::relu"}, {"inputs", {std::vector<int>(100, 2)}}})),
            at + "layers[0].inputs[0]: expected an array of at most 8 dims (integers in [1, 2^31], -1 for dynamic)");
  EXPECT_EQ(error(model({{"op", "aten::relu"}, {"inputs", {{1 << 30, 1 << 30, 1 << 30}}}})), at + "layers[0].inputs[0]: more than 2^40 elements");
  EXPECT_EQ(error(model({{"op", "aten::relu"}, {"inputs", {{{"shape", {4}}, {"dtype", 7}}}}})),
            at + "layers[0].inputs[0].dtype: expected a string");  // was an uncaught type_error
  EXPECT_EQ(error(model({{"op", "aten::conv2d"}, {"inputs", {{1, 3, 8, 8}, {4, 3, 3, 3}}}, {"attrs", {{"strides", {"x", 1}}}}})),
            at + "layers[0].inputs: aten::conv2d: attrs strides and pads must be arrays of two integers (strides >= 1, pads >= 0)");
  nlohmann::json deep = {{"block", {{{"block", {{{"op", "aten::relu"}, {"inputs", {{4}}}}}}, {"repeat", 1000}}}}, {"repeat", 1000}};
  EXPECT_EQ(error(model(deep)), at + "layers[0].repeat: the model expands to more than 100000 layers");
  nlohmann::json doc = model({{"op", "aten::relu"}, {"inputs", {{4}}}});
  doc["samples_per_step"] = -1;  // hung npu-run
  EXPECT_EQ(error(doc), at + "workload.samples_per_step: must be in [1, 10000000], got -1");
  nlohmann::json sweep = {{"name", "s"}, {"kind", "matmul-sweep"}, {"extra", {{"sizes", {{256, -1, 256}}}}}};
  EXPECT_EQ(error(sweep), at + "extra.sizes: expected up to 1000 [m, k, n] triples of integers in [1, 65536]");  // hung
  nlohmann::json burn = {{"name", "b"}, {"kind", "burn"}, {"extra", {{"m", "8192"}}}};
  EXPECT_EQ(error(burn), at + "extra.m: expected an integer, got string");  // was an uncaught type_error
  burn["extra"] = {{"m", 8192}, {"matmuls_per_step", 1000000000}};
  EXPECT_EQ(error(burn), at + "extra.matmuls_per_step: must be in [1, 100000], got 1000000000");
  burn["extra"] = {{"m", {1, 2}}};  // read as the default before
  EXPECT_EQ(error(burn), at + "extra.m: expected an integer, got array");
  burn["extra"] = {{"bytes", 1}, {"mm", 1}};
  EXPECT_EQ(error(burn), at + "extra.mm: unknown field");
  std::string nested = "{\"extra\": " + std::string(100000, '[') + std::string(100000, ']') + "}";
  EXPECT_EQ(parse_json_text(nested, "t.json", "workload error").status().message(),
            "workload error: t.json:1:138: nested deeper than 128 levels");
  // nlohmann throws out_of_range for a number no double holds; it once ended npu-run with an
  // uncaught exception (found by tests/fuzz/program).
  EXPECT_EQ(parse_json_text("{\"name\": \"t\",\n \"steps\": 1e999}", "t.json", "workload error").status().message(),
            "workload error: t.json:2:11: number too large: '1e999'");
}

TEST(Workload, BlocksRepeatTheirLayersInOrder) {
  nlohmann::json doc = {{"name", "t"}, {"kind", "infer"},
                        {"layers", {{{"op", "aten::relu"}, {"inputs", {{8, 8}}}},
                                    {{"block", {{{"op", "aten::mm"}, {"inputs", {{8, 8}, {8, 8}}}},
                                                {{"op", "aten::add"}, {"inputs", {{8, 8}, {8, 8}}}, {"repeat", 2}}}},
                                     {"repeat", 3}}}}};
  auto w = parse_workload(doc, "t.json");
  ASSERT_TRUE(w.ok()) << w.status().message();
  std::vector<std::string> ops;
  for (const Layer& l : w->layers) ops.push_back(l.op + "x" + std::to_string(l.repeat));
  EXPECT_EQ(ops, (std::vector<std::string>{"aten::relux1", "aten::mmx1", "aten::addx2", "aten::mmx1", "aten::addx2",
                                           "aten::mmx1", "aten::addx2"}));
  doc["layers"][1]["block"] = "mm";
  EXPECT_EQ(parse_workload(doc, "t.json").status().message(),
            "workload error: t.json: layers[1].block: expected an array of layers (nested at most 4 deep)");
}

TEST(Workload, TrainingStepHasBucketedGradientAllreduces) {
  auto w = load_workload("resnet50-train");
  ASSERT_TRUE(w.ok());
  CompileOptions three;
  three.steps = 3;
  auto points = compile_workload(*w, three);
  ASSERT_TRUE(points.ok());
  const auto& p = points->front().program;
  EXPECT_EQ(p.repeat, 3);
  ASSERT_EQ(p.ranks.size(), 8u);
  int allreduces = 0, kernels = 0;
  for (const auto& op : telemetry::ops_of(p.ranks, 3).step) {
    allreduces += op.kind == telemetry::ProgramOp::Kind::kCollective;
    kernels += op.kind == telemetry::ProgramOp::Kind::kKernel;
  }
  EXPECT_EQ(allreduces, w->grad_buckets);
  EXPECT_GT(kernels, 200);  // forward (conv + batch_norm + relu fused), backward (two grads per conv), the update
  EXPECT_EQ(p.comms.size(), 1u + 1u + 8u);  // world, one dp group, eight tp groups of one
  // Ranks with the same communicators run rank 0's ops instead of carrying a copy.
  EXPECT_EQ(p.ranks[3].ops_of, 0);
  EXPECT_TRUE(p.ranks[3].step.empty());
  EXPECT_EQ(p.ranks[0].ops_of, -1);
  // Without fusion every layer is its own kernel, and the buckets are the same.
  three.fusion = false;
  auto unfused = compile_workload(*w, three);
  ASSERT_TRUE(unfused.ok());
  int unfused_kernels = 0, unfused_allreduces = 0;
  for (const auto& op : telemetry::ops_of(unfused->front().program.ranks, 3).step) {
    unfused_allreduces += op.kind == telemetry::ProgramOp::Kind::kCollective;
    unfused_kernels += op.kind == telemetry::ProgramOp::Kind::kKernel;
  }
  EXPECT_GT(unfused_kernels, 300);
  EXPECT_EQ(unfused_allreduces, w->grad_buckets);
}

// The ops of one step of `w` compiled for device 0 alone (steps and devices of `o` overridden).
std::vector<telemetry::ProgramOp> one_step_on_device_0(const Workload& w, CompileOptions o) {
  o.steps = 1;
  o.devices = {0};
  auto points = compile_workload(w, o);
  EXPECT_TRUE(points.ok()) << points.status().message();
  return points.ok() ? points->front().program.ranks[0].step : std::vector<telemetry::ProgramOp>{};
}

// The compiler's fusion (workloads/fusion.hpp): ResNet's conv + batch_norm + relu and its
// bottleneck's conv + batch_norm + add + relu become one kernel each, a transformer's matmul +
// gelu and add + layer_norm, the backward's ReluGrad + BatchNormGrad; each fused op carries its
// epilogue (the parts after the first, with their other inputs) for the emulator.
TEST(Workload, FusionGroupsFollowThePatternTable) {
  auto names = [](const std::string& workload, bool fusion) {
    auto w = load_workload(workload);
    EXPECT_TRUE(w.ok());
    CompileOptions o;
    o.fusion = fusion;
    std::map<std::string, int> count;
    for (const auto& op : one_step_on_device_0(*w, o)) {
      if (op.kind != telemetry::ProgramOp::Kind::kKernel) continue;
      std::string name = op.name;
      if (op.attrs.contains("epilogue")) {
        for (const auto& part : op.attrs["epilogue"]) name += "+" + part["op"].get<std::string>();
      }
      ++count[name];
    }
    return count;
  };
  auto resnet = names("resnet50-train", true);
  EXPECT_EQ(resnet["conv2d+batch_norm+relu"], 1 + 16 * 2) << "the stem, and two per bottleneck";
  EXPECT_EQ(resnet["conv2d+batch_norm+add+relu"], 16) << "each bottleneck's last conv with its shortcut";
  EXPECT_EQ(resnet["ReluGrad+BatchNormGrad"], 1 + 16 * 2 + 16);
  EXPECT_EQ(resnet["conv2d+batch_norm"], 4) << "the downsample shortcuts: a conv follows their BatchNorm";
  EXPECT_EQ(resnet["batch_norm"], 0);
  EXPECT_EQ(names("resnet50-train", false)["batch_norm"], 53);
  auto bert = names("bert-large-train", true);
  EXPECT_EQ(bert["aten::mm+aten::gelu"], 24 + 1) << "each FFN up, and the MLM head's transform";
  EXPECT_EQ(bert["aten::add+aten::layer_norm"], 2 * 24);
  EXPECT_EQ(bert["aten::mul+aten::add"], 24) << "the attention scores' scale and mask";
  EXPECT_EQ(bert["aten::gelu"], 0);
  EXPECT_EQ(names("bert-large-train", false)["aten::gelu"], 24 + 1);
}

TEST(Workload, AVaryingLayerIsNeverFused) {
  std::vector<StepOp> ops = {{"aten::mm", {{64, 32}, {32, 16}}, {"float16", "float16"}, {}},
                             {"aten::relu", {{64, 16}}, {"float16"}, {}},
                             {"aten::relu", {{64, 16}}, {"float16"}, {}}};
  auto all = fusion_groups(ops, true);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].count, 2u) << "matmul + relu";
  EXPECT_EQ(all[1].count, 1u) << "the second relu: a matmul takes one activation";
  auto kept = fusion_groups(ops, true, {true, false, true});
  ASSERT_EQ(kept.size(), 3u) << "the varying relu stays alone and joins nothing";
  EXPECT_EQ(fusion_groups(ops, false).size(), 3u);
  StepOp fused = fused_op(ops, all[0]);
  EXPECT_EQ(fused.name, "aten::mm");
  EXPECT_EQ(fused.attrs["epilogue"].dump(), R"([{"inputs":[],"op":"aten::relu"}])");
}

TEST(Workload, DevicesScaleDataParallelism) {
  auto w = load_workload("resnet50-train");
  CompileOptions one;
  one.devices = {2};
  auto points = compile_workload(*w, one);
  ASSERT_TRUE(points.ok());
  ASSERT_EQ(points->front().program.ranks.size(), 1u);
  EXPECT_EQ(points->front().program.ranks[0].device, 2);
  // Tensor (and pipeline) parallel groups stay whole: dp scales by whole groups.
  auto ernie = load_workload("ernie3-train");
  CompileOptions two;
  two.devices = {0, 1};
  auto one_group = compile_workload(*ernie, two);
  ASSERT_TRUE(one_group.ok()) << one_group.status().message();
  EXPECT_EQ(one_group->front().program.layout, "dp1 x tp2");
  CompileOptions three;
  three.devices = {0, 1, 2};
  auto bad = compile_workload(*ernie, three);
  EXPECT_EQ(bad.status().message(), "workload ernie3-train needs 8 devices (dp 4 x tp 2), or a multiple of 2, got 3");
}

// Pipeline parallelism as Paddle configures it (pp_degree, accumulate_steps): each stage runs its
// share of the layers over the micro-batches in 1F1B order, receiving activations from the stage
// before and gradients from the stage after.
TEST(Workload, PipelineStagesRunOneForwardOneBackward) {
  auto w = load_workload("pipeline-train");
  ASSERT_TRUE(w.ok()) << w.status().message();
  EXPECT_EQ(w->pp, 4);
  EXPECT_EQ(w->micro_batches, 8);
  auto points = compile_workload(*w, {});
  ASSERT_TRUE(points.ok()) << points.status().message();
  const auto& p = points->front().program;
  ASSERT_EQ(p.ranks.size(), 8u);  // dp 2 x pp 4
  EXPECT_EQ(p.layout, "dp2 x tp1 x pp4 (8 micro-batches, 1F1B)");
  ASSERT_EQ(p.comms.back().name, "pp1");  // one per pipeline, its ranks in stage order
  EXPECT_EQ(p.comms.back().ranks, (std::vector<int>{4, 5, 6, 7}));
  // Each stage's schedule as F (a forward's last kernel before its send, or the last stage's
  // forward) and B (a backward's first kernel after its receive) from its point-to-point ops.
  for (int stage = 0; stage < 4; ++stage) {
    std::string order;
    int kernels = 0;
    for (const auto& op : telemetry::ops_of(p.ranks, stage).step) {
      if (op.kind == telemetry::ProgramOp::Kind::kCollective && (op.name == "Send" || op.name == "Recv")) {
        bool forward = (op.name == "Recv") == (op.root_or_peer < stage);
        order += op.name == "Recv" ? (forward ? "f" : "b") : (forward ? "F" : "B");
      }
      kernels += op.kind == telemetry::ProgramOp::Kind::kKernel;
    }
    EXPECT_GT(kernels, 60) << "stage " << stage << ": its 6 of 24 blocks, forward and backward, per micro-batch";
    if (stage == 0) {
      EXPECT_EQ(order, "FFFFbFbFbFbFbbbb");  // 3 warm-up forwards, 5 x 1F1B, 3 cool-down
    }
    if (stage == 3) {
      EXPECT_EQ(order, "fBfBfBfBfBfBfBfB");  // the last stage: one forward, one backward
    }
  }
  auto both = parse_workload(nlohmann::json::parse(R"({"name": "x", "kind": "train", "layers": [],
                                             "parallel": {"pp": 2, "pp_degree": 2}})"), "x.json");
  EXPECT_EQ(both.status().message(), "workload error: x.json: parallel.pp_degree: give pp or pp_degree, not both");
}

// Gradient accumulation without a pipeline (Paddle's accumulate_steps with pp 1): each
// micro-batch runs its input, forward and backward with their tensor-parallel syncs; the
// data-parallel gradient allreduce and the optimizer run once, after the last micro-batch. It was
// refused ("micro-batches are a pipeline's").
TEST(Workload, GradientAccumulationRunsEveryMicroBatchAndReducesAndStepsOnce) {
  auto w = load_workload("ernie3-train");  // dp 4 x tp 2
  ASSERT_TRUE(w.ok());
  struct Counts {
    int h2d = 0, kernels = 0, adam = 0, dp = 0, tp = 0;
  };
  auto count = [](const Workload& wl, std::string* layout) {
    auto points = compile_workload(wl, {});
    EXPECT_TRUE(points.ok()) << points.status().message();
    const auto& p = points->front().program;
    *layout = p.layout;
    Counts c;
    for (const auto& op : telemetry::ops_of(p.ranks, 0).step) {
      using K = telemetry::ProgramOp::Kind;
      c.h2d += op.kind == K::kMemcpy && op.name == "H2D";
      c.kernels += op.kind == K::kKernel;
      c.adam += op.kind == K::kKernel && op.name == "ApplyAdam";
      if (op.kind == K::kCollective) (p.comms[static_cast<std::size_t>(op.comm)].name.rfind("dp", 0) == 0 ? c.dp : c.tp) += 1;
    }
    return c;
  };
  std::string one_layout, four_layout;
  Counts one = count(*w, &one_layout);
  Workload accumulated = *w;
  accumulated.micro_batches = 4;
  Counts four = count(accumulated, &four_layout);
  EXPECT_EQ(one_layout, "dp4 x tp2");
  EXPECT_EQ(four_layout, "dp4 x tp2 (4 accumulation steps)");
  EXPECT_EQ(one.adam, 1);
  EXPECT_EQ(four.adam, 1);
  EXPECT_GT(one.dp, 0);
  EXPECT_EQ(four.dp, one.dp) << "the gradients are reduced once per step";
  EXPECT_EQ(four.tp, 4 * one.tp) << "each micro-batch's activations are synced";
  EXPECT_EQ(four.h2d, 4 * one.h2d);
  EXPECT_EQ(four.kernels - 1, 4 * (one.kernels - 1)) << "all but the optimizer, per micro-batch";
  auto parsed = parse_workload(nlohmann::json::parse(R"({"name": "x", "kind": "train", "layers": [{"op": "relu", "inputs": [[8]]}],
                                               "parallel": {"dp_degree": 2, "accumulate_steps": 4}})"), "x.json");
  ASSERT_TRUE(parsed.ok()) << parsed.status().message();
  EXPECT_EQ(parsed->micro_batches, 4);
  auto bad = parse_workload(nlohmann::json::parse(R"({"name": "x", "kind": "train", "layers": [],
                                            "parallel": {"dp": 2, "micro_batches": 0}})"), "x.json");
  EXPECT_EQ(bad.status().message(), "workload error: x.json: parallel.micro_batches: must be in [1, 1024]");
}

// BERT's published setups update float32 master weights with LAMB after unscaling and clipping
// the gradients: the step ends with those passes, in that order, over the rank's parameters.
TEST(Workload, TheUpdateCastsUnscalesClipsStepsAndCastsBackAsTheRecipeSays) {
  auto w = load_workload("bert-large-train");
  ASSERT_TRUE(w.ok());
  std::vector<std::string> update;
  for (const auto& op : one_step_on_device_0(*w, {})) {
    if (op.kind != telemetry::ProgramOp::Kind::kKernel) continue;
    std::string what = op.name;
    if (op.attrs.contains("dst_type")) what += " to " + op.attrs["dst_type"].get<std::string>();
    if (op.inputs[0]["shape"] == nlohmann::json::array({340000000})) update.push_back(what);
  }
  EXPECT_EQ(update, (std::vector<std::string>{"Cast to float32", "Mul", "ClipByNorm", "ApplyLamb", "Cast to float16"}));
  // Without master weights the gradients stay in the model's dtype for the unscale and the clip.
  Workload fp16_grads = *w;
  fp16_grads.master_weights = false;
  std::vector<std::string> dtypes;
  for (const auto& op : one_step_on_device_0(fp16_grads, {})) {
    if (op.kind == telemetry::ProgramOp::Kind::kKernel && (op.name == "Mul" || op.name == "ClipByNorm") &&
        op.inputs[0]["shape"] == nlohmann::json::array({340000000})) {
      dtypes.push_back(op.name + " " + op.inputs[0]["dtype"].get<std::string>());
    }
    EXPECT_NE(op.name, "Cast") << "no master weights, no casts";
  }
  EXPECT_EQ(dtypes, (std::vector<std::string>{"Mul float16", "ClipByNorm float16"}));
  Workload plain = *w;
  plain.optimizer = "adam", plain.loss_scale = 0, plain.clip_grad_norm = 0, plain.master_weights = false;
  int adam_only = 0;
  for (const auto& op : one_step_on_device_0(plain, {})) {
    adam_only += op.kind == telemetry::ProgramOp::Kind::kKernel && op.inputs[0]["shape"] == nlohmann::json::array({340000000});
  }
  EXPECT_EQ(adam_only, 1);
}

// An optimizer the compiler does not know was compiled as no update at all; now it is refused.
TEST(Workload, AnUnknownOptimizerAndNegativeUpdateKnobsAreNamed) {
  auto parse = [](const std::string& extra) {
    return parse_workload(nlohmann::json::parse(R"({"name": "x", "kind": "train", "layers": [{"op": "relu", "inputs": [[8]]}], )" +
                                                extra + "}"),
                          "x.json");
  };
  EXPECT_EQ(parse(R"("optimizer": "adamw")").status().message(),
            "workload error: x.json: workload.optimizer: expected adam, lamb, sgd or none, got 'adamw'");
  EXPECT_EQ(parse(R"("clip_grad_norm": -1)").status().message(), "workload error: x.json: workload.clip_grad_norm: must be >= 0");
  EXPECT_EQ(parse(R"("loss_scale": -2)").status().message(), "workload error: x.json: workload.loss_scale: must be >= 0");
  auto ok = parse(R"("optimizer": "lamb", "loss_scale": 1024, "clip_grad_norm": 1, "master_weights": true)");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  EXPECT_TRUE(ok->master_weights);
}

TEST(Workload, SweepsCompileToOneProgramPerPoint) {
  auto w = load_workload("allreduce-sweep");
  auto points = compile_workload(*w, {});
  ASSERT_TRUE(points.ok());
  EXPECT_EQ(points->size(), 28u);  // 8 B .. 1 GiB by doubling, float32
  EXPECT_EQ(points->back().count, (1u << 30) / 4);
}

}  // namespace
}  // namespace npukit::work

namespace npukit::work {
namespace {

// The direct allocator's program allocates every tensor as a non-caching framework does (each
// forward kernel's output, each backward kernel's output) and frees each exactly once in the same
// step, activations after their backward; the caching allocator's keeps one activation buffer.
TEST(Workload, TheDirectAllocatorAllocatesEveryTensorAndFreesItOnce) {
  auto w = load_workload("bert-large-train");
  ASSERT_TRUE(w.ok());
  auto buffers = [&](const std::string& allocator) {
    CompileOptions o;
    o.allocator = allocator;
    std::map<std::string, int> allocs, frees;
    std::vector<std::string> order;
    for (const auto& op : one_step_on_device_0(*w, o)) {
      if (op.kind == telemetry::ProgramOp::Kind::kAlloc) ++allocs[op.buffer], order.push_back("+" + op.buffer);
      if (op.kind == telemetry::ProgramOp::Kind::kFree) ++frees[op.buffer], order.push_back("-" + op.buffer);
    }
    EXPECT_EQ(allocs, frees) << allocator;
    return std::make_pair(allocs, order);
  };
  auto [caching, caching_order] = buffers("caching");
  // BERT's update casts its gradients into a float32 buffer (master weights) under either allocator.
  EXPECT_EQ(caching, (std::map<std::string, int>{{"activations", 1}, {"grads_fp32", 1}}));
  auto [direct, order] = buffers("direct");
  EXPECT_EQ(direct.count("activations"), 0u);
  EXPECT_GT(direct.size(), 24u * 10) << "a buffer per kernel output, forward and backward";
  for (const auto& [name, n] : direct) EXPECT_EQ(n, 1) << name;
  // An activation lives until the backward has passed its kernel: the first forward kernel's
  // output is the last activation freed (the update's float32 gradients come after).
  std::vector<std::string> activations;
  for (const auto& e : order) if (e.rfind("+act", 0) == 0 || e.rfind("-act", 0) == 0) activations.push_back(e);
  ASSERT_FALSE(activations.empty());
  EXPECT_EQ(activations.back(), "-act0");
  EXPECT_EQ(activations.front(), "+act0");
  EXPECT_EQ(order.back(), "-grads_fp32");
}

}  // namespace
}  // namespace npukit::work
