// HCCL-like collectives: communicators over ranks (one process context per rank, each on its own
// device), AllReduce, AllGather, ReduceScatter, Broadcast, AlltoAll and Send/Recv.
//
// A collective is a task on each rank's stream, so computation on other streams overlaps with
// it. It starts when every participant's stream has reached its call (the n-th collective call
// of each rank on a communicator matches the n-th of the others; Send/Recv match per peer pair),
// then runs as phases of point-to-point transfers over the Fabric:
//   ring: 2(n-1) phases of S/n for AllReduce (n-1 reduce-scatter, n-1 all-gather), n-1 for
//         AllGather/ReduceScatter; mesh: every rank talks to every peer at once (1 or 2 phases).
//   A rank starts phase k when its phase k-1 sends and receives are done and it has reduced what
//   it received, one chunk after another as they arrive (3 bytes of HBM traffic per byte), so a
//   mesh rank receiving n-1 chunks performs n-1 reductions; link contention comes from the
//   Fabric. collective_formula.hpp has the closed forms these schedules agree with.
// `auto` picks mesh when every pair of ranks has a direct HCCS link, ring otherwise (and on a
// switched fabric, whose one port per device a mesh's concurrent sends would share). A
// communicator across the hosts of a cluster runs AllReduce hierarchically under `auto`, as HCCL
// does between servers (plan_hierarchical_allreduce); its other collectives run as one ring.
// In functional mode the data really moves and reductions are computed in rank order, so every
// rank gets bit-identical results. A call on a down link fails on every rank with an HCCL error
// naming the link (no rerouting). Owned by the Node; single-threaded.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "emulator/device/device.hpp"
#include "emulator/engine/engine.hpp"
#include "emulator/fabric/fabric.hpp"
#include "emulator/kernels/tensor.hpp"

namespace npukit::emu {

enum class CollectiveOp : uint8_t { kAllReduce, kAllGather, kReduceScatter, kBroadcast, kAllToAll, kSend, kRecv };
enum class ReduceOp : uint8_t { kSum, kProd, kMax, kMin };
enum class CollectiveAlgo : uint8_t { kAuto, kRing, kMesh };

const char* collective_name(CollectiveOp op);  // "AllReduce", ...
Result<CollectiveOp> parse_collective_op(std::string_view name);
const char* collective_label(CollectiveOp op);  // msprof opType: "hcom_allReduce_", ...
const char* reduce_op_name(ReduceOp op);        // "sum", "prod", "max", "min"
Result<ReduceOp> parse_reduce_op(std::string_view s);
Result<CollectiveAlgo> parse_collective_algo(std::string_view s);  // "auto", "ring", "mesh"

using CommId = uint32_t;

// One rank's part of a collective. Counts follow NCCL: AllReduce/Broadcast/Send/Recv `count`
// elements; AllGather sends `count` and receives n x count; ReduceScatter sends n x count and
// receives `count`; AlltoAll sends and receives `count` per peer (n x count in all).
struct CollectiveCall {
  CollectiveOp op = CollectiveOp::kAllReduce;
  ReduceOp reduce = ReduceOp::kSum;
  DType dtype = DType::kFloat32;
  uint64_t count = 0;
  DevPtr send = 0;
  DevPtr recv = 0;
  int root_or_peer = 0;  // Broadcast root, Send/Recv peer rank
  CommId comm = 0;
  int rank = 0;
};

// HBM bytes a rank moves per byte it reduces: both operands read, the result written.
inline constexpr uint64_t kReduceHbmBytesPerByte = 3;

// One transfer of a plan: rank src sends `bytes` to rank dst, which reduces them if `reduce`.
struct Transfer {
  int src = 0;
  int dst = 0;
  uint64_t bytes = 0;
  bool reduce = false;
};
using Plan = std::vector<std::vector<Transfer>>;  // phases

// The phases of `call` over `n` ranks with the given algorithm (kRing or kMesh).
Plan plan_collective(const CollectiveCall& call, int n, CollectiveAlgo algo);
// Each rank's HBM traffic in a plan: what it sends is read from HBM, what it receives is
// written, and a reduction reads both operands and writes the result (3 bytes per byte reduced,
// the traffic the schedule prices). Indexed by rank.
std::vector<HbmTraffic> hbm_traffic_of(const Plan& plan, int n);
// AllReduce over hosts: a reduce-scatter among each host's ranks (`intra`: ring or mesh, over
// HCCS), then an AllReduce ring among the ranks of equal local index across hosts (each rank
// through its own RoCE port, on 1/L of the data), then an all-gather within each host.
// `host_ranks[h]` lists host h's ranks in local order; every host holds the same number L.
Plan plan_hierarchical_allreduce(const CollectiveCall& call, const std::vector<std::vector<int>>& host_ranks,
                                 CollectiveAlgo intra);
// Moves the data of a matched call in functional mode. `calls[r]` is rank r's part;
// `memory[r]` its device memory.
Status move_collective_data(const std::vector<CollectiveCall>& calls,
                            const std::vector<DeviceMemory*>& memory);

class CollectiveHub final : public CollectiveSink {
 public:
  CollectiveHub(Engine& engine, Scheduler& scheduler, std::vector<Device>& devices, Fabric& fabric);

