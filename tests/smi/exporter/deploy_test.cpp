// The shipped Grafana dashboard and alert rules name only metrics the exporter serves.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "telemetry/incidents.hpp"
#include "tests/smi/exporter/exporter_util.hpp"
#include "smi/exporter/server.hpp"

namespace npukit::smi::exporter {
namespace {

using namespace testing;

std::string read_file(const std::string& rel) {
  std::ifstream in(std::string(NPUKIT_SOURCE_DIR) + "/" + rel);
  EXPECT_TRUE(in.good()) << rel;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Every family the exporter can serve: a bus with every device and link field published, its
// chips' memory HBM ("hbm" layout) or DDR (a 310P's "classic").
std::set<std::string> served_families(const std::string& layout = "hbm") {
  auto bus = make_node("exp-deploy", layout);
  for (int d = 0; d < 2; ++d) {
    auto u = bus->writer().update_device(d);
    for (const tf::FieldDef* f : tf::fields_of(tf::EntityLevel::kDevice)) {
      if (f->type == tf::ValueType::kF64) u.set(f->id, 1.0);
      else u.set(f->id, uint64_t{1});
    }
  }
  {
    auto l = bus->writer().update_link(0);  // commits at the end of this scope
    for (const tf::FieldDef* f : tf::fields_of(tf::EntityLevel::kLink)) {
      if (f->type == tf::ValueType::kF64) l.set(f->id, 1.0);
      else l.set(f->id, uint64_t{1});
    }
  }
  Exporter e("exp-deploy", [bus]() -> Result<std::unique_ptr<tf::Client>> { return bus->client(); });
  std::set<std::string> names;
  std::istringstream in(e.scrape());
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("# TYPE ", 0) == 0) names.insert(line.substr(7, line.find(' ', 7) - 7));
  }
  return names;
}

std::set<std::string> metric_names_in(const std::string& text) {
  static const std::regex name(R"(\b(?:npu|machine)_[a-z0-9_]+)");
  std::set<std::string> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), name); it != std::sregex_iterator(); ++it) {
    std::size_t at = static_cast<std::size_t>(it->position());
    if (at >= 7 && text.compare(at - 7, 7, "labels.") == 0) continue;  // a label in a template, not a metric
    if (at >= 1 && text[at - 1] == ':') continue;  // inside a recording rule's name (level:metric:operation)
    out.insert(it->str());
  }
  return out;
}

TEST(ExporterDeploy, DashboardAndAlertsNameOnlyServedMetrics) {
  std::set<std::string> served = served_families();
  ASSERT_GT(served.size(), 80u);
  nlohmann::json dash = nlohmann::json::parse(read_file("deploy/grafana/npukit-dashboard.json"));
  std::string exprs;
  for (const auto& panel : dash.at("panels")) {
    for (const auto& target : panel.at("targets")) exprs += target.at("expr").get<std::string>() + "\n";
  }
  EXPECT_GE(dash.at("panels").size(), 10u);
  std::string rules = read_file("deploy/prometheus/npu-alerts.yml");
  std::string fleet = read_file("deploy/prometheus/npu-fleet-rules.yml");
  for (const auto& [what, text] : {std::pair{"dashboard", exprs}, {"alert rules", rules}, {"fleet rules", fleet}}) {
    std::set<std::string> used = metric_names_in(text);
    EXPECT_GE(used.size(), 2u) << what;
    for (const std::string& n : used) EXPECT_TRUE(served.count(n)) << what << " names '" << n << "', which the exporter does not serve";
  }
  // The dashboard's recorded series are the fleet rules' own.
  static const std::regex recorded(R"([a-z]+:npu_[a-z0-9_]+:[a-z]+)");
  for (auto it = std::sregex_iterator(exprs.begin(), exprs.end(), recorded); it != std::sregex_iterator(); ++it) {
    EXPECT_NE(fleet.find("record: " + it->str() + "\n"), std::string::npos) << "the dashboard reads " << it->str();
  }
  EXPECT_NE(dash.dump().find("label_values(npu_exporter_node_up, host)"), std::string::npos) << "the host variable";
}

