#include "emulator/device/allocator.hpp"

#include <cstdio>
#include <unordered_map>

#include "emulator/device/allocator_internal.hpp"

namespace npukit::emu {

const char* allocator_policy_name(AllocatorPolicy p) {
  return p == AllocatorPolicy::kCaching ? "caching" : "direct";
}

Result<AllocatorPolicy> parse_allocator_policy(std::string_view s) {
  if (s == "caching") return AllocatorPolicy::kCaching;
  if (s == "direct") return AllocatorPolicy::kDirect;
  return InvalidArgument("unknown allocator '" + std::string(s) + "' (expected caching or direct)");
}

Nanos runtime_malloc_cost(const RuntimeCostSpec& costs, uint64_t bytes) {
  return costs.malloc_ns + costs.malloc_ns_per_mib * static_cast<Nanos>((bytes + (1 << 20) - 1) >> 20);
}

std::string describe_stats(const AllocatorStats& s) {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "allocated %s, reserved %s, peak allocated %s, allocations %llu, "
                "fragmentation %.1f%%",
                format_mib(s.allocated_bytes).c_str(), format_mib(s.reserved_bytes).c_str(),
                format_mib(s.peak_allocated_bytes).c_str(),
                static_cast<unsigned long long>(s.alloc_count), s.fragmentation * 100.0);
  return buf;
}

Status out_of_memory(uint64_t bytes, const DeviceMemory& memory, int device_id,
                     AllocatorPolicy policy, const AllocatorStats& stats) {
  std::string msg = "acl_rt_malloc failed, size=" + std::to_string(bytes) + "; device " +
                    std::to_string(device_id) + ": total " + format_mib(memory.total_bytes()) +
                    ", in use " + format_mib(memory.used_bytes()) + ", free " +
                    format_mib(memory.app_capacity_bytes() - memory.app_used_bytes()) + "; " +
                    allocator_policy_name(policy) + " allocator: " + describe_stats(stats);
  return {Code::kOutOfMemory, std::move(msg)};
}

void note_allocated(AllocatorStats& s, uint64_t requested) {
  s.allocated_bytes += requested;
  s.total_allocated_bytes += requested;
  ++s.alloc_count;
  s.peak_allocated_bytes = std::max(s.peak_allocated_bytes, s.allocated_bytes);
}

void note_reserved(AllocatorStats& s, uint64_t bytes) {
  s.reserved_bytes += bytes;
  ++s.runtime_malloc_count;
  s.peak_reserved_bytes = std::max(s.peak_reserved_bytes, s.reserved_bytes);
}

namespace {

// Every call goes to the device runtime and pays its cost.
class DirectAllocator final : public Allocator {
 public:
  DirectAllocator(DeviceMemory& memory, const RuntimeCostSpec& costs, uint32_t pid, int device)
      : memory_(memory), costs_(costs), pid_(pid), device_(device) {}

  Result<AllocResult> allocate(uint64_t bytes) override {
    auto ptr = memory_.malloc(bytes, pid_);
    if (!ptr.ok()) {
      if (ptr.status().code() != Code::kOutOfMemory) return ptr.status();
      return out_of_memory(bytes, memory_, device_, policy(), stats_);
    }
    live_[*ptr] = bytes;
    note_reserved(stats_, bytes);
    note_allocated(stats_, bytes);
    return AllocResult{*ptr, runtime_malloc_cost(costs_, bytes), {}};
  }

  Result<AllocResult> release(DevPtr ptr) override {
    auto it = live_.find(ptr);
    if (it == live_.end()) {
      return InvalidArgument("free of " + hex_address(ptr) + ": not allocated by this process on device " +
                             std::to_string(device_));
    }
    NPUKIT_RETURN_IF_ERROR(memory_.free(ptr));
    stats_.allocated_bytes -= it->second;
    stats_.reserved_bytes -= it->second;
    ++stats_.free_count;
    ++stats_.runtime_free_count;
    live_.erase(it);
    return AllocResult{0, costs_.free_ns, {}};
  }

  Nanos empty_cache() override { return 0; }  // nothing is cached

  Nanos release_all() override {
    Nanos cost = 0;
    while (!live_.empty()) {
      auto r = release(live_.begin()->first);
      if (r.ok()) cost += r->host_ns;
    }
    return cost;
  }

  AllocatorStats stats() const override { return stats_; }
  AllocatorPolicy policy() const override { return AllocatorPolicy::kDirect; }

 private:
  DeviceMemory& memory_;
  RuntimeCostSpec costs_;
  uint32_t pid_;
  int device_;
  std::unordered_map<DevPtr, uint64_t> live_;
  AllocatorStats stats_;
};

}  // namespace

std::unique_ptr<Allocator> make_allocator(AllocatorPolicy policy, DeviceMemory& memory,
                                          const RuntimeCostSpec& costs, uint32_t pid,
                                          int device_id) {
  if (policy == AllocatorPolicy::kDirect) {
    return std::make_unique<DirectAllocator>(memory, costs, pid, device_id);
  }
  return make_caching_allocator(memory, costs, pid, device_id);
}

}  // namespace npukit::emu
