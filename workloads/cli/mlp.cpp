// mlp-train: a two-layer MLP learns a teacher's labelling of random inputs, every number
// computed by the emulator's CPU kernels on device memory (functional mode). The loss must fall.
#include <cmath>
#include <random>

#include "emulator/runtime/runtime.hpp"
#include "workloads/cli/standalone.hpp"

namespace npukit::work {

namespace {

using emu::DeviceTensor;
using emu::DType;
using emu::TensorDesc;

constexpr int64_t kBatch = 64, kIn = 64, kHidden = 128, kClasses = 10, kSamples = 512;

TensorDesc f32(emu::Shape s) { return {std::move(s), DType::kFloat32}; }

class Mlp {
 public:
  Mlp(emu::Context& ctx, uint64_t seed) : ctx_(ctx), s_(ctx.create_stream()), rng_(seed) {}

  Status init() {
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> x(kSamples * kIn), teacher(kIn * kClasses);
    for (auto& v : x) v = normal(rng_);
    for (auto& v : teacher) v = normal(rng_);
    labels_.resize(kSamples);
    for (int64_t i = 0; i < kSamples; ++i) {  // the teacher's argmax is the label
      int best = 0;
      float best_v = -1e30f;
      for (int c = 0; c < kClasses; ++c) {
        float v = 0;
        for (int k = 0; k < kIn; ++k) v += x[i * kIn + k] * teacher[k * kClasses + c];
        if (v > best_v) best_v = v, best = c;
      }
      labels_[i] = best;
    }
    inputs_ = x;
    NPUKIT_RETURN_IF_ERROR(param(w1_, {kIn, kHidden}, 1.0f / std::sqrt(float(kIn))));
    NPUKIT_RETURN_IF_ERROR(param(b1_, {kHidden}, 0));
    NPUKIT_RETURN_IF_ERROR(param(w2_, {kHidden, kClasses}, 1.0f / std::sqrt(float(kHidden))));
    NPUKIT_RETURN_IF_ERROR(param(b2_, {kClasses}, 0));
    NPUKIT_RETURN_IF_ERROR(buffer(x_, f32({kBatch, kIn})));
    NPUKIT_RETURN_IF_ERROR(buffer(y_, {{kBatch}, DType::kInt32}));
    NPUKIT_RETURN_IF_ERROR(buffer(h_, f32({kBatch, kHidden})));
    NPUKIT_RETURN_IF_ERROR(buffer(a_, f32({kBatch, kHidden})));
    NPUKIT_RETURN_IF_ERROR(buffer(z_, f32({kBatch, kClasses})));
    NPUKIT_RETURN_IF_ERROR(buffer(loss_, f32({kBatch})));
    NPUKIT_RETURN_IF_ERROR(buffer(dz_, f32({kBatch, kClasses})));
    NPUKIT_RETURN_IF_ERROR(buffer(da_, f32({kBatch, kHidden})));
    NPUKIT_RETURN_IF_ERROR(buffer(dh_, f32({kBatch, kHidden})));
    NPUKIT_RETURN_IF_ERROR(buffer(scale_, f32({1})));
    // The copy runs when the stream does: the host value must outlive it (a member, not a local).
    return ctx_.memcpy_h2d(s_, scale_.addr, &inv_batch_, 4);
  }

  // One step on the batch starting at sample `first`; returns the mean loss.
  Result<float> step(int64_t step_no) {
    int64_t first = (step_no * kBatch) % kSamples;
    NPUKIT_RETURN_IF_ERROR(ctx_.memcpy_h2d(s_, x_.addr, &inputs_[first * kIn], kBatch * kIn * 4));
    NPUKIT_RETURN_IF_ERROR(ctx_.memcpy_h2d(s_, y_.addr, &labels_[first], kBatch * 4));
    NPUKIT_RETURN_IF_ERROR(run("aten::mm", {x_, w1_.p}, {h_}));
    NPUKIT_RETURN_IF_ERROR(run("aten::add", {h_, b1_.p}, {h_}));
    NPUKIT_RETURN_IF_ERROR(run("aten::relu", {h_}, {a_}));
    NPUKIT_RETURN_IF_ERROR(run("aten::mm", {a_, w2_.p}, {z_}));
    NPUKIT_RETURN_IF_ERROR(run("aten::add", {z_, b2_.p}, {z_}));
    NPUKIT_RETURN_IF_ERROR(run("softmax_with_cross_entropy", {z_, y_}, {loss_, dz_}));
    NPUKIT_RETURN_IF_ERROR(run("aten::mul", {dz_, scale_}, {dz_}));  // mean over the batch
    NPUKIT_RETURN_IF_ERROR(run("aten::mm", {a_, dz_}, {w2_.g}, {{"transpose_a", int64_t{1}}}));
    NPUKIT_RETURN_IF_ERROR(run("aten::sum", {dz_}, {b2_.g}, {{"axes", std::vector<int64_t>{0}}}));
    NPUKIT_RETURN_IF_ERROR(run("aten::mm", {dz_, w2_.p}, {da_}, {{"transpose_b", int64_t{1}}}));
    NPUKIT_RETURN_IF_ERROR(run("ReluGrad", {da_, h_}, {dh_}));
    NPUKIT_RETURN_IF_ERROR(run("aten::mm", {x_, dh_}, {w1_.g}, {{"transpose_a", int64_t{1}}}));
    NPUKIT_RETURN_IF_ERROR(run("aten::sum", {dh_}, {b1_.g}, {{"axes", std::vector<int64_t>{0}}}));
    for (Param* p : {&w1_, &b1_, &w2_, &b2_}) {
      emu::Attrs adam{{"lr", 0.01}, {"step", step_no + 1}};
      NPUKIT_RETURN_IF_ERROR(run("ApplyAdam", {p->p, p->m, p->v, p->g}, {p->p, p->m, p->v}, adam));
    }
    std::vector<float> loss(kBatch);
    NPUKIT_RETURN_IF_ERROR(ctx_.memcpy_d2h(s_, loss.data(), loss_.addr, kBatch * 4));
    NPUKIT_RETURN_IF_ERROR(ctx_.synchronize_stream(s_));
    float sum = 0;
    for (float v : loss) sum += v;
    return sum / float(kBatch);
  }

