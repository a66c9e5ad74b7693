// The binary layout of a node's telemetry segment (internal to the bus; tests use it to craft
// foreign and wrong-version segments).
//
//   [SegmentHeader][NodeInfoBlock][DeviceInfoBlock x devices][LinkInfoBlock x links]
//   [node slot][device slot x devices][link slot x links]          entity seqlock slots
//   [process table: seq, count, ProcessEntry x processes]          one seqlock
//   [event record x events]                                         ring, 64 B records
//   [ReaderSlot x lossless_readers]                                 lossless cursors
//   [string index: (offset, length) x strings][string bytes]        append-only string table
//
// Every region starts on a 64-byte boundary. An entity slot is [seq][value x n][status words],
// n = the number of fields of the entity's level, statuses one byte per field packed into
// 64-bit words. Offsets are a pure function of Capacities and the field counts, so the reader
// recomputes them; the ABI version covers the function, the field-table hash covers the counts.
//
// The first 32 bytes (HeaderPrefix) never change across ABI versions, so any version can tell
// who owns a segment. The writer stores `magic` last (release): a reader that sees the magic
// sees a fully initialised segment.
//
// Thread-safety: compute_layout() and validate_capacities() are pure. The memory described here
// is shared between processes: identity blocks are immutable once the magic is published,
// std::atomic members are the only mutable header fields, and slots, process table and event
// records follow the seqlock rules of seqlock.hpp.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "telemetry/status.hpp"

namespace npukit::telemetry::detail {

inline constexpr uint64_t kMagic = 0x47455354494b504eull;  // "NPKITSEG" little-endian
inline constexpr uint32_t kAbiVersion = 8;  // 2: board identity in DeviceInfoBlock; 3: error codes 2-4, link rate/flaps;
                                            // 4: the rate of the link between HCCS groups; 5: link latency;
                                            // 6: a link's device_a is its sending end (-1: host, switch, network)
                                            // 7: the HBM bytes written (npu_hbm_write_bytes_total)
                                            // 8: a collective event's word b carries its peer (comm_group.hpp)
inline constexpr uint32_t kStateLive = 1;
inline constexpr uint32_t kStateClosed = 2;
inline constexpr std::size_t kEventRecordWords = 8;

struct Capacities {
  uint32_t devices = 0;
  uint32_t links = 0;
  uint32_t processes = 256;
  uint32_t events = 1u << 16;        // power of two
  uint32_t strings = 8192;
  uint32_t string_bytes = 512u << 10;
  uint32_t lossless_readers = 8;
  uint32_t reserved = 0;
};

struct HeaderPrefix {
  uint64_t magic;
  uint32_t abi_version;
  int32_t writer_pid;
  uint64_t total_bytes;
  uint64_t field_table_hash;
};
static_assert(sizeof(HeaderPrefix) == 32);

struct alignas(64) SegmentHeader {
  HeaderPrefix prefix;
  uint64_t start_realtime_ns;
  std::atomic<uint64_t> heartbeat_ns;  // CLOCK_MONOTONIC, ns; written by Writer::heartbeat()
  std::atomic<uint32_t> state;         // kStateLive, then kStateClosed on a clean close
  uint32_t field_counts[3];            // node, device, link fields at creation
  Capacities caps;
  char control_path[108];              // the daemon's control socket ("" when none)
  alignas(64) std::atomic<uint64_t> event_head;  // events recorded = next event's sequence number
  alignas(64) std::atomic<uint64_t> lossless_count;  // registered lossless readers
  std::atomic<uint64_t> lossless_epoch;              // bumped on every registration
  alignas(64) std::atomic<uint32_t> string_count;    // strings published (ids 1..count)
  uint32_t string_bytes_used;                        // written by the writer only
  // Self-telemetry, incremented by the writer only.
  std::atomic<uint64_t> string_table_full_total;
  std::atomic<uint64_t> publish_errors_total;
  std::atomic<uint64_t> lossless_timeouts_total;
  std::atomic<uint64_t> lossless_dead_readers_total;
};
static_assert(std::atomic<uint64_t>::is_always_lock_free && std::atomic<uint32_t>::is_always_lock_free);

struct NodeInfoBlock {
  char node_name[64];
  char node_spec[64];
  char topology[32];
  char driver_version[32];
  char tool_version[32];
  int32_t card_count;
  int32_t device_base;  // a cluster host's bus: the cluster-wide id of its device 0 (0 elsewhere)
  double inter_group_bytes_per_s;  // the host's link between its HCCS groups (0: none)
};

struct DeviceInfoBlock {
  int32_t npu_id, chip_id, logic_id, phy_id, aicore_count, aicpu_count;
  char name[32];
  char chip_name[32];
  char chip_type[32];
  char bus_id[16];
  char serial_number[32];
  char firmware_version[32];
  char smi_layout[16];
  char chip_version[16];
  char board_id[16];
  char pcb_id[16];
  char bom_id[16];
  char die_id[48];
};

struct LinkInfoBlock {
  int32_t device_a, device_b;
  char kind[16];
  double peak_bytes_per_s;
  double latency_ns;
};

// A process entry is 8 words: pid, device, hbm_bytes, name (4 words = 32 bytes), reserved.
inline constexpr std::size_t kProcessEntryWords = 8;
inline constexpr std::size_t kProcessNameBytes = 32;

struct alignas(64) ReaderSlot {
  uint64_t owner;   // 0 free, else (pid << 32) | tag; atomic
  uint64_t cursor;  // next event sequence the reader needs; atomic
  uint64_t reserved[6];
};

struct Layout {
  std::size_t node_info = 0, device_info = 0, link_info = 0;
  std::size_t slot_words[3] = {0, 0, 0};  // words per entity slot, per level
  std::size_t slots[3] = {0, 0, 0};       // offset of the first slot, per level
  std::size_t processes = 0, events = 0, readers = 0, string_index = 0, string_bytes = 0;
  std::size_t total = 0;
};

// Offsets for `caps` and the field counts of this build.
Layout compute_layout(const Capacities& caps);
// Checks that caps are usable (events a power of two, limits respected).
Status validate_capacities(const Capacities& caps);

inline std::size_t status_words(std::size_t fields) { return (fields + 7) / 8; }

// Typed, non-owning access to a mapped segment whose header has been validated (or is being
// initialised by its writer).
struct View {
  std::byte* base = nullptr;
  Capacities caps;
  Layout layout;

