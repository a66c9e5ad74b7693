#include "emulator/daemon/publisher.hpp"

#include <cmath>
#include <cstdio>
#include <map>

#include "emulator/fabric/collectives.hpp"
#include "emulator/kernels/op_descriptor.hpp"
#include "emulator/runtime/runtime.hpp"
#include "telemetry/comm_group.hpp"

namespace npukit::emu {

namespace tf = telemetry;

namespace {

// ENUM_HCCL_DATA_TYPE id of a collective's element type.
uint8_t hccl_dtype(DType t) {
  switch (t) {
    case DType::kFloat16: return tf::hccl_dtype::kFp16;
    case DType::kBFloat16: return tf::hccl_dtype::kBfp16;
    case DType::kFloat32: return tf::hccl_dtype::kFp32;
    case DType::kInt8: return tf::hccl_dtype::kInt8;
    case DType::kInt32: return tf::hccl_dtype::kInt32;
    case DType::kInt64: return tf::hccl_dtype::kInt64;
    case DType::kBool: return tf::hccl_dtype::kUint8;
  }
  return tf::hccl_dtype::kNotApplicable;
}

// The other end of a Send or Receive (its rank in the communicator), for the event's word b; -1
// for every other collective (its sends follow from the communicator alone).
int p2p_peer(const CollectiveCall& call) {
  return call.op == CollectiveOp::kSend || call.op == CollectiveOp::kRecv ? call.root_or_peer : -1;
}

// A chip's VDie ID: five groups of 8 hex digits, unique per chip and the same every time the
// same node (name and spec) starts, as a cluster manager that builds device ids from it expects.
std::string die_id(const std::string& node_name, const std::string& spec, int device) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a over "node/spec/device"
  for (char c : node_name + "/" + spec + "/" + std::to_string(device)) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  std::string out;
  for (int group = 0; group < 5; ++group) {
    h += 0x9E3779B97F4A7C15ull;  // splitmix64 step
    uint64_t z = h;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull, z = (z ^ (z >> 27)) * 0x94D049BB133111EBull, z ^= z >> 31;
    char buf[10];
    std::snprintf(buf, sizeof buf, "%08X", static_cast<unsigned>(z >> 32));
    out += (group ? " " : "") + std::string(buf);
  }
  return out;
}

}  // namespace

namespace {

bool in_view(const HostView& v, int device) { return device >= v.first && device < v.first + v.count; }

}  // namespace

std::vector<int> published_links(const Node& node, HostView view) {
  view = view.on(node);
  std::vector<int> ids;
  for (const Link& l : node.fabric().links()) {
    if (in_view(view, l.src) || in_view(view, l.dst)) ids.push_back(l.id);
  }
  return ids;
}

tf::WriterOptions writer_options_for(const Node& node, const std::string& node_name, HostView view) {
  view = view.on(node);
  const NodeSpec& spec = node.spec();
  const DeviceSpec& d = spec.device_spec;
  tf::WriterOptions o;
  o.node = node_name;
  // One host of a cluster is a machine of its node spec.
  o.node_info.node_spec = view.one_host(node) ? spec.host_spec : spec.name;
  o.node_info.topology = spec.topology;
  o.node_info.driver_version = d.driver_version;
  // npu-smi ships with the driver package: its version is the driver's (910: 21.0.4, 910B: 23.0.2.1).
  o.node_info.tool_version = d.driver_version;
  o.node_info.card_count = spec.cards;
  o.node_info.device_base = view.first;
  o.node_info.inter_group_bytes_per_s = spec.inter_group_bps;
  for (int g = view.first; g < view.first + view.count; ++g) {
    const int i = g - view.first;
    tf::DeviceInfo info;
    info.npu_id = i / d.chips_per_card;
    info.chip_id = i % d.chips_per_card;
    info.logic_id = i;
    info.phy_id = i;
    info.aicore_count = d.aicore_count;
    info.aicpu_count = d.aicpu_count;
    info.name = d.chip_name;
    info.chip_name = d.chip_name;
    info.chip_type = d.chip_type;
    info.bus_id = node.device(g).bus_id();
    info.serial_number = "NPUKIT" + spec.name.substr(0, 6) + std::to_string(1000 + g);
    info.firmware_version = d.firmware_version;
    info.smi_layout = d.smi_layout;
    info.chip_version = d.chip_version, info.board_id = d.board_id, info.pcb_id = d.pcb_id, info.bom_id = d.bom_id;
    info.die_id = die_id(node_name, spec.name, i);
    o.devices.push_back(std::move(info));
  }
  for (int id : published_links(node, view)) {
    const Link& l = node.fabric().links()[id];
    tf::LinkInfo info;
    // The direction data flows; the host, a switch or the network is -1 (told by kind).
    info.device_a = l.src >= 0 ? l.src - view.first : -1;
    info.device_b = l.dst >= 0 ? l.dst - view.first : -1;
    info.kind = link_bus_kind(l.kind);
    info.peak_bytes_per_s = l.bandwidth_bps;
    info.latency_ns = static_cast<double>(l.latency_ns);
    o.links.push_back(std::move(info));
  }
  return o;
}

