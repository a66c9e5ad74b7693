// The unfused-kernels rule: runs of kernels on one stream that one fused kernel could do, each
// taking the previous one's output as its first input (shapes):
//   - what CANN's graph compiler fuses: the fusion pattern table the workload compiler fuses by
//     (telemetry/op_families.hpp), the ops' families from their names (conv2d, batch_norm, ...);
//   - chains of memory-bound element-wise kernels of any op type (Add, Sigmoid, ...), inputs of
//     the output's shape: what a fused activation or a graph compiler's element-wise pass does.
// Each run is priced as the emulator prices a fused kernel (emulator/kernels/fusion.hpp): the
// values passed between its kernels skip HBM (a kernel that reads its input twice, batch-norm
// statistics first, still has it written and read once), and the kernel takes the longer of its
// cube work and its HBM traffic at the device's bandwidth. The run's time beyond that is the cost.
#include <algorithm>
#include <map>

#include "profiler/analyze/findings_internal.hpp"
#include "profiler/analyze/id_groups.hpp"
#include "profiler/analyze/report_build.hpp"
#include "telemetry/op_families.hpp"

namespace npukit::prof {

namespace {

namespace tf = telemetry;

constexpr double kMaxIntensity = 10;      // FLOP per input byte: memory-bound
constexpr double kRunShare = 0.03;        // of the step, for a finding
constexpr int64_t kMinRateSampleNs = 2000;  // kernels this short say more about overhead than HBM
constexpr double kRatePercentile = 0.9;   // of vector kernels' bytes per ns: the device's HBM rate
constexpr double kLineSpread = 1.2;       // largest over smallest element-wise kernel's bytes, to fit a line

// CANN op types that compute each output element from the same element of their inputs (a
// softmax or a norm has equal shapes too, but reduces along an axis: not fused this way).
constexpr std::string_view kElementwiseOpTypes[] = {
    "Add", "Sub", "Mul", "RealDiv", "Div", "Neg", "Abs", "Exp", "Log", "Sqrt", "Rsqrt", "Square", "Pow",
    "Maximum", "Minimum", "Cast", "Relu", "ReluGrad", "Sigmoid", "SigmoidGrad", "Tanh", "TanhGrad", "Gelu",
    "GeluGrad", "FastGelu", "Swish", "LeakyRelu", "Muls", "Adds", "Axpy", "FusedElementwise"};

std::string_view first_part(const std::string& list) { return std::string_view(list).substr(0, list.find(';')); }

// What the rule needs of a kernel, once per distinct op (name, type, shapes, dtypes): a
// recording has millions of tasks and a few hundred distinct ops.
struct OpFacts {
  tf::Family family = tf::Family::kOther;
  bool cube = false;          // runs on the AI cores' cube unit (AI_CORE), else the vector unit
  bool elementwise = false;   // a memory-bound element-wise op whose inputs have its output's shape
  double bytes = 0;           // inputs and outputs, as their shapes and dtypes say
  double first_out = 0;       // its first output: the value the next kernel of a run reads
  std::string_view in, out;   // first input and first output shape
};

OpFacts facts_of(const ProfileData& d, const TaskRecord& t) {
  OpFacts f;
  f.family = tf::family_of(t.name >= 0 ? d.str(t.name) : "");
  if (f.family == tf::Family::kOther && t.op_type >= 0) f.family = tf::family_of(d.str(t.op_type));
  f.cube = d.str(t.task_type) == "AI_CORE";
  if (t.shapes < 0 || t.out_shapes < 0) return f;
  const std::string& shapes = d.str(t.shapes);
  const std::string& outs = d.str(t.out_shapes);
  f.in = first_part(shapes), f.out = first_part(outs);
  const std::string& dtypes = t.dtypes >= 0 ? d.str(t.dtypes) : "";
  const std::string& out_dtypes = t.out_dtypes >= 0 ? d.str(t.out_dtypes) : "";
  double in_bytes = input_bytes(shapes, dtypes);
  f.bytes = in_bytes + input_bytes(outs, out_dtypes);
  f.first_out = input_bytes(std::string(f.out), std::string(first_part(out_dtypes)));
  std::string_view type = t.op_type >= 0 ? std::string_view(d.str(t.op_type)) : "";
  bool same_shapes = !outs.empty() && outs.find(';') == std::string::npos;
  for (std::size_t at = 0; same_shapes && at <= shapes.size();) {
    std::size_t end = std::min(shapes.find(';', at), shapes.size());
    same_shapes = std::string_view(shapes).substr(at, end - at) == outs;
    at = end + 1;
  }
  f.elementwise = !f.cube && same_shapes && in_bytes > 0 && t.flops / in_bytes < kMaxIntensity &&
                  std::find(std::begin(kElementwiseOpTypes), std::end(kElementwiseOpTypes), type) !=
                      std::end(kElementwiseOpTypes);
  return f;
}

struct Kernel {
  const TaskRecord* task;
  const OpFacts* facts;
};

using Streams = std::map<std::array<int64_t, 2>, std::vector<Kernel>>;  // device, stream: kernels in order

// What a device's kernels say of it: a kernel takes a fixed start on the device, then the longer of
// its arithmetic and its HBM traffic at the device's rate.
struct DeviceRates {
  double start_ns = 0;
  double bytes_per_ns = 0;  // 0: unknown (no vector kernel to tell it)
};

// Each device's rates, from its single-pass element-wise kernels (their time is their start and
// their bytes at the rate): a least-squares line through their bytes and times when their sizes
// differ enough to draw one. Else no start, and a high percentile of its vector kernels' bytes over
// their time (one that reads twice, or computes more, reads slower).
std::map<int, DeviceRates> device_rates(const Streams& streams) {
  struct Samples {
    double n = 0, x = 0, y = 0, xx = 0, xy = 0, lo = 1e300, hi = 0, shortest = 1e300;  // the line's
    std::vector<double> per_ns;
  };
  std::map<int, Samples> devices;
  for (const auto& [key, kernels] : streams) {
    Samples& d = devices[static_cast<int>(key[0])];
    for (const Kernel& k : kernels) {
      const auto ns = static_cast<double>(k.task->duration());
      const double b = k.facts->bytes;
      if (k.facts->cube || b <= 0 || ns < kMinRateSampleNs) continue;
      d.per_ns.push_back(b / ns);
      if (!k.facts->elementwise) continue;
      d.n += 1, d.x += b, d.y += ns, d.xx += b * b, d.xy += b * ns;
      d.lo = std::min(d.lo, b), d.hi = std::max(d.hi, b), d.shortest = std::min(d.shortest, ns);
    }
  }
  std::map<int, DeviceRates> rates;
  for (auto& [device, d] : devices) {
    DeviceRates& r = rates[device];
    if (d.hi >= kLineSpread * d.lo) {
      double slope = (d.n * d.xy - d.x * d.y) / (d.n * d.xx - d.x * d.x);  // ns per byte
      double start = (d.y - slope * d.x) / d.n;
      if (slope > 0 && start >= 0 && start < d.shortest) {
        r = {start, 1 / slope};
        continue;
      }
    }
    if (d.per_ns.empty()) continue;
    auto at = d.per_ns.begin() + static_cast<std::ptrdiff_t>(kRatePercentile * static_cast<double>(d.per_ns.size() - 1));
    std::nth_element(d.per_ns.begin(), at, d.per_ns.end());
    r = {0, *at};
  }
  return rates;
}

// The run's time beyond one fused kernel (ns). Without an HBM rate, the run's time beyond its
// longest kernel (each value read and written once).
double fusion_saving(const Kernel* run, std::size_t n, const DeviceRates& device) {
  const double rate = device.bytes_per_ns;
  double total = 0, longest = 0, cube = 0, traffic = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const auto ns = static_cast<double>(run[i].task->duration());
    const OpFacts& f = *run[i].facts;
    total += ns, longest = std::max(longest, ns);
    if (rate <= 0) continue;
    const double work = std::max(0.0, ns - device.start_ns);
    if (f.cube) {
      cube += work, traffic += f.bytes;
      continue;
    }
    double moved = std::max(f.bytes, work * rate);  // what a memory-bound kernel's time says it moved
    traffic += moved;
    if (i == 0) continue;
    // The value from the kernel before: fused, a single-pass reader saves its write and read; a
    // reader that reads it twice (its time says one more read) has it written and read once.
    double value = run[i - 1].facts->first_out;
    traffic -= moved >= f.bytes + value / 2 ? value : 2 * value;
  }
  if (rate <= 0) return total - longest;
  return std::max(0.0, total - device.start_ns - std::max(cube, std::max(traffic, 0.0) / rate));
}

// How many kernels from `first` one fused kernel would do (1: none).
std::size_t run_length(const std::vector<Kernel>& s, std::size_t first) {
  auto joins = [&](std::size_t i) {
    return i < s.size() && !s[i - 1].facts->out.empty() && s[i].facts->in == s[i - 1].facts->out;
  };
  auto family = [&](std::size_t i) { return s[i].facts->family; };
  std::size_t n = 1;
  for (const tf::FusionPattern& p : tf::fusion_patterns()) n = std::max(n, tf::fusion_extent(p, first, joins, family));
  if (n > 1 || !s[first].facts->elementwise) return n;
  while (joins(first + n) && s[first + n].facts->elementwise && s[first + n].facts->out == s[first].facts->out) ++n;
  return n;
}

struct Runs {
  double saved_ns = 0;
  int count = 0;
  double costliest_ns = -1;
  std::string costliest;  // its kernels' names
};

std::string names_of(const ProfileData& d, const Kernel* run, std::size_t n) {
  std::string out;
  for (std::size_t i = 0; i < n; ++i) {
    const TaskRecord& t = *run[i].task;
    out += (i ? " -> " : "") + d.str(t.name >= 0 ? t.name : t.op_type);
  }
  return out;
}

}  // namespace

