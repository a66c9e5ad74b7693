#include "emulator/fabric/collectives.hpp"

#include <algorithm>
#include <cstring>
#include <map>

namespace npukit::emu {

CollectiveHub::CollectiveHub(Engine& engine, Scheduler& scheduler, std::vector<Device>& devices,
                             Fabric& fabric)
    : engine_(engine), scheduler_(scheduler), devices_(devices), fabric_(fabric) {
  engine_.set_collective_sink(this);
}

Result<CommId> CollectiveHub::create_communicator(std::string name, std::vector<int> devices,
                                                  CollectiveAlgo algo) {
  if (devices.empty()) return InvalidArgument("communicator '" + name + "' needs at least one rank");
  std::vector<int> sorted = devices;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    return InvalidArgument("communicator '" + name + "': a device may hold only one rank");
  }
  Comm c;
  c.name = std::move(name);
  c.next_seq.assign(devices.size(), 0);
  c.devices = std::move(devices);
  c.algo = algo;
  describe_hosts(c);
  if (!free_comms_.empty()) {
    CommId id = free_comms_.back();
    free_comms_.pop_back();
    comms_[id] = std::move(c);
    return id;
  }
  comms_.push_back(std::move(c));
  return static_cast<CommId>(comms_.size() - 1);
}

void CollectiveHub::release_communicator(CommId id) {
  if (id >= comms_.size() || comms_[id].retiring) return;
  comms_[id].retiring = true;
  if (comms_[id].live_calls == 0) free_communicator(id);
}

void CollectiveHub::free_communicator(CommId id) {
  comms_[id] = Comm{};
  if (generations_.size() <= id) generations_.resize(id + 1, 0);
  ++generations_[id];
  free_comms_.push_back(id);
}

int CollectiveHub::rank_of(CommId comm, int device) const {
  const auto& d = comms_[comm].devices;
  auto it = std::find(d.begin(), d.end(), device);
  return it == d.end() ? -1 : static_cast<int>(it - d.begin());
}

namespace {

bool all_hccs(const Fabric& fabric, const std::vector<int>& devices) {
  for (int a : devices) {
    for (int b : devices) {
      if (a != b && fabric.relation(a, b) != "HCCS") return false;
    }
  }
  return true;
}

}  // namespace

// The communicator's links, once: a 1,024-rank communicator asks for them at every call.
void CollectiveHub::describe_hosts(Comm& c) const {
  std::map<int, std::vector<int>> by_host;
  for (std::size_t r = 0; r < c.devices.size(); ++r) by_host[fabric_.host_of(c.devices[r])].push_back(static_cast<int>(r));
  c.all_hccs = by_host.size() == 1 && all_hccs(fabric_, c.devices);
  if (by_host.size() < 2) return;
  bool meshed = !fabric_.switched();
  for (auto& [host, ranks] : by_host) {
    std::vector<int> devices;
    for (int r : ranks) devices.push_back(c.devices[static_cast<std::size_t>(r)]);
    meshed = meshed && all_hccs(fabric_, devices);
    c.host_ranks.push_back(std::move(ranks));
  }
  c.intra_algo = meshed ? CollectiveAlgo::kMesh : CollectiveAlgo::kRing;
}

bool CollectiveHub::Comm::hierarchical() const {
  if (algo != CollectiveAlgo::kAuto || host_ranks.size() < 2) return false;
  return std::all_of(host_ranks.begin(), host_ranks.end(), [&](const auto& h) { return h.size() == host_ranks[0].size(); });
}

CollectiveAlgo CollectiveHub::resolved_algo(CommId comm) const {
  const Comm& c = comms_[comm];
  if (c.algo != CollectiveAlgo::kAuto) return c.algo;
  return c.all_hccs && !fabric_.switched() ? CollectiveAlgo::kMesh : CollectiveAlgo::kRing;
}

