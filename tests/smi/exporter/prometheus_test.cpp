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

}  // namespace
}  // namespace npukit::smi::exporter