  SegmentHeader* header() const { return reinterpret_cast<SegmentHeader*>(base); }
  uint64_t* words(std::size_t offset) const { return reinterpret_cast<uint64_t*>(base + offset); }
  uint64_t* slot(std::size_t level, std::size_t entity) const {
    return words(layout.slots[level]) + entity * layout.slot_words[level];
  }
  NodeInfoBlock* node_info() const { return reinterpret_cast<NodeInfoBlock*>(base + layout.node_info); }
  DeviceInfoBlock* device_info(std::size_t i) const {
    return reinterpret_cast<DeviceInfoBlock*>(base + layout.device_info) + i;
  }
  LinkInfoBlock* link_info(std::size_t i) const {
    return reinterpret_cast<LinkInfoBlock*>(base + layout.link_info) + i;
  }
  // [0] seq, [1] count, entries from word 8.
  uint64_t* process_table() const { return words(layout.processes); }
  uint64_t* event_record(uint64_t seq) const {
    return words(layout.events) + (seq & (caps.events - 1)) * kEventRecordWords;
  }
  ReaderSlot* reader_slot(std::size_t i) const {
    return reinterpret_cast<ReaderSlot*>(base + layout.readers) + i;
  }
  uint64_t* string_index() const { return words(layout.string_index); }
  char* string_bytes() const { return reinterpret_cast<char*>(base + layout.string_bytes); }
};

inline View make_view(std::byte* base, const Capacities& caps) {
  return View{base, caps, compute_layout(caps)};
}

}  // namespace npukit::telemetry::detail
