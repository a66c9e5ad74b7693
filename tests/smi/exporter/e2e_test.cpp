// npu-exporter end to end: the real binary against a real npu-emud node, scraped over HTTP with
// cpp-httplib's client.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <thread>

#include "tests/smi/exporter/exporter_process.hpp"
#include "tests/smi/exporter/exporter_util.hpp"
#include "telemetry/naming.hpp"

namespace npukit::smi::exporter {
namespace {

using namespace testing;

const std::string kEmud = NPU_EMUD_PATH;

struct Node {
  std::string name;
  explicit Node(const std::string& tag, const std::string& spec = "8x910B2") : name("x" + std::to_string(getpid()) + "-" + tag) {
    Cmd r = run_command(kEmud + " start --node-name " + name + " --spec " + spec);
    EXPECT_EQ(r.exit_code, 0) << r.output;
  }
  ~Node() { run_command(kEmud + " stop --node-name " + name); }
  Cmd emud(const std::string& args) const { return run_command(kEmud + " " + args + " --node-name " + name); }
};

template <typename Pred>
bool eventually(Pred pred, std::chrono::milliseconds limit = std::chrono::seconds(10)) {
  auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return pred();
}

// A loopback TCP connection to the exporter that sends `prefix` and then nothing more.
struct RawConnection {
  int fd = -1;
  RawConnection(int port, const std::string& prefix) {
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bool ok = fd >= 0 && ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0 &&
              ::send(fd, prefix.data(), prefix.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(prefix.size());
    EXPECT_TRUE(ok) << "connect/send: " << std::strerror(errno);
  }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;
  ~RawConnection() {
    if (fd >= 0) ::close(fd);
  }
  // True while the server has neither answered nor closed the connection.
  bool held_open() const {
    char c;
    ssize_t n = ::recv(fd, &c, 1, MSG_DONTWAIT | MSG_PEEK);
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
  }
};

TEST(ExporterE2E, ServesAllDevicesOfARealNodeAndFollowsAFault) {
  Node node("faults");
  ExporterProcess exp(node.name);
  std::string text = exp.scrape();
  EXPECT_EQ(value_of(text, "npu_exporter_node_up"), 1);
  EXPECT_EQ(samples(text, "npu_chip_info_health_status").size(), 8u) << text;
  EXPECT_EQ(value_of(text, "machine_npu_nums"), 8);
  for (int d = 0; d < 8; ++d) {
    EXPECT_EQ(value_of(text, "npu_chip_info_health_status", "id=\"" + std::to_string(d) + "\""), 1) << d;
  }
  ASSERT_EQ(node.emud("inject --device 3 --fault hbm-double-bit").exit_code, 0);
  EXPECT_TRUE(eventually([&] { return value_of(exp.scrape(), "npu_chip_info_health_status", "id=\"3\"") == 0; }));
  EXPECT_GE(value_of(exp.scrape(), "npu_chip_info_hbm_ecc_double_bit_error_cnt", "id=\"3\""), 1);
  ASSERT_EQ(node.emud("clear --device 3").exit_code, 0);
  EXPECT_TRUE(eventually([&] { return value_of(exp.scrape(), "npu_chip_info_health_status", "id=\"3\"") == 1; }));
  EXPECT_EQ(exp.stop(), 0);
}

TEST(ExporterE2E, AStoppedNodeReadsUpZeroAndARestartedOneComesBack) {
  Node node("restart");
  ExporterProcess exp(node.name);
  EXPECT_EQ(value_of(exp.scrape(), "npu_exporter_node_up"), 1);
  ASSERT_EQ(node.emud("stop").exit_code, 0);
  std::string down = exp.scrape();
  EXPECT_EQ(value_of(down, "npu_exporter_node_up"), 0);
  EXPECT_TRUE(samples(down, "npu_chip_info_temperature").empty());
  ASSERT_EQ(node.emud("start").exit_code, 0);
  EXPECT_TRUE(eventually([&] { return value_of(exp.scrape(), "npu_exporter_node_up") == 1; }));
  EXPECT_EQ(samples(exp.scrape(), "npu_chip_info_temperature").size(), 8u);
}

TEST(ExporterE2E, UnknownPathsAre404AndBadArgumentsExit4) {
  ExporterProcess exp("absent-node");
  httplib::Client cli("127.0.0.1", exp.port);
  auto res = cli.Get("/nope");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
  EXPECT_EQ(value_of(exp.scrape(), "npu_exporter_node_up"), 0);
  EXPECT_EQ(exp.stop(), 0);
  Cmd r = run_command(kExporter + " --listen nonsense");
  EXPECT_EQ(r.exit_code, 4) << r.output;
  EXPECT_NE(r.output.find("IPV4:PORT"), std::string::npos);
}

// A client that connects and sends nothing, or half a request head, holds one worker until its
// read timeout; a scrape on another connection meanwhile is answered at once. Accept order is
// FIFO, so a server serving one connection at a time would reach the scrape only after timing
// both out, and they would no longer be open when its answer arrives.
TEST(ExporterE2E, SilentAndHalfSentConnectionsDoNotHoldUpAScrape) {
  ExporterProcess exp("absent-idle");
  RawConnection silent(exp.port, "");
  RawConnection half(exp.port, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n");  // the head never ends
  EXPECT_EQ(value_of(exp.scrape(), "npu_exporter_node_up"), 0);
  EXPECT_TRUE(silent.held_open()) << "the scrape was answered only after the silent connection timed out";
  EXPECT_TRUE(half.held_open()) << "the scrape was answered only after the half-sent request timed out";
  // The read timeout does free their workers.
  EXPECT_TRUE(eventually([&] { return !silent.held_open() && !half.held_open(); }));
  EXPECT_EQ(exp.stop(), 0);
}

TEST(ExporterE2E, RoutesMethodsAndOneRequestPerConnection) {
  ExporterProcess exp("absent-routes");
  httplib::Client cli("127.0.0.1", exp.port);
  auto landing = cli.Get("/");
  ASSERT_TRUE(landing);
  EXPECT_EQ(landing->status, 200);
  EXPECT_EQ(landing->get_header_value("Content-Type"), "text/html");
  EXPECT_NE(landing->body.find("/metrics"), std::string::npos);
  auto head = cli.Head("/metrics");
  ASSERT_TRUE(head);
  EXPECT_EQ(head->status, 200);
  EXPECT_EQ(head->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_TRUE(head->body.empty());
  EXPECT_EQ(head->get_header_value("Connection"), "close");
  auto post = cli.Post("/metrics", "x", "text/plain");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 405);
  EXPECT_EQ(post->get_header_value("Allow"), "GET, HEAD");
  EXPECT_EQ(exp.stop(), 0);
}

// Another exporter already serving the port: exit 1 with the reason, not a shared port
// (httplib's default socket options set SO_REUSEPORT; the exporter must not).
TEST(ExporterE2E, APortAlreadyServedExits1) {
  ExporterProcess first("absent-port");
  std::string listen = "127.0.0.1:" + std::to_string(first.port);
  Cmd r = run_command("timeout 10 " + kExporter + " --listen " + listen + " --node absent-port");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("npu-exporter: cannot listen on " + listen + ": Address already in use"), std::string::npos)
      << r.output;
  EXPECT_EQ(first.stop(), 0);
}

// A cluster's own name has no bus: the exporter served npu_exporter_node_up 0 for it forever (the
// shipped NpuNodeDown alert then fired for a cluster that is up); it now says which names to use,
// as npu-smi and npu-top do, and exits 5.
TEST(ExporterE2E, AClustersOwnNameIsRefusedWithItsHosts) {
  Node cluster("fleet", "2x8x910B2");
  Cmd r = run_command("timeout 10 " + kExporter + " --listen 127.0.0.1:0 --node " + cluster.name);
  EXPECT_EQ(r.exit_code, 5) << r.output;
  EXPECT_NE(r.output.find("npu-exporter: '" + cluster.name + "' is a cluster of 2 hosts, each with its own bus: name a host, " +
                          cluster.name + "-0 .. " + cluster.name + "-1"),
            std::string::npos) << r.output;
}

TEST(ExporterE2E, PromtoolChecksTheShippedAlertRules) {
  std::string why = ensure_promtool();
  if (!why.empty()) GTEST_SKIP() << why;
  Cmd r = run_command("promtool check rules " + std::string(NPUKIT_SOURCE_DIR) + "/deploy/prometheus/npu-alerts.yml");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("SUCCESS"), std::string::npos) << r.output;
  Cmd t = run_command("promtool test rules " + std::string(NPUKIT_SOURCE_DIR) + "/deploy/prometheus/npu-alerts.test.yml");
  EXPECT_EQ(t.exit_code, 0) << t.output;
  Cmd fleet = run_command("promtool check rules " + std::string(NPUKIT_SOURCE_DIR) + "/deploy/prometheus/npu-fleet-rules.yml");
  EXPECT_EQ(fleet.exit_code, 0) << fleet.output;
  Cmd config = run_command("promtool check config " + std::string(NPUKIT_SOURCE_DIR) + "/deploy/prometheus/npu-fleet.yml");
  EXPECT_EQ(config.exit_code, 0) << config.output;
  EXPECT_NE(config.output.find("SUCCESS: 2 rule files found"), std::string::npos) << config.output;
}

TEST(ExporterE2E, PromtoolAcceptsARealNodesExposition) {
  std::string why = ensure_promtool();
  if (!why.empty()) GTEST_SKIP() << why;
  Node node("lint");
  ExporterProcess exp(node.name);
  std::string path = write_temp("real-metrics.txt", exp.scrape());
  Cmd r = run_command("promtool check metrics < " + path);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  std::remove(path.c_str());
}

}  // namespace
// One numbering: every chip series carries the ids npu-smi takes (-i card, -c chip) beside the
// logic id, so an alert's suggested command works on multi-chip cards (310P: chip 5 is card 2,
// chip 1), and a VDie id unique per chip.
TEST(ExporterE2E, ChipSeriesCarryNpuSmisCardAndChipIds) {
  Node node("ids", "4x310P3");
  ExporterProcess exporter(node.name);
  std::string text = exporter.scrape();
  std::size_t at = text.find("npu_chip_info_health_status{id=\"5\",");
  ASSERT_NE(at, std::string::npos) << text.substr(0, 2000);
  std::string line = text.substr(at, text.find('\n', at) - at);
  EXPECT_NE(line.find("npu_id=\"2\",chip_id=\"1\""), std::string::npos) << line;
  EXPECT_NE(line.find("vdie_id=\""), std::string::npos) << line;
  Cmd health = run_command("NPU_NODE=" + node.name + " " + std::string(NPUKIT_BUILD_DIR) + "/smi/npu-smi info -t health -i 2 -c 1");
  EXPECT_EQ(health.exit_code, 0) << health.output;  // the command the alert suggests for it
}

}  // namespace npukit::smi::exporter
