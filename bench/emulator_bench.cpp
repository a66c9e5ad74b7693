// Emulator throughput in fast, shape-only mode: simulated tasks per second of host time.
// Budget (DESIGN.md section 9): >= 5 M simulated tasks/s.
#include <benchmark/benchmark.h>

#include "bench/budget.hpp"
#include "emulator/runtime/node.hpp"
#include "emulator/runtime/runtime.hpp"

namespace npukit::emu {
namespace {

const bool kBudget = bench::register_budget(
    {"BM_FastShapeOnlyTasks", "tasks_per_s", "M/s", 1e6, true, 5.0,
     "DESIGN.md 9: emulator, fast mode, shape-only"});

// A training-step-like mix on every device of a node (`spec`): two streams per device, cube and
// vector kernels, an event dependency per step. Counts every task the engine completes. Run on one
// 8x910B2 host and on a 1,024-NPU cluster (128 hosts): the rate should hold at that size.
void BM_FastShapeOnlyTasks(benchmark::State& state, const char* spec) {
  const int steps = static_cast<int>(state.range(0));
  uint64_t tasks = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto node = std::move(*Node::create({.spec = spec, .seed = 1}));
    struct Dev { Context* ctx; StreamId a, b; EventId e; PreparedKernel mm, add; };
    std::vector<Dev> devs;
    for (int d = 0; d < node->device_count(); ++d) {
      Context* ctx = *node->create_context(d, 100 + d, "bench");
      Dev dev{ctx, ctx->create_stream(), ctx->create_stream(), ctx->create_event(), {}, {}};
      dev.mm = *ctx->prepare("matmul", {{{1024, 1024}, DType::kFloat16}, {{1024, 1024}, DType::kFloat16}}, {}, 12);
      dev.add = *ctx->prepare("aten::add", {{{1 << 20}, DType::kFloat16}, {{1 << 20}, DType::kFloat16}}, {}, 12);
      devs.push_back(dev);
    }
    state.ResumeTiming();
    for (int s = 0; s < steps; ++s) {
      for (auto& d : devs) {
        for (int i = 0; i < 8; ++i) {
          (void)d.ctx->enqueue(d.a, d.mm);
          (void)d.ctx->enqueue(d.b, d.add);
        }
        (void)d.ctx->record_event(d.a, d.e);
        (void)d.ctx->wait_event(d.b, d.e);
      }
      node->run_until_idle();
    }
    tasks += node->engine().tasks_completed();
    state.PauseTiming();
    node.reset();
    state.ResumeTiming();
  }
  state.counters["tasks_per_s"] = benchmark::Counter(static_cast<double>(tasks), benchmark::Counter::kIsRate);
  state.counters["tasks"] = static_cast<double>(tasks);  // bench/engine_instructions.sh divides by it
}
BENCHMARK_CAPTURE(BM_FastShapeOnlyTasks, node_8, "8x910B2")->Arg(200)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_FastShapeOnlyTasks, cluster_1024, "128x8x910B2")->Arg(10)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace npukit::emu
