// The fault matrix: every injectable fault kind, on a device and on a link, on 8x910B2, 8x910 and
// 4x310P3 nodes. For each: the incidents npu-smi health --json lists (kind, entity, severity,
// where: one per root cause), the exporter's npu_incident series (the same ones) and every NPU's
// state agreeing between health and the exporter, exactly one firing alert per incident under
// promtool test rules over those very series (Debian's prometheus), npu-top's alarm, and all
// clear after the recovery.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "tests/daemon_util.hpp"
#include "tests/smi/exporter/exporter_process.hpp"
#include "tests/smi/exporter/exporter_util.hpp"

namespace npukit::smi::exporter {
namespace {

using nlohmann::json;
using npukit::testing::eventually;
using npukit::testing::ScopedNode;
using namespace testing;

const std::string kSmi = std::string(NPUKIT_BUILD_DIR) + "/smi/npu-smi";
const std::string kTop = std::string(NPUKIT_BUILD_DIR) + "/smi/npu-top";

struct Incident {
  std::string kind, entity, severity, target;  // as health --json and npu_incident carry them
  bool operator<(const Incident& o) const { return std::tie(kind, target) < std::tie(o.kind, o.target); }
  bool operator==(const Incident& o) const {
    return kind == o.kind && entity == o.entity && severity == o.severity && target == o.target;
  }
};

struct Row {
  std::string target;     // npu-emud's: "--device 3", "-i 1 -c 1", "--link 2-5"
  std::string fault;
  std::vector<Incident> incidents;
  int touched;            // NPUs not PASS while it lasts
  std::string recover;    // npu-emud command and target
  bool load = false;      // over-temperature heats only under load
};

std::ostream& operator<<(std::ostream& os, const Incident& i) {
  return os << i.kind << "/" << i.entity << "/" << i.severity << "/" << i.target;
}

// The chip faults every spec shares, on one chip (its npu-emud target and npu-smi label).
std::vector<Row> chip_rows(const std::string& target, const std::string& label) {
  return {
      {target, "over-temperature", {{"temperature_high", "chip", "Warning", label}}, 1, "clear " + target, true},
      {target, "hbm-double-bit", {{"ecc_double_bit", "memory", "Alarm", label}}, 1, "clear " + target},
      {target, "ecc-storm", {{"ecc_single_bit_storm", "memory", "Warning", label}}, 1, "clear " + target},
      {target, "aicore-hang", {{"aicore_timeout", "chip", "Critical", label}}, 1, "reset " + target},
      {target, "device-lost", {{"device_lost", "chip", "Critical", label}}, 1, "reset " + target},
      {target, "aicore-degraded", {{"aicore_degraded", "chip", "Warning", label}}, 1, "clear " + target},
  };
}

std::vector<Row> rows_for(const std::string& spec) {
  if (spec == "8x910B2") {
    auto rows = chip_rows("--device 3", "NPU 3");
    rows.push_back({"--device 3", "link-down", {{"links_down", "chip", "Alarm", "NPU 3"}}, 8, "clear --device 3"});
    rows.push_back({"--device 3", "link-degraded", {{"links_degraded", "chip", "Warning", "NPU 3"}}, 8, "clear --device 3"});
    rows.push_back({"--link 2-5", "link-down", {{"link_down", "link", "Alarm", "HCCS 2-5"}}, 2, "clear --link 2-5"});
    rows.push_back({"--link 2-5", "link-degraded", {{"link_degraded", "link", "Warning", "HCCS 2-5"}}, 2, "clear --link 5-2"});
    rows.push_back({"--link 2-5", "link-flapping", {{"link_flapping", "link", "Warning", "HCCS 2-5"}}, 2, "clear --device 5"});
    // A slow host is the node's incident: its own npu_incident and NpuIncident alert (the exporter
    // dropped every node incident, so a slow host raised no alert).
    rows.push_back({"--host 0", "host-slow", {{"host_slow", "node", "Warning", "node"}}, 8, "clear --host 0"});
    return rows;
  }
  if (spec == "8x910") {  // two 4-NPU HCCS meshes joined through PCIe
    auto rows = chip_rows("--device 6", "NPU 6");
    rows.push_back({"--device 1", "link-down", {{"links_down", "chip", "Alarm", "NPU 1"}}, 4, "clear --device 1"});
    rows.push_back({"--device 1", "link-degraded", {{"links_degraded", "chip", "Warning", "NPU 1"}}, 4, "clear --device 1"});
    rows.push_back({"--link 4-5", "link-down", {{"link_down", "link", "Alarm", "HCCS 4-5"}}, 2, "clear --link 4-5"});
    rows.push_back({"--link 4-5", "link-degraded", {{"link_degraded", "link", "Warning", "HCCS 4-5"}}, 2, "clear --link 4-5"});
    rows.push_back({"--link 4-5", "link-flapping", {{"link_flapping", "link", "Warning", "HCCS 4-5"}}, 2, "clear --link 4-5"});
    return rows;
  }
  // 4x310P3: two chips per card, npu-smi's ids everywhere; each chip's only link is PCIe to the
  // host, so a device's link fault is that one link's incident.
  auto rows = chip_rows("-i 1 -c 1", "NPU 1 Chip 1");
  rows.push_back({"-i 1 -c 1", "link-down", {{"link_down", "link", "Alarm", "PCIe 3-host"}}, 1, "clear -i 1 -c 1"});
  rows.push_back({"-i 1 -c 1", "link-degraded", {{"link_degraded", "link", "Warning", "PCIe 3-host"}}, 1, "clear -i 1 -c 1"});
  rows.push_back({"--link 3-host", "link-down", {{"link_down", "link", "Alarm", "PCIe 3-host"}}, 1, "clear --link 3-host"});
  rows.push_back({"--link 3-host", "link-flapping", {{"link_flapping", "link", "Warning", "PCIe 3-host"}}, 1, "clear --link 3-host"});
  return rows;
}

json health_json(const ScopedNode& node) {
  Cmd r = run_command(kSmi + " health --json --node-name " + node.name());
  json j = json::parse(r.output, nullptr, false);
  return j.is_discarded() ? json::object() : j;
}

std::vector<Incident> incidents_of(const json& health) {
  std::vector<Incident> out;
  for (const json& i : health.value("incidents", json::array())) {
    out.push_back({i.value("kind", ""), i.value("entity", ""), i.value("severity", ""), i.value("name", "")});
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The labels of one sample line, as promtool's series syntax wants them (instance and job added).
std::string series_of(const std::string& line) {
  std::string labels = line.substr(line.find('{') + 1, line.rfind('}') - line.find('{') - 1);
  return line.substr(0, line.find('{')) + "{instance=\"n1:9101\",job=\"npu\"," + labels + "}";
}

std::map<std::string, std::string> labels_of(const std::string& line) {
  std::map<std::string, std::string> out;
  static const std::regex pair(R"re((\w+)="((?:[^"\\]|\\.)*)")re");
  std::string inside = line.substr(line.find('{'), line.rfind('}') - line.find('{'));
  for (auto it = std::sregex_iterator(inside.begin(), inside.end(), pair); it != std::sregex_iterator(); ++it) {
    out[(*it)[1]] = (*it)[2];
  }
  return out;
}

std::string yaml_quoted(const std::string& s) { return json(s).dump(); }

// A promtool unit test feeding the scraped npu_incident series for two minutes: NpuIncident must
// fire once per series, with the rule's labels and annotations, and no node alert.
std::string promtool_test(const std::vector<std::string>& incident_lines) {
  std::string rules = std::string(NPUKIT_SOURCE_DIR) + "/deploy/prometheus/npu-alerts.yml";
  std::string y = "rule_files:\n  - " + rules + "\nevaluation_interval: 15s\ntests:\n  - interval: 15s\n    input_series:\n";
  y += "      - series: 'npu_exporter_node_up{instance=\"n1:9101\",job=\"npu\",node=\"n1\"}'\n        values: '1x20'\n";
  for (const std::string& line : incident_lines) {
    y += "      - series: " + yaml_quoted(series_of(line)) + "\n        values: '1x20'\n";
  }
  y += "    alert_rule_test:\n      - eval_time: 2m\n        alertname: NpuNodeDown\n        exp_alerts: []\n";
  y += "      - eval_time: 2m\n        alertname: NpuIncident\n        exp_alerts:\n";
  for (const std::string& line : incident_lines) {
    auto l = labels_of(line);
    y += "          - exp_labels:\n";
    l["instance"] = "n1:9101", l["job"] = "npu";
    for (const auto& [k, v] : l) y += "              " + k + ": " + yaml_quoted(v) + "\n";
    y += "              severity: " + std::string(l["level"] == "Warning" ? "warning" : "critical") + "\n";
    y += "            exp_annotations:\n";
    y += "              summary: " + yaml_quoted(l["target"] + " on n1:9101: " + l["summary"] + " (" + l["code"] + ")") + "\n";
    std::string where = l.count("npu_id") ? " -i " + l["npu_id"] : "";
    y += "              description: " + yaml_quoted("Incident " + l["kind"] + " (" + l["level"] + ", " + l["entity"] +
                                                   "); recommended handling: " + l["handling"] +
                                                   ". Details on the node: npu-smi health" + where + " -v.") + "\n";
  }
  return y;
}

// A long matmul loop on `device`; returns the job id.
int start_load(const ScopedNode& node, int device) {
  json mm = {{"op", "kernel"}, {"stream", 0}, {"name", "aten::mm"},
             {"inputs", {{{"shape", {8192, 8192}}, {"dtype", "float16"}}, {{"shape", {8192, 8192}}, {"dtype", "float16"}}}}};
  json program = {{"name", "matrix-burn"}, {"repeat", 1000000}, {"process", {{"pid", 0}, {"name", "burn"}}},
                  {"ranks", json::array({json{{"device", device}, {"streams", 1}, {"step", {mm, mm, mm, mm}}}})}};
  json reply = node.control({{"op", "submit"}, {"program", program}});
  EXPECT_TRUE(reply.value("ok", false)) << reply.dump();
  return reply.value("job", 0);
}

// Every NPU's state agrees between npu-smi health and the exporter's npu_health; returns how
// many are not PASS.
int check_states_agree(const json& health, const std::string& metrics) {
  static const std::map<std::string, std::set<int>> kVerdictHealth = {{"PASS", {0}}, {"WARN", {1}}, {"FAIL", {2, 3, 4}}};
  int not_pass = 0;
  for (const json& d : health.value("devices", json::array())) {
    std::string verdict = d.value("verdict", "");
    std::string id = "npu_id=\"" + std::to_string(d.value("npu_id", -1)) + "\",chip_id=\"" + std::to_string(d.value("chip_id", -1)) + "\"";
    double state = value_of(metrics, "npu_health", id);
    EXPECT_TRUE(kVerdictHealth.count(verdict) && kVerdictHealth.at(verdict).count(static_cast<int>(state)))
        << id << ": health says " << verdict << ", the exporter's npu_health is " << state;
    not_pass += verdict != "PASS";
  }
  return not_pass;
}

int device_of(const std::string& target, int chips_per_card) {
  std::smatch m;
  if (std::regex_search(target, m, std::regex(R"(--device (\d+))"))) return std::stoi(m[1]);
  if (std::regex_search(target, m, std::regex(R"(-i (\d+) -c (\d+))"))) return std::stoi(m[1]) * chips_per_card + std::stoi(m[2]);
  return 0;
}

void run_matrix(const std::string& spec) {
  std::string why = ensure_promtool();
  if (!why.empty()) GTEST_SKIP() << why;
  ScopedNode node("matrix-" + spec, "--spec " + spec + " --speed 50");
  ExporterProcess exporter(node.name());
  std::string emud = npukit::testing::emud() + " ";
  int chips = spec == "4x310P3" ? 2 : 1;
  for (const Row& row : rows_for(spec)) {
    SCOPED_TRACE(spec + ": " + row.fault + " " + row.target);
    int job = row.load ? start_load(node, device_of(row.target, chips)) : 0;
    Cmd inject = run_command(emud + "inject --node-name " + node.name() + " " + row.target + " --fault " + row.fault);
    ASSERT_EQ(inject.exit_code, 0) << inject.output;
    std::vector<Incident> want = row.incidents;
    std::sort(want.begin(), want.end());
    json health;
    EXPECT_TRUE(eventually([&] { return incidents_of(health = health_json(node)) == want; }, std::chrono::seconds(30)))
        << health.dump(1);
    std::string metrics = exporter.scrape();
    std::vector<std::string> lines = samples(metrics, "npu_incident");
    ASSERT_EQ(lines.size(), want.size()) << metrics;
    for (std::size_t i = 0; i < lines.size(); ++i) {
      auto l = labels_of(lines[i]);
      EXPECT_TRUE(std::any_of(want.begin(), want.end(), [&](const Incident& w) {
        return w.kind == l["kind"] && w.target == l["target"] && w.severity == l["level"] && w.entity == l["entity"];
      })) << lines[i];
    }
    EXPECT_EQ(check_states_agree(health_json(node), metrics), row.touched);
    std::string test = write_temp("matrix-" + spec + ".test.yml", promtool_test(lines));
    Cmd promtool = run_command("promtool test rules " + test);
    EXPECT_EQ(promtool.exit_code, 0) << promtool.output << "\n" << promtool_test(lines);
    Cmd top = run_command(kTop + " --node-name " + node.name() + " --frames 1 --ascii --size 220x50");
    for (const Incident& w : want) {
      EXPECT_NE(top.output.find("! " + w.target + " " + w.severity + " 0x"), std::string::npos) << w << "\n" << top.output;
    }
    if (job != 0) node.control({{"op", "cancel"}, {"job", job}});
    Cmd recover = run_command(emud + row.recover + " --node-name " + node.name());
    ASSERT_EQ(recover.exit_code, 0) << recover.output;
    Cmd clean;
    EXPECT_TRUE(eventually([&] { return (clean = run_command(kSmi + " health --node-name " + node.name())).exit_code == 0; },
                           std::chrono::seconds(30))) << clean.output;
    EXPECT_NE(clean.output.find("Incidents: none"), std::string::npos) << clean.output;
    EXPECT_TRUE(samples(exporter.scrape(), "npu_incident").empty());
    Cmd quiet_top = run_command(kTop + " --node-name " + node.name() + " --frames 1 --ascii --size 220x50");
    EXPECT_FALSE(std::regex_search(quiet_top.output, std::regex(R"(! [^!]*(Warning|Alarm|Critical) 0x[0-9A-F]{8})"))) << quiet_top.output;
  }
}

TEST(FaultMatrix, EveryFaultOn8x910B2IsOneIncidentOneAlertAndClears) { run_matrix("8x910B2"); }
TEST(FaultMatrix, EveryFaultOn8x910IsOneIncidentOneAlertAndClears) { run_matrix("8x910"); }
TEST(FaultMatrix, EveryFaultOn4x310P3IsOneIncidentOneAlertAndClears) { run_matrix("4x310P3"); }

}  // namespace
}  // namespace npukit::smi::exporter