std::string CollectiveHub::algorithm_name(CommId comm) const {
  const Comm& c = comms_[comm];
  if (c.hierarchical()) return c.intra_algo == CollectiveAlgo::kMesh ? "MESH-RING" : "RING-RING";
  return resolved_algo(comm) == CollectiveAlgo::kMesh ? "MESH" : "RING";
}

const char* CollectiveHub::transport_name(CommId comm) const {
  if (comm_spans_hosts(comm)) return "RDMA";
  return comms_[comm].all_hccs ? "HCCS" : "PCIE";
}

Plan CollectiveHub::plan_for(CommId comm, const CollectiveCall& call) const {
  const Comm& c = comms_[comm];
  if (call.op == CollectiveOp::kAllReduce && c.hierarchical()) return plan_hierarchical_allreduce(call, c.host_ranks, c.intra_algo);
  return plan_collective(call, static_cast<int>(c.devices.size()), resolved_algo(comm));
}

Result<uint32_t> CollectiveHub::add_call(const CollectiveCall& call) {
  if (call.comm >= comms_.size()) return InvalidArgument("invalid communicator " + std::to_string(call.comm));
  Comm& c = comms_[call.comm];
  int n = static_cast<int>(c.devices.size());
  bool p2p = call.op == CollectiveOp::kSend || call.op == CollectiveOp::kRecv;
  bool rooted = call.op == CollectiveOp::kBroadcast;
  if ((p2p || rooted) && (call.root_or_peer < 0 || call.root_or_peer >= n || (p2p && call.root_or_peer == call.rank))) {
    return InvalidArgument(std::string(collective_name(call.op)) + " on communicator '" + c.name +
                           "': invalid " + (p2p ? "peer " : "root ") + std::to_string(call.root_or_peer) +
                           " (ranks 0-" + std::to_string(n - 1) + ")");
  }
  uint64_t seq;
  if (p2p) {
    auto pair = call.op == CollectiveOp::kSend ? std::make_pair(call.rank, call.root_or_peer)
                                               : std::make_pair(call.root_or_peer, call.rank);
    seq = c.p2p_seq[{pair.first * n + pair.second, call.op == CollectiveOp::kSend ? 0 : 1}]++;
  } else {
    seq = c.next_seq[call.rank]++;
  }
  ++c.live_calls;
  if (!free_calls_.empty()) {
    uint32_t index = free_calls_.back();
    free_calls_.pop_back();
    calls_[index] = call;
    call_seq_[index] = seq;
    return index;
  }
  calls_.push_back(call);
  call_seq_.push_back(seq);
  return static_cast<uint32_t>(calls_.size() - 1);
}

CollectiveHub::Key CollectiveHub::key_of(const CollectiveCall& c, uint64_t seq) const {
  if (c.op == CollectiveOp::kSend) return {c.comm, 1, seq, c.rank, c.root_or_peer};
  if (c.op == CollectiveOp::kRecv) return {c.comm, 1, seq, c.root_or_peer, c.rank};
  return {c.comm, 0, seq, 0, 0};
}

void CollectiveHub::release(const Task& task) {
  free_calls_.push_back(task.collective);
  Comm& c = comms_[calls_[task.collective].comm];
  if (--c.live_calls == 0 && c.retiring) free_communicator(calls_[task.collective].comm);
}

bool CollectiveHub::withdraw(const Task& task) {
  auto it = pending_.find(key_of(calls_[task.collective], call_seq_[task.collective]));
  if (it == pending_.end()) return false;
  auto& group = it->second;
  auto mine = std::find_if(group.begin(), group.end(), [&](const Arrival& a) { return a.call == task.collective; });
  if (mine == group.end()) return false;
  group.erase(mine);
  if (group.empty()) pending_.erase(it);
  return true;
}

const char* CollectiveHub::label(const Task& task) const { return collective_label(calls_[task.collective].op); }

