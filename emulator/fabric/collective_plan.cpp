// Collective plans (which rank sends what to whom, phase by phase) and the functional data
// movement of a matched call. See collectives.hpp.
#include <algorithm>
#include <cstring>
#include <functional>

#include "emulator/fabric/collectives.hpp"

namespace npukit::emu {

const char* collective_name(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kAllReduce: return "AllReduce";
    case CollectiveOp::kAllGather: return "AllGather";
    case CollectiveOp::kReduceScatter: return "ReduceScatter";
    case CollectiveOp::kBroadcast: return "Broadcast";
    case CollectiveOp::kAllToAll: return "AlltoAll";
    case CollectiveOp::kSend: return "Send";
    case CollectiveOp::kRecv: return "Recv";
  }
  return "?";
}

Result<CollectiveOp> parse_collective_op(std::string_view name) {
  for (CollectiveOp op : {CollectiveOp::kAllReduce, CollectiveOp::kAllGather, CollectiveOp::kReduceScatter,
                          CollectiveOp::kBroadcast, CollectiveOp::kAllToAll, CollectiveOp::kSend,
                          CollectiveOp::kRecv}) {
    if (name == collective_name(op)) return op;
  }
  return InvalidArgument("unknown collective '" + std::string(name) +
                         "' (expected AllReduce, AllGather, ReduceScatter, Broadcast, AlltoAll, Send or Recv)");
}

const char* collective_label(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kAllReduce: return "hcom_allReduce_";
    case CollectiveOp::kAllGather: return "hcom_allGather_";
    case CollectiveOp::kReduceScatter: return "hcom_reduceScatter_";
    case CollectiveOp::kBroadcast: return "hcom_broadcast_";
    case CollectiveOp::kAllToAll: return "hcom_alltoall_";
    case CollectiveOp::kSend: return "hcom_send_";
    case CollectiveOp::kRecv: return "hcom_receive_";
  }
  return "?";
}

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return "sum";
    case ReduceOp::kProd: return "prod";
    case ReduceOp::kMax: return "max";
    case ReduceOp::kMin: return "min";
  }
  return "?";
}

Result<ReduceOp> parse_reduce_op(std::string_view s) {
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kProd, ReduceOp::kMax, ReduceOp::kMin}) {
    if (s == reduce_op_name(op)) return op;
  }
  return InvalidArgument("unknown reduce op '" + std::string(s) + "' (expected sum, prod, max or min)");
}

Result<CollectiveAlgo> parse_collective_algo(std::string_view s) {
  if (s == "auto") return CollectiveAlgo::kAuto;
  if (s == "ring") return CollectiveAlgo::kRing;
  if (s == "mesh") return CollectiveAlgo::kMesh;
  return InvalidArgument("unknown collective algorithm '" + std::string(s) + "' (expected auto, ring or mesh)");
}

namespace {

void add_ring_phases(Plan& plan, int n, uint64_t chunk, int phases, bool reduce) {
  for (int p = 0; p < phases; ++p) {
    std::vector<Transfer> phase;
    for (int r = 0; r < n; ++r) phase.push_back({r, (r + 1) % n, chunk, reduce});
    plan.push_back(std::move(phase));
  }
}

void add_mesh_phase(Plan& plan, int n, uint64_t chunk, bool reduce) {
  std::vector<Transfer> phase;
  for (int r = 0; r < n; ++r) {
    for (int k = 1; k < n; ++k) phase.push_back({r, (r + k) % n, chunk, reduce});
  }
  plan.push_back(std::move(phase));
}

}  // namespace

