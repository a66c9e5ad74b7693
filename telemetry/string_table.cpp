#include "telemetry/string_table.hpp"

#include <cstring>

namespace npukit::telemetry::detail {

Result<uint32_t> StringTableWriter::intern(std::string_view s) {
  if (s.empty()) return 0u;
  if (auto it = ids_.find(s); it != ids_.end()) return it->second;
  if (s.size() > kMaxStringLength) {
    return InvalidArgument("string of " + std::to_string(s.size()) +
                           " bytes exceeds the string table's limit of " +
                           std::to_string(kMaxStringLength) + " bytes");
  }
  SegmentHeader* h = view_.header();
  uint32_t count = h->string_count.load(std::memory_order_relaxed);
  uint32_t used = h->string_bytes_used;
  if (count >= view_.caps.strings || s.size() > view_.caps.string_bytes - used) {
    h->string_table_full_total.fetch_add(1, std::memory_order_relaxed);
    return Status(Code::kOutOfMemory,
                  "string table of shm segment " + segment_name_ + " is full (" +
                      std::to_string(count) + " strings, " + std::to_string(used) + " of " +
                      std::to_string(view_.caps.string_bytes) + " bytes); '" +
                      std::string(s.substr(0, 64)) + "' not interned");
  }
  std::memcpy(view_.string_bytes() + used, s.data(), s.size());
  view_.string_index()[count] = (static_cast<uint64_t>(used) << 32) | s.size();
  h->string_bytes_used = used + static_cast<uint32_t>(s.size());
  uint32_t id = count + 1;
  h->string_count.store(id, std::memory_order_release);
  ids_.emplace(std::string(s), id);
  return id;
}

Result<std::string_view> resolve_string(const View& view, uint32_t id) {
  if (id == 0) return std::string_view();
  uint32_t count = view.header()->string_count.load(std::memory_order_acquire);
  if (id > count || count > view.caps.strings) {
    return NotFoundError("string id " + std::to_string(id) + " is not in the string table (" +
                         std::to_string(count) + " strings)");
  }
  uint64_t entry = view.string_index()[id - 1];
  uint64_t offset = entry >> 32;
  uint64_t length = entry & 0xffffffffu;
  if (offset + length > view.caps.string_bytes) {
    return NotFoundError("string id " + std::to_string(id) + " points outside the string table");
  }
  return std::string_view(view.string_bytes() + offset, length);
}

}  // namespace npukit::telemetry::detail
