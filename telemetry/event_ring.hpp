// The event ring (internal to the bus; both client backends use it): a broadcast ring of 64-byte
// records. Every reader keeps its own cursor in its own memory, so readers never block the
// writer and never block each other.
//
// Record for sequence s (slot s % capacity): word 0 is a per-record seqlock holding 2s+1 while
// the writer fills the record and 2s+2 when it is complete; then the header's event_head is
// advanced to s+1. A reader expects 2s+2 at its cursor; a larger value means the writer lapped
// it: the skipped events are counted as missed and reported, never silently dropped.
//
// Lossless mode (opt-in, e.g. npu-prof record --mode lossless, its default): the cursor registers in one of the
// segment's reader slots (owner = pid << 32 | tag, cursor). Before overwriting a record the
// writer waits until every registered reader has consumed it: it spins, then yields, then
// sleeps 20 us, for at most the lossless timeout (default 1 s, RingWriter's constructor).
//   - a registered reader whose process is gone (kill(pid, 0) == ESRCH) is dropped as soon as
//     the writer waits on it (checked every millisecond), and on every heartbeat;
//   - a live reader still behind after the timeout is evicted: its batch reports
//     lossless_lost and it continues in lossy mode. Both are counted in the header.
// Registration is race-free: events from the registration point on are never lost (the
// writer's head store and count load are seq_cst, pairing with the reader's registration).
// A lossless reader needs a writable mapping of the segment.
//
// Thread-safety: RingWriter belongs to the writer's publishing thread (reap_dead_readers() may
// run on any thread); a RingCursor is one consumer's object.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "telemetry/events.hpp"
#include "telemetry/layout.hpp"

namespace npukit::telemetry::detail {

class RingWriter {
 public:
  RingWriter(const View& view, std::chrono::nanoseconds lossless_timeout)
      : v_(view), timeout_ns_(static_cast<uint64_t>(lossless_timeout.count())) {}
  // Appends `ev` with the next sequence number (ev.seq is ignored) and returns that number.
  uint64_t record(const Event& ev);
  // Drops registered readers whose process is gone; safe from any thread.
  void reap_dead_readers() const;

 private:
  uint64_t min_cursor() const;
  void wait_for_room(uint64_t seq);
  bool release_slot(ReaderSlot* slot, uint64_t owner, std::atomic<uint64_t>& counter) const;

  View v_;
  uint64_t timeout_ns_;
  uint64_t next_ = 0;
  uint64_t cached_epoch_ = ~uint64_t{0};
  uint64_t safe_until_ = 0;
};

class RingCursor final : public EventCursor {
 public:
  // `read` maps the segment (read-only is enough); `keepalive` owns that mapping. A lossless
  // cursor registers through `write`, a writable view of the same segment owned by
  // `write_keepalive`. The cursor starts at the newest event: it returns events recorded after
  // it opened.
  static Result<std::unique_ptr<RingCursor>> open(const View& read, std::shared_ptr<const void> keepalive,
                                                  bool lossless, const View& write,
                                                  std::shared_ptr<const void> write_keepalive,
                                                  const std::string& segment_name);
  ~RingCursor() override;

  EventBatch next(std::size_t max_events, std::chrono::nanoseconds wait) override;
  uint64_t position() const override { return pos_; }
  uint64_t total_missed() const override { return total_missed_; }
  bool lossless() const override { return slot_ != nullptr; }
  Result<std::string> resolve(uint32_t string_id) const override;

 private:
  RingCursor() = default;
  bool read_one(uint64_t seq, Event* out) const;
  uint64_t wait_for_head(std::chrono::nanoseconds wait) const;
  void check_registration(EventBatch& batch);

  View read_;
  std::shared_ptr<const void> keepalive_;
  std::shared_ptr<const void> write_keepalive_;
  ReaderSlot* slot_ = nullptr;  // in the writable view; null when lossy
  SegmentHeader* write_header_ = nullptr;
  uint64_t token_ = 0;
  uint64_t pos_ = 0;
  uint64_t total_missed_ = 0;
};

}  // namespace npukit::telemetry::detail
