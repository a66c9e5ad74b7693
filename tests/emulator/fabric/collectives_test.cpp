// HCCL-like collectives: the alpha-beta model, bandwidths, topology effects, link faults and
// functional results.
#include "emulator/fabric/collectives.hpp"
#include "emulator/fabric/collective_formula.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <numeric>

#include "tests/emulator/fabric/collective_world.hpp"
#include "tests/emulator/test_util.hpp"

namespace npukit::emu {
namespace {

using testing::make_context;
using testing::make_node;
using testing::make_world;
using testing::time_collective;
using testing::World;

constexpr uint64_t kGiB = 1ull << 30;

// Runs one collective on every rank (shape-only) and returns rank 0's duration in ns.
Nanos time_allreduce(World& w, uint64_t bytes, DType dtype = DType::kFloat16) {
  w.rec.clear();
  uint64_t count = bytes / dtype_size(dtype);
  for (std::size_t r = 0; r < w.ranks.size(); ++r) {
    EXPECT_TRUE(w.ranks[r]->all_reduce(w.streams[r], w.comm, 0, 0, count, dtype).ok());
  }
  for (std::size_t r = 0; r < w.ranks.size(); ++r) EXPECT_TRUE(w.ranks[r]->synchronize_stream(w.streams[r]).ok());
  for (const auto& t : w.rec.records()) {
    if (t.device == 0 && t.kind == TaskKind::kCollective) return t.end - t.start;
  }
  ADD_FAILURE() << "no collective record";
  return 0;
}

TEST(Collectives, RingAllreduceFollowsTheAlphaBetaFormula) {
  auto w = make_world({.jitter = 0}, CollectiveAlgo::kRing);
  const NodeSpec& spec = w->node->spec();
  const DeviceSpec& dev = spec.device_spec;
  double n = 8, S = static_cast<double>(kGiB);
  double alpha = static_cast<double>(spec.hccs_latency_ns) * 1e-9;
  double B = spec.hccs_link_bps * spec.link_efficiency;
  double gamma = 3.0 / (dev.hbm.bandwidth_bps * dev.efficiency.hbm);
  double formula = 2 * (n - 1) * alpha + 2 * (n - 1) / n * S / B + (n - 1) / n * S * gamma;
  double t = static_cast<double>(time_allreduce(*w, kGiB)) * 1e-9;
  EXPECT_NEAR(t / formula, 1.0, 0.10) << "emulated " << t * 1e3 << " ms, formula " << formula * 1e3 << " ms";
  double busbw = S / t * 2 * (n - 1) / n;
  EXPECT_NEAR(busbw / spec.hccs_link_bps, 0.8, 0.06) << "busbw " << busbw / 1e9 << " GB/s";
}

TEST(Collectives, SmallMessagesAreLatencyBound) {
  auto w = make_world({.jitter = 0}, CollectiveAlgo::kRing);
  const NodeSpec& spec = w->node->spec();
  double t = static_cast<double>(time_allreduce(*w, 8 * 1024));
  double alpha_part = 2 * 7 * static_cast<double>(spec.hccs_latency_ns);
  EXPECT_GT(alpha_part / t, 0.8);  // latency dominates
  double t2 = static_cast<double>(time_allreduce(*w, 16 * 1024));
  EXPECT_LT(t2 / t, 1.1);          // doubling a small message barely costs more
}

TEST(Collectives, MeshUsesEveryLinkAndBeatsTheRingOnAFullMesh) {
  auto ring = make_world({.jitter = 0}, CollectiveAlgo::kRing);
  auto mesh = make_world({.jitter = 0}, CollectiveAlgo::kAuto);
  EXPECT_EQ(mesh->node->collectives().resolved_algo(mesh->comm), CollectiveAlgo::kMesh);
  double t_ring = static_cast<double>(time_allreduce(*ring, kGiB));
  double t_mesh = static_cast<double>(time_allreduce(*mesh, kGiB));
  EXPECT_LT(t_mesh * 4, t_ring);
  EXPECT_NEAR(t_mesh * 1e-9, 0.006 + 0.002, 0.003);  // ~6 ms of transfer (reference 6) plus reduction
}

TEST(Collectives, LinkCountersSeeTheRingTraffic) {
  auto w = make_world({.jitter = 0}, CollectiveAlgo::kRing);
  time_allreduce(*w, kGiB);
  const Fabric& f = w->node->fabric();
  uint64_t chunk = kGiB / 8;
  EXPECT_EQ(f.links()[f.path(0, 1)[0]].bytes_total, 14 * chunk);
  EXPECT_EQ(f.links()[f.path(1, 0)[0]].bytes_total, 0u);  // the ring goes one way
}

// The device's HBM counters include what a collective moves through HBM (they counted kernels and
// copies only, so an allreduce-bound phase read 0% HBM bandwidth): an AllReduce of S bytes on n
// ranks sends and receives 2(n-1)/n S and reduces (n-1)/n S (3 bytes each), ring or mesh alike.
TEST(Collectives, HbmCountersSeeWhatACollectiveSendsReceivesAndReduces) {
  for (auto algo : {CollectiveAlgo::kRing, CollectiveAlgo::kMesh}) {
    auto w = make_world({.jitter = 0}, algo);
    const uint64_t bytes = 64ull << 20, part = bytes / 8 * 7;  // (n-1)/n S
    time_allreduce(*w, bytes);
    for (int d = 0; d < 8; ++d) {
      const DeviceCounters& c = w->node->device(d).counters();
      EXPECT_EQ(c.hbm_bytes_total, 2 * part + 2 * part + 3 * part) << "device " << d;
      EXPECT_EQ(c.hbm_write_bytes_total, 2 * part + part) << "device " << d;
      EXPECT_GT(c.hbm_bytes_flow, 0.99 * static_cast<double>(c.hbm_bytes_total)) << "spread over its run: the utilization sees it";
    }
  }
}

// A send reads its bytes from the sender's HBM; the receiver writes them into its own.
TEST(Collectives, ASendReadsTheSendersHbmAndWritesTheReceivers) {
  auto w = make_world({.jitter = 0}, CollectiveAlgo::kAuto);
  const uint64_t count = 1 << 20;
  ASSERT_TRUE(w->ranks[2]->send(w->streams[2], w->comm, 0, count, DType::kFloat16, 5).ok());
  ASSERT_TRUE(w->ranks[5]->recv(w->streams[5], w->comm, 0, count, DType::kFloat16, 2).ok());
  ASSERT_TRUE(w->ranks[2]->synchronize_stream(w->streams[2]).ok());
  ASSERT_TRUE(w->ranks[5]->synchronize_stream(w->streams[5]).ok());
  const DeviceCounters& sender = w->node->device(2).counters();
  const DeviceCounters& receiver = w->node->device(5).counters();
  EXPECT_EQ(sender.hbm_bytes_total, 2 * count);
  EXPECT_EQ(sender.hbm_write_bytes_total, 0u);
  EXPECT_EQ(receiver.hbm_bytes_total, 2 * count);
  EXPECT_EQ(receiver.hbm_write_bytes_total, 2 * count);
}

TEST(Collectives, TrafficAcrossThe910MeshesIsSlower) {
  auto w = make_world({.spec = "8x910", .jitter = 0}, CollectiveAlgo::kAuto);
  EXPECT_EQ(w->node->fabric().relation(0, 1), "HCCS");
  EXPECT_EQ(w->node->fabric().relation(0, 4), "SYS");
  EXPECT_EQ(w->node->collectives().resolved_algo(w->comm), CollectiveAlgo::kRing);
  auto p2p = [&](int to) {
    w->rec.clear();
    uint64_t count = 256ull << 20;
    EXPECT_TRUE(w->ranks[0]->send(w->streams[0], w->comm, 0, count, DType::kInt8, to).ok());
    EXPECT_TRUE(w->ranks[to]->recv(w->streams[to], w->comm, 0, count, DType::kInt8, 0).ok());
    EXPECT_TRUE(w->ranks[to]->synchronize_stream(w->streams[to]).ok());
    return w->rec.records().back().end - w->rec.records().back().start;
  };
  Nanos inside = p2p(1);
  Nanos across = p2p(4);
  EXPECT_GT(static_cast<double>(across), 1.5 * static_cast<double>(inside));
}

TEST(Collectives, ContendingTransfersShareALink) {
  auto w = make_world({.jitter = 0}, CollectiveAlgo::kAuto);
  StreamId second0 = w->ranks[0]->create_stream();
  StreamId second1 = w->ranks[1]->create_stream();
  uint64_t count = 512ull << 20;
  ASSERT_TRUE(w->ranks[0]->send(w->streams[0], w->comm, 0, count, DType::kInt8, 1).ok());
  ASSERT_TRUE(w->ranks[1]->recv(w->streams[1], w->comm, 0, count, DType::kInt8, 0).ok());
  ASSERT_TRUE(w->ranks[0]->send(second0, w->comm, 0, count, DType::kInt8, 1).ok());
  ASSERT_TRUE(w->ranks[1]->recv(second1, w->comm, 0, count, DType::kInt8, 0).ok());
  ASSERT_TRUE(w->ranks[1]->synchronize_device().ok());
  Nanos one = w->node->fabric().transfer_time(0, 1, count);
  Nanos last_end = 0;
  for (const auto& r : w->rec.records()) last_end = std::max(last_end, r.end);
  EXPECT_NEAR(static_cast<double>(last_end), 2.0 * one, 0.02 * one);
}

TEST(Collectives, ComputeOverlapsWithCommunication) {
  auto w = make_world({.jitter = 0}, CollectiveAlgo::kRing);
  StreamId compute = w->ranks[0]->create_stream();
  auto mm = w->ranks[0]->prepare("matmul", {testing::fp16({4096, 4096}), testing::fp16({4096, 4096})});
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(w->ranks[0]->enqueue(compute, *mm).ok());
  Nanos comm = time_allreduce(*w, kGiB);
  ASSERT_TRUE(w->ranks[0]->synchronize_stream(compute).ok());
  Nanos last_mm = 0;
  for (const auto& r : w->rec.records()) {
    if (r.kind == TaskKind::kKernel) last_mm = std::max(last_mm, r.end);
  }
  EXPECT_LT(last_mm, comm);  // all 20 matmuls ran inside the allreduce
}

TEST(Collectives, LinkDownFailsTheCollectiveWithItsName) {
  auto w = make_world({.jitter = 0}, CollectiveAlgo::kRing);
  ASSERT_TRUE(w->node->inject_fault(3, FaultKind::kLinkDown).ok());
  for (std::size_t r = 0; r < 8; ++r) ASSERT_TRUE(w->ranks[r]->all_reduce(w->streams[r], w->comm, 0, 0, 1024, DType::kFloat32).ok());
  for (std::size_t r = 0; r < 8; ++r) {
    EXPECT_EQ(w->ranks[r]->synchronize_stream(w->streams[r]).message(),
              "HCCL error: HCCS 2->3 is down; collective on communicator 'world' failed (error code 0x80D18001)");
  }
  for (int d = 0; d < 8; ++d) EXPECT_EQ(w->node->device(d).counters().hbm_bytes_total, 0u) << "a failed collective moved nothing";
  ASSERT_TRUE(w->node->clear_faults(3).ok());
  EXPECT_GT(time_allreduce(*w, 1024), 0);
}

TEST(Collectives, MismatchedCallsFailOnEveryRank) {
  auto w = make_world({.jitter = 0}, CollectiveAlgo::kRing, 2);
  ASSERT_TRUE(w->ranks[0]->all_reduce(w->streams[0], w->comm, 0, 0, 1024, DType::kFloat32).ok());
  ASSERT_TRUE(w->ranks[1]->all_gather(w->streams[1], w->comm, 0, 0, 512, DType::kFloat32).ok());
  std::string expected = "HCCL error: mismatched collective on communicator 'world': rank 0 called AllReduce "
                         "of 1024 float32, rank 1 called AllGather of 512 float32";
  EXPECT_EQ(w->ranks[0]->synchronize_stream(w->streams[0]).message(), expected);
  EXPECT_EQ(w->ranks[1]->synchronize_stream(w->streams[1]).message(), expected);
}

// Functional collectives: upload per-rank data, run, download every rank's result.
struct Functional {
  std::unique_ptr<World> w = make_world({.functional = true, .jitter = 0}, CollectiveAlgo::kRing, 4);
  std::vector<DevPtr> send, recv;
  Functional(std::size_t in_elems, std::size_t out_elems, const std::function<float(int, std::size_t)>& value) {
    for (int r = 0; r < 4; ++r) {
      std::vector<float> host(in_elems);
      for (std::size_t i = 0; i < in_elems; ++i) host[i] = value(r, i);
      send.push_back(*w->ranks[r]->malloc(in_elems * 4));
      recv.push_back(*w->ranks[r]->malloc(out_elems * 4));
      EXPECT_TRUE(w->ranks[r]->memcpy_h2d(w->streams[r], send[r], host.data(), in_elems * 4).ok());
      EXPECT_TRUE(w->ranks[r]->synchronize_stream(w->streams[r]).ok());
    }
  }
  std::vector<float> result(int r, std::size_t elems) {
    std::vector<float> out(elems);
    EXPECT_TRUE(w->ranks[r]->memcpy_d2h(w->streams[r], out.data(), recv[r], elems * 4).ok());
    EXPECT_TRUE(w->ranks[r]->synchronize_stream(w->streams[r]).ok());
    return out;
  }
};

TEST(Collectives, FunctionalAllreduceIsExactForEveryOp) {
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kProd, ReduceOp::kMax, ReduceOp::kMin}) {
    Functional f(1000, 1000, [](int r, std::size_t i) { return static_cast<float>((r + 1) * 3 + (i % 5)); });
    for (int r = 0; r < 4; ++r) {
      ASSERT_TRUE(f.w->ranks[r]->all_reduce(f.w->streams[r], f.w->comm, f.send[r], f.recv[r], 1000,
                                            DType::kFloat32, op).ok());
    }
    for (int r = 0; r < 4; ++r) {
      auto got = f.result(r, 1000);
      for (std::size_t i = 0; i < 1000; ++i) {
        float v[4];
        for (int q = 0; q < 4; ++q) v[q] = static_cast<float>((q + 1) * 3 + (i % 5));
        float want = op == ReduceOp::kSum ? v[0] + v[1] + v[2] + v[3]
                   : op == ReduceOp::kProd ? v[0] * v[1] * v[2] * v[3]
                   : op == ReduceOp::kMax ? v[3] : v[0];
        ASSERT_EQ(got[i], want) << reduce_op_name(op) << " rank " << r << " element " << i;
      }
    }
  }
}

