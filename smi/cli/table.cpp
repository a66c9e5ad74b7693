#include "smi/cli/table.hpp"

#include "smi/common/columns.hpp"
#include "smi/common/text.hpp"

namespace npukit::smi {

namespace tf = telemetry;
namespace fid = telemetry::fid;

namespace {

constexpr const char* kHbmRule = "+------------------------------------------------------------------------------------------------+\n";
constexpr const char* kHbmJoints = "+---------------------------+---------------+----------------------------------------------------+\n";
constexpr const char* kHbmDouble = "+===========================+===============+====================================================+\n";
constexpr const char* kClassicRule = "+--------------------------------------------------------------------------------------------------------+\n";
constexpr const char* kClassicJoints = "+-------------------------------+-----------------+------------------------------------------------------+\n";
constexpr const char* kClassicDouble = "+===============================+=================+======================================================+\n";

// The DDR pair of the HBM layout: npu-smi forces 0 / 0 on 910B (no DDR), so a live chip
// without DDR telemetry prints 0 in text and null in JSON.
Value ddr_or_forced_zero(const tf::Snapshot& s, int d, tf::FieldId id) {
  Value v = field_mb(s, d, id);
  if (v.is_na() && !s.stale() && s.device(d, id).status == tf::SampleStatus::kNotSupported) {
    v.text = std::string(1, '0');  // not = "0": GCC 12 raises a false -Wrestrict on that
  }
  return v;
}

Object chip_object(const tf::Snapshot& s, int d, bool hbm) {
  const tf::DeviceInfo& info = s.device_info(d);
  Object c;
  c.add("", "chip_id", Value::integer(info.chip_id)).add("", "logic_id", Value::integer(info.logic_id));
  c.add("", "phy_id", Value::integer(info.phy_id)).add("", "name", Value::str(info.name));
  c.add("", key_of(fid::kHealth), Value::str(tf::health_name(s.health(d))));
  c.add("", key_of(fid::kPowerWatts), field_real(s, d, fid::kPowerWatts, 1));
  c.add("", key_of(fid::kTemperatureCelsius), field_integer(s, d, fid::kTemperatureCelsius));
  c.add("", key_of(fid::kHugepagesUsedPages), field_integer(s, d, fid::kHugepagesUsedPages));
  c.add("", key_of(fid::kHugepagesTotalPages), field_integer(s, d, fid::kHugepagesTotalPages));
  c.add("", "bus_id", info.bus_id.empty() ? Value::na() : Value::str(info.bus_id));
  c.add("", key_of(fid::kAicoreUtil), field_integer(s, d, fid::kAicoreUtil));
  if (hbm) {
    c.add("", key_of(fid::kDdrUsedBytes), ddr_or_forced_zero(s, d, fid::kDdrUsedBytes));
    c.add("", key_of(fid::kDdrTotalBytes), ddr_or_forced_zero(s, d, fid::kDdrTotalBytes));
    c.add("", key_of(fid::kHbmUsedBytes), field_mb(s, d, fid::kHbmUsedBytes));
    c.add("", key_of(fid::kHbmTotalBytes), field_mb(s, d, fid::kHbmTotalBytes));
  } else {
    c.add("", key_of(fid::kDdrUsedBytes), field_mb(s, d, fid::kDdrUsedBytes));
    c.add("", key_of(fid::kDdrTotalBytes), field_mb(s, d, fid::kDdrTotalBytes));
  }
  return c;
}

Object process_object(const tf::Snapshot& s, const tf::ProcessInfo& p) {
  Object o;
  o.add("", "chip_id", Value::integer(s.device_info(p.device).chip_id));
  o.add("", "pid", Value::integer(p.pid)).add("", "process_name", Value::str(p.name));
  o.add("", key_of(fid::kProcessHbmUsedBytes), Value::bytes_as_mb(p.hbm_bytes));
  return o;
}

// Devices grouped by card, in order of first appearance.
std::vector<std::pair<int, std::vector<int>>> cards_of(const tf::Snapshot& s) {
  std::vector<std::pair<int, std::vector<int>>> cards;
  for (int d = 0; d < s.device_count(); ++d) {
    int npu = s.device_info(d).npu_id;
    if (cards.empty() || cards.back().first != npu) cards.push_back({npu, {}});
    cards.back().second.push_back(d);
  }
  return cards;
}

std::string row_hbm(const Object& c, int npu) {
  const Value& power = c.value(key_of(fid::kPowerWatts));
  std::string out = strprintf("| %-5d %-20s| %-13s | %-11s %-17s %-5s/ %-13s |\n", npu,
                              c.value("name").text.c_str(), c.value(key_of(fid::kHealth)).text.c_str(),
                              power.is_na() ? "-" : power.text.c_str(),
                              c.value(key_of(fid::kTemperatureCelsius)).text.c_str(),
                              c.value(key_of(fid::kHugepagesUsedPages)).text.c_str(),
                              c.value(key_of(fid::kHugepagesTotalPages)).text.c_str());
  out += strprintf("| %-26s| %-13s | %-11s %-5s/ %-10s %-5s/ %-13s |\n", c.value("chip_id").text.c_str(),
                   c.value("bus_id").text.c_str(), c.value(key_of(fid::kAicoreUtil)).text.c_str(),
                   c.value(key_of(fid::kDdrUsedBytes)).text.c_str(), c.value(key_of(fid::kDdrTotalBytes)).text.c_str(),
                   c.value(key_of(fid::kHbmUsedBytes)).text.c_str(), c.value(key_of(fid::kHbmTotalBytes)).text.c_str());
  return out;
}

std::string row_classic(const Object& c, int npu, bool power_na) {
  const Value& power = c.value(key_of(fid::kPowerWatts));
  std::string out = strprintf("| %-7d %-22s| %-15s | %-12s %-17s %-6s/ %-13s |\n", npu,
                              c.value("name").text.c_str(), c.value(key_of(fid::kHealth)).text.c_str(),
                              power_na ? "NA" : power.text.c_str(),
                              c.value(key_of(fid::kTemperatureCelsius)).text.c_str(),
                              c.value(key_of(fid::kHugepagesUsedPages)).text.c_str(),
                              c.value(key_of(fid::kHugepagesTotalPages)).text.c_str());
  out += strprintf("| %-7s %-22s| %-15s | %-12s %-5s/ %-32s |\n", c.value("chip_id").text.c_str(),
                   c.value("logic_id").text.c_str(), c.value("bus_id").text.c_str(),
                   c.value(key_of(fid::kAicoreUtil)).text.c_str(), c.value(key_of(fid::kDdrUsedBytes)).text.c_str(),
                   c.value(key_of(fid::kDdrTotalBytes)).text.c_str());
  return out;
}

std::string process_rows(const Object& card, bool hbm) {
  int npu = static_cast<int>(card.value("npu_id").data.get<int64_t>());
  const auto& procs = card.list("processes");
  std::string out;
  for (const Object& p : procs) {
    const char* format = hbm ? "| %-7d %-17s | %-13s | %-24s | %-23s |\n" : "| %-7d %-22s| %-15s | %-24s | %-25s |\n";
    out += strprintf(format, npu, p.value("chip_id").text.c_str(), p.value("pid").text.c_str(),
                     p.value("process_name").text.c_str(), p.value(key_of(fid::kProcessHbmUsedBytes)).text.c_str());
  }
  if (procs.empty()) {
    out += strprintf(hbm ? "| No running processes found in NPU %-7d%54s|\n" : "| No running processes found in NPU %-7d%62s|\n",
                     npu, "");
  }
  out += hbm ? kHbmDouble : kClassicDouble;
  return out;
}

std::string render_hbm(const Document& doc) {
  std::string out = kHbmRule;
  out += strprintf("| npu-smi %-24s Version: %-52s |\n", doc.value("tool_version").text.c_str(),
                   doc.value("driver_version").text.c_str());
  out += kHbmJoints;
  out += "| NPU   Name                | Health        | Power(W)    Temp(C)           Hugepages-Usage(page)|\n";
  out += "| Chip                      | Bus-Id        | AICore(%)   Memory-Usage(MB)  HBM-Usage(MB)        |\n";
  out += kHbmDouble;
  for (const Object& card : doc.list("cards")) {
    int npu = static_cast<int>(card.value("npu_id").data.get<int64_t>());
    const auto& chips = card.list("chips");
    for (std::size_t i = 0; i < chips.size(); ++i) {
      if (i > 0) out += kHbmRule;
      out += row_hbm(chips[i], npu);
    }
    out += kHbmDouble;
  }
  out += kHbmJoints;
  out += "| NPU     Chip              | Process id    | Process name             | Process memory(MB)      |\n";
  out += kHbmDouble;
  for (const Object& card : doc.list("cards")) out += process_rows(card, true);
  return out;
}

std::string render_classic(const Document& doc) {
  std::string out = kClassicRule;
  out += strprintf("| npu-smi %-40s Version: %-44s |\n", doc.value("tool_version").text.c_str(),
                   doc.value("driver_version").text.c_str());
  out += kClassicJoints;
  out += "| NPU     Name                  | Health          | Power(W)     Temp(C)           Hugepages-Usage(page) |\n";
  out += "| Chip    Device                | Bus-Id          | AICore(%)    Memory-Usage(MB)                        |\n";
  out += kClassicDouble;
  for (const Object& card : doc.list("cards")) {
    int npu = static_cast<int>(card.value("npu_id").data.get<int64_t>());
    const auto& chips = card.list("chips");
    for (std::size_t i = 0; i < chips.size(); ++i) {
      if (i > 0) out += kClassicJoints;
      // A chip without a power reading (310P) has none on the bus: NA, as npu-smi prints.
      out += row_classic(chips[i], npu, chips[i].value(key_of(fid::kPowerWatts)).is_na());
    }
    out += kClassicDouble;
  }
  out += kClassicJoints;
  out += "| NPU     Chip                  | Process id      | Process name             | Process memory(MB)        |\n";
  out += kClassicDouble;
  for (const Object& card : doc.list("cards")) out += process_rows(card, false);
  return out;
}

}  // namespace

Document build_info_doc(const tf::Snapshot& s) {
  Document doc;
  const tf::NodeInfo& node = s.node();
  bool hbm = s.device_count() == 0 || s.device_info(0).has_hbm();
  doc.add("", "node", Value::str(node.node_name)).add("", "node_spec", Value::str(node.node_spec));
  doc.add("", "tool_version", Value::str(node.tool_version));
  doc.add("", "driver_version", Value::str(node.driver_version));
  doc.add("", "layout", Value::str(hbm ? "hbm" : "classic"));
  doc.add("", "chip_type", s.device_count() > 0 ? Value::str(s.device_info(0).chip_type) : Value::na());
  doc.add("", "stale", Value::pair(s.stale(), s.stale() ? "yes" : "no"));
  std::vector<Object> cards;
  for (const auto& [npu, devices] : cards_of(s)) {
    Object card;
    card.add("", "npu_id", Value::integer(npu));
    std::vector<Object> chips;
    std::vector<Object> procs;
    for (int d : devices) {
      chips.push_back(chip_object(s, d, hbm));
      for (const auto& p : s.processes()) {
        if (p.device == d) procs.push_back(process_object(s, p));
      }
    }
    card.add_list("chips", std::move(chips)).add_list("processes", std::move(procs));
    cards.push_back(std::move(card));
  }
  doc.add_list("cards", std::move(cards));
  return doc;
}

std::string render_info_table(const Document& doc) {
  return doc.value("layout").text == "classic" ? render_classic(doc) : render_hbm(doc);
}

}  // namespace npukit::smi