void CollectiveHub::arrive(uint32_t stream, const Task& task) {
  const CollectiveCall& call = calls_[task.collective];
  Key key = key_of(call, call_seq_[task.collective]);
  auto& group = pending_[key];
  group.push_back({stream, task.collective});
  bool p2p = std::get<1>(key) == 1;
  std::size_t needed = p2p ? 2 : comms_[call.comm].devices.size();
  if (group.size() < needed) return;
  std::vector<Arrival> ready = std::move(group);
  pending_.erase(key);
  std::sort(ready.begin(), ready.end(), [this](const Arrival& a, const Arrival& b) {
    return calls_[a.call].op == calls_[b.call].op ? calls_[a.call].rank < calls_[b.call].rank
                                                  : calls_[a.call].op == CollectiveOp::kSend;
  });
  execute(ready);
}

Status CollectiveHub::check_group(const std::vector<Arrival>& group) const {
  const CollectiveCall& first = calls_[group[0].call];
  for (const Arrival& a : group) {
    const CollectiveCall& c = calls_[a.call];
    bool p2p_pair = first.op == CollectiveOp::kSend && c.op == CollectiveOp::kRecv;
    bool same = (c.op == first.op || p2p_pair) && c.count == first.count && c.dtype == first.dtype &&
                (p2p_pair || (c.reduce == first.reduce && c.root_or_peer == first.root_or_peer));
    if (!same) {
      return InvalidArgument("HCCL error: mismatched collective on communicator '" + comms_[c.comm].name +
                             "': rank " + std::to_string(first.rank) + " called " + collective_name(first.op) +
                             " of " + std::to_string(first.count) + " " + dtype_name(first.dtype) +
                             ", rank " + std::to_string(c.rank) + " called " + collective_name(c.op) +
                             " of " + std::to_string(c.count) + " " + dtype_name(c.dtype));
    }
  }
  return Status::Ok();
}

Status CollectiveHub::check_links(CommId comm, const Plan& plan) const {
  const Comm& c = comms_[comm];
  for (const auto& phase : plan) {
    for (const Transfer& t : phase) {
      int down = fabric_.down_link_on(c.devices[t.src], c.devices[t.dst]);
      if (down >= 0) {
        return Status(Code::kUnavailable, "HCCL error: " + fabric_.describe(down) +
                                              " is down; collective on communicator '" + c.name +
                                              "' failed (error code 0x80D18001)");
      }
    }
  }
  return Status::Ok();
}

std::vector<HbmTraffic> hbm_traffic_of(const Plan& plan, int n) {
  std::vector<HbmTraffic> hbm(static_cast<std::size_t>(n));
  for (const auto& phase : plan) {
    for (const Transfer& t : phase) {
      HbmTraffic& src = hbm[static_cast<std::size_t>(t.src)];
      HbmTraffic& dst = hbm[static_cast<std::size_t>(t.dst)];
      src.bytes += t.bytes;  // read to send
      dst.bytes += t.bytes, dst.written += t.bytes;  // written as it arrives
      if (t.reduce) dst.bytes += kReduceHbmBytesPerByte * t.bytes, dst.written += t.bytes;
    }
  }
  return hbm;
}