 private:
  struct Param {
    DeviceTensor p, m, v, g;
  };

  Status buffer(DeviceTensor& t, TensorDesc desc) {
    auto ptr = ctx_.malloc(desc.bytes());
    if (!ptr.ok()) return ptr.status();
    t = {*ptr, std::move(desc)};
    return Status::Ok();
  }

  Status param(Param& p, emu::Shape shape, float scale) {
    for (DeviceTensor* t : {&p.p, &p.m, &p.v, &p.g}) NPUKIT_RETURN_IF_ERROR(buffer(*t, f32(shape)));
    std::normal_distribution<float> normal(0.0f, scale > 0 ? scale : 1.0f);
    std::vector<float> init(static_cast<std::size_t>(emu::num_elements(shape)), 0.0f);
    if (scale > 0) {
      for (auto& v : init) v = normal(rng_);
    }
    NPUKIT_RETURN_IF_ERROR(ctx_.memcpy_h2d(s_, p.p.addr, init.data(), init.size() * 4));
    std::vector<float> zero(init.size(), 0.0f);
    NPUKIT_RETURN_IF_ERROR(ctx_.memcpy_h2d(s_, p.m.addr, zero.data(), zero.size() * 4));
    NPUKIT_RETURN_IF_ERROR(ctx_.memcpy_h2d(s_, p.v.addr, zero.data(), zero.size() * 4));
    return ctx_.synchronize_stream(s_);  // `init` and `zero` die here
  }

  Status run(const std::string& op, std::vector<DeviceTensor> in, std::vector<DeviceTensor> out,
             const emu::Attrs& attrs = {}) {
    return ctx_.launch(s_, op, in, out, attrs);
  }

  emu::Context& ctx_;
  emu::StreamId s_;
  std::mt19937 rng_;
  std::vector<float> inputs_;
  std::vector<int32_t> labels_;
  float inv_batch_ = 1.0f / float(kBatch);
  Param w1_, b1_, w2_, b2_;
  DeviceTensor x_, y_, h_, a_, z_, loss_, dz_, da_, dh_, scale_;
};

}  // namespace

int run_mlp_train(int steps, uint64_t seed, const std::string& spec, std::FILE* out, std::FILE* err) {
  auto node = emu::Node::create({.spec = spec, .seed = seed, .functional = true});
  if (!node.ok()) {
    std::fprintf(err, "npu-run: %s\n", node.status().message().c_str());
    return kExitUsage;
  }
  auto ctx = (*node)->create_context(0, 1, "npu-run");
  Mlp mlp(**ctx, seed);
  if (Status s = mlp.init(); !s.ok()) {
    std::fprintf(err, "npu-run: mlp-train failed: %s\n", s.message().c_str());
    return kExitJobFailed;
  }
  std::fprintf(out, "mlp-train: %d steps on device 0 of an in-process %s node (functional)\n", steps,
               (*node)->spec().name.c_str());
  for (int i = 0; i < steps; ++i) {
    emu::Nanos t0 = (*node)->now();
    auto loss = mlp.step(i);
    if (!loss.ok()) {
      std::fprintf(err, "npu-run: mlp-train failed: %s\n", loss.status().message().c_str());
      return kExitJobFailed;
    }
    double ms = static_cast<double>((*node)->now() - t0) / 1e6;
    std::fprintf(out, "step %d/%d  %.3f ms  %.1f samples/s  loss %.4f\n", i + 1, steps, ms,
                 static_cast<double>(kBatch) / (ms / 1000.0), *loss);
  }
  std::fprintf(out, "mlp-train: done\n");
  return kExitOk;
}

}  // namespace npukit::work
