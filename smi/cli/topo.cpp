// topo / info -t topo: the device link matrix with CPU affinity, in npu-smi's layout.
#include <algorithm>
#include <fstream>
#include <ostream>

#include "smi/cli/commands.hpp"
#include "smi/common/text.hpp"
#include "telemetry/json_reader.hpp"

namespace npukit::smi {

namespace tf = telemetry;

namespace {

constexpr const char* kLegend =
    "Legend:\n\n"
    "  X    = Self\n"
    "  SYS  = Path traversing PCIe and NUMA nodes. Nodes are connected through SMP, such as QPI, UPI.\n"
    "  PHB  = Path traversing PCIe and the PCIe host bridge of a CPU.\n"
    "  PIX  = Path traversing a single PCIe switch\n"
    "  PXB  = Path traversing multiple PCIe switches\n"
    "  HCCS = Connection traversing HCCS.\n"
    "  NA   = Unknown relationship.\n";

bool hccs_linked(const tf::Snapshot& s, int a, int b) {
  for (int l = 0; l < s.link_count(); ++l) {
    const tf::LinkInfo& info = s.link_info(l);
    bool pair = (info.device_a == a && info.device_b == b) || (info.device_a == b && info.device_b == a);
    if (pair && info.kind == "hccs") return true;
  }
  return false;
}

// Device -> host NUMA node: cards spread evenly over the nodes, in order (a real node reads
// /sys/bus/pci/devices/<bdf>/numa_node; emulated devices have no sysfs entry).
int numa_of(const tf::Snapshot& s, int d, std::size_t numa_nodes) {
  std::size_t card = 0, cards = 0;  // the device's card position among the node's cards
  for (int i = 0, last = -1; i < s.device_count(); ++i) {
    if (s.device_info(i).npu_id == last) continue;
    last = s.device_info(i).npu_id;
    if (i <= d) card = cards;
    ++cards;
  }
  if (numa_nodes == 0 || cards == 0) return 0;
  return static_cast<int>(std::min(numa_nodes - 1, card * numa_nodes / cards));
}

// A device's port into a switched HCCS fabric (topology hccs_switch: one link each way between
// the device and the switch, published with the other end -1).
bool switch_port(const tf::Snapshot& s, int d) {
  for (int l = 0; l < s.link_count(); ++l) {
    const tf::LinkInfo& info = s.link_info(l);
    bool port = (info.device_a == d && info.device_b < 0) || (info.device_b == d && info.device_a < 0);
    if (info.kind == "hccs" && port) return true;
  }
  return false;
}

std::string relation(const tf::Snapshot& s, int a, int b, std::size_t numa_nodes) {
  if (a == b) return "X";
  if (hccs_linked(s, a, b)) return "HCCS";
  if (s.node().topology == "hccs_switch" && switch_port(s, a) && switch_port(s, b)) return "HCCS_SW";
  if (s.device_info(a).npu_id == s.device_info(b).npu_id) return "PIX";  // chips on one card's switch
  bool meshes = s.node().topology.rfind("hccs", 0) == 0;  // between HCCS meshes: through the SMP link
  if (meshes || numa_of(s, a, numa_nodes) != numa_of(s, b, numa_nodes)) return "SYS";
  return "PHB";
}

std::vector<std::string> host_numa_cpulists() {
  std::vector<std::string> lists;
  for (int n = 0;; ++n) {
    std::ifstream in("/sys/devices/system/node/node" + std::to_string(n) + "/cpulist");
    std::string line;
    if (!in || !std::getline(in, line)) break;
    lists.push_back(line);
  }
  return lists;
}

std::string row_name(const tf::Snapshot& s, int d) { return "NPU" + std::to_string(s.device_info(d).logic_id); }

}  // namespace

Document build_topo_doc(const tf::Snapshot& s, const std::vector<std::string>& numa_cpulists) {
  Document doc;
  std::vector<Object> rows;
  for (int a = 0; a < s.device_count(); ++a) {
    Object links;
    for (int b = 0; b < s.device_count(); ++b) links.add(row_name(s, b), row_name(s, b), Value::str(relation(s, a, b, numa_cpulists.size())));
    Object row;
    row.add("", "name", Value::str(row_name(s, a))).add("", "npu_id", Value::integer(s.device_info(a).npu_id));
    row.add("", "chip_id", Value::integer(s.device_info(a).chip_id));
    row.add_object("links", std::move(links));
    int numa = numa_of(s, a, numa_cpulists.size());
    row.add("", "cpu_affinity", numa_cpulists.empty() ? Value::na() : Value::str(numa_cpulists[static_cast<std::size_t>(numa)]));
    row.add("", "numa_node", numa_cpulists.empty() ? Value::na() : Value::integer(numa));
    rows.push_back(std::move(row));
  }
  doc.add_list("devices", std::move(rows));
  return doc;
}

std::string render_topo_text(const Document& doc) {
  const auto& rows = doc.list("devices");
  std::string out = "\t   ";
  for (const Object& r : rows) out += strprintf("%-11s", r.value("name").text.c_str());
  out += "CPU Affinity\n";
  for (const Object& r : rows) {
    out += strprintf("%-11s", r.value("name").text.c_str());
    for (const auto& cell : r.find("links")->children.front().entries) out += strprintf("%-11s", cell.value.text.c_str());
    out += r.value("cpu_affinity").text + "\n";
  }
  out += "\n";
  out += kLegend;
  if (out.find("HCCS_SW ") != std::string::npos) {  // explained only where a switched pair shows
    out.insert(out.find("  NA   = "), "  HCCS_SW = Connection traversing an HCCS switch.\n");
  }
  return rtrim_lines(out);
}

int cmd_topo(Context& ctx, const Session& session, bool json) {
  std::vector<std::string> numa = ctx.numa_cpulists.empty() ? host_numa_cpulists() : ctx.numa_cpulists;
  Document doc = build_topo_doc(session.snapshot, numa);
  *ctx.out << (json ? json_text(render_json(doc), 2) + "\n" : render_topo_text(doc));
  return kExitOk;
}

}  // namespace npukit::smi