TEST(Collectives, FunctionalGatherScatterBroadcastAlltoall) {
  auto id = [](int r, std::size_t i) { return static_cast<float>(r * 100 + static_cast<int>(i)); };
  {
    Functional f(8, 32, id);
    for (int r = 0; r < 4; ++r) ASSERT_TRUE(f.w->ranks[r]->all_gather(f.w->streams[r], f.w->comm, f.send[r], f.recv[r], 8, DType::kFloat32).ok());
    auto got = f.result(2, 32);
    for (std::size_t i = 0; i < 32; ++i) EXPECT_EQ(got[i], id(static_cast<int>(i / 8), i % 8));
  }
  {
    Functional f(16, 4, id);  // ReduceScatter: 4 ranks x 4 elements
    for (int r = 0; r < 4; ++r) ASSERT_TRUE(f.w->ranks[r]->reduce_scatter(f.w->streams[r], f.w->comm, f.send[r], f.recv[r], 4, DType::kFloat32).ok());
    auto got = f.result(1, 4);
    for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(got[i], 600 + 4 * (4 + static_cast<float>(i)));
  }
  {
    Functional f(8, 8, id);
    for (int r = 0; r < 4; ++r) ASSERT_TRUE(f.w->ranks[r]->broadcast(f.w->streams[r], f.w->comm, f.send[r], f.recv[r], 8, DType::kFloat32, 2).ok());
    for (int r = 0; r < 4; ++r) EXPECT_EQ(f.result(r, 8)[5], 205);
  }
  {
    Functional f(8, 8, id);  // AlltoAll: 2 elements per peer
    for (int r = 0; r < 4; ++r) ASSERT_TRUE(f.w->ranks[r]->all_to_all(f.w->streams[r], f.w->comm, f.send[r], f.recv[r], 2, DType::kFloat32).ok());
    auto got = f.result(3, 8);  // block q of rank 3 = rank q's block 3
    for (int q = 0; q < 4; ++q) EXPECT_EQ(got[q * 2 + 1], id(q, 3 * 2 + 1));
  }
  {
    Functional f(8, 8, id);
    ASSERT_TRUE(f.w->ranks[0]->send(f.w->streams[0], f.w->comm, f.send[0], 8, DType::kFloat32, 3).ok());
    ASSERT_TRUE(f.w->ranks[3]->recv(f.w->streams[3], f.w->comm, f.recv[3], 8, DType::kFloat32, 0).ok());
    EXPECT_EQ(f.result(3, 8)[7], 7);
  }
}

