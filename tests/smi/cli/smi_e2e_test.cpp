// End-to-end: the real npu-smi binary against a real npu-emud (one node per test, pid-based
// names), through popen.
#include <signal.h>

#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "tests/daemon_util.hpp"

namespace npukit::testing {
namespace {

using nlohmann::json;

std::string smi(const std::string& node, const std::string& args) {
  return "NPU_NODE=" + node + " " + std::string(NPUKIT_BUILD_DIR) + "/smi/npu-smi " + args;
}

json load_program(int device) {
  json mm = {{"op", "kernel"}, {"stream", 0}, {"name", "aten::mm"},
             {"inputs", {{{"shape", {4096, 4096}}, {"dtype", "float16"}}, {{"shape", {4096, 4096}}, {"dtype", "float16"}}}}};
  json rank = {{"device", device}, {"streams", 1}, {"setup", {{{"op", "alloc"}, {"buf", "w"}, {"bytes", 3ll << 30}}}},
               {"step", {mm, {{"op", "host_delay"}, {"ns", 50'000'000}}}}};
  return {{"name", "smi-e2e"}, {"repeat", 200}, {"process", {{"pid", 0}, {"name", "train.py"}}}, {"ranks", {rank}}};
}

TEST(SmiE2E, NoNodeRunningSaysHowToStartOneAndExits5) {
  std::string node = unique_node("absent");
  for (const char* args : {"info", "health", "info -t usages -i 0", "--query=npu_id --format=csv", "topo"}) {
    auto r = run_command(smi(node, args));
    EXPECT_EQ(r.exit_code, 5) << args << ": " << r.output;
    EXPECT_EQ(r.output, "npu-smi: no npukit node '" + node + "' is running (start one with: npu-emud start --node-name " + node + ")\n");
  }
  EXPECT_EQ(run_command(smi(node, "-h")).exit_code, 0);  // help needs no node
}

TEST(SmiE2E, InfoOfALiveNodeAndARunningWorkloadInTheProcessTable) {
  ScopedNode node("proc");
  ASSERT_TRUE(node.control({{"op", "submit"}, {"program", load_program(3)}}).value("ok", false));
  ASSERT_TRUE(eventually([&] { return run_command(smi(node.name(), "info")).output.find("train.py") != std::string::npos; }));
  auto r = run_command(smi(node.name(), "info"));
  EXPECT_EQ(r.exit_code, 0);
  std::regex row(R"(\| 3       0                 \| \d+ +\| train\.py                 \| 3072 +\|)");
  EXPECT_TRUE(std::regex_search(r.output, row)) << r.output;
  EXPECT_NE(r.output.find("| No running processes found in NPU 0 "), std::string::npos);
  EXPECT_NE(r.output.find("| npu-smi 23.0.2.1                 Version: 23.0.2.1"), std::string::npos);
  auto q = run_command(smi(node.name(), "--query=npu_id,npu_process_count --format=csv,noheader -i 3"));
  EXPECT_EQ(q.output, "3, 1\n");
  auto pm = run_command(smi(node.name(), "info -t proc-mem -i 3 -c 0"));
  EXPECT_NE(pm.output.find("Process name:train.py"), std::string::npos) << pm.output;
}

// The 8xA100 what-if node's GPUs reach each other through a switch: npu-smi topo calls every
// pair HCCS_SW (as aclrtGetDevicesTopo names a switched HCCS path) and explains it; a full-mesh
// node has direct HCCS pairs and no such legend line.
TEST(SmiE2E, ASwitchedNodesPairsAreHccsSw) {
  ScopedNode node("sw", "--spec 8xA100");
  auto r = run_command(smi(node.name(), "info -t topo"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::regex row(R"(NPU3 +(HCCS_SW +){3}X +(HCCS_SW +){4})");
  EXPECT_TRUE(std::regex_search(r.output, row)) << r.output;
  EXPECT_NE(r.output.find("  HCCS_SW = Connection traversing an HCCS switch.\n  NA   = "), std::string::npos) << r.output;
  // Its chip type is "A100", not the "A" that cutting at the first digit (Ascend910B -> Ascend) left.
  auto board = run_command(smi(node.name(), "info -t board -i 1 -c 0"));
  EXPECT_TRUE(std::regex_search(board.output, std::regex("Chip Type +: A100\n"))) << board.output;
  // Its version line parses as npu-smi's does (digits and dots): it said "what-if".
  auto info = run_command(smi(node.name(), "info"));
  EXPECT_TRUE(std::regex_search(info.output, std::regex(R"(\| npu-smi [0-9.]+ +Version: [0-9.]+ +\|)"))) << info.output;
  auto map = run_command(smi(node.name(), "info -m"));
  EXPECT_TRUE(std::regex_search(map.output, std::regex(" 1 +A100\n"))) << map.output;
  ScopedNode mesh("mesh");
  auto m = run_command(smi(mesh.name(), "info -t topo"));
  EXPECT_EQ(m.output.find("HCCS_SW"), std::string::npos) << m.output;
}

TEST(SmiE2E, FaultsFlipHealthExitCodes) {
  ScopedNode node("health");
  ASSERT_TRUE(eventually([&] { return run_command(smi(node.name(), "health")).exit_code == 0; }));
  ASSERT_EQ(run_command(emud() + " inject --node-name " + node.name() + " --device 2 --fault hbm-double-bit").exit_code, 0);
  ASSERT_TRUE(eventually([&] { return run_command(smi(node.name(), "health")).exit_code == 2; }));
  auto r = run_command(smi(node.name(), "health -i 2"));
  EXPECT_NE(r.output.find("FAIL    ecc_errors"), std::string::npos) << r.output;
  // -i 1 judges card 1 and says so: it read "Node ...: PASS", "Incidents: none" beside NPU 2's Alarm.
  auto one = run_command(smi(node.name(), "health -i 1"));
  EXPECT_EQ(one.exit_code, 0);
  EXPECT_EQ(one.output.rfind("NPU 1 of node " + node.name() + " (8x910B2): PASS\n", 0), 0u) << one.output;
  EXPECT_NE(one.output.find("Elsewhere on the node: 1 incident(s) (npu-smi health lists them)\n"), std::string::npos)
      << one.output;
  ASSERT_EQ(run_command(emud() + " clear --node-name " + node.name() + " --device 2").exit_code, 0);
  EXPECT_TRUE(eventually([&] { return run_command(smi(node.name(), "health")).exit_code == 0; }));
  ASSERT_EQ(run_command(emud() + " inject --node-name " + node.name() + " --device 5 --fault link-down").exit_code, 0);
  EXPECT_TRUE(eventually([&] { return run_command(smi(node.name(), "health")).exit_code == 2; }));
  auto j = json::parse(run_command(smi(node.name(), "health --json")).output);
  EXPECT_EQ(j["verdict"], "FAIL");
  EXPECT_EQ(j["devices"][5]["verdict"], "FAIL");
  // A healthy peer carries NPU 5's code; its error information names NPU 5, not itself (it said
  // "all HCCS links down" on NPU 0, which lost one link).
  auto peer = run_command(smi(node.name(), "info -t health -i 0 -c 0"));
  EXPECT_NE(peer.output.find("Error Information              : NPU 5 lost all 7 HCCS links\n"), std::string::npos)
      << peer.output;
  auto own = run_command(smi(node.name(), "info -t health -i 5 -c 0"));
  EXPECT_NE(own.output.find("Error Information              : all HCCS links down\n"), std::string::npos) << own.output;
}

// A RoCE port's degradation is named as a RoCE link in the error information (it read "HCCS link
// degraded", the chip's scale-up kind), and every error code a query prints is in hex (the
// second one was decimal: 2163212290 beside 0x80D18004).
TEST(SmiE2E, ALinksErrorInformationNamesItsKindAndCodesPrintAlike) {
  ScopedNode node("rocecode", "--spec 2x8x910B2 --speed 100");
  const std::string host = node.name() + "-1";
  ASSERT_EQ(run_command(emud() + " inject --node-name " + host + " --link 3-roce --fault link-degraded").exit_code, 0);
  ASSERT_EQ(run_command(emud() + " inject --node-name " + host + " --host 1 --fault host-slow").exit_code, 0);
  CommandResult health;
  EXPECT_TRUE(eventually([&] {
    health = run_command(smi(host, "info -t health -i 3 -c 0"));
    return health.output.find("Error Information              : roce link degraded") != std::string::npos;
  })) << health.output;
  auto codes = run_command(smi(host, "--query=npu_error_code,npu_error_code_2 --format=csv -i 3"));
  EXPECT_NE(codes.output.find("0x80D18004, 0x80F00002"), std::string::npos) << codes.output;
}

// inject, clear and set return once their effect is on the bus: the very next read sees it, with
// no waiting (a script does `npu-emud inject ...; npu-smi health`).
TEST(SmiE2E, ControlCommandsReturnOnceTheirEffectIsOnTheBus) {
  ScopedNode node("visible");
  ASSERT_TRUE(eventually([&] { return run_command(smi(node.name(), "health")).exit_code == 0; }));
  const std::string on = " --node-name " + node.name();
  for (int round = 0; round < 3; ++round) {
    ASSERT_EQ(run_command(emud() + " inject" + on + " --device 2 --fault hbm-double-bit").exit_code, 0);
    EXPECT_EQ(run_command(smi(node.name(), "health")).exit_code, 2) << "round " << round;
    ASSERT_EQ(run_command(emud() + " clear" + on + " --device 2").exit_code, 0);
    EXPECT_EQ(run_command(smi(node.name(), "health")).exit_code, 0) << "round " << round;
    ASSERT_EQ(run_command(emud() + " inject" + on + " --link 4-5 --fault link-down").exit_code, 0);
    EXPECT_EQ(run_command(smi(node.name(), "health")).exit_code, 2) << "round " << round;
    ASSERT_EQ(run_command(emud() + " clear" + on + " --link 4-5").exit_code, 0);
    EXPECT_EQ(run_command(smi(node.name(), "health")).exit_code, 0) << "round " << round;
    std::string watts = std::to_string(200 + 10 * round);
    ASSERT_EQ(run_command(emud() + " set" + on + " --device 1 --power-limit " + watts).exit_code, 0);
    EXPECT_EQ(run_command(smi(node.name(), "--query=npu_power_limit_watts --format=csv,noheader,nounits -i 1")).output,
              watts + ".0\n");
    ASSERT_EQ(run_command(emud() + " set" + on + " --device 3 --ecc " + (round % 2 ? "on" : "off")).exit_code, 0);
    EXPECT_EQ(run_command(smi(node.name(), "--query=npu_ecc_enabled --format=csv,noheader -i 3")).output,
              std::string(round % 2 ? "1" : "0") + "\n");
  }
}

TEST(SmiE2E, StaleNodeShowsNAUnknownAWarningAndHealthExits3) {
  ScopedNode node("stale");
  ASSERT_TRUE(eventually([&] { return run_command(smi(node.name(), "health")).exit_code == 0; }));
  int pid = node.daemon_pid();
  ASSERT_GT(pid, 1);
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  ASSERT_TRUE(eventually([&] { return run_command(smi(node.name(), "health")).exit_code == 3; }));
  auto info = run_command(smi(node.name(), "info"));
  EXPECT_EQ(info.exit_code, 0);
  EXPECT_NE(info.output.find("npu-smi: warning: node '" + node.name() + "' is stale ("), std::string::npos) << info.output;
  EXPECT_NE(info.output.find("| 0     910B2               | UNKNOWN       | -           NA"), std::string::npos) << info.output;
  auto q = run_command(smi(node.name(), "--query=npu_id,npu_power_watts --format=csv,noheader -i 0"));
  EXPECT_EQ(q.exit_code, 0);
  ASSERT_GE(q.output.size(), 6u);
  EXPECT_EQ(q.output.substr(q.output.size() - 6), "0, NA\n") << q.output;
}

// A hung daemon (stopped, its socket still open) is stale on the bus at once; health -v, stats
// and set waited 30 s for its control channel before saying so, past any probe's timeout.
TEST(SmiE2E, AHungNodeIsNotAskedOverItsControlChannel) {
  ScopedNode node("hung");
  ASSERT_TRUE(eventually([&] { return run_command(smi(node.name(), "health")).exit_code == 0; }));
  int pid = node.daemon_pid();
  ASSERT_GT(pid, 1);
  ASSERT_EQ(::kill(pid, SIGSTOP), 0);
  bool stale = eventually([&] { return run_command(smi(node.name(), "health")).exit_code == 3; });
  std::vector<std::pair<std::string, int>> asked = {{"health -v", 3}, {"stats", 5}, {"set -t power-limit -i 1 -d 150", 5}};
  std::vector<CommandResult> results;
  std::vector<double> seconds;
  for (const auto& [command, code] : asked) {
    auto t0 = std::chrono::steady_clock::now();
    results.push_back(run_command(smi(node.name(), command)));
    seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  ::kill(pid, SIGCONT);
  ASSERT_TRUE(stale);
  for (std::size_t i = 0; i < asked.size(); ++i) {
    EXPECT_EQ(results[i].exit_code, asked[i].second) << asked[i].first << ": " << results[i].output;
    EXPECT_LT(seconds[i], 5) << asked[i].first;
    EXPECT_NE(results[i].output.find("is stale ("), std::string::npos) << asked[i].first << ": " << results[i].output;
  }
  EXPECT_NE(results[0].output.find("Active faults: unavailable (node '" + node.name() + "' is stale ("), std::string::npos)
      << results[0].output;
}

TEST(SmiE2E, WatchCsvPrintsCountTimestampedRowsPerDevice) {
  ScopedNode node("watch", "--spec 4x310P3");
  auto r = run_command(smi(node.name(), "info watch --count 3 -d 0.2 --format csv 2>/dev/null"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  std::istringstream in(r.output);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line.rfind("timestamp, npu_id, chip_id, npu_power_watts [W]", 0), 0u) << line;
  std::map<std::string, int> rows;
  std::regex row(R"(^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z), (\d+), (\d+), NA, \d+,.*)");
  std::set<std::string> stamps;
  while (std::getline(in, line)) {
    std::smatch m;
    ASSERT_TRUE(std::regex_match(line, m, row)) << line;
    rows[m[2].str() + "/" + m[3].str()]++;
    stamps.insert(m[1]);
  }
  EXPECT_EQ(rows.size(), 8u);
  for (const auto& [dev, n] : rows) EXPECT_EQ(n, 3) << dev;
  EXPECT_EQ(stamps.size(), 3u);
}

TEST(SmiE2E, SetAndClearRoundTrip) {
  ScopedNode node("set");
  auto r = run_command(smi(node.name(), "set -t power-limit -i 1 -d 150"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output, "\tStatus                         : OK\n\tMessage                        : Set card power-limit successfully\n");
  EXPECT_TRUE(eventually([&] {
    return run_command(smi(node.name(), "--query=npu_power_limit_watts --format=csv,noheader,nounits -i 1")).output == "150.0\n";
  }));
  EXPECT_EQ(run_command(smi(node.name(), "set -t power-limit -i 1 -d 900")).exit_code, 237);
  EXPECT_EQ(run_command(smi(node.name(), "set -t ecc-enable -i 0 -c 0 -d 0")).exit_code, 0);
  EXPECT_TRUE(eventually([&] { return run_command(smi(node.name(), "--query=npu_ecc_enabled --format=csv,noheader -i 0")).output == "0\n"; }));
  ASSERT_EQ(run_command(emud() + " inject --node-name " + node.name() + " --device 4 --fault hbm-double-bit").exit_code, 0);
  EXPECT_TRUE(eventually([&] { return run_command(smi(node.name(), "--query=npu_ecc_double_bit_volatile_errors --format=csv,noheader,nounits -i 4")).output == "1\n"; }));
  auto c = run_command(smi(node.name(), "clear -t ecc-info -i 4"));
  EXPECT_EQ(c.exit_code, 0) << c.output;
  EXPECT_TRUE(eventually([&] { return run_command(smi(node.name(), "--query=npu_ecc_double_bit_volatile_errors,npu_ecc_double_bit_errors_total --format=csv,noheader,nounits -i 4")).output == "0, 1\n"; }));
  ASSERT_EQ(run_command(emud() + " inject --node-name " + node.name() + " --device 6 --fault aicore-hang").exit_code, 0);
  EXPECT_TRUE(eventually([&] { return run_command(smi(node.name(), "health -i 6")).exit_code == 2; }));
  auto declined = run_command("echo n | " + smi(node.name(), "set -t reset -i 6 -c 0"));
  EXPECT_EQ(declined.exit_code, 232) << declined.output;
  // The in-band reset as runbooks write it (-m 1) was "Error parameter of -m", exit 215.
  auto reset = run_command("echo Y | " + smi(node.name(), "set -t reset -i 6 -c 0 -m 1"));
  EXPECT_EQ(reset.exit_code, 0) << reset.output;
  EXPECT_NE(reset.output.find("Reset chip successfully."), std::string::npos);
  EXPECT_TRUE(eventually([&] { return run_command(smi(node.name(), "health -i 6")).exit_code == 0; }));
  EXPECT_EQ(run_command(smi(node.name(), "set -t reset -i 6 -c 0 -m 2")).exit_code, 215);  // only 1
  EXPECT_EQ(run_command(smi(node.name(), "set -t ecc-enable -i 6 -c 0 -d 1 -m 1")).exit_code, 215);  // reset only
}

TEST(SmiE2E, ClassicLayoutOfA310PNode) {
  ScopedNode node("p310", "--spec 4x310P3");
  auto r = run_command(smi(node.name(), "info"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("| NPU     Name                  | Health          | Power(W)     Temp(C)           Hugepages-Usage(page) |"),
            std::string::npos);
  EXPECT_NE(r.output.find("| 3       310P3                 | OK              | NA "), std::string::npos) << r.output;
  // Both chips of a 300I Duo card sit at the card's one bus id, as npu-smi shows them.
  EXPECT_NE(r.output.find("| 0       0                     | 0000:01:00.0    |"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("| 1       1                     | 0000:01:00.0    |"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("| 1       7                     | 0000:82:00.0    |"), std::string::npos) << r.output;
  auto m = run_command(smi(node.name(), "info -m"));
  EXPECT_NE(m.output.find("\t3                              1                              7                              Ascend 310P3\n"),
            std::string::npos) << m.output;
}

}  // namespace
}  // namespace npukit::testing
