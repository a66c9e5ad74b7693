#include "telemetry/reader.hpp"

#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <thread>

#include "telemetry/event_ring.hpp"
#include "telemetry/seqlock.hpp"
#include "telemetry/string_table.hpp"
#include "telemetry/writer.hpp"

namespace npukit::telemetry {

namespace {

using detail::SegmentHeader;

// Paces the retries of one seqlock read: spin, then yield, then sleep. A writer preempted
// mid-commit can hold a slot for a scheduler quantum or more on a loaded machine, so the reader
// waits it out (on its own time: the writer never waits). It gives up when the writer is gone or
// the whole read's deadline passed (a writer hung mid-commit, or a segment whose sequence words
// are garbage and never read as a finished write: one second for the snapshot, not per slot).
class RetryPacer {
 public:
  RetryPacer(int writer_pid, uint64_t deadline_ns) : writer_pid_(writer_pid), deadline_ns_(deadline_ns) {}
  bool again() {
    ++attempt_;
    if (attempt_ < 64) {
      detail::cpu_relax();
      return true;
    }
    if (attempt_ < 256) {
      std::this_thread::yield();
      return true;
    }
    if (monotonic_ns() >= deadline_ns_) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
    return attempt_ % 64 != 0 || pid_alive(writer_pid_);
  }

 private:
  int writer_pid_;
  uint64_t deadline_ns_;
  uint32_t attempt_ = 0;
};

constexpr uint64_t kSnapshotDeadlineNs = 1'000'000'000;  // a whole snapshot read, however corrupt
constexpr uint64_t kStaleReadDeadlineNs = 20'000'000;   // a stale writer's last device values: no one is writing

std::string fixed(const char* s, std::size_t n) { return std::string(s, strnlen(s, n)); }

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%016" PRIx64, v);
  return buf;
}

std::string seconds(uint64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f s", static_cast<double>(ns) / 1e9);
  return buf;
}

}  // namespace

Result<std::unique_ptr<Reader>> Reader::open(const ReaderOptions& options) {
  auto seg = Segment::open_shm(options.node, false);
  if (!seg.ok()) return seg.status();
  std::unique_ptr<Reader> r(new Reader());
  r->options_ = options;
  r->node_ = options.node;
  r->segment_name_ = (*seg)->name();
  r->segment_ = std::move(*seg);
  NPUKIT_RETURN_IF_ERROR(r->validate(r->segment_->size()));
  r->load_identity();
  return r;
}

std::unique_ptr<Reader> Reader::attach(const Writer& writer, const ReaderOptions& options) {
  std::unique_ptr<Reader> r(new Reader());
  r->options_ = options;
  r->node_ = writer.node();
  r->segment_name_ = writer.segment_name();
  r->segment_ = writer.segment();
  r->writable_ = true;
  r->view_ = writer.view();
  r->load_identity();
  return r;
}