Publisher::Publisher(Node& node, tf::Writer& writer, HostView view)
    : node_(node),
      writer_(writer),
      first_(view.on(node).first),
      count_(view.on(node).count),
      last_health_(node.device_count(), 0),
      links_(published_links(node, view)),
      bus_links_(node.fabric().links().size(), -1),
      has_hccs_(static_cast<std::size_t>(node.device_count()), false) {
  for (std::size_t i = 0; i < links_.size(); ++i) bus_links_[static_cast<std::size_t>(links_[i])] = static_cast<int>(i);
  for (const Link& l : node.fabric().links()) {
    if (l.kind == LinkKind::kHccs && l.src >= 0) has_hccs_[static_cast<std::size_t>(l.src)] = true;
  }
  node_.engine().add_observer(this);
  node_.events().add(this);
}

Publisher::~Publisher() {
  node_.events().remove(this);
  node_.engine().remove_observer(this);
}

uint32_t Publisher::intern(const std::string& s) {
  auto id = writer_.intern(s);
  return id.ok() ? *id : 0;
}

void Publisher::record(tf::EventType type, int device, const std::string& name,
                       std::array<uint64_t, 4> words, const std::string& aux) {
  record_at(type, device, node_.now(), name, words, aux);
}

void Publisher::emit(tf::Event& e) {
  e.device = bus_device(e.device);
  if (e.device >= -1) writer_.record(e);
}

void Publisher::record_at(tf::EventType type, int device, Nanos ts, const std::string& name,
                          std::array<uint64_t, 4> words, const std::string& aux) {
  if (bus_device(device) < -1) return;
  tf::Event e;
  e.type = type;
  e.device = device;
  e.ts_ns = static_cast<uint64_t>(ts);
  e.name_id = name.empty() ? 0 : intern(name);
  e.aux_id = aux.empty() ? 0 : intern(aux);
  e.words = words;
  emit(e);
}

uint32_t Publisher::descriptor_string(uint32_t descriptor) {
  auto it = descriptor_ids_.find(descriptor);
  if (it != descriptor_ids_.end()) return it->second;
  uint32_t id = intern(op_descriptor(descriptor).bus_text());
  descriptor_ids_.emplace(descriptor, id);
  return id;
}

uint32_t Publisher::group_string(uint32_t call) {
  const CollectiveHub& hub = node_.collectives();
  CommId comm = hub.call(call).comm;
  uint64_t generation = hub.comm_generation(comm);
  auto it = group_ids_.find(comm);
  if (it != group_ids_.end() && it->second.first == generation) return it->second.second;
  tf::CommGroup g{hub.comm_name(comm), hub.comm_devices(comm), hub.algorithm_name(comm), hub.transport_name(comm)};
  uint32_t id = intern(tf::format_comm_group(g));
  group_ids_[comm] = {generation, id};
  return id;
}

