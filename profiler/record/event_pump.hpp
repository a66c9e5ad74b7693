// EventPump: drains a node's event cursor on its own thread into a bounded in-memory queue, so
// the node's writer (which waits for a lossless reader) is held up only by a memory copy, never
// by SQLite. The recorder's thread pops batches and writes them at its own pace.
//
// The pump thread is the cursor's only user (EventCursor is single-threaded): it also resolves
// every new string id it sees and hands the strings over with the batch that first uses them.
// When the queue holds `capacity_events`, the pump stops reading: a lossless cursor then makes
// the node wait (backpressure), a lossy one lets the ring overwrite and counts the misses.
//
// Counters are sampled here too, every `sample_interval`, and handed over with the batch read
// at that moment: the writer thread runs at background priority while the job runs and can lag
// far behind on a busy machine, and a sample taken when it got round to it would read the node
// as it is then (after the job freed its memory, say), not as it was.
//
// Thread-safety: pop(), caught_up() and stop() are for one consumer thread; the pump thread is
// internal.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "telemetry/events.hpp"
#include "telemetry/snapshot.hpp"

namespace npukit::prof {

struct PumpBatch {
  std::vector<telemetry::Event> events;
  uint64_t missed = 0;
  bool lossless_lost = false;
  std::vector<std::pair<uint32_t, std::string>> strings;  // ids first used by these events
  std::optional<telemetry::Snapshot> snapshot;            // a counter sample taken after these were read
};

class EventPump {
 public:
  // Takes a counter sample (nullopt: none this time); called on the pump thread only.
  using Sampler = std::function<std::optional<telemetry::Snapshot>()>;
  EventPump(std::unique_ptr<telemetry::EventCursor> cursor, std::size_t capacity_events, Sampler sampler = {},
            std::chrono::milliseconds sample_interval = std::chrono::milliseconds(100));
  ~EventPump();
  EventPump(const EventPump&) = delete;
  EventPump& operator=(const EventPump&) = delete;

  // The next batch, waiting up to `wait` for one; nullopt when none arrived.
  std::optional<PumpBatch> pop(std::chrono::milliseconds wait);
  // True when the queue is empty and the pump's last read found the cursor at the ring's head.
  bool caught_up();
  // Ends reading at the ring's head: the pump reads until a read finds no more pending events,
  // then exits. Everything read stays poppable.
  void finish();
  // finish() took effect and every batch was popped.
  bool drained();
  // Stops the pump thread at once (pending batches stay poppable).
  void stop();

 private:
  void run();
  void resolve_new(PumpBatch& batch);

  std::unique_ptr<telemetry::EventCursor> cursor_;
  std::size_t capacity_;
  Sampler sampler_;
  std::chrono::milliseconds sample_interval_;
  std::mutex mu_;
  std::condition_variable ready_, room_;
  std::deque<PumpBatch> queue_;
  std::size_t queued_events_ = 0;
  bool at_head_ = false;
  bool stopping_ = false;
  bool finishing_ = false;
  bool finished_ = false;
  std::vector<bool> known_;  // by bus string id (dense, small); pump thread only
  std::thread thread_;
};

}  // namespace npukit::prof
