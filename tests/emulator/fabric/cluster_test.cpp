// A cluster: hosts of a node spec on one clock, joined by one RoCE port per NPU through a leaf
// switch (or leaves and spines), and AllReduce across hosts run hierarchically as HCCL does.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "emulator/fabric/collective_formula.hpp"
#include "emulator/fabric/collectives.hpp"
#include "emulator/fabric/fabric.hpp"
#include "telemetry/incidents.hpp"
#include "tests/emulator/fabric/collective_world.hpp"
#include "tests/emulator/test_util.hpp"

namespace npukit::emu {
namespace {

using testing::make_context;
using testing::make_node;
using testing::make_world;
using testing::time_collective;
using testing::World;

constexpr uint64_t kMiB = 1ull << 20;

TEST(ClusterSpec, HostsOfANodeAreOneSpecWithEveryDevice) {
  auto spec = load_node_spec("4x8x910B2");
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_EQ(spec->name, "4x8x910B2");
  EXPECT_EQ(spec->host_spec, "8x910B2");
  EXPECT_EQ(spec->hosts, 4);
  EXPECT_EQ(spec->devices_per_host(), 8);
  EXPECT_EQ(spec->device_count(), 32);
  EXPECT_EQ(spec->host_of(17), 2);
  EXPECT_DOUBLE_EQ(spec->roce.port_bps, 25e9) << "200 GbE per direction";
  EXPECT_EQ(spec->scale_out_switch.kind, "leaf");
  auto one = load_node_spec("8x910B2");
  ASSERT_TRUE(one.ok());
  EXPECT_FALSE(one->is_cluster());
  EXPECT_EQ(one->host_spec, "8x910B2");
}

TEST(ClusterSpec, AClusterFileNamesItsHostAndSwitch) {
  auto spec = load_node_spec("4x8x910B2-spine");
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  EXPECT_EQ(spec->hosts, 4);
  EXPECT_EQ(spec->scale_out_switch.kind, "leaf_spine");
  EXPECT_EQ(spec->scale_out_switch.hosts_per_leaf, 2);
  EXPECT_DOUBLE_EQ(spec->scale_out_switch.oversubscription, 2);
}

TEST(ClusterSpec, BadClustersAreOneLineNamingWhat) {
  auto too_many = load_node_spec("1025x8x910B2");
  ASSERT_FALSE(too_many.ok());
  EXPECT_NE(too_many.status().message().find("1025 hosts is out of range [1, 1024]"), std::string::npos)
      << too_many.status().message();
  // A count past any int is out of range too (it read "no node spec"); a count written with a
  // leading zero is not a count ("02x8x910B2" made a 2-host cluster).
  for (const char* huge : {"100000x8x910B2", "99999999999999999999x8x910B2"}) {
    auto r = load_node_spec(huge);
    ASSERT_FALSE(r.ok()) << huge;
    EXPECT_NE(r.status().message().find(" hosts is out of range [1, 1024]"), std::string::npos) << r.status().message();
  }
  auto zero_led = load_node_spec("02x8x910B2");
  ASSERT_FALSE(zero_led.ok());
  EXPECT_NE(zero_led.status().message().find("no node spec '02x8x910B2'"), std::string::npos) << zero_led.status().message();
  auto no_ports = load_node_spec("2x4x310P3");
  ASSERT_FALSE(no_ports.ok());
  EXPECT_NE(no_ports.status().message().find("'4x310P3' has no scale_out section"), std::string::npos)
      << no_ports.status().message();
  auto unknown = load_node_spec("65x910B2");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("a cluster of H hosts is Hx<node>, e.g. 4x8x910B2"), std::string::npos)
      << unknown.status().message();
  std::string file = ::testing::TempDir() + "/bad-cluster.json";
  std::ofstream(file) << R"({"name": "x", "host": "8x910B2", "hosts": 4, "switch": {"kind": "torus"}, "sources": {"s": "t"}})";
  auto torus = load_node_spec(file);
  ASSERT_FALSE(torus.ok());
  EXPECT_NE(torus.status().message().find("field 'switch.kind': expected \"leaf\" or \"leaf_spine\", got \"torus\""),
            std::string::npos) << torus.status().message();
  std::filesystem::remove(file);
  // A misspelt field was ignored: "swich" gave a flat single-leaf fabric without a word; a file
  // without "host" was read as a node and said "field 'device': missing".
  for (auto [text, want] : {std::pair{R"({"name": "x", "host": "8x910B2", "hosts": 4, "swich": {"kind": "leaf_spine"}})",
                                      "field 'swich': unknown field"},
                            std::pair{R"({"name": "x", "host": "8x910B2", "hosts": 4, "switch": {"kind": "leaf", "oversubscribe": 2}})",
                                      "field 'switch.oversubscribe': unknown field"},
                            std::pair{R"({"name": "x", "hosts": 4})", "field 'host': missing"}}) {
    std::ofstream(file) << text;
    auto typo = load_node_spec(file);
    std::filesystem::remove(file);
    ASSERT_FALSE(typo.ok()) << text;
    EXPECT_NE(typo.status().message().find(want), std::string::npos) << typo.status().message();
  }
  for (const char* message : {too_many.status().message().c_str(), torus.status().message().c_str()}) {
    EXPECT_EQ(std::string(message).find('\n'), std::string::npos) << message;
  }
}

TEST(ClusterFabric, HostsTalkThroughTheirOwnRocePorts) {
  auto spec = load_node_spec("2x8x910B2");
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  Fabric fabric(*spec);
  EXPECT_EQ(fabric.hosts(), 2);
  EXPECT_EQ(fabric.path(9, 14).size(), 1u) << "within host 1: its own HCCS mesh";
  EXPECT_EQ(fabric.relation(9, 14), "HCCS");
  EXPECT_EQ(fabric.relation(1, 9), "SYS");
  ASSERT_EQ(fabric.path(1, 9).size(), 2u) << "RoCE up from 1, down to 9";
  EXPECT_EQ(fabric.links()[fabric.path(1, 9)[0]].kind, LinkKind::kRoce);
  EXPECT_EQ(fabric.path(1, 9)[0], fabric.path(1, 12)[0]) << "one port per NPU for every peer";
  EXPECT_NE(fabric.path(1, 9)[0], fabric.path(2, 9)[0]) << "each NPU its own port";
  EXPECT_EQ(fabric.describe(fabric.path(1, 9)[0]), "ROCE 1->host");
  // 100 MB at 25 GB/s x 0.9, plus 5 us per hop each way.
  EXPECT_NEAR(static_cast<double>(fabric.transfer_time(1, 9, 100'000'000)), 100e6 / 22.5e9 * 1e9 + 10'000, 10);
}

TEST(ClusterFabric, AcrossLeavesAFlowTakesOneSpineLaneEachWay) {
  auto spec = load_node_spec("4x8x910B2-spine");
  ASSERT_TRUE(spec.ok()) << spec.status().message();
  Fabric fabric(*spec);
  EXPECT_EQ(fabric.path(0, 8).size(), 2u) << "hosts 0 and 1 share a leaf";
  ASSERT_EQ(fabric.path(0, 16).size(), 4u) << "host 2 is on the other leaf";
  EXPECT_EQ(fabric.links()[fabric.path(0, 16)[1]].kind, LinkKind::kSpine);
  int lanes = 0;
  for (const Link& l : fabric.links()) lanes += l.kind == LinkKind::kSpine ? 1 : 0;
  EXPECT_EQ(lanes, 2 * 2 * 8) << "2 leaves x 2 directions x (16 ports / 2:1 oversubscription)";
  EXPECT_EQ(fabric.path(0, 16)[1], fabric.path(0, 16)[1]) << "a pair keeps its lane (ECMP pins a flow)";
}

std::unique_ptr<World> cluster_world(const std::string& spec, CollectiveAlgo algo = CollectiveAlgo::kAuto) {
  return make_world({.spec = spec, .jitter = 0}, algo, -1);
}

Nanos time_allreduce(World& w, uint64_t bytes) { return time_collective(w, CollectiveOp::kAllReduce, bytes); }

// The hierarchical AllReduce at 2 and 4 hosts, 1 KiB to 1 GiB: within 5% of its alpha-beta-gamma
// formula (HCCS mesh within a host, a ring over the RoCE ports across).
TEST(ClusterCollectives, HierarchicalAllReduceFollowsItsFormulaAt2And4Hosts) {
  for (int hosts : {2, 4}) {
    auto w = cluster_world(std::to_string(hosts) + "x8x910B2");
    const CollectiveHub& hub = w->node->collectives();
    EXPECT_EQ(hub.algorithm_name(w->comm), "MESH-RING");
    EXPECT_STREQ(hub.transport_name(w->comm), "RDMA");
    const DeviceSpec& dev = w->node->spec().device_spec;
    AlphaBetaGamma within = alpha_beta_gamma(w->node->fabric(), dev, 0, 1);
    AlphaBetaGamma across = alpha_beta_gamma(w->node->fabric(), dev, 0, 8);
    for (uint64_t bytes = 1024; bytes <= 1024 * kMiB; bytes *= 8) {
      double formula = hierarchical_allreduce_formula_ns(hosts, 8, bytes, CollectiveAlgo::kMesh, within, across);
      auto emulated = static_cast<double>(time_allreduce(*w, bytes));
      EXPECT_NEAR(emulated / formula, 1.0, 0.05)
          << hosts << " hosts, " << bytes << " B: emulated " << emulated << " ns, formula " << formula << " ns";
    }
  }
}

// A degraded RoCE port ("11-roce": device 11's port) runs at a quarter of its rate: the transfers
// through it, and the hierarchical AllReduce whose ring crosses it, slow down; the HCCS links and
// the PCIe link of the same device do not.
TEST(ClusterCollectives, ADegradedRocePortSlowsTheRingThroughIt) {
  auto w = cluster_world("2x8x910B2");
  Fabric& fabric = w->node->fabric();
  const uint64_t bytes = 64 * kMiB;
  Nanos port = fabric.transfer_time(11, 3, bytes), hccs = fabric.transfer_time(11, 12, bytes);
  Nanos pcie = fabric.transfer_time(11, 9, bytes);
  auto healthy = static_cast<double>(time_allreduce(*w, 256 * kMiB));
  ASSERT_TRUE(w->node->inject_link_fault(11, telemetry::kRocePort, FaultKind::kLinkDegraded).ok());
  EXPECT_NEAR(static_cast<double>(fabric.transfer_time(11, 3, bytes)) / static_cast<double>(port), 4.0, 0.05);
  EXPECT_EQ(fabric.transfer_time(11, 12, bytes), hccs);
  EXPECT_EQ(fabric.transfer_time(11, 9, bytes), pcie) << "same host: HCCS, not the port";
  auto degraded = static_cast<double>(time_allreduce(*w, 256 * kMiB));
  EXPECT_GT(degraded, 1.5 * healthy) << "healthy " << healthy << " ns, degraded " << degraded << " ns";
  auto missing = w->node->inject_link_fault(11, 12, FaultKind::kLinkDegraded);
  EXPECT_TRUE(missing.ok()) << "an HCCS pair is still a link";
  auto bad = w->node->inject_link_fault(99, telemetry::kRocePort, FaultKind::kLinkDegraded);
  EXPECT_FALSE(bad.ok());
}

// The point of the hierarchy: across hosts, each NPU's port carries 1/8 of the data, so a large
// AllReduce over 2 hosts costs far less than one flat ring through the 16 ranks.
TEST(ClusterCollectives, HierarchyBeatsAFlatRingAcrossHosts) {
  auto w = cluster_world("2x8x910B2");
  auto hierarchical = static_cast<double>(time_allreduce(*w, 256 * kMiB));
  auto flat = cluster_world("2x8x910B2", CollectiveAlgo::kRing);
  EXPECT_EQ(flat->node->collectives().algorithm_name(flat->comm), "RING");
  auto ring = static_cast<double>(time_allreduce(*flat, 256 * kMiB));
  EXPECT_LT(hierarchical, 0.8 * ring) << "hierarchical " << hierarchical << " ns, flat ring " << ring << " ns";
}

// The functional result across hosts is the same sum on every rank.
TEST(ClusterCollectives, HierarchicalAllReduceSumsOnEveryRank) {
  auto node = make_node({.spec = "2x8x910B2", .seed = 0, .functional = true, .jitter = 0});
  std::vector<Context*> ranks;
  std::vector<StreamId> streams;
  std::vector<DevPtr> buffers;
  const uint64_t count = 1000;
  for (int d = 0; d < node->device_count(); ++d) {
    ranks.push_back(&make_context(*node, d, 700 + d));
    streams.push_back(ranks.back()->create_stream());
    auto buf = ranks.back()->malloc(count * 4);
    ASSERT_TRUE(buf.ok());
    std::vector<float> values(count, static_cast<float>(d + 1));
    ASSERT_TRUE(ranks.back()->memcpy_h2d(streams.back(), *buf, values.data(), count * 4).ok());
    ASSERT_TRUE(ranks.back()->synchronize_stream(streams.back()).ok());  // `values` goes out of scope
    buffers.push_back(*buf);
  }
  CommId comm = *node->create_communicator("world", ranks, CollectiveAlgo::kAuto);
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    ASSERT_TRUE(ranks[r]->all_reduce(streams[r], comm, buffers[r], buffers[r], count, DType::kFloat32).ok());
  }
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    ASSERT_TRUE(ranks[r]->synchronize_stream(streams[r]).ok());
    std::vector<float> out(count);
    ASSERT_TRUE(ranks[r]->memcpy_d2h(streams[r], out.data(), buffers[r], count * 4).ok());
    ASSERT_TRUE(ranks[r]->synchronize_stream(streams[r]).ok());
    EXPECT_EQ(out[0], 136.0f) << "rank " << r;  // 1 + 2 + ... + 16
    EXPECT_EQ(out[count - 1], 136.0f) << "rank " << r;
  }
}

}  // namespace
}  // namespace npukit::emu
