// The segment's append-only string table (internal to the bus): the writer interns a string
// once and events carry its u32 id; readers resolve ids. Id 0 is the empty string.
//
// Publication: the writer copies the bytes and the index entry, then stores the new count with
// release; readers load the count with acquire and only touch entries below it, which are never
// written again. Capacity is fixed at segment creation; when full, intern() fails with
// OutOfMemory and the header's string_table_full_total is incremented (self-telemetry).
//
// Thread-safety: StringTableWriter belongs to the writer's publishing thread; resolve_string()
// may run concurrently with it from any thread or process.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>

#include "telemetry/layout.hpp"
#include "telemetry/status.hpp"

namespace npukit::telemetry::detail {

inline constexpr std::size_t kMaxStringLength = 1024;

class StringTableWriter {
 public:
  StringTableWriter(const View& view, std::string segment_name)
      : view_(view), segment_name_(std::move(segment_name)) {}
  // The id of `s`, interning it on first use. InvalidArgument for strings longer than
  // kMaxStringLength; OutOfMemory (counted) when the table is full.
  Result<uint32_t> intern(std::string_view s);

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  View view_;
  std::string segment_name_;
  std::unordered_map<std::string, uint32_t, Hash, std::equal_to<>> ids_;
};

// The string for `id`, valid while the segment stays mapped; NotFound for unknown ids.
Result<std::string_view> resolve_string(const View& view, uint32_t id);

}  // namespace npukit::telemetry::detail