void unfused_kernels(const ProfileData& d, const Report& r, std::vector<Finding>& out, Measured& measured) {
  Groups<7, OpFacts> facts;
  Streams streams;
  for (const TaskRecord& t : d.tasks) {
    // Every task of a stream stays in its order: one without shapes (a copy, a kernel recorded
    // without them) ends a run rather than letting the kernels around it join.
    auto [it, fresh] = facts.try_emplace({t.name, t.op_type, t.task_type, t.shapes, t.dtypes, t.out_shapes, t.out_dtypes});
    if (fresh) it->second = facts_of(d, t);
    // A stream runs its tasks one after another, so start order is task order.
    streams[{t.device, t.stream}].push_back({&t, &it->second});
  }
  std::map<int, DeviceRates> rates = device_rates(streams);
  std::map<int, Runs> by_device;
  for (const auto& [key, kernels] : streams) {
    const DeviceRates& rate = rates[static_cast<int>(key[0])];
    for (std::size_t i = 0; i < kernels.size();) {
      std::size_t n = run_length(kernels, i);
      if (n > 1) {
        Runs& runs = by_device[static_cast<int>(key[0])];
        double saved = fusion_saving(&kernels[i], n, rate);
        runs.saved_ns += saved, ++runs.count;
        if (saved > runs.costliest_ns) runs.costliest_ns = saved, runs.costliest = names_of(d, &kernels[i], n);
      }
      i += n;
    }
  }
  std::map<int, int> steps = steps_per_device(d);
  const std::pair<const int, Runs>* worst = nullptr;
  for (const auto& entry : by_device) {
    if (steps[entry.first] == 0) continue;
    if (!worst || entry.second.saved_ns / steps[entry.first] > worst->second.saved_ns / steps[worst->first]) worst = &entry;
  }
  if (!r.steps.empty()) measured["unfused_kernels"] = 0;
  if (!worst) return;
  const int n_steps = steps[worst->first];
  double per_step = worst->second.saved_ns / n_steps, step = 0;
  for (const RankRow& row : r.ranks) {
    if (row.device == worst->first) step = row.step;
  }
  measured["unfused_kernels"] = per_step;
  if (step <= 0 || per_step / step < kRunShare) return;
  const Runs& runs = worst->second;
  Finding f{"unfused_kernels",
            "Unfused kernels: on device " + std::to_string(worst->first) + ", " +
                fmt("%.1f", static_cast<double>(runs.count) / n_steps) +
                " run(s) per step of kernels that one fused kernel could do ran one by one, each passing its "
                "output to the next through HBM (the costliest: " + runs.costliest +
                "); fused, as a graph compiler does, they would save about " + ms(per_step) + " per step (" +
                pct(per_step / step) + ").",
            {{"runs_per_step", static_cast<double>(runs.count) / n_steps},
             {"saving_ms_per_step", per_step / 1e6},
             {"percent_of_step", 100 * per_step / step}}};
  f.cost_ns_per_step = per_step, f.step_ns = step;
  out.push_back(std::move(f));
}

}  // namespace npukit::prof
