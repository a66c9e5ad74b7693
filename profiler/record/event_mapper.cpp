#include "profiler/record/event_mapper.hpp"

#include <algorithm>
#include <cmath>

#include "profiler/store/schema.hpp"
#include "telemetry/collective_traffic.hpp"

namespace npukit::prof {

namespace tf = telemetry;

namespace {

constexpr std::size_t kMaxCachedId = 1u << 20;  // bus string ids are dense and far below this

// A transport as the bus and the traffic plan name it ("HCCS", "PCIE", or "RDMA" over the NPUs'
// RoCE ports) -> msprof's ENUM_HCCL_LINK_TYPE and ENUM_HCCL_TRANSPORT_TYPE.
struct LinkEnums {
  int64_t link_type, transport;
};
LinkEnums link_enums(std::string_view transport) {
  if (transport == "RDMA") return {enum_id::kLinkRoce, enum_id::kTransportRdma};
  return {transport == "HCCS" ? enum_id::kLinkHccs : enum_id::kLinkPcie, enum_id::kTransportSdma};
}

int64_t i64(uint64_t v) { return static_cast<int64_t>(v); }

std::string formats_for(std::string_view shapes) {
  if (shapes.empty()) return "";
  std::string out = "ND";
  for (char c : shapes) {
    if (c == ';') out += ";ND";
  }
  return out;
}

template <typename T>
void grow(std::vector<T>& v, std::size_t index, T fill) {
  if (index >= v.size()) v.resize(std::max(index + 1, v.size() * 2), fill);
}

}  // namespace

Result<EventMapper> EventMapper::create(ProfileWriter& writer, Resolver resolver, Options options) {
  EventMapper m(writer, std::move(resolver), options);
  int64_t* slots[] = {&m.ids_.ai_core, &m.ids_.ai_vector_core, &m.ids_.ai_cpu, &m.ids_.memcpy,
                      &m.ids_.communication, &m.ids_.na, &m.ids_.flops, &m.ids_.nd, &m.ids_.empty,
                      &m.ids_.alloc, &m.ids_.free};
  const char* values[] = {"AI_CORE", "AI_VECTOR_CORE", "AI_CPU", "MEMCPY_ASYNC", "COMMUNICATION", "N/A",
                          "flops",   "ND",             "",       "alloc",        "free"};
  for (std::size_t i = 0; i < std::size(slots); ++i) {
    auto id = writer.intern(values[i]);
    if (!id.ok()) return id.status();
    *slots[i] = *id;
  }
  return m;
}

Result<int64_t> EventMapper::string_id(uint32_t bus_id) {
  if (bus_id == 0) return ids_.empty;
  if (bus_id < strings_.size() && strings_[bus_id] >= 0) return strings_[bus_id];
  auto text = resolve_(bus_id);
  if (!text.ok()) return text.status();
  auto id = w_.intern(*text);
  if (!id.ok()) return id.status();
  if (bus_id < kMaxCachedId) {
    grow<int64_t>(strings_, bus_id, -1);
    strings_[bus_id] = *id;
  }
  return *id;
}

Result<const EventMapper::Descriptor*> EventMapper::descriptor(uint32_t bus_id) {
  if (bus_id < have_descriptor_.size() && have_descriptor_[bus_id]) return &descriptors_[bus_id];
  if (bus_id >= kMaxCachedId) return InternalError("bus string id " + std::to_string(bus_id) + " out of range");
  std::string text;
  if (bus_id != 0) {
    auto r = resolve_(bus_id);
    if (!r.ok()) return r.status();
    text = std::move(*r);
  }
  // "<op>|<in shapes>|<in dtypes>|<out shapes>|<out dtypes>|<state>|<hf32>" (older producers
  // stop after the input dtypes: the rest is N/A).
  std::vector<std::string> f;
  for (std::size_t pos = 0; f.size() < 7;) {
    std::size_t bar = text.find('|', pos);
    f.push_back(text.substr(pos, bar == std::string::npos ? bar : bar - pos));
    if (bar == std::string::npos) break;
    pos = bar + 1;
  }
  f.resize(7, "N/A");
  if (f[0].empty()) f[0] = "N/A";
  auto formats = [](const std::string& shapes) { return shapes == "N/A" ? shapes : formats_for(shapes); };
  Descriptor d;
  std::pair<int64_t*, std::string> fields[] = {{&d.name, f[0]},       {&d.shapes, f[1]},        {&d.dtypes, f[2]},
                                               {&d.formats, formats(f[1])}, {&d.out_shapes, f[3]},  {&d.out_dtypes, f[4]},
                                               {&d.out_formats, formats(f[3])}, {&d.state, f[5]}, {&d.hf32, f[6]}};
  for (auto& [slot, value] : fields) {
    auto id = w_.intern(value);
    if (!id.ok()) return id.status();
    *slot = *id;
  }
  grow<Descriptor>(descriptors_, bus_id, Descriptor{});
  grow<bool>(have_descriptor_, bus_id, false);
  descriptors_[bus_id] = d;
  have_descriptor_[bus_id] = true;
  return &descriptors_[bus_id];
}

Result<EventMapper::Launch> EventMapper::launch_kind(uint32_t bus_id) {
  if (bus_id < have_launch_.size() && have_launch_[bus_id]) return launches_[bus_id];
  if (bus_id >= kMaxCachedId) return InternalError("bus string id " + std::to_string(bus_id) + " out of range");
  auto text = bus_id == 0 ? Result<std::string>(std::string("N/A")) : resolve_(bus_id);
  if (!text.ok()) return text.status();
  auto name = w_.intern(*text);
  if (!name.ok()) return name.status();
  Launch l{*name, enum_id::kApiAcl};
  if (*text == "memcpy") l.type = enum_id::kApiRuntime;
  else if (text->rfind("hcom_", 0) == 0) l.type = enum_id::kApiCommunication;
  grow<Launch>(launches_, bus_id, Launch{});
  grow<bool>(have_launch_, bus_id, false);
  launches_[bus_id] = l;
  have_launch_[bus_id] = true;
  return l;
}

Result<int64_t> EventMapper::task(const tf::Event& e, int64_t duration, uint64_t stream_pid, uint64_t task_id,
                                  int64_t task_type) {
  int64_t start = unix_ns(e.ts_ns);
  int64_t end = start + duration;
  int64_t gid = w_.next_global_task_id();
  NPUKIT_RETURN_IF_ERROR(w_.insert(Table::kTask, {start, end, int64_t{e.device}, i64(task_id), gid,
                                                  int64_t{tf::unpack_pid(stream_pid)}, task_type, kNoId32,
                                                  int64_t{tf::unpack_stream(stream_pid)}, i64(task_id), kNoId32}));
  w_.note_time(start, end);
  w_.note_task(e.device, start, end, task_type == ids_.communication, i64(task_id));
  last_ts_ = std::max(last_ts_, end);
  return gid;
}

Status EventMapper::kernel(const tf::Event& e) {
  uint64_t d = e.words[3];
  uint64_t unit = d & 0xff;
  int64_t type = unit == 0 ? ids_.ai_core : unit == 1 ? ids_.ai_vector_core : ids_.ai_cpu;
  auto op_type = string_id(e.name_id);
  if (!op_type.ok()) return op_type.status();
  auto desc = descriptor(e.aux_id);
  if (!desc.ok()) return desc.status();
  auto gid = task(e, i64(e.words[0]), e.words[1], (d >> 8) & ((uint64_t{1} << 48) - 1), type);
  if (!gid.ok()) return gid.status();
  const Descriptor& x = **desc;
  int64_t na = ids_.na;
  NPUKIT_RETURN_IF_ERROR(w_.insert(Table::kComputeTaskInfo,
                                   {x.name, *gid, i64(d >> 56), int64_t{0}, type, *op_type, x.formats, x.dtypes,
                                    x.shapes, x.out_formats, x.out_dtypes, x.out_shapes, na, x.state, x.hf32, na, na}));
  return w_.insert(Table::kTaskPmuInfo, {*gid, ids_.flops, e.f64(2)});
}

Status EventMapper::memcpy(const tf::Event& e) {
  auto gid = task(e, i64(e.words[0]), e.words[3], e.words[2] >> 8, ids_.memcpy);
  if (!gid.ok()) return gid.status();
  return w_.insert(Table::kMemcpyInfo, {*gid, i64(e.words[1]), memcpy_operation(e.words[2] & 0xff)});
}

Result<const EventMapper::Group*> EventMapper::group(uint32_t bus_id) {
  if (bus_id == 0) return nullptr;
  if (auto it = groups_.find(bus_id); it != groups_.end()) return &it->second;
  auto text = resolve_(bus_id);
  if (!text.ok()) return text.status();
  auto info = tf::parse_comm_group(*text);
  if (!info.ok()) return info.status();
  Group g;
  auto name = w_.intern(info->name);
  if (!name.ok()) return name.status();
  auto algorithm = w_.intern(info->algorithm);
  if (!algorithm.ok()) return algorithm.status();
  g.name = *name;
  g.algorithm = *algorithm;
  // The bus names a communicator's transport as HCCL does: HCCS or PCIE within a host, RDMA (over
  // the NPUs' RoCE ports) for one that spans hosts.
  const LinkEnums link = link_enums(info->link);
  g.link_type = link.link_type;
  g.transport = link.transport;
  if (options_.host_devices > 0) {
    for (int device : info->devices) g.host_of_rank.push_back(device / options_.host_devices);
  }
  g.hccs_between = hccs_between(*info);
  g.info = std::move(*info);
  return &groups_.emplace(bus_id, std::move(g)).first->second;
}

// A matrix of the group's ranks, built once per group: a send of a collective asks it per peer.
tf::HccsBetween EventMapper::hccs_between(const tf::CommGroup& info) const {
  const int host = options_.host_devices;
  if (options_.hccs_pairs.empty() || host <= 0 || info.link != "RDMA") return {};
  const std::size_t n = info.devices.size();
  std::vector<bool> hccs(n * n, false);
  for (std::size_t a = 0; a < n; ++a) {
    for (std::size_t b = 0; b < n; ++b) {
      std::pair<int, int> pair{info.devices[a] % host, info.devices[b] % host};
      hccs[a * n + b] = std::find(options_.hccs_pairs.begin(), options_.hccs_pairs.end(), pair) != options_.hccs_pairs.end();
    }
  }
  return [n, hccs = std::move(hccs)](int a, int b) { return hccs[static_cast<std::size_t>(a) * n + static_cast<std::size_t>(b)]; };
}

Status EventMapper::collective(const tf::Event& e) {
  auto op_type = string_id(e.name_id);
  if (!op_type.ok()) return op_type.status();
  auto grp = group(e.aux_id);
  if (!grp.ok()) return grp.status();
  const Group* g = *grp;
  uint64_t task_id = tf::unpack_task_id(e.words[2]);
  auto gid = task(e, i64(e.words[0]), e.words[3], task_id, ids_.communication);
  if (!gid.ok()) return gid.status();
  int64_t k = collective_seq_[{e.device, g ? g->name : -1, *op_type}]++;
  auto type_text = e.name_id == 0 ? Result<std::string>(std::string("hcom_")) : resolve_(e.name_id);
  if (!type_text.ok()) return type_text.status();
  auto op_name = w_.intern(*type_text + "_" + (g ? g->info.name + "_" : "") + std::to_string(k));
  if (!op_name.ok()) return op_name.status();
  int64_t start = unix_ns(e.ts_ns), end = start + i64(e.words[0]), bytes = i64(tf::unpack_bytes(e.words[1]));
  int dtype_size = g ? tf::hccl_dtype_size(tf::unpack_dtype(e.words[2])) : 0;
  int64_t dtype = dtype_size > 0 ? int64_t{tf::unpack_dtype(e.words[2])} : enum_id::kDataTypeNA;
  int64_t count = dtype_size > 0 ? bytes / dtype_size : bytes;
  int64_t op_id = w_.next_op_id();
  NPUKIT_RETURN_IF_ERROR(w_.insert(Table::kCommunicationOp,
                                   {*op_name, start, end, i64(task_id), g ? g->name : ids_.na, op_id, int64_t{0},
                                    int64_t{0}, dtype, g ? g->algorithm : ids_.na, count, *op_type,
                                    int64_t{e.device}, int64_t{g ? g->info.size() : 0}}));
  int64_t src_rank = g ? g->info.rank_of(e.device + options_.device_base) : e.device;
  auto bandwidth = [&](double size) { return end > start ? size * 1e9 / static_cast<double>(end - start) : 0.0; };
  auto row = [&](int64_t plane, int64_t from, int64_t to, int64_t transport, int64_t size, int64_t link_type) {
    return w_.insert(Table::kCommunicationTaskInfo,
                     {*op_type, *gid, ids_.communication, plane, g ? g->name : ids_.na, kNoNotifyId, enum_id::kRdmaNA,
                      from, to, transport, size, dtype, link_type, op_id, int64_t{1}, bandwidth(static_cast<double>(size))});
  };
  // A Send or Receive: its one transfer, from the sender to the receiver, over the link between them.
  const int peer = tf::unpack_peer(e.words[1]);
  if (auto p2p = g && peer >= 0 ? tf::p2p_transfer(g->info, static_cast<int>(src_rank), peer, static_cast<double>(bytes),
                                                   g->host_of_rank, g->hccs_between)
                                : std::nullopt) {
    const LinkEnums link = link_enums(p2p->transport);
    const bool receive = tf::is_receive(*type_text);
    return row(0, receive ? peer : src_rank, receive ? src_rank : peer, link.transport, bytes, link.link_type);
  }
  std::vector<tf::RankSend> sends;
  if (g) sends = tf::rank_sends(g->info, static_cast<int>(src_rank), *type_text, static_cast<double>(bytes), g->host_of_rank, g->hccs_between);
  if (sends.empty()) {  // a one-member group, a Broadcast, or an event without a communicator or peer
    return row(0, src_rank, kNoId32, g ? g->transport : enum_id::kTransportSdma, bytes, g ? g->link_type : options_.link_type);
  }
  for (std::size_t i = 0; i < sends.size(); ++i) {
    const LinkEnums link = link_enums(sends[i].transport);
    NPUKIT_RETURN_IF_ERROR(
        row(static_cast<int64_t>(i), src_rank, sends[i].peer, link.transport, std::llround(sends[i].bytes), link.link_type));
  }
  return Status::Ok();
}

Status EventMapper::launch(const tf::Event& e) {
  auto kind = launch_kind(e.name_id);
  if (!kind.ok()) return kind.status();
  int64_t ts = unix_ns(e.ts_ns), end = ts + i64(e.words[2]);
  int64_t tid = int64_t{tf::unpack_pid(e.words[1])} << 32 | (e.device < 0 ? 0 : e.device);
  w_.note_time(ts, end);
  w_.note_launch(i64(e.words[0]));
  return w_.insert(Table::kCannApi, {ts, end, kind->type, tid, i64(e.words[0]), kind->name});
}

Status EventMapper::step(const tf::Event& e) {
  auto job = string_id(e.name_id);
  if (!job.ok()) return job.status();
  int64_t start = unix_ns(e.ts_ns), end = start + i64(e.words[2]);
  w_.note_time(start, end);
  return w_.insert(Table::kEmuStep, {i64(e.words[0]), *job, int64_t{e.device}, i64(e.words[1]), start, end,
                                     i64(e.words[3]) << 32});
}

Status EventMapper::marker(const tf::Event& e) {
  auto message = string_id(e.name_id);
  if (!message.ok()) return message.status();
  int64_t ts = unix_ns(e.ts_ns);
  w_.note_time(ts, ts);
  std::monostate none;
  return w_.insert(Table::kMstxEvents, {ts, ts, enum_id::kMstxMarker, none, none, *message, none, none, none, none});
}

Status EventMapper::node_event(const tf::Event& e) {
  int64_t type = static_cast<int>(e.type);  // EMU_EVENT_TYPE.id
  auto name = string_id(e.name_id);
  if (!name.ok()) return name.status();
  auto message = string_id(e.aux_id);
  if (!message.ok()) return message.status();
  int64_t ts = unix_ns(e.ts_ns);
  w_.note_time(ts, ts);
  const auto& w = e.words;
  NPUKIT_RETURN_IF_ERROR(w_.insert(Table::kEmuEvent, {ts, int64_t{e.device}, type, *name, *message, i64(w[0]),
                                                      i64(w[1]), i64(w[2]), i64(w[3])}));
  if (e.type == tf::EventType::kReserved) reserved_[{e.device, static_cast<uint32_t>(w[1])}] = i64(w[0]);
  if (e.type != tf::EventType::kAlloc && e.type != tf::EventType::kFree) return Status::Ok();
  bool alloc = e.type == tf::EventType::kAlloc;
  int64_t buffer = e.name_id == 0 ? ids_.na : *name;  // the buffer's name in its program
  auto pid = static_cast<uint32_t>(w[2] & 0xffffffff);
  auto held = reserved_.find({e.device, pid});
  SqlValue reserve = held == reserved_.end() ? SqlValue(std::monostate{}) : SqlValue(held->second);
  return w_.insert(Table::kNpuOpMem, {buffer, i64(w[1]), alloc ? ids_.alloc : ids_.free, i64(w[0]), ts,
                                      int64_t{pid} << 32, i64(w[3]), reserve, ids_.na, int64_t{e.device}});
}

Status EventMapper::map(const tf::Event& e) {
  switch (e.type) {
    case tf::EventType::kKernel: return kernel(e);
    case tf::EventType::kMemcpy: return memcpy(e);
    case tf::EventType::kCollective: return collective(e);
    case tf::EventType::kLaunch: return launch(e);
    case tf::EventType::kStep: return step(e);
    case tf::EventType::kMarker: return marker(e);
    default: return node_event(e);
  }
}

}  // namespace npukit::prof