Plan plan_collective(const CollectiveCall& c, int n, CollectiveAlgo algo) {
  uint64_t elem = dtype_size(c.dtype);
  uint64_t bytes = c.count * elem;
  bool ring = algo == CollectiveAlgo::kRing;
  Plan plan;
  if (c.op == CollectiveOp::kSend || c.op == CollectiveOp::kRecv) {
    int from = c.op == CollectiveOp::kSend ? c.rank : c.root_or_peer;
    int to = c.op == CollectiveOp::kSend ? c.root_or_peer : c.rank;
    return {{{from, to, bytes, false}}};
  }
  if (n < 2) return plan;  // a communicator of one moves nothing
  uint64_t chunk = (bytes + n - 1) / n;
  switch (c.op) {
    case CollectiveOp::kAllReduce:
      if (ring) {
        add_ring_phases(plan, n, chunk, n - 1, true);
        add_ring_phases(plan, n, chunk, n - 1, false);
      } else {
        add_mesh_phase(plan, n, chunk, true);
        add_mesh_phase(plan, n, chunk, false);
      }
      break;
    case CollectiveOp::kReduceScatter:
      if (ring) add_ring_phases(plan, n, bytes, n - 1, true);
      else add_mesh_phase(plan, n, bytes, true);
      break;
    case CollectiveOp::kAllGather:
      if (ring) add_ring_phases(plan, n, bytes, n - 1, false);
      else add_mesh_phase(plan, n, bytes, false);
      break;
    case CollectiveOp::kBroadcast: {
      std::vector<Transfer> scatter;  // ring: scatter then all-gather; mesh: root to everyone
      for (int r = 0; r < n; ++r) {
        if (r != c.root_or_peer) scatter.push_back({c.root_or_peer, r, ring ? chunk : bytes, false});
      }
      plan.push_back(std::move(scatter));
      if (ring) add_ring_phases(plan, n, chunk, n - 1, false);
      break;
    }
    case CollectiveOp::kAllToAll: add_mesh_phase(plan, n, bytes, false); break;
    default: break;
  }
  return plan;
}

Plan plan_hierarchical_allreduce(const CollectiveCall& c, const std::vector<std::vector<int>>& host_ranks,
                                 CollectiveAlgo intra) {
  const uint64_t bytes = c.count * dtype_size(c.dtype);
  const auto hosts = static_cast<int>(host_ranks.size());
  const auto local = static_cast<int>(host_ranks[0].size());
  const uint64_t local_chunk = (bytes + local - 1) / local;       // each rank's share within its host
  const uint64_t cross_chunk = (local_chunk + hosts - 1) / hosts;  // a ring step of that share
  Plan plan;
  // Level 0 on every host at once, its plan written over local indexes.
  auto within_hosts = [&](bool reduce) {
    Plan steps;
    if (intra == CollectiveAlgo::kRing) add_ring_phases(steps, local, local_chunk, local - 1, reduce);
    else add_mesh_phase(steps, local, local_chunk, reduce);
    for (const auto& step : steps) {
      std::vector<Transfer> phase;
      for (const auto& ranks : host_ranks) {
        for (const Transfer& t : step) phase.push_back({ranks[t.src], ranks[t.dst], t.bytes, t.reduce});
      }
      plan.push_back(std::move(phase));
    }
  };
  if (local > 1) within_hosts(true);
  // Level 1: one ring per local index, across the hosts.
  Plan ring;
  add_ring_phases(ring, hosts, cross_chunk, hosts - 1, true);
  add_ring_phases(ring, hosts, cross_chunk, hosts - 1, false);
  for (const auto& step : ring) {
    std::vector<Transfer> phase;
    for (int i = 0; i < local; ++i) {
      for (const Transfer& t : step) phase.push_back({host_ranks[t.src][i], host_ranks[t.dst][i], t.bytes, t.reduce});
    }
    plan.push_back(std::move(phase));
  }
  if (local > 1) within_hosts(false);
  return plan;
}

