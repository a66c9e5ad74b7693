#include "smi/cli/types.hpp"

#include <algorithm>

#include "probes/health/incidents.hpp"
#include "smi/common/columns.hpp"
#include "smi/common/text.hpp"

namespace npukit::smi {

namespace tf = telemetry;
namespace fid = telemetry::fid;

namespace {

constexpr std::string_view kTypes[] = {"board",  "common", "usages", "health", "temp",   "power",       "memory",
                                       "ecc",    "proc-mem", "product", "sensors", "topo", "phyid-remap"};

bool hbm_layout(const tf::Snapshot& s, int d) { return s.device_info(d).has_hbm(); }
// An identity string, NA (null in JSON) where the part has none.
Value id_value(const std::string& text) { return text.empty() || text == "NA" ? Value::na() : Value::str(text); }

bool is_310p(const tf::Snapshot& s, int d) { return s.device_info(d).chip_type == "Ascend310P"; }

// A value npu-smi prints as a constant because the chip has no such unit (910B: no DDR).
Value constant_zero() { return Value::pair(nullptr, "0"); }

Object usages_keys(const tf::Snapshot& s, int d) {
  Object o;
  bool hbm = hbm_layout(s, d);
  if (hbm) {
    o.add("DDR Capacity(MB)", key_of(fid::kDdrTotalBytes), constant_zero());
    o.add("DDR Usage Rate(%)", "npu_ddr_usage_percent", constant_zero());
    o.add("DDR Hugepages Total(page)", key_of(fid::kHugepagesTotalPages), constant_zero());
    o.add("DDR Hugepages Usage Rate(%)", "npu_hugepages_usage_percent", constant_zero());
    o.add("HBM Capacity(MB)", key_of(fid::kHbmTotalBytes), field_mb(s, d, fid::kHbmTotalBytes));
    o.add("HBM Usage Rate(%)", "npu_hbm_usage_percent", usage_percent(s, d, fid::kHbmUsedBytes, fid::kHbmTotalBytes));
    o.add("Aicore Usage Rate(%)", key_of(fid::kAicoreUtil), field_integer(s, d, fid::kAicoreUtil));
    o.add("Aivector Usage Rate(%)", key_of(fid::kVectorUtil), field_integer(s, d, fid::kVectorUtil));
  } else {
    o.add("DDR Capacity(MB)", key_of(fid::kDdrTotalBytes), field_mb(s, d, fid::kDdrTotalBytes));
    o.add("DDR Usage Rate(%)", "npu_ddr_usage_percent", usage_percent(s, d, fid::kDdrUsedBytes, fid::kDdrTotalBytes));
    o.add("DDR Hugepages Total(page)", key_of(fid::kHugepagesTotalPages), field_integer(s, d, fid::kHugepagesTotalPages));
    o.add("DDR Hugepages Usage Rate(%)", "npu_hugepages_usage_percent",
          usage_percent(s, d, fid::kHugepagesUsedPages, fid::kHugepagesTotalPages).is_na() ? constant_zero()
              : usage_percent(s, d, fid::kHugepagesUsedPages, fid::kHugepagesTotalPages));
    o.add("Aicore Usage Rate(%)", key_of(fid::kAicoreUtil), field_integer(s, d, fid::kAicoreUtil));
  }
  o.add("Aicpu Usage Rate(%)", key_of(fid::kAicpuUtil), field_integer(s, d, fid::kAicpuUtil));
  o.add("Ctrlcpu Usage Rate(%)", key_of(fid::kCtrlcpuUtil), field_integer(s, d, fid::kCtrlcpuUtil));
  if (hbm) {
    o.add("DDR Bandwidth Usage Rate(%)", "npu_ddr_bandwidth_utilization_percent", constant_zero());
    o.add("HBM Bandwidth Usage Rate(%)", key_of(fid::kHbmBandwidthUtil), field_integer(s, d, fid::kHbmBandwidthUtil));
    o.add("NPU Utilization(%)", key_of(fid::kNpuUtil), field_integer(s, d, fid::kNpuUtil));
    o.add("Aicube Usage Rate(%)", key_of(fid::kCubeUtil), field_integer(s, d, fid::kCubeUtil));
  } else {
    o.add("Vectorcore Usage Rate(%)", key_of(fid::kVectorUtil), field_integer(s, d, fid::kVectorUtil));
    o.add("DDR Bandwidth Usage Rate(%)", key_of(fid::kHbmBandwidthUtil), field_integer(s, d, fid::kHbmBandwidthUtil));
  }
  return o;
}

Object common_keys(const tf::Snapshot& s, int d) {
  Object o;
  bool hbm = hbm_layout(s, d);
  if (hbm) {
    o.add("Memory Usage Rate(%)", "npu_ddr_usage_percent", constant_zero());
    o.add("HBM Usage Rate(%)", "npu_hbm_usage_percent", usage_percent(s, d, fid::kHbmUsedBytes, fid::kHbmTotalBytes));
  } else {
    o.add("Memory Usage Rate(%)", "npu_ddr_usage_percent", usage_percent(s, d, fid::kDdrUsedBytes, fid::kDdrTotalBytes));
  }
  o.add("Aicore Usage Rate(%)", key_of(fid::kAicoreUtil), field_integer(s, d, fid::kAicoreUtil));
  o.add("Aicore Freq(MHZ)", key_of(fid::kAicoreClockMaxMhz), field_integer(s, d, fid::kAicoreClockMaxMhz));
  o.add("Aicore curFreq(MHZ)", key_of(fid::kAicoreClockMhz), field_integer(s, d, fid::kAicoreClockMhz));
  if (hbm) o.add("Aicore Count", "aicore_count", Value::integer(s.device_info(d).aicore_count));
  o.add("Temperature(C)", key_of(fid::kTemperatureCelsius), field_integer(s, d, fid::kTemperatureCelsius));
  if (hbm) o.add("NPU Real-time Power(W)", key_of(fid::kPowerWatts), field_real(s, d, fid::kPowerWatts, 1));
  return o;
}

// Every active code, most severe first ("80E18401 80E01801"), NA when none.
Value error_code_list(const tf::Snapshot& s, int d) {
  std::vector<uint32_t> codes = probes::device_codes(s, d);
  if (codes.empty()) return Value::pair(nlohmann::json::array(), "NA");
  std::string text;
  for (uint32_t c : codes) text += (text.empty() ? "" : " ") + strprintf("%04X", c);
  return Value::pair(nlohmann::json(codes), text);
}

Value error_information(const tf::Snapshot& s, int d) {
  std::vector<uint32_t> codes = probes::device_codes(s, d);
  if (codes.empty()) return Value::pair(nlohmann::json::array(), "NA");
  nlohmann::json list = nlohmann::json::array();
  std::string text;
  for (uint32_t c : codes) {
    std::string info = probes::code_summary(c, s, d);
    if (info.empty()) info = std::to_string(c);
    list.push_back(info);
    text += (text.empty() ? "" : "; ") + info;
  }
  return Value::pair(list, text);
}

Object health_chip(const tf::Snapshot& s, int d) {
  Object o;
  o.add("Health Status", key_of(fid::kHealth), Value::str(tf::health_name(s.health(d))));
  o.add("Error Code", "error_codes", error_code_list(s, d));
  o.add("Error Information", "error_information", error_information(s, d));
  return o;
}

Object temp_keys(const tf::Snapshot& s, int d) {
  Object o;
  o.add(hbm_layout(s, d) ? "NPU Temperature (C)" : "Temperature (C)", key_of(fid::kTemperatureCelsius),
        field_integer(s, d, fid::kTemperatureCelsius));
  return o;
}

Object power_keys(const tf::Snapshot& s, int d) {
  Object o;
  o.add("NPU Real-time Power(W)", key_of(fid::kPowerWatts), field_real(s, d, fid::kPowerWatts, 1));
  return o;
}

Object memory_keys(const tf::Snapshot& s, int d) {
  Object o;
  if (hbm_layout(s, d)) {
    o.add("DDR Capacity(MB)", key_of(fid::kDdrTotalBytes), constant_zero());
    o.add("DDR Clock Speed(MHz)", "npu_ddr_clock_mhz", constant_zero());
    o.add("HBM Capacity(MB)", key_of(fid::kHbmTotalBytes), field_mb(s, d, fid::kHbmTotalBytes));
    o.add("HBM Clock Speed(MHz)", key_of(fid::kHbmClockMhz), field_integer(s, d, fid::kHbmClockMhz));
    o.add("HBM Temperature(C)", key_of(fid::kHbmTemperatureCelsius), field_integer(s, d, fid::kHbmTemperatureCelsius));
    o.add("HBM Manufacturer ID", "hbm_manufacturer_id", Value::na());
  } else {
    o.add("Total DDR Capacity(MB)", "npu_ddr_total_bytes_card", field_mb(s, d, fid::kDdrTotalBytes));
    o.add("DDR Capacity(MB)", key_of(fid::kDdrTotalBytes), field_mb(s, d, fid::kDdrTotalBytes));
    o.add("DDR Clock Speed(MHz)", key_of(fid::kHbmClockMhz), field_integer(s, d, fid::kHbmClockMhz));
  }
  return o;
}

void ecc_block(Object& o, const tf::Snapshot& s, int d, const char* mem) {
  auto label = [mem](const char* rest) { return std::string(mem) + rest; };
  o.add(label(" Single Bit Error Count"), key_of(fid::kEccSingleBitVolatile), field_integer(s, d, fid::kEccSingleBitVolatile));
  o.add(label(" Double Bit Error Count"), key_of(fid::kEccDoubleBitVolatile), field_integer(s, d, fid::kEccDoubleBitVolatile));
  o.add(label(" Single Bit Aggregate Total Err Cnt"), key_of(fid::kEccSingleBitTotal), field_integer(s, d, fid::kEccSingleBitTotal));
  o.add(label(" Double Bit Aggregate Total Err Cnt"), key_of(fid::kEccDoubleBitTotal), field_integer(s, d, fid::kEccDoubleBitTotal));
  o.add(label(" Single Bit Isolated Pages Count"), key_of(fid::kEccSingleBitIsolatedPages),
        field_integer(s, d, fid::kEccSingleBitIsolatedPages));
  o.add(label(" Double Bit Isolated Pages Count"), key_of(fid::kEccDoubleBitIsolatedPages),
        field_integer(s, d, fid::kEccDoubleBitIsolatedPages));
}

Object ecc_keys(const tf::Snapshot& s, int d) {
  Object o;
  if (hbm_layout(s, d)) {
    // The HBM chips' ECC counters are HBM's; npu-smi prints the two DDR lines first (no DDR
    // telemetry here: NA).
    o.add("DDR Single Bit Error Count", "npu_ddr_ecc_single_bit_errors", Value::na());
    o.add("DDR Double Bit Error Count", "npu_ddr_ecc_double_bit_errors", Value::na());
    ecc_block(o, s, d, "HBM");
  } else {
    ecc_block(o, s, d, "DDR");  // 310P device memory is DDR; the bus names the counters ECC
  }
  return o;
}

Object product_keys(const tf::Snapshot& s, int d) {
  Object o;
  o.add("Product Type", "product_type", Value::str(s.device_info(d).name));
  return o;
}

Object sensors_keys(const tf::Snapshot& s, int d) {
  Object o;
  o.add("Soc Max Temperature (C)", key_of(fid::kTemperatureCelsius), field_integer(s, d, fid::kTemperatureCelsius));
  // The driver prints only the SoC's on a 310P (DDR, no HBM).
  if (hbm_layout(s, d)) {
    o.add("HBM Temperature (C)", key_of(fid::kHbmTemperatureCelsius), field_integer(s, d, fid::kHbmTemperatureCelsius));
  }
  return o;
}

Object proc_mem_keys(const tf::Snapshot& s, int d) {
  std::vector<Object> procs;
  for (const auto& p : s.processes()) {
    if (p.device != d) continue;
    Object po;
    po.add("", "pid", Value::integer(p.pid)).add("", "process_name", Value::str(p.name));
    po.add("", key_of(fid::kProcessHbmUsedBytes), Value::bytes_as_mb(p.hbm_bytes));
    procs.push_back(std::move(po));
  }
  Object o;
  o.add_list("processes", std::move(procs));
  return o;
}

using ChipBuilder = Object (*)(const tf::Snapshot&, int);

struct TypeSpec {
  std::string_view name;
  ChipBuilder chip;
  bool chip_id_last;  // usages: "Chip ID" ends each block; the others start it
};

constexpr TypeSpec kSpecs[] = {
    {"usages", usages_keys, true},   {"common", common_keys, false}, {"health", health_chip, false},
    {"temp", temp_keys, false},      {"power", power_keys, false},   {"memory", memory_keys, false},
    {"ecc", ecc_keys, false},        {"product", product_keys, false}, {"sensors", sensors_keys, false},
    {"proc-mem", proc_mem_keys, false},
};

const TypeSpec* spec_of(std::string_view type) {
  for (const auto& spec : kSpecs) {
    if (spec.name == type) return &spec;
  }
  return nullptr;
}

bool supported(std::string_view type, const tf::Snapshot& s, int d, bool chip_form) {
  if (type == "product") return is_310p(s, d);  // npu-smi: 310 / 310P / 310B only
  if (type == "power") return !is_310p(s, d) || !chip_form;
  return true;
}

// The card form's per-chip block: in card form the health block is npu-smi's short "Health".
Object chip_block(const TypeSpec& spec, const tf::Snapshot& s, int d) {
  Object keys;
  if (spec.name == "health") {
    keys.add("Health", key_of(fid::kHealth), Value::str(tf::health_name(s.health(d))));
  } else {
    keys = spec.chip(s, d);
  }
  Value chip_id = Value::integer(s.device_info(d).chip_id);
  Object block;
  if (!spec.chip_id_last) block.add("Chip ID", "chip_id", chip_id);
  for (auto& e : keys.entries) block.entries.push_back(std::move(e));
  if (spec.chip_id_last) block.add("Chip ID", "chip_id", chip_id);
  return block;
}

Object board_card(const tf::Snapshot& s, int npu) {
  std::vector<int> devs = devices_of_card(s, npu);
  const tf::DeviceInfo& info = s.device_info(devs.front());
  int faulty = static_cast<int>(std::count_if(devs.begin(), devs.end(), [&](int d) {
    tf::Health h = s.health(d);
    return h == tf::Health::kAlarm || h == tf::Health::kCritical;
  }));
  Object o;
  o.add("NPU ID", "npu_id", Value::integer(npu));
  o.add("Product Name", "product_name", Value::str(info.name));
  o.add("Model", "model", Value::na()).add("Manufacturer", "manufacturer", Value::na());
  o.add("Serial Number", "serial_number", Value::str(info.serial_number));
  o.add("Software Version", "software_version", Value::str(s.node().driver_version));
  o.add("Firmware Version", "firmware_version", Value::str(info.firmware_version));
  o.add("Compatibility", "compatibility", Value::str("OK"));
  o.add("Board ID", "board_id", id_value(info.board_id)).add("PCB ID", "pcb_id", id_value(info.pcb_id));
  o.add("BOM ID", "bom_id", id_value(info.bom_id));
  o.add("PCIe Bus Info", "bus_id", Value::str(info.bus_id));
  o.add("Slot ID", "slot_id", Value::integer(npu)).add("Class ID", "class_id", Value::na());
  o.add("PCI Vendor ID", "pci_vendor_id", Value::na()).add("PCI Device ID", "pci_device_id", Value::na());
  o.add("Subsystem Vendor ID", "pci_subsystem_vendor_id", Value::na());
  o.add("Subsystem Device ID", "pci_subsystem_device_id", Value::na());
  o.add("Chip Count", "chip_count", Value::integer(static_cast<int64_t>(devs.size())));
  if (!hbm_layout(s, devs.front())) o.add("Faulty Chip Count", "faulty_chip_count", Value::integer(faulty));  // the reference's key
  return o;
}

Object board_chip(const tf::Snapshot& s, int d) {
  const tf::DeviceInfo& info = s.device_info(d);
  Object o;
  o.add("NPU ID", "npu_id", Value::integer(info.npu_id)).add("Chip ID", "chip_id", Value::integer(info.chip_id));
  std::string family = chip_family(info.chip_type);
  o.add("Chip Type", "chip_type", Value::pair(info.chip_type, family));
  o.add("Chip Name", "chip_name", Value::str(info.chip_name));
  o.add("Chip Version", "chip_version", id_value(info.chip_version)).add("Board ID", "board_id", id_value(info.board_id));
  if (!is_310p(s, d)) o.add("PCB ID", "pcb_id", id_value(info.pcb_id)).add("BOM ID", "bom_id", id_value(info.bom_id));
  o.add(hbm_layout(s, d) ? "VDie ID" : "Die ID", "die_id", id_value(info.die_id));
  o.add("Chip Position ID", "chip_position_id", Value::integer(info.chip_id));
  o.add("PCIe Bus Info", "bus_id", Value::str(info.bus_id));
  o.add("Firmware Version", "firmware_version", Value::str(info.firmware_version));
  return o;
}

Object phyid_remap(const tf::Snapshot& s, int phy) {
  Object o;
  for (int d = 0; d < s.device_count(); ++d) {
    const tf::DeviceInfo& info = s.device_info(d);
    if (info.phy_id != phy) continue;
    o.add("Chip Physical ID", "phy_id", Value::integer(phy)).add("Chip Logic ID", "logic_id", Value::integer(info.logic_id));
    o.add("NPU ID", "npu_id", Value::integer(info.npu_id)).add("Chip ID", "chip_id", Value::integer(info.chip_id));
  }
  return o;
}

std::string proc_line(const Object& p) {
  return strprintf("\tProcess id:%-7s Process name:%-17s Process memory(MB):%s\n", p.value("pid").text.c_str(),
                   p.value("process_name").text.c_str(), p.value(key_of(fid::kProcessHbmUsedBytes)).text.c_str());
}

// One block's header values and process lines; a card's "chips" list is not a process list (its
// chips are appended after, each a block of its own).
void append_proc_mem(std::string& out, const Object& block) {
  for (const auto& e : block.entries) {
    if (e.kind == Entry::Kind::kValue && !e.label.empty()) out += kv_line(e.label, e.value.text);
    if (e.kind != Entry::Kind::kList || e.key == "chips") continue;
    if (e.children.empty()) out += "\tNo process in device.\n";
    for (const Object& p : e.children) out += proc_line(p);
  }
}

}  // namespace

std::span<const std::string_view> info_types() { return kTypes; }

std::span<const std::string_view> set_types() {
  static constexpr std::string_view kSet[] = {"ecc-enable", "reset", "clear-ecc-info", "power-limit"};
  return kSet;
}

std::span<const std::string_view> clear_types() {
  static constexpr std::string_view kClear[] = {"ecc-info"};
  return kClear;
}

bool is_info_type(std::string_view type) { return std::find(std::begin(kTypes), std::end(kTypes), type) != std::end(kTypes); }

bool is_node_type(std::string_view type) { return type == "topo"; }

std::vector<int> devices_of_card(const tf::Snapshot& s, int npu) {
  std::vector<int> devs;
  for (int d = 0; d < s.device_count(); ++d) {
    if (s.device_info(d).npu_id == npu) devs.push_back(d);
  }
  return devs;
}

int device_of(const tf::Snapshot& s, int npu, int chip) {
  for (int d = 0; d < s.device_count(); ++d) {
    if (s.device_info(d).npu_id == npu && s.device_info(d).chip_id == chip) return d;
  }
  return -1;
}

TypeDoc build_type_doc(const tf::Snapshot& s, const TypeQuery& q) {
  TypeDoc out;
  if (q.type == "phyid-remap") {
    out.doc = phyid_remap(s, q.phy.value_or(-1));
    return out;
  }
  if (q.type == "board") {
    out.doc = q.chip ? board_chip(s, device_of(s, q.npu, *q.chip)) : board_card(s, q.npu);
    return out;
  }
  const TypeSpec* spec = spec_of(q.type);
  std::vector<int> devs = q.chip ? std::vector<int>{device_of(s, q.npu, *q.chip)} : devices_of_card(s, q.npu);
  if (spec == nullptr || devs.empty() || !supported(q.type, s, devs.front(), q.chip.has_value())) {
    out.unsupported = true;
    return out;
  }
  if (q.chip) {
    if (q.type == "proc-mem") out.doc.add("NPU ID", "npu_id", Value::integer(q.npu));
    for (auto& e : spec->chip(s, devs.front()).entries) out.doc.entries.push_back(std::move(e));
    return out;
  }
  out.doc.add("NPU ID", "npu_id", Value::integer(q.npu));
  out.doc.add("Chip Count", "chip_count", Value::integer(static_cast<int64_t>(devs.size())));
  std::vector<Object> chips;
  for (int d : devs) chips.push_back(chip_block(*spec, s, d));
  out.doc.add_list("chips", std::move(chips));
  return out;
}

std::string render_type_text(const TypeQuery& q, const Document& doc) {
  if (q.type == "ecc") return render_kv(doc, 40);
  if (q.type == "phyid-remap") {
    std::string out;
    for (const auto& e : doc.entries) out += strprintf("\t%-30s:%s\n", e.label.c_str(), e.value.text.c_str());
    return out;
  }
  if (q.type != "proc-mem") return render_kv(doc);
  std::string out;
  append_proc_mem(out, doc);
  for (const Object& chip : doc.list("chips")) {
    out += '\n';
    append_proc_mem(out, chip);
  }
  return out;
}

}  // namespace npukit::smi