TEST(Collectives, BadCallsAreRefusedAtOnce) {
  auto w = make_world({}, CollectiveAlgo::kAuto, 2);
  Context& outsider = make_context(*w->node, 5, 999);
  StreamId s = outsider.create_stream();
  EXPECT_EQ(outsider.all_reduce(s, w->comm, 0, 0, 8, DType::kFloat32).message(),
            "AllReduce: device 5 holds no rank of communicator 'world'");
  EXPECT_EQ(w->ranks[0]->send(w->streams[0], w->comm, 0, 8, DType::kFloat32, 0).message(),
            "Send on communicator 'world': invalid peer 0 (ranks 0-1)");
  EXPECT_EQ(w->ranks[0]->all_reduce(w->streams[0], 7, 0, 0, 8, DType::kFloat32).message(), "invalid communicator 7");
  EXPECT_EQ(w->ranks[0]->all_reduce(w->streams[0], w->comm, 0, 0, 0, DType::kFloat32).message(),
            "AllReduce: count must be > 0");
}

}  // namespace
}  // namespace npukit::emu

namespace npukit::emu {
namespace {

// Every collective, ring and mesh, 8 B to 1 GiB on the 8x910B2 HCCS mesh: within 5% of its
// alpha-beta-gamma formula (collective_formula.hpp), reductions counted as each rank performs them.
TEST(Collectives, EveryCollectiveFollowsItsFormulaFrom8BytesTo1GiB) {
  for (CollectiveAlgo algo : {CollectiveAlgo::kRing, CollectiveAlgo::kMesh}) {
    auto w = make_world({.jitter = 0}, algo);
    AlphaBetaGamma p = alpha_beta_gamma(w->node->fabric(), w->node->spec().device_spec, 0, 1);
    for (CollectiveOp op : {CollectiveOp::kAllReduce, CollectiveOp::kReduceScatter, CollectiveOp::kAllGather,
                            CollectiveOp::kAllToAll, CollectiveOp::kBroadcast}) {
      for (uint64_t bytes = 8; bytes <= kGiB; bytes *= 8) {
        double formula = collective_formula_ns(op, algo, 8, bytes, p);
        auto emulated = static_cast<double>(time_collective(*w, op, bytes));
        EXPECT_NEAR(emulated / formula, 1.0, 0.05)
            << collective_name(op) << (algo == CollectiveAlgo::kRing ? " ring " : " mesh ") << bytes
            << " B: emulated " << emulated << " ns, formula " << formula << " ns";
      }
    }
  }
}

// The case the old schedule got wrong: a mesh rank receives seven chunks at once and reduces
// seven, one after another, not one.
TEST(Collectives, AMeshRankReducesEveryChunkItReceives) {
  auto w = make_world({.jitter = 0}, CollectiveAlgo::kMesh);
  AlphaBetaGamma p = alpha_beta_gamma(w->node->fabric(), w->node->spec().device_spec, 0, 1);
  double reduce_one_chunk = p.gamma_ns_per_byte * static_cast<double>(kGiB / 8);
  auto all_reduce = static_cast<double>(time_collective(*w, CollectiveOp::kAllReduce, kGiB));
  auto all_gather_twice = 2 * collective_formula_ns(CollectiveOp::kAllGather, CollectiveAlgo::kMesh, 8, kGiB / 8, p);
  EXPECT_NEAR(all_reduce - all_gather_twice + p.overhead_ns, 7 * reduce_one_chunk, 0.02 * 7 * reduce_one_chunk);
}

}  // namespace
}  // namespace npukit::emu
