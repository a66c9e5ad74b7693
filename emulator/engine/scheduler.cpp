#include "emulator/engine/scheduler.hpp"

#include <algorithm>
#include <cstdlib>
#include <thread>

namespace npukit::emu {

void Scheduler::EventHeap::push(const SimEvent& e) {
  std::size_t hole = events_.size();
  events_.push_back(e);
  while (hole > 0) {
    std::size_t parent = (hole - 1) / 4;
    if (!before(e, events_[parent])) break;
    events_[hole] = events_[parent];
    hole = parent;
  }
  events_[hole] = e;
}

void Scheduler::EventHeap::pop() {
  SimEvent last = events_.back();
  events_.pop_back();
  if (!events_.empty()) sift_down(last, events_.size());
}

void Scheduler::EventHeap::replace_top(const SimEvent& e) { sift_down(e, events_.size()); }

void Scheduler::EventHeap::sift_down(const SimEvent& e, std::size_t n) {
  std::size_t hole = 0;
  for (;;) {
    std::size_t first = hole * 4 + 1;
    if (first >= n) break;
    std::size_t best;
    if (first + 4 <= n) {  // all four children (the common case): a tournament, no loop
      std::size_t a = before(events_[first + 1], events_[first]) ? first + 1 : first;
      std::size_t b = before(events_[first + 3], events_[first + 2]) ? first + 3 : first + 2;
      best = before(events_[b], events_[a]) ? b : a;
    } else {
      best = first;
      for (std::size_t c = first + 1; c < n; ++c) {
        if (before(events_[c], events_[best])) best = c;
      }
    }
    if (!before(events_[best], e)) break;
    events_[hole] = events_[best];
    hole = best;
  }
  events_[hole] = e;
}

uint32_t Scheduler::add_dispatch(Dispatch d) {
  if (dispatch_.size() > UINT16_MAX) std::abort();  // a kind is 16 bits; a node registers a handful
  dispatch_.push_back(d);
  return static_cast<uint32_t>(dispatch_.size() - 1);
}

uint32_t Scheduler::add_handler(Handler handler) {
  handlers_.push_back(std::make_unique<Handler>(std::move(handler)));
  return add_dispatch({[](void* h, const SimEvent& e) { (*static_cast<Handler*>(h))(e); }, handlers_.back().get()});
}

void Scheduler::push(Nanos at, uint32_t kind, uint32_t a, bool background) {
  SimEvent e{std::max(at, now_), seq_++, a, static_cast<uint16_t>(kind), background};
  if (taken_) {  // the running event's slot: e is due no earlier, and posted after it
    queue_.replace_top(e);
    taken_ = false;
  } else {
    queue_.push(e);
  }
  if (!background) ++foreground_;
}

void Scheduler::post(Nanos at, uint32_t kind, uint32_t a) {
  push(at, kind, a, false);
}

void Scheduler::post_background(Nanos at, uint32_t kind, uint32_t a) {
  push(at, kind, a, true);
}

void Scheduler::post_callback(Nanos at, std::function<void()> fn, bool background) {
  if (callback_kind_ == UINT32_MAX) {
    callback_kind_ = add_handler<&Scheduler::handle_callback>(this);
  }
  uint32_t slot;
  if (free_callbacks_.empty()) {
    slot = static_cast<uint32_t>(callbacks_.size());
    callbacks_.push_back(std::move(fn));
  } else {
    slot = free_callbacks_.back();
    free_callbacks_.pop_back();
    callbacks_[slot] = std::move(fn);
  }
  push(at, callback_kind_, slot, background);
}

void Scheduler::handle_callback(const SimEvent& e) {
  auto fn = std::move(callbacks_[e.a]);
  callbacks_[e.a] = nullptr;
  free_callbacks_.push_back(e.a);
  fn();
}

void Scheduler::drop_taken() {
  if (!taken_) return;
  queue_.pop();
  taken_ = false;
}

bool Scheduler::step() {
  drop_taken();  // a step from inside a handler: the outer event is done with the heap
  if (queue_.empty()) return false;
  const SimEvent e = queue_.top();
  if (mode_ == TimeMode::kPaced) wait_for_wall(e.time);
  taken_ = true;
  if (!e.background) --foreground_;
  now_ = e.time;
  ++processed_;
  const Dispatch& d = dispatch_[e.kind];
  d.call(d.object, e);
  drop_taken();
  return true;
}

void Scheduler::run_until(Nanos t) {
  drop_taken();
  while (!queue_.empty() && queue_.top().time <= t) step();
  if (t > now_) {
    if (mode_ == TimeMode::kPaced) wait_for_wall(t);
    now_ = t;
  }
}

bool Scheduler::run_until(Nanos t, std::chrono::steady_clock::time_point deadline) {
  drop_taken();
  for (uint32_t n = 1; !queue_.empty() && queue_.top().time <= t; ++n) {
    if (n % 256 == 0 && std::chrono::steady_clock::now() >= deadline) return false;
    step();
  }
  run_until(t);
  return true;
}

bool Scheduler::run_while(const std::function<bool()>& keep_going) {
  while (keep_going()) {
    if (foreground_ == 0 || !step()) return true;
  }
  return false;
}

void Scheduler::run_until_idle() {
  while (foreground_ > 0 && step()) {
  }
}

void Scheduler::set_fast() { mode_ = TimeMode::kFast; }

void Scheduler::set_paced(double speed) {
  mode_ = TimeMode::kPaced;
  speed_ = speed > 0 ? speed : 1.0;
  wall_origin_ = std::chrono::steady_clock::now();
  virtual_origin_ = now_;
}

void Scheduler::wait_for_wall(Nanos virtual_time) {
  auto wall_offset = std::chrono::nanoseconds(
      static_cast<int64_t>(static_cast<double>(virtual_time - virtual_origin_) / speed_));
  std::this_thread::sleep_until(wall_origin_ + wall_offset);
}

Nanos Scheduler::lag_ns() const {
  if (mode_ != TimeMode::kPaced) return 0;
  auto wall = std::chrono::steady_clock::now() - wall_origin_;
  auto wanted = static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(wall).count());
  auto reached = static_cast<double>(now_ - virtual_origin_) / speed_;
  return std::max<Nanos>(0, static_cast<Nanos>(wanted - reached));
}

}  // namespace npukit::emu