void Publisher::on_task_enqueued(const TaskRecord& r) {
  if (bus_device(r.device) < 0) return;
  tf::Event e;
  e.type = tf::EventType::kLaunch;
  e.device = r.device;
  e.ts_ns = static_cast<uint64_t>(r.host_start);
  if (r.kind == TaskKind::kKernel) e.name_id = intern(op_descriptor(r.descriptor).op);
  else if (r.kind == TaskKind::kMemcpy) e.name_id = intern("memcpy");
  else if (r.label != nullptr) e.name_id = intern(r.label);
  e.words = {r.id, tf::pack_stream_pid(r.stream, r.pid), static_cast<uint64_t>(r.enqueued - r.host_start), 0};
  emit(e);
  e.device = r.device;
  if (r.compile_ns <= 0) return;
  OpDescriptor d = op_descriptor(r.descriptor);
  e.type = tf::EventType::kOpCompile;
  e.name_id = intern(d.op);
  e.aux_id = intern(d.shapes);
  e.words = {static_cast<uint64_t>(r.compile_ns), tf::pack_stream_pid(r.stream, r.pid), r.id, 0};
  emit(e);
}

void Publisher::on_task_end(const TaskRecord& r) {
  if (bus_device(r.device) < 0) return;
  tf::Event e;
  e.device = r.device;
  e.ts_ns = static_cast<uint64_t>(r.start);
  uint64_t duration = static_cast<uint64_t>(r.end - r.start);
  uint64_t stream_pid = tf::pack_stream_pid(r.stream, r.pid);
  switch (r.kind) {
    case TaskKind::kKernel:
      e.type = tf::EventType::kKernel;
      e.name_id = intern(r.kernel->name);
      e.aux_id = descriptor_string(r.descriptor);
      e.words = {duration, stream_pid, 0,
                 static_cast<uint64_t>(r.unit) | r.id << 8 | static_cast<uint64_t>(std::min(r.cores, 255u)) << 56};
      e.set_f64(2, r.flops);
      break;
    case TaskKind::kMemcpy:
      e.type = tf::EventType::kMemcpy;
      e.words = {duration, r.bytes, static_cast<uint64_t>(r.copy) | r.id << 8, stream_pid};
      break;
    case TaskKind::kCollective: {
      const CollectiveCall& call = node_.collectives().call(r.collective);
      e.type = tf::EventType::kCollective;
      e.name_id = r.label ? intern(r.label) : 0;
      e.aux_id = group_string(r.collective);
      e.words = {duration, tf::pack_bytes_peer(r.bytes, p2p_peer(call)), tf::pack_task_dtype(r.id, hccl_dtype(call.dtype)),
                 stream_pid};
      break;
    }
    default: return;
  }
  emit(e);
}

void Publisher::on_memory(const MemoryRecord& r) {
  if (r.reserved_after != r.reserved_before) {
    record_at(tf::EventType::kReserved, r.device, r.at, "", {r.reserved_after, r.pid, 0, 0});
  }
  record_at(r.alloc ? tf::EventType::kAlloc : tf::EventType::kFree, r.device, r.at, std::string(r.tag),
            {r.bytes, r.address, r.pid | static_cast<uint64_t>(std::min<Nanos>(r.host_ns, 0xffffffff)) << 32,
             r.allocated_after});
  if (r.flush.released_bytes == 0) return;
  record_at(tf::EventType::kCacheFlush, r.device, r.at, std::string(r.tag),
            {static_cast<uint64_t>(r.host_ns), r.bytes, r.flush.released_bytes, r.flush.largest_free_block});
}

void Publisher::on_link_state(const LinkStateRecord& r) {
  int bus = bus_links_[static_cast<std::size_t>(r.link)];
  if (bus < 0) return;  // the 8x910's shared inter-mesh link never goes down, nor is it published
  record_at(tf::EventType::kLinkStateChanged, r.device, r.at, "",
            {static_cast<uint64_t>(bus), r.up ? 1u : 0u, static_cast<uint64_t>(std::llround(r.rate_percent)), 0});
}

// EMU_EVENT fault_injected: name "<fault>" or "<fault> on link A-B" in this bus's numbering.
void Publisher::on_fault(const FaultRecord& r) {
  std::string name = fault_name(r.kind);
  if (r.peer != -2) {
    int peer = r.peer < 0 ? r.peer : bus_device(r.peer);
    name += " on link " + tf::link_ends_name(bus_device(r.device), peer);
  }
  record_at(tf::EventType::kFaultInjected, r.device, r.at, name, {0, 0, 0, 0});
}

