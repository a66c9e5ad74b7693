#include "emulator/engine/engine.hpp"

#include <algorithm>

namespace npukit::emu {

const char* task_kind_name(TaskKind k) {
  switch (k) {
    case TaskKind::kKernel: return "kernel";
    case TaskKind::kMemcpy: return "memcpy";
    case TaskKind::kEventRecord: return "event_record";
    case TaskKind::kEventWait: return "event_wait";
    case TaskKind::kCollective: return "collective";
  }
  return "?";
}

Engine::Engine(Scheduler& scheduler, std::vector<Device>& devices, double jitter,
               Nanos task_timeout_ns)
    : scheduler_(scheduler), devices_(devices), jitter_(jitter), task_timeout_ns_(task_timeout_ns) {
  complete_kind_ = scheduler_.add_handler<&Engine::on_complete>(this);
  ready_kind_ = scheduler_.add_handler<&Engine::on_ready>(this);
}

uint32_t Engine::create_stream(int device, uint32_t pid) {
  Stream s;
  s.device = device;
  s.pid = pid;
  if (!free_streams_.empty()) {
    uint32_t id = free_streams_.back();
    free_streams_.pop_back();
    streams_[id] = std::move(s);
    return id;
  }
  streams_.push_back(std::move(s));
  return static_cast<uint32_t>(streams_.size() - 1);
}

uint32_t Engine::create_event(int device) {
  Event ev;
  ev.device = device;
  if (!free_events_.empty()) {
    uint32_t id = free_events_.back();
    free_events_.pop_back();
    events_[id] = std::move(ev);
    return id;
  }
  events_.push_back(std::move(ev));
  return static_cast<uint32_t>(events_.size() - 1);
}

void Engine::release_stream(uint32_t stream) {
  Stream& st = streams_[stream];
  if (st.waiting) {  // its head never got its resources
    auto& waiting = devices_[st.device].waiting_streams();
    waiting.erase(std::remove(waiting.begin(), waiting.end(), stream), waiting.end());
    st.waiting = false;
  }
  if (st.running && st.queue.front().kind == TaskKind::kCollective && collectives_ != nullptr &&
      collectives_->withdraw(st.queue.front())) {
    st.running = false;
  }
  while (st.queue.size() > (st.running ? 1u : 0u)) {
    drop_task(stream, st.queue.back());
    st.queue.pop_back();
  }
  if (st.running || st.ready_timer) {
    st.orphaned = true;
    return;
  }
  free_stream(stream);
}

void Engine::drop_task(uint32_t stream, const Task& task) {
  if (task.payload != kNoPayload) {
    payloads_[task.payload] = nullptr;
    free_payloads_.push_back(task.payload);
  }
  if (task.kind == TaskKind::kCollective && collectives_ != nullptr) collectives_->release(task);
  if (task.kind == TaskKind::kEventWait) {
    auto& waiters = events_[task.event].waiters;
    waiters.erase(std::remove(waiters.begin(), waiters.end(), stream), waiters.end());
  }
}

void Engine::free_stream(uint32_t stream) {
  streams_[stream] = Stream{};
  free_streams_.push_back(stream);
}

void Engine::release_event(uint32_t event) {
  Event& e = events_[event];
  e.callbacks.clear();  // their context is gone: nothing may call back into it
  if (!e.waiters.empty()) return;
  events_[event] = Event{};
  free_events_.push_back(event);
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

void Engine::enqueue(Task&& task) {
  task.id = next_task_id_++;
  task.ready_at = std::max(scheduler_.now(), task.ready_at);
  if (task.host_start == 0 || task.host_start > task.ready_at) task.host_start = task.ready_at;
  uint32_t s = task.stream;
  if (!observers_.empty() && task.kind != TaskKind::kEventRecord && task.kind != TaskKind::kEventWait) {
    TaskRecord r = record_of(streams_[s], task, task.ready_at, task.ready_at);
    for (TaskObserver* o : observers_) o->on_task_enqueued(r);
  }
  Stream& st = streams_[s];
  st.queue.push_back(std::move(task));
  if (!st.running && !st.waiting) advance(s);  // else its queue moves when the head ends or starts
}

uint64_t Engine::enqueue_record(uint32_t stream, uint32_t event, Nanos ready_at) {
  Task t;
  t.kind = TaskKind::kEventRecord;
  t.stream = stream;
  t.event = event;
  t.ready_at = ready_at;
  uint64_t target = ++events_[event].enqueued;
  enqueue(std::move(t));
  return target;
}

void Engine::enqueue_wait(uint32_t stream, uint32_t event, Nanos ready_at) {
  Task t;
  t.kind = TaskKind::kEventWait;
  t.stream = stream;
  t.event = event;
  t.ready_at = ready_at;
  t.event_target = events_[event].enqueued;  // waits for every record queued before it
  enqueue(std::move(t));
}

Status Engine::take_stream_error(uint32_t stream) {
  Status s = std::move(streams_[stream].error);
  streams_[stream].error = Status::Ok();
  return s;
}

void Engine::when_reached(uint32_t event, uint64_t target, std::function<void()> fn) {
  Event& ev = events_[event];
  ev.callbacks.emplace_back(target, std::move(fn));
  fire_callbacks(ev);
}

void Engine::fire_callbacks(Event& ev) {
  for (auto it = ev.callbacks.begin(); it != ev.callbacks.end();) {
    if (it->first <= ev.completed) {
      scheduler_.post_callback(scheduler_.now(), std::move(it->second));
      it = ev.callbacks.erase(it);
    } else {
      ++it;
    }
  }
}

void Engine::remove_observer(TaskObserver* o) {
  observers_.erase(std::remove(observers_.begin(), observers_.end(), o), observers_.end());
}

// The host call of a stream's head task has returned: the task may start.
void Engine::on_ready(const SimEvent& e) {
  uint32_t s = e.a;
  Stream& st = streams_[s];
  st.ready_timer = false;
  if (!st.orphaned) advance(s);
  else if (!st.running) free_stream(s);  // a running task frees it when it ends
}

void Engine::advance(uint32_t s) {
  Stream& st = streams_[s];
  while (!st.running && !st.waiting && !st.queue.empty()) {
    Task& head = st.queue.front();
    if (head.ready_at > scheduler_.now()) {  // its host call has not returned yet
      if (!st.ready_timer) {
        st.ready_timer = true;
        scheduler_.post(head.ready_at, ready_kind_, s);  // on_ready()
      }
      return;
    }
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
      fire_callbacks(ev);
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
  if (head.kind == TaskKind::kCollective) {
    st.running = true;
    st.started_at = scheduler_.now();
    st.activity = Activity{};
    collectives_->arrive(s, head);
    return true;
  }
  if (dev.health().lost()) {  // nothing runs on a device that fell off the bus
    st.running = true;
    st.started_at = scheduler_.now();
    st.activity = Activity{};
    st.head_error = Status(Code::kUnavailable, "device " + std::to_string(st.device) +
                                                   " lost (error code 0xFFFFFFFF)");
    scheduler_.post(scheduler_.now(), complete_kind_, s);
    return true;
  }
  if (head.kind == TaskKind::kKernel) {
    if (!dev.acquire_cores(head.unit, head.timing.cores)) return false;
  } else {
    if (dev.copy_engine_busy(head.copy)) return false;
    dev.set_copy_engine_busy(head.copy, true);
  }
  st.holds_resources = true;
  Nanos duration = start_duration(st, dev, head);
  st.running = true;
  st.started_at = scheduler_.now();
  dev.begin(st.activity, scheduler_.now());
  scheduler_.post(scheduler_.now() + duration, complete_kind_, s);
  return true;
}

// The duration of a task that got its resources, and what it occupies meanwhile.
Nanos Engine::start_duration(Stream& st, Device& dev, Task& head) {
  Nanos duration;
  st.activity = Activity{};
  if (!st.error.ok()) {
    // The stream is in error (a task before failed): the runtime skips what follows until the
    // error is taken at a synchronize, as ACL aborts the rest of a failed stream.
    st.head_error = st.error;
    return 1;
  }
  if (head.kind == TaskKind::kKernel) {
    if (dev.health().hung() && head.unit != Unit::kAiCpu) {
      st.head_error = Status(
          Code::kUnavailable,
          "AI Core task timeout: task " + std::to_string(head.id) + " (" + head.kernel->name +
              ") on device " + std::to_string(st.device) + " did not finish within " +
              std::to_string(task_timeout_ns_ / 1'000'000) + " ms (error code 0x80CB8009)");
      duration = task_timeout_ns_;
    } else {
      double slowdown = head.unit == Unit::kAiCpu ? 1.0 : dev.health().aicore_slowdown();
      duration = dev.jittered(static_cast<Nanos>(static_cast<double>(kernel_duration(head.timing, dev.clock_ratio())) * slowdown), jitter_);
    }
    st.activity.unit = head.unit;
    st.activity.cores = head.timing.cores;
    st.activity.hbm_bytes_per_ns = static_cast<double>(head.bytes) / static_cast<double>(duration);
  } else {
    duration = dev.jittered(copy_duration(dev.spec(), head.copy, head.bytes, dev.pcie_rate_share()), jitter_);
    double rate = static_cast<double>(head.bytes) / static_cast<double>(duration);
    if (head.copy == CopyKind::kDeviceToDevice) st.activity.hbm_bytes_per_ns = 2 * rate;
    else st.activity.pcie_bytes_per_ns = rate;
  }
  return std::max<Nanos>(duration, 1);
}

void Engine::finish_head(uint32_t stream, Nanos at, Status status, const Activity& activity, HbmTraffic hbm) {
  Stream& st = streams_[stream];
  st.head_error = std::move(status);
  st.activity = activity;
  st.head_hbm = hbm;
  devices_[st.device].begin(activity, scheduler_.now());
  scheduler_.post(at, complete_kind_, stream);
}

void Engine::on_complete(const SimEvent& e) {
  uint32_t s = e.a;
  Stream& st = streams_[s];
  Device& dev = devices_[st.device];
  Task task = std::move(st.queue.front());
  st.queue.pop_front();
  st.running = false;
  DeviceCounters& c = dev.counters();
  dev.end(st.activity, scheduler_.now());
  bool failed = !st.head_error.ok();
  if (failed && st.error.ok()) st.error = st.head_error;
  if (failed && task.kind == TaskKind::kKernel && dev.health().hung()) dev.health().note_task_timeout();
  if (failed) st.head_error = Status::Ok();
  // What the task took at its start goes back, even if the device was lost meanwhile (a host
  // that went down and came back kept its cores taken: its next job waited for them forever).
  const bool held = st.holds_resources;
  st.holds_resources = false;
  if (task.kind == TaskKind::kKernel) {
    if (held) dev.release_cores(task.unit, task.timing.cores);
    ++(task.unit == Unit::kAiCpu ? c.aicpu_kernels_total : c.kernels_total);
    if (!failed) {
      c.flops_total += task.flops;
      c.hbm_bytes_total += task.bytes;
      c.hbm_write_bytes_total += task.written;
    }
  } else if (task.kind == TaskKind::kMemcpy) {
    if (held) dev.set_copy_engine_busy(task.copy, false);
    ++c.copies_total;
    if (task.copy == CopyKind::kHostToDevice) c.pcie_h2d_bytes_total += task.bytes;
    if (task.copy == CopyKind::kDeviceToHost) c.pcie_d2h_bytes_total += task.bytes;
    if (task.copy == CopyKind::kDeviceToDevice) c.hbm_bytes_total += 2 * task.bytes, c.hbm_write_bytes_total += task.bytes;
  } else {
    ++c.collectives_total;
    if (!failed) c.hbm_bytes_total += st.head_hbm.bytes, c.hbm_write_bytes_total += st.head_hbm.written;
    st.head_hbm = {};
  }
  if (task.payload != kNoPayload) {
    if (!failed && !st.orphaned) {
      Status status = payloads_[task.payload]();
      if (!status.ok() && st.error.ok()) st.error = std::move(status);
    }
    payloads_[task.payload] = nullptr;
    free_payloads_.push_back(task.payload);
  }
  ++completed_;
  notify(st, task, st.started_at, scheduler_.now());
  if (task.kind == TaskKind::kCollective && collectives_ != nullptr) collectives_->release(task);
  retry_waiting(dev);
  if (!streams_[s].orphaned) advance(s);
  else if (!streams_[s].ready_timer) free_stream(s);  // else the pending wake-up frees it
}

void Engine::retry_waiting(Device& dev) {
  auto& waiting = dev.waiting_streams();
  if (waiting.empty()) return;
  retry_scratch_.clear();
  retry_scratch_.swap(waiting);  // the list to retry; `waiting` collects those still blocked
  for (uint32_t w : retry_scratch_) {
    Stream& st = streams_[w];
    if (!try_start(w, st.queue.front())) waiting.push_back(w);
    else st.waiting = false;
  }
}

TaskRecord Engine::record_of(const Stream& s, const Task& t, Nanos start, Nanos end) const {
  TaskRecord r;
  r.id = t.id;
  r.pid = s.pid;
  r.device = s.device;
  r.stream = t.stream;
  r.kind = t.kind;
  r.unit = t.unit;
  r.copy = t.copy;
  r.kernel = t.kernel;
  r.descriptor = t.descriptor;
  if (t.kind == TaskKind::kCollective && collectives_ != nullptr) r.label = collectives_->label(t);
  r.collective = t.collective;
  r.cores = t.kind == TaskKind::kKernel ? t.timing.cores : 0;
  r.flops = t.flops;
  r.bytes = t.bytes;
  r.host_start = t.host_start;
  r.compile_ns = t.compile_ns;
  r.enqueued = t.ready_at;
  r.start = start;
  r.end = end;
  return r;
}

void Engine::notify(const Stream& s, const Task& t, Nanos start, Nanos end) {
  if (observers_.empty()) return;
  TaskRecord r = record_of(s, t, start, end);
  for (TaskObserver* o : observers_) o->on_task_end(r);
}

}  // namespace npukit::emu
