// Allreduce sweep on an emulated node, printed with nccl-tests' columns (size, count, type,
// redop, time, algbw, busbw), each size's time beside its alpha-beta-gamma formula
// (emulator/fabric/collective_formula.hpp; budget: within 5%), and the large-message bus
// bandwidth beside its calibration target (ring busbw about 0.8 x the HCCS link rate).
//   allreduce_sweep [--spec 8x910B2] [--algo ring|mesh|auto] [--min 8] [--max 1073741824]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>

#include "emulator/runtime/node.hpp"
#include "emulator/runtime/runtime.hpp"
#include "emulator/engine/timeline.hpp"
#include "emulator/fabric/collective_formula.hpp"

namespace npukit::emu {
namespace {

struct Args {
  std::string node = "8x910B2";
  std::string algo = "ring";
  uint64_t min_bytes = 8;
  uint64_t max_bytes = 1ull << 30;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--spec")) a.node = argv[i + 1];
    if (!std::strcmp(argv[i], "--algo")) a.algo = argv[i + 1];
    if (!std::strcmp(argv[i], "--min")) a.min_bytes = std::stoull(argv[i + 1]);
    if (!std::strcmp(argv[i], "--max")) a.max_bytes = std::stoull(argv[i + 1]);
  }
  return a;
}

int run(const Args& a) {
  auto algo = parse_collective_algo(a.algo);
  auto created = Node::create({.spec = a.node, .seed = 1});
  if (!algo.ok() || !created.ok()) {
    std::fprintf(stderr, "allreduce_sweep: %s\n", (algo.ok() ? created.status() : algo.status()).message().c_str());
    return 2;
  }
  Node& node = **created;
  std::vector<Context*> ranks;
  std::vector<StreamId> streams;
  for (int d = 0; d < node.device_count(); ++d) {
    ranks.push_back(*node.create_context(d, 700 + d, "allreduce_sweep"));
    streams.push_back(ranks.back()->create_stream());
  }
  CommId comm = *node.create_communicator("sweep", ranks, *algo);
  int n = node.device_count();
  std::printf("# emulated %s, %d ranks, algorithm %s\n", a.node.c_str(), n,
              node.collectives().resolved_algo(comm) == CollectiveAlgo::kRing ? "ring" : "mesh");
  std::printf("#%12s %12s %8s %6s %10s %8s %8s %10s %7s\n", "size", "count", "type", "redop", "time", "algbw", "busbw",
              "formula", "error");
  std::printf("#%12s %12s %8s %6s %10s %8s %8s %10s %7s\n", "(B)", "(elements)", "", "", "(us)", "(GB/s)", "(GB/s)", "(us)",
              "(%)");
  AlphaBetaGamma abg = alpha_beta_gamma(node.fabric(), node.spec().device_spec, 0, 1);
  CollectiveAlgo resolved = node.collectives().resolved_algo(comm);
  TimelineRecorder rec;  // time: the collective on the devices, first rank's start to last rank's end
  node.engine().add_observer(&rec);
  double worst = 0;
  double last_busbw = 0;
  for (uint64_t bytes = a.min_bytes; bytes <= a.max_bytes; bytes *= 2) {
    rec.clear();
    for (int r = 0; r < n; ++r) (void)ranks[r]->all_reduce(streams[r], comm, 0, 0, bytes / 4, DType::kFloat32);
    for (int r = 0; r < n; ++r) (void)ranks[r]->synchronize_stream(streams[r]);
    Nanos first = std::numeric_limits<Nanos>::max(), last = 0;
    for (const TaskRecord& t : rec.records()) {
      if (t.kind == TaskKind::kCollective) first = std::min(first, t.start), last = std::max(last, t.end);
    }
    double t = static_cast<double>(last - first) * 1e-9;
    double algbw = static_cast<double>(bytes) / t / 1e9;
    last_busbw = algbw * 2.0 * (n - 1) / n;
    double formula = collective_formula_ns(CollectiveOp::kAllReduce, resolved, n, bytes, abg) * 1e-9;
    double error = 100 * (t / formula - 1);
    worst = std::max(worst, std::abs(error));
    std::printf(" %12llu %12llu %8s %6s %10.2f %8.2f %8.2f %10.2f %+7.2f\n", static_cast<unsigned long long>(bytes),
                static_cast<unsigned long long>(bytes / 4), "float", "sum", t * 1e6, algbw, last_busbw, formula * 1e6, error);
  }
  std::printf("# largest |error| against the formula: %.2f%% (budget <= 5%%)%s\n", worst,
              node.spec().topology == "hccs_full_mesh" ? "" : " (the formula assumes a full mesh; this topology is not one)");
  double link = node.spec().hccs_link_bps / 1e9;
  std::printf("# busbw at %llu B: %.1f GB/s = %.2f x the %.0f GB/s HCCS link (calibration target ~0.8 for ring)\n",
              static_cast<unsigned long long>(a.max_bytes), last_busbw, last_busbw / link, link);
  return 0;
}

}  // namespace
}  // namespace npukit::emu

int main(int argc, char** argv) { return npukit::emu::run(npukit::emu::parse(argc, argv)); }