void Publisher::on_ecc(const EccRecord& r) {
  record_at(tf::EventType::kEccError, r.device, r.at, "",
            {r.double_bit ? 2u : 1u, r.errors, r.isolated_pages, r.total_after});
}

void Publisher::on_clock(const ClockRecord& r) {
  record_at(tf::EventType::kThrottleChanged, r.device, r.at, "",
            {r.reasons_before, r.reasons_after, static_cast<uint64_t>(r.clock_mhz), 0});
}

void Publisher::publish(double speed, Nanos lag_ns, bool sample_node) {
  if (sample_node) {
    node_.physics().sample();
    node_.refresh_links();  // flap history ages out of its window
  }
  {
    auto u = writer_.update_node();
    u.set(tf::fid::kNodeVirtualTimeNs, static_cast<uint64_t>(node_.now()));
    u.set(tf::fid::kNodeLagNs, static_cast<uint64_t>(lag_ns));
    u.set(tf::fid::kNodeSpeedRatio, speed);
  }
  for (int d = first_; d < first_ + count_; ++d) publish_device(d);
  publish_links();
  publish_processes();
  writer_.heartbeat();
}

namespace {

double pct(double fraction) { return fraction * 100.0; }


// Utilizations over the physics window and the monotonic activity totals.
void set_activity(tf::Writer::Update& u, const Device& dev, bool has_hccs, uint64_t pcie_tx, uint64_t pcie_rx) {
  const DeviceSpec& spec = dev.spec();
  const DeviceSensors& s = dev.sensors();
  const DeviceCounters& c = dev.counters();
  u.set(tf::fid::kAicoreUtil, pct(s.aicore_util)).set(tf::fid::kCubeUtil, pct(s.cube_util));
  u.set(tf::fid::kVectorUtil, pct(s.vector_util)).set(tf::fid::kAicpuUtil, pct(s.aicpu_util));
  u.set(tf::fid::kNpuUtil, pct(s.aicore_util)).set(tf::fid::kHbmBandwidthUtil, pct(s.hbm_bw_util));
  u.set(tf::fid::kPcieBandwidthUtil, pct(s.pcie_bw_util));
  if (has_hccs) u.set(tf::fid::kHccsBandwidthUtil, pct(s.hccs_bw_util));
  else u.set_status(tf::fid::kHccsBandwidthUtil, tf::SampleStatus::kNotSupported);
  if (dev.health().lost()) {  // a chip off the bus reports no usage (it read 0% beside NA power)
    for (auto f : {tf::fid::kAicoreUtil, tf::fid::kCubeUtil, tf::fid::kVectorUtil, tf::fid::kAicpuUtil, tf::fid::kNpuUtil,
                   tf::fid::kHbmBandwidthUtil, tf::fid::kPcieBandwidthUtil, tf::fid::kHccsBandwidthUtil}) {
      u.set_status(f, tf::SampleStatus::kNotSupported);
    }
  }
  u.set(tf::fid::kAicoreBusyNs, static_cast<uint64_t>(c.aicore_busy_core_ns / spec.aicore_count));
  u.set(tf::fid::kCubeBusyNs, static_cast<uint64_t>(c.cube_busy_core_ns / spec.aicore_count));
  u.set(tf::fid::kVectorBusyNs, static_cast<uint64_t>(c.vector_busy_core_ns / spec.vector_pool()));
  u.set(tf::fid::kAicpuBusyNs, static_cast<uint64_t>(c.aicpu_busy_core_ns / spec.aicpu_count));
  u.set(tf::fid::kFlopsTotal, c.flops_total).set(tf::fid::kHbmBytesTotal, c.hbm_bytes_total);
  u.set(tf::fid::kHbmWriteBytesTotal, c.hbm_write_bytes_total);
  u.set(tf::fid::kPcieTxBytesTotal, pcie_tx).set(tf::fid::kPcieRxBytesTotal, pcie_rx);
  u.set(tf::fid::kKernelsTotal, c.kernels_total).set(tf::fid::kAicpuKernelsTotal, c.aicpu_kernels_total);
  u.set(tf::fid::kCopiesTotal, c.copies_total);
}

// Power, temperatures, clocks and memory (no reading from a lost device: its limits and capacity stay).
void set_sensors(tf::Writer::Update& u, const Device& dev) {
  const DeviceSpec& spec = dev.spec();
  const DeviceSensors& s = dev.sensors();
  if (dev.health().lost()) {
    for (auto f : {tf::fid::kPowerWatts, tf::fid::kTemperatureCelsius, tf::fid::kHbmTemperatureCelsius}) {
      u.set_status(f, tf::SampleStatus::kNotSupported);
    }
  } else {
    u.set(tf::fid::kPowerWatts, s.power_w).set(tf::fid::kTemperatureCelsius, s.temperature_c);
    u.set(tf::fid::kHbmTemperatureCelsius, s.hbm_temperature_c);
    // A chip without a power reading (310P: npu-smi shows NA) has none on the bus, so every
    // reader agrees: NA in text, null in JSON, no exporter series.
    if (!spec.power.reported) u.set_status(tf::fid::kPowerWatts, tf::SampleStatus::kNotSupported);
  }
  u.set(tf::fid::kPowerLimitWatts, s.power_limit_w).set(tf::fid::kEnergyJoulesTotal, dev.counters().energy_j);
  u.set_status(tf::fid::kVoltageVolts, tf::SampleStatus::kNotSupported);
  u.set(tf::fid::kAicoreClockMhz, static_cast<uint64_t>(dev.reported_clock_mhz()));
  u.set(tf::fid::kAicoreClockMaxMhz, static_cast<uint64_t>(spec.aicore_clock.max_mhz));
  u.set(tf::fid::kHbmClockMhz, static_cast<uint64_t>(spec.hbm.clock_mhz));
  bool hbm = spec.smi_layout == "hbm";
  u.set(hbm ? tf::fid::kHbmUsedBytes : tf::fid::kDdrUsedBytes, dev.memory().used_bytes());
  u.set(hbm ? tf::fid::kHbmTotalBytes : tf::fid::kDdrTotalBytes, dev.memory().total_bytes());
  u.set_status(hbm ? tf::fid::kDdrUsedBytes : tf::fid::kHbmUsedBytes, tf::SampleStatus::kNotSupported);
  u.set_status(hbm ? tf::fid::kDdrTotalBytes : tf::fid::kHbmTotalBytes, tf::SampleStatus::kNotSupported);
  u.set(tf::fid::kHugepagesUsedPages, uint64_t{0}).set(tf::fid::kHugepagesTotalPages, uint64_t{0});
  if (dev.health().lost()) {  // nothing is read from a chip off the bus: its clock and usage neither
    u.set_status(tf::fid::kAicoreClockMhz, tf::SampleStatus::kNotSupported);
    u.set_status(hbm ? tf::fid::kHbmUsedBytes : tf::fid::kDdrUsedBytes, tf::SampleStatus::kNotSupported);
  }
}

// Health, throttling and ECC.
void set_health(tf::Writer::Update& u, const Device& dev, uint64_t health, const std::vector<Alarm>& alarms) {
  const EccCounters& ecc = dev.health().ecc();
  u.set(tf::fid::kHealth, health);
  constexpr tf::FieldId kCodes[] = {tf::fid::kErrorCode, tf::fid::kErrorCode2, tf::fid::kErrorCode3, tf::fid::kErrorCode4};
  for (std::size_t i = 0; i < std::size(kCodes); ++i) u.set(kCodes[i], uint64_t{i < alarms.size() ? alarms[i].code : 0u});
  u.set(tf::fid::kThrottleReasons, static_cast<uint64_t>(dev.sensors().throttle_reasons));
  u.set(tf::fid::kEccEnabled, uint64_t{ecc.enabled ? 1u : 0u});
  u.set(tf::fid::kEccSingleBitVolatile, ecc.single_bit_volatile).set(tf::fid::kEccDoubleBitVolatile, ecc.double_bit_volatile);
  u.set(tf::fid::kEccSingleBitTotal, ecc.single_bit_aggregate).set(tf::fid::kEccDoubleBitTotal, ecc.double_bit_aggregate);
  u.set(tf::fid::kEccSingleBitIsolatedPages, ecc.isolated_pages_single);
  u.set(tf::fid::kEccDoubleBitIsolatedPages, ecc.isolated_pages_double);
}

}  // namespace