// Each phase's transfers are reserved on the links; a rank is ready for the next phase once
// everything it sent has left and everything it received is in and reduced. A rank reduces what
// it receives one chunk after another as the chunks arrive (its vector units are one resource):
// a mesh rank that receives n-1 chunks at once performs n-1 reductions, not one.
std::vector<Nanos> CollectiveHub::schedule(CommId comm, const Plan& plan, Nanos start) {
  const Comm& c = comms_[comm];
  int n = static_cast<int>(c.devices.size());
  std::vector<Nanos> ready(n, start);
  std::vector<std::vector<std::pair<Nanos, Nanos>>> arrivals(n);  // per receiving rank: (arrival, reduce time)
  for (const auto& phase : plan) {
    std::vector<Nanos> next = ready;
    for (auto& a : arrivals) a.clear();
    for (const Transfer& t : phase) {
      int src = c.devices[t.src];
      int dst = c.devices[t.dst];
      Nanos end = fabric_.reserve(src, dst, t.bytes, ready[t.src]);
      next[t.src] = std::max(next[t.src], end);
      if (!t.reduce) {
        next[t.dst] = std::max(next[t.dst], end);
        continue;
      }
      const DeviceSpec& spec = devices_[dst].spec();
      auto reduce = static_cast<Nanos>(static_cast<double>(kReduceHbmBytesPerByte * t.bytes) /
                                       (spec.hbm.bandwidth_bps * spec.efficiency.hbm) * 1e9);
      arrivals[t.dst].emplace_back(end, reduce);
    }
    for (int r = 0; r < n; ++r) {
      std::sort(arrivals[r].begin(), arrivals[r].end());
      Nanos done = 0;
      for (const auto& [arrival, reduce] : arrivals[r]) done = std::max(done, arrival) + reduce;
      next[r] = std::max(next[r], done);
    }
    ready = std::move(next);
  }
  return ready;
}

void CollectiveHub::execute(const std::vector<Arrival>& group) {
  const CollectiveCall& first = calls_[group[0].call];
  CommId comm = first.comm;
  Comm& c = comms_[comm];
  Nanos now = scheduler_.now();
  Plan plan = plan_for(comm, first);
  Status status = check_group(group);
  if (status.ok()) status = check_links(comm, plan);
  std::vector<Nanos> ends(c.devices.size(), now);
  if (status.ok()) {
    Nanos overhead = devices_[c.devices[first.rank]].spec().runtime.kernel_launch_ns;
    fabric_.account(now);  // keeps the links' queues of unfinished transfers short
    ends = schedule(comm, plan, now + overhead);
    status = move_data(group);
  }
  // A failed collective moves nothing: the engine drops its counts, and it has no rate here.
  const std::vector<HbmTraffic> hbm = hbm_traffic_of(plan, static_cast<int>(c.devices.size()));
  for (const Arrival& a : group) {
    const CollectiveCall& call = calls_[a.call];
    const HbmTraffic& mine = hbm[static_cast<std::size_t>(call.rank)];
    Activity activity;  // its HBM traffic spread over its run, as a kernel's is
    if (status.ok() && ends[call.rank] > now) activity.hbm_bytes_per_ns = static_cast<double>(mine.bytes) / static_cast<double>(ends[call.rank] - now);
    engine_.finish_head(a.stream, ends[call.rank], status, activity, mine);
  }
}

Status CollectiveHub::move_data(const std::vector<Arrival>& group) {
  const CollectiveCall& first = calls_[group[0].call];
  const Comm& c = comms_[first.comm];
  if (!devices_[c.devices[first.rank]].memory().backed()) return Status::Ok();
  if (first.op == CollectiveOp::kSend) {  // group = {send, recv}
    const CollectiveCall& recv = calls_[group[1].call];
    uint64_t bytes = first.count * dtype_size(first.dtype);
    std::byte* from = devices_[c.devices[first.rank]].memory().host_view(first.send, bytes);
    std::byte* to = devices_[c.devices[recv.rank]].memory().host_view(recv.recv, bytes);
    if (from == nullptr || to == nullptr) {
      return InvalidArgument("HCCL error: Send/Recv of " + std::to_string(bytes) +
                             " bytes: a buffer is not inside one allocation");
    }
    std::memcpy(to, from, bytes);
    return Status::Ok();
  }
  std::vector<CollectiveCall> calls(group.size());
  std::vector<DeviceMemory*> memory(group.size());
  for (const Arrival& a : group) {
    const CollectiveCall& call = calls_[a.call];
    calls[call.rank] = call;
    memory[call.rank] = &devices_[c.devices[call.rank]].memory();
  }
  return move_collective_data(calls, memory);
}

}  // namespace npukit::emu
