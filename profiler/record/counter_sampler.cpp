#include "profiler/record/counter_sampler.hpp"

#include <cmath>
#include <limits>

namespace npukit::prof {

namespace tf = telemetry;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double delta_rate(double now, double& prev, double dt_s) {
  double before = prev;
  prev = now;
  if (std::isnan(before) || dt_s <= 0 || now < before) return kNaN;
  return (now - before) / dt_s;
}

}  // namespace

Result<int64_t> CounterSampler::field_name(const tf::FieldDef& field) {
  auto it = names_.find(field.id);
  if (it != names_.end()) return it->second;
  auto id = w_.intern(field.name);
  if (!id.ok()) return id.status();
  names_.emplace(field.id, *id);
  return *id;
}

Status CounterSampler::describe(const tf::Snapshot& s) {
  for (int d = 0; d < s.device_count(); ++d) {
    if (!mine(d)) continue;
    const tf::DeviceInfo& info = s.device_info(d);
    // NPU_INFO.name: the chip model, marked as emulated (reference section 7): "Ascend910B2-emu";
    // a what-if chip that is not an Ascend keeps its own name ("A100-emu").
    const bool ascend = info.chip_type.rfind("Ascend", 0) == 0;
    std::string name = (ascend ? "Ascend" : "") + info.chip_name + "-emu";
    NPUKIT_RETURN_IF_ERROR(w_.insert(Table::kNpuInfo, {int64_t{d}, std::string_view(name)}));
  }
  for (int l = 0; l < s.link_count(); ++l) {
    const tf::LinkInfo& link = s.link_info(l);
    if (!mine(link)) continue;
    auto kind = w_.intern(link.kind);
    if (!kind.ok()) return kind.status();
    NPUKIT_RETURN_IF_ERROR(w_.insert(Table::kEmuLink, {int64_t{l}, int64_t{link.device_a}, int64_t{link.device_b},
                                                       *kind, link.peak_bytes_per_s, link.latency_ns}));
  }
  prev_hbm_read_.assign(static_cast<std::size_t>(s.device_count()), kNaN);
  prev_hbm_write_ = prev_hbm_read_;
  prev_link_bytes_.assign(static_cast<std::size_t>(s.link_count()), kNaN);
  auto device = w_.intern("device");
  if (!device.ok()) return device.status();
  device_type_ = *device;
  auto read = w_.intern("read");
  if (!read.ok()) return read.status();
  hbm_read_ = *read;
  auto write = w_.intern("write");
  if (!write.ok()) return write.status();
  hbm_write_ = *write;
  return Status::Ok();
}

Status CounterSampler::registry_rows(const tf::Snapshot& s, int64_t ts) {
  auto rows = [&](tf::EntityLevel level, int entity, int64_t device, int64_t link) -> Status {
    for (const tf::FieldDef* f : tf::fields_of(level)) {
      if (f->kind == tf::FieldKind::kInfo) continue;
      tf::Sample v = level == tf::EntityLevel::kNode     ? s.node_field(f->id)
                     : level == tf::EntityLevel::kDevice ? s.device(entity, f->id)
                                                         : s.link(entity, f->id);
      auto number = v.number();
      if (!number) continue;
      auto name = field_name(*f);
      if (!name.ok()) return name.status();
      NPUKIT_RETURN_IF_ERROR(w_.insert(Table::kEmuCounter, {ts, device, link, int64_t{f->id}, *name, *number}));
    }
    return Status::Ok();
  };
  NPUKIT_RETURN_IF_ERROR(rows(tf::EntityLevel::kNode, 0, -1, -1));
  for (int d = 0; d < s.device_count(); ++d) {
    if (mine(d)) NPUKIT_RETURN_IF_ERROR(rows(tf::EntityLevel::kDevice, d, d, -1));
  }
  for (int l = 0; l < s.link_count(); ++l) {
    if (mine(s.link_info(l))) NPUKIT_RETURN_IF_ERROR(rows(tf::EntityLevel::kLink, l, -1, l));
  }
  return Status::Ok();
}

