#include "emulator/device/memory.hpp"

#include <cstdio>

namespace npukit::emu {

namespace {
constexpr uint64_t kAlign = 2ull << 20;         // segments are 2 MiB aligned, like HBM pages
constexpr DevPtr kAddressBase = 0x124000000000;  // device VA base; each device gets its own window
constexpr DevPtr kDeviceWindow = 1ull << 40;
}  // namespace

std::string format_mib(uint64_t bytes) {
  char buf[48];
  if (bytes < (1ull << 20) && bytes != 0) {
    std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  } else {
    std::snprintf(buf, sizeof buf, "%llu MiB", static_cast<unsigned long long>(bytes >> 20));
  }
  return buf;
}

std::string hex_address(DevPtr ptr) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(ptr));
  return buf;
}

DeviceMemory::DeviceMemory(int device_id, uint64_t total_bytes, uint64_t firmware_reserved_bytes,
                           bool backed)
    : device_id_(device_id),
      total_(total_bytes),
      firmware_reserved_(firmware_reserved_bytes),
      backed_(backed),
      next_address_(kAddressBase + static_cast<DevPtr>(device_id) * kDeviceWindow) {}

Result<DevPtr> DeviceMemory::malloc(uint64_t bytes, uint32_t pid) {
  if (bytes == 0) return InvalidArgument("acl_rt_malloc: size must be > 0 on device " +
                                         std::to_string(device_id_));
  if (bytes > app_capacity_bytes() - used_) {
    return Status(Code::kOutOfMemory, "acl_rt_malloc failed, size=" + std::to_string(bytes));
  }
  Segment seg;
  seg.bytes = bytes;
  seg.pid = pid;
  if (backed_) seg.data = std::make_unique<std::byte[]>(bytes);  // zero-initialised
  DevPtr ptr = next_address_;
  next_address_ += (bytes + kAlign - 1) / kAlign * kAlign;
  segments_.emplace(ptr, std::move(seg));
  used_ += bytes;
  by_pid_[pid] += bytes;
  return ptr;
}

Status DeviceMemory::free(DevPtr ptr) {
  auto it = segments_.find(ptr);
  if (it == segments_.end()) {
    return InvalidArgument("acl_rt_free: address " + hex_address(ptr) +
                           " is not a live allocation on device " + std::to_string(device_id_));
  }
  used_ -= it->second.bytes;
  auto pid_it = by_pid_.find(it->second.pid);
  pid_it->second -= it->second.bytes;
  if (pid_it->second == 0) by_pid_.erase(pid_it);
  segments_.erase(it);
  return Status::Ok();
}

std::byte* DeviceMemory::host_view(DevPtr ptr, uint64_t bytes) {
  auto it = segments_.upper_bound(ptr);
  if (it == segments_.begin()) return nullptr;
  --it;
  uint64_t offset = ptr - it->first;
  if (!it->second.data || offset + bytes > it->second.bytes) return nullptr;
  return it->second.data.get() + offset;
}

uint64_t DeviceMemory::used_by(uint32_t pid) const {
  auto it = by_pid_.find(pid);
  return it == by_pid_.end() ? 0 : it->second;
}

uint64_t DeviceMemory::release_process(uint32_t pid) {
  uint64_t freed = 0;
  for (auto it = segments_.begin(); it != segments_.end();) {
    if (it->second.pid == pid) {
      freed += it->second.bytes;
      used_ -= it->second.bytes;
      it = segments_.erase(it);
    } else {
      ++it;
    }
  }
  by_pid_.erase(pid);
  return freed;
}

}  // namespace npukit::emu