// Each panel draws something on every chip: on a 310P node (DDR, no MindX hbm_* names) the
// memory, double-bit ECC and isolated-page panels queried only hbm_* series and stayed empty
// while npu-smi showed a double-bit error.
TEST(ExporterDeploy, EveryPanelHasASeriesOnHbmAndOnDdrChips) {
  nlohmann::json dash = nlohmann::json::parse(read_file("deploy/grafana/npukit-dashboard.json"));
  for (const std::string layout : {"hbm", "classic"}) {
    std::set<std::string> served = served_families(layout);
    for (const auto& panel : dash.at("panels")) {
      for (const auto& target : panel.at("targets")) {
        std::string expr = target.at("expr").get<std::string>();
        std::set<std::string> used = metric_names_in(expr);
        if (used.empty()) continue;  // recorded series only (the fleet rules are checked above)
        // Every operand of the expression: a name, or names joined by "or" (any one serves).
        static const std::regex operand(R"(\(?((?:npu|machine)_[a-z0-9_]+)\{[^}]*\}(?:\[[^\]]*\])?(?: or ((?:npu|machine)_[a-z0-9_]+)\{[^}]*\})?)");
        for (auto it = std::sregex_iterator(expr.begin(), expr.end(), operand); it != std::sregex_iterator(); ++it) {
          bool any = served.count((*it)[1].str()) || ((*it)[2].matched && served.count((*it)[2].str()));
          EXPECT_TRUE(any) << layout << ": panel '" << panel.value("title", "") << "' reads " << it->str()
                           << ", which a " << layout << " chip does not serve";
        }
      }
    }
  }
}

// The alert rules read the incident table: every kind names an alert the rules define.
TEST(ExporterDeploy, EveryIncidentKindHasItsAlertRule) {
  std::string rules = read_file("deploy/prometheus/npu-alerts.yml");
  for (const telemetry::IncidentKind& k : telemetry::incident_kinds()) {
    EXPECT_NE(rules.find("alert: " + k.alert + "\n"), std::string::npos) << k.kind << " names alert " << k.alert;
  }
  EXPECT_NE(rules.find("alert: NpuExporterDown\n"), std::string::npos);
}

// Every alert rule has a panel: each metric an alert's expression reads is drawn by some panel
// (`up` for the exporter targets included). The ECC panel draws the single-bit rate as its own
// query: joined to the double-bit counter with `or`, PromQL would drop it wherever a double-bit
// series with the same labels exists, which is every chip.
TEST(ExporterDeploy, EveryAlertRuleHasAPanelAndTheEccPanelShowsSingleBitRates) {
  nlohmann::json dash = nlohmann::json::parse(read_file("deploy/grafana/npukit-dashboard.json"));
  std::vector<std::string> exprs;
  for (const auto& panel : dash.at("panels")) {
    for (const auto& target : panel.at("targets")) exprs.push_back(target.at("expr").get<std::string>());
  }
  auto drawn = [&](const std::string& metric) {
    static const std::regex word_end("[a-z0-9_]");
    for (const std::string& e : exprs) {
      for (std::size_t at = e.find(metric); at != std::string::npos; at = e.find(metric, at + 1)) {
        bool starts = at == 0 || !std::regex_match(std::string(1, e[at - 1]), word_end);
        bool ends = at + metric.size() == e.size() || !std::regex_match(std::string(1, e[at + metric.size()]), word_end);
        if (starts && ends) return true;
      }
    }
    return false;
  };
  std::string rules = read_file("deploy/prometheus/npu-alerts.yml");
  static const std::regex rule(R"(- alert: (\w+)\s+expr: ([\s\S]*?)\n\s+(?:for|labels):)");  // one line or a block
  int alerts = 0;
  for (auto it = std::sregex_iterator(rules.begin(), rules.end(), rule); it != std::sregex_iterator(); ++it, ++alerts) {
    std::string name = (*it)[1], expr = (*it)[2];
    std::set<std::string> metrics = metric_names_in(expr);
    if (expr.find("up{") != std::string::npos) metrics.insert("up");
    EXPECT_FALSE(metrics.empty()) << name;
    for (const std::string& m : metrics) EXPECT_TRUE(drawn(m)) << "alert " << name << " reads " << m << ", which no panel draws";
  }
  EXPECT_GE(alerts, 3);
  bool single_bit_rate = false;
  for (const std::string& e : exprs) {
    if (e.rfind("rate(npu_ecc_single_bit_errors_total", 0) == 0) single_bit_rate = true;
    if (e.find("npu_ecc_single_bit_errors_total") != std::string::npos) {
      EXPECT_EQ(e.find(" or "), std::string::npos) << e;
    }
  }
  EXPECT_TRUE(single_bit_rate);
}

}  // namespace
}  // namespace npukit::smi::exporter
