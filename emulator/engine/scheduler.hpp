// The discrete-event scheduler: virtual time in integer nanoseconds.
//
// Events are small PODs (time, sequence, kind, one payload word) in a 4-ary heap; each kind has
// one handler registered up front, so the hot path allocates nothing. Ties in time are broken by
// posting order, which makes a run deterministic: the same inputs and seed give the same
// timeline. Time never goes backwards.
//
// Background events (periodic physics and publishing ticks) run like any other event but do not
// keep the node busy: run_while() and idle() only count foreground events, so "run until the
// work is done" ends even though the ticks reschedule themselves forever.
//
// Pacing: in fast mode events run as fast as the CPU allows; in paced mode the scheduler sleeps
// so that virtual time follows wall time multiplied by a speed factor, and reports how far it
// lags behind (self-telemetry). Not thread-safe: one thread drives a scheduler.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "emulator/device/spec.hpp"

namespace npukit::emu {

struct SimEvent {  // 24 bytes: the heap moves these on every post and step
  Nanos time = 0;
  uint64_t seq = 0;
  uint32_t a = 0;  // the handler's argument (the engine's: a stream)
  uint16_t kind = 0;
  bool background = false;
};

enum class TimeMode { kFast, kPaced };

class Scheduler {
 public:
  using Handler = std::function<void(const SimEvent&)>;

  // Registers a handler and returns the event kind that reaches it.
  uint32_t add_handler(Handler handler);
  // The same for a member function of `object` (which outlives the scheduler's use of it): one
  // plain indirect call per event, for the engine's hot kinds.
  template <auto Method, typename T>
  uint32_t add_handler(T* object) {
    return add_dispatch({[](void* o, const SimEvent& e) { (static_cast<T*>(o)->*Method)(e); }, object});
  }
  // Schedules an event of `kind` at absolute time `at` (clamped to now()).
  void post(Nanos at, uint32_t kind, uint32_t a = 0);
  void post_background(Nanos at, uint32_t kind, uint32_t a = 0);
  // Schedules a one-off callback (timers, fault timelines); slower than post().
  void post_callback(Nanos at, std::function<void()> fn, bool background = false);

  Nanos now() const { return now_; }
  bool idle() const { return foreground_ == 0; }
  std::size_t pending() const { return queue_.size() - (taken_ ? 1 : 0); }
  uint64_t events_processed() const { return processed_; }

  // Runs the earliest event; false when there is none.
  bool step();
  // Runs every event due at or before `t`, then advances now() to `t`.
  void run_until(Nanos t);
  // The same, but stops once the wall clock passes `deadline` (checked every 256 events): true
  // when now() reached `t`, false when events due by `t` remain (a daemon serves its requests,
  // then goes on; a program of zero-time steps would otherwise hold it for ever).
  bool run_until(Nanos t, std::chrono::steady_clock::time_point deadline);
  // Runs events while `keep_going()` holds and foreground events remain; returns keep_going()'s
  // final value (true means the foreground work ran dry with the condition still unmet).
  bool run_while(const std::function<bool()>& keep_going);
  // Runs events until no foreground event remains (run_while with a condition that always holds).
  void run_until_idle();

  void set_fast();
  void set_paced(double speed);  // virtual ns per wall ns; 1.0 = real time
  TimeMode mode() const { return mode_; }
  double speed() const { return speed_; }
  // How far virtual time is behind where pacing wants it, in wall ns (0 in fast mode).
  Nanos lag_ns() const;

 private:
  // The pending events: a 4-ary min-heap on (time, seq). Four children per node halve the
  // heap's depth against a binary heap, and a pop compares children that share a cache line.
  class EventHeap {
   public:
    bool empty() const { return events_.empty(); }
    std::size_t size() const { return events_.size(); }
    const SimEvent& top() const { return events_.front(); }
    void push(const SimEvent& e);
    void pop();
    // pop() then push(e) in one sift: `e` must not come before the top.
    void replace_top(const SimEvent& e);

   private:
    static bool before(const SimEvent& x, const SimEvent& y) {
      return x.time != y.time ? x.time < y.time : x.seq < y.seq;
    }
    void sift_down(const SimEvent& e, std::size_t n);  // places `e` from the root's hole down
    std::vector<SimEvent> events_;
  };
  struct Dispatch {  // what an event kind calls
    void (*call)(void* object, const SimEvent& e);
    void* object;
  };
  uint32_t add_dispatch(Dispatch d);
  void push(Nanos at, uint32_t kind, uint32_t a, bool background);
  // The running event stays the heap's top while its handler runs: the handler's first post
  // takes its place (one sift instead of a pop and a push: a finished task usually posts the
  // next one's end); if it posts nothing, the top is popped after it.
  void drop_taken();
  void wait_for_wall(Nanos virtual_time);
  void handle_callback(const SimEvent& e);

  EventHeap queue_;
  bool taken_ = false;  // queue_.top() is the running event (see drop_taken)
  std::vector<Dispatch> dispatch_;  // by kind
  std::vector<std::unique_ptr<Handler>> handlers_;  // the std::function handlers dispatch_ calls
  std::vector<std::function<void()>> callbacks_;
  std::vector<uint32_t> free_callbacks_;
  uint32_t callback_kind_ = UINT32_MAX;
  Nanos now_ = 0;
  uint64_t seq_ = 0;
  uint64_t processed_ = 0;
  std::size_t foreground_ = 0;
  TimeMode mode_ = TimeMode::kFast;
  double speed_ = 1.0;
  std::chrono::steady_clock::time_point wall_origin_;
  Nanos virtual_origin_ = 0;
};

}  // namespace npukit::emu
