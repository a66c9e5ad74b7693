// The caching policy: block pool with best-fit, splitting and merging (see allocator.hpp).
#include <set>
#include <unordered_map>

#include "emulator/device/allocator_internal.hpp"

namespace npukit::emu {

namespace {

constexpr uint64_t kMiB = 1ull << 20;
constexpr uint64_t kRound = 512;               // every block is a multiple of 512 B
constexpr uint64_t kSmallRequest = 1 * kMiB;   // requests up to this use the small pool
constexpr uint64_t kSmallSegment = 2 * kMiB;   // small-pool segment size
constexpr uint64_t kMediumSegment = 20 * kMiB; // segment for requests in (1 MiB, 10 MiB)
constexpr uint64_t kLargeRequest = 10 * kMiB;

uint64_t round_up(uint64_t v, uint64_t to) { return (v + to - 1) / to * to; }

// A contiguous piece of a segment, free or in use. Blocks of one segment form a list by address.
struct Block {
  DevPtr addr = 0;
  uint64_t size = 0;
  uint64_t requested = 0;  // caller's size while in use
  bool in_use = false;
  bool small = false;
  DevPtr segment = 0;
  Block* prev = nullptr;
  Block* next = nullptr;
};

struct BySizeThenAddress {
  bool operator()(const Block* a, const Block* b) const {
    return a->size != b->size ? a->size < b->size : a->addr < b->addr;
  }
};

class CachingAllocator final : public Allocator {
 public:
  CachingAllocator(DeviceMemory& memory, const RuntimeCostSpec& costs, uint32_t pid, int device)
      : memory_(memory), costs_(costs), pid_(pid), device_(device) {}
  ~CachingAllocator() override {
    for (auto& [addr, block] : blocks_) delete block;
  }

  Result<AllocResult> allocate(uint64_t bytes) override {
    if (bytes == 0) return InvalidArgument("allocate: size must be > 0");
    // More than the device holds is out of memory as it stands (rounded up, it would wrap to 0).
    if (bytes > memory_.app_capacity_bytes()) return out_of_memory(bytes, memory_, device_, policy(), stats());
    uint64_t size = round_up(bytes, kRound);
    bool small = size <= kSmallRequest;
    Nanos cost = 0;
    AllocResult::Flush flush;
    Block* block = take_cached(size, small);
    if (block == nullptr) {
      auto seg = reserve_segment(size, small, bytes, cost, flush);
      if (!seg.ok()) return seg.status();
      block = *seg;
    }
    split(block, size);
    block->in_use = true;
    block->requested = bytes;
    in_use_block_bytes_ += block->size;
    note_allocated(stats_, bytes);
    return AllocResult{block->addr, cost, flush};
  }

  bool would_flush(uint64_t bytes) const override {
    if (bytes == 0 || bytes > memory_.app_capacity_bytes()) return false;
    uint64_t size = round_up(bytes, kRound);
    bool small = size <= kSmallRequest;
    Block probe;
    probe.size = size;
    const Pool& p = small ? small_pool_ : large_pool_;
    if (p.lower_bound(&probe) != p.end()) return false;  // a cached block fits
    uint64_t free = memory_.app_capacity_bytes() - memory_.app_used_bytes();
    return free < segment_size(size, small) && stats_.reserved_bytes > in_use_block_bytes_;
  }

  Result<AllocResult> release(DevPtr ptr) override {
    auto it = blocks_.find(ptr);
    if (it == blocks_.end() || !it->second->in_use) {
      return InvalidArgument("free of " + hex_address(ptr) +
                             ": not allocated by this process on device " + std::to_string(device_));
    }
    Block* block = it->second;
    block->in_use = false;
    stats_.allocated_bytes -= block->requested;
    in_use_block_bytes_ -= block->size;
    ++stats_.free_count;
    block = merge(block, block->prev);
    block = merge(block, block->next);
    pool(block->small).insert(block);
    return AllocResult{0, 0, {}};  // returning a block to the pool costs no runtime call
  }

  Nanos empty_cache() override {
    Nanos cost = 0;
    for (bool small : {true, false}) {
      auto& p = pool(small);
      for (auto it = p.begin(); it != p.end();) {
        Block* b = *it;
        if (b->prev == nullptr && b->next == nullptr) {  // a whole, unused segment
          it = p.erase(it);
          cost += give_back(b);
        } else {
          ++it;
        }
      }
    }
    return cost;
  }

  Nanos release_all() override {
    std::vector<DevPtr> live;
    for (auto& [addr, b] : blocks_) {
      if (b->in_use) live.push_back(addr);
    }
    for (DevPtr p : live) (void)release(p);
    return empty_cache();
  }

