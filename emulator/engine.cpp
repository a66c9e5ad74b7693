#include "emulator/engine.hpp"

#include <algorithm>

namespace npukit::emu {

const char* task_kind_name(TaskKind k) {
  switch (k) {
    case TaskKind::kKernel: return "kernel";
    case TaskKind::kMemcpy: return "memcpy";
    case TaskKind::kEventRecord: return "event_record";
    case TaskKind::kEventWait: return "event_wait";
  }
  return "?";
}

Engine::Engine(Scheduler& scheduler, std::vector<Device>& devices, double jitter)
    : scheduler_(scheduler), devices_(devices), jitter_(jitter) {
  complete_kind_ = scheduler_.add_handler([this](const SimEvent& e) { on_complete(e); });
}

uint32_t Engine::create_stream(int device, uint32_t pid) {
  Stream s;
  s.device = device;
  s.pid = pid;
  streams_.push_back(std::move(s));
  return static_cast<uint32_t>(streams_.size() - 1);
}

uint32_t Engine::create_event(int device) {
  events_.push_back(Event{device, 0, 0, {}});
  return static_cast<uint32_t>(events_.size() - 1);
}

uint32_t Engine::add_payload(std::function<Status()> work) {
  if (free_payloads_.empty()) {
    payloads_.push_back(std::move(work));
    return static_cast<uint32_t>(payloads_.size() - 1);
  }
  uint32_t id = free_payloads_.back();
  free_payloads_.pop_back();
  payloads_[id] = std::move(work);
  return id;
}

void Engine::enqueue(Task task) {
  task.id = next_task_id_++;
  task.enqueued_at = scheduler_.now();
  uint32_t s = task.stream;
  streams_[s].queue.push_back(std::move(task));
  advance(s);
}

uint64_t Engine::enqueue_record(uint32_t stream, uint32_t event) {
  Task t;
  t.kind = TaskKind::kEventRecord;
  t.stream = stream;
  t.event = event;
  uint64_t target = ++events_[event].enqueued;
  enqueue(std::move(t));
  return target;
}

void Engine::enqueue_wait(uint32_t stream, uint32_t event) {
  Task t;
  t.kind = TaskKind::kEventWait;
  t.stream = stream;
  t.event = event;
  t.event_target = events_[event].enqueued;  // waits for every record queued before it
  enqueue(std::move(t));
}

Status Engine::take_stream_error(uint32_t stream) {
  Status s = std::move(streams_[stream].error);
  streams_[stream].error = Status::Ok();
  return s;
}

void Engine::remove_observer(TaskObserver* o) {
  observers_.erase(std::remove(observers_.begin(), observers_.end(), o), observers_.end());
}

void Engine::advance(uint32_t s) {
  Stream& st = streams_[s];
  while (!st.running && !st.waiting && !st.queue.empty()) {
    Task& head = st.queue.front();
    if (head.kind == TaskKind::kEventWait) {
      Event& ev = events_[head.event];
      if (ev.completed < head.event_target) {
        if (std::find(ev.waiters.begin(), ev.waiters.end(), s) == ev.waiters.end()) {
          ev.waiters.push_back(s);
        }
        return;
      }
      st.queue.pop_front();
    } else if (head.kind == TaskKind::kEventRecord) {
      Event& ev = events_[head.event];
      ++ev.completed;
      st.queue.pop_front();
      std::vector<uint32_t> woken;
      woken.swap(ev.waiters);
      for (uint32_t w : woken) advance(w);
    } else {
      if (!try_start(s, head)) {
        st.waiting = true;
        devices_[st.device].waiting_streams().push_back(s);
      }
      return;
    }
  }
}

bool Engine::try_start(uint32_t s, Task& head) {
  Stream& st = streams_[s];
  Device& dev = devices_[st.device];
  Nanos duration;
  if (head.kind == TaskKind::kKernel) {
    if (!dev.acquire_cores(head.unit, head.timing.cores)) return false;
    duration = kernel_duration(head.timing, dev.clock_ratio());
  } else {
    if (dev.copy_engine_busy(head.copy)) return false;
    dev.set_copy_engine_busy(head.copy, true);
    duration = copy_duration(dev.spec(), head.copy, head.bytes);
  }
  duration = dev.jittered(duration, jitter_);
  st.running = true;
  st.started_at = scheduler_.now();
  scheduler_.post(scheduler_.now() + duration, complete_kind_, s);
  return true;
}

void Engine::on_complete(const SimEvent& e) {
  uint32_t s = e.a;
  Stream& st = streams_[s];
  Device& dev = devices_[st.device];
  Task task = std::move(st.queue.front());
  st.queue.pop_front();
  st.running = false;
  Nanos busy = scheduler_.now() - st.started_at;
  DeviceCounters& c = dev.counters();
  if (task.kind == TaskKind::kKernel) {
    dev.release_cores(task.unit, task.timing.cores);
    Nanos core_ns = busy * task.timing.cores;
    if (task.unit == Unit::kAiCpu) {
      c.aicpu_busy_core_ns += core_ns;
      ++c.aicpu_kernels_total;
    } else {
      c.aicore_busy_core_ns += core_ns;
      (task.unit == Unit::kCube ? c.cube_busy_core_ns : c.vector_busy_core_ns) += core_ns;
    }
    c.flops_total += task.flops;
    c.hbm_bytes_total += task.bytes;
    ++c.kernels_total;
  } else {
    dev.set_copy_engine_busy(task.copy, false);
    ++c.copies_total;
    if (task.copy == CopyKind::kHostToDevice) c.pcie_h2d_bytes_total += task.bytes;
    if (task.copy == CopyKind::kDeviceToHost) c.pcie_d2h_bytes_total += task.bytes;
    if (task.copy == CopyKind::kDeviceToDevice) c.hbm_bytes_total += 2 * task.bytes;
  }
  if (task.payload != kNoPayload) {
    Status status = payloads_[task.payload]();
    if (!status.ok() && st.error.ok()) st.error = std::move(status);
    payloads_[task.payload] = nullptr;
    free_payloads_.push_back(task.payload);
  }
  ++completed_;
  notify(st, task, st.started_at, scheduler_.now());
  retry_waiting(dev);
  advance(s);
}

void Engine::retry_waiting(Device& dev) {
  auto& waiting = dev.waiting_streams();
  if (waiting.empty()) return;
  std::vector<uint32_t> still;
  for (uint32_t w : waiting) {
    Stream& st = streams_[w];
    if (!try_start(w, st.queue.front())) still.push_back(w);
    else st.waiting = false;
  }
  waiting.swap(still);
}

void Engine::notify(const Stream& s, const Task& t, Nanos start, Nanos end) {
  if (observers_.empty()) return;
  TaskRecord r;
  r.id = t.id;
  r.pid = s.pid;
  r.device = s.device;
  r.stream = t.stream;
  r.kind = t.kind;
  r.unit = t.unit;
  r.copy = t.copy;
  r.kernel = t.kernel;
  r.cores = t.kind == TaskKind::kKernel ? t.timing.cores : 0;
  r.flops = t.flops;
  r.bytes = t.bytes;
  r.enqueued = t.enqueued_at;
  r.start = start;
  r.end = end;
  for (TaskObserver* o : observers_) o->on_task_end(r);
}

}  // namespace npukit::emu