void Publisher::publish_device(int d) {
  Device& dev = node_.device(d);
  const DeviceSensors& s = dev.sensors();
  std::vector<Alarm> alarms = dev.health().alarms(s.temperature_c, dev.thermal_limits());
  auto health = static_cast<uint64_t>(alarms.empty() ? Health::kOk : alarms.front().severity);
  uint64_t code = alarms.empty() ? 0 : alarms.front().code;
  auto u = writer_.update_device(d - first_);
  set_activity(u, dev, has_hccs_[static_cast<std::size_t>(d)], pcie_bytes(d, true), pcie_bytes(d, false));
  set_sensors(u, dev);
  set_health(u, dev, health, alarms);
  u.set(tf::fid::kProcessCount, static_cast<uint64_t>(dev.memory().usage_by_pid().size()));
  u.commit();
  if (health != last_health_[d]) {
    record(tf::EventType::kHealthChanged, d, "", {last_health_[d], health, code, 0});
    last_health_[d] = health;
  }
}

uint64_t Publisher::pcie_bytes(int device, bool to_host) const {
  const DeviceCounters& c = node_.device(device).counters();
  const auto [up, down] = node_.fabric().pcie_links_of(device);
  const int link = to_host ? up : down;
  const uint64_t fabric = link >= 0 ? node_.fabric().links()[static_cast<std::size_t>(link)].bytes_total : 0;
  return (to_host ? c.pcie_d2h_bytes_total : c.pcie_h2d_bytes_total) + fabric;
}

