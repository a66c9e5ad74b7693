// The sends one rank makes in a collective: what COMMUNICATION_TASK_INFO and msprof's analysis
// tables are written from.
#include "telemetry/collective_traffic.hpp"

#include <gtest/gtest.h>

#include <numeric>

namespace npukit::telemetry {
namespace {

double total(const std::vector<RankSend>& sends) {
  return std::accumulate(sends.begin(), sends.end(), 0.0, [](double t, const RankSend& s) { return t + s.bytes; });
}

TEST(CollectiveTraffic, AMeshAllReduceSendsAnNthToEachPeerInEachPhase) {
  CommGroup g{"dp0", {0, 2, 4, 6}, "MESH", "HCCS"};
  auto sends = rank_sends(g, 1, "hcom_allReduce_", 4e6, {});
  ASSERT_EQ(sends.size(), 3u);
  EXPECT_EQ(sends[0].peer, 0);
  EXPECT_EQ(sends[1].peer, 2);
  EXPECT_EQ(sends[2].peer, 3);
  for (const RankSend& s : sends) {
    EXPECT_EQ(s.transport, "HCCS");
    EXPECT_DOUBLE_EQ(s.bytes, 2e6);  // S/n in the reduce-scatter and S/n in the all-gather
  }
  EXPECT_DOUBLE_EQ(total(sends), 4e6 * busbw_factor("hcom_allReduce_", 4));
}

TEST(CollectiveTraffic, ARingSendsEverythingToTheNextRank) {
  CommGroup g{"world", {0, 1, 2, 3}, "RING", "PCIE"};
  auto sends = rank_sends(g, 3, "hcom_allGather_", 1e6, {});
  ASSERT_EQ(sends.size(), 1u);
  EXPECT_EQ(sends[0].peer, 0);
  EXPECT_EQ(sends[0].transport, "PCIE");
  EXPECT_DOUBLE_EQ(sends[0].bytes, 3e6);  // n x S x (n-1)/n
}

TEST(CollectiveTraffic, AnAllReduceAcrossHostsSendsWithinItsHostThenToItsPeerOnTheNextHost) {
  CommGroup g{"dp0", {0, 1, 2, 3, 8, 9, 10, 11}, "MESH-RING", "RDMA"};
  std::vector<int> hosts{0, 0, 0, 0, 1, 1, 1, 1};
  auto sends = rank_sends(g, 5, "hcom_allReduce_", 8e6, hosts);
  ASSERT_EQ(sends.size(), 4u);
  HierarchicalShares share = hierarchical_shares(8, 2);  // L = 4: 2(L-1)/L = 1.5; 2(H-1)/H/L = 0.25
  EXPECT_DOUBLE_EQ(share.intra, 1.5);
  EXPECT_DOUBLE_EQ(share.inter, 0.25);
  const std::vector<int> host_peers{4, 6, 7};  // rank 5's own host: ranks 4..7
  for (std::size_t i = 0; i < host_peers.size(); ++i) {
    EXPECT_EQ(sends[i].peer, host_peers[i]);
    EXPECT_EQ(sends[i].transport, "HCCS");
    EXPECT_DOUBLE_EQ(sends[i].bytes, 8e6 * 1.5 / 3);
  }
  EXPECT_EQ(sends[3].peer, 1);  // local index 1 on the other host
  EXPECT_EQ(sends[3].transport, "RDMA");
  EXPECT_DOUBLE_EQ(sends[3].bytes, 8e6 * 0.25);
}

// The other collectives of a group across hosts run one ring over all members: RDMA to a member
// on another host, the intra-host link otherwise.
TEST(CollectiveTraffic, AnAllGatherAcrossHostsIsOneRing) {
  CommGroup g{"dp0", {0, 1, 8, 9}, "MESH-RING", "RDMA"};
  std::vector<int> hosts{0, 0, 1, 1};
  auto local = rank_sends(g, 0, "hcom_allGather_", 1e6, hosts);
  ASSERT_EQ(local.size(), 1u);
  EXPECT_EQ(local[0].peer, 1);
  EXPECT_EQ(local[0].transport, "HCCS");
  EXPECT_DOUBLE_EQ(local[0].bytes, 3e6);
  auto remote = rank_sends(g, 1, "hcom_allGather_", 1e6, hosts);
  ASSERT_EQ(remote.size(), 1u);
  EXPECT_EQ(remote[0].peer, 2);
  EXPECT_EQ(remote[0].transport, "RDMA");
}

// A group spread unevenly over hosts (3 members on host 0, 1 on host 1: no hierarchy) runs one
// ring: RDMA to the member on the other host, and between members of one host the link the host
// has between them. It was labelled PCIe on every host, HCCS mesh or not, because a ring was
// taken to mean PCIe.
TEST(CollectiveTraffic, AnUnevenGroupAcrossHostsSendsOverTheLinkItsHostHas) {
  CommGroup g{"dp0", {0, 2, 4, 8}, "RING", "RDMA"};
  std::vector<int> hosts{0, 0, 0, 1};
  auto all_hccs = [](int, int) { return true; };
  auto within = rank_sends(g, 0, "hcom_allReduce_", 4e6, hosts, all_hccs);
  ASSERT_EQ(within.size(), 1u);
  EXPECT_EQ(within[0].peer, 1);
  EXPECT_EQ(within[0].transport, "HCCS");
  EXPECT_DOUBLE_EQ(within[0].bytes, 4e6 * 2 * 3 / 4);
  auto across = rank_sends(g, 2, "hcom_allReduce_", 4e6, hosts, all_hccs);
  ASSERT_EQ(across.size(), 1u);
  EXPECT_EQ(across[0].peer, 3);
  EXPECT_EQ(across[0].transport, "RDMA");
  auto pcie_host = rank_sends(g, 1, "hcom_allReduce_", 4e6, hosts, [](int, int) { return false; });
  EXPECT_EQ(pcie_host[0].transport, "PCIE") << "a host without HCCS between them";
}

// A pipeline's group across hosts (stages 0-1 on host 0, 2-3 on host 1): a Send or Receive goes
// over the link between its two ends, RDMA only between the hosts (each was taken as the group's
// RDMA, the peer unknown).
TEST(CollectiveTraffic, APointToPointTransferGoesOverTheLinkBetweenItsEnds) {
  CommGroup g{"pp0", {0, 1, 8, 9}, "RING", "RDMA"};
  std::vector<int> hosts{0, 0, 1, 1};
  auto hccs = [](int, int) { return true; };
  auto within = p2p_transfer(g, 0, 1, 16e6, hosts, hccs);
  ASSERT_TRUE(within);
  EXPECT_EQ(within->peer, 1);
  EXPECT_EQ(within->transport, "HCCS");
  EXPECT_DOUBLE_EQ(within->bytes, 16e6) << "a Send moves its buffer once";
  auto across = p2p_transfer(g, 1, 2, 16e6, hosts, hccs);
  ASSERT_TRUE(across);
  EXPECT_EQ(across->transport, "RDMA");
  EXPECT_EQ(p2p_transfer(g, 2, 3, 1, hosts, [](int, int) { return false; })->transport, "PCIE");
  EXPECT_EQ(p2p_transfer({"pp0", {0, 1}, "MESH", "HCCS"}, 1, 0, 1, {})->transport, "HCCS") << "one host: the group's link";
  EXPECT_FALSE(p2p_transfer(g, 1, 1, 1, hosts)) << "to itself";
  EXPECT_FALSE(p2p_transfer(g, 1, 4, 1, hosts)) << "a peer outside the group";
  EXPECT_FALSE(p2p_transfer(g, 1, -1, 1, hosts)) << "no peer";
}

// Word b of a collective event: 48 bits of bytes, the peer above them (none: -1).
TEST(CollectiveTraffic, AnEventsWordCarriesItsBytesAndItsPeer) {
  const uint64_t bytes = (uint64_t{1} << 40) + 12345;
  EXPECT_EQ(unpack_bytes(pack_bytes_peer(bytes, 3)), bytes);
  EXPECT_EQ(unpack_peer(pack_bytes_peer(bytes, 3)), 3);
  EXPECT_EQ(unpack_peer(pack_bytes_peer(bytes, 0)), 0);
  EXPECT_EQ(unpack_peer(pack_bytes_peer(bytes, -1)), -1);
  EXPECT_EQ(pack_bytes_peer(bytes, -1), bytes) << "no peer: the bytes alone, as before";
  EXPECT_TRUE(is_receive("hcom_receive_") && is_point_to_point("hcom_send_") && !is_point_to_point("hcom_allReduce_"));
}

// rank_sends has no peer for a Send or Receive (p2p_transfer has) nor a Broadcast's root: no send
// is made up (a receiving rank was written as sending its buffer to every peer).
TEST(CollectiveTraffic, PointToPointAndBroadcastAreNotPlanned) {
  CommGroup g{"pp0", {0, 1, 2, 3}, "MESH", "HCCS"};
  for (const char* op : {"hcom_send_", "hcom_receive_", "hcom_broadcast_"}) EXPECT_TRUE(rank_sends(g, 1, op, 1e6, {}).empty()) << op;
}

TEST(CollectiveTraffic, AGroupOfOneOrARankOutsideItSendsNothing) {
  EXPECT_TRUE(rank_sends({"solo", {3}, "MESH", "HCCS"}, 0, "hcom_allReduce_", 1e6, {}).empty());
  EXPECT_TRUE(rank_sends({"tp0", {0, 1}, "MESH", "HCCS"}, 2, "hcom_allReduce_", 1e6, {}).empty());
  EXPECT_TRUE(rank_sends({"tp0", {0, 1}, "MESH", "HCCS"}, -1, "hcom_allReduce_", 1e6, {}).empty());
}

TEST(CollectiveTraffic, NcclTestsFactors) {
  EXPECT_DOUBLE_EQ(busbw_factor("hcom_allReduce_", 8), 2.0 * 7 / 8);
  EXPECT_DOUBLE_EQ(busbw_factor("hcom_reduceScatter_", 8), 7.0 / 8);
  EXPECT_DOUBLE_EQ(busbw_factor("hcom_broadcast_", 8), 1.0);
  EXPECT_DOUBLE_EQ(algbw_size_factor("hcom_alltoall_", 8), 8.0);
  EXPECT_DOUBLE_EQ(algbw_size_factor("hcom_allReduce_", 8), 1.0);
}

}  // namespace
}  // namespace npukit::telemetry
