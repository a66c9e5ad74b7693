// EventMapper: turns telemetry bus events (telemetry/events.cpp is the table of their payloads)
// into rows of the profile database. The one place that knows both sides.
//
//   kernel      -> TASK (taskType AI_CORE / AI_VECTOR_CORE / AI_CPU by unit) + COMPUTE_TASK_INFO
//                  (name = framework op, opType = NPU kernel, input and output shapes/dtypes, OP
//                  State and HF32 eligibility from the event's aux, formats ND per tensor; "N/A"
//                  for what an older producer's aux lacks) + TASK_PMU_INFO "flops"
//   memcpy      -> TASK (MEMCPY_ASYNC) + MEMCPY_INFO
//   collective  -> TASK (COMMUNICATION) + COMMUNICATION_OP + COMMUNICATION_TASK_INFO, with the
//                  communicator the event names (telemetry/comm_group.hpp): groupName, rankSize,
//                  algType (MESH/RING), dataType (ENUM_HCCL_DATA_TYPE) and count in elements;
//                  one task info row per send this rank makes (telemetry/collective_traffic.hpp:
//                  srcRank, dstRank, size, the send's link and transport, planeId its index,
//                  bandwidth its bytes over the op's time), all on the op's device task; a
//                  one-member group's op is one row to dstRank 4294967295 (local). opName = "<opType>_<group>_<k>" for the k-th op of that type on
//                  the group, so the ranks of one collective share an opName. An event without a
//                  communicator (older producers) gets "N/A" fields, count in bytes, and rankSize
//                  from the devices sharing its opName at finalize.
//   launch      -> CANN_API (the host call's span: start = the call, end = its return),
//                  type acl for kernels, runtime for copies, communication for collectives.
//                  globalTid = pid << 32 | device: the emulator drives each rank from one host
//                  thread and does not publish thread ids.
//   step        -> EMU_STEP;  marker -> MSTX_EVENTS;  alloc/free -> NPU_OP_MEM + EMU_EVENT;
//   others      -> EMU_EVENT (jobs, health, throttling, faults, ECC, links, timeouts).
//
// Timestamps: bus ts (virtual ns since the node started) + clock_base_ns (the node's
// start_realtime_ns) = the database's Unix ns. connectionId = the bus task id.
//
// Thread-safety: one thread (the recorder's) owns a mapper.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "profiler/store/profile_writer.hpp"
#include "telemetry/collective_traffic.hpp"
#include "telemetry/comm_group.hpp"
#include "telemetry/events.hpp"

namespace npukit::prof {

class EventMapper {
 public:
  // Resolves a bus string id (EventCursor::resolve).
  using Resolver = std::function<Result<std::string>(uint32_t)>;

  struct Options {
    int64_t clock_base_ns = 0;
    int64_t link_type = 1;  // ENUM_HCCL_LINK_TYPE of collectives: HCCS, or PCIE on PCIe-only nodes
    int device_base = 0;    // a cluster host's bus: the cluster-wide id of its device 0 (groups list those)
    int host_devices = 0;   // devices per host: cluster-wide device d is on host d / host_devices (0: one host)
    // A host's devices (local ids) joined by an HCCS link: what a send between two members of one
    // host in a group across hosts travels over (else PCIe). Empty: judged from the algorithm.
    std::vector<std::pair<int, int>> hccs_pairs = {};
  };

  static Result<EventMapper> create(ProfileWriter& writer, Resolver resolver, Options options);
  Status map(const telemetry::Event& event);

  // Last bus timestamp mapped, Unix ns (0 before the first event).
  int64_t last_ts_ns() const { return last_ts_; }
  // What a process holds from the device, from a sample of the bus's process table, for a process
  // no `reserved` event has spoken for yet: the totalReserve of its later allocs and frees until
  // one does. Without it an attached recording left totalReserve NULL while a caching allocator's
  // holding stayed put (the event comes only when it changes).
  void note_reserved(int device, uint32_t pid, int64_t bytes) { reserved_.emplace(std::pair{device, pid}, bytes); }

 private:
  struct Descriptor {  // STRING_IDS of a kernel's op fields
    int64_t name = 0, shapes = 0, dtypes = 0, formats = 0;
    int64_t out_shapes = 0, out_dtypes = 0, out_formats = 0, state = 0, hf32 = 0;
  };
  struct Launch {
    int64_t name = 0, type = 0;
  };
  struct Group {  // a communicator, from the collective event's aux string
    int64_t name = 0, algorithm = 0;  // STRING_IDS
    int64_t link_type = 0;            // ENUM_HCCL_LINK_TYPE
    int64_t transport = 0;            // ENUM_HCCL_TRANSPORT_TYPE: RDMA across hosts, SDMA within one
    telemetry::CommGroup info;
    std::vector<int> host_of_rank;  // empty: not known (one host)
    // For a group across hosts: whether two of its ranks on one host have an HCCS link between
    // their NPUs (options_.hccs_pairs), for tf::rank_sends; empty otherwise.
    telemetry::HccsBetween hccs_between;
  };
  telemetry::HccsBetween hccs_between(const telemetry::CommGroup& info) const;
  struct Ids {  // STRING_IDS ids interned once
    int64_t ai_core, ai_vector_core, ai_cpu, memcpy, communication, na, flops, nd, empty, alloc, free;
  };

  EventMapper(ProfileWriter& writer, Resolver resolver, Options options)
      : w_(writer), resolve_(std::move(resolver)), options_(options) {}
  Result<int64_t> string_id(uint32_t bus_id);
  Result<const Descriptor*> descriptor(uint32_t bus_id);
  Result<Launch> launch_kind(uint32_t bus_id);
  Result<const Group*> group(uint32_t bus_id);
  Result<int64_t> task(const telemetry::Event& e, int64_t duration, uint64_t stream_pid, uint64_t task_id,
                       int64_t task_type);
  Status kernel(const telemetry::Event& e);
  Status memcpy(const telemetry::Event& e);
  Status collective(const telemetry::Event& e);
  Status launch(const telemetry::Event& e);
  Status step(const telemetry::Event& e);
  Status marker(const telemetry::Event& e);
  Status node_event(const telemetry::Event& e);
  int64_t unix_ns(uint64_t bus_ts) const { return static_cast<int64_t>(bus_ts) + options_.clock_base_ns; }

  ProfileWriter& w_;
  Resolver resolve_;
  Options options_;
  Ids ids_{};
  // Caches indexed by bus string id (dense, small): -1 = not resolved yet.
  std::vector<int64_t> strings_;
  std::vector<Descriptor> descriptors_;
  std::vector<bool> have_descriptor_;
  std::vector<Launch> launches_;
  std::vector<bool> have_launch_;
  std::map<uint32_t, Group> groups_;  // by bus string id
  // By (device, pid): the bytes its allocator holds, from the last reserved event (NPU_OP_MEM
  // totalReserve; NULL until one was recorded).
  std::map<std::pair<int, uint32_t>, int64_t> reserved_;
  std::map<std::tuple<int, int64_t, int64_t>, int64_t> collective_seq_;  // (device, group, opType) -> count
  int64_t last_ts_ = 0;
};

}  // namespace npukit::prof
