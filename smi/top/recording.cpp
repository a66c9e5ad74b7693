#include "smi/top/recording.hpp"
#include "telemetry/json_reader.hpp"
#include "telemetry/output_file.hpp"

#include <unistd.h>

#include <atomic>
#include <bit>
#include <fstream>
#include <limits>
#include <type_traits>

namespace npukit::top {

namespace {

using nlohmann::json;
namespace fid = tf::fid;

// A recorded integer: a JSON integer within T's range, else invalid_argument (a float such as
// 1e38 read as int was undefined behaviour, found by tests/fuzz/top_recording).
template <typename T>
T integer(const json& j) {
  bool fits = j.is_number_unsigned() ? j.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<T>::max())
              : j.is_number_integer() ? j.get<int64_t>() >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
                                            (std::is_unsigned_v<T> || j.get<int64_t>() <= static_cast<int64_t>(std::numeric_limits<T>::max()))
                                      : false;
  if (!fits) throw std::invalid_argument("expected an integer in range, not " + json_text(j));
  return j.is_number_unsigned() ? static_cast<T>(j.get<uint64_t>()) : static_cast<T>(j.get<int64_t>());
}

// Reads `j` into `out`: strings as strings, integers through integer<T>(), arrays element-wise.
void read_into(const json& j, std::string& out) { j.get_to(out); }
template <typename T>
  requires std::is_integral_v<T>
void read_into(const json& j, T& out) { out = integer<T>(j); }
template <typename T, std::size_t N>
void read_into(const json& j, std::array<T, N>& out) {
  if (!j.is_array() || j.size() != N) throw std::invalid_argument("expected an array of " + std::to_string(N) + " integers");
  for (std::size_t i = 0; i < N; ++i) read_into(j[i], out[i]);
}

constexpr tf::FieldId kRecordedFields[] = {
    fid::kAicoreUtil,   fid::kCubeUtil,         fid::kVectorUtil,       fid::kPowerWatts,
    fid::kPowerLimitWatts, fid::kTemperatureCelsius, fid::kAicoreClockMhz, fid::kAicoreClockMaxMhz,
    fid::kHbmUsedBytes, fid::kHbmTotalBytes,    fid::kDdrUsedBytes,     fid::kDdrTotalBytes,
    fid::kHealth,       fid::kErrorCode,        fid::kThrottleReasons,  fid::kEccSingleBitVolatile,
    fid::kEccDoubleBitVolatile, fid::kEccSingleBitTotal, fid::kEccDoubleBitTotal, fid::kProcessCount,
    fid::kErrorCode2,   fid::kErrorCode3,       fid::kErrorCode4,
};

json sample_json(const tf::Sample& s) {
  if (s.ok()) {
    switch (s.type) {
      case tf::ValueType::kU64: return s.as_u64();
      case tf::ValueType::kI64: return s.as_i64();
      case tf::ValueType::kF64: return s.as_f64();
    }
  }
  return s.status == tf::SampleStatus::kNotSupported ? json("NA") : json(nullptr);
}

tf::Sample sample_from_json(const json& j, const tf::FieldDef& def) {
  tf::Sample s;
  s.type = def.type;
  if (j.is_string() && j.get<std::string>() == "NA") {
    s.status = tf::SampleStatus::kNotSupported;
  } else if (j.is_number()) {
    s.status = tf::SampleStatus::kOk;
    if (def.type == tf::ValueType::kF64) s.bits = std::bit_cast<uint64_t>(j.get<double>());
    else if (def.type == tf::ValueType::kI64) s.bits = std::bit_cast<uint64_t>(integer<int64_t>(j));
    else s.bits = integer<uint64_t>(j);
  } else if (!j.is_null()) {
    throw std::invalid_argument("a value must be a number, \"NA\" or null, not " + json_text(j));
  }
  return s;
}

json node_json(const tf::NodeInfo& n) {
  return {{"node_name", n.node_name},         {"node_spec", n.node_spec},       {"topology", n.topology},
          {"driver_version", n.driver_version}, {"tool_version", n.tool_version}, {"card_count", n.card_count}};
}

json device_json(const tf::DeviceInfo& d) {
  return {{"npu_id", d.npu_id},       {"chip_id", d.chip_id},         {"logic_id", d.logic_id},
          {"phy_id", d.phy_id},       {"aicore_count", d.aicore_count}, {"aicpu_count", d.aicpu_count},
          {"name", d.name},           {"chip_name", d.chip_name},     {"chip_type", d.chip_type},
          {"bus_id", d.bus_id},       {"serial_number", d.serial_number},
          {"firmware_version", d.firmware_version}, {"smi_layout", d.smi_layout},
          {"chip_version", d.chip_version},   {"board_id", d.board_id},     {"pcb_id", d.pcb_id},
          {"bom_id", d.bom_id},               {"die_id", d.die_id}};
}

tf::DeviceInfo device_from_json(const json& j) {
  tf::DeviceInfo d;
  read_into(j.at("npu_id"), d.npu_id), read_into(j.at("chip_id"), d.chip_id), read_into(j.at("logic_id"), d.logic_id);
  read_into(j.at("phy_id"), d.phy_id), read_into(j.at("aicore_count"), d.aicore_count);
  read_into(j.at("aicpu_count"), d.aicpu_count), read_into(j.at("name"), d.name), read_into(j.at("chip_name"), d.chip_name);
  read_into(j.at("chip_type"), d.chip_type), read_into(j.at("bus_id"), d.bus_id);
  read_into(j.at("serial_number"), d.serial_number), read_into(j.at("firmware_version"), d.firmware_version);
  read_into(j.at("smi_layout"), d.smi_layout);
  // Board identity: recordings made before it was on the bus have none.
  d.chip_version = j.value("chip_version", "NA"), d.board_id = j.value("board_id", "NA"), d.pcb_id = j.value("pcb_id", "NA");
  d.bom_id = j.value("bom_id", "NA"), d.die_id = j.value("die_id", "NA");
  return d;
}

json frame_json(const RecordedFrame& fr) {
  json devices = json::array();
  for (const auto& d : fr.devices) {
    json values = json::array();
    for (const auto& s : d) values.push_back(sample_json(s));
    devices.push_back(values);
  }
  json procs = json::array();
  for (const auto& p : fr.processes) procs.push_back({p.pid, p.device, p.hbm_bytes, p.name});
  json events = json::array();
  for (const auto& e : fr.events) {
    const auto* type = tf::find_event_type(e.event.type);
    events.push_back({{"type", type ? type->name : "marker"}, {"device", e.event.device}, {"ts_ns", e.event.ts_ns},
                      {"words", e.event.words}, {"name", e.name}, {"aux", e.aux}});
  }
  json j = {{"virtual_time_ns", fr.virtual_time_ns}, {"devices", devices}, {"processes", procs}, {"events", events}};
  if (!fr.stale.empty()) j["stale"] = fr.stale;
  return j;
}

RecordedFrame frame_from_json(const json& j, const std::vector<tf::FieldId>& fields, std::size_t devices) {
  RecordedFrame fr;
  read_into(j.at("virtual_time_ns"), fr.virtual_time_ns);
  const json& devs = j.at("devices");
  if (devs.size() != devices) throw std::invalid_argument("devices: expected " + std::to_string(devices) + " entries");
  for (const auto& d : devs) {
    if (d.size() != fields.size()) throw std::invalid_argument("devices: expected one value per field");
    auto& out = fr.devices.emplace_back();
    for (std::size_t k = 0; k < fields.size(); ++k) out.push_back(sample_from_json(d[k], *tf::find_field(fields[k])));
  }
  for (const auto& p : j.at("processes")) {
    fr.processes.push_back({integer<int32_t>(p.at(0)), integer<int32_t>(p.at(1)), integer<uint64_t>(p.at(2)), p.at(3).get<std::string>()});
  }
  for (const auto& e : j.at("events")) {
    const auto* type = tf::find_event_type(e.at("type").get<std::string>());
    if (type == nullptr) throw std::invalid_argument("unknown event type " + json_text(e.at("type")));
    ReceivedEvent r;
    r.event.type = type->type;
    read_into(e.at("device"), r.event.device), read_into(e.at("ts_ns"), r.event.ts_ns), read_into(e.at("words"), r.event.words);
    read_into(e.at("name"), r.name), read_into(e.at("aux"), r.aux);
    fr.events.push_back(std::move(r));
  }
  if (j.contains("stale")) read_into(j.at("stale"), fr.stale);
  return fr;
}

}  // namespace

