// The unfused-chain rule: consecutive element-wise kernels on one stream, each reading what the
// previous one wrote, all memory-bound. Fused into one kernel the chain would read its input and
// write its output once, taking about as long as its longest member; the rest is the cost.
#include <algorithm>
#include <array>
#include <map>
#include <sstream>

#include "profiler/analyze/findings_internal.hpp"
#include "profiler/analyze/id_groups.hpp"
#include "profiler/analyze/report_build.hpp"

namespace npukit::prof {

namespace {

constexpr double kMaxIntensity = 10;    // FLOP per input byte: memory-bound
constexpr double kChainShare = 0.03;    // of the step, for a finding

// CANN op types that compute each output element from the same element of their inputs (a
// softmax or a norm has equal shapes too, but reduces along an axis: not fused this way).
constexpr std::string_view kElementwiseOpTypes[] = {
    "Add", "Sub", "Mul", "RealDiv", "Div", "Neg", "Abs", "Exp", "Log", "Sqrt", "Rsqrt", "Square", "Pow",
    "Maximum", "Minimum", "Cast", "Relu", "ReluGrad", "Sigmoid", "SigmoidGrad", "Tanh", "TanhGrad", "Gelu",
    "GeluGrad", "FastGelu", "Swish", "LeakyRelu", "Muls", "Adds", "Axpy", "FusedElementwise"};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string part; std::getline(in, part, ';');) out.push_back(part);
  return out;
}

// An element-wise op type whose inputs all have the output's shape (no broadcast), memory-bound.
bool elementwise(const ProfileData& d, const TaskRecord& t) {
  if (t.out_shapes < 0 || t.shapes < 0 || d.str(t.task_type) != "AI_VECTOR_CORE") return false;
  std::string_view type = d.str(t.op_type);
  if (std::find(std::begin(kElementwiseOpTypes), std::end(kElementwiseOpTypes), type) == std::end(kElementwiseOpTypes)) return false;
  const std::string& out = d.str(t.out_shapes);
  if (out.empty() || out.find(';') != std::string::npos) return false;
  auto inputs = split(d.str(t.shapes));
  if (inputs.empty() || std::any_of(inputs.begin(), inputs.end(), [&](const std::string& s) { return s != out; })) return false;
  double bytes = input_bytes(d.str(t.shapes), t.dtypes >= 0 ? d.str(t.dtypes) : "");
  return bytes > 0 && t.flops / bytes < kMaxIntensity;
}

struct Chains {
  double saved_ns = 0;       // sum over chains of (sum - longest)
  std::size_t longest = 0;   // kernels in the longest chain
  std::string example;       // its op names
  int count = 0;
};

}  // namespace

void unfused_chains(const ProfileData& d, const Report& r, std::vector<Finding>& out, Measured& measured) {
  // elementwise() once per distinct op (type, shapes, dtypes): a recording has millions of tasks
  // and a few hundred distinct ops.
  Groups<5, bool> verdicts;
  auto is_elementwise = [&](const TaskRecord& t) {
    auto [it, fresh] = verdicts.try_emplace({t.task_type, t.op_type, t.shapes, t.out_shapes, t.dtypes}, false);
    if (fresh) it->second = elementwise(d, t);
    return it->second;
  };
  std::map<int, Chains> by_device;
  auto close = [&](std::vector<const TaskRecord*>& chain) {
    if (chain.size() >= 2) {
      Chains& c = by_device[chain.front()->device];
      int64_t sum = 0, longest = 0;
      for (const TaskRecord* t : chain) sum += t->duration(), longest = std::max(longest, t->duration());
      c.saved_ns += static_cast<double>(sum - longest), ++c.count;
      if (chain.size() > c.longest) {
        c.longest = chain.size(), c.example.clear();
        for (const TaskRecord* t : chain) c.example += (c.example.empty() ? "" : " -> ") + d.str(t->name >= 0 ? t->name : t->op_type);
      }
    }
    chain.clear();
  };
  // One open chain per stream, tasks in their order on it (a stream runs its tasks one after
  // another, so start order is task order; no sort of the whole recording).
  Groups<2, std::vector<const TaskRecord*>> open;  // device, stream
  for (const TaskRecord& t : d.tasks) {
    std::vector<const TaskRecord*>& chain = open[{t.device, t.stream}];
    bool ok = is_elementwise(t);
    // An element-wise kernel's inputs all have its output's shape, so "reads the previous output"
    // is: the same shape as the previous kernel's output.
    bool continues = ok && !chain.empty() && chain.back()->start <= t.start &&
                     (chain.back()->out_shapes == t.out_shapes || d.str(chain.back()->out_shapes) == d.str(t.out_shapes));
    if (!continues) close(chain);
    if (ok) chain.push_back(&t);
  }
  std::vector<std::pair<std::array<int64_t, 2>, std::vector<const TaskRecord*>>> streams(open.begin(), open.end());
  std::sort(streams.begin(), streams.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [stream, chain] : streams) close(chain);  // in stream order, as a tie on the longest chain is kept
  std::map<int, int> steps = steps_per_device(d);
  const std::pair<const int, Chains>* worst = nullptr;
  for (const auto& entry : by_device) {
    if (steps[entry.first] == 0) continue;
    if (!worst || entry.second.saved_ns / steps[entry.first] > worst->second.saved_ns / steps[worst->first]) worst = &entry;
  }
  if (!r.steps.empty()) measured["unfused_elementwise"] = 0;
  if (!worst) return;
  double per_step = worst->second.saved_ns / steps[worst->first], step = 0;
  for (const RankRow& row : r.ranks) {
    if (row.device == worst->first) step = row.step;
  }
  measured["unfused_elementwise"] = per_step;
  if (step <= 0 || per_step / step < kChainShare) return;
  const Chains& c = worst->second;
  Finding f{"unfused_elementwise",
            "Unfused element-wise chains: on device " + std::to_string(worst->first) + ", " +
                fmt("%.1f", static_cast<double>(c.count) / steps[worst->first]) +
                " chain(s) per step of memory-bound element-wise kernels each read what the previous one wrote (the "
                "longest: " + c.example + "); fused, each chain would read and write its data once, saving about " +
                ms(per_step) + " per step (" + pct(per_step / step) + ").",
            {{"chains_per_step", static_cast<double>(c.count) / steps[worst->first]},
             {"longest_chain_kernels", static_cast<double>(c.longest)},
             {"saving_ms_per_step", per_step / 1e6},
             {"percent_of_step", 100 * per_step / step}}};
  f.cost_ns_per_step = per_step, f.step_ns = step;
  out.push_back(std::move(f));
}

}  // namespace npukit::prof