  AllocatorStats stats() const override {
    AllocatorStats s = stats_;
    s.largest_free_block = 0;
    for (const auto* p : {&small_pool_, &large_pool_}) {
      if (!p->empty()) s.largest_free_block = std::max(s.largest_free_block, (*p->rbegin())->size);
    }
    uint64_t cached_free = s.reserved_bytes - in_use_block_bytes_;
    s.fragmentation = cached_free == 0 ? 0.0
                                       : 1.0 - static_cast<double>(s.largest_free_block) /
                                                   static_cast<double>(cached_free);
    return s;
  }

  AllocatorPolicy policy() const override { return AllocatorPolicy::kCaching; }

 private:
  using Pool = std::set<Block*, BySizeThenAddress>;
  Pool& pool(bool small) { return small ? small_pool_ : large_pool_; }

  Block* take_cached(uint64_t size, bool small) {
    Block probe;
    probe.size = size;
    Pool& p = pool(small);
    auto it = p.lower_bound(&probe);
    if (it == p.end()) return nullptr;
    Block* b = *it;
    p.erase(it);
    return b;
  }

  static uint64_t segment_size(uint64_t size, bool small) {
    if (small) return kSmallSegment;
    if (size < kLargeRequest) return kMediumSegment;
    return round_up(size, 2 * kMiB);
  }

  // Reserves a new segment from the device; on OOM frees cached segments once and retries.
  Result<Block*> reserve_segment(uint64_t size, bool small, uint64_t requested, Nanos& cost,
                                 AllocResult::Flush& flush) {
    uint64_t seg_bytes = segment_size(size, small);
    auto ptr = memory_.malloc(seg_bytes, pid_);
    if (!ptr.ok() && ptr.status().code() == Code::kOutOfMemory) {
      AllocatorStats before = stats();
      flush.cached_free_bytes = before.reserved_bytes - in_use_block_bytes_;
      flush.largest_free_block = before.largest_free_block;
      cost += empty_cache();
      flush.released_bytes = before.reserved_bytes - stats_.reserved_bytes;
      ptr = memory_.malloc(seg_bytes, pid_);
    }
    if (!ptr.ok()) {
      if (ptr.status().code() != Code::kOutOfMemory) return ptr.status();
      return out_of_memory(requested, memory_, device_, policy(), stats());
    }
    cost += runtime_malloc_cost(costs_, seg_bytes);
    note_reserved(stats_, seg_bytes);
    auto* b = new Block{*ptr, seg_bytes, 0, false, small, *ptr, nullptr, nullptr};
    blocks_[b->addr] = b;
    return b;
  }

  // Cuts `block` down to `size` when the remainder is worth caching on its own.
  void split(Block* block, uint64_t size) {
    uint64_t rest = block->size - size;
    bool worth = block->small ? rest >= kRound : rest > kSmallRequest;
    if (!worth) return;
    auto* tail = new Block{block->addr + size, rest, 0, false, block->small, block->segment,
                           block, block->next};
    if (block->next) block->next->prev = tail;
    block->next = tail;
    block->size = size;
    blocks_[tail->addr] = tail;
    pool(tail->small).insert(tail);
  }

  // Merges free neighbour `other` into `block` (either order); returns the surviving block.
  Block* merge(Block* block, Block* other) {
    if (other == nullptr || other->in_use) return block;
    pool(other->small).erase(other);
    Block* first = other->addr < block->addr ? other : block;
    Block* second = first == block ? other : block;
    first->size += second->size;
    first->next = second->next;
    if (second->next) second->next->prev = first;
    blocks_.erase(second->addr);
    delete second;
    return first;
  }

  Nanos give_back(Block* b) {
    (void)memory_.free(b->segment);
    stats_.reserved_bytes -= b->size;
    ++stats_.runtime_free_count;
    blocks_.erase(b->addr);
    delete b;
    return costs_.free_ns;
  }

  DeviceMemory& memory_;
  RuntimeCostSpec costs_;
  uint32_t pid_;
  int device_;
  std::unordered_map<DevPtr, Block*> blocks_;  // every block by its address (owning)
  Pool small_pool_;
  Pool large_pool_;
  uint64_t in_use_block_bytes_ = 0;
  AllocatorStats stats_;
};

}  // namespace

std::unique_ptr<Allocator> make_caching_allocator(DeviceMemory& memory, const RuntimeCostSpec& costs,
                                                  uint32_t pid, int device_id) {
  return std::make_unique<CachingAllocator>(memory, costs, pid, device_id);
}

}  // namespace npukit::emu
