// Shared pieces of the two allocator policies (not part of the public interface).
#pragma once

#include <memory>

#include "emulator/device/allocator.hpp"

namespace npukit::emu {

Status out_of_memory(uint64_t bytes, const DeviceMemory& memory, int device_id,
                     AllocatorPolicy policy, const AllocatorStats& stats);
void note_allocated(AllocatorStats& s, uint64_t requested);
void note_reserved(AllocatorStats& s, uint64_t bytes);
std::unique_ptr<Allocator> make_caching_allocator(DeviceMemory& memory, const RuntimeCostSpec& costs,
                                                  uint32_t pid, int device_id);

}  // namespace npukit::emu
