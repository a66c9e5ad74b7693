// Compilation of the workloads that are not models: sweeps, bandwidth and stress tests, and the
// allocator churn scenario (compiler.hpp).
#include <algorithm>

#include "workloads/compiler.hpp"
#include "workloads/compiler_parts.hpp"
#include "workloads/program_ops.hpp"

namespace npukit::work {

namespace {

using telemetry::ProgramOp;
using Kind = ProgramOp::Kind;
std::string human_bytes(uint64_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB"};
  int u = 0;
  while (b >= 1024 && b % 1024 == 0 && u < 3) b /= 1024, ++u;
  return std::to_string(b) + " " + units[u];
}

}  // namespace

Result<telemetry::Program> compile_special(const Workload& w, const telemetry::Program& base) {
  telemetry::Program p = base;
  const Extra& x = w.extra;
  for (auto& rank : p.ranks) {
    auto& step = rank.step;
    if (w.kind == "burn") {
      int64_t m = x.m.value_or(8192);
      // Its operands and result live in HBM for the run, as a burn tool's do (it held none: a
      // 300 W burn showed 0 MiB of process memory on every surface).
      const auto matrix = static_cast<uint64_t>(m) * static_cast<uint64_t>(m) * detail::dtype_bytes(w.dtype);
      rank.setup = {buffer_op(Kind::kAlloc, "a", matrix), buffer_op(Kind::kAlloc, "b", matrix), buffer_op(Kind::kAlloc, "c", matrix)};
      for (int64_t i = 0; i < x.matmuls_per_step; ++i) step.push_back(matmul_op(m, m, m, w.dtype));
    } else if (w.kind == "hbm-bandwidth") {
      auto bytes = static_cast<uint64_t>(hbm_bandwidth_bytes(w));
      rank.setup = {buffer_op(Kind::kAlloc, "src", bytes), buffer_op(Kind::kAlloc, "dst", bytes)};
      for (int64_t i = 0; i < x.copies_per_step; ++i) {
        step.push_back(memcpy_op("D2D", bytes));
      }
    } else if (w.kind == "allocator-churn") {
      auto bytes = static_cast<uint64_t>(x.bytes.value_or(64 << 10));
      for (int64_t i = 0; i < x.allocs_per_step; ++i) {
        std::string name = "tmp" + std::to_string(i % 4);
        step.push_back(buffer_op(Kind::kAlloc, name, bytes + static_cast<uint64_t>(i % 7) * 4096));
        if (i % 4 == 3) {
          for (int j = 0; j < 4; ++j) step.push_back(buffer_op(Kind::kFree, "tmp" + std::to_string(j)));
        }
      }
      int64_t m = x.m.value_or(2048);
      step.push_back(matmul_op(m, m, m, w.dtype));
    } else {
      return InvalidArgument("workload " + w.name + ": kind '" + w.kind + "' cannot be compiled");
    }
  }
  return p;
}

Result<std::vector<CompiledPoint>> compile_sweep(const Workload& w, const CompileOptions&,
                                                 const telemetry::Program& base) {
  const Extra& x = w.extra;
  std::vector<CompiledPoint> points;
  int64_t iters = x.iters;
  if (w.kind == "allreduce-sweep") {
    const std::string& dtype = x.dtype;
    uint64_t elem = dtype == "float16" || dtype == "bfloat16" ? 2 : dtype == "int8" ? 1 : 4;
    auto lo = static_cast<uint64_t>(x.min_bytes);
    auto hi = static_cast<uint64_t>(x.max_bytes);
    int64_t factor = x.factor;
    for (uint64_t bytes = std::max(lo, elem); bytes <= hi; bytes *= static_cast<uint64_t>(factor)) {
      telemetry::Program p = base;
      p.repeat = iters;
      p.comms = {{"world", x.algo, {}}};
      for (auto& rank : p.ranks) {
        ProgramOp ar = op_of(Kind::kCollective, 0);
        ar.name = "AllReduce";
        ar.count = bytes / elem;
        ar.dtype = dtype;
        ar.reduce = x.redop;
        rank.step = {ar};
      }
      points.push_back({std::move(p), human_bytes(bytes), 0, static_cast<double>(bytes), bytes / elem});
    }
  } else {
    if (x.sizes.empty()) return InvalidArgument("workload " + w.name + ": extra.sizes: expected [[m, k, n], ...]");
    for (const auto& [m, k, n] : x.sizes) {
      telemetry::Program p = base;
      p.repeat = iters;
      for (auto& rank : p.ranks) rank.step = {matmul_op(m, k, n, w.dtype)};
      std::string label = std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n);
      points.push_back({std::move(p), label, 2.0 * static_cast<double>(m) * k * n, 0, 0});
    }
  }
  return points;
}

}  // namespace npukit::work
