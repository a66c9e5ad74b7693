// Segment: ownership of the memory a node's telemetry lives in — a POSIX shared-memory object
// ("/npukit-<node>", see naming.hpp) or, for the in-process bus, a zeroed heap buffer. It knows
// nothing of the layout inside beyond the stable HeaderPrefix (layout.hpp).
//
// Writer side (create_shm): the object is created with O_EXCL and the writer holds an exclusive
// flock() on it for its whole life. If the name exists:
//   - its flock is held          -> FailedPrecondition "node 'x' is already running (pid N)"
//   - not an npukit segment      -> FailedPrecondition naming the object (never deleted)
//   - otherwise (writer killed)  -> stale: unlinked and recreated (recovery after SIGKILL)
// The destructor of a writer segment unlinks the name while still holding the lock, so it can
// never remove a successor's segment.
//
// Reader side (open_shm): maps the object read-only (or read-write for lossless cursors); a
// missing object is Unavailable with no_daemon_message().
//
// Thread-safety: a Segment is immutable after creation; its memory is shared by design and
// accessed through the seqlock/atomic discipline of the writer and readers.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <memory>
#include <string>

#include "telemetry/status.hpp"

namespace npukit::telemetry {

// Who may open a node's segment and control socket.
enum class AccessScope {
  kOwner,  // shm 0600, socket 0600: only the daemon's user (and root)
  kGroup,  // shm 0640, socket 0660, group = `group` (default: the daemon's primary group)
  kAll,    // shm 0644, socket 0666: any local user reads telemetry and sends read-only requests
};
struct Access {
  AccessScope scope = AccessScope::kOwner;  // private by default (npu-emud start --access)
  gid_t group = static_cast<gid_t>(-1);  // -1: the creating process's effective gid
};

class Segment {
 public:
  static Result<std::unique_ptr<Segment>> create_shm(const std::string& node, std::size_t bytes,
                                                     const Access& access);
  static std::unique_ptr<Segment> create_heap(std::size_t bytes);
  static Result<std::unique_ptr<Segment>> open_shm(const std::string& node, bool writable);

  ~Segment();
  Segment(const Segment&) = delete;
  Segment& operator=(const Segment&) = delete;

  std::byte* data() const { return data_; }
  std::size_t size() const { return size_; }
  const std::string& name() const { return name_; }  // "/npukit-<node>", "" for heap
  bool is_shm() const { return fd_ >= 0; }
  // True when the shm name still refers to this object (false after the writer was replaced).
  bool name_refers_to_this() const;
  // Writer side: removes the name if it still refers to this object (idempotent).
  void unlink_name();

 private:
  Segment() = default;
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
  int fd_ = -1;
  bool owner_ = false;  // writer: unlink on destruction
  std::string name_;
};

// kill(pid, 0) says the process exists (EPERM counts as alive: another user's process) and
// /proc/<pid>/stat does not say it is a zombie: a killed daemon stays a zombie until its parent
// reaps it, which a container's init may do only seconds later.
bool pid_alive(int pid);
// CLOCK_MONOTONIC / CLOCK_REALTIME now, ns.
uint64_t monotonic_ns();
uint64_t realtime_ns();

}  // namespace npukit::telemetry