void Publisher::publish_links() {
  for (std::size_t i = 0; i < links_.size(); ++i) {
    const Link& l = node_.fabric().links()[links_[i]];
    auto u = writer_.update_link(static_cast<int>(i));
    const bool pcie = l.kind == LinkKind::kPcie && (l.src < 0) != (l.dst < 0);
    u.set(tf::fid::kLinkTxBytesTotal, pcie ? pcie_bytes(l.src >= 0 ? l.src : l.dst, l.src >= 0) : l.bytes_total);
    // A lost device (device-lost, host-down) answers on none of its links: their state has no
    // value (it read up beside "fell off the bus"), as its sensors have none. Not "down": the
    // device's loss is the one cause, not a link fault on it and each peer.
    auto lost = [&](int device) { return device >= 0 && node_.device(device).health().lost(); };
    if (lost(l.src) || lost(l.dst)) u.set_status(tf::fid::kLinkUp, tf::SampleStatus::kNotSupported);
    else u.set(tf::fid::kLinkUp, uint64_t{l.up ? 1u : 0u});
    u.set(tf::fid::kLinkRatePercent, l.rate_share * 100.0);
    u.set(tf::fid::kLinkDownEventsRecent, static_cast<uint64_t>(l.down_events.size()));
    u.set(tf::fid::kLinkBandwidthUtil, node_.physics().link_util(links_[i]) * 100.0);
  }
}

// Every process on a device: those holding device memory and those with a context on it that
// hold none (a compute-only job is a user of the device too), by device then pid.
void Publisher::publish_processes() {
  std::map<std::pair<int, uint32_t>, std::pair<uint64_t, std::string>> users;  // (device, pid)
  for (int d = first_; d < first_ + count_; ++d) {
    for (const auto& [pid, bytes] : node_.device(d).memory().usage_by_pid()) users[{d - first_, pid}].first = bytes;
  }
  for (const auto& ctx : node_.contexts()) {
    if (bus_device(ctx->device()) >= 0) users[{bus_device(ctx->device()), ctx->pid()}].second = ctx->process_name();
  }
  std::vector<tf::ProcessInfo> table;
  for (const auto& [key, use] : users) {
    table.push_back({static_cast<int32_t>(key.second), key.first, use.first, use.second});
  }
  (void)writer_.set_processes(table);
}

}  // namespace npukit::emu
