#include "telemetry/segment.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <thread>

#include "telemetry/layout.hpp"
#include "telemetry/naming.hpp"

namespace npukit::telemetry {

namespace {

using detail::HeaderPrefix;

std::string errno_text(int err) { return std::strerror(err); }

mode_t shm_mode(AccessScope scope) {
  switch (scope) {
    case AccessScope::kOwner: return 0600;
    case AccessScope::kGroup: return 0640;
    case AccessScope::kAll: return 0644;
  }
  return 0600;
}

bool same_object(int fd, const std::string& name) {
  int other = ::shm_open(name.c_str(), O_RDONLY | O_CLOEXEC, 0);
  if (other < 0) return false;
  struct stat a{}, b{};
  bool same = ::fstat(fd, &a) == 0 && ::fstat(other, &b) == 0 && a.st_dev == b.st_dev &&
              a.st_ino == b.st_ino;
  ::close(other);
  return same;
}

// The stable prefix of an existing object; zeroed when the object is shorter.
HeaderPrefix read_prefix(int fd, std::size_t* size) {
  HeaderPrefix p{};
  struct stat st{};
  *size = ::fstat(fd, &st) == 0 ? static_cast<std::size_t>(st.st_size) : 0;
  if (*size >= sizeof p && ::pread(fd, &p, sizeof p, 0) != static_cast<ssize_t>(sizeof p)) p = {};
  return p;
}

enum class Existing { kRetry, kRecovered };

// The name exists: refuse a live writer or a foreign object, unlink a stale npukit segment.
Result<Existing> handle_existing(const std::string& node, const std::string& name, int attempt) {
  int old = ::shm_open(name.c_str(), O_RDONLY | O_CLOEXEC, 0);
  if (old < 0) {
    if (errno == ENOENT) return Existing::kRetry;
    return Status(Code::kFailedPrecondition,
                  "cannot inspect existing shm segment " + name + ": " + errno_text(errno));
  }
  std::size_t size = 0;
  if (::flock(old, LOCK_EX | LOCK_NB) != 0) {
    HeaderPrefix p = read_prefix(old, &size);
    ::close(old);
    if (p.writer_pid == 0 && attempt < 100) return Existing::kRetry;  // a writer is starting
    return Status(Code::kFailedPrecondition, "node '" + node + "' is already running (pid " +
                                                 std::to_string(p.writer_pid) + ")");
  }
  if (!same_object(old, name)) {  // replaced while we looked: start over
    ::close(old);
    return Existing::kRetry;
  }
  HeaderPrefix p = read_prefix(old, &size);
  bool uninitialised = size == 0 || (size >= sizeof p && p.magic == 0);
  if (!uninitialised && (size < sizeof p || p.magic != detail::kMagic)) {
    ::close(old);
    return Status(Code::kFailedPrecondition,
                  "shm segment " + name + " exists and is not an npukit segment (bad magic); "
                  "remove /dev/shm" + name + " if nothing else uses it");
  }
  ::shm_unlink(name.c_str());  // stale: its writer is gone (we hold its lock)
  ::close(old);
  return Existing::kRecovered;
}

// Sets mode/group, sizes and maps a freshly created object we hold the lock of.
Status finish_create(int fd, const std::string& name, std::size_t bytes, const Access& access,
                     std::byte** data) {
  gid_t group = access.group == static_cast<gid_t>(-1) ? ::getegid() : access.group;
  if (access.scope == AccessScope::kGroup && ::fchown(fd, static_cast<uid_t>(-1), group) != 0) {
    return Status(Code::kFailedPrecondition, "cannot give shm segment " + name + " to group " +
                                                 std::to_string(group) + ": " + errno_text(errno));
  }
  if (::fchmod(fd, shm_mode(access.scope)) != 0 || ::ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    return Status(Code::kFailedPrecondition,
                  "cannot size shm segment " + name + ": " + errno_text(errno));
  }
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    return Status(Code::kFailedPrecondition, "cannot map shm segment " + name + ": " + errno_text(errno));
  }
  *data = static_cast<std::byte*>(p);
  reinterpret_cast<HeaderPrefix*>(p)->writer_pid = ::getpid();
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<Segment>> Segment::create_shm(const std::string& node, std::size_t bytes,
                                                     const Access& access) {
  NPUKIT_RETURN_IF_ERROR(validate_node_name(node));
  const std::string name = shm_name(node);
  for (int attempt = 0; attempt < 200; ++attempt) {
    int fd = ::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0 && errno != EEXIST) {
      return Status(Code::kFailedPrecondition,
                    "cannot create shm segment " + name + ": " + errno_text(errno));
    }
    if (fd < 0) {
      auto existing = handle_existing(node, name, attempt);
      if (!existing.ok()) return existing.status();
      if (*existing == Existing::kRetry) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      continue;
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {  // a recoverer got to it first: start over
      ::close(fd);
      continue;
    }
    std::unique_ptr<Segment> seg(new Segment());
    seg->fd_ = fd;
    seg->name_ = name;
    seg->owner_ = true;
    Status s = finish_create(fd, name, bytes, access, &seg->data_);
    if (!s.ok()) {
      ::shm_unlink(name.c_str());
      return s;  // ~Segment closes fd; data_ is null
    }
    seg->size_ = bytes;
    return seg;
  }
  return Status(Code::kFailedPrecondition, "cannot create shm segment " + name +
                                               ": another process keeps recreating it");
}

std::unique_ptr<Segment> Segment::create_heap(std::size_t bytes) {
  std::unique_ptr<Segment> seg(new Segment());
  std::size_t rounded = (bytes + 4095) & ~std::size_t{4095};
  seg->data_ = static_cast<std::byte*>(std::aligned_alloc(4096, rounded));
  if (seg->data_ == nullptr) std::abort();  // out of host memory: nothing sensible to return
  std::memset(seg->data_, 0, rounded);
  seg->size_ = bytes;
  return seg;
}

Result<std::unique_ptr<Segment>> Segment::open_shm(const std::string& node, bool writable) {
  NPUKIT_RETURN_IF_ERROR(validate_node_name(node));
  const std::string name = shm_name(node);
  int fd = ::shm_open(name.c_str(), (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC, 0);
  if (fd < 0 && errno == ENOENT) return Status(Code::kUnavailable, no_bus_message(node));
  if (fd < 0) {
    int e = errno;
    return Status(e == EACCES || e == EPERM ? Code::kPermissionDenied : Code::kFailedPrecondition,
                  "cannot open shm segment " + name + (writable ? " for writing" : "") + ": " + errno_text(e) +
                      (e == EACCES ? " (the node is private to its owner; npu-emud start --access group|all shares it)" : ""));
  }
  std::unique_ptr<Segment> seg(new Segment());
  seg->fd_ = fd;
  seg->name_ = name;
  struct stat st{};
  if (::fstat(fd, &st) != 0) {
    return Status(Code::kFailedPrecondition, "cannot stat shm segment " + name + ": " + errno_text(errno));
  }
  seg->size_ = static_cast<std::size_t>(st.st_size);
  if (seg->size_ == 0) return seg;  // being created: the reader reports it
  int prot = PROT_READ | (writable ? PROT_WRITE : 0);
  void* p = ::mmap(nullptr, seg->size_, prot, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    seg->size_ = 0;
    return Status(Code::kFailedPrecondition, "cannot map shm segment " + name + ": " + errno_text(errno));
  }
  seg->data_ = static_cast<std::byte*>(p);
  return seg;
}

Segment::~Segment() {
  if (fd_ < 0) {
    std::free(data_);
    return;
  }
  unlink_name();
  if (data_ != nullptr) ::munmap(data_, size_);
  ::close(fd_);
}

void Segment::unlink_name() {
  if (owner_ && name_refers_to_this()) ::shm_unlink(name_.c_str());  // still holding the lock
  owner_ = false;
}

bool Segment::name_refers_to_this() const { return fd_ >= 0 && same_object(fd_, name_); }

namespace {

// The state letter of /proc/<pid>/stat ('R', 'S', 'Z', ...), or 0 when it cannot be read. The
// letter follows the last ')' (the command name may itself hold ')').
char proc_state(int pid) {
  char path[32];
  std::snprintf(path, sizeof path, "/proc/%d/stat", pid);
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[512];
  ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return 0;
  buf[n] = '\0';
  const char* close_paren = std::strrchr(buf, ')');
  return close_paren != nullptr && close_paren[1] == ' ' ? close_paren[2] : 0;
}

}  // namespace

bool pid_alive(int pid) {
  if (pid <= 0) return false;
  if (::kill(pid, 0) != 0 && errno != EPERM) return false;
  char state = proc_state(pid);
  return state != 'Z' && state != 'X';
}

uint64_t monotonic_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

uint64_t realtime_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace npukit::telemetry
