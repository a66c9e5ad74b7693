// A node with one rank (context and stream) per device and one communicator over them, and the
// time of one collective across it: shared by the collective and cluster tests.
#pragma once

#include <algorithm>
#include <limits>
#include <memory>
#include <vector>

#include "emulator/fabric/collectives.hpp"
#include "tests/emulator/test_util.hpp"

namespace npukit::emu::testing {

struct World {
  std::unique_ptr<Node> node;
  std::vector<Context*> ranks;
  std::vector<StreamId> streams;
  CommId comm = 0;
  TimelineRecorder rec;
};

// Ranks on devices 0..n-1 (n < 0: every device of the node).
inline std::unique_ptr<World> make_world(NodeOptions options, CollectiveAlgo algo, int n = 8) {
  auto w = std::make_unique<World>();
  w->node = make_node(options);
  if (n < 0) n = w->node->device_count();
  for (int d = 0; d < n; ++d) {
    w->ranks.push_back(&make_context(*w->node, d, 500 + d));
    w->streams.push_back(w->ranks.back()->create_stream());
  }
  w->comm = *w->node->create_communicator("world", w->ranks, algo);
  w->node->engine().add_observer(&w->rec);
  return w;
}

// One collective of `bytes` (NCCL's counts, fp16) on every rank, shape-only: from the first rank's
// start to the last rank's end, ns.
inline Nanos time_collective(World& w, CollectiveOp op, uint64_t bytes) {
  w.rec.clear();
  const int n = static_cast<int>(w.ranks.size());
  for (int r = 0; r < n; ++r) {
    CollectiveCall c;
    c.op = op;
    c.dtype = DType::kFloat16;
    c.count = bytes / dtype_size(c.dtype);
    c.comm = w.comm;
    c.rank = r;
    EXPECT_TRUE(w.ranks[r]->collective(w.streams[r], c).ok());
  }
  for (int r = 0; r < n; ++r) EXPECT_TRUE(w.ranks[r]->synchronize_stream(w.streams[r]).ok());
  Nanos first = std::numeric_limits<Nanos>::max(), last = 0;
  for (const auto& t : w.rec.records()) {
    if (t.kind != TaskKind::kCollective) continue;
    first = std::min(first, t.start), last = std::max(last, t.end);
  }
  return last - first;
}

}  // namespace npukit::emu::testing