namespace {

template <typename T>
T combine(ReduceOp op, T a, T b) {
  switch (op) {
    case ReduceOp::kSum: return a + b;
    case ReduceOp::kProd: return a * b;
    case ReduceOp::kMax: return std::max(a, b);
    case ReduceOp::kMin: return std::min(a, b);
  }
  return a;
}

// Element-wise reduction of `n` equal-length source arrays in rank order into `out`.
template <typename T>
void reduce_into(ReduceOp op, const std::vector<const std::byte*>& src, uint64_t count, std::byte* out) {
  std::vector<T> acc(count);
  std::memcpy(acc.data(), src[0], count * sizeof(T));
  for (std::size_t r = 1; r < src.size(); ++r) {
    const auto* s = reinterpret_cast<const T*>(src[r]);
    for (uint64_t i = 0; i < count; ++i) acc[i] = combine(op, acc[i], s[i]);
  }
  std::memcpy(out, acc.data(), count * sizeof(T));
}

using ViewFn = std::function<std::byte*(int rank, DevPtr ptr, uint64_t bytes)>;

Status reduce_collective(const std::vector<CollectiveCall>& calls, const ViewFn& view, bool scatter) {
  const CollectiveCall& c = calls[0];
  int n = static_cast<int>(calls.size());
  uint64_t elem = dtype_size(c.dtype);
  uint64_t total = scatter ? c.count * n : c.count;  // elements reduced
  std::vector<const std::byte*> src;
  for (int r = 0; r < n; ++r) src.push_back(view(r, calls[r].send, total * elem));
  std::vector<std::byte> out(total * elem);
  if (c.dtype == DType::kFloat32) reduce_into<float>(c.reduce, src, total, out.data());
  else reduce_into<int32_t>(c.reduce, src, total, out.data());
  for (int r = 0; r < n; ++r) {
    uint64_t offset = scatter ? r * c.count * elem : 0;
    uint64_t bytes = c.count * elem;
    std::memcpy(view(r, calls[r].recv, bytes), out.data() + offset, bytes);
  }
  return Status::Ok();
}

Status gather_collective(const std::vector<CollectiveCall>& calls, const ViewFn& view) {
  int n = static_cast<int>(calls.size());
  const CollectiveCall& c = calls[0];
  uint64_t bytes = c.count * dtype_size(c.dtype);
  std::vector<std::byte> all(bytes * n);
  for (int r = 0; r < n; ++r) std::memcpy(all.data() + r * bytes, view(r, calls[r].send, bytes), bytes);
  for (int r = 0; r < n; ++r) std::memcpy(view(r, calls[r].recv, bytes * n), all.data(), bytes * n);
  return Status::Ok();
}

Status all_to_all(const std::vector<CollectiveCall>& calls, const ViewFn& view) {
  int n = static_cast<int>(calls.size());
  uint64_t block = calls[0].count * dtype_size(calls[0].dtype);
  std::vector<std::vector<std::byte>> sent(n);
  for (int r = 0; r < n; ++r) {
    const std::byte* s = view(r, calls[r].send, block * n);
    sent[r].assign(s, s + block * n);
  }
  for (int r = 0; r < n; ++r) {
    std::byte* out = view(r, calls[r].recv, block * n);
    for (int q = 0; q < n; ++q) std::memcpy(out + q * block, sent[q].data() + r * block, block);
  }
  return Status::Ok();
}

}  // namespace

Status move_collective_data(const std::vector<CollectiveCall>& calls,
                            const std::vector<DeviceMemory*>& memory) {
  const CollectiveCall& c = calls[0];
  bool reduces = c.op == CollectiveOp::kAllReduce || c.op == CollectiveOp::kReduceScatter;
  if (reduces && c.dtype != DType::kFloat32 && c.dtype != DType::kInt32) {
    return InvalidArgument(std::string("HCCL error: functional ") + collective_name(c.op) +
                           " supports float32 and int32, got " + dtype_name(c.dtype));
  }
  Status missing;
  ViewFn view = [&](int rank, DevPtr ptr, uint64_t bytes) -> std::byte* {
    std::byte* p = memory[rank]->host_view(ptr, bytes);
    if (p == nullptr && missing.ok()) {
      missing = InvalidArgument(std::string("HCCL error: ") + collective_name(c.op) + " rank " +
                                std::to_string(rank) + ": " + std::to_string(bytes) + " bytes at " +
                                hex_address(ptr) + " are not inside one allocation");
    }
    return p;
  };
  // Check every buffer first so that a bad one leaves all device memory untouched.
  int n = static_cast<int>(calls.size());
  uint64_t elem = dtype_size(c.dtype);
  for (int r = 0; r < n; ++r) {
    uint64_t in = c.count * elem, out = c.count * elem;
    if (c.op == CollectiveOp::kAllGather) out *= n;
    if (c.op == CollectiveOp::kReduceScatter) in *= n;
    if (c.op == CollectiveOp::kAllToAll) in *= n, out *= n;
    bool sends = c.op != CollectiveOp::kBroadcast || r == c.root_or_peer;
    if (sends && calls[r].send != 0) view(r, calls[r].send, in);
    if (calls[r].recv != 0) view(r, calls[r].recv, out);
  }
  if (!missing.ok()) return missing;
  switch (c.op) {
    case CollectiveOp::kAllReduce: return reduce_collective(calls, view, false);
    case CollectiveOp::kReduceScatter: return reduce_collective(calls, view, true);
    case CollectiveOp::kAllGather: return gather_collective(calls, view);
    case CollectiveOp::kAllToAll: return all_to_all(calls, view);
    case CollectiveOp::kBroadcast: {
      uint64_t bytes = c.count * elem;
      std::vector<std::byte> data(bytes);
      std::memcpy(data.data(), view(c.root_or_peer, calls[c.root_or_peer].send, bytes), bytes);
      for (int r = 0; r < n; ++r) std::memcpy(view(r, calls[r].recv, bytes), data.data(), bytes);
      return Status::Ok();
    }
    default: return Status::Ok();  // Send/Recv are moved by the hub (two calls, two ranks)
  }
}

}  // namespace npukit::emu
