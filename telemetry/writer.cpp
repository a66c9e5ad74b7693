#include "telemetry/writer.hpp"

#include <unistd.h>

#include <bit>
#include <cstring>
#include <new>

#include "telemetry/naming.hpp"
#include "telemetry/seqlock.hpp"

namespace npukit::telemetry {

namespace {

using detail::Capacities;
using detail::SegmentHeader;

constexpr std::size_t L(EntityLevel level) { return static_cast<std::size_t>(level); }

// The identity blocks, encoded and validated before any segment exists.
struct Identity {
  detail::NodeInfoBlock node{};
  std::vector<detail::DeviceInfoBlock> devices;
  std::vector<detail::LinkInfoBlock> links;
};

template <std::size_t N>
Status copy_fixed(char (&dst)[N], const std::string& s, const std::string& what) {
  if (s.size() >= N) {
    return InvalidArgument(what + " '" + s + "' is longer than " + std::to_string(N - 1) +
                           " characters");
  }
  std::memset(dst, 0, N);
  std::memcpy(dst, s.data(), s.size());
  return Status::Ok();
}

Status encode_device(const DeviceInfo& d, const std::string& at, detail::DeviceInfoBlock* b) {
  *b = {d.npu_id, d.chip_id, d.logic_id, d.phy_id, d.aicore_count, d.aicpu_count, {}, {}, {}, {},
        {}, {}, {}, {}, {}, {}, {}, {}};
  NPUKIT_RETURN_IF_ERROR(copy_fixed(b->chip_version, d.chip_version, at + " chip_version"));
  NPUKIT_RETURN_IF_ERROR(copy_fixed(b->board_id, d.board_id, at + " board_id"));
  NPUKIT_RETURN_IF_ERROR(copy_fixed(b->pcb_id, d.pcb_id, at + " pcb_id"));
  NPUKIT_RETURN_IF_ERROR(copy_fixed(b->bom_id, d.bom_id, at + " bom_id"));
  NPUKIT_RETURN_IF_ERROR(copy_fixed(b->die_id, d.die_id, at + " die_id"));
  NPUKIT_RETURN_IF_ERROR(copy_fixed(b->name, d.name, at + " name"));
  NPUKIT_RETURN_IF_ERROR(copy_fixed(b->chip_name, d.chip_name, at + " chip_name"));
  NPUKIT_RETURN_IF_ERROR(copy_fixed(b->chip_type, d.chip_type, at + " chip_type"));
  NPUKIT_RETURN_IF_ERROR(copy_fixed(b->bus_id, d.bus_id, at + " bus_id"));
  NPUKIT_RETURN_IF_ERROR(copy_fixed(b->serial_number, d.serial_number, at + " serial_number"));
  NPUKIT_RETURN_IF_ERROR(copy_fixed(b->firmware_version, d.firmware_version, at + " firmware_version"));
  return copy_fixed(b->smi_layout, d.smi_layout, at + " smi_layout");
}

Result<Identity> encode_identity(const WriterOptions& o) {
  Identity id;
  const std::string at = "writer for node '" + o.node + "': ";
  NPUKIT_RETURN_IF_ERROR(copy_fixed(id.node.node_name, o.node, at + "node name"));
  NPUKIT_RETURN_IF_ERROR(copy_fixed(id.node.node_spec, o.node_info.node_spec, at + "node_spec"));
  NPUKIT_RETURN_IF_ERROR(copy_fixed(id.node.topology, o.node_info.topology, at + "topology"));
  NPUKIT_RETURN_IF_ERROR(copy_fixed(id.node.driver_version, o.node_info.driver_version, at + "driver_version"));
  NPUKIT_RETURN_IF_ERROR(copy_fixed(id.node.tool_version, o.node_info.tool_version, at + "tool_version"));
  id.node.card_count = o.node_info.card_count;
  id.node.device_base = o.node_info.device_base;
  id.node.inter_group_bytes_per_s = o.node_info.inter_group_bytes_per_s;
  id.devices.resize(o.devices.size());
  for (std::size_t i = 0; i < o.devices.size(); ++i) {
    NPUKIT_RETURN_IF_ERROR(encode_device(o.devices[i], at + "device " + std::to_string(i), &id.devices[i]));
  }
  id.links.resize(o.links.size());
  for (std::size_t i = 0; i < o.links.size(); ++i) {
    const LinkInfo& l = o.links[i];
    int n = static_cast<int>(o.devices.size());
    if (l.device_a < -1 || l.device_a >= n || l.device_b < -1 || l.device_b >= n || (l.device_a < 0 && l.device_b < 0)) {
      return InvalidArgument(at + "link " + std::to_string(i) + " joins devices " +
                             std::to_string(l.device_a) + " and " + std::to_string(l.device_b) +
                             ", the node has " + std::to_string(n));
    }
    id.links[i] = {l.device_a, l.device_b, {}, l.peak_bytes_per_s, l.latency_ns};
    NPUKIT_RETURN_IF_ERROR(copy_fixed(id.links[i].kind, l.kind, at + "link " + std::to_string(i) + " kind"));
  }
  if (o.control_path.size() >= sizeof(SegmentHeader::control_path)) {
    return InvalidArgument(at + "control path '" + o.control_path + "' is too long");
  }
  return id;
}

Capacities capacities_of(const WriterOptions& o) {
  Capacities c;
  c.devices = static_cast<uint32_t>(o.devices.size());
  c.links = static_cast<uint32_t>(o.links.size());
  c.processes = o.max_processes;
  c.events = o.event_capacity;
  c.strings = o.string_capacity;
  c.string_bytes = o.string_bytes;
  c.lossless_readers = o.lossless_readers;
  return c;
}

}  // namespace

bool header_sourced_field(FieldId id) {
  return id == fid::kNodeHeartbeatNs || id == fid::kNodeDeviceCount ||
         (id >= fid::kBusEventsTotal && id <= fid::kBusLosslessDeadReadersTotal);
}

Result<std::unique_ptr<Writer>> Writer::create(const WriterOptions& options) {
  return create_with(options, false);
}

Result<std::unique_ptr<Writer>> Writer::create_in_memory(const WriterOptions& options) {
  return create_with(options, true);
}

Result<std::unique_ptr<Writer>> Writer::create_with(const WriterOptions& options, bool in_memory) {
  NPUKIT_RETURN_IF_ERROR(validate_node_name(options.node));
  if (options.devices.size() > 1024 || options.links.size() > 16384) {
    return InvalidArgument("writer for node '" + options.node + "': too many devices or links");
  }
  Capacities caps = capacities_of(options);
  NPUKIT_RETURN_IF_ERROR(detail::validate_capacities(caps));
  auto identity = encode_identity(options);
  if (!identity.ok()) return identity.status();
  detail::Layout layout = detail::compute_layout(caps);
  std::shared_ptr<Segment> segment;
  if (in_memory) {
    segment = Segment::create_heap(layout.total);
  } else {
    auto created = Segment::create_shm(options.node, layout.total, options.access);
    if (!created.ok()) return created.status();
    segment = std::move(*created);
  }
  std::unique_ptr<Writer> w(new Writer());
  w->node_ = options.node;
  w->segment_name_ = in_memory ? "(in-process bus '" + options.node + "')" : segment->name();
  w->segment_ = std::move(segment);
  w->view_ = detail::View{w->segment_->data(), caps, layout};
  std::memcpy(w->view_.node_info(), &identity->node, sizeof identity->node);
  // memcpy with a null source is undefined even for 0 bytes (a bus may have no links).
  if (!identity->devices.empty()) {
    std::memcpy(w->view_.device_info(0), identity->devices.data(),
                identity->devices.size() * sizeof(detail::DeviceInfoBlock));
  }
  if (!identity->links.empty()) {
    std::memcpy(w->view_.link_info(0), identity->links.data(),
                identity->links.size() * sizeof(detail::LinkInfoBlock));
  }
  w->initialise(options);
  return w;
}

// Header, shadows, initial device commits; the magic is stored last (release).
void Writer::initialise(const WriterOptions& options) {
  auto* h = new (view_.base) SegmentHeader{};
  h->prefix.abi_version = detail::kAbiVersion;
  h->prefix.writer_pid = ::getpid();
  h->prefix.total_bytes = view_.layout.total;
  h->prefix.field_table_hash = field_table_hash();
  const uint64_t base = options.node_info.start_realtime_ns;  // given: a cluster's hosts share one
  h->start_realtime_ns = base != 0 ? base : realtime_ns();
  h->heartbeat_ns.store(monotonic_ns(), std::memory_order_relaxed);
  h->state.store(detail::kStateLive, std::memory_order_relaxed);
  h->caps = view_.caps;
  for (std::size_t l = 0; l < 3; ++l) {
    h->field_counts[l] = static_cast<uint32_t>(field_count(static_cast<EntityLevel>(l)));
  }
  std::memcpy(h->control_path, options.control_path.data(), options.control_path.size());
  const std::size_t entities[3] = {1, view_.caps.devices, view_.caps.links};
  for (std::size_t l = 0; l < 3; ++l) {
    std::size_t n = field_count(static_cast<EntityLevel>(l));
    shadow_values_[l].assign(entities[l] * n, 0);
    shadow_statuses_[l].assign(entities[l] * detail::status_words(n), 0);
  }
  const std::size_t nd = field_count(EntityLevel::kDevice);
  const std::vector<uint8_t> blank(nd, 0);
  const uint64_t blank_sum = device_checksum(shadow_values_[L(EntityLevel::kDevice)].data(), blank.data(), nd);
  for (std::size_t d = 0; d < view_.caps.devices; ++d) {
    shadow_values_[L(EntityLevel::kDevice)][d * nd + find_field(fid::kChecksum)->slot] = blank_sum;
  }
  ring_ = std::make_unique<detail::RingWriter>(view_, options.lossless_timeout);
  strings_ = std::make_unique<detail::StringTableWriter>(view_, segment_name_);
  for (int d = 0; d < device_count(); ++d) update_device(d).set(fid::kDeviceInfo, 1u);
  std::atomic_ref<uint64_t>(h->prefix.magic).store(detail::kMagic, std::memory_order_release);
}

Writer::~Writer() { close(); }

void Writer::close() {
  if (view_.base == nullptr) return;
  view_.header()->state.store(detail::kStateClosed, std::memory_order_release);
  segment_->unlink_name();
}

Writer::Update Writer::update(EntityLevel level, int entity) { return Update(this, level, entity); }
Writer::Update Writer::update_node() { return update(EntityLevel::kNode, 0); }
Writer::Update Writer::update_device(int device) { return update(EntityLevel::kDevice, device); }
Writer::Update Writer::update_link(int link) { return update(EntityLevel::kLink, link); }

void Writer::publish_error() {
  view_.header()->publish_errors_total.fetch_add(1, std::memory_order_relaxed);
}

Writer::Update::Update(Writer* w, EntityLevel level, int entity)
    : w_(w), level_(level), values_(nullptr), statuses_(nullptr), slot_(nullptr), checksum_(nullptr),
      lo_(0), hi_(0) {
  const std::size_t l = L(level);
  const std::size_t count[3] = {1, w->view_.caps.devices, w->view_.caps.links};
  if (entity < 0 || static_cast<std::size_t>(entity) >= count[l]) {
    w->publish_error();
    w_ = nullptr;
    return;
  }
  std::size_t n = field_count(level);
  values_ = w->shadow_values_[l].data() + static_cast<std::size_t>(entity) * n;
  statuses_ = reinterpret_cast<uint8_t*>(w->shadow_statuses_[l].data() +
                                         static_cast<std::size_t>(entity) * detail::status_words(n));
  slot_ = w->view_.slot(l, static_cast<std::size_t>(entity));
  lo_ = n;
  if (level == EntityLevel::kDevice) checksum_ = values_ + find_field(fid::kChecksum)->slot;
}

Writer::Update::Update(Update&& o) noexcept
    : w_(o.w_), level_(o.level_), values_(o.values_), statuses_(o.statuses_), slot_(o.slot_),
      checksum_(o.checksum_), lo_(o.lo_), hi_(o.hi_) {
  o.w_ = nullptr;
}

const FieldDef* Writer::Update::accept(FieldId id) {
  if (w_ == nullptr) return nullptr;
  const FieldDef* f = find_field(id);
  if (f == nullptr || f->level != level_ || header_sourced_field(id) || id == fid::kChecksum) {
    w_->publish_error();
    return nullptr;
  }
  return f;
}

void Writer::Update::stage(const FieldDef* f, uint64_t bits, SampleStatus status) {
  if (checksum_ != nullptr) {  // keep npu_snapshot_checksum current, term by term
    *checksum_ += checksum_term(f->slot, bits, static_cast<uint8_t>(status)) -
                  checksum_term(f->slot, values_[f->slot], statuses_[f->slot]);
  }
  values_[f->slot] = bits;
  statuses_[f->slot] = static_cast<uint8_t>(status);
  lo_ = std::min<std::size_t>(lo_, f->slot);
  hi_ = std::max<std::size_t>(hi_, f->slot + 1u);
}

Writer::Update& Writer::Update::set_unsigned(FieldId id, uint64_t v) {
  if (const FieldDef* f = accept(id)) {
    uint64_t bits = f->type == ValueType::kF64 ? std::bit_cast<uint64_t>(static_cast<double>(v)) : v;
    stage(f, bits, SampleStatus::kOk);
  }
  return *this;
}

Writer::Update& Writer::Update::set_signed(FieldId id, int64_t v) {
  if (const FieldDef* f = accept(id)) {
    uint64_t bits = f->type == ValueType::kF64 ? std::bit_cast<uint64_t>(static_cast<double>(v))
                    : f->type == ValueType::kU64 ? static_cast<uint64_t>(v < 0 ? 0 : v)
                                                 : static_cast<uint64_t>(v);
    stage(f, bits, SampleStatus::kOk);
  }
  return *this;
}

Writer::Update& Writer::Update::set_double(FieldId id, double v) {
  if (const FieldDef* f = accept(id)) {
    uint64_t bits = f->type == ValueType::kF64 ? std::bit_cast<uint64_t>(v)
                    : f->type == ValueType::kI64 ? static_cast<uint64_t>(static_cast<int64_t>(v))
                                                 : static_cast<uint64_t>(v < 0 ? 0.0 : v);
    stage(f, bits, SampleStatus::kOk);
  }
  return *this;
}

Writer::Update& Writer::Update::set_status(FieldId id, SampleStatus status) {
  if (const FieldDef* f = accept(id)) stage(f, 0, status);
  return *this;
}

void Writer::Update::commit() {
  if (w_ == nullptr) return;
  const std::size_t n = field_count(level_);
  if (checksum_ != nullptr) {
    const std::size_t slot = static_cast<std::size_t>(checksum_ - values_);
    statuses_[slot] = static_cast<uint8_t>(SampleStatus::kOk);
    lo_ = std::min(lo_, slot);
    hi_ = std::max(hi_, slot + 1);
  }
  detail::seq_write_begin(slot_);
  if (lo_ < hi_) detail::copy_in(slot_ + 1 + lo_, values_ + lo_, hi_ - lo_);
  detail::copy_in(slot_ + 1 + n, reinterpret_cast<const uint64_t*>(statuses_), detail::status_words(n));
  detail::seq_write_end(slot_);
  w_ = nullptr;
}

Status Writer::set_processes(std::span<const ProcessInfo> processes) {
  uint64_t* table = view_.process_table();
  const std::size_t n = std::min<std::size_t>(processes.size(), view_.caps.processes);
  detail::seq_write_begin(table);
  detail::store_release(table + 1, n);
  for (std::size_t i = 0; i < n; ++i) {
    const ProcessInfo& p = processes[i];
    uint64_t e[detail::kProcessEntryWords] = {static_cast<uint64_t>(static_cast<int64_t>(p.pid)),
                                              static_cast<uint64_t>(static_cast<int64_t>(p.device)),
                                              p.hbm_bytes};
    std::memcpy(&e[3], p.name.data(), std::min(p.name.size(), detail::kProcessNameBytes));
    detail::copy_in(table + 8 + i * detail::kProcessEntryWords, e, detail::kProcessEntryWords);
  }
  detail::seq_write_end(table);
  if (n == processes.size()) return Status::Ok();
  publish_error();
  return Status(Code::kOutOfMemory, "process table of " + segment_name_ + " holds " +
                                        std::to_string(view_.caps.processes) + " processes; " +
                                        std::to_string(processes.size() - n) + " not published");
}

uint64_t Writer::record(const Event& ev) { return ring_->record(ev); }

Result<uint32_t> Writer::intern(std::string_view s) { return strings_->intern(s); }

void Writer::heartbeat() {
  view_.header()->heartbeat_ns.store(monotonic_ns(), std::memory_order_release);
  ring_->reap_dead_readers();
}

}  // namespace npukit::telemetry
