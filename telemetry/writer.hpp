// Writer: the single publisher of a node's telemetry (the daemon, or the in-process bus). It
// creates the segment (segment.hpp: O_EXCL, stale recovery, refusal when a writer is alive),
// writes the static identity once, then publishes:
//   - entity values (node, devices, links) through Update, one seqlock commit per Update;
//   - the process table (one seqlock, replaced as a whole);
//   - events into the ring (event_ring.hpp), with string ids from the string table;
//   - a heartbeat (CLOCK_MONOTONIC ns in the header) that readers use for stale detection.
// Publishing never waits for readers, except record() for registered lossless readers.
//
// Fields not set in an Update keep their previous value and status; a field never published
// reads kBlank. Rejected publishes (unknown field, field of another level, a field the reader
// fills from the header) are not errors to the caller: they are counted in
// npukit_bus_publish_errors_total (self-telemetry), which tests and the daemon can watch.
// Every device commit also stores npu_snapshot_checksum (snapshot.hpp: device_checksum), so any
// reader can prove a device snapshot is not torn.
//
// Lifetime: close() (or the destructor) marks the segment closed (readers report "writer
// closed the segment" at once) and unlinks it.
//
// Thread-safety: one publishing thread (the seqlocks assume a single writer). heartbeat() and
// reap_dead_readers() may be called from any thread, e.g. a timer thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "telemetry/event_ring.hpp"
#include "telemetry/events.hpp"
#include "telemetry/fields.hpp"
#include "telemetry/layout.hpp"
#include "telemetry/segment.hpp"
#include "telemetry/snapshot.hpp"
#include "telemetry/string_table.hpp"

namespace npukit::telemetry {

struct WriterOptions {
  std::string node = "npukit";  // node name (naming.hpp rules)
  NodeInfo node_info;           // node_name, writer_pid (and start_realtime_ns unless given) are filled in
  std::vector<DeviceInfo> devices;
  std::vector<LinkInfo> links;
  uint32_t max_processes = 256;
  uint32_t event_capacity = 1u << 16;  // power of two; 64 bytes per event
  uint32_t string_capacity = 8192;
  uint32_t string_bytes = 512u << 10;
  uint32_t lossless_readers = 8;
  std::chrono::nanoseconds lossless_timeout = std::chrono::seconds(1);
  Access access;              // shm permissions (ignored in memory)
  std::string control_path;  // the control socket, recorded in the header for clients
};

class Writer {
 public:
  // A POSIX shm segment "/npukit-<node>".
  static Result<std::unique_ptr<Writer>> create(const WriterOptions& options);
  // The same layout in a private heap buffer (the in-process bus).
  static Result<std::unique_ptr<Writer>> create_in_memory(const WriterOptions& options);
  // close().
  ~Writer();
  // Marks the segment closed and removes its name; readers report stale from now on. Publish
  // nothing afterwards. Idempotent.
  void close();
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // Staged values for one entity, published by commit() (or the destructor). Move-only; one
  // live Update per Writer at a time.
  class Update {
   public:
    template <typename T>
      requires std::is_arithmetic_v<T>
    Update& set(FieldId id, T value) {
      if constexpr (std::is_floating_point_v<T>) return set_double(id, static_cast<double>(value));
      else if constexpr (std::is_signed_v<T>) return set_signed(id, static_cast<int64_t>(value));
      else return set_unsigned(id, static_cast<uint64_t>(value));
    }
    // kNotSupported or kBlank (value cleared); kOk comes from set().
    Update& set_status(FieldId id, SampleStatus status);
    void commit();
    ~Update() { commit(); }
    Update(Update&& other) noexcept;
    Update& operator=(Update&&) = delete;

   private:
    friend class Writer;
    Update(Writer* w, EntityLevel level, int entity);
    Update& set_unsigned(FieldId id, uint64_t v);
    Update& set_signed(FieldId id, int64_t v);
    Update& set_double(FieldId id, double v);
    const FieldDef* accept(FieldId id);
    void stage(const FieldDef* f, uint64_t bits, SampleStatus status);

    Writer* w_;
    EntityLevel level_;
    uint64_t* values_;   // the writer's private shadow of this entity
    uint8_t* statuses_;
    uint64_t* slot_;     // in the segment
    uint64_t* checksum_;  // the shadow's npu_snapshot_checksum (devices only)
    std::size_t lo_, hi_;  // dirty value range [lo_, hi_)
  };
  // Out-of-range entities return an Update that rejects every set() (counted).
  Update update_node();
  Update update_device(int device);
  Update update_link(int link);

  // Replaces the process table. More than max_processes: the first max_processes are
  // published and OutOfMemory is returned (counted).
  Status set_processes(std::span<const ProcessInfo> processes);

  // Appends an event (ev.seq is assigned and returned).
  uint64_t record(const Event& ev);
  // String id for events; see string_table.hpp for errors.
  Result<uint32_t> intern(std::string_view s);

  // Stores CLOCK_MONOTONIC now as the heartbeat and drops dead lossless readers. Call at least
  // every stale threshold / 4 (readers default to 2 s). Any thread.
  void heartbeat();

  const std::string& node() const { return node_; }
  const std::string& segment_name() const { return segment_name_; }
  int device_count() const { return static_cast<int>(view_.caps.devices); }
  int link_count() const { return static_cast<int>(view_.caps.links); }
  // For readers in the same process (the in-process bus).
  const detail::View& view() const { return view_; }
  std::shared_ptr<Segment> segment() const { return segment_; }

 private:
  Writer() = default;
  static Result<std::unique_ptr<Writer>> create_with(const WriterOptions& options, bool in_memory);
  void initialise(const WriterOptions& options);
  Update update(EntityLevel level, int entity);
  void publish_error();

  std::string node_;
  std::string segment_name_;
  std::shared_ptr<Segment> segment_;
  detail::View view_;
  std::vector<uint64_t> shadow_values_[3];
  std::vector<uint64_t> shadow_statuses_[3];  // status bytes packed into words, like the slots
  std::unique_ptr<detail::RingWriter> ring_;
  std::unique_ptr<detail::StringTableWriter> strings_;
};

// Fields the reader fills from the segment header (heartbeat, device count, bus
// self-telemetry); the writer rejects them in Update::set().
bool header_sourced_field(FieldId id);

}  // namespace npukit::telemetry