Status Reader::validate(std::size_t size) {
  const std::string& name = segment_name_;
  auto fail = [](std::string m) { return Status(Code::kFailedPrecondition, std::move(m)); };
  std::byte* base = segment_->data();
  uint64_t magic = 0;
  if (size >= sizeof(detail::HeaderPrefix)) {
    magic = std::atomic_ref<uint64_t>(reinterpret_cast<SegmentHeader*>(base)->prefix.magic)
                .load(std::memory_order_acquire);
  }
  bool zero_prefix = size == 0 || (size >= sizeof(detail::HeaderPrefix) && magic == 0);
  if (zero_prefix) {
    return Status(Code::kUnavailable, "node '" + node_ + "' is starting up (shm segment " + name +
                                          " is not initialised yet)");
  }
  if (size < sizeof(detail::HeaderPrefix) || magic != detail::kMagic) {
    return fail("shm segment " + name + " is not an npukit segment (bad magic)");
  }
  const auto* h = reinterpret_cast<const SegmentHeader*>(base);
  if (h->prefix.abi_version != detail::kAbiVersion) {
    return fail("shm segment " + name + " has ABI version " + std::to_string(h->prefix.abi_version) +
                ", this tool speaks " + std::to_string(detail::kAbiVersion));
  }
  if (h->prefix.field_table_hash != field_table_hash()) {
    return fail("shm segment " + name + " was written with a different field table (hash " +
                hex(h->prefix.field_table_hash) + ", this tool has " + hex(field_table_hash()) +
                "); use tools from the same npukit build as the daemon");
  }
  if (size < sizeof(SegmentHeader)) {
    return fail("shm segment " + name + " is truncated (" + std::to_string(size) + " bytes)");
  }
  Status caps = detail::validate_capacities(h->caps);
  if (!caps.ok()) return fail("shm segment " + name + " has a corrupt header: " + caps.message());
  detail::View view = detail::make_view(base, h->caps);
  if (h->prefix.total_bytes != view.layout.total) {  // a header at odds with itself, whatever the file's size
    return fail("shm segment " + name + " has a corrupt header: its capacities need " +
                std::to_string(view.layout.total) + " bytes, its total_bytes says " +
                std::to_string(h->prefix.total_bytes));
  }
  if (view.layout.total > size) {
    return fail("shm segment " + name + " is truncated (" + std::to_string(size) +
                " bytes, its header needs " + std::to_string(view.layout.total) + ")");
  }
  view_ = view;
  control_path_ = fixed(h->control_path, sizeof h->control_path);
  return Status::Ok();
}

void Reader::load_identity() {
  auto id = std::make_shared<SnapshotIdentity>();
  const detail::NodeInfoBlock* n = view_.node_info();
  const SegmentHeader* h = view_.header();
  id->node = {fixed(n->node_name, sizeof n->node_name), fixed(n->node_spec, sizeof n->node_spec),
              fixed(n->topology, sizeof n->topology), fixed(n->driver_version, sizeof n->driver_version),
              fixed(n->tool_version, sizeof n->tool_version), n->card_count, h->start_realtime_ns,
              h->prefix.writer_pid};
  id->node.device_base = n->device_base;
  id->node.inter_group_bytes_per_s = n->inter_group_bytes_per_s;
  for (uint32_t i = 0; i < view_.caps.devices; ++i) {
    const detail::DeviceInfoBlock* d = view_.device_info(i);
    id->devices.push_back({d->npu_id, d->chip_id, d->logic_id, d->phy_id, d->aicore_count,
                           d->aicpu_count, fixed(d->name, sizeof d->name),
                           fixed(d->chip_name, sizeof d->chip_name), fixed(d->chip_type, sizeof d->chip_type),
                           fixed(d->bus_id, sizeof d->bus_id), fixed(d->serial_number, sizeof d->serial_number),
                           fixed(d->firmware_version, sizeof d->firmware_version),
                           fixed(d->smi_layout, sizeof d->smi_layout), fixed(d->chip_version, sizeof d->chip_version),
                           fixed(d->board_id, sizeof d->board_id), fixed(d->pcb_id, sizeof d->pcb_id),
                           fixed(d->bom_id, sizeof d->bom_id), fixed(d->die_id, sizeof d->die_id)});
  }
  for (uint32_t i = 0; i < view_.caps.links; ++i) {
    const detail::LinkInfoBlock* l = view_.link_info(i);
    id->links.push_back({l->device_a, l->device_b, fixed(l->kind, sizeof l->kind), l->peak_bytes_per_s, l->latency_ns});
  }
  identity_ = std::move(id);
}

