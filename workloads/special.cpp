// Compilation of the workloads that are not models: sweeps, bandwidth and stress tests, and the
// allocator churn scenario (compiler.hpp).
#include <algorithm>

#include "workloads/compiler.hpp"
#include "workloads/program_ops.hpp"

namespace npukit::work {

namespace {

using telemetry::ProgramOp;
using Kind = ProgramOp::Kind;
using nlohmann::json;

int64_t get(const json& extra, const char* key, int64_t fallback) {
  return extra.contains(key) && extra[key].is_number_integer() ? extra[key].get<int64_t>() : fallback;
}

std::string human_bytes(uint64_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB"};
  int u = 0;
  while (b >= 1024 && b % 1024 == 0 && u < 3) b /= 1024, ++u;
  return std::to_string(b) + " " + units[u];
}

}  // namespace

Result<telemetry::Program> compile_special(const Workload& w, const telemetry::Program& base) {
  telemetry::Program p = base;
  const json& x = w.extra;
  for (auto& rank : p.ranks) {
    auto& step = rank.step;
    if (w.kind == "burn") {
      int64_t m = get(x, "m", 8192);
      for (int64_t i = 0; i < get(x, "matmuls_per_step", 20); ++i) step.push_back(matmul_op(m, m, m, w.dtype));
    } else if (w.kind == "hbm-bandwidth") {
      uint64_t bytes = static_cast<uint64_t>(get(x, "bytes", 1ll << 30));
      rank.setup = {buffer_op(Kind::kAlloc, "src", bytes), buffer_op(Kind::kAlloc, "dst", bytes)};
      for (int64_t i = 0; i < get(x, "copies_per_step", 8); ++i) {
        step.push_back(memcpy_op("D2D", bytes));
      }
    } else if (w.kind == "allocator-churn") {
      uint64_t bytes = static_cast<uint64_t>(get(x, "bytes", 64 << 10));
      for (int64_t i = 0; i < get(x, "allocs_per_step", 500); ++i) {
        std::string name = "tmp" + std::to_string(i % 4);
        step.push_back(buffer_op(Kind::kAlloc, name, bytes + static_cast<uint64_t>(i % 7) * 4096));
        if (i % 4 == 3) {
          for (int j = 0; j < 4; ++j) step.push_back(buffer_op(Kind::kFree, "tmp" + std::to_string(j)));
        }
      }
      int64_t m = get(x, "m", 2048);
      step.push_back(matmul_op(m, m, m, w.dtype));
    } else {
      return InvalidArgument("workload " + w.name + ": kind '" + w.kind + "' cannot be compiled");
    }
  }
  return p;
}

Result<std::vector<CompiledPoint>> compile_sweep(const Workload& w, const CompileOptions&,
                                                 const telemetry::Program& base) {
  const json& x = w.extra;
  std::vector<CompiledPoint> points;
  int64_t iters = get(x, "iters", 5);
  if (w.kind == "allreduce-sweep") {
    std::string dtype = x.value("dtype", std::string("float32"));
    uint64_t elem = dtype == "float16" || dtype == "bfloat16" ? 2 : dtype == "int8" ? 1 : 4;
    uint64_t lo = static_cast<uint64_t>(get(x, "min_bytes", 8));
    uint64_t hi = static_cast<uint64_t>(get(x, "max_bytes", 1ll << 30));
    int64_t factor = std::max<int64_t>(2, get(x, "factor", 2));
    for (uint64_t bytes = std::max(lo, elem); bytes <= hi; bytes *= static_cast<uint64_t>(factor)) {
      telemetry::Program p = base;
      p.repeat = iters;
      p.comms = {{"world", x.value("algo", std::string("auto")), {}}};
      for (auto& rank : p.ranks) {
        ProgramOp ar = op_of(Kind::kCollective, 0);
        ar.name = "AllReduce";
        ar.count = bytes / elem;
        ar.dtype = dtype;
        ar.reduce = x.value("redop", std::string("sum"));
        rank.step = {ar};
      }
      points.push_back({std::move(p), human_bytes(bytes), 0, static_cast<double>(bytes), bytes / elem});
    }
  } else {
    if (!x.contains("sizes") || !x["sizes"].is_array()) {
      return InvalidArgument("workload " + w.name + ": extra.sizes: expected [[m, k, n], ...]");
    }
    for (const auto& mkn : x["sizes"]) {
      if (!mkn.is_array() || mkn.size() != 3) return InvalidArgument("workload " + w.name + ": extra.sizes: expected [m, k, n]");
      int64_t m = mkn[0], k = mkn[1], n = mkn[2];
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
