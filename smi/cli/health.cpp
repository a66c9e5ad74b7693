// health: per-device verdicts from the passive rules in probes/, with small exit codes.
#include <algorithm>
#include <ostream>
#include <set>

#include "probes/health/health_rules.hpp"
#include "telemetry/incidents.hpp"
#include "smi/cli/commands.hpp"
#include "smi/cli/diag.hpp"
#include "smi/common/text.hpp"
#include "telemetry/json_reader.hpp"

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
  o.add("", "incident", c.incident.empty() ? Value::na() : Value::str(c.incident));
  o.add("", "code", c.code == 0 ? Value::na() : Value::str(error_code_text(c.code)));
  return o;
}

// One incident: its kind and code, severity, entity, message and handling.
Object incident_object(const tf::Snapshot& s, const pr::Incident& inc) {
  Object o;
  o.add("", "kind", Value::str(inc.kind->kind)).add("", "code", Value::str(error_code_text(inc.kind->code)));
  o.add("", "severity", Value::str(tf::health_name(inc.kind->severity)));
  o.add("", "entity", Value::str(tf::entity_name(inc.kind->entity))).add("", "name", Value::str(inc.entity));
  if (inc.device >= 0) {
    const tf::DeviceInfo& info = s.device_info(inc.device);
    o.add("", "npu_id", Value::integer(info.npu_id)).add("", "chip_id", Value::integer(info.chip_id));
  } else {
    o.add("", "npu_id", Value::na()).add("", "chip_id", Value::na());
  }
  o.add("", "link", inc.device_a >= 0 ? Value::str(tf::link_ends_name(inc.device_a, inc.device_b, inc.link_kind)) : Value::na());
  std::vector<std::string> touched;
  for (int d : inc.peers) {
    if (d != inc.device) touched.push_back(tf::chip_label(s, d));
  }
  nlohmann::json list = touched;
  std::string joined;
  for (const std::string& t : touched) joined += (joined.empty() ? "" : ", ") + t;
  o.add("", "touches", Value::pair(list, joined.empty() ? "-" : joined));
  o.add("", "message", Value::str(inc.message)).add("", "handling", Value::str(tf::handling_name(inc.kind->handling)));
  return o;
}

}  // namespace

Document build_health_doc(const tf::Snapshot& s, const std::vector<int>& devices) {
  pr::NodeReport report = pr::evaluate_node(s, devices);
  Document doc;
  doc.add("", "node", Value::str(s.node().node_name)).add("", "node_spec", Value::str(s.node().node_spec));
  // -i N judges that card only: the headline says so, and counts the node's other incidents.
  const bool subset = !devices.empty() && static_cast<int>(devices.size()) < s.device_count();
  std::set<int> cards;
  for (int d : devices) cards.insert(s.device_info(d).npu_id);
  std::string scope;
  for (int card : cards) scope += (scope.empty() ? "NPU " : ", NPU ") + std::to_string(card);
  doc.add("", "scope", subset ? Value::str(scope) : Value::na());
  // The whole node's report holds every incident; this one those on or touching its cards.
  std::size_t elsewhere = subset ? pr::node_incidents(s).size() - report.incidents.size() : 0;
  doc.add("", "incidents_elsewhere", Value::integer(static_cast<int64_t>(elsewhere)));
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
  std::vector<Object> incidents;
  for (const pr::Incident& inc : report.incidents) incidents.push_back(incident_object(s, inc));
  doc.add_list("incidents", std::move(incidents));
  return doc;
}

std::string render_health_text(const Document& doc) {
  const std::string& scope = doc.value("scope").text;
  std::string node = doc.value("node").text + " (" + doc.value("node_spec").text + ")";
  std::string out = (scope == "NA" ? "Node " + node : scope + " of node " + node) + ": " + doc.value("verdict").text + "\n";
  const std::vector<Object>& incidents = doc.list("incidents");
  out += incidents.empty() ? "Incidents: none\n" : "Incidents (one per root cause):\n";
  for (const Object& i : incidents) {
    out += strprintf("  %-9s%-12s%-14s%s [%s]\n", i.value("severity").text.c_str(), i.value("code").text.c_str(),
                     i.value("name").text.c_str(), i.value("message").text.c_str(), i.value("handling").text.c_str());
  }
  const std::string& elsewhere = doc.value("incidents_elsewhere").text;
  if (elsewhere != "0") out += "Elsewhere on the node: " + elsewhere + " incident(s) (npu-smi health lists them)\n";
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

namespace {

// The node's active faults (npu-emud status over the control channel) on `devices` (all when
// empty), or why they cannot be read.
Result<std::vector<Object>> active_faults(const Session& session, const std::vector<int>& devices) {
  auto reply = ask_node(session, {{"op", "status"}});
  if (!reply.ok()) return reply.status();
  if (!reply->value("ok", false) || !reply->contains("faults")) {
    return Status(Code::kUnavailable, reply->value("error", std::string("the node does not list its faults")));
  }
  std::vector<Object> out;
  for (const nlohmann::json& f : (*reply)["faults"]) {
    int d = f.value("device", -1);
    if (d < 0 || d >= session.snapshot.device_count()) continue;
    auto ends = tf::parse_link_ends(f.value("link", std::string()));
    bool on = std::find(devices.begin(), devices.end(), d) != devices.end() ||
              (ends.ok() && std::find(devices.begin(), devices.end(), ends->second) != devices.end());
    if (!devices.empty() && !on) continue;
    const tf::DeviceInfo& info = session.snapshot.device_info(d);
    Object o;
    o.add("", "npu_id", Value::integer(info.npu_id)).add("", "chip_id", Value::integer(info.chip_id));
    o.add("", "link", ends.ok() ? Value::str(tf::link_ends_name(ends->first, ends->second)) : Value::na());
    o.add("", "fault", Value::str(f.value("fault", std::string())));
    o.add("", "source", Value::str(f.value("source", std::string())));
    o.add("", "since_s", Value::real(f.value("since_ns", 0.0) / 1e9, 3));
    out.push_back(std::move(o));
  }
  return out;
}

std::string render_faults_text(const Result<std::vector<Object>>& faults) {
  if (!faults.ok()) return "Active faults: unavailable (" + faults.status().message() + ")\n";
  if (faults->empty()) return "Active faults: none\n";
  std::string out = "Active faults:\n";
  for (const Object& f : *faults) {
    std::string where = f.value("link").text != "NA" ? "link " + f.value("link").text
                                                     : "NPU " + f.value("npu_id").text + " Chip " + f.value("chip_id").text;
    out += "  " + where + ": " + f.value("fault").text +
           " since " + f.value("since_s").text + " s, from " + f.value("source").text + "\n";
  }
  return out;
}

}  // namespace

int cmd_health(Context& ctx, const Session& session, std::optional<int> npu, bool json, bool verbose) {
  std::vector<int> devices;
  if (npu) devices = devices_of_card(session.snapshot, *npu);
  Document doc = build_health_doc(session.snapshot, devices);
  Result<std::vector<Object>> faults = Status::Ok();
  if (verbose) {
    faults = active_faults(session, devices);
    if (faults.ok()) doc.add_list("active_faults", std::vector<Object>(*faults));
    else doc.add("", "active_faults", Value::na());
  }
  *ctx.out << (json ? json_text(render_json(doc), 2) + "\n" : render_health_text(doc) + (verbose ? render_faults_text(faults) : ""));
  return static_cast<int>(doc.value("exit_code").data.get<int64_t>());
}

}  // namespace npukit::smi