std::string Reader::stale_reason() const {
  const SegmentHeader* h = view_.header();
  const int pid = h->prefix.writer_pid;
  if (h->state.load(std::memory_order_acquire) == detail::kStateClosed) {
    return "writer pid " + std::to_string(pid) + " closed the segment";
  }
  const uint64_t now = monotonic_ns();
  if (now >= next_pid_check_ns_.load(std::memory_order_relaxed)) {
    writer_alive_.store(pid_alive(pid), std::memory_order_relaxed);
    next_pid_check_ns_.store(now + static_cast<uint64_t>(options_.pid_check_interval.count()),
                             std::memory_order_relaxed);
  }
  if (!writer_alive_.load(std::memory_order_relaxed)) return "writer pid " + std::to_string(pid) + " is gone";
  const uint64_t hb = h->heartbeat_ns.load(std::memory_order_acquire);
  const auto limit = static_cast<uint64_t>(options_.stale_after.count());
  if (limit > 0 && now > hb && now - hb > limit) {
    return "heartbeat is " + seconds(now - hb) + " old (threshold " + seconds(limit) + ")";
  }
  return {};
}

bool Reader::closed() const { return view_.header()->state.load(std::memory_order_acquire) == detail::kStateClosed; }

bool Reader::replaced() const { return segment_->is_shm() && !segment_->name_refers_to_this(); }

bool Reader::read_slot(std::size_t level, std::size_t entity, uint64_t* values, uint8_t* statuses,
                       uint64_t deadline_ns) const {
  const std::size_t n = field_count(static_cast<EntityLevel>(level));
  const std::size_t sw = detail::status_words(n);
  const uint64_t* slot = view_.slot(level, entity);
  uint64_t status_buf[64];  // up to 512 fields per level
  RetryPacer pacer(writer_pid(), deadline_ns);
  do {
    uint64_t begin = detail::seq_read_begin(slot);
    if ((begin & 1) == 0) {
      detail::copy_out(values, slot + 1, n);
      detail::copy_out(status_buf, slot + 1 + n, sw);
      if (detail::seq_read_valid(slot, begin)) {
        std::memcpy(statuses, status_buf, n);
        return true;
      }
    }
  } while (pacer.again());
  return false;
}

bool Reader::read_processes(std::vector<ProcessInfo>* out, uint64_t deadline_ns) const {
  const uint64_t* table = view_.process_table();
  RetryPacer pacer(writer_pid(), deadline_ns);
  do {
    out->clear();
    uint64_t begin = detail::seq_read_begin(table);
    if ((begin & 1) == 0) {
      uint64_t n = std::min<uint64_t>(detail::load_acquire(table + 1), view_.caps.processes);
      for (uint64_t i = 0; i < n; ++i) {
        uint64_t e[detail::kProcessEntryWords];
        detail::copy_out(e, table + 8 + i * detail::kProcessEntryWords, detail::kProcessEntryWords);
        const char* name = reinterpret_cast<const char*>(&e[3]);
        out->push_back({static_cast<int32_t>(e[0]), static_cast<int32_t>(e[1]), e[2],
                        std::string(name, strnlen(name, detail::kProcessNameBytes))});
      }
      if (detail::seq_read_valid(table, begin)) return true;
    }
  } while (pacer.again());
  out->clear();
  return false;
}

void Reader::fill_header_fields(uint64_t* values, uint8_t* statuses) const {
  const SegmentHeader* h = view_.header();
  auto put = [&](FieldId id, uint64_t v) {
    const FieldDef* f = find_field(id);
    values[f->slot] = v;
    statuses[f->slot] = static_cast<uint8_t>(SampleStatus::kOk);
  };
  constexpr auto r = std::memory_order_relaxed;
  put(fid::kNodeHeartbeatNs, h->heartbeat_ns.load(r));
  put(fid::kNodeDeviceCount, view_.caps.devices);
  put(fid::kBusEventsTotal, h->event_head.load(r));
  put(fid::kBusStringsInterned, h->string_count.load(r));
  put(fid::kBusStringTableFullTotal, h->string_table_full_total.load(r));
  put(fid::kBusPublishErrorsTotal, h->publish_errors_total.load(r));
  put(fid::kBusLosslessTimeoutsTotal, h->lossless_timeouts_total.load(r));
  put(fid::kBusLosslessDeadReadersTotal, h->lossless_dead_readers_total.load(r));
}

