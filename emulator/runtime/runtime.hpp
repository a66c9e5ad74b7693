// The ACL-like runtime API of one process on one device: streams, events, device memory,
// memcpy and kernel launch, synchronize.
//
// Calls happen at the node's current virtual time (the host is infinitely fast) except where the
// real runtime blocks the host: device malloc/free under the `direct` allocator and the
// synchronize calls, which advance virtual time. Launches are asynchronous: errors found at launch
// (unknown op, bad shapes) are returned at once; errors in the functional work are reported by the
// next synchronize of that stream. Owned by its Node; not thread-safe.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "emulator/device/allocator.hpp"
#include "emulator/fabric/collectives.hpp"
#include "emulator/engine/engine.hpp"
#include "emulator/kernels/fusion.hpp"
#include "emulator/kernels/kernel.hpp"

namespace npukit::emu {

class Node;

using StreamId = uint32_t;
using EventId = uint32_t;

// A tensor in device memory. In shape-only mode `addr` may be 0 (nothing is read or written).
struct DeviceTensor {
  DevPtr addr = 0;
  TensorDesc desc;
};

// A kernel resolved and priced once, to be enqueued many times (programs repeat every step).
struct PreparedKernel {
  const KernelDef* kernel = nullptr;
  std::vector<TensorDesc> inputs;
  std::vector<TensorDesc> outputs;
  Attrs attrs;
  OpCost cost;
  uint64_t written_bytes = 0;  // of cost.bytes, those written to HBM: its outputs
  KernelTiming timing;
  uint32_t block_dim = 0;
  uint32_t descriptor = 0;  // op_descriptor.hpp: op name, shapes, dtypes (for profilers)
};

class Context {
 public:
  int device() const { return device_; }
  uint32_t pid() const { return pid_; }
  const std::string& process_name() const { return name_; }
  Node& node() { return node_; }

  StreamId create_stream();
  EventId create_event();
  const std::vector<StreamId>& streams() const { return streams_; }
  const std::vector<EventId>& events() const { return events_; }

  // Device memory through this context's allocator; OOM is "acl_rt_malloc failed, size=...".
  // malloc/free block the host for the modelled cost (they advance virtual time).
  // Every successful call of these four is reported to the node's observers at the time of the
  // call, before any blocking (node_events.hpp); release_all() reports nothing.
  Result<DevPtr> malloc(uint64_t bytes);
  Status free(DevPtr ptr);
  // The same without blocking: the caller accounts for the returned host time itself
  // (program runners, which must not run the scheduler re-entrantly).
  // `tag` names the buffer for observers (profilers show it).
  Result<AllocResult> allocate(uint64_t bytes, std::string_view tag = "");
  Result<AllocResult> deallocate(DevPtr ptr, std::string_view tag = "");
  Nanos empty_cache_cost() { return allocator_->empty_cache(); }
  void empty_cache();
  AllocatorStats allocator_stats() const { return allocator_->stats(); }
  AllocatorPolicy allocator_policy() const { return allocator_->policy(); }

  // Asynchronous copies. The host buffer must stay valid until the stream is synchronized.
  Status memcpy_h2d(StreamId stream, DevPtr dst, const void* src, uint64_t bytes);
  Status memcpy_d2h(StreamId stream, void* dst, DevPtr src, uint64_t bytes);
  Status memcpy_d2d(StreamId stream, DevPtr dst, DevPtr src, uint64_t bytes);

  // Resolves a framework or kernel op for these inputs and prices it on this device.
  // `block_dim` 0 = all AI cores.
  Result<PreparedKernel> prepare(const std::string& op, const std::vector<TensorDesc>& inputs,
                                 const Attrs& attrs = {}, uint32_t block_dim = 0) const;
  // `op` with a fused epilogue (kernels/fusion.hpp): one launch, priced as the chain's HBM
  // traffic and its arithmetic, the epilogue's on the vector unit (beside a cube-led kernel, after
  // a vector one). Its inputs are op's then each part's extra inputs; shape-only (no CPU kernel).
  Result<PreparedKernel> prepare_fused(const std::string& op, const std::vector<TensorDesc>& inputs,
                                       const Attrs& attrs, const std::vector<FusedPart>& epilogue,
                                       uint32_t block_dim = 0) const;
  // Enqueues a prepared kernel with no data (shape-only fast path).
  Status enqueue(StreamId stream, const PreparedKernel& kernel);
  // Enqueues a prepared kernel on real buffers; in functional mode it computes at completion.
  // Output descriptors must match the inferred ones.
  Status enqueue(StreamId stream, const PreparedKernel& kernel,
                 const std::vector<DeviceTensor>& inputs, const std::vector<DeviceTensor>& outputs);
  // prepare + enqueue in one call.
  Status launch(StreamId stream, const std::string& op, const std::vector<DeviceTensor>& inputs,
                const std::vector<DeviceTensor>& outputs, const Attrs& attrs = {},
                uint32_t block_dim = 0);

