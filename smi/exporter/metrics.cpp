#include "smi/exporter/metrics.hpp"

#include <cstdio>

#include "probes/health/incidents.hpp"
#include "smi/exporter/text.hpp"

namespace npukit::smi::exporter {

namespace tf = telemetry;
namespace fid = telemetry::fid;

namespace {

using C = Convert;

constexpr MindxMetric kMindx[] = {
    {"npu_chip_info_utilization", fid::kAicoreUtil, C::kAsIs, "AI Core utilization (%)"},
    {"npu_chip_info_overall_utilization", fid::kNpuUtil, C::kAsIs, "overall NPU utilization (%)"},
    {"npu_chip_info_vector_utilization", fid::kVectorUtil, C::kAsIs, "AI Vector utilization (%)"},
    {"npu_chip_info_cube_utilization", fid::kCubeUtil, C::kAsIs, "AI Cube utilization (%)"},
    {"npu_chip_info_temperature", fid::kTemperatureCelsius, C::kAsIs, "chip temperature (C)"},
    {"npu_chip_info_power", fid::kPowerWatts, C::kAsIs, "chip power (W)"},
    {"npu_chip_info_voltage", fid::kVoltageVolts, C::kAsIs, "chip voltage (V)"},
    {"npu_chip_info_aicore_current_freq", fid::kAicoreClockMhz, C::kAsIs, "current AI Core frequency (MHz)"},
    {"npu_chip_info_health_status", fid::kHealth, C::kHealthy, "chip health: 1 healthy, 0 unhealthy"},
    {"npu_chip_info_error_code", fid::kErrorCode, C::kAsIs, "most severe active error code, 0 when none"},
    {"npu_chip_info_process_info_num", fid::kProcessCount, C::kAsIs, "processes using the chip"},
    {"npu_chip_info_used_memory", fid::kDdrUsedBytes, C::kMebibytes, "DDR in use (MB)"},
    {"npu_chip_info_total_memory", fid::kDdrTotalBytes, C::kMebibytes, "DDR capacity (MB)"},
    {"npu_chip_info_hbm_used_memory", fid::kHbmUsedBytes, C::kMebibytes, "HBM in use (MB)"},
    {"npu_chip_info_hbm_total_memory", fid::kHbmTotalBytes, C::kMebibytes, "HBM capacity (MB)"},
    {"npu_chip_info_hbm_temperature", fid::kHbmTemperatureCelsius, C::kAsIs, "HBM temperature (C)"},
    {"npu_chip_info_hbm_bandwidth_utilization", fid::kHbmBandwidthUtil, C::kAsIs, "HBM bandwidth utilization (%)"},
    {"npu_chip_info_hbm_ecc_enable_flag", fid::kEccEnabled, C::kAsIs, "1 when HBM ECC is enabled"},
    {"npu_chip_info_hbm_ecc_single_bit_error_cnt", fid::kEccSingleBitVolatile, C::kAsIs,
     "HBM single-bit ECC errors since the last clear"},
    {"npu_chip_info_hbm_ecc_double_bit_error_cnt", fid::kEccDoubleBitVolatile, C::kAsIs,
     "HBM double-bit ECC errors since the last clear"},
    {"npu_chip_info_hbm_ecc_total_single_bit_error_cnt", fid::kEccSingleBitTotal, C::kAsIs,
     "HBM single-bit ECC errors over the chip's life"},
    {"npu_chip_info_hbm_ecc_total_double_bit_error_cnt", fid::kEccDoubleBitTotal, C::kAsIs,
     "HBM double-bit ECC errors over the chip's life"},
    {"npu_chip_info_hbm_ecc_single_bit_isolated_pages_cnt", fid::kEccSingleBitIsolatedPages, C::kAsIs,
     "HBM pages isolated after single-bit errors"},
    {"npu_chip_info_hbm_ecc_double_bit_isolated_pages_cnt", fid::kEccDoubleBitIsolatedPages, C::kAsIs,
     "HBM pages isolated after double-bit errors"},
};

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Position of a "_ns" unit word in `name`, npos when there is none.
std::size_t ns_unit(std::string_view name) {
  for (std::size_t pos = name.find("_ns"); pos != std::string_view::npos; pos = name.find("_ns", pos + 1)) {
    if (pos + 3 == name.size() || name[pos + 3] == '_') return pos;
  }
  return std::string_view::npos;
}

Labels device_labels(const tf::DeviceInfo& d) {
  // id is the chip's logic id (MindX's); npu_id and chip_id are the ids npu-smi's -i and -c take
  // (they differ on multi-chip cards, 310P); vdie_id is MindX's older per-chip unique id.
  Labels l = {{"id", std::to_string(d.logic_id)}, {"model_name", d.name}, {"pcie_bus_info", d.bus_id},
              {"npu_id", std::to_string(d.npu_id)}, {"chip_id", std::to_string(d.chip_id)}};
  if (!d.die_id.empty() && d.die_id != "NA") l.push_back({"vdie_id", d.die_id});
  return l;
}

const char* type_of(const tf::FieldDef& f) { return f.kind == tf::FieldKind::kCounter ? "counter" : "gauge"; }

void render_self(Exposition& ex, const tf::Snapshot* s, const ScrapeStatus& st) {
  bool live = s != nullptr && !s->stale();
  Labels node{{"node", st.node}};
  ex.family("npu_exporter_node_up", "1 when the node's bus is live, 0 when it is absent or stale", "gauge");
  ex.sample(node, live ? 1 : 0);
  ex.family("npu_exporter_node_stale", "1 when the node's bus exists but its writer is gone or silent", "gauge");
  ex.sample(node, s != nullptr && s->stale() ? 1 : 0);
  ex.family("npu_exporter_scrapes_total", "scrapes of /metrics served", "counter");
  ex.sample({}, static_cast<double>(st.scrapes_total));
  ex.family("npu_exporter_scrape_errors_total", "scrapes that found no live node", "counter");
  ex.sample({}, static_cast<double>(st.scrape_errors_total));
  ex.family("npu_exporter_last_scrape_duration_seconds", "time the previous scrape took to render", "gauge");
  ex.sample({}, st.last_scrape_seconds);
  ex.family("npu_exporter_version_info", "npu-exporter version (value is always 1)", "gauge");
  ex.sample({{"version", st.version}}, 1);
}

void render_node(Exposition& ex, const tf::Snapshot& s) {
  ex.family("machine_npu_nums", "number of NPU chips on the node", "gauge");
  ex.sample({}, s.device_count());
  ex.family("machine_card_nums", "number of NPU cards on the node", "gauge");
  ex.sample({}, s.node().card_count);
  for (const tf::FieldDef* f : tf::fields_of(tf::EntityLevel::kNode)) {
    ex.family(exporter_name(*f), exporter_help(*f), type_of(*f));
    if (auto v = s.node_field(f->id).number()) ex.sample({}, *v * exporter_scale(*f));
  }
}

void render_device_fields(Exposition& ex, const tf::Snapshot& s, const std::vector<Labels>& labels) {
  for (const tf::FieldDef* f : tf::fields_of(tf::EntityLevel::kDevice)) {
    if (f->id == fid::kChecksum) continue;
    ex.family(exporter_name(*f), exporter_help(*f), type_of(*f));
    for (int d = 0; d < s.device_count(); ++d) {
      auto v = s.device(d, f->id).number();
      if (!v) continue;
      if (f->kind != tf::FieldKind::kInfo) {
        ex.sample(labels[d], *v * exporter_scale(*f));
        continue;
      }
      const tf::DeviceInfo& info = s.device_info(d);
      Labels l = labels[d];
      l.insert(l.end(), {{"chip_type", info.chip_type}, {"serial_number", info.serial_number},
                         {"firmware_version", info.firmware_version}});
      ex.sample(l, *v);
    }
  }
}

double convert(Convert c, double v) {
  switch (c) {
    case Convert::kAsIs: return v;
    case Convert::kMebibytes: return v / (1024.0 * 1024.0);
    case Convert::kHealthy: return v == static_cast<double>(tf::Health::kOk) ? 1 : 0;
  }
  return v;
}

void render_mindx(Exposition& ex, const tf::Snapshot& s, const std::vector<Labels>& labels) {
  for (const MindxMetric& m : kMindx) {
    ex.family(m.name, m.help, "gauge");
    // MindX's HBM collector runs on HBM chips only: a 310P's DDR figures are not HBM series.
    const bool hbm_family = m.name.starts_with("npu_chip_info_hbm_");
    for (int d = 0; d < s.device_count(); ++d) {
      if (hbm_family && !s.device_info(d).has_hbm()) continue;
      if (auto v = s.device(d, m.field).number()) ex.sample(labels[d], convert(m.convert, *v));
    }
  }
}

void render_links(Exposition& ex, const tf::Snapshot& s) {
  for (const tf::FieldDef* f : tf::fields_of(tf::EntityLevel::kLink)) {
    ex.family(exporter_name(*f), exporter_help(*f), type_of(*f));
    for (int l = 0; l < s.link_count(); ++l) {
      auto v = s.link(l, f->id).number();
      if (!v) continue;
      const tf::LinkInfo& info = s.link_info(l);
      // device_a sends, device_b receives; an end that is no device is named ("host", "switch",
      // "roce"). pair names the physical link, the same for both directions ("0-3", "2-host", a
      // RoCE port "2-roce"): alerts aggregate by it so one down link is one alert.
      const int low = info.device_a < 0 || (info.device_b >= 0 && info.device_b < info.device_a) ? info.device_b : info.device_a;
      std::string pair = tf::link_ends_name(low, low == info.device_a ? info.device_b : info.device_a, info.kind);
      std::string far = pair.substr(pair.find('-') + 1);  // the name of a non-device end
      auto end = [&](int d) { return d < 0 ? far : std::to_string(d); };
      ex.sample({{"link", std::to_string(l)}, {"kind", info.kind}, {"device_a", end(info.device_a)},
                 {"device_b", end(info.device_b)}, {"pair", pair}},
                *v * exporter_scale(*f));
    }
  }
}

// One series per incident (one per root cause), labelled from the incident table: what the alert
// rules fire on, so a root cause raises one alert whatever it touches.
void render_incidents(Exposition& ex, const tf::Snapshot& s, const std::vector<Labels>& labels) {
  ex.family("npu_incident", "an active incident, one per root cause (value 1); labels from the incident table", "gauge");
  for (const probes::Incident& inc : probes::node_incidents(s)) {
    // An incident with an alert of its own (a node that stopped answering: NpuNodeDown on
    // npu_exporter_node_up) is not repeated here; every other, a slow host included, is.
    if (inc.kind->alert != "NpuIncident") continue;
    char code[16];
    std::snprintf(code, sizeof code, "0x%08X", inc.kind->code);
    Labels l;
    if (inc.device >= 0) l = labels[static_cast<std::size_t>(inc.device)];
    l.insert(l.end(), {{"kind", inc.kind->kind}, {"code", code}, {"level", tf::health_name(inc.kind->severity)}, {"target", inc.entity},
                       {"entity", tf::entity_name(inc.kind->entity)}, {"handling", tf::handling_name(inc.kind->handling)},
                       {"summary", inc.summary}});
    if (inc.kind->entity == tf::IncidentEntity::kLink) {
      l.insert(l.end(), {{"link_kind", inc.link_kind}, {"pair", tf::link_ends_name(inc.device_a, inc.device_b, inc.link_kind)}});
    }
    ex.sample(l, 1);
  }
}

void render_processes(Exposition& ex, const tf::Snapshot& s) {
  const tf::FieldDef* f = tf::find_field(fid::kProcessHbmUsedBytes);
  auto id_of = [&s](int device) {
    return device >= 0 && device < s.device_count() ? std::to_string(s.device_info(device).logic_id) : std::to_string(device);
  };
  ex.family(f->name, f->description, "gauge");
  for (const tf::ProcessInfo& p : s.processes()) {
    ex.sample({{"id", id_of(p.device)}, {"process_id", std::to_string(p.pid)}, {"process_name", p.name}},
              static_cast<double>(p.hbm_bytes));
  }
  ex.family("npu_chip_info_process_info", "HBM used by one process on the chip (MB)", "gauge");
  for (const tf::ProcessInfo& p : s.processes()) {
    ex.sample({{"id", id_of(p.device)}, {"process_id", std::to_string(p.pid)}},
              static_cast<double>(p.hbm_bytes) / (1024.0 * 1024.0));
  }
}

}  // namespace

std::span<const MindxMetric> mindx_metrics() { return kMindx; }

std::string exporter_name(const tf::FieldDef& f) {
  std::string name(f.name);
  std::size_t ns = ns_unit(name);
  if (ns != std::string::npos) name.replace(ns, 3, "_seconds");
  if (f.kind != tf::FieldKind::kCounter && ends_with(name, "_count")) name.replace(name.size() - 6, 6, "_num");
  return name;
}

std::string exporter_help(const tf::FieldDef& f) {
  std::string help(f.description);
  if (ns_unit(f.name) == std::string::npos) return help;
  // The value is exported in seconds: so is the unit the description names (", ns").
  for (std::size_t pos = help.find(", ns"); pos != std::string::npos; pos = help.find(", ns", pos + 1)) {
    std::size_t after = pos + 4;
    if (after == help.size() || help[after] == ' ' || help[after] == ';') help.replace(pos, 4, ", seconds");
  }
  return help;
}

double exporter_scale(const tf::FieldDef& f) { return ns_unit(f.name) != std::string::npos ? 1e-9 : 1.0; }

std::string render_metrics(const tf::Snapshot* s, const ScrapeStatus& st) {
  Exposition ex;
  render_self(ex, s, st);
  if (s == nullptr || s->stale()) return ex.str();
  std::vector<Labels> labels;
  for (int d = 0; d < s->device_count(); ++d) labels.push_back(device_labels(s->device_info(d)));
  render_node(ex, *s);
  render_device_fields(ex, *s, labels);
  render_mindx(ex, *s, labels);
  render_links(ex, *s);
  render_incidents(ex, *s, labels);
  render_processes(ex, *s);
  return ex.str();
}

}  // namespace npukit::smi::exporter