void Reader::read(Snapshot* out) const {
  SnapshotBuilder b(*out);
  b.set_identity(identity_);
  b.set_taken_at(monotonic_ns());
  const std::size_t entities[3] = {1, view_.caps.devices, view_.caps.links};
  for (std::size_t l = 0; l < 3; ++l) b.resize(static_cast<EntityLevel>(l), entities[l]);
  std::string stale = stale_reason();
  if (!stale.empty()) {
    // The devices' last words (mark_stale keeps only their error codes), read without waiting
    // long: a writer that died mid-commit leaves that slot blank.
    const uint64_t soon = monotonic_ns() + kStaleReadDeadlineNs;
    const std::size_t device_level = static_cast<std::size_t>(EntityLevel::kDevice);
    for (std::size_t e = 0; e < entities[device_level]; ++e) {
      uint8_t* statuses = b.statuses(EntityLevel::kDevice, static_cast<int>(e));
      uint64_t* values = b.values(EntityLevel::kDevice, static_cast<int>(e));
      if (!read_slot(device_level, e, values, statuses, soon)) std::memset(values, 0, field_count(EntityLevel::kDevice) * 8);
    }
    b.mark_stale(std::move(stale));
    return;
  }
  b.mark_live();
  const uint64_t deadline = monotonic_ns() + kSnapshotDeadlineNs;
  std::size_t unreadable = 0;
  for (std::size_t l = 0; l < 3; ++l) {
    auto level = static_cast<EntityLevel>(l);
    for (std::size_t e = 0; e < entities[l]; ++e) {
      uint8_t* statuses = b.statuses(level, static_cast<int>(e));
      uint64_t* values = b.values(level, static_cast<int>(e));
      if (!read_slot(l, e, values, statuses, deadline)) {  // writer died or hung mid-commit: no value
        std::memset(values, 0, field_count(level) * 8);
        std::memset(statuses, static_cast<int>(SampleStatus::kStale), field_count(level));
        ++unreadable;
      }
    }
  }
  fill_header_fields(b.values(EntityLevel::kNode, 0), b.statuses(EntityLevel::kNode, 0));
  if (!read_processes(&b.processes(), deadline)) ++unreadable;
  if (unreadable > 0) {
    b.mark_stale(std::to_string(unreadable) + " slot(s) of " + segment_name_ +
                 " never read as a finished write within 1 s (writer hung mid-commit, or a corrupt segment)");
  }
}

Snapshot Reader::snapshot() const {
  Snapshot s;
  read(&s);
  return s;
}

Result<std::unique_ptr<EventCursor>> Reader::open_events(bool lossless) const {
  auto keep = std::static_pointer_cast<const void>(segment_);
  if (!lossless || writable_) {
    auto c = detail::RingCursor::open(view_, keep, lossless, view_, keep, segment_name_);
    if (!c.ok()) return c.status();
    return std::unique_ptr<EventCursor>(std::move(*c));
  }
  auto rw = Segment::open_shm(node_, true);
  if (!rw.ok()) {
    return Status(Code::kFailedPrecondition,
                  "lossless events need write access to " + segment_name_ + ": " + rw.status().message());
  }
  std::shared_ptr<Segment> rw_seg = std::move(*rw);
  if (rw_seg->size() != segment_->size() || !rw_seg->name_refers_to_this() || replaced()) {
    return Status(Code::kUnavailable, "node '" + node_ + "' restarted while opening its events; retry");
  }
  detail::View rw_view = detail::make_view(rw_seg->data(), view_.caps);
  auto c = detail::RingCursor::open(view_, keep, true, rw_view, rw_seg, segment_name_);
  if (!c.ok()) return c.status();
  return std::unique_ptr<EventCursor>(std::move(*c));
}

Result<std::string> Reader::resolve(uint32_t string_id) const {
  auto s = detail::resolve_string(view_, string_id);
  if (!s.ok()) return s.status();
  return std::string(*s);
}

}  // namespace npukit::telemetry
