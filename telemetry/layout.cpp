#include "telemetry/layout.hpp"

#include <string>

#include "telemetry/fields.hpp"

namespace npukit::telemetry::detail {

namespace {

std::size_t round64(std::size_t n) { return (n + 63) & ~std::size_t{63}; }

// Limits keep a corrupt or hostile header from asking for absurd mappings.
constexpr uint32_t kMaxDevices = 1024;
constexpr uint32_t kMaxLinks = 16384;
constexpr uint32_t kMaxProcesses = 1u << 16;
constexpr uint32_t kMaxEvents = 1u << 24;
constexpr uint32_t kMaxStrings = 1u << 20;
constexpr uint32_t kMaxStringBytes = 64u << 20;
constexpr uint32_t kMaxLosslessReaders = 64;

}  // namespace

Status validate_capacities(const Capacities& c) {
  auto bad = [](const char* what, uint64_t value, uint64_t max) {
    return InvalidArgument(std::string("segment capacity '") + what + "' is " +
                           std::to_string(value) + ", must be <= " + std::to_string(max));
  };
  if (c.devices > kMaxDevices) return bad("devices", c.devices, kMaxDevices);
  if (c.links > kMaxLinks) return bad("links", c.links, kMaxLinks);
  if (c.processes > kMaxProcesses) return bad("processes", c.processes, kMaxProcesses);
  if (c.events > kMaxEvents) return bad("events", c.events, kMaxEvents);
  if (c.strings > kMaxStrings) return bad("strings", c.strings, kMaxStrings);
  if (c.string_bytes > kMaxStringBytes) return bad("string_bytes", c.string_bytes, kMaxStringBytes);
  if (c.lossless_readers > kMaxLosslessReaders) {
    return bad("lossless_readers", c.lossless_readers, kMaxLosslessReaders);
  }
  if (c.events < 2 || (c.events & (c.events - 1)) != 0) {
    return InvalidArgument("segment capacity 'events' is " + std::to_string(c.events) +
                           ", must be a power of two >= 2");
  }
  return Status::Ok();
}

Layout compute_layout(const Capacities& caps) {
  Layout l;
  std::size_t at = round64(sizeof(SegmentHeader));
  l.node_info = at;
  at = round64(at + sizeof(NodeInfoBlock));
  l.device_info = at;
  at = round64(at + sizeof(DeviceInfoBlock) * caps.devices);
  l.link_info = at;
  at = round64(at + sizeof(LinkInfoBlock) * caps.links);
  const uint32_t entities[3] = {1, caps.devices, caps.links};
  for (std::size_t level = 0; level < 3; ++level) {
    std::size_t fields = field_count(static_cast<EntityLevel>(level));
    l.slot_words[level] = round64((1 + fields + status_words(fields)) * 8) / 8;
    l.slots[level] = at;
    at += l.slot_words[level] * 8 * entities[level];
  }
  l.processes = at;
  at = round64(at + 64 + kProcessEntryWords * 8 * caps.processes);
  l.events = at;
  at += kEventRecordWords * 8 * std::size_t{caps.events};
  l.readers = at;
  at += sizeof(ReaderSlot) * caps.lossless_readers;
  l.string_index = at;
  at = round64(at + 8 * std::size_t{caps.strings});
  l.string_bytes = at;
  at = round64(at + caps.string_bytes);
  l.total = at;
  return l;
}

}  // namespace npukit::telemetry::detail
