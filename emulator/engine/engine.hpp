// The task engine: streams (in-order queues), events, and the dispatch of tasks onto device
// resources in virtual time.
//
// A stream's head task starts when the task before it has finished, any event it waits for has
// been recorded, and the resources it needs are free (AI cores or AI CPUs for kernels, the copy
// engine of its direction for memcpy). A task that cannot get its resources waits in its device's
// queue and is retried, first fit in arrival order, whenever resources are released.
//
// Functional work (real kernel math, real copies) runs when the task completes, in virtual-time
// order, so results respect stream and event dependencies. An error in that work is sticky on the
// stream (like an asynchronous device error) and reported by the next synchronize.
// Observers see every task with its start and end. Single-threaded: the node's thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "emulator/device/cost_model.hpp"
#include "emulator/device/device.hpp"
#include "emulator/kernels/kernel.hpp"
#include "emulator/engine/scheduler.hpp"
#include "emulator/engine/task_queue.hpp"

namespace npukit::emu {

enum class TaskKind : uint8_t { kKernel, kMemcpy, kEventRecord, kEventWait, kCollective };
const char* task_kind_name(TaskKind k);

inline constexpr uint32_t kNoPayload = UINT32_MAX;

struct Task {
  TaskKind kind = TaskKind::kKernel;
  Unit unit = Unit::kVector;
  CopyKind copy = CopyKind::kHostToDevice;
  uint32_t stream = 0;
  uint32_t event = 0;         // record/wait: the event
  uint64_t event_target = 0;  // wait: the record count that satisfies it
  uint32_t block_dim = 0;
  uint32_t payload = kNoPayload;  // functional work to run at completion
  uint32_t collective = 0;        // kCollective: the call's index in the CollectiveHub
  uint32_t descriptor = 0;        // kernels: op_descriptor.hpp id
  const KernelDef* kernel = nullptr;
  KernelTiming timing;
  double flops = 0;
  uint64_t bytes = 0;  // kernel HBM traffic or copy size
  uint64_t written = 0;  // kernels: of `bytes`, those written to HBM (its outputs)
  uint64_t id = 0;     // assigned by the engine at enqueue, unique per node
  // The host call that queued it: [host_start, ready_at). The device never starts a task before
  // its call returned; 0 = now (a call that takes no host time).
  Nanos host_start = 0;
  // Set by the engine at enqueue to max(now, ready_at): when the task is in its stream's queue.
  Nanos ready_at = 0;
  Nanos compile_ns = 0;   // of [host_start, ready_at), an online compile of the op before its launch
};

// HBM bytes a task moved, read + written, and of those the written ones (collectives: engine's
// finish_head; kernels and copies carry theirs in the Task).
struct HbmTraffic {
  uint64_t bytes = 0;
  uint64_t written = 0;
};

// What observers are told about a finished task.
struct TaskRecord {
  uint64_t id = 0;
  uint32_t pid = 0;
  int device = 0;
  uint32_t stream = 0;
  TaskKind kind = TaskKind::kKernel;
  Unit unit = Unit::kVector;
  CopyKind copy = CopyKind::kHostToDevice;
  const KernelDef* kernel = nullptr;
  const char* label = nullptr;  // collectives: "hcom_allReduce_", ...
  uint32_t collective = 0;      // collectives: the call's index in the CollectiveHub
  uint32_t descriptor = 0;      // kernels: op_descriptor.hpp id
  uint32_t cores = 0;
  double flops = 0;
  uint64_t bytes = 0;
  Nanos host_start = 0;  // the host call that queued it: [host_start, enqueued)
  Nanos compile_ns = 0;  // of that call, the op's online compile (from host_start)
  Nanos enqueued = 0;
  Nanos start = 0;
  Nanos end = 0;
};

class TaskObserver {
 public:
  virtual ~TaskObserver() = default;
  virtual void on_task_end(const TaskRecord& record) = 0;
  // A task was queued by the host (start/end are not known yet): the host-side launch.
  virtual void on_task_enqueued(const TaskRecord&) {}
};

// Receives collective tasks when they reach the head of their stream (collectives.hpp).
class CollectiveSink {
 public:
  virtual ~CollectiveSink() = default;
  virtual void arrive(uint32_t stream, const Task& task) = 0;
  virtual const char* label(const Task& task) const = 0;
  // The task ended and its observers saw it, or it was dropped unstarted: its call may be
  // forgotten (its index reused).
  virtual void release(const Task& task) = 0;
  // The task's stream is being released while the task waits in arrive() for its group: forget
  // the arrival. False when the group already met (the task ends on its own).
  virtual bool withdraw(const Task& task) = 0;
};

class Engine {
 public:
  // `jitter`: relative spread of kernel and copy durations (0 = exact), drawn per device from
  // a generator seeded by the node's seed, so equal seeds give equal timelines.
  // `task_timeout_ns`: how long a task on a hung AI Core runs before it fails.
  Engine(Scheduler& scheduler, std::vector<Device>& devices, double jitter, Nanos task_timeout_ns);