Status CounterSampler::device_rows(const tf::Snapshot& s, int d, int64_t ts, double dt_s) {
  int64_t dev = d;
  if (auto mhz = s.device(d, tf::fid::kAicoreClockMhz).number()) {
    NPUKIT_RETURN_IF_ERROR(w_.insert(Table::kAicoreFreq, {dev, ts, *mhz, int64_t{0}}));
  }
  auto hbm = s.device(d, tf::fid::kHbmUsedBytes).number();
  auto ddr = s.device(d, tf::fid::kDdrUsedBytes).number();
  if (hbm || ddr) {
    auto value = [](std::optional<double> v) -> SqlValue {
      return v ? SqlValue(static_cast<int64_t>(*v)) : SqlValue(std::monostate{});
    };
    NPUKIT_RETURN_IF_ERROR(w_.insert(Table::kNpuMem, {device_type_, value(ddr), value(hbm), ts, dev}));
  }
  auto bytes = s.device(d, tf::fid::kHbmBytesTotal).number();
  auto written = s.device(d, tf::fid::kHbmWriteBytesTotal).number();
  if (bytes && written) {
    const auto i = static_cast<std::size_t>(d);
    double read = delta_rate(*bytes - *written, prev_hbm_read_[i], dt_s);
    double write = delta_rate(*written, prev_hbm_write_[i], dt_s);
    if (!std::isnan(read)) NPUKIT_RETURN_IF_ERROR(w_.insert(Table::kHbm, {dev, ts, read, int64_t{0}, hbm_read_}));
    if (!std::isnan(write)) NPUKIT_RETURN_IF_ERROR(w_.insert(Table::kHbm, {dev, ts, write, int64_t{0}, hbm_write_}));
  }
  return Status::Ok();
}

Status CounterSampler::hccs_rows(const tf::Snapshot& s, int64_t ts, double dt_s) {
  std::vector<double> tx(static_cast<std::size_t>(s.device_count()), 0.0), rx = tx;
  bool any = false;
  for (int l = 0; l < s.link_count(); ++l) {
    const tf::LinkInfo& info = s.link_info(l);
    auto bytes = s.link(l, tf::fid::kLinkTxBytesTotal).number();
    if (!bytes || info.kind != "hccs") continue;
    double rate = delta_rate(*bytes, prev_link_bytes_[static_cast<std::size_t>(l)], dt_s);
    if (std::isnan(rate)) continue;
    any = true;
    if (info.device_a >= 0 && info.device_a < s.device_count()) tx[static_cast<std::size_t>(info.device_a)] += rate;
    if (info.device_b >= 0 && info.device_b < s.device_count()) rx[static_cast<std::size_t>(info.device_b)] += rate;
  }
  if (!any) return Status::Ok();
  for (int d = 0; d < s.device_count(); ++d) {
    auto i = static_cast<std::size_t>(d);
    if (mine(d)) NPUKIT_RETURN_IF_ERROR(w_.insert(Table::kHccs, {int64_t{d}, ts, tx[i], rx[i]}));
  }
  return Status::Ok();
}

Status CounterSampler::sample(const tf::Snapshot& s) {
  if (s.stale()) return Status::Ok();
  auto vt = s.node_field(tf::fid::kNodeVirtualTimeNs).number();
  if (!vt) return Status::Ok();
  int64_t ts = base_ + static_cast<int64_t>(*vt);
  if (ts <= last_ts_) return Status::Ok();
  double dt_s = last_ts_ < 0 ? 0.0 : static_cast<double>(ts - last_ts_) / 1e9;
  last_ts_ = ts;
  w_.note_time(ts, ts);
  for (int d = 0; d < s.device_count(); ++d) {
    if (mine(d)) NPUKIT_RETURN_IF_ERROR(device_rows(s, d, ts, dt_s));
  }
  NPUKIT_RETURN_IF_ERROR(hccs_rows(s, ts, dt_s));
  NPUKIT_RETURN_IF_ERROR(registry_rows(s, ts));
  ++samples_;
  return Status::Ok();
}

}  // namespace npukit::prof
