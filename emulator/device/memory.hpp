// Physical device memory (HBM, or DDR on 310P) of one emulated chip: what the runtime's malloc
// hands out, shared by every process on the device.
//
// Addresses are virtual device addresses (DevPtr, never 0 for a live allocation). In functional
// mode every segment is backed by host memory so kernels compute real results; in shape-only mode
// nothing is backed and host_view() returns nullptr. Not thread-safe (the node's thread owns it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "telemetry/status.hpp"

namespace npukit::emu {

using DevPtr = uint64_t;

class DeviceMemory {
 public:
  // `capacity_bytes` is what applications may use (total minus firmware reservation).
  DeviceMemory(int device_id, uint64_t total_bytes, uint64_t firmware_reserved_bytes, bool backed);

  // A raw segment for process `pid`; OutOfMemory (message "acl_rt_malloc failed, size=<bytes>")
  // when it does not fit. Allocators add their statistics to that message.
  Result<DevPtr> malloc(uint64_t bytes, uint32_t pid);
  Status free(DevPtr ptr);

  // Host pointer to `bytes` at `ptr` (which may point inside a segment), or nullptr when the
  // memory is not backed or the range is not inside one live segment.
  std::byte* host_view(DevPtr ptr, uint64_t bytes);

  uint64_t total_bytes() const { return total_; }
  uint64_t firmware_reserved_bytes() const { return firmware_reserved_; }
  uint64_t app_capacity_bytes() const { return total_ - firmware_reserved_; }
  uint64_t app_used_bytes() const { return used_; }
  // Used as npu-smi counts it: firmware reservation plus every segment.
  uint64_t used_bytes() const { return firmware_reserved_ + used_; }
  uint64_t used_by(uint32_t pid) const;
  const std::map<uint32_t, uint64_t>& usage_by_pid() const { return by_pid_; }
  // Releases every segment of `pid` (process exit); returns the bytes freed.
  uint64_t release_process(uint32_t pid);
  bool backed() const { return backed_; }

 private:
  struct Segment {
    uint64_t bytes = 0;
    uint32_t pid = 0;
    std::unique_ptr<std::byte[]> data;  // functional mode only
  };
  int device_id_;
  uint64_t total_;
  uint64_t firmware_reserved_;
  bool backed_;
  uint64_t used_ = 0;
  DevPtr next_address_;
  std::map<DevPtr, Segment> segments_;
  std::map<uint32_t, uint64_t> by_pid_;
};

std::string format_mib(uint64_t bytes);
std::string hex_address(DevPtr ptr);  // "0x124000000000"  // "1234 MiB" (rounded down), "0.5 MiB" below 1 MiB

}  // namespace npukit::emu
