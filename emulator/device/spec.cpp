#include "emulator/device/spec.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <regex>

#include "telemetry/json_reader.hpp"
#include "telemetry/data_dir.hpp"

namespace npukit::emu {

namespace {

constexpr const char* kPrefix = "spec error";
constexpr double kMiB = 1024.0 * 1024.0;

bool looks_like_path(const std::string& s) {
  return s.find('/') != std::string::npos || s.ends_with(".json");
}

std::string catalog_file(const std::string& kind, const std::string& name_or_path) {
  if (looks_like_path(name_or_path)) return name_or_path;
  return spec_dir() + "/" + kind + "/" + name_or_path + ".json";
}

std::map<std::string, std::string> read_sources(FieldReader& r) {
  std::map<std::string, std::string> sources;
  const auto* node = r.find("sources");
  if (node == nullptr || !node->is_object() || node->empty()) {
    r.fail("sources", "every spec must name the public sources of its figures");
    return sources;
  }
  for (const auto& [key, value] : node->items()) {
    if (!value.is_string()) r.fail("sources." + key, "expected a string");
    else sources[key] = value.get<std::string>();
  }
  return sources;
}

void read_identity(FieldReader& r, DeviceSpec& d) {
  d.name = r.string("name");
  d.chip_name = r.string("chip_name");
  d.chip_type = r.string("chip_type");
  d.smi_layout = r.string("smi_layout");
  if (r.ok() && d.smi_layout != "hbm" && d.smi_layout != "classic") {
    r.fail("smi_layout", "expected \"hbm\" or \"classic\", got \"" + d.smi_layout + "\"");
  }
  d.chips_per_card = static_cast<int>(r.integer("chips_per_card"));
  r.check_range("chips_per_card", d.chips_per_card, 1, 4);
  d.firmware_version = r.string("versions.firmware");
  d.chip_version = r.string_or("board.chip_version", "NA");
  d.board_id = r.string_or("board.board_id", "NA");
  d.pcb_id = r.string_or("board.pcb_id", "NA");
  d.bom_id = r.string_or("board.bom_id", "NA");
  d.driver_version = r.string("versions.driver");
}

void read_compute(FieldReader& r, DeviceSpec& d) {
  d.aicore_count = static_cast<int>(r.integer("aicore.count"));
  r.check_range("aicore.count", d.aicore_count, 1, 1024);
  d.vector_core_count = static_cast<int>(r.integer("aicore.vector_count"));
  d.aicpu_count = static_cast<int>(r.integer("aicore.aicpu_count"));
  r.check_range("aicore.aicpu_count", d.aicpu_count, 1, 64);
  d.aicore_clock.nominal_mhz = static_cast<int>(r.integer("aicore.clock_mhz.nominal"));
  d.aicore_clock.min_mhz = static_cast<int>(r.integer("aicore.clock_mhz.min"));
  d.aicore_clock.max_mhz = static_cast<int>(r.integer("aicore.clock_mhz.max"));
  d.aicore_clock.idle_mhz = static_cast<int>(r.integer_or("aicore.clock_mhz.idle", d.aicore_clock.max_mhz));
  if (r.ok() && !(d.aicore_clock.min_mhz > 0 && d.aicore_clock.min_mhz <= d.aicore_clock.nominal_mhz &&
                  d.aicore_clock.nominal_mhz <= d.aicore_clock.max_mhz)) {
    r.fail("aicore.clock_mhz", "expected 0 < min <= nominal <= max");
  }
  if (r.ok() && !(d.aicore_clock.idle_mhz >= d.aicore_clock.min_mhz && d.aicore_clock.idle_mhz <= d.aicore_clock.max_mhz)) {
    r.fail("aicore.clock_mhz.idle", "expected min <= idle <= max");
  }
  auto peak = [&r](const std::string& unit) {
    PeakSpec p;
    p.fp16 = r.number(unit + ".fp16") * 1e12;
    p.bf16 = r.number(unit + ".bf16") * 1e12;
    p.fp32 = r.number(unit + ".fp32") * 1e12;
    p.int8 = r.number(unit + ".int8") * 1e12;
    r.check_range(unit + ".fp16", p.fp16, 1e9, 1e16);
    return p;
  };
  d.cube_peak = peak("cube_peak_tflops");
  d.vector_peak = peak("vector_peak_tflops");
  d.aicpu_flops_per_core = r.number("aicpu_gflops_per_core") * 1e9;
  r.check_range("aicpu_gflops_per_core", d.aicpu_flops_per_core, 1e6, 1e13);
  auto eff = [&r](const char* path) {
    double v = r.number(path);
    r.check_range(path, v, 0.01, 1.0);
    return v;
  };
  d.efficiency.cube = eff("efficiency.cube");
  d.efficiency.vector = eff("efficiency.vector");
  d.efficiency.hbm = eff("efficiency.hbm");
  d.efficiency.aicpu = eff("efficiency.aicpu");
  d.efficiency.pcie = eff("efficiency.pcie");
  // Optional: only a chip with a published convolution microbenchmark has one.
  d.efficiency.conv = r.number_or("efficiency.conv", 0);
  if (d.efficiency.conv != 0) r.check_range("efficiency.conv", d.efficiency.conv, 0.01, 1.0);
}

void read_memory_and_io(FieldReader& r, DeviceSpec& d) {
  d.hbm.capacity_bytes = static_cast<uint64_t>(r.number("hbm.capacity_mib") * kMiB);
  d.hbm.firmware_reserved_bytes = static_cast<uint64_t>(r.number("hbm.firmware_reserved_mib") * kMiB);
  if (r.ok() && d.hbm.firmware_reserved_bytes >= d.hbm.capacity_bytes) {
    r.fail("hbm.firmware_reserved_mib", "must be smaller than hbm.capacity_mib");
  }
  d.hbm.bandwidth_bps = r.number("hbm.bandwidth_GBps") * 1e9;
  r.check_range("hbm.bandwidth_GBps", d.hbm.bandwidth_bps / 1e9, 1, 100000);
  d.hbm.clock_mhz = static_cast<int>(r.integer("hbm.clock_mhz"));
  d.pcie.gen = static_cast<int>(r.integer("pcie.gen"));
  d.pcie.lanes = static_cast<int>(r.integer("pcie.lanes"));
  d.pcie.bandwidth_bps = r.number("pcie.bandwidth_GBps") * 1e9;
  r.check_range("pcie.bandwidth_GBps", d.pcie.bandwidth_bps / 1e9, 0.1, 1000);
  d.pcie.latency_ns = r.integer("pcie.latency_ns");
  d.runtime.kernel_launch_ns = r.integer("runtime.kernel_launch_ns");
  d.runtime.aicpu_launch_ns = r.integer("runtime.aicpu_launch_ns");
  d.runtime.malloc_ns = r.integer("runtime.malloc_ns");
  d.runtime.malloc_ns_per_mib = r.integer("runtime.malloc_ns_per_mib");
  d.runtime.free_ns = r.integer("runtime.free_ns");
  d.runtime.op_compile_ns = r.integer("runtime.op_compile_ns");
}

void read_power_thermal(FieldReader& r, DeviceSpec& d) {
  d.power.tdp_w = r.number("power.tdp_w");
  d.power.idle_w = r.number("power.idle_w");
  if (const auto* reported = r.find("power.reported")) d.power.reported = !reported->is_boolean() || reported->get<bool>();
  if (r.ok() && !(d.power.idle_w > 0 && d.power.idle_w < d.power.tdp_w)) {
    r.fail("power.idle_w", "expected 0 < idle_w < tdp_w");
  }
  d.thermal.ambient_c = r.number("thermal.ambient_c");
  d.thermal.throttle_c = r.number("thermal.throttle_c");
  d.thermal.shutdown_c = r.number("thermal.shutdown_c");
  d.thermal.resistance_c_per_w = r.number("thermal.resistance_c_per_w");
  d.thermal.time_constant_s = r.number("thermal.time_constant_s");
  if (r.ok() && !(d.thermal.ambient_c < d.thermal.throttle_c &&
                  d.thermal.throttle_c < d.thermal.shutdown_c)) {
    r.fail("thermal.throttle_c", "expected ambient_c < throttle_c < shutdown_c");
  }
}

Result<DeviceSpec> parse_device(const nlohmann::json& root, const std::string& file) {
  FieldReader r(root, file, kPrefix);
  DeviceSpec d;
  read_identity(r, d);
  read_compute(r, d);
  read_memory_and_io(r, d);
  read_power_thermal(r, d);
  d.sources = read_sources(r);
  if (!r.ok()) return r.status();
  return d;
}

void read_topology(FieldReader& r, NodeSpec& n) {
  n.topology = r.string("topology.kind");
  static const char* kKinds[] = {"hccs_full_mesh", "hccs_switch", "hccs_two_meshes_pcie", "pcie"};
  if (r.ok() && std::find(std::begin(kKinds), std::end(kKinds), n.topology) == std::end(kKinds)) {
    r.fail("topology.kind", "unknown topology \"" + n.topology +
                                "\" (expected hccs_full_mesh, hccs_switch, hccs_two_meshes_pcie or pcie)");
  }
  n.hccs_link_bps = r.number_or("topology.hccs_link_GBps", 0) * 1e9;
  n.hccs_latency_ns = r.integer_or("topology.hccs_latency_ns", 0);
  n.link_efficiency = r.number_or("topology.link_efficiency", 0.8);
  r.check_range("topology.link_efficiency", n.link_efficiency, 0.05, 1.0);
  n.inter_group_bps = r.number_or("topology.inter_group_GBps", 0) * 1e9;
  n.inter_group_latency_ns = r.integer_or("topology.inter_group_latency_ns", 0);
  if (r.ok() && n.topology == "hccs_two_meshes_pcie" && n.inter_group_bps <= 0) {
    r.fail("topology.inter_group_GBps", "two meshes need the bandwidth of the link between them");
  }
  const auto* groups = r.find("topology.hccs_groups");
  if (groups == nullptr) return;
  if (!groups->is_array()) return r.fail("topology.hccs_groups", "expected an array of arrays");
  for (std::size_t g = 0; g < groups->size(); ++g) {
    std::vector<int> cards;
    const auto& group = (*groups)[g];
    for (std::size_t i = 0; group.is_array() && i < group.size(); ++i) {
      if (!group[i].is_number_integer() || group[i].get<int>() < 0 ||
          group[i].get<int>() >= n.cards) {
        return r.fail("topology.hccs_groups[" + std::to_string(g) + "][" + std::to_string(i) + "]",
                      "expected a card id in [0, cards)");
      }
      cards.push_back(group[i].get<int>());
    }
    n.hccs_groups.push_back(std::move(cards));
  }
}

void read_bus_ids(FieldReader& r, NodeSpec& n) {
  const auto* ids = r.find("bus_ids");
  static const std::regex kBusId("^[0-9A-F]{4}:[0-9A-F]{2}:[0-9A-F]{2}\\.[0-7]$");
  if (ids == nullptr || !ids->is_array()) return r.fail("bus_ids", "expected an array of strings");
  if (static_cast<int>(ids->size()) != n.cards * n.device_spec.chips_per_card) {
    return r.fail("bus_ids", "expected one bus id per chip (" +
                                 std::to_string(n.cards * n.device_spec.chips_per_card) +
                                 "), got " + std::to_string(ids->size()));
  }
  for (std::size_t i = 0; i < ids->size(); ++i) {
    const auto& id = (*ids)[i];
    if (!id.is_string() || !std::regex_match(id.get<std::string>(), kBusId)) {
      return r.fail("bus_ids[" + std::to_string(i) + "]", "expected \"DDDD:BB:DD.F\" (upper-case hex)");
    }
    n.bus_ids.push_back(id.get<std::string>());
  }
}

}  // namespace

std::string spec_dir() { return telemetry::data_dir("NPUKIT_SPEC_DIR", "specs", NPUKIT_DEFAULT_SPEC_DIR); }

Result<DeviceSpec> load_device_spec(const std::string& name_or_path) {
  std::string file = catalog_file("devices", name_or_path);
  std::error_code ec;  // a file it may not read is opened below, which names the error
  if (!looks_like_path(name_or_path) && !std::filesystem::exists(file, ec) && !ec) {
    return NotFoundError(std::string(kPrefix) + ": no device spec '" + name_or_path + "' (looked for " +
                         file + ")");
  }
  auto root = parse_json_file(file, kPrefix);
  if (!root.ok()) return root.status();
  return parse_device(*root, file);
}

namespace {

void read_scale_out(FieldReader& r, NodeSpec& n) {
  if (r.find("scale_out") == nullptr) return;
  n.roce.port_bps = r.number("scale_out.roce_port_Gbps") * 1e9 / 8;
  r.check_range("scale_out.roce_port_Gbps", n.roce.port_bps * 8 / 1e9, 1, 3200);
  n.roce.latency_ns = r.integer("scale_out.roce_latency_ns");
  r.check_range("scale_out.roce_latency_ns", static_cast<double>(n.roce.latency_ns), 0, 1e6);
  n.roce.efficiency = r.number_or("scale_out.link_efficiency", 0.9);
  r.check_range("scale_out.link_efficiency", n.roce.efficiency, 0.05, 1.0);
}

bool catalog_has(const std::string& kind, const std::string& name) {
  std::error_code ec;
  return std::filesystem::exists(catalog_file(kind, name), ec);
}

constexpr int kMaxHosts = 1024;

// `hosts` copies of the host node `host` joined by RoCE through `sw`.
Result<NodeSpec> make_cluster(NodeSpec host, const std::string& name, int hosts, const SwitchSpec& sw) {
  const std::string where = std::string(kPrefix) + ": cluster '" + name + "': ";
  if (hosts < 1 || hosts > kMaxHosts) {
    return InvalidArgument(where + std::to_string(hosts) + " hosts is out of range [1, " + std::to_string(kMaxHosts) + "]");
  }
  if (hosts > 1 && host.roce.port_bps <= 0) {
    return InvalidArgument(where + "node spec '" + host.name + "' has no scale_out section, so its hosts have no RoCE ports to join them");
  }
  if (sw.kind != "leaf" && sw.kind != "leaf_spine") {
    return InvalidArgument(where + "field 'switch.kind': expected \"leaf\" or \"leaf_spine\", got \"" + sw.kind + "\"");
  }
  if (sw.kind == "leaf_spine" && (sw.hosts_per_leaf < 1 || sw.hosts_per_leaf > hosts)) {
    return InvalidArgument(where + "field 'switch.hosts_per_leaf': " + std::to_string(sw.hosts_per_leaf) +
                           " is out of range [1, " + std::to_string(hosts) + "]");
  }
  if (sw.oversubscription < 1 || sw.oversubscription > 64) {
    return InvalidArgument(where + "field 'switch.oversubscription': " + std::to_string(sw.oversubscription) +
                           " is out of range [1, 64]");
  }
  host.host_spec = host.name;
  host.name = name;
  host.hosts = hosts;
  host.scale_out_switch = sw;
  return host;
}

Result<NodeSpec> load_host_spec(const std::string& file, const nlohmann::json& root);

// A cluster file: {"name", "host": node spec, "hosts", "switch": {kind, hosts_per_leaf,
// oversubscription}, "sources"}.
Result<NodeSpec> load_cluster_file(const std::string& file, const nlohmann::json& root) {
  FieldReader r(root, file, kPrefix);
  std::string name = r.string("name");
  std::string host = r.string("host");
  auto hosts = static_cast<int>(r.integer("hosts"));
  SwitchSpec sw;
  sw.kind = r.string_or("switch.kind", "leaf");
  sw.hosts_per_leaf = static_cast<int>(r.integer_or("switch.hosts_per_leaf", 0));
  sw.oversubscription = r.number_or("switch.oversubscription", 1);
  r.only("", {"name", "description", "host", "hosts", "switch", "sources"});
  r.only("switch", {"kind", "hosts_per_leaf", "oversubscription"});
  auto sources = read_sources(r);
  if (!r.ok()) return r.status();
  auto node = load_node_spec(host);
  if (!node.ok()) return node.status();
  if (node->is_cluster()) return InvalidArgument(std::string(kPrefix) + ": " + file + ": field 'host': '" + host + "' is a cluster, not a node");
  auto cluster = make_cluster(std::move(*node), name, hosts, sw);
  if (cluster.ok()) cluster->sources.insert(sources.begin(), sources.end());
  return cluster;
}

}  // namespace

Result<NodeSpec> load_node_spec(const std::string& name_or_path) {
  if (!looks_like_path(name_or_path) && !catalog_has("nodes", name_or_path)) {
    if (catalog_has("clusters", name_or_path)) return load_node_spec(catalog_file("clusters", name_or_path));
    static const std::regex kHostsOf("^(0|[1-9][0-9]*)x(.+)$");  // a count as written: no leading zeros
    std::smatch m;
    if (std::regex_match(name_or_path, m, kHostsOf) && catalog_has("nodes", m[2].str())) {
      const std::string count = m[1].str();
      if (count.size() > 5) {  // past any int, and far past kMaxHosts
        return InvalidArgument(std::string(kPrefix) + ": cluster '" + name_or_path + "': " + count +
                               " hosts is out of range [1, " + std::to_string(kMaxHosts) + "]");
      }
      auto host = load_node_spec(m[2].str());
      if (!host.ok()) return host.status();
      return make_cluster(std::move(*host), name_or_path, std::stoi(count), SwitchSpec{});
    }
    std::string known;
    for (const auto& n : catalog_node_names()) known += (known.empty() ? "" : ", ") + n;
    if (known.empty()) {
      return NotFoundError(std::string(kPrefix) + ": no node spec '" + name_or_path + "': no specs in " +
                           telemetry::data_dir_hint(spec_dir() + "/nodes", "NPUKIT_SPEC_DIR"));
    }
    return NotFoundError(std::string(kPrefix) + ": no node spec '" + name_or_path + "' (known: " + known +
                         "; a cluster of H hosts is Hx<node>, e.g. 4x8x910B2)");
  }
  std::string file = catalog_file("nodes", name_or_path);
  auto root = parse_json_file(file, kPrefix);
  if (!root.ok()) return root.status();
  if (root->is_object() && (root->contains("host") || root->contains("hosts"))) return load_cluster_file(file, *root);
  return load_host_spec(file, *root);
}

namespace {

Result<NodeSpec> load_host_spec(const std::string& file, const nlohmann::json& root) {
  FieldReader r(root, file, kPrefix);
  NodeSpec n;
  n.name = r.string("name");
  n.device = r.string("device");
  n.cards = static_cast<int>(r.integer("cards"));
  r.check_range("cards", n.cards, 1, 64);
  read_topology(r, n);
  read_scale_out(r, n);
  n.sources = read_sources(r);
  if (!r.ok()) return r.status();
  auto device = load_device_spec(n.device);
  if (!device.ok()) return device.status();
  n.device_spec = std::move(*device);
  read_bus_ids(r, n);
  if (r.ok() && n.topology != "pcie" && n.hccs_link_bps <= 0) {
    r.fail("topology.hccs_link_GBps", "an HCCS topology needs a link bandwidth > 0");
  }
  if (!r.ok()) return r.status();
  n.host_spec = n.name;
  return n;
}

}  // namespace

std::vector<std::string> catalog_node_names() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(spec_dir() + "/nodes", ec)) {
    if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace npukit::emu