  void set_collective_sink(CollectiveSink* sink) { collectives_ = sink; }
  // Completes the (collective) head task of `stream` at `at`; a non-ok status becomes the
  // stream's sticky error. `activity` is what the task occupied on its device until then;
  // `hbm` what it moved in HBM, counted when it completes without error.
  void finish_head(uint32_t stream, Nanos at, Status status, const Activity& activity, HbmTraffic hbm = {});

  uint32_t create_stream(int device, uint32_t pid);
  uint32_t create_event(int device);
  // Give a stream's or event's slot back for reuse when its context goes (a daemon creates streams
  // for every job; keeping each was steady memory growth). Work that has not started is dropped
  // (its functional work never runs), as a dead process's queued work is; a collective waiting
  // for ranks that will never come is withdrawn. A task already running finishes first, without
  // its functional work (its buffers are gone), and the slot is freed then. An event's pending
  // when_reached() callbacks are dropped; an event another context's stream waits on is kept.
  void release_stream(uint32_t stream);
  void release_event(uint32_t event);
  int stream_device(uint32_t stream) const { return streams_[stream].device; }
  uint32_t stream_pid(uint32_t stream) const { return streams_[stream].pid; }
  std::size_t stream_count() const { return streams_.size(); }

  // Queues a task on task.stream (task.id and ready_at's floor of now are set here) and starts it if it can.
  void enqueue(Task&& task);
  // Queues a record of `event` on `stream`; returns the record count a wait must reach.
  // `ready_at`: when the host issues it (it runs no earlier); 0 = now.
  uint64_t enqueue_record(uint32_t stream, uint32_t event, Nanos ready_at = 0);
  void enqueue_wait(uint32_t stream, uint32_t event, Nanos ready_at = 0);
  // Registers functional work for a task; returns its payload id.
  uint32_t add_payload(std::function<Status()> work);

  bool stream_idle(uint32_t stream) const { return streams_[stream].queue.empty(); }
  std::size_t stream_depth(uint32_t stream) const { return streams_[stream].queue.size(); }
  // Calls `fn` (as a scheduler callback, never re-entrantly) once `event` has been recorded
  // `target` times.
  void when_reached(uint32_t event, uint64_t target, std::function<void()> fn);
  bool event_reached(uint32_t event, uint64_t target) const {
    return events_[event].completed >= target;
  }
  uint64_t event_records(uint32_t event) const { return events_[event].enqueued; }
  // The first functional error on `stream` (cleared by take).
  Status take_stream_error(uint32_t stream);

  void add_observer(TaskObserver* o) { observers_.push_back(o); }
  void remove_observer(TaskObserver* o);
  uint64_t tasks_completed() const { return completed_; }

 private:
  struct Stream {
    int device = 0;
    uint32_t pid = 0;
    RingQueue<Task> queue;
    bool running = false;
    bool waiting = false;  // in its device's resource queue
    bool ready_timer = false;  // a wake-up is posted for a head task its host has not issued yet
    bool orphaned = false;     // released while busy: freed when its running task or timer ends
    bool holds_resources = false;  // the running head took AI cores / AI CPUs or its copy engine
    Nanos started_at = 0;
    Activity activity;  // what the running head task occupies
    HbmTraffic head_hbm;  // a running collective's HBM traffic (finish_head)
    Status head_error;  // set when the running head task will fail
    Status error;       // sticky: reported by the next synchronize
  };
  struct Event {
    int device = 0;
    uint64_t enqueued = 0;   // records queued so far
    uint64_t completed = 0;  // records executed so far
    std::vector<uint32_t> waiters;
    std::vector<std::pair<uint64_t, std::function<void()>>> callbacks;
  };

  void advance(uint32_t stream);          // start or retire head tasks until blocked
  void drop_task(uint32_t stream, const Task& task);  // never started: forget it
  void free_stream(uint32_t stream);
  void fire_callbacks(Event& ev);
  bool try_start(uint32_t stream, Task& head);
  void on_complete(const SimEvent& e);
  void on_ready(const SimEvent& e);  // e.a: the stream
  void retry_waiting(Device& device);
  Nanos start_duration(Stream& st, Device& dev, Task& head);
  void notify(const Stream& s, const Task& t, Nanos start, Nanos end);
  TaskRecord record_of(const Stream& s, const Task& t, Nanos start, Nanos end) const;

  Scheduler& scheduler_;
  std::vector<Device>& devices_;
  double jitter_;
  Nanos task_timeout_ns_;
  CollectiveSink* collectives_ = nullptr;
  uint32_t complete_kind_;
  uint32_t ready_kind_;
  std::vector<Stream> streams_;
  std::vector<Event> events_;
  std::vector<uint32_t> free_streams_, free_events_;
  std::vector<std::function<Status()>> payloads_;
  std::vector<uint32_t> free_payloads_;
  std::vector<TaskObserver*> observers_;
  std::vector<uint32_t> retry_scratch_;  // retry_waiting()'s list, kept to reuse its capacity
  uint64_t next_task_id_ = 0;
  uint64_t completed_ = 0;
};

}  // namespace npukit::emu