std::span<const tf::FieldId> recorded_fields() { return kRecordedFields; }

void record_frame(Recording& rec, const Frame& f) {
  const tf::Snapshot& s = f.snapshot;
  if (rec.frames.empty() && rec.devices.empty()) {
    rec.node = s.node();
    for (int d = 0; d < s.device_count(); ++d) rec.devices.push_back(s.device_info(d));
    rec.fields.assign(std::begin(kRecordedFields), std::end(kRecordedFields));
  }
  RecordedFrame fr;
  auto vt = s.node_field(fid::kNodeVirtualTimeNs);
  fr.virtual_time_ns = vt.ok() ? vt.as_u64() : (rec.frames.empty() ? 0 : rec.frames.back().virtual_time_ns);
  for (int d = 0; d < s.device_count() && d < static_cast<int>(rec.devices.size()); ++d) {
    auto& out = fr.devices.emplace_back();
    for (auto id : rec.fields) out.push_back(s.device(d, id));
  }
  fr.devices.resize(rec.devices.size(), std::vector<tf::Sample>(rec.fields.size()));
  fr.processes = s.processes();
  fr.events = f.new_events;
  if (f.state == NodeState::kStale) fr.stale = f.message.empty() ? "stale" : f.message;
  rec.frames.push_back(std::move(fr));
}

