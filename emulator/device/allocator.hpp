// Per-process device-memory allocators, the two policies the field argues about:
//
//  - caching (torch_npu style): a block pool over large segments. Requests are rounded to 512 B,
//    served best-fit from cached free blocks, split when the rest is worth keeping, merged with
//    free neighbours on release. Only a pool miss pays the runtime's malloc; empty_cache() returns
//    unused segments.
//  - direct (Paddle NPU plugin style): every allocate and release is a runtime malloc/free and
//    pays its modelled host-side cost.
//
// Both report the host time each call cost, so the runtime can advance virtual time. One
// allocator belongs to one process context on one device; not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "emulator/device/memory.hpp"
#include "emulator/device/spec.hpp"

namespace npukit::emu {

enum class AllocatorPolicy { kCaching, kDirect };
const char* allocator_policy_name(AllocatorPolicy p);  // "caching" / "direct"
Result<AllocatorPolicy> parse_allocator_policy(std::string_view s);

struct AllocatorStats {
  uint64_t allocated_bytes = 0;        // live bytes as requested by the caller
  uint64_t reserved_bytes = 0;         // bytes held from the device (segments)
  uint64_t peak_allocated_bytes = 0;
  uint64_t peak_reserved_bytes = 0;
  uint64_t total_allocated_bytes = 0;  // cumulative requested bytes over all allocations
  uint64_t alloc_count = 0;
  uint64_t free_count = 0;
  uint64_t runtime_malloc_count = 0;   // calls that reached the device runtime
  uint64_t runtime_free_count = 0;
  uint64_t largest_free_block = 0;     // largest cached free block (caching only)
  // Share of cached free bytes that the largest free block cannot serve in one piece:
  // 1 - largest_free_block / (reserved - in-use block bytes); 0 when nothing is cached.
  double fragmentation = 0;
};

// The outcome of one allocator call: the address (allocate only) and the host time it cost.
struct AllocResult {
  DevPtr ptr = 0;
  Nanos host_ns = 0;
  // A caching allocator out of HBM empties its cache and retries once: what that flush gave
  // back (released_bytes 0: no flush) and what the cache held before it.
  struct Flush {
    uint64_t released_bytes = 0;
    uint64_t cached_free_bytes = 0;   // free bytes in cached blocks before the flush
    uint64_t largest_free_block = 0;  // none of them fit the request
  } flush;
};

class Allocator {
 public:
  virtual ~Allocator() = default;
  // OutOfMemory: "acl_rt_malloc failed, size=<bytes>; device <d>: ...; <policy> allocator: ..."
  virtual Result<AllocResult> allocate(uint64_t bytes) = 0;
  virtual Result<AllocResult> release(DevPtr ptr) = 0;
  // Whether allocate(bytes) would have to empty the cache first (no cached block fits and the
  // device has no room for a new segment): its frees synchronize the device, so a caller drains
  // its streams before such a call, as aclrtFree does.
  virtual bool would_flush(uint64_t /*bytes*/) const { return false; }
  // Returns cached, unused segments to the device; the host time it cost.
  virtual Nanos empty_cache() = 0;
  // Frees everything this process holds (process exit, Ctrl-C); the host time it cost.
  virtual Nanos release_all() = 0;
  virtual AllocatorStats stats() const = 0;
  virtual AllocatorPolicy policy() const = 0;
};

std::unique_ptr<Allocator> make_allocator(AllocatorPolicy policy, DeviceMemory& memory,
                                          const RuntimeCostSpec& costs, uint32_t pid, int device_id);

// Host cost of one runtime malloc of `bytes` under `costs`.
Nanos runtime_malloc_cost(const RuntimeCostSpec& costs, uint64_t bytes);
// The statistics part of an OOM message ("allocated 1 MiB, reserved 2 MiB, ...").
std::string describe_stats(const AllocatorStats& s);

}  // namespace npukit::emu
