#include "telemetry/collective_traffic.hpp"

#include <algorithm>
#include <map>

namespace npukit::telemetry {

namespace {

// AllGather, ReduceScatter and AlltoAll move n x the per-rank count (nccl-tests' PERFORMANCE.md).
bool gathered(std::string_view op) {
  return op.find("allGather") != std::string_view::npos || op.find("reduceScatter") != std::string_view::npos ||
         op.find("alltoall") != std::string_view::npos;
}

// The link between two members of one host: as `hccs_between` says, else by the algorithm.
std::string intra_host_link(const CommGroup& g, int a, int b, const HccsBetween& hccs_between) {
  bool hccs = hccs_between ? hccs_between(a, b) : g.algorithm.rfind("MESH", 0) == 0;
  return hccs ? "HCCS" : "PCIE";
}

// The hierarchical sends of `rank`: its own host's members, then the same local index on the next host.
std::vector<RankSend> hierarchical_sends(const CommGroup& g, int rank, double bytes, std::span<const int> host_of_rank,
                                         const HccsBetween& hccs_between) {
  std::map<int, std::vector<int>> by_host;  // host -> its ranks, in order
  for (int r = 0; r < g.size(); ++r) by_host[host_of_rank[static_cast<std::size_t>(r)]].push_back(r);
  const auto here = by_host.find(host_of_rank[static_cast<std::size_t>(rank)]);
  const std::vector<int>& local = here->second;
  const auto index = static_cast<std::size_t>(std::find(local.begin(), local.end(), rank) - local.begin());
  const bool mesh = g.algorithm.rfind("MESH", 0) == 0;
  const HierarchicalShares share = hierarchical_shares(g.size(), static_cast<double>(by_host.size()));
  std::vector<int> intra;
  for (std::size_t p = 0; p < local.size(); ++p) {
    if (local[p] != rank && (mesh || p == (index + 1) % local.size())) intra.push_back(local[p]);
  }
  std::vector<RankSend> out;
  for (int peer : intra) {
    out.push_back({peer, intra_host_link(g, rank, peer, hccs_between), share.intra * bytes / static_cast<double>(intra.size())});
  }
  auto next = std::next(here) == by_host.end() ? by_host.begin() : std::next(here);
  if (next != here && index < next->second.size()) out.push_back({next->second[index], "RDMA", share.inter * bytes});
  return out;
}

// The link between members `a` and `b`: the group's own within a host; across hosts RDMA to a
// member on another host, else HCCS or PCIe as intra_host_link says.
std::string link_between(const CommGroup& g, int a, int b, std::span<const int> host_of_rank, const HccsBetween& hccs_between) {
  const bool across_hosts = host_of_rank.size() == static_cast<std::size_t>(g.size()) && g.link == "RDMA";
  if (!across_hosts) return g.link;
  if (host_of_rank[static_cast<std::size_t>(a)] != host_of_rank[static_cast<std::size_t>(b)]) return "RDMA";
  return intra_host_link(g, a, b, hccs_between);
}

// The collectives whose sends follow from the group alone.
bool planned(std::string_view op) {
  return op.find("allReduce") != std::string_view::npos || gathered(op);
}

}  // namespace

double algbw_size_factor(std::string_view op, int ranks) { return gathered(op) ? std::max(ranks, 1) : 1; }

double busbw_factor(std::string_view op, int ranks) {
  double n = std::max(ranks, 1);
  if (op.find("allReduce") != std::string_view::npos) return 2 * (n - 1) / n;
  if (gathered(op)) return (n - 1) / n;
  return 1;
}

HierarchicalShares hierarchical_shares(double ranks, double hosts) {
  const double l = ranks / hosts;
  return {2 * (l - 1) / l, 2 * (hosts - 1) / hosts / l};
}

std::vector<RankSend> rank_sends(const CommGroup& g, int rank, std::string_view op_type, double bytes,
                                 std::span<const int> host_of_rank, const HccsBetween& hccs_between) {
  const int n = g.size();
  if (n < 2 || rank < 0 || rank >= n) return {};
  // Point to point and Broadcast: the event names neither the peer nor the root, so who sends
  // to whom is not known here (the op's one row, to no rank, says so).
  if (!planned(op_type)) return {};
  const bool hosts_known = host_of_rank.size() == static_cast<std::size_t>(n);
  const bool across_hosts = hosts_known && g.link == "RDMA";
  if (across_hosts && g.algorithm.find('-') != std::string::npos && op_type.find("allReduce") != std::string_view::npos) {
    return hierarchical_sends(g, rank, bytes, host_of_rank, hccs_between);
  }
  // A flat plan: every other member on a mesh, the next one on a ring (every collective across
  // hosts but AllReduce runs as one ring over all the members).
  const bool ring = g.algorithm == "RING" || across_hosts;
  std::vector<int> peers;
  for (int p = 0; p < n; ++p) {
    if (p != rank && (!ring || p == (rank + 1) % n)) peers.push_back(p);
  }
  const double sent = bytes * algbw_size_factor(op_type, n) * busbw_factor(op_type, n);
  std::vector<RankSend> out;
  for (int peer : peers) {
    out.push_back({peer, link_between(g, rank, peer, host_of_rank, hccs_between), sent / static_cast<double>(peers.size())});
  }
  return out;
}

std::optional<RankSend> p2p_transfer(const CommGroup& g, int rank, int peer, double bytes, std::span<const int> host_of_rank,
                                     const HccsBetween& hccs_between) {
  const int n = g.size();
  if (rank < 0 || rank >= n || peer < 0 || peer >= n || peer == rank) return std::nullopt;
  return RankSend{peer, link_between(g, rank, peer, host_of_rank, hccs_between), bytes};
}

}  // namespace npukit::telemetry