json recording_to_json(const Recording& rec) {
  json devices = json::array(), fields = json::array(), frames = json::array();
  for (const auto& d : rec.devices) devices.push_back(device_json(d));
  for (auto id : rec.fields) fields.push_back(tf::find_field(id)->name);
  for (const auto& fr : rec.frames) frames.push_back(frame_json(fr));
  json j = {{"format", "npu-top-recording"}, {"version", 1}, {"node", node_json(rec.node)},
            {"devices", devices}, {"fields", fields}, {"frames", frames}};
  if (rec.interval_s > 0) j["interval_s"] = rec.interval_s;
  return j;
}

Result<Recording> recording_from_json(const json& j, const std::string& where) {
  Recording rec;
  std::string at = "node";
  try {
    if (j.value("format", "") != "npu-top-recording" || j.value("version", 0) != 1) {
      return InvalidArgument(where + ": not an npu-top recording (format \"npu-top-recording\", version 1)");
    }
    const json& n = j.at("node");
    read_into(n.at("node_name"), rec.node.node_name), read_into(n.at("node_spec"), rec.node.node_spec);
    read_into(n.at("topology"), rec.node.topology), read_into(n.at("driver_version"), rec.node.driver_version);
    read_into(n.at("tool_version"), rec.node.tool_version), read_into(n.at("card_count"), rec.node.card_count);
    at = "interval_s";
    if (j.contains("interval_s")) rec.interval_s = j.at("interval_s").get<double>();  // a wrong type is the catch below's
    if (!(rec.interval_s >= 0.05 && rec.interval_s <= 3600)) rec.interval_s = 0;   // outside what -d takes: not kept
    at = "devices";
    for (const auto& d : j.at("devices")) rec.devices.push_back(device_from_json(d));
    at = "fields";
    for (const auto& name : j.at("fields")) {
      const tf::FieldDef* def = tf::find_field(name.get<std::string>());
      if (def == nullptr || def->level != tf::EntityLevel::kDevice) {
        return InvalidArgument(where + ": fields: " + json_text(name) + " is not a device field of the registry");
      }
      rec.fields.push_back(def->id);
    }
    at = "frames";
    const json& frames = j.at("frames");
    for (std::size_t i = 0; i < frames.size(); ++i) {
      at = "frames[" + std::to_string(i) + "]";
      rec.frames.push_back(frame_from_json(frames[i], rec.fields, rec.devices.size()));
    }
  } catch (const std::exception& e) {
    return InvalidArgument(where + ": " + at + ": " + e.what());
  }
  return rec;
}

Result<Recording> load_recording(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFoundError(path + ": cannot open the recording");
  json j = json::parse(in, nullptr, false);
  if (j.is_discarded()) return InvalidArgument(path + ": not valid JSON");
  return recording_from_json(j, path);
}

Status save_recording(const std::string& path, const Recording& rec) {
  return telemetry::write_output_file(path, json_text(recording_to_json(rec), 1) + "\n");
}

Result<std::unique_ptr<Replayer>> Replayer::create(Recording rec) {
  if (rec.devices.empty() || rec.frames.empty()) return InvalidArgument("the recording has no devices or no frames");
  static std::atomic<int> counter{0};
  tf::WriterOptions o;
  o.node = "npu-top-replay-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
  o.node_info = rec.node;
  o.devices = rec.devices;
  o.event_capacity = 4096;
  auto bus = tf::InProcessBus::create(o);
  if (!bus.ok()) return bus.status();
  return std::unique_ptr<Replayer>(new Replayer(std::move(rec), std::move(*bus)));
}

void Replayer::step(std::size_t i) {
  const RecordedFrame& fr = rec_.frames.at(i);
  now_ns_ = fr.virtual_time_ns;
  if (!fr.stale.empty()) {
    bus_->close();
    return;
  }
  tf::Writer& w = bus_->writer();
  w.update_node().set(fid::kNodeVirtualTimeNs, fr.virtual_time_ns);
  for (std::size_t d = 0; d < fr.devices.size(); ++d) {
    auto u = w.update_device(static_cast<int>(d));
    for (std::size_t k = 0; k < rec_.fields.size(); ++k) {
      const tf::Sample& s = fr.devices[d][k];
      if (!s.ok()) u.set_status(rec_.fields[k], s.status == tf::SampleStatus::kNotSupported ? s.status : tf::SampleStatus::kBlank);
      else if (s.type == tf::ValueType::kF64) u.set(rec_.fields[k], s.as_f64());
      else if (s.type == tf::ValueType::kI64) u.set(rec_.fields[k], s.as_i64());
      else u.set(rec_.fields[k], s.as_u64());
    }
  }
  (void)w.set_processes(fr.processes);
  auto intern = [&w](const std::string& text) -> uint32_t {
    if (text.empty()) return 0;
    auto id = w.intern(text);
    return id.ok() ? *id : 0;
  };
  for (const auto& e : fr.events) {
    tf::Event ev = e.event;
    ev.name_id = intern(e.name);
    ev.aux_id = intern(e.aux);
    w.record(ev);
  }
  w.heartbeat();
}

Collector::Opener Replayer::opener() {
  return [bus = bus_]() -> Result<std::unique_ptr<tf::Client>> { return bus->client(); };
}

Collector::Clock Replayer::clock() {
  return [this] { return now_ns_; };
}

}  // namespace npukit::top
