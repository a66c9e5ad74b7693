#include "emulator/daemon/demo.hpp"

#include <algorithm>

#include "emulator/runtime/runtime.hpp"

namespace npukit::emu {

namespace {

struct Block {
  PreparedKernel up, gelu, down, add, norm;
};

Result<Block> prepare_block(const Context& ctx, int64_t tokens, int64_t hidden) {
  TensorDesc x{{tokens, hidden}, DType::kFloat16};
  TensorDesc w_up{{hidden, 4 * hidden}, DType::kFloat16};
  TensorDesc h{{tokens, 4 * hidden}, DType::kFloat16};
  TensorDesc w_down{{4 * hidden, hidden}, DType::kFloat16};
  TensorDesc gamma{{hidden}, DType::kFloat16};
  Block b;
  struct Step { PreparedKernel* out; const char* op; std::vector<TensorDesc> in; Attrs attrs; };
  std::vector<Step> steps = {
      {&b.up, "aten::mm", {x, w_up}, {}},
      {&b.gelu, "aten::gelu", {h}, {}},
      {&b.down, "aten::mm", {h, w_down}, {}},
      {&b.add, "aten::add", {x, x}, {}},
      {&b.norm, "aten::layer_norm", {x, gamma, gamma}, {{"epsilon", 1e-5}}},
  };
  for (auto& s : steps) {
    auto k = ctx.prepare(s.op, s.in, s.attrs);
    if (!k.ok()) return k.status();
    *s.out = std::move(*k);
  }
  return b;
}

// One device's share of the demo: a context, its streams and its resident weights.
struct DeviceProgram {
  Context* ctx = nullptr;
  StreamId compute = 0;
  StreamId copy = 0;
  EventId input_ready = 0;
};

Result<DeviceProgram> set_up_device(Context& ctx, const DemoOptions& o) {
  DeviceProgram p{&ctx, ctx.create_stream(), ctx.create_stream(), ctx.create_event()};
  uint64_t weight_bytes = static_cast<uint64_t>(o.hidden * 4 * o.hidden * 2);
  for (int l = 0; l < o.layers * 2; ++l) {
    auto w = ctx.malloc(weight_bytes);
    if (!w.ok()) return w.status();
  }
  return p;
}

// Enqueues one training-like step: copy the input in, then the layers once it has arrived.
// Scratch memory is freed right after enqueue, as a caching allocator's stream semantics allow.
Status enqueue_step(DeviceProgram& p, const DemoOptions& o, const Block& b) {
  Context& ctx = *p.ctx;
  uint64_t act_bytes = static_cast<uint64_t>(o.tokens * o.hidden * 2);
  auto input = ctx.malloc(act_bytes);
  if (!input.ok()) return input.status();
  auto hidden = ctx.malloc(4 * act_bytes);
  if (!hidden.ok()) return hidden.status();
  NPUKIT_RETURN_IF_ERROR(ctx.memcpy_h2d(p.copy, *input, nullptr, act_bytes));
  NPUKIT_RETURN_IF_ERROR(ctx.record_event(p.copy, p.input_ready));
  NPUKIT_RETURN_IF_ERROR(ctx.wait_event(p.compute, p.input_ready));
  for (int l = 0; l < o.layers; ++l) {
    for (const PreparedKernel* k : {&b.up, &b.gelu, &b.down, &b.add, &b.norm}) {
      NPUKIT_RETURN_IF_ERROR(ctx.enqueue(p.compute, *k));
    }
  }
  NPUKIT_RETURN_IF_ERROR(ctx.free(*hidden));
  return ctx.free(*input);
}

// First task start and last task end per device.
class DeviceSpans final : public TaskObserver {
 public:
  explicit DeviceSpans(int devices) : first_(devices, -1), last_(devices, 0) {}
  void on_task_end(const TaskRecord& r) override {
    if (first_[r.device] < 0 || r.start < first_[r.device]) first_[r.device] = r.start;
    last_[r.device] = std::max(last_[r.device], r.end);
  }
  Nanos span(int device) const { return first_[device] < 0 ? 0 : last_[device] - first_[device]; }

 private:
  std::vector<Nanos> first_;
  std::vector<Nanos> last_;
};

}  // namespace

Result<DemoReport> run_demo(const DemoOptions& o) {
  if (o.steps < 1 || o.layers < 1 || o.tokens < 1 || o.hidden < 1) {
    return InvalidArgument("demo: steps, layers, tokens and hidden must all be >= 1");
  }
  auto created = Node::create({.spec = o.node, .seed = o.seed});
  if (!created.ok()) return created.status();
  Node& node = **created;
  DemoReport report;
  report.node = node.spec().name;
  report.chip = node.spec().device_spec.name;
  report.peak_tflops_fp16 = node.spec().device_spec.cube_peak.fp16 / 1e12;
  std::vector<Context*> contexts;
  for (int d = 0; d < node.device_count(); ++d) {
    auto ctx = node.create_context(d, 10000 + static_cast<uint32_t>(d), "npu-emu-demo", o.allocator);
    if (!ctx.ok()) return ctx.status();
    contexts.push_back(*ctx);
  }
  auto block = prepare_block(*contexts.front(), o.tokens, o.hidden);
  if (!block.ok()) return block.status();
  std::vector<DeviceProgram> programs;
  for (Context* ctx : contexts) {
    auto p = set_up_device(*ctx, o);
    if (!p.ok()) return p.status();
    programs.push_back(*p);
  }
  DeviceSpans spans(node.device_count());
  node.engine().add_observer(&spans);
  // Steps interleave across devices so that every device works at the same virtual time.
  for (int step = 0; step < o.steps; ++step) {
    for (auto& p : programs) NPUKIT_RETURN_IF_ERROR(enqueue_step(p, o, *block));
  }
  node.run_until_idle();
  node.engine().remove_observer(&spans);
  for (Context* ctx : contexts) NPUKIT_RETURN_IF_ERROR(ctx->synchronize_device());
  report.makespan_ns = node.now();
  report.tasks = node.engine().tasks_completed();
  for (int d = 0; d < node.device_count(); ++d) {
    const Device& dev = node.device(d);
    const DeviceCounters& c = dev.counters();
    DemoDeviceReport r;
    r.device = d;
    r.bus_id = dev.bus_id();
    r.modelled_ns = spans.span(d);
    r.kernels = c.kernels_total;
    r.copies = c.copies_total;
    double seconds = static_cast<double>(r.modelled_ns) * 1e-9;
    r.achieved_tflops = c.flops_total / seconds / 1e12;
    r.hbm_gbps = static_cast<double>(c.hbm_bytes_total) / seconds / 1e9;
    r.aicore_util = static_cast<double>(c.aicore_busy_core_ns) /
                    (static_cast<double>(dev.spec().aicore_count) * static_cast<double>(r.modelled_ns));
    r.allocator = contexts[d]->allocator_stats();
    report.devices.push_back(r);
  }
  return report;
}

}  // namespace npukit::emu
