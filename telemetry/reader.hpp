// Reader: the consumer side of a node's segment, shared by both client backends. It validates
// the segment once, then takes snapshots and opens event cursors without ever blocking the
// writer.
//
// open() errors (one line each, naming the segment):
//   no segment          Unavailable  "no npukit node 'x' is running (start one with: ...)"
//   not initialised     Unavailable  "node 'x' is starting up (shm segment /npukit-x is not initialised yet)"
//   foreign object      FailedPrecondition "shm segment /npukit-x is not an npukit segment (bad magic)"
//   other ABI           FailedPrecondition "shm segment /npukit-x has ABI version N, this tool speaks M"
//   other field table   FailedPrecondition "shm segment /npukit-x was written with a different field table ..."
//   short or corrupt    FailedPrecondition "shm segment /npukit-x is truncated ..." / "... has a corrupt header: ..."
//
// Stale: a snapshot is stale (see snapshot.hpp) when the writer closed the segment, when its pid
// is gone (kill(pid, 0) == ESRCH, checked at most every pid_check_interval), or when the
// heartbeat (CLOCK_MONOTONIC, ns) is older than stale_after. Readers and the writer must share
// a pid namespace for the pid check; the heartbeat check works regardless.
//
// Thread-safety: all methods are const and safe from many threads at once.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>

#include "telemetry/events.hpp"
#include "telemetry/layout.hpp"
#include "telemetry/segment.hpp"
#include "telemetry/snapshot.hpp"

namespace npukit::telemetry {

class Writer;

struct ReaderOptions {
  std::string node = "npukit";
  // A heartbeat older than this makes snapshots stale; zero disables the heartbeat check.
  std::chrono::nanoseconds stale_after = std::chrono::seconds(2);
  std::chrono::nanoseconds pid_check_interval = std::chrono::milliseconds(50);
};

class Reader {
 public:
  // Maps "/npukit-<node>" read-only and validates it.
  static Result<std::unique_ptr<Reader>> open(const ReaderOptions& options);
  // Reads the memory of a writer in this process (the in-process bus); keeps it mapped after
  // the writer is gone (snapshots then read stale).
  static std::unique_ptr<Reader> attach(const Writer& writer, const ReaderOptions& options);

  // Fills `out`, reusing its storage (the cheap path for refresh loops). Retries an entity the
  // writer is committing (spin, yield, then 50 us sleeps); an entity held for over a second, or
  // by a writer that died, reads kStale.
  void read(Snapshot* out) const;
  Snapshot snapshot() const;
  // A cursor starting at the newest event. Lossless needs write access to the segment
  // (FailedPrecondition otherwise) and a free reader slot.
  Result<std::unique_ptr<EventCursor>> open_events(bool lossless) const;
  Result<std::string> resolve(uint32_t string_id) const;

  // "" when live, else why snapshots are stale.
  std::string stale_reason() const;
  // True when "/npukit-<node>" now names another segment (the daemon restarted): reopen.
  bool replaced() const;
  // True when the writer closed the segment cleanly (npu-emud stop), not when it died.
  bool closed() const;
  const std::string& node() const { return node_; }
  const std::string& segment_name() const { return segment_name_; }
  // The control socket the writer recorded ("" when none).
  const std::string& control_path() const { return control_path_; }
  int writer_pid() const { return view_.header()->prefix.writer_pid; }

 private:
  Reader() = default;
  Status validate(std::size_t size);
  void load_identity();
  // false when the slot (table) never read as a finished write before `deadline_ns`.
  bool read_slot(std::size_t level, std::size_t entity, uint64_t* values, uint8_t* statuses, uint64_t deadline_ns) const;
  bool read_processes(std::vector<ProcessInfo>* out, uint64_t deadline_ns) const;
  void fill_header_fields(uint64_t* node_values, uint8_t* node_statuses) const;

  ReaderOptions options_;
  std::string node_;
  std::string segment_name_;
  std::string control_path_;
  std::shared_ptr<Segment> segment_;
  bool writable_ = false;
  detail::View view_;
  std::shared_ptr<const SnapshotIdentity> identity_;
  mutable std::atomic<uint64_t> next_pid_check_ns_{0};
  mutable std::atomic<bool> writer_alive_{true};
};

}  // namespace npukit::telemetry