  Status record_event(StreamId stream, EventId event);
  Status wait_event(StreamId stream, EventId event);  // stream waits for the event's last record
  Status synchronize_stream(StreamId stream);
  Status synchronize_event(EventId event);
  Status synchronize_device();  // every stream of this context

  // Collectives on a communicator this context holds a rank of (collectives.hpp for counts).
  // Asynchronous like kernels; errors (mismatch, link down) surface at synchronize.
  Status all_reduce(StreamId s, CommId comm, DevPtr send, DevPtr recv, uint64_t count, DType dtype,
                    ReduceOp op = ReduceOp::kSum);
  Status all_gather(StreamId s, CommId comm, DevPtr send, DevPtr recv, uint64_t count, DType dtype);
  Status reduce_scatter(StreamId s, CommId comm, DevPtr send, DevPtr recv, uint64_t count,
                        DType dtype, ReduceOp op = ReduceOp::kSum);
  Status broadcast(StreamId s, CommId comm, DevPtr send, DevPtr recv, uint64_t count, DType dtype,
                   int root);
  Status all_to_all(StreamId s, CommId comm, DevPtr send, DevPtr recv, uint64_t count, DType dtype);
  Status send(StreamId s, CommId comm, DevPtr buf, uint64_t count, DType dtype, int peer);
  Status recv(StreamId s, CommId comm, DevPtr buf, uint64_t count, DType dtype, int peer);
  // The general form the above call.
  Status collective(StreamId s, CollectiveCall call);

  // Whether allocate(bytes) would empty the allocator's cache first (Allocator::would_flush).
  bool allocation_would_flush(uint64_t bytes) const { return allocator_->would_flush(bytes); }
  // Releases every allocation (process exit); returns the bytes the device got back.
  uint64_t release_all();

  // The host thread of this context: each launching call (kernel, copy, collective) takes the
  // device's launch cost (spec runtime.kernel_launch_ns) of host time, one after another from
  // when the host is free; its task reaches the device when the call returns. Records and
  // waits take no host time but are issued in the same order. When the host is next free:
  Nanos host_free() const;
  // Graph mode (CANN's captured graphs): kernels and collectives cost the host no launch each.
  void set_graph_launch(bool on) { graph_launch_ = on; }
  // The framework's own host time per op before it calls the runtime (eager mode only).
  void set_dispatch_ns(Nanos ns) { dispatch_ns_ = ns; }
  // Online compile (torch_npu jit_compile=True), eager mode only: the first launch of an AI Core
  // op for a static shape this context has not compiled costs the device's runtime.op_compile_ns
  // of host time before its launch call (Task::compile_ns). Prebuilt (off, the default): none.
  void set_jit_compile(bool on) { jit_compile_ = on; }

 private:
  friend class Node;
  Context(Node& node, int device, uint32_t pid, std::string name, AllocatorPolicy policy);

  // Ok when the stream (event) is this context's. Inline: every launch checks its stream.
  Status check_stream(StreamId stream) const {
    if (std::find(streams_.begin(), streams_.end(), stream) != streams_.end()) return Status::Ok();
    return not_mine("stream", stream);
  }
  Status check_event(EventId event) const {
    if (std::find(events_.begin(), events_.end(), event) != events_.end()) return Status::Ok();
    return not_mine("event", event);
  }
  Status not_mine(const char* what, uint32_t id) const;  // the error of the checks above
  Status check_range(DevPtr ptr, uint64_t bytes, const char* what) const;
  Status enqueue_copy(StreamId stream, CopyKind kind, uint64_t bytes, uint32_t payload);
  // Stamps `t` with its host call ([host_start, ready_at)) and takes that host time.
  void issue(Task& t, bool launch);
  // The online compile a launch of `kernel` needs first (0 when none).
  Nanos compile_cost(const PreparedKernel& kernel);
  // Queues a checked kernel (its compile, its launch's host time, then the device).
  Status enqueue_kernel(StreamId stream, const PreparedKernel& kernel, uint32_t payload);
  Status wait_until(const std::function<bool()>& done, const std::string& what);

  Node& node_;
  int device_;
  uint32_t pid_;
  std::string name_;
  std::unique_ptr<Allocator> allocator_;
  std::vector<StreamId> streams_;
  std::vector<EventId> events_;
  Nanos host_free_ = 0;  // when the host thread's last call returns
  bool graph_launch_ = false;
  Nanos dispatch_ns_ = 0;
  bool jit_compile_ = false;
  std::unordered_set<uint32_t> compiled_;  // op descriptors compiled online (jit_compile_)
};

}  // namespace npukit::emu
