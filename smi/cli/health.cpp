// health: per-device verdicts from the passive rules in probes/, with small exit codes.
#include <ostream>

#include "probes/health_rules.hpp"
#include "smi/cli/commands.hpp"
#include "smi/cli/diag.hpp"
#include "smi/common/text.hpp"

namespace npukit::smi {

namespace tf = telemetry;
namespace pr = probes;

namespace {

Value optional_number(const std::optional<double>& v) { return v ? Value::real(*v, 1) : Value::na(); }

Object check_object(const pr::Check& c) {
  Object o;
  o.add("", "rule", Value::str(c.rule)).add("", "verdict", Value::str(pr::verdict_name(c.verdict)));
  o.add("", "reason", Value::str(c.reason));
  o.add("", "measured", optional_number(c.measured)).add("", "threshold", optional_number(c.threshold));
  o.add("", "unit", c.unit.empty() ? Value::na() : Value::str(c.unit));
  return o;
}

}  // namespace

Document build_health_doc(const tf::Snapshot& s, const std::vector<int>& devices) {
  pr::NodeReport report = pr::evaluate_node(s, devices);
  Document doc;
  doc.add("", "node", Value::str(s.node().node_name)).add("", "node_spec", Value::str(s.node().node_spec));
  doc.add("", "verdict", Value::str(pr::verdict_name(report.verdict)));
  doc.add("", "exit_code", Value::integer(verdict_exit_code(report.verdict)));
  doc.add("", "stale", Value::pair(report.stale, report.stale ? "yes" : "no"));
  doc.add("", "stale_reason", report.stale ? Value::str(report.stale_reason) : Value::na());
  std::vector<Object> devs;
  for (const pr::DeviceReport& d : report.devices) {
    const tf::DeviceInfo& info = s.device_info(d.device);
    Object o;
    o.add("", "npu_id", Value::integer(info.npu_id)).add("", "chip_id", Value::integer(info.chip_id));
    o.add("", "logic_id", Value::integer(info.logic_id)).add("", "verdict", Value::str(pr::verdict_name(d.verdict)));
    std::vector<Object> checks;
    for (const pr::Check& c : d.checks) checks.push_back(check_object(c));
    o.add_list("checks", std::move(checks));
    devs.push_back(std::move(o));
  }
  doc.add_list("devices", std::move(devs));
  return doc;
}

std::string render_health_text(const Document& doc) {
  std::string out = "Node " + doc.value("node").text + " (" + doc.value("node_spec").text + "): " +
                    doc.value("verdict").text + "\n";
  for (const Object& d : doc.list("devices")) {
    out += "NPU " + d.value("npu_id").text + " Chip " + d.value("chip_id").text + ": " + d.value("verdict").text + "\n";
    for (const Object& c : d.list("checks")) {
      if (c.value("verdict").text == "PASS") continue;
      out += strprintf("  %-8s%-20s%s\n", c.value("verdict").text.c_str(), c.value("rule").text.c_str(),
                       c.value("reason").text.c_str());
    }
  }
  return out;
}

int cmd_health(Context& ctx, const Session& session, std::optional<int> npu, bool json) {
  std::vector<int> devices;
  if (npu) devices = devices_of_card(session.snapshot, *npu);
  Document doc = build_health_doc(session.snapshot, devices);
  *ctx.out << (json ? render_json(doc).dump(2) + "\n" : render_health_text(doc));
  return static_cast<int>(doc.value("exit_code").data.get<int64_t>());
}

}  // namespace npukit::smi