  // `devices[r]` is the device of rank r; each device at most once.
  Result<CommId> create_communicator(std::string name, std::vector<int> devices, CollectiveAlgo algo);
  // The job that made it ended: its slot is reused by a later communicator once none of its calls
  // is still in flight (a cancelled job's may be), so a node running jobs for months stays flat.
  void release_communicator(CommId id);
  std::size_t comm_count() const { return comms_.size(); }
  // How many communicators the slot `id` has held before its current one: a cache keyed by
  // CommId (the publisher's group strings) must check it, since released slots are reused.
  uint64_t comm_generation(CommId id) const { return id < generations_.size() ? generations_[id] : 0; }
  const std::string& comm_name(CommId id) const { return comms_[id].name; }
  int comm_size(CommId id) const { return static_cast<int>(comms_[id].devices.size()); }
  const std::vector<int>& comm_devices(CommId id) const { return comms_[id].devices; }
  // Whether every pair of the communicator's devices has a direct HCCS link.
  bool comm_all_hccs(CommId id) const { return comms_[id].all_hccs; }
  // Whether its ranks are on more than one host of a cluster.
  bool comm_spans_hosts(CommId id) const { return comms_[id].host_ranks.size() > 1; }
  // msprof's algType for it: "MESH", "RING", or across hosts "<intra>-RING" (level 0 - level 1).
  std::string algorithm_name(CommId id) const;
  // Its transport: "HCCS", "PCIE", or "RDMA" across hosts.
  const char* transport_name(CommId id) const;
  // One rank's call, by the index add_call() returned (TaskRecord::collective).
  const CollectiveCall& call(uint32_t index) const { return calls_[index]; }
  // The rank of `device` in `comm`, or -1.
  int rank_of(CommId comm, int device) const;
  CollectiveAlgo resolved_algo(CommId comm) const;

  // Registers one rank's call; returns the index to put in Task::collective.
  Result<uint32_t> add_call(const CollectiveCall& call);

  void arrive(uint32_t stream, const Task& task) override;
  const char* label(const Task& task) const override;
  // Frees the call's index for reuse once its task ended: a long-running node makes millions of
  // calls, and keeping each was the daemon's steady memory growth (found by bench/soak.sh).
  // Never called for a call still waiting in a group: withdraw() takes such an arrival out first.
  void release(const Task& task) override;
  bool withdraw(const Task& task) override;

 private:
  struct Comm {
    std::string name;
    std::vector<int> devices;
    CollectiveAlgo algo = CollectiveAlgo::kAuto;
    std::vector<uint64_t> next_seq;                  // per rank: collectives issued
    std::map<std::pair<int, int>, uint64_t> p2p_seq;  // (from x n + to, 0 send / 1 recv): issued
    uint64_t live_calls = 0;  // calls added and not yet released
    bool retiring = false;    // release_communicator() was called: free it at live_calls 0
    bool all_hccs = false;    // every pair of its devices has a direct HCCS link
    std::vector<std::vector<int>> host_ranks;  // its ranks by host, when on more than one
    CollectiveAlgo intra_algo = CollectiveAlgo::kRing;  // within a host, under auto
    bool hierarchical() const;  // auto, across hosts, the same number of ranks on each
  };
  void describe_hosts(Comm& c) const;
  Plan plan_for(CommId comm, const CollectiveCall& call) const;
  void free_communicator(CommId id);
  struct Arrival {
    uint32_t stream = 0;
    uint32_t call = 0;
  };
  // key: comm, kind (0 collective, 1 p2p), sequence, (for p2p) low and high rank
  using Key = std::tuple<CommId, int, uint64_t, int, int>;

  Key key_of(const CollectiveCall& c, uint64_t seq) const;
  void execute(const std::vector<Arrival>& group);
  Status check_group(const std::vector<Arrival>& group) const;
  Status check_links(CommId comm, const Plan& plan) const;
  std::vector<Nanos> schedule(CommId comm, const Plan& plan, Nanos start);
  Status move_data(const std::vector<Arrival>& group);

  Engine& engine_;
  Scheduler& scheduler_;
  std::vector<Device>& devices_;
  Fabric& fabric_;
  std::vector<Comm> comms_;
  std::vector<CollectiveCall> calls_;
  std::vector<uint64_t> call_seq_;
  std::vector<uint32_t> free_calls_;  // indexes of calls whose tasks ended
  std::vector<CommId> free_comms_;    // slots of released communicators
  std::vector<uint64_t> generations_;  // by slot: communicators it held before (comm_generation)
  std::map<Key, std::vector<Arrival>> pending_;
};

}  // namespace npukit::emu
