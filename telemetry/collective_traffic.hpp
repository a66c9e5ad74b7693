// What a collective moves: nccl-tests' bandwidth factors, HCCL's split of an AllReduce across
// hosts, and the sends one rank makes, peer by peer. The profile's COMMUNICATION_TASK_INFO rows
// (one per send), msprof's communication analysis tables and the report's algbw/busbw all read
// this one plan.
//
// op_type is HCCL's name of the collective ("hcom_allReduce_", "hcom_allGather_",
// "hcom_reduceScatter_", "hcom_alltoall_", "hcom_broadcast_"); a name holding none of these
// moves its bytes once.
//
// Thread-safety: pure functions.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "telemetry/comm_group.hpp"

namespace npukit::telemetry {

// A pipeline's point-to-point ops: Send ("hcom_send_") and Receive ("hcom_receive_").
inline bool is_receive(std::string_view op_type) { return op_type.starts_with("hcom_receive"); }
inline bool is_point_to_point(std::string_view op_type) { return op_type.starts_with("hcom_send") || is_receive(op_type); }

// nccl-tests' algbw data size factor (x bytes per rank: n for AllGather, ReduceScatter and
// AlltoAll) and busbw factor (AllReduce 2(n-1)/n, the gathered ones (n-1)/n, else 1).
double algbw_size_factor(std::string_view op_type, int ranks);
double busbw_factor(std::string_view op_type, int ranks);

// HCCL's AllReduce across `hosts` hosts of `ranks` members (L = ranks / hosts per host): the bytes
// each rank sends, as fractions of the op's bytes, within its host (reduce-scatter + all-gather,
// 2(L-1)/L) and across hosts (an allreduce of its 1/L share on the ring of the hosts, 2(H-1)/H/L).
struct HierarchicalShares {
  double intra = 0, inter = 0;
};
HierarchicalShares hierarchical_shares(double ranks, double hosts);

// One send of a rank in one collective: to the member of rank `peer`, over `transport` ("HCCS",
// "PCIE" or "RDMA", as msprof's analysis tables name them), `bytes` bytes.
struct RankSend {
  int peer = 0;
  std::string transport;
  double bytes = 0;
};

// Whether members `a` and `b` (ranks of the group) of one host have a direct HCCS link; the
// others talk through PCIe. Empty: judged from the group's algorithm (a mesh is HCCS, a ring PCIe).
using HccsBetween = std::function<bool(int a, int b)>;

// The sends rank `rank` of `group` makes in one collective of `op_type` over a buffer of `bytes`
// (COMMUNICATION_OP's count x its data type's size), for AllReduce, AllGather, ReduceScatter and
// AlltoAll. Within a host a rank sends the bytes the busbw factor says, spread evenly over its
// peers: every other member on a mesh, the next member on a ring. An AllReduce of a group across
// hosts (algorithm "MESH-RING"/"RING-RING") runs HCCL's hierarchical AllReduce: its intra-host
// share to its own host's members (HCCS on a mesh, PCIE on a ring), its inter-host share over
// RDMA to the member of the same local index on the next host; the group's other collectives run
// one ring over all members, RDMA to a member on another host. A send between members of one
// host in a group across hosts goes over HCCS or PCIe as `hccs_between` says. host_of_rank[r] is
// the host of rank r (any ids; empty: one host). None for a one-member group, or for Send,
// Receive and Broadcast (the event names neither peer nor root).
std::vector<RankSend> rank_sends(const CommGroup& group, int rank, std::string_view op_type, double bytes,
                                 std::span<const int> host_of_rank, const HccsBetween& hccs_between = {});

// The one transfer of a Send or Receive between `rank` and `peer` (ranks of `group`, as the event
// names them): `bytes` over the link between the two (RDMA between hosts of a group across hosts,
// else HCCS or PCIe as above). None when either rank is not a member or they are the same.
std::optional<RankSend> p2p_transfer(const CommGroup& group, int rank, int peer, double bytes,
                                     std::span<const int> host_of_rank, const HccsBetween& hccs_between = {});

}  // namespace npukit::telemetry
