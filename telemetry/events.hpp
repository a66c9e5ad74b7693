// Events: fixed-size records the writer appends to the node's event ring and every reader
// consumes with its own cursor (see event_ring.hpp for the ring's contract).
//
// An event is 64 bytes in the ring: sequence number, type, device, a timestamp, two string ids
// (resolved through the segment's string table) and four 64-bit payload words whose meaning
// depends on the type (documented in the table in events.cpp, the single source of truth).
// Event type ids are stable and never reused, like field ids.
//
// Thread-safety: plain values; EventCursor implementations are single-threaded objects (one
// consumer per cursor; open more cursors for more consumers).
#pragma once

#include <array>
#include <bit>
#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "telemetry/status.hpp"

namespace npukit::telemetry {

enum class EventType : uint16_t {
  kMarker = 1,            // a user or test marker; name = text
  kKernel = 2,            // a kernel ran; name = op, aux = kernel; ts = start
  kMemcpy = 3,            // a copy ran; ts = start
  kAlloc = 4,             // HBM allocated
  kFree = 5,              // HBM freed
  kCollective = 6,        // a collective ran on one rank; name = op; ts = start
  kHealthChanged = 7,     // npu_health changed
  kThrottleChanged = 8,   // npu_throttle_reasons changed
  kFaultInjected = 9,     // name = fault kind
  kFaultCleared = 10,     // name = fault kind
  kProcessStarted = 11,   // name = process name
  kProcessExited = 12,
  kJobStarted = 13,       // name = job name
  kJobFinished = 14,      // name = job name, aux = error message ("" when ok)
  kEccError = 15,
  kLinkStateChanged = 16,
  kTaskTimeout = 17,      // name = op that hung
  kStep = 18,             // a training/inference step of a job ended on one rank
  kLaunch = 19,           // the host queued a task (the host-side API span of a device task)
  kOpCompile = 20,        // the host compiled an op online for a shape it had not compiled before
  kCacheFlush = 21,       // a caching allocator out of HBM emptied its cache to allocate
  kReserved = 22,         // what a process's allocator holds from the device changed
};

// Helpers for the packed payload words of task events (see the table in events.cpp).
inline uint64_t pack_stream_pid(uint32_t stream, uint32_t pid) {
  return static_cast<uint64_t>(pid) << 32 | stream;
}
inline uint32_t unpack_stream(uint64_t w) { return static_cast<uint32_t>(w); }
inline uint32_t unpack_pid(uint64_t w) { return static_cast<uint32_t>(w >> 32); }

struct EventTypeDef {
  EventType type;
  std::string_view name;     // snake case, e.g. "kernel"
  std::string_view payload;  // meaning of ts, name, aux and words a..d
};
std::span<const EventTypeDef> all_event_types();
const EventTypeDef* find_event_type(EventType type);     // nullptr when unknown
const EventTypeDef* find_event_type(std::string_view name);

struct Event {
  uint64_t seq = 0;  // assigned by the writer: 0, 1, 2, ... (gap-free per node)
  EventType type = EventType::kMarker;
  int32_t device = -1;   // -1 for node-level events
  uint64_t ts_ns = 0;    // the writer's time base: emulator virtual time, ns
  uint32_t name_id = 0;  // string table ids; 0 = none
  uint32_t aux_id = 0;
  std::array<uint64_t, 4> words{};  // a, b, c, d

  double f64(std::size_t i) const { return std::bit_cast<double>(words[i]); }
  void set_f64(std::size_t i, double v) { words[i] = std::bit_cast<uint64_t>(v); }
};

struct EventBatch {
  std::vector<Event> events;  // in sequence order
  // Events that were overwritten before this cursor read them, since the previous batch. The
  // gaps can fall anywhere in the batch: gaps between consecutive events' seq show where.
  uint64_t missed = 0;
  // A lossless cursor whose registration was dropped by the writer (it stalled past the
  // lossless timeout); it keeps reading in lossy mode and counts what it misses.
  bool lossless_lost = false;
};

class EventCursor {
 public:
  virtual ~EventCursor() = default;
  // Up to `max_events` events from the cursor on. Waits up to `wait` for the first event when
  // none is pending (polling with backoff). Never blocks the writer.
  virtual EventBatch next(std::size_t max_events,
                          std::chrono::nanoseconds wait = std::chrono::nanoseconds(0)) = 0;
  // Sequence number of the next event this cursor will return.
  virtual uint64_t position() const = 0;
  // Total events missed since the cursor opened.
  virtual uint64_t total_missed() const = 0;
  virtual bool lossless() const = 0;
  // The string for a string id; NotFound for an id the table does not hold.
  virtual Result<std::string> resolve(uint32_t string_id) const = 0;
};

}  // namespace npukit::telemetry
