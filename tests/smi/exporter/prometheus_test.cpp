// A real Prometheus server on loopback scrapes the real npu-exporter of a real node while a
// workload runs; its HTTP API must then show all 8 devices with changing utilization.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "tests/smi/exporter/exporter_util.hpp"
#include "telemetry/client.hpp"

namespace npukit::smi::exporter {
namespace {

using namespace testing;
using nlohmann::json;

const std::string kEmud = NPU_EMUD_PATH;
const std::string kExporter = std::string(NPUKIT_BUILD_DIR) + "/smi/npu-exporter";

int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  socklen_t len = sizeof(a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

// A child process with stdout/stderr in `log`; killed (SIGTERM) and reaped on destruction.
struct Child {
  pid_t pid = -1;
  Child(const std::vector<std::string>& argv, const std::string& log) {
    pid = fork();
    if (pid == 0) {
      FILE* f = std::freopen(log.c_str(), "w", stdout);
      if (f != nullptr) dup2(fileno(stdout), STDERR_FILENO);
      std::vector<char*> args;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      execvp(args[0], args.data());
      _exit(127);
    }
  }
  ~Child() {
    if (pid <= 0) return;
    kill(pid, SIGTERM);
    waitpid(pid, nullptr, 0);
  }
};

json query(int port, const std::string& promql) {
  httplib::Client cli("127.0.0.1", port);
  auto res = cli.Get("/api/v1/query", httplib::Params{{"query", promql}}, httplib::Headers{});
  if (!res || res->status != 200) return json();
  return json::parse(res->body, nullptr, false);
}

double scalar_result(const json& j) {
  if (!j.is_object() || j.value("status", "") != "success" || j["data"]["result"].empty()) return -1;
  return std::stod(j["data"]["result"][0]["value"][1].get<std::string>());
}

json busy_program() {
  json mm = {{"op", "kernel"}, {"stream", 0}, {"name", "aten::mm"},
             {"inputs", {{{"shape", {4096, 4096}}, {"dtype", "float16"}}, {{"shape", {4096, 4096}}, {"dtype", "float16"}}}}};
  json ranks = json::array();
  for (int d = 0; d < 8; ++d) {
    ranks.push_back({{"device", d}, {"streams", 1}, {"setup", {{{"op", "alloc"}, {"buf", "w"}, {"bytes", 1ll << 30}}}}, {"step", {mm, mm, {{"op", "host_delay"}, {"ns", 30'000'000}}}}});
  }
  return {{"name", "prom-load"}, {"repeat", 1000000}, {"process", {{"pid", 0}, {"name", "train"}}}, {"ranks", ranks}};
}

TEST(ExporterPrometheus, ARealServerScrapesAllDevicesWithChangingUtilization) {
  if (run_command("command -v prometheus").exit_code != 0) {
    std::string why = ensure_promtool();  // the same Debian package
    if (!why.empty() || run_command("command -v prometheus").exit_code != 0) GTEST_SKIP() << "no prometheus: " << why;
  }
  std::string node = "p" + std::to_string(getpid()) + "-prom";
  ASSERT_EQ(run_command(kEmud + " start --node-name " + node).exit_code, 0);
  std::string dir = "/tmp/npukit-prom-" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  int exporter_port = free_port(), prom_port = free_port();
  {
    Child exporter({kExporter, "--listen", "127.0.0.1:" + std::to_string(exporter_port), "--node", node}, dir + "/exporter.log");
    std::ofstream(dir + "/prometheus.yml") << "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                                           << "scrape_configs:\n  - job_name: npu\n    static_configs:\n"
                                           << "      - targets: ['127.0.0.1:" << exporter_port << "']\n";
    Child prom({"prometheus", "--config.file=" + dir + "/prometheus.yml", "--storage.tsdb.path=" + dir + "/data",
                "--web.listen-address=127.0.0.1:" + std::to_string(prom_port)}, dir + "/prometheus.log");
    auto up = [&] { return scalar_result(query(prom_port, "npu_exporter_node_up")) == 1; };
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!up() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(250));
    ASSERT_TRUE(up()) << "Prometheus never saw the exporter up; targets: "
                      << query(prom_port, "up").dump();
    auto client = telemetry::ShmClient::open({.node = node});
    ASSERT_TRUE(client.ok());
    json reply = *(*client)->control({{"op", "submit"}, {"program", busy_program()}});
    ASSERT_TRUE(reply.value("ok", false)) << reply.dump();
    const std::string changing = "count(changes(npu_chip_info_utilization{job=\"npu\"}[1m]) > 0)";
    deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (scalar_result(query(prom_port, changing)) < 8 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    EXPECT_EQ(scalar_result(query(prom_port, changing)), 8) << query(prom_port, "npu_chip_info_utilization").dump();
    EXPECT_EQ(scalar_result(query(prom_port, "count(npu_chip_info_health_status == 1)")), 8);
    EXPECT_GE(scalar_result(query(prom_port, "count(npu_chip_info_process_info)")), 8);
    (*client)->control({{"op", "cancel"}, {"job", reply.value("job", 0)}});
  }
  run_command(kEmud + " stop --node-name " + node);
  std::filesystem::remove_all(dir);
}

std::string read_source(const std::string& rel) {
  std::ifstream in(std::string(NPUKIT_SOURCE_DIR) + "/" + rel);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  std::size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "the shipped config no longer has '" << from << "'";
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

// The shipped fleet setup (deploy/prometheus/npu-fleet.yml with its recording rules and the
// alert rules) on a real Prometheus scraping the 4 exporters of a 4-host cluster, one per host as
// on real machines: a job across all hosts shows per host, per process and fleet-wide; a degraded
// RoCE port on one host is that host's slowest link, the fleet's slowest, and exactly one alert.
TEST(ExporterPrometheus, AFleetOfFourHostsShowsPerHostAndTheOneDegradedPortAlerts) {
  if (run_command("command -v prometheus").exit_code != 0) {
    std::string why = ensure_promtool();
    if (!why.empty() || run_command("command -v prometheus").exit_code != 0) GTEST_SKIP() << "no prometheus: " << why;
  }
  const std::string cluster = "p" + std::to_string(getpid()) + "-fleet";
  ASSERT_EQ(run_command(kEmud + " start --spec 4x8x910B2 --node-name " + cluster).exit_code, 0);
  std::string dir = "/tmp/npukit-fleet-" + std::to_string(getpid());
  std::filesystem::create_directories(dir + "/hosts");
  {
    std::vector<std::unique_ptr<Child>> exporters;
    json targets = json::array();
    for (int h = 0; h < 4; ++h) {
      std::string host = cluster + "-" + std::to_string(h);
      int port = free_port();
      exporters.push_back(std::make_unique<Child>(
          std::vector<std::string>{kExporter, "--listen", "127.0.0.1:" + std::to_string(port), "--node", host},
          dir + "/exporter-" + std::to_string(h) + ".log"));
      targets.push_back({{"targets", {"127.0.0.1:" + std::to_string(port)}}, {"labels", {{"host", host}, {"cluster", cluster}}}});
    }
    std::ofstream(dir + "/hosts/cluster.json") << targets.dump(1);
    // The shipped config, pointed at this test's hosts file and rules, evaluated every second.
    std::string config = read_source("deploy/prometheus/npu-fleet.yml");
    config = replaced(config, "/etc/prometheus/npu-hosts/*.json", dir + "/hosts/*.json");
    config = replaced(config, "- npu-alerts.yml", "- " + std::string(NPUKIT_SOURCE_DIR) + "/deploy/prometheus/npu-alerts.yml");
    config = replaced(config, "- npu-fleet-rules.yml", "- " + std::string(NPUKIT_SOURCE_DIR) + "/deploy/prometheus/npu-fleet-rules.yml");
    config = replaced(config, "scrape_interval: 15s", "scrape_interval: 1s");
    config = replaced(config, "evaluation_interval: 15s", "evaluation_interval: 1s");
    config = replaced(config, "refresh_interval: 30s", "refresh_interval: 1s");
    std::ofstream(dir + "/prometheus.yml") << config;
    int prom_port = free_port();
    Child prom({"prometheus", "--config.file=" + dir + "/prometheus.yml", "--storage.tsdb.path=" + dir + "/data",
                "--web.listen-address=127.0.0.1:" + std::to_string(prom_port)}, dir + "/prometheus.log");
    auto value = [&](const std::string& promql) { return scalar_result(query(prom_port, promql)); };
    auto wait_for = [&](const std::string& promql, double want, int seconds) {
      auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
      while (value(promql) != want && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
      }
      return value(promql);
    };
    ASSERT_EQ(wait_for("count(npu_exporter_node_up == 1)", 4, 30), 4) << query(prom_port, "up").dump();
    EXPECT_EQ(wait_for("count(host:npu_healthy:count == 8)", 4, 10), 4) << "each host's own 8 NPUs";
    // A job across every host: every host busy, one training process over 32 NPUs.
    Child job({std::string(NPU_RUN_PATH), "resnet50-train", "--node", cluster, "--hosts", "4", "--steps", "100000"},
              dir + "/job.log");
    EXPECT_EQ(wait_for("count(host:npu_utilization_percent:avg > 50)", 4, 40), 4)
        << query(prom_port, "host:npu_utilization_percent:avg").dump() ;
    EXPECT_GT(value("fleet:npu_utilization_percent:avg"), 50);
    EXPECT_EQ(value("count(process:npu_utilization_percent:avg > 50)"), 1) << query(prom_port, "process:npu_utilization_percent:avg").dump();
    EXPECT_EQ(value("count(npu_process_hbm_used_bytes > 0)"), 32);
    // Host 1's NPU 3's RoCE port, named on that host as its operator would.
    const std::string host1 = cluster + "-1";
    auto r = run_command(kEmud + " inject --node-name " + host1 + " --link 3-roce --fault link-degraded");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(wait_for("host:npu_link_rate_percent:min{host=\"" + host1 + "\"}", 25, 20), 25);
    EXPECT_EQ(value("count(host:npu_link_rate_percent:min == 100)"), 3) << "the other hosts' links are clean";
    json slowest = query(prom_port, "fleet:npu_link_rate_percent:slowest");
    ASSERT_EQ(slowest["data"]["result"].size(), 1u) << slowest.dump();
    EXPECT_EQ(slowest["data"]["result"][0]["metric"]["host"], host1) << slowest.dump();
    EXPECT_EQ(slowest["data"]["result"][0]["metric"]["pair"], "3-roce") << slowest.dump();
    EXPECT_EQ(slowest["data"]["result"][0]["metric"]["kind"], "roce") << slowest.dump();
    // The one alert for that port: NpuIncident holds for 30 s before it fires.
    const std::string firing = "count(ALERTS{alertstate=\"firing\"})";
    EXPECT_EQ(wait_for(firing, 1, 60), 1) << query(prom_port, "ALERTS").dump();
    json alerts = query(prom_port, "ALERTS{alertstate=\"firing\"}");
    ASSERT_EQ(alerts["data"]["result"].size(), 1u) << alerts.dump();
    const json& alert = alerts["data"]["result"][0]["metric"];
    EXPECT_EQ(alert["alertname"], "NpuIncident") << alert.dump();
    EXPECT_EQ(alert["host"], host1) << alert.dump();
    EXPECT_EQ(alert["kind"], "link_degraded") << alert.dump();
    EXPECT_EQ(alert["pair"], "3-roce") << alert.dump();
    EXPECT_EQ(alert["severity"], "warning") << alert.dump();
  }
  run_command(kEmud + " stop --node-name " + cluster);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace npukit::smi::exporter
